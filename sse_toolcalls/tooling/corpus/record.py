"""Record streamed responses into a corpus: an httpx transport wrapper and a loopback proxy.

:class:`RecordingTransport` wraps any transport that has ``handle_request`` or
``handle_async_request`` (httpx's, httpx2's, or a user's own: it goes by capability, not
by module) and tees each ``text/event-stream`` body, read by read, into a
:class:`Recorder`: one ``.sse`` file per stream, byte-exact, with the length of every
read in the manifest, and an entry saying what the library made of it. ``sse-toolcalls
record --upstream URL --out DIR`` serves the same through a proxy on loopback, for an
application or an SDK pointed at it through its base URL.

Secrets never reach the disk: the values of credential headers and of key-like query
parameters are redacted from the URL, the headers and the body (a server may echo a key
in an error) in every spelling :mod:`sse_toolcalls._secrets` finds, and so is every
match of the user's own patterns. A compressed body is decoded first. A redaction
changes the body's length; the recorded read boundaries move with it. Then the redacted
body is parsed, and a stream whose meaning (a call's reassembled arguments, the text,
the error) still holds a secret, split across deltas where no byte redaction can reach
it, is not written at all (:class:`SecretSurvivedError`, :attr:`Recorder.withheld`);
``docs/threat-model.md`` says why and what is promised.
"""

from __future__ import annotations

import datetime
import itertools
import os
import re
import threading
import zlib
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, cast
from urllib.parse import parse_qsl, urlencode, urlsplit

import orjson

from ..._secrets import REDACTED as _REDACTED
from ..._secrets import SECRET_HEADERS as _SECRET_HEADERS
from ..._secrets import SECRET_QUERY_KEYS as _SECRET_QUERY_KEYS
from ..._secrets import SecretSet, credentials, is_secret_query_key, remember, strings_of
from ...calls import Dialect, ReasoningDelta, TextDelta, ToolCall, ToolCallArgumentsDelta
from ...dialects import SPECS
from ...errors import ProviderError, SSEToolCallsError, TruncatedStreamError, UsageError
from ...parser import StreamParser, ToolCallParser
from .._loopback import LoopbackServer
from . import manifest

__all__ = [
    "REDACTED",
    "SECRET_HEADERS",
    "SECRET_QUERY_KEYS",
    "Recorder",
    "RecordingProxy",
    "RecordingTransport",
    "SecretSurvivedError",
    "serve_proxy",
]

REDACTED: Final = _REDACTED
"""What a secret is replaced with, in every file the recorder writes."""

SECRET_HEADERS: Final = _SECRET_HEADERS
"""Headers whose values are credentials (lower case); any header whose name holds
``key``, ``token``, ``secret``, ``auth`` or ``password`` counts too."""

SECRET_QUERY_KEYS: Final = _SECRET_QUERY_KEYS
"""Query parameters whose values are credentials (Gemini's ``?key=``, among others);
names holding the words above count too."""

KEPT_HEADERS: Final = (
    "content-type",
    "content-encoding",
    "transfer-encoding",
    "server",
    "via",
    "x-request-id",
    "request-id",
    "openai-model",
    "openai-processing-ms",
    "retry-after",
)
"""Response headers worth keeping with a stream: how it was framed and by whom (a proxy's
quirks follow its ``server`` and ``via``), and what a user needs to report it upstream."""

MAX_DECODED_BYTES: Final = 64 * 1024 * 1024
"""How much a compressed body may inflate to when the recorder checks it for secrets: far
above any real stream (the largest we have seen is under 1 MB), low enough that a
compression bomb in a recorded body cannot exhaust memory."""

_DIALECT_BY_PATH: Final[tuple[tuple[str, Dialect], ...]] = tuple(
    (spec.endpoint, spec.name) for spec in SPECS.values()
)
"""Each dialect's endpoint marker (``DialectSpec.endpoint``), in the table's order."""


