"""The streaming edge: an HTTP response in, tool calls or rich stream events out.

Works with any response object that has ``aiter_bytes()`` and ``aclose()`` (httpx's,
httpx2's, or a look-alike; the openai and anthropic SDKs' wrappers are unwrapped), typed
by protocols rather than by a client's class; a sync client's response given to an async
reader (or the reverse) is a ``UsageError`` naming the right one. Before the body is
read, the status and the content type are checked: an HTTP error becomes a
:class:`ProviderError` built from the provider's error body (read bounded). The response
is always closed: at the end, on an error, when the consumer breaks out early (the
generator is finalised; use ``contextlib.aclosing`` to make that immediate), and when the
consuming task is cancelled.

The head of the body is watched: a body that is not an event stream (a JSON error, an
HTML page) and a stream of another dialect than the one given are reported as such.

Transport failures are translated into our exception tree: a read timeout (ours via
``idle_timeout``, or the HTTP client's, recognised by class hierarchy) becomes a
:class:`StreamTimeoutError` (a retryable ``ProviderError`` with code ``"timeout"``); a
dropped connection ends the stream, and the dialect decides whether what arrived is
complete or truncated (:class:`TruncatedStreamError` with what arrived).
"""

from __future__ import annotations

import binascii
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast, runtime_checkable

from .. import _json
from ..calls import Dialect, StreamEvent, ToolCall
from ..dialects import detect_dialect, spec_for
from ..dialects._aws import is_exception as is_aws_exception
from ..dialects._parsed import PARSED_DATA, ParsedEvent, parsed_event, text_of
from ..errors import (
    MalformedStreamError,
    ProviderError,
    SSEToolCallsError,
    StreamTimeoutError,
    UsageError,
)
from ..framing import EVENTSTREAM, FRAMINGS, SSE, Framer, framing_for, sniff_framing
from ..framing.sse import DEFAULT_MAX_EVENT_BYTES, ServerSentEvent
from ..parser import StreamParser, ToolCallParser, new_framer
from .http_errors import MAX_ERROR_BODY_BYTES, header, provider_error_from_http
from .transport import classify

TIMEOUT_CODE = "timeout"
"""The ``ProviderError.code`` of a stream that went silent for too long."""

NOT_AN_EVENT_STREAM_CODE = "not_an_event_stream"
"""The ``ProviderError.code`` of a body that claims (or omits) ``text/event-stream`` but
opens as a JSON document or an HTML page (a proxy's error page, a non-streaming answer)."""


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

    def feed_event(self, payload: Mapping[str, Any], event: str | None = None) -> list[Any]: ...

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


def _media_types() -> tuple[str, ...]:
    """The media types a streamed body is read under, whatever the dialect: any framing's
    (read from the table at each response, so a framing registered later counts). An
    event stream is no error page; its framing is told by its first byte (the parser's
    when no dialect is named, the head's otherwise), and a stream in another framing than
    the dialect's is named by its first event (``_Head``), where its content type alone
    would only say "unexpected"."""
    return tuple(framing.media_type for framing in FRAMINGS.values())


def _bad_content_type(
    headers: Mapping[str, str] | None, media_types: tuple[str, ...]
) -> str | None:
    """The content type when one is given and it is none of ``media_types``, else
    ``None``."""
    content_type = header(headers, "content-type")
    if content_type is None:
        return None
    if content_type.split(";", 1)[0].strip().lower() in media_types:
        return None
    return content_type


def _status_error(
    status: int | None,
    headers: Mapping[str, str] | None,
    body: bytes,
    provider: Dialect | None,
    content_type: str | None,
    *,
    media_types: tuple[str, ...],
) -> ProviderError:
    if status is not None and not 200 <= status <= 299:
        return provider_error_from_http(status, body, headers, provider=provider)
    error = provider_error_from_http(status or 200, body, headers, provider=provider)
    if error.code is not None:
        # A JSON error object under a 2xx status (some proxies do this): report it as is.
        error.retryable = False
        return error
    snippet = body[:200].decode("utf-8", "replace").strip()
    if content_type is None:
        # The header said (or did not say) event stream; the first bytes said otherwise.
        return ProviderError(
            f"the body is not an event stream ({_looks_like(body)}): {snippet}",
            provider=provider,
            code=NOT_AN_EVENT_STREAM_CODE,
            status=status,
            retryable=False,
            body=snippet,
        )
    return ProviderError(
        f"expected {' or '.join(media_types)}, got {content_type!r} ({_looks_like(body)}): "
        f"{snippet}",
        provider=provider,
        code="unexpected_content_type",
        status=status,
        retryable=False,
        body=snippet,
    )


