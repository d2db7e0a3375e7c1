"""Through the edge, a provider's error carries the calls completed before it (issue 29,
item 11): the in-stream error in the same read as a call's last event, and the edge's own
timeout after calls went out, on asyncio and trio, for bytes and for parsed events."""

from __future__ import annotations

import json

import pytest

from sse_toolcalls import aiter_events, aiter_tool_calls, parse_tool_calls
from sse_toolcalls.calls import ToolCall
from sse_toolcalls.errors import ProviderError, StreamTimeoutError
from sse_toolcalls.messages import as_dialect
from sse_toolcalls.tooling.simulator import (
    ErrorEvent,
    ScriptedCall,
    Turn,
    encode_error_event,
    encode_turn,
)

from .test_edge import FakeResponse

pytestmark = pytest.mark.anyio

TURN = Turn(
    calls=(
        ScriptedCall(name="pay", args={"amount": 10}, call_id="a"),
        ScriptedCall(name="pay", args={"amount": 20}, call_id="b"),
    ),
    fragment_size=4,
)
WHOLE = [("a", {"amount": 10}), ("b", {"amount": 20})]


def _with_error(dialect: str) -> bytes:
    """The whole turn but its end, then the in-stream error: one read."""
    events = encode_turn(dialect, TURN)
    after = len(events) - 1 if dialect != "gemini" else len(events)
    return b"".join(encode_error_event(dialect, TURN, ErrorEvent(after_events=after)))


@pytest.mark.parametrize("dialect", ["anthropic", "openai_responses", "gemini"])
async def test_calls_in_the_read_of_the_error_reach_the_caller(dialect: str) -> None:
    response = FakeResponse([_with_error(dialect)])
    got = []
    with pytest.raises(ProviderError) as caught:
        async for call in aiter_tool_calls(response, as_dialect(dialect)):
            got.append(call)
    # Before: nothing yielded and nothing carried; the calls were lost.
    assert got == []
    assert [(c.call_id or "ab"[c.index], c.args) for c in caught.value.completed] == WHOLE
    assert response.closed == 1


async def test_the_rich_stream_carries_them_too() -> None:
    response = FakeResponse([_with_error("anthropic")])
    with pytest.raises(ProviderError) as caught:
        [event async for event in aiter_events(response, "anthropic")]
    assert [(c.call_id, c.args) for c in caught.value.completed] == WHOLE


async def test_a_timeout_after_calls_carries_none_of_the_calls_given_out() -> None:
    chunks = encode_turn("anthropic", TURN)
    # Hang before message_stop: both calls are out, the turn is not whole.
    response = FakeResponse(chunks, hang_after=len(chunks) - 1)
    got = []
    with pytest.raises(StreamTimeoutError) as caught:
        async for call in aiter_tool_calls(response, "anthropic", idle_timeout=0.1):
            got.append(call)
    assert [(c.call_id, c.args) for c in got] == WHOLE
    # Given out already: carried again, a caller that kept both would have each twice.
    assert caught.value.completed == ()


def test_parsed_events_carry_them_too() -> None:
    raw = _with_error("anthropic").decode()
    payloads = [
        json.loads(line[len("data: ") :]) for line in raw.splitlines() if line.startswith("data: ")
    ]
    got: list[ToolCall] = []
    with pytest.raises(ProviderError) as caught:
        got.extend(parse_tool_calls(payloads, "anthropic"))
    # Parsed events are fed one by one: the calls were returned, so the error carries
    # none of them again.
    assert [(c.call_id, c.args) for c in got] == WHOLE
    assert caught.value.completed == ()