class SecretSurvivedError(SSEToolCallsError):
    """A secret would still be on disk after redaction: the stream is not written.

    Raised by :meth:`Recorder.save` when a secret survives in what the stream means (its
    calls' arguments, its text, its error, reassembled from pieces the bytes hold apart),
    or the body cannot be decoded to be checked. The reason names no secret.
    """


class Redactor:
    """Replaces secrets, the known ones and the user's patterns, with :data:`REDACTED`.

    A known secret is found in every spelling :mod:`sse_toolcalls._secrets` promises
    (percent-encoded, JSON-escaped, base64, any case); a user's pattern as written.
    """

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        try:
            self._patterns = [re.compile(p.encode()) for p in patterns]
        except re.error as exc:
            raise UsageError(f"bad redaction pattern: {exc}") from exc
        self._secrets = SecretSet()

    def learn(self, headers: Iterable[tuple[str, str]], url: str) -> None:
        """Remember the credential values a request carried, to find them anywhere."""
        for value in credentials(headers, url):
            self._secrets.add(value)
            # The library's own log records (a dialect's WARNING quoting streamed
            # arguments, while the recorder parses) are redacted against it too.
            remember(value)

    def spans(self, data: bytes) -> list[tuple[int, int]]:
        """The non-overlapping spans of ``data`` to redact, in order."""
        found = self._secrets.spans(data)
        for pattern in self._patterns:
            found += [m.span() for m in pattern.finditer(data) if m.end() > m.start()]
        merged: list[tuple[int, int]] = []
        for start, end in sorted(found):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        return merged

    def found_in(self, value: str) -> bool:
        """Whether ``value`` holds a secret in a spelling this redactor finds."""
        return bool(self.spans(value.encode("utf-8", "surrogatepass")))

    def body(self, data: bytes, reads: Sequence[int]) -> tuple[bytes, list[int]]:
        """The body with its secrets redacted, and the read lengths moved to match (a
        boundary inside a secret moves to the end of its replacement)."""
        spans = self.spans(data)
        if not spans:
            return data, list(reads)
        out, bounds, position = [], [], 0
        marker = REDACTED.encode()
        for start, end in spans:
            out += [data[position:start], marker]
            position = end
        out.append(data[position:])
        ends = list(itertools.accumulate(reads))
        shift = 0
        span_iter = iter(spans)
        span = next(span_iter, None)
        for end in ends:
            while span is not None and span[1] <= end:
                shift += len(marker) - (span[1] - span[0])
                span = next(span_iter, None)
            if span is not None and span[0] < end:
                # Inside a secret: the read ends where its replacement ends.
                bounds.append(span[0] + shift + len(marker))
            else:
                bounds.append(end + shift)
        lengths = [b - a for a, b in itertools.pairwise([0, *bounds]) if b > a]
        return b"".join(out), lengths

    def text(self, value: str) -> str:
        """``value`` with its secrets redacted."""
        data = value.encode("utf-8", "surrogatepass")
        spans = self.spans(data)
        if not spans:
            return value
        out, position = [], 0
        for start, end in spans:
            out += [data[position:start], REDACTED.encode()]
            position = end
        out.append(data[position:])
        return b"".join(out).decode("utf-8", "replace")

    def url(self, url: str) -> str:
        """The URL's path and query, key-like query values redacted."""
        parts = urlsplit(url)
        query = [
            (k, REDACTED if is_secret_query_key(k) else v)
            for k, v in parse_qsl(parts.query, keep_blank_values=True)
        ]
        path = parts.path + ("?" + urlencode(query, safe="[]") if query else "")
        return self.text(path)


def _dialect_of(path: str) -> Dialect | None:
    for marker, dialect in _DIALECT_BY_PATH:
        if marker in path:
            return dialect
    return None


def _call_json(call: ToolCall) -> dict[str, Any]:
    return {"name": call.name, "args": call.args, "call_id": call.call_id}