def _looks_like(body: bytes) -> str:
    head = body.lstrip(_LEADING)[:64].lower()
    if head.startswith((b"<!doctype html", b"<html")) or b"<html" in head:
        return "an HTML page"
    if head[:1] in (b"{", b"["):
        return "a JSON document"
    return "not SSE"


# --------------------------------------------------------------------------------------
# The head of the body: what a stream that is not ours looks like in its first bytes.

_LEADING = b"\xef\xbb\xbf \t\r\n"
"""A BOM and blank lines may open an event stream; both are skipped before sniffing."""

MAX_HEAD_BYTES = 64 * 1024
"""How far into the body the edge looks for the first event that tells the dialect, in
bytes: every provider's first event does (its ``MAX_EVENTS_BEFORE_DETECTION`` counterpart
in bytes); past this the parser alone decides."""


def _is_error_event(event: ServerSentEvent) -> bool:
    # Error objects are attributed by shape only: a proxy's error in another vendor's
    # shape is still an error of this stream, reported as such by its dialect. An AWS
    # exception message names itself (throttlingException): detection gives it to
    # Converse, but InvokeModel's stream sends the same ones.
    if event.event == "error" or is_aws_exception(event.event):
        return True
    payload: Any
    if event.data is PARSED_DATA:
        payload = cast(ParsedEvent, event).payload
    else:
        try:
            payload = _json.loads(event.data)
        except ValueError:
            return False
    return isinstance(payload, dict) and ("error" in payload or payload.get("type") == "error")


def _check_dialect(event: ServerSentEvent, dialect: str | None) -> bool:
    """Whether ``event`` told the dialect (so no later event need be looked at).

    Raises:
        MalformedStreamError: it is the first event of another dialect's stream.
    """
    found = detect_dialect(event)
    if found is None:
        return False
    if dialect is not None and found != dialect and not _is_error_event(event):
        raise MalformedStreamError(
            f"expected a stream of dialect {dialect}, but this looks like {found}: pass "
            f"dialect={found!r}, or None to recognise it from the stream",
            provider=dialect,
            data=text_of(event)[:200],
        )
    return True


class _Head:
    """Watches the first bytes of a body: a body that is not an event stream at all (a
    JSON error, an HTML page) and a stream of another dialect than the one given are
    reported as what they are, not as a truncated stream.

    The first meaningful event is recognised by the one recogniser,
    ``dialects.detect_dialect``, over events from a framer of the head's own (the
    parser's is not ours to look into); it stops at the first event that tells.
    """

    def __init__(self, dialect: Dialect | None) -> None:
        self._dialect = dialect
        # The dialect's own framing (DialectSpec.framing).
        framing = SSE if dialect is None else spec_for(dialect).framing
        self._framing = framing
        self._foreign = framing_for(framing).foreign
        # Built at the first byte, in the framing that byte tells (framing.sniff_framing):
        # an event stream handed to an SSE dialect (or the reverse) is framed as what it
        # is, so that its first event can name its dialect.
        self._framer: Framer | None = None
        self._seen = 0
        self._started = False
        self.not_sse = False
        """The first non-blank bytes cannot open a body of the framing (a JSON document,
        a markup page, for SSE)."""
        self.other_framing = False
        """The body opens in another framing than the dialect's: the parser, which frames
        as its dialect does, can only fail on it, so it waits for the head's verdict."""
        self.done = False
        """Nothing more to look at."""

    def look(self, chunk: bytes) -> None:
        """Look at the next chunk of the body.

        Raises:
            MalformedStreamError: the stream is another dialect's.
        """
        if self._framer is None and self._dialect is not None and chunk:
            found = sniff_framing(bytes(chunk[:1]))
            self.other_framing = found != self._framing
            self._framer = new_framer(found, DEFAULT_MAX_EVENT_BYTES)
        if not self._started:
            stripped = chunk.lstrip(_LEADING)
            if stripped:
                self._started = True
                # The framing's own test (Framing.foreign): for SSE, a JSON document
                # or a markup page.
                if self._foreign(stripped):
                    self.not_sse = self.done = True
                    return
        framer = self._framer
        if framer is None:
            self.done = self._started
            return
        self._seen += len(chunk)
        try:
            events = framer.feed(chunk)
        except SSEToolCallsError as exc:
            # The parser meets the same bytes and reports them; the events before a
            # framer's limit in this chunk are still looked at, as they would be had the
            # chunk been split before it (issue 29).
            self.done = True
            events = getattr(exc, "events", [])
        for event in events:
            if _check_dialect(event, self._dialect):
                self.done = True
                return
        if self._seen >= MAX_HEAD_BYTES:
            self.done = True


