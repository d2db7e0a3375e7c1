"""A UI stream that outlives its connection: the run kept, resumed with ``Last-Event-ID``.

``resumable_app(respond, runs=...)`` is an ASGI application mounted at a path P:

- ``POST P``: ``respond`` (:func:`keyed_vercel_response` or :func:`keyed_agui_response`,
  bound to an agent) answers the body with the run and its key. The run is drained
  into ``runs`` (a :class:`~.runlog.RunLog`) by the request's own task, and the
  response tails what is kept: a client that goes away ends only its tail; the run
  goes on to its end (the request's task returns then). A POST of a request whose run
  is live or kept (the same Vercel chat and message, the same AG-UI thread and run)
  starts nothing: it follows that run from its first event.
- ``GET P/<chat id>/stream`` (``useChat({resume: true})``'s own path; for AG-UI the
  thread id), with an optional ``Last-Event-ID: <key>:<n>`` header (or the query
  ``?lastEventId=<key>:<n>``): the events of the chat's latest run after n, then the
  live rest. Without an id, all of them. 204 when no run of the chat is kept, when the
  id names another run or a place past the end, or when the run ended at it; 400 for
  a malformed id.

A GET needs only the chat id: mount the app behind the same authentication as the POST.

A Vercel approval answer continues the paused assistant message, so its run's ids reuse
that message's id (``<messageId>:1``...): an id kept from the paused stream names the
same place in the resumed one. ``useChat`` sends none (its resume is a replay), and a
page that does should drop its last id when it posts an answer.

No task outlives its request and no loop-wide state is used, so the app runs on
asyncio and trio, under any ASGI server, mounted in FastAPI as it is::

    runs = SQLiteRunLog("runs.db")  # or PostgresRunLog(dsn): any worker resumes
    app.mount("/api/chat", resumable_app(
        lambda body: keyed_vercel_response(agent, body), runs=runs, headers=VERCEL_HEADERS))

A follower in this process wakes as soon as an event is kept (the log's bell); a
follower of a run another worker drains polls the shared store every
:data:`POLL_INTERVAL_S`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qsl, unquote_to_bytes

import anyio

from ..._checks import check_count
from .agui import AguiInputError, agui_response, parse_run_input
from .asgi import (
    DEFAULT_MAX_BODY_BYTES,
    Message,
    Receive,
    Scope,
    Send,
    _Gone,
    _plain,
    _read_body,
    _TooLarge,
)
from .paused import MAX_BODY_BYTES
from .paused import PausedRuns as AguiPausedRuns
from .runlog import MemoryRunLog, RunLog, RunLogError
from .sse_out import SSE_HEADERS
from .vercel import PausedRuns, parse_chat_request, vercel_response

if TYPE_CHECKING:
    from ..agent import Agent

__all__ = [
    "MAX_LAST_EVENT_ID_BYTES",
    "POLL_INTERVAL_S",
    "KeyedResponder",
    "KeyedResponse",
    "keyed_agui_response",
    "keyed_vercel_response",
    "resumable_app",
]

POLL_INTERVAL_S: Final = 0.2
"""Seconds between two reads of a run another worker drains (its bell rings in that
worker only). A fifth of a second is below what a reader of a reconnected stream
notices, and one indexed read per follower five times a second is little for SQLite
or PostgreSQL; a follower in the draining process wakes at once, without polling."""

MAX_LAST_EVENT_ID_BYTES: Final = 1024
"""The longest ``Last-Event-ID`` read, in bytes: ours are a key (a message or run id)
and a count; past this the id is malformed (400), not looked up."""

_COUNT = re.compile(r"[0-9]{1,18}")
# A place in a run: ASCII digits only (str.isdigit takes other scripts' digits), at
# most 18 of them (inside a 64-bit integer, as the SQL stores take it).


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyedResponse:
    """A protocol's response with what the app keeps it under."""

    status: int
    """The HTTP status."""

    headers: Mapping[str, str]
    """The response headers."""

    chunks: AsyncIterator[bytes]
    """The body: one SSE event per chunk, with an id ``<key>:<n>``; the run starts
    when it is iterated."""

    run_key: str | None
    """The request's key (the same request, the same key); ``None``: not a run to keep
    (a refused body, answered as it is)."""

    chat_id: str | None
    """The chat (Vercel) or thread (AG-UI) of the run; a GET of its stream resumes it."""


KeyedResponder = Callable[[bytes], Awaitable[KeyedResponse]]
"""A protocol's keyed response function bound to an agent."""


def _digest(*parts: str) -> str:
    text = "\x00".join(parts)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def _parsed(body: bytes | Mapping[str, Any]) -> bytes | Mapping[str, Any]:
    """The body as JSON once, for the key and the run (the raw body if it is not JSON:
    the protocol's function then says why)."""
    if not isinstance(body, bytes | bytearray):
        return body
    if len(body) > MAX_BODY_BYTES:
        return bytes(body)  # not parsed: the protocol's function refuses it by its size
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return bytes(body)
    return data if isinstance(data, Mapping) else bytes(body)


