"""One table of dialects (issue 10, item 3): each dialect described once, one error for a
name that is none of them, and the framer owning its end-of-stream flush."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sse_toolcalls import (
    DIALECTS,
    SSEFramer,
    ToolCallParser,
    ToolNameMap,
    UnknownDialectError,
    UsageError,
    as_dialect,
    build_request,
    tool_declarations,
)
from sse_toolcalls.conversation import Conversation, UserMessage
from sse_toolcalls.dialects import SPECS, detect_dialect, reassembler_for, spec_for
from sse_toolcalls.dialects.naming import is_legal_name, name_rule
from sse_toolcalls.tooling.simulator import Simulator
from sse_toolcalls.tooling.simulator.encoders import encode_turn
from sse_toolcalls.tooling.simulator.script import Turn


def test_the_table_holds_each_dialect_once_under_its_own_name() -> None:
    assert tuple(SPECS) == DIALECTS
    for name, spec in SPECS.items():
        assert spec.name == name
        assert spec.reassembler.dialect == name
        assert spec_for(name) is spec
        assert type(reassembler_for(name)) is spec.reassembler


def test_only_chat_reads_done_as_a_whole_final_event() -> None:
    assert [spec_for(d).accepts_unterminated("[DONE]") for d in DIALECTS] == [
        True,
        False,
        False,
        False,
        False,
        False,
    ]
    for dialect in DIALECTS:
        assert spec_for(dialect).accepts_unterminated('{"a": 1}')
        assert not spec_for(dialect).accepts_unterminated('{"a": 1')


def _conversation() -> Conversation:
    return [UserMessage(text="hi")]


# Any: the test below hands each one a name that is not a Dialect, on purpose.
ENTRY_POINTS: list[tuple[str, Callable[[Any], Any]]] = [
    ("as_dialect", as_dialect),
    ("spec_for", spec_for),
    ("reassembler_for", reassembler_for),
    ("ToolCallParser", ToolCallParser),
    ("name_rule", name_rule),
    ("is_legal_name", lambda d: is_legal_name(d, "f")),
    ("ToolNameMap", lambda d: ToolNameMap(d, ["f"])),
    ("tool_declarations", lambda d: tool_declarations(d, [])),
    ("build_request", lambda d: build_request(d, _conversation(), model="m")),
    ("encode_turn", lambda d: encode_turn(d, Turn(text="x"))),
    ("Simulator.base_url_for", lambda d: Simulator().base_url_for(d)),
]


@pytest.mark.parametrize(("where", "entry"), ENTRY_POINTS, ids=[w for w, _ in ENTRY_POINTS])
def test_every_entry_point_refuses_an_unknown_dialect_with_one_error(
    where: str, entry: Callable[[Any], Any]
) -> None:
    with pytest.raises(UnknownDialectError) as caught:
        entry("cohere")
    error = caught.value
    assert isinstance(error, UsageError)
    assert error.dialect == "cohere"
    assert set(error.expected) <= set(DIALECTS)
    assert str(error) == f"unknown dialect 'cohere'; expected one of {error.expected}"


def test_an_unhashable_name_is_an_unknown_dialect_too() -> None:
    with pytest.raises(UnknownDialectError):
        spec_for([])  # type: ignore[arg-type]


def test_the_framer_discards_an_unterminated_event_by_default() -> None:
    framer = SSEFramer()
    assert framer.feed(b'data: {"a": 1}') == []
    assert framer.finish() == []


def test_the_framer_flushes_an_unterminated_event_its_caller_accepts() -> None:
    seen: list[str] = []

    def whole(data: str) -> bool:
        seen.append(data)
        return data.endswith("}")

    framer = SSEFramer()
    framer.feed(b'id: 7\ndata: {"a": 1}')
    (event,) = framer.finish(unterminated=whole)
    assert (event.data, event.id, seen) == ('{"a": 1}', "7", ['{"a": 1}'])
    cut = SSEFramer()
    cut.feed(b'data: {"a": 1')
    assert cut.finish(unterminated=whole) == []
    with pytest.raises(UsageError):
        cut.finish()


def test_the_parser_reads_an_unterminated_final_event_by_its_dialect() -> None:
    # [DONE] without its blank line ends a Chat turn, but is not whole for another dialect.
    chat = ToolCallParser("openai_chat")
    chat.feed(b'data: {"choices": [{"index": 0, "delta": {"content": "x"}}]}\n\ndata: [DONE]')
    assert chat.finish() == []
    start = b'data: {"candidates": [{"content": {"parts": [{"text": "x"}]}}]}\n\ndata: [DONE]'
    assert detect_dialect(SSEFramer().feed(start)[0]) == "gemini"
    gemini = ToolCallParser("gemini")
    gemini.feed(start)
    with pytest.raises(Exception, match="ended") as caught:
        gemini.finish()
    assert type(caught.value).__name__ == "TruncatedStreamError"