def _needs_error(
    status: int | None, headers: Mapping[str, str] | None, media_types: tuple[str, ...]
) -> str | bool:
    if status is not None and not 200 <= status <= 299:
        return True
    return _bad_content_type(headers, media_types) or False


def _is_timeout(exc: BaseException) -> bool:
    # By class hierarchy, not by module: httpx's, httpx2's and the SDKs' timeouts alike.
    return classify(exc) == "timeout"


def _timeout_error(
    provider: Dialect | None, exc: BaseException | None, seconds: float | None
) -> StreamTimeoutError:
    detail = f"no data for {seconds} s" if seconds is not None else f"read timed out ({exc!r})"
    return StreamTimeoutError(
        f"the stream went silent: {detail}", provider=provider, code=TIMEOUT_CODE
    )


def _dropped(parser: _Parser, provider: Dialect | None, exc: Exception) -> list[Any]:
    """The connection failed mid-body: what arrived decides. A complete stream gives its
    remaining items; a cut one raises ``TruncatedStreamError`` (chained to ``exc``)."""
    try:
        return parser.finish()
    except SSEToolCallsError as error:
        raise error from exc


class _Bounded:
    """A body collected for an error report, up to ``MAX_ERROR_BODY_BYTES``."""

    def __init__(self, first: bytes = b"") -> None:
        self.pieces = [first] if first else []
        self.size = len(first)

    def add(self, chunk: bytes) -> bool:
        """Keep a chunk; whether the bound is reached (read no more)."""
        self.pieces.append(chunk)
        self.size += len(chunk)
        return self.size >= MAX_ERROR_BODY_BYTES

    def body(self) -> bytes:
        return b"".join(self.pieces)[:MAX_ERROR_BODY_BYTES]


class _BodyStep:
    """What reading one response means, apart from the reading: the one owner of the
    rules both pumps (sync and async) follow, so a fix cannot land in one and miss the
    other. The pumps only move chunks and close what they opened."""

    def __init__(
        self,
        response: object,
        parser: _Parser,
        provider: Dialect | None,
        idle_timeout: float | None,
    ) -> None:
        self.parser = parser
        self.provider = provider
        self.idle_timeout = idle_timeout
        self.status, self.headers = _status_and_headers(response)
        self.head = _Head(provider)
        self.media_types = _media_types()
        # The chunks of a body in another framing than the dialect's, held from the
        # parser while the head reads them (at most MAX_HEAD_BYTES and a chunk).
        self._held: list[bytes] = []

    def needs_error_body(self) -> bool:
        """The status or the content type is an error: read the body (bounded) and raise
        :meth:`status_error` instead of parsing."""
        return bool(_needs_error(self.status, self.headers, self.media_types))

    def status_error(self, body: bytes) -> ProviderError:
        bad = _bad_content_type(self.headers, self.media_types)
        return _status_error(
            self.status, self.headers, body, self.provider, bad, media_types=self.media_types
        )

    def chunk(self, chunk: bytes) -> list[Any] | None:
        """The items a chunk completes; ``None`` when the body is no event stream after
        all (read the rest bounded, from ``_Bounded(chunk)``, and raise
        :meth:`not_sse_error`).

        Raises:
            SSEToolCallsError: from the parser, or another dialect's stream.
        """
        head = self.head
        if not head.done:
            head.look(chunk)
            if head.not_sse:
                return None
            if head.other_framing:
                self._held.append(chunk)
                # Until the head names the stream's dialect (it raises) or gives up; then
                # the parser reads it all, and fails on it as it must.
                return self._release() if head.done else []
        return self.parser.feed(chunk)

    def _release(self) -> list[Any]:
        held, self._held = self._held, []
        return self.parser.feed(b"".join(held)) if held else []

    def not_sse_error(self, body: bytes) -> ProviderError:
        return _status_error(
            self.status, self.headers, body, self.provider, None, media_types=self.media_types
        )

    def end(self) -> list[Any]:
        """The body ended: the remaining items (or the parser's truncation error)."""
        items = self._release()
        return items + self.parser.finish()

    def failed(self, exc: Exception) -> list[Any]:
        """Reading the next chunk raised ``exc``: our own errors go on as they are, a
        timeout becomes :class:`StreamTimeoutError`, any other failure is a dropped
        connection, where what arrived decides (:func:`_dropped`)."""
        if isinstance(exc, SSEToolCallsError):
            raise exc
        if _is_timeout(exc):
            # Its ``completed`` stays empty: every call completed so far was given out
            # as its chunk came, and an error carries only those never given (issue 29).
            raise _timeout_error(self.provider, exc, self.idle_timeout) from exc
        items = self._release()
        return items + _dropped(self.parser, self.provider, exc)


