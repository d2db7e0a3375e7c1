"""Bytes in, tool calls out: the framer, a dialect's reassembler and the end-of-stream check.

Sans-I/O: the caller reads the network and feeds the bytes, then says when the stream
ended. :class:`StreamParser` yields the rich stream (text, call progress, completed
calls, the finish); :class:`ToolCallParser` yields only the complete calls.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ._faces import publish
from .calls import Dialect, StreamEvent, ToolCall, ToolCallCompleted
from .dialects import accepts_unterminated, detect_dialect, reassembler_for, spec_for
from .dialects._common import Reassembler
from .dialects._parsed import parsed_event
from .errors import (
    MalformedStreamError,
    SSEToolCallsError,
    StreamError,
    TruncatedStreamError,
    UsageError,
)
from .framing import SSE, Framer, framing_for, sniff_framing
from .framing.sse import DEFAULT_MAX_EVENT_BYTES, ServerSentEvent, SSEFramer

__all__ = ["MAX_EVENTS_BEFORE_DETECTION", "StreamParser", "ToolCallParser"]

MAX_EVENTS_BEFORE_DETECTION = 64
"""How many events may arrive before the dialect is recognised, in events.

Every provider's first or second event tells its dialect; 64 allows for keep-alives and
stray events while bounding what an unrecognisable stream makes us hold."""


def new_framer(framing: str, max_event_bytes: int) -> Framer:
    """A fresh framer of the named framing.

    Raises:
        UsageError: no framing has this name, or ``max_event_bytes`` is not a count.
    """
    if framing == SSE:
        # SSE's framer is this module's global, not the table's: the benchmarks and the
        # twin tests point it at one twin of the framer (benchmarks/ours.py), and every
        # stream of theirs must be framed by that twin.
        return SSEFramer(max_event_bytes=max_event_bytes)
    return framing_for(framing).framer(max_event_bytes=max_event_bytes)


class _Sniffer:
    """The framer of a stream whose dialect is not named, until its first byte: then the
    framer of the framing that byte tells (``framing.sniff_framing``) takes its place in
    the parser, so that every later read goes straight to it."""

    __slots__ = ("_parser", "_sse")

    def __init__(self, parser: StreamParser, max_event_bytes: int) -> None:
        self._parser = parser
        # Built now: it checks max_event_bytes, and it is the framer of nearly every stream.
        self._sse = new_framer(SSE, max_event_bytes)

    @property
    def max_event_bytes(self) -> int:
        return self._sse.max_event_bytes

    def feed(self, data: bytes) -> list[ServerSentEvent]:
        if not data:
            return []
        framing = sniff_framing(data[:1]) if isinstance(data, bytes | bytearray) else SSE
        framer = self._sse if framing == SSE else new_framer(framing, self._sse.max_event_bytes)
        self._parser._framer = framer
        return framer.feed(data)

    def finish(self, *, unterminated: Callable[[str], bool] | None = None) -> list[ServerSentEvent]:
        return self._sse.finish(unterminated=unterminated)


class StreamParser:
    """The rich stream of one streamed response.

    ``dialect`` is one of ``"openai_chat"``, ``"openai_responses"``, ``"anthropic"``,
    ``"gemini"``, or ``None`` to recognise it from the stream.
    """

    def __init__(
        self,
        dialect: Dialect | None = None,
        *,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        _rich: bool = True,
    ) -> None:
        self._rich = _rich
        # Framing + reassembler + end check, each from the dialect's spec; a stream whose
        # dialect is to be recognised is framed as its first byte says (_Sniffer).
        spec = None if dialect is None else spec_for(dialect)
        self._framer: Framer = (
            _Sniffer(self, max_event_bytes)
            if spec is None
            else new_framer(spec.framing, max_event_bytes)
        )
        self._reassembler: Reassembler | None = (
            None if spec is None else spec.reassembler(rich=_rich)
        )
        self._held: list[ServerSentEvent] = []
        self._state = "open"
        # How many of the reassembler's completed calls a feed or finish has returned: an
        # error carries only the ones after them, so that what the reads returned and what
        # the error carries add up to the same calls however the reads fell (issue 29).
        self._returned = 0

    @property
    def dialect(self) -> Dialect | None:
        """The dialect being parsed (``None`` until it is recognised)."""
        return None if self._reassembler is None else self._reassembler.dialect

    def __repr__(self) -> str:
        dialect = self.dialect or "dialect not yet recognised"
        done = len(self._reassembler.completed) if self._reassembler is not None else 0
        return f"<{type(self).__name__} {dialect}, {self._state}, {done} call(s) completed>"

    def feed(self, data: bytes) -> list[StreamEvent]:
        """Take the next bytes; return the stream events they complete.

        Raises:
            ProviderError: the stream reported an error.
            TruncatedStreamError: the turn stopped early (a token limit).
            MalformedStreamError, FramingError: the stream cannot be read.
            UsageError: the parser already finished or failed.
        """
        if self._state != "open":
            # Inline, not self._check_open(): a method call per feed is a fixed cost of the
            # one-event-per-read regime (issue 16, item 2).
            self._check_open()
        try:
            events = self._framer.feed(data)
            if self._reassembler is not None:
                out = self._reassembler.handle(events) if events else []
            else:
                out = []
                for event in events:
                    out.extend(self._route(event))
        except SSEToolCallsError as exc:
            # Only a framer's error has events (a limit, or a fault of a framing that
            # reads whole messages); a reassembler's limit has none.
            earlier: list[ServerSentEvent] | None = getattr(exc, "events", None)
            if earlier:
                self._before(earlier)
            self._failed(exc)
            raise
        except Exception as exc:
            raise self._unexpected(exc) from exc
        if out:
            self._returned = len(self._reassembler.completed)  # type: ignore[union-attr]
        return out

    def _before(self, events: list[ServerSentEvent]) -> None:
        """Read the events the framer completed in the read that crossed one of its
        limits, before that limit fails the parser: split before the failing event, the
        read would have returned them, so the calls they complete are carried by the
        error (issue 29). An error they raise comes earlier in the stream: it wins."""
        try:
            reassembler = self._reassembler
            if reassembler is not None:
                reassembler.handle(events)
            else:
                for event in events:
                    self._route(event)
        except SSEToolCallsError as earlier:
            self._failed(earlier)
            raise earlier from None
        except Exception as exc:
            raise self._unexpected(exc) from exc

    def feed_event(self, payload: Mapping[str, Any], event: str | None = None) -> list[StreamEvent]:
        """Take the next event as its parsed JSON object (an SDK's event dumped, a dict);
        return the stream events it completes. Beside :meth:`feed`, for a caller whose
        events are already parsed: the object is checked against the limits its text would
        have met and read as it is, never written back as text (``dialects._parsed``).

        ``event`` is the SSE event name; ``None`` takes the payload's ``"type"`` when it is a
        string, else ``"message"``. One parser takes bytes or parsed events, not both.

        Raises:
            UsageError: ``payload`` is not a JSON object of dicts, lists and scalars (a set,
                bytes, a non-string key...), or the parser already finished or failed.
            EventTooLargeError: its JSON is larger than ``max_event_bytes``.
            ProviderError, TruncatedStreamError, MalformedStreamError: as for :meth:`feed`.
        """
        self._check_open()
        try:
            sse = parsed_event(
                payload, event, max_event_bytes=self._framer.max_event_bytes, dialect=self.dialect
            )
            out = self._route(sse)
        except SSEToolCallsError as exc:
            self._failed(exc)
            raise
        except Exception as exc:
            raise self._unexpected(exc) from exc
        if out:
            self._returned = len(self._reassembler.completed)  # type: ignore[union-attr]
        return out

    def finish(self) -> list[StreamEvent]:
        """Declare the end of the stream; return the remaining events.

        Raises:
            TruncatedStreamError: the stream ended before its dialect's end marker; the
                error carries the calls that completed and the partial ones.
            ProviderError, MalformedStreamError: as for :meth:`feed`.
            UsageError: the parser already finished or failed.
        """
        self._check_open()
        try:
            out: list[StreamEvent] = []
            # A final event without its blank line is read when its dialect says it is
            # whole (DialectSpec.accepts_unterminated); the framer owns the flush.
            for event in self._framer.finish(unterminated=self._accepts_unterminated):
                out.extend(self._route(event))
            if self._reassembler is None:
                if self._held:
                    raise MalformedStreamError(
                        "the stream's dialect could not be recognised from its events",
                        data=self._held[0].data,
                    )
                raise TruncatedStreamError(
                    "the stream ended before any event", reason="eof", provider=None
                )
            out.extend(self._reassembler.finish())
        except SSEToolCallsError as exc:
            self._failed(exc)
            raise
        except Exception as exc:
            # The same net as feed(): finish() runs dialect code too (issue 9).
            raise self._unexpected(exc) from exc
        self._state = "finished"
        return out

    def _failed(self, exc: SSEToolCallsError) -> None:
        """The parser failed with ``exc``. Every stream error carries the calls that
        completed before it and that no feed returned: the calls completed in the read
        that also brought a provider's error (or a malformed event, or one too large)
        would otherwise be lost. What the reads returned plus what the error carries is
        the same list however the reads split the bytes; carrying the returned ones too
        would count them twice when the error came in a read of its own (issue 29)."""
        self._state = "failed"
        reassembler = self._reassembler
        if isinstance(exc, StreamError) and reassembler is not None:
            exc.completed = tuple(reassembler.completed[self._returned :])

    def _accepts_unterminated(self, data: str) -> bool:
        return accepts_unterminated(self.dialect, data)

    def _unexpected(self, exc: Exception) -> MalformedStreamError:
        """Only our exceptions leave the core: anything else that escaped the framer or a
        dialect (each known root cause is fixed where it arose) is a stream we could not
        read, with the cause chained."""
        self._state = "failed"
        # safe_str, imported on this path only (the parser loads no _jsonsafe): an
        # exception whose __str__ raises would have escaped from here.
        from ._jsonsafe import safe_str

        return MalformedStreamError(
            f"the stream could not be read ({type(exc).__name__}: {safe_str(exc)})",
            provider=self.dialect,
        )

    def _check_open(self) -> None:
        if self._state != "open":
            raise UsageError(f"the parser has {self._state}; it takes no more input")

    def _route(self, event: ServerSentEvent) -> list[StreamEvent]:
        reassembler = self._reassembler
        if reassembler is not None:
            return reassembler.handle([event])
        dialect = detect_dialect(event)
        if dialect is None:
            self._held.append(event)
            if len(self._held) > MAX_EVENTS_BEFORE_DETECTION:
                raise MalformedStreamError(
                    f"no event among the first {MAX_EVENTS_BEFORE_DETECTION} tells the dialect",
                    data=self._held[0].data,
                )
            return []
        reassembler = self._reassembler = reassembler_for(dialect, rich=self._rich)
        held, self._held = self._held, []
        held.append(event)
        return reassembler.handle(held)


class ToolCallParser:
    """Complete tool calls from one streamed response, and nothing half-done.

    ``feed`` returns the calls its bytes completed, in stream order; ``finish`` returns
    the rest, or raises :class:`TruncatedStreamError` when the stream was cut.
    """

    def __init__(
        self,
        dialect: Dialect | None = None,
        *,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    ) -> None:
        # The rich events are not built at all here: the deltas are most of a stream's
        # events, and skipping their objects is the fast path.
        self._stream = StreamParser(dialect, max_event_bytes=max_event_bytes, _rich=False)

    @property
    def dialect(self) -> Dialect | None:
        """The dialect being parsed (``None`` until it is recognised)."""
        return self._stream.dialect

    def __repr__(self) -> str:
        return repr(self._stream).replace("StreamParser", type(self).__name__, 1)

    def feed(self, data: bytes) -> list[ToolCall]:
        """Take the next bytes; return the calls they completed (see :meth:`StreamParser.feed`)."""
        events = self._stream.feed(data)
        # Most reads complete no call: no comprehension (and no new list) for them.
        if not events:
            return []
        return [e.call for e in events if isinstance(e, ToolCallCompleted)]

    def feed_event(self, payload: Mapping[str, Any], event: str | None = None) -> list[ToolCall]:
        """Take the next event as its parsed JSON object; return the calls it completed
        (see :meth:`StreamParser.feed_event`)."""
        events = self._stream.feed_event(payload, event)
        if not events:
            return []
        return [e.call for e in events if isinstance(e, ToolCallCompleted)]

    def finish(self) -> list[ToolCall]:
        """End of stream: the remaining calls (see :meth:`StreamParser.finish`)."""
        return [e.call for e in self._stream.finish() if isinstance(e, ToolCallCompleted)]


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
