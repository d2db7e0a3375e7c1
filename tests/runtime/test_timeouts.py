"""Timeouts at the edge and in the clients are StreamTimeoutError: retryable, code
"timeout", and distinguishable from other provider errors by type."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import pytest

from sse_toolcalls import aiter_tool_calls
from sse_toolcalls.edge.responses import TIMEOUT_CODE
from sse_toolcalls.errors import ProviderError, StreamTimeoutError
from sse_toolcalls.runtime.clients import CONNECTION_CODE, client_for

pytestmark = pytest.mark.anyio


class Silent:
    """A response that sends one keep-alive comment and then nothing."""

    def __init__(self) -> None:
        self.closed = False

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        yield b": keep-alive\n\n"
        await anyio.sleep_forever()

    async def aclose(self) -> None:
        self.closed = True


async def test_a_silent_stream_is_a_stream_timeout() -> None:
    response = Silent()
    with pytest.raises(StreamTimeoutError) as caught:
        [c async for c in aiter_tool_calls(response, "anthropic", idle_timeout=0.05)]
    assert (caught.value.code, caught.value.retryable) == (TIMEOUT_CODE, True)
    assert response.closed


@pytest.mark.parametrize(
    ("failure", "timeout"),
    [(httpx.ConnectTimeout("slow"), True), (httpx.ConnectError("refused"), False)],
)
async def test_a_client_that_cannot_connect(failure: httpx.HTTPError, timeout: bool) -> None:  # noqa: ASYNC109  (a flag: is the failure a timeout)
    def refuse(request: httpx.Request) -> httpx.Response:
        raise failure

    http = httpx.AsyncClient(transport=httpx.MockTransport(refuse))
    async with (
        http,
        client_for(
            "openai_chat", model="m", api_key="k", base_url="http://127.0.0.1:9", http_client=http
        ) as client,
    ):
        with pytest.raises(ProviderError) as caught:
            [e async for e in client.stream_events([])]
    error = caught.value
    assert isinstance(error, StreamTimeoutError) is timeout
    assert error.retryable
    assert error.code == (TIMEOUT_CODE if timeout else CONNECTION_CODE)