# --------------------------------------------------------------------------------------
# Async.


async def _read_bounded(response: AsyncByteResponse) -> bytes:
    import anyio  # at first use: the core imports no third-party package at load

    chunks = response.aiter_bytes()
    try:
        return await _read_bounded_from(chunks, _Bounded())
    finally:
        closer = getattr(chunks, "aclose", None)
        if closer is not None:
            with anyio.CancelScope(shield=True):
                await closer()


async def _aclose_all(
    chunks: AsyncIterator[bytes] | None,
    response: AsyncByteResponse,
    primary: BaseException | None,
) -> None:
    """Close the body iterator and the response; never let a failure to close hide the
    error that is already on its way (it becomes a note on that error)."""
    failure: Exception | None = None
    for closer in (getattr(chunks, "aclose", None), response.aclose):
        if closer is None:
            continue
        try:
            await closer()
        except Exception as exc:
            failure = failure or exc
    if failure is not None:
        if primary is None:
            raise failure
        primary.add_note(f"closing the response also failed: {failure!r}")


async def _apump(
    response: AsyncByteResponse,
    parser: _Parser,
    provider: Dialect | None,
    idle_timeout: float | None,
) -> AsyncIterator[Any]:
    # At first use, not at load: the core imports no third-party package at load (the
    # import contract in pyproject.toml), and a sync or sans-I/O user never needs anyio.
    import anyio

    chunks: AsyncIterator[bytes] | None = None
    primary: BaseException | None = None
    try:
        step = _BodyStep(response, parser, provider, idle_timeout)
        if step.needs_error_body():
            raise step.status_error(await _read_bounded(response))
        chunks = response.aiter_bytes()
        while True:
            try:
                if idle_timeout is None:
                    chunk = await chunks.__anext__()
                else:
                    with anyio.fail_after(idle_timeout):
                        chunk = await chunks.__anext__()
            except StopAsyncIteration:
                items = step.end()
                break
            except Exception as exc:
                items = step.failed(exc)
                break
            got = step.chunk(chunk)
            if got is None:
                body = await _read_bounded_from(chunks, _Bounded(chunk))
                raise step.not_sse_error(body)
            for item in got:
                yield item
        for item in items:
            yield item
    except BaseException as exc:
        primary = exc
        raise
    finally:
        # Shielded: a cancelled consumer must still release the connection.
        with anyio.CancelScope(shield=True):
            await _aclose_all(chunks, response, primary)


async def _read_bounded_from(chunks: AsyncIterator[bytes], bounded: _Bounded) -> bytes:
    # The rest of an error body, for its report (bounded): the error status or the
    # first bytes are what matter, so a body that fails to read adds nothing.
    try:
        async for chunk in chunks:
            if bounded.add(chunk):
                break
    except Exception:
        pass
    return bounded.body()


def _has(obj: object, name: str) -> bool:
    return callable(getattr(obj, name, None))


def _unwrap(response: object) -> object:
    """The HTTP response inside an SDK's wrapper, or ``response`` itself.

    The openai and anthropic SDKs' ``APIResponse`` and ``AsyncAPIResponse`` (from
    ``with_streaming_response``) hold it as ``http_response``; their ``Stream`` and
    ``AsyncStream`` as ``response`` (unread until the stream is iterated). Their own
    ``iter_bytes``/``close`` are not used: the async wrapper's ``iter_bytes`` is async
    and it has no ``aclose``.
    """
    inner = getattr(response, "http_response", None)
    if inner is not None and (_has(inner, "aiter_bytes") or _has(inner, "iter_bytes")):
        return inner
    if not _has(response, "aiter_bytes") and not _has(response, "iter_bytes"):
        inner = getattr(response, "response", None)
        if inner is not None and (_has(inner, "aiter_bytes") or _has(inner, "iter_bytes")):
            return inner
    return response


def _opened_by(response: object) -> Literal["sync", "async"] | None:
    """Which kind of client opened an httpx-family response: its body stream is
    iterable one way only (``SyncByteStream`` or ``AsyncByteStream``)."""
    stream = getattr(response, "stream", None)
    if stream is None:
        return None
    sync, async_ = hasattr(stream, "__iter__"), hasattr(stream, "__aiter__")
    if sync and not async_:
        return "sync"
    if async_ and not sync:
        return "async"
    return None


@dataclass(frozen=True, slots=True)
class _Side:
    """What a response must have to be read by one edge (async or sync), and its words."""

    opened: str  # what _opened_by says of a response this side's clients open
    kind: str
    iterate: str
    close: str
    example: str
    clients: str


