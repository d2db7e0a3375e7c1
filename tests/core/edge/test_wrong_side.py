"""The async and sync edges refuse each other's responses in the same words, each naming
the function to use: the two are one check driven by a table (``edge._Side``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sse_toolcalls import UsageError, aiter_events, aiter_tool_calls, iter_events, iter_tool_calls


class SyncOnly:
    def iter_bytes(self) -> Iterator[bytes]:
        yield b""

    def close(self) -> None: ...


class AsyncOnly:
    async def aiter_bytes(self) -> Any:
        yield b""

    async def aclose(self) -> None: ...


@pytest.mark.parametrize(
    ("reader", "response", "message"),
    [
        (
            aiter_tool_calls,
            SyncOnly(),
            "this response was opened by a sync client; read it with iter_tool_calls(), or "
            "open it with an async client (httpx.AsyncClient, AsyncOpenAI...)",
        ),
        (
            aiter_events,
            SyncOnly(),
            "this response was opened by a sync client; read it with iter_events(), or "
            "open it with an async client (httpx.AsyncClient, AsyncOpenAI...)",
        ),
        (
            iter_tool_calls,
            AsyncOnly(),
            "this response was opened by an async client; read it with aiter_tool_calls(), "
            "or open it with a sync client (httpx.Client, OpenAI...)",
        ),
        (
            iter_events,
            AsyncOnly(),
            "this response was opened by an async client; read it with aiter_events(), "
            "or open it with a sync client (httpx.Client, OpenAI...)",
        ),
        (
            aiter_tool_calls,
            object(),
            "expected a streamed HTTP response with aiter_bytes() and aclose() (httpx, "
            "httpx2, or an SDK's AsyncAPIResponse), got object",
        ),
        (
            iter_events,
            3,
            "expected a streamed HTTP response with iter_bytes() and close() (httpx, "
            "httpx2, or an SDK's APIResponse), got int",
        ),
    ],
)
def test_each_edge_names_the_other_or_what_it_needs(
    reader: Callable[..., Any], response: object, message: str
) -> None:
    with pytest.raises(UsageError) as caught:
        reader(response, "openai_chat")
    assert str(caught.value) == message
