"""The streaming edge: an HTTP response in, tool calls or rich stream events out.

Works with any response object that has ``aiter_bytes()`` and ``aclose()`` (httpx's,
or a look-alike), typed by protocols rather than by httpx's class. Before the body is
read, the status and the content type are checked: an HTTP error becomes a
:class:`ProviderError` built from the provider's error body (read bounded). The response
is always closed: at the end, on an error, when the consumer breaks out early (the
generator is finalised; use ``contextlib.aclosing`` to make that immediate), and when the
consuming task is cancelled.

Transport failures are translated into our exception tree: a read timeout (ours via
``idle_timeout``, or httpx's) becomes a :class:`StreamTimeoutError` (a retryable
``ProviderError`` with code ``"timeout"``); a dropped connection ends the stream, and the
dialect decides whether what arrived is complete or truncated
(:class:`TruncatedStreamError` with what arrived).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterable, AsyncIterator, Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

import anyio

from ..calls import StreamEvent, ToolCall
from ..errors import ProviderError, SSEToolCallsError, StreamTimeoutError
from ..parser import StreamParser, ToolCallParser
from .http_errors import MAX_ERROR_BODY_BYTES, header, provider_error_from_http

TIMEOUT_CODE = "timeout"
"""The ``ProviderError.code`` of a stream that went silent for too long."""


@runtime_checkable
class AsyncByteResponse(Protocol):
    """What the async edge needs from a response: its body in chunks, and a way to close it."""

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body, decoded from its transfer and content encodings, in chunks."""
        ...

    async def aclose(self) -> None:
        """Release the connection."""
        ...