async def keyed_vercel_response(
    agent: Agent,
    body: bytes | Mapping[str, Any],
    *,
    paused: PausedRuns | None = None,
    deps: Any = None,
) -> KeyedResponse:
    """:func:`~.vercel.vercel_response` with its key: a user message's request id
    (chat and message), or an approval answer's chat, message and answers."""
    data = _parsed(body)
    status, headers, chunks = await vercel_response(agent, data, paused=paused, deps=deps)
    if status != 200:
        return KeyedResponse(
            status=status, headers=headers, chunks=chunks, run_key=None, chat_id=None
        )
    request = parse_chat_request(data)
    if request.text is not None:
        key = _digest("vercel", request.chat_id, request.request_id)
    else:
        answers = sorted(f"{a}\x01{ok}\x01{why}" for a, ok, why in request.answers)
        key = _digest("vercel", request.chat_id, request.message_id or "", *answers)
    return KeyedResponse(
        status=status, headers=headers, chunks=chunks, run_key=key, chat_id=request.chat_id
    )


async def keyed_agui_response(
    agent: Agent,
    body: bytes | Mapping[str, Any],
    *,
    paused: AguiPausedRuns | None = None,
) -> KeyedResponse:
    """:func:`~.agui.agui_response` with its key: the input's thread and run ids."""
    data = _parsed(body)
    status, headers, chunks = agui_response(agent, data, paused=paused)
    if status != 200:
        return KeyedResponse(
            status=status, headers=headers, chunks=chunks, run_key=None, chat_id=None
        )
    try:
        run = parse_run_input(data)
    except AguiInputError:  # pragma: no cover - the 200 above read it already
        return KeyedResponse(
            status=status, headers=headers, chunks=chunks, run_key=None, chat_id=None
        )
    key = _digest("agui", run["threadId"], run["runId"])
    return KeyedResponse(
        status=status, headers=headers, chunks=chunks, run_key=key, chat_id=run["threadId"]
    )


# --------------------------------------------------------------------------------------
# The app.


class _Malformed(Exception):
    pass


def _last_event_id(scope: Scope) -> tuple[str, int] | None:
    """The ``Last-Event-ID`` asked for (header first, else the query), or ``None``.

    Raises:
        _Malformed: not ``<key>:<n>`` in UTF-8, or too long.
    """
    raw: bytes | None = None
    for name, value in scope.get("headers", ()):
        if name.lower() == b"last-event-id":
            raw = bytes(value)
    if raw is None:
        query = bytes(scope.get("query_string", b""))
        try:
            pairs = parse_qsl(
                query.decode("latin-1"), keep_blank_values=True, encoding="utf-8", errors="strict"
            )
        except (UnicodeDecodeError, ValueError) as exc:
            raise _Malformed from exc
        found = [value for name, value in pairs if name == "lastEventId"]
        if not found:
            return None
        raw = found[-1].encode("utf-8", "surrogatepass")
    if not raw:
        return None  # an empty id is the SSE spec's "no id"
    if len(raw) > MAX_LAST_EVENT_ID_BYTES:
        raise _Malformed
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Malformed from exc
    key, colon, count = text.rpartition(":")
    if not colon or not key or not _COUNT.fullmatch(count) or any(c in key for c in "\r\n\0"):
        raise _Malformed
    return key, int(count)


def _stream_chat(scope: Scope) -> str | None:
    """The chat id of a ``.../<chat id>/stream`` path, or ``None``."""
    raw = scope.get("raw_path") or str(scope.get("path", "")).encode("utf-8", "surrogatepass")
    segments = bytes(raw).split(b"?", 1)[0].split(b"/")
    if len(segments) < 3 or segments[-1] != b"stream" or not segments[-2]:
        return None
    try:
        return unquote_to_bytes(segments[-2]).decode("utf-8")
    except UnicodeDecodeError:
        return None


def _event_key(chunk: bytes) -> str:
    """The ``<key>`` of the event's ``id: <key>:<n>`` field ("" without an id)."""
    for line in chunk.split(b"\n"):
        if line.startswith(b"id:"):
            text = line[3:].removeprefix(b" ").decode("utf-8", "replace")
            return text.rpartition(":")[0]
    return ""


