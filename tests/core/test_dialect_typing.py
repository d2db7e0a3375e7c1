"""Dialect names are typed: a misspelt one is a mypy error where it is written, and still
an ``UnknownDialectError`` at run time for text that skipped the type checker."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from sse_toolcalls import (
    DIALECTS,
    Dialect,
    StreamParser,
    ToolCallParser,
    UnknownDialectError,
    UsageError,
    as_dialect,
    build_request,
    iter_tool_calls,
    parse_tool_calls,
    tool_declarations,
)
from sse_toolcalls.runtime.clients import client_for


def test_a_misspelt_dialect_is_a_type_error() -> None:
    if TYPE_CHECKING:
        # Checked by mypy (strict, so warn_unused_ignores): each ignore is needed only
        # while the parameter is typed with the Dialect literal; were it a plain str,
        # mypy would report the ignore as unused.
        StreamParser("anthropc")  # type: ignore[arg-type]
        ToolCallParser("anthropc")  # type: ignore[arg-type]
        client_for("anthropc")  # type: ignore[arg-type]
        build_request("anthropc", [], model="m")  # type: ignore[arg-type]
        tool_declarations("anthropc", [])  # type: ignore[arg-type]
        iter_tool_calls(object(), "anthropc")  # type: ignore[arg-type]
        parse_tool_calls([], "anthropc")  # type: ignore[arg-type]
        text: str = "anthropic"
        StreamParser(text)  # type: ignore[arg-type]  # a plain str needs as_dialect
        StreamParser(as_dialect(text))
        StreamParser("anthropic")
        StreamParser(None)


def test_a_misspelt_dialect_still_fails_at_run_time() -> None:
    name: Any = "anthropc"  # as from JSON or a command line, past the type checker
    for make in (StreamParser, ToolCallParser):
        with pytest.raises(UnknownDialectError) as caught:
            make(name)
        assert caught.value.dialect == "anthropc"


@pytest.mark.parametrize("name", DIALECTS)
def test_as_dialect_returns_each_known_name(name: Dialect) -> None:
    text: str = str(name)
    assert as_dialect(text) == name


@pytest.mark.parametrize("text", ["anthropc", "", "OPENAI_CHAT", " gemini", "openai"])
def test_as_dialect_refuses_any_other_text(text: str) -> None:
    with pytest.raises(UnknownDialectError) as caught:
        as_dialect(text)
    assert isinstance(caught.value, UsageError)
    assert caught.value.dialect == text
    assert caught.value.expected == DIALECTS
