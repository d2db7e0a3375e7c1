"""The sync and async pumps are one rule (issue 12): every case below, read by
``iter_events`` and by ``aiter_events``, gives the same events, or the same error with
the same code and cause, and closes the response once."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from sse_toolcalls import Dialect, SSEToolCallsError, StreamEvent, aiter_events, iter_events
from sse_toolcalls.tooling.simulator import ScriptedCall, Turn, encode_turn

TURN = Turn(calls=(ScriptedCall(name="f", args={"k": "v"}, call_id="a"),), fragment_size=3)
CHUNKS = encode_turn("anthropic", TURN)
SSE = {"content-type": "text/event-stream"}


class Twin:
    """One body, readable by either edge: ``fail_at`` raises mid-body."""

    def __init__(
        self,
        chunks: list[bytes],
        status: int = 200,
        headers: dict[str, str] | None = None,
        fail_at: int | None = None,
    ) -> None:
        self.chunks, self.status_code = chunks, status
        self.headers = SSE if headers is None else headers
        self.fail_at = fail_at
        self.closed = 0

    def _chunks(self) -> Iterator[bytes]:
        for n, chunk in enumerate(self.chunks):
            if n == self.fail_at:
                raise ConnectionResetError("peer closed the connection")
            yield chunk

    def iter_bytes(self) -> Iterator[bytes]:
        return self._chunks()

    def close(self) -> None:
        self.closed += 1


class AsyncTwin(Twin):
    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks():
            yield chunk

    async def aclose(self) -> None:
        self.closed += 1

    iter_bytes = None  # type: ignore[assignment]  # an async client's response
    close = None  # type: ignore[assignment]


CUT = next(n for n, c in enumerate(CHUNKS) if b"input_json_delta" in c) + 1
CASES: dict[str, tuple[dict[str, Any], Dialect | None]] = {
    "whole": ({"chunks": CHUNKS}, "anthropic"),
    "detected": ({"chunks": CHUNKS}, None),
    "status": ({"chunks": [b'{"error": {"type": "overloaded_error"}}'], "status": 529}, None),
    "content type": ({"chunks": [b"<html>"], "headers": {"content-type": "text/html"}}, None),
    "html body": ({"chunks": [b"<!doctype html><p>bad gateway"]}, "anthropic"),
    "json body": ({"chunks": [b'{"error": {"message": "no", "code": "x"}}']}, "openai_chat"),
    "other dialect": ({"chunks": CHUNKS}, "openai_responses"),
    "dropped": ({"chunks": CHUNKS, "fail_at": CUT}, "anthropic"),
    "dropped at the end": ({"chunks": [*CHUNKS, b"x"], "fail_at": len(CHUNKS)}, "anthropic"),
    "garbage": ({"chunks": [b"data: {not json\n\n"]}, "anthropic"),
}

Outcome = tuple[list[StreamEvent], tuple[str, str | None, str] | None, int]


def _error(exc: SSEToolCallsError) -> tuple[str, str | None, str]:
    return type(exc).__name__, getattr(exc, "code", None), type(exc.__cause__).__name__


def read_sync(case: dict[str, Any], dialect: Dialect | None) -> Outcome:
    response = Twin(**case)
    out: list[StreamEvent] = []
    try:
        out.extend(iter_events(response, dialect))
    except SSEToolCallsError as exc:
        return out, _error(exc), response.closed
    return out, None, response.closed


async def read_async(case: dict[str, Any], dialect: Dialect | None) -> Outcome:
    response = AsyncTwin(**case)
    out: list[StreamEvent] = []
    try:
        async for event in aiter_events(response, dialect):
            out.append(event)
    except SSEToolCallsError as exc:
        return out, _error(exc), response.closed
    return out, None, response.closed


@pytest.mark.anyio
@pytest.mark.parametrize("name", list(CASES))
async def test_the_sync_and_async_edges_agree(name: str) -> None:
    case, dialect = CASES[name]
    sync = read_sync(case, dialect)
    assert await read_async(case, dialect) == sync
    assert sync[2] == 1  # closed once