@runtime_checkable
class SyncByteResponse(Protocol):
    """What the sync edge needs from a response (httpx's sync ``Response``)."""

    def iter_bytes(self) -> Iterator[bytes]:
        """The body in chunks."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


class _Parser(Protocol):
    def feed(self, data: bytes) -> list[Any]: ...

    def finish(self) -> list[Any]: ...


class SSELike(Protocol):
    """An already-framed SSE event from another library (httpx-sse's ``ServerSentEvent``)."""

    @property
    def event(self) -> str:
        """The event type."""
        ...

    @property
    def data(self) -> str:
        """The data, lines joined with LF."""
        ...


# --------------------------------------------------------------------------------------
# Status, content type, transport errors.


def _status_and_headers(response: object) -> tuple[int | None, Mapping[str, str] | None]:
    # Look-alikes may have neither; then there is nothing to check before reading.
    status = getattr(response, "status_code", None)
    headers = getattr(response, "headers", None)
    if not isinstance(status, int) or isinstance(status, bool):
        status = None
    if headers is not None and not isinstance(headers, Mapping):
        headers = None
    return status, headers


def _bad_content_type(headers: Mapping[str, str] | None) -> str | None:
    """The content type when one is given and it is not an event stream, else ``None``."""
    content_type = header(headers, "content-type")
    if content_type is None:
        return None
    if content_type.split(";", 1)[0].strip().lower() == "text/event-stream":
        return None
    return content_type


def _status_error(
    status: int | None,
    headers: Mapping[str, str] | None,
    body: bytes,
    provider: str | None,
    content_type: str | None,
) -> ProviderError:
    if status is not None and not 200 <= status <= 299:
        return provider_error_from_http(status, body, headers, provider=provider)
    error = provider_error_from_http(status or 200, body, headers, provider=provider)
    if error.code is not None:
        # A JSON error object under a 2xx status (some proxies do this): report it as is.
        error.retryable = False
        return error
    snippet = body[:200].decode("utf-8", "replace").strip()
    return ProviderError(
        f"expected text/event-stream, got {content_type!r}: {snippet}",
        provider=provider,
        code="unexpected_content_type",
        status=status,
        retryable=False,
        body=snippet,
    )


def _needs_error(status: int | None, headers: Mapping[str, str] | None) -> str | bool:
    if status is not None and not 200 <= status <= 299:
        return True
    return _bad_content_type(headers) or False


def _is_timeout(exc: BaseException) -> bool:
    if isinstance(exc, TimeoutError):
        return True
    # httpx is only consulted when the caller already imported it (a response of ours
    # never comes from anywhere else): the edge itself depends on protocols only.
    httpx = sys.modules.get("httpx")
    return httpx is not None and isinstance(exc, httpx.TimeoutException)


def _timeout_error(
    provider: str | None, exc: BaseException | None, seconds: float | None
) -> StreamTimeoutError:
    detail = f"no data for {seconds} s" if seconds is not None else f"read timed out ({exc!r})"
    return StreamTimeoutError(
        f"the stream went silent: {detail}", provider=provider, code=TIMEOUT_CODE
    )


def _dropped(parser: _Parser, provider: str | None, exc: Exception) -> list[Any]:
    """The connection failed mid-body: what arrived decides. A complete stream gives its
    remaining items; a cut one raises ``TruncatedStreamError`` (chained to ``exc``)."""
    try:
        return parser.finish()
    except SSEToolCallsError as error:
        raise error from exc


# --------------------------------------------------------------------------------------
# Async.


async def _read_bounded(response: AsyncByteResponse) -> bytes:
    pieces: list[bytes] = []
    size = 0
    chunks = response.aiter_bytes()
    try:
        async for chunk in chunks:
            pieces.append(chunk)
            size += len(chunk)
            if size >= MAX_ERROR_BODY_BYTES:
                break
    except Exception:
        # The error status is what matters; a body we cannot read adds nothing.
        pass
    finally:
        closer = getattr(chunks, "aclose", None)
        if closer is not None:
            with anyio.CancelScope(shield=True):
                await closer()
    return b"".join(pieces)[:MAX_ERROR_BODY_BYTES]


async def _apump(
    response: AsyncByteResponse,
    parser: _Parser,
    provider: str | None,
    idle_timeout: float | None,
) -> AsyncIterator[Any]:
    chunks: AsyncIterator[bytes] | None = None
    try:
        status, headers = _status_and_headers(response)
        if _needs_error(status, headers):
            body = await _read_bounded(response)
            raise _status_error(status, headers, body, provider, _bad_content_type(headers))
        chunks = response.aiter_bytes()
        tail: list[Any] | None = None
        while tail is None:
            try:
                if idle_timeout is None:
                    chunk = await chunks.__anext__()
                else:
                    with anyio.fail_after(idle_timeout):
                        chunk = await chunks.__anext__()
            except StopAsyncIteration:
                tail = parser.finish()
                break
            except SSEToolCallsError:
                raise
            except Exception as exc:
                if _is_timeout(exc):
                    raise _timeout_error(provider, exc, idle_timeout) from exc
                tail = _dropped(parser, provider, exc)
                break
            for item in parser.feed(chunk):
                yield item
        for item in tail:
            yield item
    finally:
        # Shielded: a cancelled consumer must still release the connection.
        with anyio.CancelScope(shield=True):
            closer = getattr(chunks, "aclose", None)
            try:
                if closer is not None:
                    await closer()
            finally:
                await response.aclose()


def aiter_tool_calls(
    response: AsyncByteResponse,
    dialect: str | None = None,
    *,
    idle_timeout: float | None = None,
) -> AsyncIterator[ToolCall]:
    """The complete tool calls of a streamed response, each as soon as its dialect
    completes it, in stream order.

    Args:
        response: anything with ``aiter_bytes()`` and ``aclose()``; ``status_code`` and
            ``headers``, when present, are checked before the body is read.
        dialect: the wire format, or ``None`` to detect it from the stream.
        idle_timeout: seconds without a chunk after which the stream is abandoned.

    Raises:
        ProviderError: an HTTP error status, a content type other than
            ``text/event-stream``, an error inside the stream, or a timeout (code
            ``"timeout"``, retryable).
        TruncatedStreamError: the stream ended before its dialect's end marker.
        MalformedStreamError, FramingError: the stream cannot be understood.
        UnknownDialectError: an unknown dialect name.
    """
    parser = ToolCallParser(dialect)
    return _apump(response, parser, dialect, idle_timeout)


def aiter_events(
    response: AsyncByteResponse,
    dialect: str | None = None,
    *,
    idle_timeout: float | None = None,
) -> AsyncIterator[StreamEvent]:
    """The rich stream events (text deltas, call progress, completed calls, the end) of a
    streamed response. Same arguments and errors as :func:`aiter_tool_calls`."""
    parser = StreamParser(dialect)
    return _apump(response, parser, dialect, idle_timeout)


# --------------------------------------------------------------------------------------
# Sync (httpx.Client.stream responses).


def _read_bounded_sync(response: SyncByteResponse) -> bytes:
    pieces: list[bytes] = []
    size = 0
    chunks = response.iter_bytes()
    try:
        for chunk in chunks:
            pieces.append(chunk)
            size += len(chunk)
            if size >= MAX_ERROR_BODY_BYTES:
                break
    except Exception:
        pass
    finally:
        closer = getattr(chunks, "close", None)
        if closer is not None:
            closer()
    return b"".join(pieces)[:MAX_ERROR_BODY_BYTES]


def _pump(response: SyncByteResponse, parser: _Parser, provider: str | None) -> Iterator[Any]:
    chunks: Iterator[bytes] | None = None
    try:
        status, headers = _status_and_headers(response)
        if _needs_error(status, headers):
            body = _read_bounded_sync(response)
            raise _status_error(status, headers, body, provider, _bad_content_type(headers))
        chunks = response.iter_bytes()
        tail: list[Any] | None = None
        while tail is None:
            try:
                chunk = next(chunks)
            except StopIteration:
                tail = parser.finish()
                break
            except SSEToolCallsError:
                raise
            except Exception as exc:
                if _is_timeout(exc):
                    raise _timeout_error(provider, exc, None) from exc
                tail = _dropped(parser, provider, exc)
                break
            yield from parser.feed(chunk)
        yield from tail
    finally:
        try:
            closer = getattr(chunks, "close", None)
            if closer is not None:
                closer()
        finally:
            response.close()


def iter_tool_calls(response: SyncByteResponse, dialect: str | None = None) -> Iterator[ToolCall]:
    """Sync :func:`aiter_tool_calls`, over a response with ``iter_bytes()`` and ``close()``.

    The read timeout is the HTTP client's (httpx ``timeout=``); it surfaces as a
    retryable ``ProviderError`` with code ``"timeout"``. Other errors as in
    :func:`aiter_tool_calls`.
    """
    return _pump(response, ToolCallParser(dialect), dialect)


def iter_events(response: SyncByteResponse, dialect: str | None = None) -> Iterator[StreamEvent]:
    """Sync :func:`aiter_events`. Errors as in :func:`iter_tool_calls`."""
    return _pump(response, StreamParser(dialect), dialect)


# --------------------------------------------------------------------------------------
# Interop: events already framed by another library (httpx-sse's EventSource.aiter_sse()).


def _reframe(event: SSELike) -> bytes:
    # Writing the event back as its canonical block lets the one parser pipeline (and
    # its dialect detection and end-of-stream checks) handle it; the framer gives back
    # exactly this event.
    lines = [f"event: {event.event}"] if event.event and event.event != "message" else []
    lines += [f"data: {line}" for line in event.data.split("\n")]
    return ("\n".join(lines) + "\n\n").encode()


async def _apump_events(
    events: AsyncIterable[SSELike], parser: _Parser, provider: str | None
) -> AsyncIterator[Any]:
    async for event in events:
        for item in parser.feed(_reframe(event)):
            yield item
    for item in parser.finish():
        yield item


def aiter_tool_calls_from_sse(
    events: AsyncIterable[SSELike], dialect: str | None = None
) -> AsyncIterator[ToolCall]:
    """Tool calls from events another SSE library framed (``EventSource.aiter_sse()``).

    The caller owns (and closes) the response behind ``events``. Errors as in
    :func:`aiter_tool_calls`, except the HTTP checks, which the other library did.
    """
    return _apump_events(events, ToolCallParser(dialect), dialect)


def aiter_events_from_sse(
    events: AsyncIterable[SSELike], dialect: str | None = None
) -> AsyncIterator[StreamEvent]:
    """Rich stream events from events another SSE library framed. See
    :func:`aiter_tool_calls_from_sse`."""
    return _apump_events(events, StreamParser(dialect), dialect)


__all__ = [
    "TIMEOUT_CODE",
    "AsyncByteResponse",
    "SSELike",
    "SyncByteResponse",
    "aiter_events",
    "aiter_events_from_sse",
    "aiter_tool_calls",
    "aiter_tool_calls_from_sse",
    "iter_events",
    "iter_tool_calls",
]