class Recorder:
    """Writes recorded streams and their manifest into a corpus folder (thread-safe).

    Entries already in the folder's manifest are kept; new ones are appended, and the
    manifest is rewritten whole after every stream (a crash loses one stream at most).
    """

    def __init__(self, out: str | os.PathLike[str], *, patterns: Iterable[str] = ()) -> None:
        self.folder = Path(out)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._patterns = tuple(patterns)
        Redactor(self._patterns)  # a bad pattern fails here, not on the first stream
        existing = self.folder / manifest.MANIFEST
        try:
            self._entries: list[dict[str, Any]] = (
                orjson.loads(existing.read_bytes()) if existing.exists() else []
            )
        except orjson.JSONDecodeError as exc:
            raise UsageError(f"cannot read {existing}: {exc}") from exc
        self._lock = threading.Lock()
        self._count = len(self._entries)
        self._withheld: list[dict[str, str]] = []

    @property
    def withheld(self) -> list[dict[str, str]]:
        """Streams not written because a secret would have survived: ``path`` (redacted)
        and ``reason`` (which names no secret), in the order they came."""
        with self._lock:
            return list(self._withheld)

    def withhold(self, redactor: Redactor, url: str, reason: str) -> None:
        """List a stream as not written, with why."""
        with self._lock:
            self._withheld.append({"path": redactor.url(url), "reason": reason})

    @property
    def entries(self) -> list[dict[str, Any]]:
        """The manifest's entries so far (a copy)."""
        with self._lock:
            return list(self._entries)

    def redactor(self) -> Redactor:
        """A redactor with the user's patterns, for one request."""
        return Redactor(self._patterns)

    def save(
        self,
        *,
        redactor: Redactor,
        url: str,
        status: int,
        headers: Iterable[tuple[str, str]],
        reads: Sequence[bytes],
        error: str | None = None,
    ) -> dict[str, Any]:
        """Write one stream and its manifest entry; return the entry.

        Raises:
            SecretSurvivedError: a secret survives redaction in what the stream means (a
                key the server echoed split across argument deltas, say); nothing is
                written. The recording transport and the proxy catch it and list the
                stream in :attr:`withheld` instead.
        """
        body, lengths = redactor.body(b"".join(reads), [len(r) for r in reads if r])
        path = redactor.url(url)
        dialect = _dialect_of(path)
        survived = _secret_in_meaning(redactor, dialect, body)
        if survived is not None:
            raise SecretSurvivedError(survived)
        parsed = _parse(dialect, body, lengths)
        dialect = dialect or parsed.pop("detected")
        parsed.pop("detected", None)
        kept = {
            name.lower(): redactor.text(value)
            for name, value in headers
            if name.lower() in KEPT_HEADERS
        }
        stamp = datetime.datetime.now(datetime.UTC)
        with self._lock:
            self._count += 1
            name = f"{dialect or 'unknown'}/{stamp:%Y%m%dT%H%M%S}-{self._count:04d}.sse"
            target = self.folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(body)
            entry: dict[str, Any] = {
                "file": name,
                "dialect": dialect,
                "path": path,
                "status": status,
                "headers": kept,
                "chunks": lengths,
                "recorded_at": stamp.isoformat(timespec="seconds"),
                **parsed,
            }
            if error is not None:
                entry["transport_error"] = redactor.text(error)
            self._entries.append(entry)
            manifest.write(self.folder, self._entries)
        return entry


