"""The edge over look-alike responses: checks before reading, typed errors, and the
response closed on every path (end, error, early break, cancellation), on asyncio and trio.
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing

import anyio
import anyio.lowlevel
import pytest

from sse_toolcalls import aiter_events, aiter_tool_calls, iter_tool_calls
from sse_toolcalls.calls import StreamFinished, ToolCallCompleted
from sse_toolcalls.edge.responses import TIMEOUT_CODE, AsyncByteResponse
from sse_toolcalls.errors import ProviderError, TruncatedStreamError
from sse_toolcalls.tooling.simulator import ScriptedCall, Turn, encode_turn

pytestmark = pytest.mark.anyio

TURN = Turn(
    calls=(
        ScriptedCall(name="lookup_demo_value", args={"key": "height"}, call_id="a"),
        ScriptedCall(name="lookup_demo_value", args={"key": "weight"}, call_id="b"),
    ),
    fragment_size=4,
)
CHUNKS = encode_turn("anthropic", TURN)
SSE = {"content-type": "text/event-stream; charset=utf-8"}


class FakeResponse:
    """An httpx look-alike: chunks, then optionally a hang or a transport failure."""

    def __init__(
        self,
        chunks: list[bytes],
        *,
        status_code: int = 200,
        headers: dict[str, str] | None = None,
        hang_after: int | None = None,
        fail_after: int | None = None,
    ) -> None:
        self.chunks = chunks
        self.status_code = status_code
        self.headers = SSE if headers is None else headers
        self.hang_after = hang_after
        self.fail_after = fail_after
        self.closed = 0
        self.read = 0

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        for n, chunk in enumerate(self.chunks):
            if n == self.hang_after:
                await anyio.sleep_forever()
            if n == self.fail_after:
                raise ConnectionResetError("peer closed the connection")
            self.read += 1
            yield chunk

    async def aclose(self) -> None:
        self.closed += 1


def test_a_fake_response_satisfies_the_protocol() -> None:
    assert isinstance(FakeResponse([]), AsyncByteResponse)


async def test_calls_come_in_order_and_the_response_is_closed() -> None:
    response = FakeResponse(CHUNKS)
    calls = [call async for call in aiter_tool_calls(response, "anthropic")]
    assert [(c.call_id, c.args) for c in calls] == [
        ("a", {"key": "height"}),
        ("b", {"key": "weight"}),
    ]
    assert response.closed == 1


async def test_the_dialect_is_detected_when_not_given() -> None:
    response = FakeResponse(encode_turn("openai_responses", TURN))
    calls = [call async for call in aiter_tool_calls(response)]
    assert [c.provider for c in calls] == ["openai_responses", "openai_responses"]


async def test_events_end_with_stream_finished() -> None:
    response = FakeResponse(CHUNKS)
    events = [event async for event in aiter_events(response, "anthropic")]
    assert sum(isinstance(e, ToolCallCompleted) for e in events) == 2
    assert isinstance(events[-1], StreamFinished)
    assert response.closed == 1


async def test_an_early_break_closes_the_response() -> None:
    response = FakeResponse(CHUNKS)
    # The edge types its generators as AsyncIterator, which has no aclose for aclosing().
    async with aclosing(aiter_tool_calls(response, "anthropic")) as calls:  # type: ignore[type-var]
        async for _call in calls:
            break
    assert response.closed == 1
    assert response.read < len(CHUNKS)


async def abandon(response: FakeResponse) -> None:
    async for _call in aiter_tool_calls(response, "anthropic"):
        break
    gc.collect()
    # The event loop runs the generator's finaliser at its next opportunity.
    for _ in range(10):
        await anyio.lowlevel.checkpoint()


async def test_an_abandoned_iterator_is_finalised_and_closes_the_response(
    anyio_backend: str,
) -> None:
    response = FakeResponse(CHUNKS)
    if anyio_backend == "trio":
        # Trio finalises it too, and says (rightly) that aclosing() would be prompter.
        with pytest.warns(ResourceWarning, match="aclosing"):
            await abandon(response)
    else:
        await abandon(response)
    assert response.closed == 1


async def test_cancellation_closes_the_response() -> None:
    response = FakeResponse(CHUNKS, hang_after=3)
    seen = []
    with anyio.move_on_after(0.2) as scope:
        async for call in aiter_tool_calls(response, "anthropic"):
            seen.append(call)
    assert scope.cancelled_caught
    assert seen == []
    assert response.closed == 1


@pytest.mark.parametrize("status", [429, 500, 529])
async def test_an_error_status_is_a_provider_error_before_parsing(status: int) -> None:
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    response = FakeResponse(
        [body], status_code=status, headers={"content-type": "application/json", "retry-after": "3"}
    )
    with pytest.raises(ProviderError) as caught:
        [call async for call in aiter_tool_calls(response, "anthropic")]
    error = caught.value
    assert (error.status, error.code, error.retryable, error.retry_after) == (
        status,
        "overloaded_error",
        True,
        3.0,
    )
    assert response.closed == 1


async def test_a_body_that_is_not_an_event_stream_is_refused() -> None:
    response = FakeResponse([b"<html>maintenance</html>"], headers={"content-type": "text/html"})
    with pytest.raises(ProviderError) as caught:
        [call async for call in aiter_tool_calls(response, "anthropic")]
    assert caught.value.code == "unexpected_content_type"
    assert "maintenance" in caught.value.message
    assert response.closed == 1


async def test_the_error_body_is_read_bounded() -> None:
    response = FakeResponse([b"x" * 1024] * 1024, status_code=500, headers={})
    with pytest.raises(ProviderError):
        [call async for call in aiter_tool_calls(response, "anthropic")]
    assert response.read <= 64
    assert response.closed == 1


async def test_a_silent_stream_times_out_with_our_error() -> None:
    response = FakeResponse(CHUNKS, hang_after=2)
    with pytest.raises(ProviderError) as caught:
        [call async for call in aiter_tool_calls(response, "anthropic", idle_timeout=0.1)]
    assert (caught.value.code, caught.value.retryable) == (TIMEOUT_CODE, True)
    assert response.closed == 1


async def test_a_dropped_connection_mid_call_is_a_truncation() -> None:
    cut = next(n for n, c in enumerate(CHUNKS) if b"input_json_delta" in c) + 2
    response = FakeResponse(CHUNKS, fail_after=cut)
    with pytest.raises(TruncatedStreamError) as caught:
        [call async for call in aiter_tool_calls(response, "anthropic")]
    assert isinstance(caught.value.__cause__, ConnectionResetError)
    assert [p.call_id for p in caught.value.partial] == ["a"]
    assert response.closed == 1


async def test_a_connection_dropped_after_the_end_marker_loses_nothing() -> None:
    response = FakeResponse([*CHUNKS, b"ignored"], fail_after=len(CHUNKS))
    calls = [call async for call in aiter_tool_calls(response, "anthropic")]
    assert [c.call_id for c in calls] == ["a", "b"]
    assert response.closed == 1


class FakeSyncResponse:
    def __init__(self, chunks: list[bytes], *, status_code: int = 200) -> None:
        self.chunks = chunks
        self.status_code = status_code
        self.headers = SSE
        self.closed = 0

    def iter_bytes(self) -> Iterator[bytes]:
        yield from self.chunks

    def close(self) -> None:
        self.closed += 1


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
def test_sync_iteration_and_early_break_close_the_response(anyio_backend: str) -> None:
    whole = FakeSyncResponse(CHUNKS)
    assert [c.call_id for c in iter_tool_calls(whole, "anthropic")] == ["a", "b"]
    assert whole.closed == 1
    early = FakeSyncResponse(CHUNKS)
    for _call in iter_tool_calls(early, "anthropic"):
        break
    gc.collect()
    assert early.closed == 1
    failed = FakeSyncResponse([b"{}"], status_code=503)
    with pytest.raises(ProviderError) as caught:
        list(iter_tool_calls(failed, "anthropic"))
    assert (caught.value.status, caught.value.retryable) == (503, True)
    assert failed.closed == 1