_ASYNC = _Side(
    "async",
    "an async",
    "aiter_bytes",
    "aclose",
    "AsyncAPIResponse",
    "httpx.AsyncClient, AsyncOpenAI...",
)
_SYNC = _Side("sync", "a sync", "iter_bytes", "close", "APIResponse", "httpx.Client, OpenAI...")


def _response_for(response: object, side: _Side, other: _Side, other_name: str) -> object:
    """``response`` (or the HTTP response inside it) as the ``side`` edge reads it.

    Raises:
        UsageError: a response of the ``other`` side's clients (naming ``other_name``,
            the function to use), or an object without the side's methods.
    """
    response = _unwrap(response)
    opened = _opened_by(response)
    if opened == other.opened or (
        opened is None and not _has(response, side.iterate) and _has(response, other.iterate)
    ):
        raise UsageError(
            f"this response was opened by {other.kind} client; read it with {other_name}(), "
            f"or open it with {side.kind} client ({side.clients})"
        )
    if not (_has(response, side.iterate) and _has(response, side.close)):
        # An SDK's own stream of parsed events (boto3's converse_stream()["stream"], an
        # openai Stream iterated) is iterable, and read by the parse_* functions.
        parsed = (
            "; a stream of parsed events (boto3's converse_stream()['stream']...) goes to "
            "parse_tool_calls() or parse_events()"
            if hasattr(response, "__iter__") or hasattr(response, "__aiter__")
            else ""
        )
        raise UsageError(
            f"expected a streamed HTTP response with {side.iterate}() and {side.close}() "
            f"(httpx, httpx2, or an SDK's {side.example}), got {type(response).__name__}"
            f"{parsed}"
        )
    return response


def _async_response(response: object, sync_name: str) -> AsyncByteResponse:
    """``response`` as the async edge reads it (:func:`_response_for`)."""
    return cast(AsyncByteResponse, _response_for(response, _ASYNC, _SYNC, sync_name))


def _sync_response(response: object, async_name: str) -> SyncByteResponse:
    """``response`` as the sync edge reads it (:func:`_response_for`)."""
    return cast(SyncByteResponse, _response_for(response, _SYNC, _ASYNC, async_name))


def aiter_tool_calls(
    response: AsyncByteResponse | object,
    dialect: Dialect | None = None,
    *,
    idle_timeout: float | None = None,
) -> AsyncIterator[ToolCall]:
    """The complete tool calls of a streamed response, each as soon as its dialect
    completes it, in stream order.

    Args:
        response: an async client's streamed response: httpx's or httpx2's, the
            openai/anthropic SDKs' ``AsyncAPIResponse`` (``with_streaming_response``) or
            ``AsyncStream`` (its ``.response`` is read), or anything with
            ``aiter_bytes()`` and ``aclose()``; ``status_code`` and ``headers``, when
            present, are checked before the body is read.
        dialect: the wire format, or ``None`` to detect it from the stream.
        idle_timeout: seconds without a chunk after which the stream is abandoned.

    Raises:
        ProviderError: an HTTP error status, a content type other than
            ``text/event-stream``, a body that is not an event stream (code
            ``"not_an_event_stream"``), an error inside the stream, or a timeout (code
            ``"timeout"``, retryable).
        TruncatedStreamError: the stream ended before its dialect's end marker.
        MalformedStreamError, FramingError: the stream cannot be understood, or it is
            another dialect's than ``dialect`` (the message names it).
        UnknownDialectError: an unknown dialect name.
        UsageError: a sync client's response (use :func:`iter_tool_calls`), or not a
            response at all.
    """
    parser = ToolCallParser(dialect)
    http = _async_response(response, "iter_tool_calls")
    return _apump(http, parser, dialect, idle_timeout)


def aiter_events(
    response: AsyncByteResponse | object,
    dialect: Dialect | None = None,
    *,
    idle_timeout: float | None = None,
) -> AsyncIterator[StreamEvent]:
    """The rich stream events (text deltas, call progress, completed calls, the end) of a
    streamed response. Same arguments and errors as :func:`aiter_tool_calls`."""
    parser = StreamParser(dialect)
    http = _async_response(response, "iter_events")
    return _apump(http, parser, dialect, idle_timeout)


# --------------------------------------------------------------------------------------
# Sync (httpx.Client.stream responses).


def _read_bounded_sync(response: SyncByteResponse) -> bytes:
    chunks = response.iter_bytes()
    try:
        return _read_bounded_rest(chunks, _Bounded())
    finally:
        closer = getattr(chunks, "close", None)
        if closer is not None:
            closer()