def _meaning(dialect: Dialect | None, body: bytes) -> list[str]:
    """Every string the library makes of ``body``: each event of the rich stream (whole
    calls, their reassembled arguments, the turn's text and reasoning) and the error it
    ends with (its message, body, partial calls), as ``replay`` would print them."""
    parser = StreamParser(dialect)
    out: list[str] = []
    # The deltas joined, per call and for the text and reasoning: what a reader of the
    # file reassembles, even where the call's final text (Responses' done events) differs.
    joined: dict[tuple[str, int], list[str]] = {}

    def take(events: list[Any]) -> None:
        for event in events:
            out.extend(strings_of(event))
            if isinstance(event, ToolCallArgumentsDelta):
                joined.setdefault(("arguments", event.index), []).append(event.delta)
            elif isinstance(event, TextDelta | ReasoningDelta):
                joined.setdefault((type(event).__name__, 0), []).append(event.text)

    try:
        # Line by line, so an error event loses none of the events before it.
        for line in body.splitlines(keepends=True):
            take(parser.feed(line))
        take(parser.finish())
    except SSEToolCallsError as exc:
        # A truncation carries its completed and partial calls and its text.
        out += strings_of(exc)
    out += ["".join(pieces) for pieces in joined.values()]
    return out


def _inflated(body: bytes) -> bytes | None:
    """``body`` decompressed, when it is a gzip, zlib or raw-deflate stream a reader could
    inflate though no header said so; ``None`` otherwise."""
    for wbits in (32 + 15, -15):
        inflater = zlib.decompressobj(wbits)
        try:
            data = inflater.decompress(body, MAX_DECODED_BYTES)
        except zlib.error:
            continue
        if data:
            return data
    return None


def _secret_in_meaning(redactor: Redactor, dialect: Dialect | None, body: bytes) -> str | None:
    """Why the redacted ``body`` must not be written, or ``None`` when it may.

    The body's bytes were redacted already; a secret can still survive where the bytes
    hold it apart: split across argument or text deltas, in escapes the parser decodes,
    inside a compressed payload. Both the path's dialect and detection are tried, as
    ``check`` and ``replay`` read the file both ways.
    """
    modes: list[Dialect | None] = [dialect, None] if dialect is not None else [None]
    for mode in modes:
        for text in _meaning(mode, body):
            if redactor.found_in(text):
                return (
                    "a secret survives in the reassembled stream (split across events or "
                    "escaped): the recording is withheld rather than written with it"
                )
    inflated = _inflated(body)
    if inflated is not None and redactor.spans(inflated):
        return "the body inflates (gzip/deflate) to bytes that hold a secret"
    return None


def _parse(dialect: Dialect | None, body: bytes, lengths: Sequence[int]) -> dict[str, Any]:
    """What the library makes of the stream: the manifest's ``expected`` (review it: it is
    the library's answer at recording time) and the error, if any."""
    parser = ToolCallParser(dialect)
    calls: list[ToolCall] = []
    out: dict[str, Any] = {}
    try:
        position = 0
        for size in lengths:
            calls += parser.feed(body[position : position + size])
            position += size
        calls += parser.finish()
    except SSEToolCallsError as exc:
        outcome = (
            "truncated"
            if isinstance(exc, TruncatedStreamError)
            else "provider_error"
            if isinstance(exc, ProviderError)
            else None
        )
        out["error"] = {"type": type(exc).__name__, "message": str(exc)[:500]}
        if outcome is not None:
            out["expected"] = {"outcome": outcome, "calls": []}
    else:
        out["expected"] = {
            "outcome": "complete" if calls else "no_calls",
            "calls": [_call_json(c) for c in calls],
        }
    out["detected"] = parser.dialect
    return out


# -- the transport wrapper ----------------------------------------------------------------