def _headers(headers: Mapping[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


async def _close(chunks: AsyncIterator[bytes]) -> None:
    closer = getattr(chunks, "aclose", None)
    if closer is not None:
        await closer()


async def _drain(runs: RunLog, run_key: str, chunks: AsyncIterator[bytes]) -> None:
    """Run the run to its end, keeping each event; whoever listens or not."""
    n = 0
    keeping = True
    event_key: str | None = None
    try:
        async for chunk in chunks:
            n += 1
            if not keeping:
                continue  # past a bound: the run goes on, its stream is cut (documented)
            if event_key is None:
                event_key = _event_key(chunk)
            try:
                await runs.append(run_key, n, chunk, event_key=event_key)
            except RunLogError:
                keeping = False
                with suppress(RunLogError):
                    await runs.end(run_key)
    finally:
        with anyio.CancelScope(shield=True):
            await _close(chunks)
            with suppress(RunLogError):
                await runs.end(run_key)


async def _tail(runs: RunLog, run_key: str, after: int, send: Send) -> None:
    """Send the run's kept events after ``after`` as they come, until its end."""
    while True:
        bell = runs.bell.event(run_key)
        try:
            try:
                kept = await runs.read(run_key, after)
            except RunLogError:
                return
            if kept is None:
                return  # dropped: nothing more will come
            if kept.events:
                for data in kept.events:
                    await send({"type": "http.response.body", "body": data, "more_body": True})
                after += len(kept.events)
                continue
            if kept.ended and after >= kept.count:
                return
            with anyio.move_on_after(POLL_INTERVAL_S):
                await bell.wait()
        finally:
            runs.bell.release(run_key, bell)


async def _follow(
    runs: RunLog,
    run_key: str,
    after: int,
    headers: list[tuple[bytes, bytes]],
    *,
    receive: Receive,
    send: Send,
) -> None:
    """The response that tails the run; a client that leaves ends it (not the run)."""
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            while True:
                message: Message = await receive()
                if message["type"] == "http.disconnect":
                    group.cancel_scope.cancel()
                    return

        group.start_soon(watch)
        try:
            await _tail(runs, run_key, after, send)
            await send({"type": "http.response.body", "body": b""})
        except Exception:
            # The server could not send (the client left; servers say it in their own
            # exceptions): only this tail ends, never the run drained beside it.
            pass
        group.cancel_scope.cancel()


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def resumable_app(
    respond: KeyedResponder,
    *,
    runs: RunLog | None = None,
    headers: Mapping[str, str] = SSE_HEADERS,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """An ASGI application serving ``respond`` resumably (see the module docstring).

    Args:
        respond: :func:`keyed_vercel_response` or :func:`keyed_agui_response` bound to
            an agent (or any :data:`KeyedResponder`).
        runs: where runs are kept (a :class:`~.runlog.MemoryRunLog` of its own by
            default; share a SQLite or PostgreSQL one between workers).
        headers: the headers of a GET's stream: the protocol's
            (:data:`~.vercel.VERCEL_HEADERS` for Vercel).
        max_body_bytes: the bound on a POST's body (413 past it).

    Raises:
        UsageError: ``max_body_bytes`` is not a positive count.
    """
    limit = check_count("max_body_bytes", max_body_bytes, minimum=1)
    log: RunLog = runs if runs is not None else MemoryRunLog()
    stream_headers = _headers(headers)

    async def post(receive: Receive, send: Send) -> None:
        try:
            body = await _read_body(receive, limit)
        except _TooLarge:
            await _plain(send, 413, f"the request body is over {limit} bytes", [])
            return
        except _Gone:
            return
        answer = await respond(body)
        if answer.run_key is None or answer.chat_id is None:
            await send(
                {
                    "type": "http.response.start",
                    "status": answer.status,
                    "headers": _headers(answer.headers),
                }
            )
            try:
                async for chunk in answer.chunks:
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
            finally:
                await _close(answer.chunks)
            return
        try:
            claimed = await log.open(answer.run_key, chat_id=answer.chat_id)
        except RunLogError as exc:
            await _close(answer.chunks)
            await _plain(send, 503, f"the run cannot be kept: {exc}", [])
            return
        if not claimed:
            await _close(answer.chunks)  # never iterated: nothing of it ran
        async with anyio.create_task_group() as group:
            if claimed:
                group.start_soon(_drain, log, answer.run_key, answer.chunks)
            await _follow(
                log, answer.run_key, 0, _headers(answer.headers), receive=receive, send=send
            )

    async def resume(chat_id: str, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            last = _last_event_id(scope)
        except _Malformed:
            await _plain(send, 400, "Last-Event-ID must be <key>:<n>", [])
            return
        try:
            run = await log.latest(chat_id)
        except RunLogError as exc:
            await _plain(send, 503, f"the kept runs cannot be read: {exc}", [])
            return
        after = 0
        if run is not None and last is not None:
            key, after = last
            if key != run.event_key or after > run.count or (after == run.count and run.ended):
                run = None  # another run's id, or nothing follows it
        if run is None:
            await send({"type": "http.response.start", "status": 204, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await _follow(log, run.run_key, after, stream_headers, receive=receive, send=send)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        method = scope.get("method")
        chat_id = _stream_chat(scope)
        if chat_id is not None and method == "GET":
            await resume(chat_id, scope, receive, send)
        elif method == "POST":
            await post(receive, send)
        else:
            allow = b"GET" if chat_id is not None else b"POST"
            await _plain(
                send, 405, "POST a request body, or GET <chat id>/stream", [(b"allow", allow)]
            )

    return app