def _close_all(
    chunks: Iterator[bytes] | None, response: SyncByteResponse, primary: BaseException | None
) -> None:
    """Sync :func:`_aclose_all`."""
    failure: Exception | None = None
    for closer in (getattr(chunks, "close", None), response.close):
        if closer is None:
            continue
        try:
            closer()
        except Exception as exc:
            failure = failure or exc
    if failure is not None:
        if primary is None:
            raise failure
        primary.add_note(f"closing the response also failed: {failure!r}")


def _pump(response: SyncByteResponse, parser: _Parser, provider: Dialect | None) -> Iterator[Any]:
    """Sync :func:`_apump` (the read timeout is the HTTP client's)."""
    chunks: Iterator[bytes] | None = None
    primary: BaseException | None = None
    try:
        step = _BodyStep(response, parser, provider, None)
        if step.needs_error_body():
            raise step.status_error(_read_bounded_sync(response))
        chunks = response.iter_bytes()
        while True:
            try:
                chunk = next(chunks)
            except StopIteration:
                items = step.end()
                break
            except Exception as exc:
                items = step.failed(exc)
                break
            got = step.chunk(chunk)
            if got is None:
                raise step.not_sse_error(_read_bounded_rest(chunks, _Bounded(chunk)))
            yield from got
        yield from items
    except BaseException as exc:
        primary = exc
        raise
    finally:
        _close_all(chunks, response, primary)


def _read_bounded_rest(chunks: Iterator[bytes], bounded: _Bounded) -> bytes:
    """Sync :func:`_read_bounded_from`."""
    try:
        for chunk in chunks:
            if bounded.add(chunk):
                break
    except Exception:
        pass
    return bounded.body()


def iter_tool_calls(
    response: SyncByteResponse | object, dialect: Dialect | None = None
) -> Iterator[ToolCall]:
    """Sync :func:`aiter_tool_calls`, over a response with ``iter_bytes()`` and ``close()``.

    The read timeout is the HTTP client's (httpx ``timeout=``); it surfaces as a
    retryable ``ProviderError`` with code ``"timeout"``. Takes httpx's and httpx2's
    responses, the SDKs' ``APIResponse`` and ``Stream``. Other errors as in
    :func:`aiter_tool_calls` (an async client's response: use it).
    """
    parser = ToolCallParser(dialect)
    return _pump(_sync_response(response, "aiter_tool_calls"), parser, dialect)


def iter_events(
    response: SyncByteResponse | object, dialect: Dialect | None = None
) -> Iterator[StreamEvent]:
    """Sync :func:`aiter_events`. Errors as in :func:`iter_tool_calls`."""
    parser = StreamParser(dialect)
    return _pump(_sync_response(response, "aiter_events"), parser, dialect)


# --------------------------------------------------------------------------------------
# Interop: events already framed by another library (httpx-sse's EventSource.aiter_sse()).


def _reframe(event: SSELike) -> bytes:
    # Writing the event back as its canonical block lets the one parser pipeline (and
    # its dialect detection and end-of-stream checks) handle it; the framer gives back
    # exactly this event.
    lines = [f"event: {event.event}"] if event.event and event.event != "message" else []
    lines += [f"data: {line}" for line in event.data.split("\n")]
    return ("\n".join(lines) + "\n\n").encode()