class _Decoder:
    """Undoes a response's ``content-encoding`` chunk by chunk, so the recorder sees (and
    checks, and writes) the text a client reads: gzip, deflate with the zlib wrapper or
    without it (raw deflate, as some servers send it), and br where a brotli module is
    installed. An encoding it cannot undo leaves :attr:`failed` set: the stream cannot
    be checked for secrets, so it is not written."""

    def __init__(self, header: str) -> None:
        # "gzip, br": applied in that order, undone in the reverse one (RFC 9110 8.4).
        codings = [c.strip().lower() for c in header.split(",") if c.strip()]
        self.codings = [c for c in reversed(codings) if c != "identity"]
        self.failed: str | None = None
        self.produced = 0
        self._steps: list[Any] = []
        self._pending = b""  # the first bytes of a deflate body, until its kind is known
        for coding in self.codings:
            if coding in ("gzip", "x-gzip"):
                self._steps.append(zlib.decompressobj(16 + 15))
            elif coding == "deflate":
                self._steps.append(None)  # chosen from the first two bytes
            elif coding == "br" and (brotli := _brotli()) is not None:
                self._steps.append(brotli)
            else:
                self.failed = f"content-encoding {coding!r} cannot be decoded here"
                return

    def decode(self, chunk: bytes) -> bytes:
        if self.failed is not None:
            return b""
        try:
            for position, step in enumerate(self._steps):
                chosen = step
                if chosen is None:
                    self._pending += chunk
                    if len(self._pending) < 2:
                        return b""
                    # RFC 9110 8.4.1.2 says zlib; servers send raw deflate too. A zlib
                    # header is a multiple of 31 with method 8 (RFC 1950 2.2).
                    head = int.from_bytes(self._pending[:2], "big")
                    zlib_head = self._pending[0] & 0x0F == 8 and head % 31 == 0
                    chosen = zlib.decompressobj(15 if zlib_head else -15)
                    self._steps[position] = chosen
                    chunk, self._pending = self._pending, b""
                if hasattr(chosen, "decompress"):
                    chunk = chosen.decompress(chunk, MAX_DECODED_BYTES)
                    if chosen.unconsumed_tail:  # past the bound: the rest was not read
                        raise zlib.error(f"it inflates past {MAX_DECODED_BYTES} bytes")
                else:
                    chunk = chosen.process(chunk)
        except Exception as exc:  # zlib.error, brotli.error: nothing to check further
            self.failed = f"the body did not decode as {', '.join(self.codings)}: {exc}"
            return b""
        self.produced += len(chunk)
        if self.produced > MAX_DECODED_BYTES:
            self.failed = f"the body inflates past {MAX_DECODED_BYTES} bytes"
            return b""
        return chunk


