"""The public surface: flat, sorted, every name real, the upper layers loaded lazily."""

from __future__ import annotations

import subprocess
import sys

import sse_toolcalls


def test_all_is_sorted_and_unique() -> None:
    names = list(sse_toolcalls.__all__)
    assert names == sorted(names)
    assert len(names) == len(set(names))


def test_every_exported_name_resolves() -> None:
    for name in sse_toolcalls.__all__:
        assert getattr(sse_toolcalls, name) is not None, name


def test_the_contract_names_are_at_the_root() -> None:
    for name in (
        "SSEFramer",
        "ServerSentEvent",
        "ToolCallParser",
        "StreamParser",
        "ToolCall",
        "ToolResult",
        "ProviderError",
        "TruncatedStreamError",
        "SSEToolCallsError",
        "ToolRegistry",
        "format_results",
        "aiter_tool_calls",
        "Simulator",
    ):
        assert name in sse_toolcalls.__all__, name


def test_upper_layers_load_only_when_used() -> None:
    code = (
        "import sys, sse_toolcalls;"
        "heavy = ('anyio', 'httpx', 'jsonschema', 'uvicorn', 'sse_toolcalls.tools');"
        "before = [m for m in heavy if m in sys.modules];"
        "sse_toolcalls.ToolRegistry;"
        "after = [m for m in heavy if m in sys.modules];"
        "print(before, after); sys.exit(0 if not before and 'sse_toolcalls.tools' in after else 1)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_unknown_attribute_is_an_attribute_error() -> None:
    try:
        sse_toolcalls.no_such_name  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("expected AttributeError")