class _EventStep:
    """The sans-I/O part of reading events another library framed or parsed, shared by
    the sync and async pumps: the dialect check on the first events, then the parser."""

    def __init__(self, parser: _Parser, provider: Dialect | None) -> None:
        self.parser = parser
        self.provider = provider
        self.told = provider is None
        # Whether items come as botocore yields an event stream's ({event type: its
        # members}); None: not known until the first item (no dialect named).
        self.wrapped: bool | None = (
            None if provider is None else spec_for(provider).framing == EVENTSTREAM
        )

    def framed(self, event: SSELike) -> list[Any]:
        """The items a framed event completes.

        Raises:
            MalformedStreamError: an event of an event-stream dialect whose data is not
                a JSON object.
        """
        if not self.told:
            self.told = _check_dialect(_as_sse(event), self.provider)
        if not self.wrapped:
            return self.parser.feed(_reframe(event))
        # The dialect's parser frames AWS's event stream, not SSE text: an event already
        # framed (by another event-stream decoder) goes in as the object its data holds.
        try:
            payload = _json.loads(event.data)
        except ValueError:
            payload = None
        if type(payload) is not dict:
            raise MalformedStreamError(
                f"{self.provider}: a framed {event.event!r} event's data is not a JSON object",
                provider=self.provider,
                data=event.data[:200],
            )
        return self.parser.feed_event(payload, event.event or None)

    def parsed(self, event: SDKEvent) -> list[Any]:
        """The items a parsed event (an SDK's model, a dict) completes.

        Raises:
            UsageError: not a parsed event, or not JSON (``StreamParser.feed_event``).
            MalformedStreamError: the event could not give its JSON (its
                ``model_dump()`` raised, a mapping failed when read), chained.
        """
        name: str | None = None
        try:
            payload = _payload(event)
            item = (
                _event_stream_item(payload) if self.wrapped is not False or not self.told else None
            )
            if self.wrapped is None:
                self.wrapped = item is not None and _names_event_stream_dialect(item[0])
            if self.wrapped and item is not None:
                name, payload = item
            if not self.told:
                # The first events once more through the check the parser's feed_event
                # makes (a walk of one event): the dialect check reads a checked event only.
                # boto3's item handed with an SSE dialect is looked at as the event it is,
                # so that it is named (bedrock_converse), not read as that dialect's junk.
                seen_name, seen = name, payload
                if not self.wrapped and item is not None and _names_event_stream_dialect(item[0]):
                    seen_name, seen = item
                probe = parsed_event(seen, seen_name, max_event_bytes=DEFAULT_MAX_EVENT_BYTES)
                self.told = _check_dialect(probe, self.provider)
        except SSEToolCallsError:
            raise
        except Exception as exc:
            # The SDK's serialiser or the caller's mapping, on an event it built from the
            # wire: the event cannot be read, as the parser's feed_event says of a mapping
            # that fails there (only our exceptions leave the edge, STYLE 6). safe_str:
            # an exception whose __str__ raises is arbitrary input too.
            from .._jsonsafe import safe_str

            raise MalformedStreamError(
                f"a parsed event could not be read ({type(exc).__name__}: {safe_str(exc)})",
                provider=self.provider,
            ) from exc
        return self.parser.feed_event(payload, name)

    def end(self) -> list[Any]:
        return self.parser.finish()


async def _apump_events(
    events: AsyncIterable[SSELike], parser: _Parser, provider: Dialect | None
) -> AsyncIterator[Any]:
    step = _EventStep(parser, provider)
    async for event in events:
        for item in step.framed(event):
            yield item
    for item in step.end():
        yield item


def _as_sse(event: SSELike) -> ServerSentEvent:
    return ServerSentEvent(event.event or "message", event.data, "", None)


def aiter_tool_calls_from_sse(
    events: AsyncIterable[SSELike], dialect: Dialect | None = None
) -> AsyncIterator[ToolCall]:
    """Tool calls from events another SSE library framed (``EventSource.aiter_sse()``).

    The caller owns (and closes) the response behind ``events``. Errors as in
    :func:`aiter_tool_calls`, except the HTTP checks, which the other library did.
    """
    return _apump_events(events, ToolCallParser(dialect), dialect)


def aiter_events_from_sse(
    events: AsyncIterable[SSELike], dialect: Dialect | None = None
) -> AsyncIterator[StreamEvent]:
    """Rich stream events from events another SSE library framed. See
    :func:`aiter_tool_calls_from_sse`."""
    return _apump_events(events, StreamParser(dialect), dialect)


# --------------------------------------------------------------------------------------
# Interop: events the caller's SDK already parsed (iterating openai's or anthropic's own
# stream), or plain dicts.

SDKEvent = Mapping[str, Any] | object
"""A parsed event: a JSON object as a dict, or an SDK's pydantic model of one."""


def _payload(event: SDKEvent) -> Any:
    if isinstance(event, Mapping):
        return event
    dump = getattr(event, "model_dump", None)
    if callable(dump):
        # The SDKs build their models from the wire JSON; by_alias and exclude_unset give
        # back its keys, and only them (no defaults the provider never sent).
        return dump(mode="json", by_alias=True, exclude_unset=True)
    raise UsageError(
        f"expected a parsed event (a dict, or an SDK model with model_dump()), got "
        f"{type(event).__name__}"
    )


MAX_BLOB_DEPTH = 8
"""How deep in an event-stream item bytes are looked for, in nested objects: botocore's
blobs in Bedrock's events sit at depth 4 at most (``delta.image.source.bytes``); bytes
deeper stay bytes, which the parsed-event check refuses as no JSON value."""