def _brotli() -> Any:
    """A brotli decompressor, or ``None`` when no brotli module is installed."""
    for name in ("brotli", "brotlicffi"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        return module.Decompressor()
    return None


class _Tee:
    """Collects one response's reads; saves them once, when the body ends or closes."""

    def __init__(self, recorder: Recorder, redactor: Redactor, url: str, response: Any) -> None:
        self.recorder, self.redactor, self.url = recorder, redactor, url
        self.status = int(response.status_code)
        self.headers = [(str(k), str(v)) for k, v in response.headers.items()]
        # The transport sees the wire bytes; a compressed stream is recorded as the text
        # the parser would read.
        self.decoder = _Decoder(response.headers.get("content-encoding", "identity"))
        self.reads: list[bytes] = []
        self.saved = False

    def add(self, chunk: bytes) -> None:
        chunk = self.decoder.decode(bytes(chunk))
        if chunk:
            self.reads.append(chunk)

    def save(self, error: str | None = None) -> None:
        if self.saved:
            return
        self.saved = True
        if self.decoder.failed is not None:
            # Bytes we cannot read are bytes we cannot check for a key: not written.
            self.recorder.withhold(self.redactor, self.url, self.redactor.text(self.decoder.failed))
            return
        try:
            self.recorder.save(
                redactor=self.redactor,
                url=self.url,
                status=self.status,
                headers=self.headers,
                reads=self.reads,
                error=error,
            )
        except SecretSurvivedError as exc:
            # The application's stream goes on: recording must never break it.
            self.recorder.withhold(self.redactor, self.url, str(exc))


def _wrap_stream(stream: Any, tee: _Tee) -> Any:
    """The response's own stream object, its class swapped for a subclass that tees.

    A subclass of the stream's own class, so every isinstance check of the HTTP library
    (sync or async stream) still holds, whichever library it is."""

    base = type(stream)

    class Recording(base):  # type: ignore[valid-type,misc]
        def __iter__(self) -> Iterator[bytes]:
            try:
                for chunk in base.__iter__(self):
                    tee.add(chunk)
                    yield chunk
            except BaseException as exc:
                tee.save(f"{type(exc).__name__}: {exc}")
                raise
            tee.save()

        async def __aiter__(self) -> AsyncIterator[bytes]:
            try:
                async for chunk in base.__aiter__(self):
                    tee.add(chunk)
                    yield chunk
            except BaseException as exc:
                tee.save(f"{type(exc).__name__}: {exc}")
                raise
            tee.save()

        def close(self) -> None:
            tee.save("closed before its end" if not tee.saved else None)
            if hasattr(base, "close"):
                base.close(self)

        async def aclose(self) -> None:
            tee.save("closed before its end" if not tee.saved else None)
            if hasattr(base, "aclose"):
                await base.aclose(self)

    stream.__class__ = Recording
    return stream


class RecordingTransport:
    """Wraps an HTTP transport; records every ``text/event-stream`` response it returns.

    Works with any transport with ``handle_request`` (sync) or ``handle_async_request``
    (async), such as httpx's and httpx2's::

        transport = RecordingTransport(httpx.HTTPTransport(), Recorder("corpus/"))
        client = httpx.Client(transport=transport)

    The response's stream is teed as the client reads it; the stream is saved when it
    ends, fails, or is closed early (then the manifest says so).
    """

    def __init__(self, inner: Any, recorder: Recorder) -> None:
        if not (hasattr(inner, "handle_request") or hasattr(inner, "handle_async_request")):
            raise UsageError("the wrapped transport has neither handle_request nor its async twin")
        self.inner = inner
        self.recorder = recorder

    def _tee(self, request: Any, response: Any) -> Any:
        kind = response.headers.get("content-type", "")
        if "text/event-stream" not in kind.lower():
            return response
        redactor = self.recorder.redactor()
        redactor.learn(((str(k), str(v)) for k, v in request.headers.items()), str(request.url))
        tee = _Tee(self.recorder, redactor, str(request.url), response)
        _wrap_stream(response.stream, tee)
        return response

    def handle_request(self, request: Any) -> Any:
        """Send the request through the wrapped transport; tee the response."""
        return self._tee(request, self.inner.handle_request(request))

    async def handle_async_request(self, request: Any) -> Any:
        """Send the request through the wrapped transport; tee the response."""
        return self._tee(request, await self.inner.handle_async_request(request))

    def close(self) -> None:
        """Close the wrapped transport."""
        if hasattr(self.inner, "close"):
            self.inner.close()

    async def aclose(self) -> None:
        """Close the wrapped transport."""
        if hasattr(self.inner, "aclose"):
            await self.inner.aclose()

    def __enter__(self) -> RecordingTransport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> RecordingTransport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


# -- the proxy ------------------------------------------------------------------------------

_HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "upgrade",
        "te",
        "trailer",
        "host",
        "content-length",
        "accept-encoding",
        "content-encoding",
    }
)
"""Headers that belong to one hop, not to the request (RFC 9110 7.6.1); and the encoding
ones, since the proxy asks the upstream for plain bytes and sends them on as it got them."""


