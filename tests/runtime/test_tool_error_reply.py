"""A tool's own error answer (``ToolErrorReply``, an MCP server's ``isError``): an error
result with the tool's text whatever ``show_error_details`` says, off the breaker, not
re-run, and a write's ledger keeps it."""

from __future__ import annotations

from typing import Any

import pytest

from sse_toolcalls.calls import ToolCall
from sse_toolcalls.runtime import CircuitBreaker, Dispatcher, InMemoryLedger, ToolErrorReply
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.runtime.tools.results import tool_error_result

pytestmark = pytest.mark.anyio


def call(name: str, call_id: str = "c1", **args: Any) -> ToolCall:
    return ToolCall(name=name, args=args, provider="anthropic", call_id=call_id, index=0)


async def test_a_writes_error_answer_is_recorded_and_never_counts_against_the_tool() -> None:
    registry = ToolRegistry()  # show_error_details off: the tool's own text still shows
    runs: list[str] = []

    @registry.register(effect="write")
    def send(to: str) -> str:
        """Send a message."""
        runs.append(to)
        raise ToolErrorReply(f"{to} does not accept messages")

    breaker = CircuitBreaker(threshold=1)
    dispatcher = Dispatcher(registry, ledger=InMemoryLedger(), breaker=breaker)
    (report,) = await dispatcher.dispatch([call("send", to="bob")], request_id="r1")
    assert (report.outcome, report.runs, report.result.is_error) == ("failed", 1, True)
    assert report.result.content == {
        "error": "tool_error",
        "tool": "send",
        "message": "The tool 'send' answered with an error: bob does not accept messages",
    }
    assert breaker.status("send").state == "closed"
    (again,) = await dispatcher.dispatch([call("send", to="bob")], request_id="r1")
    assert (again.outcome, again.runs, again.result.is_error) == ("replayed", 0, True)
    assert runs == ["bob"]


async def test_a_reads_error_answer_is_not_rerun() -> None:
    registry = ToolRegistry()
    runs: list[str] = []

    @registry.register
    def lookup(key: str) -> str:
        """Look a key up."""
        runs.append(key)
        raise ToolErrorReply([{"type": "text", "text": "no such key"}])

    (report,) = await Dispatcher(registry, read_retries=3).dispatch([call("lookup", key="k")])
    assert (report.outcome, report.runs) == ("failed", 1)
    assert isinstance(report.result.content, dict)
    assert report.result.content["message"].endswith("answered with an error: no such key")
    assert "content" not in report.result.content  # one text: the message says it all
    assert runs == ["k"]


def test_parts_beyond_one_text_are_kept_for_the_model() -> None:
    parts = [
        {"type": "text", "text": "the chart failed"},
        {"type": "image", "mime_type": "image/png", "data": "AAAA"},
    ]
    result = tool_error_result(call("chart"), parts)
    assert result.is_error
    assert result.content == {
        "error": "tool_error",
        "tool": "chart",
        "message": "The tool 'chart' answered with an error: the chart failed",
        "content": parts,
    }
    empty = tool_error_result(call("chart"), [])
    assert isinstance(empty.content, dict)
    assert empty.content["message"].endswith("answered with an error: it gave no reason")