def _blobs_as_text(value: Any, depth: int = 0) -> Any:
    """``value`` with every bytes value written as base64 text, as the wire carries a
    blob (botocore decodes ``chunk.bytes``, ``reasoningContent.redactedContent``...);
    copied only where it holds some."""
    if isinstance(value, bytes | bytearray | memoryview):
        return binascii.b2a_base64(value, newline=False).decode("ascii")
    if depth >= MAX_BLOB_DEPTH:
        return value
    if isinstance(value, Mapping):
        out = {k: _blobs_as_text(v, depth + 1) for k, v in value.items()}
        changed = any(out[k] is not v for k, v in value.items())
        return out if changed else value
    if isinstance(value, list):
        items = [_blobs_as_text(v, depth + 1) for v in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    return value


def _event_stream_item(payload: Any) -> tuple[str, Any] | None:
    """An item of botocore's event stream (``{"contentBlockDelta": {...}}``, ``{"chunk":
    {"bytes": b"..."}}``) as its event's name and payload, blobs in their wire form;
    ``None`` for anything else (an object of more keys, or whose one value is no
    object)."""
    if not isinstance(payload, Mapping) or len(payload) != 1:
        return None
    ((name, inner),) = payload.items()
    if type(name) is not str or not isinstance(inner, Mapping):
        return None
    return name, _blobs_as_text(inner)


def _names_event_stream_dialect(name: str) -> bool:
    """Whether an event of this name tells a dialect whose stream is an AWS event stream
    (the one recogniser, by the name alone)."""
    found = detect_dialect(ServerSentEvent(name, "", "", None))
    return found is not None and spec_for(found).framing == EVENTSTREAM


def _pump_parsed(
    events: Iterable[SDKEvent], parser: _Parser, provider: Dialect | None
) -> Iterator[Any]:
    step = _EventStep(parser, provider)
    for event in events:
        yield from step.parsed(event)
    yield from step.end()


async def _apump_parsed(
    events: AsyncIterable[SDKEvent], parser: _Parser, provider: Dialect | None
) -> AsyncIterator[Any]:
    step = _EventStep(parser, provider)
    async for event in events:
        for item in step.parsed(event):
            yield item
    for item in step.end():
        yield item


def parse_events(
    events: Iterable[SDKEvent], dialect: Dialect | None = None
) -> Iterator[StreamEvent]:
    """Rich stream events from events an SDK already parsed: iterate the SDK's own
    stream (``client.chat.completions.create(stream=True)``, ``client.messages.create(
    stream=True)``, boto3's ``client.converse_stream(...)["stream"]``) and hand its
    events, or plain dicts, here.

    boto3's items (``{"contentBlockDelta": {...}}``, InvokeModelWithResponseStream's
    ``{"chunk": {"bytes": b"..."}}``) are read as the event the key names, their bytes
    as the base64 the wire carries: for the Bedrock dialects, or with no dialect named
    when the first item's key names one. boto3 raises an exception message of the
    stream as ``EventStreamError`` while it is iterated: ``translate_sdk_errors``
    around the loop makes it our ``ProviderError``.

    The caller owns the SDK's stream. Errors as in :func:`aiter_tool_calls` without the
    HTTP checks; ``UsageError`` for an item that is not a parsed event.
    """
    return _pump_parsed(events, StreamParser(dialect), dialect)


def parse_tool_calls(
    events: Iterable[SDKEvent], dialect: Dialect | None = None
) -> Iterator[ToolCall]:
    """The complete tool calls of events an SDK already parsed. See :func:`parse_events`."""
    return _pump_parsed(events, ToolCallParser(dialect), dialect)


def aparse_events(
    events: AsyncIterable[SDKEvent], dialect: Dialect | None = None
) -> AsyncIterator[StreamEvent]:
    """Async :func:`parse_events` (``AsyncOpenAI``, ``AsyncAnthropic`` streams)."""
    return _apump_parsed(events, StreamParser(dialect), dialect)


def aparse_tool_calls(
    events: AsyncIterable[SDKEvent], dialect: Dialect | None = None
) -> AsyncIterator[ToolCall]:
    """Async :func:`parse_tool_calls`."""
    return _apump_parsed(events, ToolCallParser(dialect), dialect)


__all__ = [
    "MAX_BLOB_DEPTH",
    "MAX_HEAD_BYTES",
    "NOT_AN_EVENT_STREAM_CODE",
    "TIMEOUT_CODE",
    "AsyncByteResponse",
    "SDKEvent",
    "SSELike",
    "SyncByteResponse",
    "aiter_events",
    "aiter_events_from_sse",
    "aiter_tool_calls",
    "aiter_tool_calls_from_sse",
    "aparse_events",
    "aparse_tool_calls",
    "iter_events",
    "iter_tool_calls",
    "parse_events",
    "parse_tool_calls",
]