def _proxy_app(upstream: str, recorder: Recorder) -> Any:
    import httpx

    base = upstream.rstrip("/")
    clients: list[httpx.AsyncClient] = []

    async def lifespan(receive: Any, send: Any) -> None:
        # One client for the proxy's life, closed at shutdown: its pooled connections
        # to the upstream would otherwise outlive the server.
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                clients.append(
                    httpx.AsyncClient(
                        # The wrapper goes by capability, not by httpx's base class.
                        transport=cast(
                            "httpx.AsyncBaseTransport",
                            RecordingTransport(httpx.AsyncHTTPTransport(), recorder),
                        ),
                        timeout=httpx.Timeout(30.0, read=None),  # streams may pause long
                    )
                )
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                for client in clients:
                    await client.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        client = clients[0]
        body = []
        while True:
            message = await receive()
            body.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        path = scope.get("raw_path") or scope["path"].encode()
        query = scope.get("query_string") or b""
        url = base + path.decode("latin-1") + ("?" + query.decode("latin-1") if query else "")
        headers = [
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, v in scope["headers"]
            if k.decode("latin-1").lower() not in _HOP_BY_HOP
        ]
        headers.append(("accept-encoding", "identity"))
        request = client.build_request(
            scope["method"], url, headers=headers, content=b"".join(body)
        )
        try:
            response = await client.send(request, stream=True)
        except httpx.HTTPError as exc:
            message = f"upstream failed: {type(exc).__name__}: {exc}".encode()
            await send({"type": "http.response.start", "status": 502, "headers": []})
            await send({"type": "http.response.body", "body": message})
            return
        try:
            out_headers = [
                (k.encode("latin-1"), v.encode("latin-1"))
                for k, v in response.headers.items()
                # The raw bytes go on as they came, so their encoding must go with them
                # (an upstream may compress though asked not to).
                if k.lower() not in _HOP_BY_HOP or k.lower() == "content-encoding"
            ]
            await send(
                {
                    "type": "http.response.start",
                    "status": response.status_code,
                    "headers": out_headers,
                }
            )
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        finally:
            await response.aclose()

    return app


class RecordingProxy:
    """A recording proxy on ``http://127.0.0.1:<port>`` in a background thread::

    with RecordingProxy("https://api.openai.com", Recorder("corpus/")) as proxy:
        client = OpenAI(base_url=proxy.base_url + "/v1")
    """

    def __init__(self, upstream: str, recorder: Recorder, *, port: int = 0) -> None:
        if not upstream.startswith(("http://", "https://")):
            raise UsageError(f"the upstream must be an http(s) URL, not {upstream!r}")
        self.upstream = upstream
        self.recorder = recorder
        self._served = LoopbackServer(None, what="the recording proxy", port=port, lifespan="on")

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``.

        Raises:
            UsageError: the proxy is not running.
        """
        port = self._served.port
        if port is None:
            raise UsageError("the proxy is not running; use it as a context manager")
        return f"http://127.0.0.1:{port}"

    def start(self) -> None:
        """Listen on loopback; return once serving.

        Raises:
            UsageError: the port cannot be bound, uvicorn is missing, or it did not start.
        """
        if not self._served.running:
            # A fresh app per start: its upstream client lives from startup to shutdown.
            self._served.app = _proxy_app(self.upstream, self.recorder)
        self._served.start()

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._served.stop()

    def __enter__(self) -> RecordingProxy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_proxy(
    upstream: str,
    out: str,
    *,
    port: int = 8766,
    patterns: Sequence[str] = (),
    stop: threading.Event | None = None,
) -> int:
    """``sse-toolcalls record``: proxy to ``upstream`` on loopback until Ctrl-C (or
    ``stop``), recording every stream into ``out``. Returns the exit status."""
    import sys

    done = stop or threading.Event()
    try:
        recorder = Recorder(out, patterns=patterns)
        with RecordingProxy(upstream, recorder, port=port) as proxy:
            sys.stdout.write(f"recording {upstream} on {proxy.base_url} into {out}\n")
            sys.stdout.flush()
            try:
                while not done.wait(0.2):
                    pass
            except KeyboardInterrupt:
                pass
    except UsageError as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    for item in recorder.withheld:
        sys.stderr.write(f"not written: {item['path']}: {item['reason']}\n")
    return 0
