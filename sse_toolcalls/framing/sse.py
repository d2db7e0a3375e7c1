"""An incremental Server-Sent Events framer, exact to the WHATWG spec.

Bytes go in through :meth:`SSEFramer.feed`, in any split; complete events come out.
The spec is "9.2.6 Interpreting an event stream" of the HTML Living Standard; the lines
that implement a rule quote it. No I/O, no clocks: the caller owns the socket.
"""

# No "from __future__ import annotations", as in events.py (ServerSentEvent, moved there
# from here): nothing here needs it. An annotation must name something already defined
# (or be quoted).
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from .._checks import check_count
from .._event import ServerSentEvent
from .._faces import publish
from ..errors import (
    EventTooLargeError,
    FramingError,
    LimitExceededError,
    SSEToolCallsError,
    UsageError,
)

__all__ = [
    "DEFAULT_MAX_EVENT_BYTES",
    "IMPLEMENTATION",
    "MAX_DATA_LINES_PER_EVENT",
    "MAX_RETRY_DIGITS",
    "SSEFramer",
    "ServerSentEvent",
]

DEFAULT_MAX_EVENT_BYTES = 64 * 1024 * 1024
"""Default bound on one pending event, in bytes (its lines so far plus the unfinished one).

Bytes as received, however split: an invalid UTF-8 byte counts as one byte, each line
ending (LF, CR or CRLF) as one, the blank line that ends the event not at all.

The largest real tool-call event is a whole-arguments chunk of a few MB; 64 MiB leaves room
for ten times the 10 MB arguments the benchmarks use, and still bounds what one hostile or
broken stream can make us hold."""

MAX_RETRY_DIGITS = 64
"""Bound on a ``retry`` field's value, in ASCII digits.

The spec sets no bound and the conformance vectors take 2**64 (20 digits) exactly; 64
digits keeps ``int()`` cheap and far from CPython's 4,300-digit conversion limit, whose
``ValueError`` escaped the framer (issue 9). Past it: :class:`LimitExceededError`."""

MAX_DATA_LINES_PER_EVENT = 65_536
"""Bound on the ``data`` lines of one pending event, in lines.

Each line is kept as its own string (about 50 bytes of overhead each) until the blank
line joins them, so ``max_event_bytes`` of ``data:`` lines alone could cost ten times
their size. Real events have one data line, pretty-printed JSON a few hundred; 65,536
lines cost at most about 3 MiB of overhead. Past it: :class:`LimitExceededError`."""

_BOM = b"\xef\xbb\xbf"


def _without_bom(first: bytes | bytearray) -> int:
    """The size of the stream's unfinished first line as the limit counts it: without a
    leading BOM, or without all of it when it may still become one (fed whole, the BOM
    is stripped before any size is taken; fed byte by byte it must not count either)."""
    if first.startswith(_BOM):
        return len(first) - 3
    if len(first) < 3 and _BOM.startswith(first):
        return 0
    return len(first)


_BIG = 1 << 16
"""Values from this many bytes up are decoded through a ``memoryview``, without first
copying their bytes out: one 10 MB event then costs its buffer and its ``str``, not a third
copy between them (W3's framer-only peak memory). Below it, the slice is cheaper."""


def _decode(buf: bytes | bytearray, start: int, stop: int) -> str:
    """``buf[start:stop]`` as text, invalid bytes replaced (the spec's UTF-8 decode)."""
    if stop - start < _BIG:
        return buf[start:stop].decode("utf-8", "replace")
    return str(memoryview(buf)[start:stop], "utf-8", "replace")


# Building the tuple directly skips NamedTuple's generated __new__ wrapper (a Python-level
# call per event); used only on the fast path, with the fields in declaration order.
_new_event = tuple.__new__


_COUNT_LINES_FROM = 5 * (MAX_DATA_LINES_PER_EVENT + 1)
"""A pending event's complete lines are counted for ``MAX_DATA_LINES_PER_EVENT`` only from
this many bytes up: a data line takes at least 5 (``data`` and its LF), so below it the
limit cannot be crossed and no chunk of a real event pays for the count."""


_BUSY = "busy"
"""The state of a framer inside its own ``feed`` or ``finish``."""


def _reentered() -> UsageError:
    # One message for both twins (sse_toolcalls/_sse_c.c says the same).
    return UsageError(
        "the framer was called from inside its own feed() or finish() (a finalizer or a "
        "callback run during it): a framer is not re-entrant"
    )


class SSEFramer:
    """Turns a byte stream into :class:`ServerSentEvent` values, incrementally.

    Work is linear in the input however it is split: the unfinished event grows in one
    ``bytearray``, a chunk that completes no event is appended to it, and an event's
    lines are read once, in place, by index, when its blank line arrives.
    """

    __slots__ = (
        "_bom_checked",
        "_counted",
        "_data_lines",
        "_id_buffer",
        "_last_event_id",
        "_pending",
        "_retry",
        "_scanned",
        "_skip_lf",
        "_state",
        "max_event_bytes",
    )

    def __init__(self, *, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        if getattr(self, "_state", None) is _BUSY:
            raise _reentered()
        # NaN would pass ``< 1`` and switch the limit off; a float or a bool is a slip.
        self.max_event_bytes = check_count("max_event_bytes", max_event_bytes, minimum=1)
        """Bound on one pending event, in bytes; past it :class:`EventTooLargeError`."""
        self._pending = bytearray()
        """The unfinished event's bytes, LF line endings, from its first line (the BOM
        too until the stream's first line ends); it never opens with a blank line."""
        self._scanned = 0
        """Where the pending event's unchecked lines begin: the lines before were looked
        at for the limits (a ``retry`` line's digits, the data lines' count)."""
        self._counted = 0
        """Where the pending event's uncounted lines begin (counted from
        ``_COUNT_LINES_FROM`` bytes up)."""
        self._data_lines = 0
        """The data lines counted so far in the pending event."""
        self._id_buffer = ""
        self._last_event_id = ""
        self._retry: int | None = None
        self._skip_lf = False
        self._bom_checked = False
        self._state = "open"

    @property
    def last_event_id(self) -> str:
        """The last event ID string, as of the last blank line (``""`` if none)."""
        return self._last_event_id

    @property
    def retry(self) -> int | None:
        """The reconnection time in ms from the last valid ``retry`` field, or ``None``."""
        return self._retry

    def feed(self, data: bytes) -> list[ServerSentEvent]:
        """Take the next bytes of the stream and return the events they complete.

        Raises:
            EventTooLargeError: one pending event grew past ``max_event_bytes``; the
                framer then refuses more input.
            LimitExceededError: a ``retry`` value past ``MAX_RETRY_DIGITS``, or an event
                past ``MAX_DATA_LINES_PER_EVENT``; the framer then refuses more input.

            Either error's ``events`` are the events this read completed before the
            limit was crossed (in stream order: inside one event, a line limit crossed
            before its size wins), which it does not return.
            UsageError: the framer already finished or failed.
        """
        # One method from bytes to events (issue 16, item 2): most reads (64-byte chunks,
        # or one whole event) need none of the general path's layers.
        if self._state != "open":
            raise self._refusal()
        # Busy until it returns: a finalizer the garbage collector runs inside this call
        # (or a callback) that feeds or finishes the same framer would change the buffer
        # under the reading of it; the compiled twin would read freed memory (issue 29).
        self._state = _BUSY
        try:
            if 10 not in data and 13 not in data:
                # No line ends here (most 64-byte reads, every read inside a huge line):
                # the fewest steps, first. Ints as needles: CPython 3.11's
                # bytes.__contains__ first tries a bytes needle as an integer, raising and
                # clearing a TypeError on every call (0.42 us against 0.05 us a 64-byte
                # read; timeit, issue 16). W1 at 64 B: 5,844 -> 4,943 instructions a read
                # with the int needles below (callgrind).
                if data:
                    # Not an empty read: between a CR and its LF it keeps them one line
                    # ending (the conformance vectors feed empty chunks).
                    self._skip_lf = False
                    pending = self._pending
                    pending += data
                    if len(pending) > self.max_event_bytes:
                        size = len(pending) if self._bom_checked else _without_bom(pending)
                        if size > self.max_event_bytes:
                            self._fail(size)
                return []
            if not data:
                # Before the CRLF check: an empty read between a CR and its LF keeps them one
                # line ending (the conformance vectors feed empty chunks).
                return []
            if self._skip_lf:
                # A CR ended the previous chunk; an LF opening this one belongs to that CRLF.
                self._skip_lf = False
                if data[0] == 0x0A:
                    data = data[1:]
                    if not data:
                        return []
            if 13 in data:
                # "Lines must be separated by either a U+000D CARRIAGE RETURN U+000A LINE
                # FEED (CRLF) character pair, a single U+000A LINE FEED (LF) character, or a
                # single U+000D CARRIAGE RETURN (CR) character." Normalise to LF; a CR at
                # the very end may be the first half of a CRLF split across chunks.
                self._skip_lf = data[-1] == 0x0D
                data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            pending = self._pending
            # A read of whole events ends with LF: one index instead of an rfind, whose
            # argument parsing alone is about 500 instructions (callgrind, issue 16).
            lf = len(data) - 1 if data[-1] == 0x0A else data.rfind(10)
            if lf < 0:
                # No line ends here after all (the read opened with the LF of a CRLF and
                # holds no other LF, nor a CR): held, as the line-less path above does.
                pending += data
                if len(pending) > self.max_event_bytes:
                    size = len(pending) if self._bom_checked else _without_bom(pending)
                    if size > self.max_event_bytes:
                        self._fail(size)
                return []
            if not self._bom_checked:
                data, lf = self._strip_bom(data, lf)
            # Where the last complete event ends: after the last blank line (LF LF), which
            # may straddle the chunks; an LF opening an event is a blank line that does
            # nothing (the one before it set what it would set).
            if lf and data[lf - 1] == 0x0A:
                end = lf + 1
            else:
                cut = data.rfind(b"\n\n", 0, lf) if lf > 1 else -1
                if cut >= 0:
                    end = cut + 2
                elif data[0] == 0x0A and (not pending or pending[-1] == 0x0A):
                    end = 1
                else:
                    end = 0
            held = len(pending)
            # The pending event's bytes up to the last line ending here.
            complete = held + lf + 1
            if not end:
                # No event completes: the chunk's lines wait with their event, only checked
                # for the limits a line crosses when it ends (the C twin raises there too).
                pending += data
                if len(pending) > self.max_event_bytes:
                    self._too_large(complete)
                self._check_lines(complete)
                return []
            buf: bytes | bytearray
            if held:
                # Read in place from the one buffer; what follows the last blank line
                # stays in it, so nothing is copied to bytes.
                pending += data
                buf = pending
            else:
                buf = data
            stop = held + end
            if complete > self.max_event_bytes:
                self._check_sizes(buf, complete)
            events = self._events(buf, stop)
            if buf is pending:
                del pending[:stop]
                # Nothing pending had nothing checked: only a carried event resets.
                self._scanned = self._counted = self._data_lines = 0
            elif end < len(data):
                pending += data[end:]
            try:
                if complete > stop:
                    # The next event's first lines came with this chunk.
                    self._check_lines(complete - stop)
                if pending and len(pending) > self.max_event_bytes:
                    self._fail(len(pending))
            except (EventTooLargeError, LimitExceededError) as exc:
                # The events before the next one are whole: they go with the error.
                exc.events = events
                raise
            return events
        except SSEToolCallsError:
            raise
        except Exception as exc:
            # Only our exceptions leave the core, whatever the bytes (STYLE 6); the limits
            # above are the real defences, this is the net under them.
            self._state = "failed"
            self._pending = bytearray()
            if not isinstance(data, bytes | bytearray | memoryview):
                raise UsageError(f"feed() takes bytes, not {type(data).__name__}") from exc
            raise FramingError(
                f"the framer failed on its input ({type(exc).__name__}: {exc})"
            ) from exc
        finally:
            if self._state is _BUSY:
                self._state = "open"

    def _strip_bom(self, data: bytes, lf: int) -> tuple[bytes, int]:
        """The stream's first line has ended: take it whole from the buffer, without one
        leading BOM; returns the chunk to go on with and its last LF's index."""
        self._bom_checked = True
        pending = self._pending
        held = len(pending)
        if held:
            data = bytes(pending) + data
            lf += held
            pending.clear()
        # The UTF-8 decode algorithm strips exactly one leading BOM, even when the network
        # split it: the first line is whole by now.
        if data.startswith(_BOM):
            return data[3:], lf - 3
        return data, lf

    def _events(self, buf: bytes | bytearray, stop: int) -> list[ServerSentEvent]:
        """The events of ``buf[:stop]``: whole events, from an event's start to the LF of
        a blank line.

        Fast path: an event that is one ``data:`` line (Chat Completions, Gemini) or one
        ``event:`` line and one ``data:`` line (Anthropic, Responses) is read by index on
        the bytes, its line ends found by ``find`` (``memchr``), only its values decoded.
        Any other event (comments, ``id``, ``retry``, several data lines) is decoded and
        read line by line by :meth:`_event`, then the fast path goes on.
        """
        events: list[ServerSentEvent] = []
        # A try costs nothing until it catches (CPython 3.11).
        try:
            last_id = self._last_event_id
            start = 0
            while start < stop:
                eol = buf.find(10, start)  # buf[stop - 1] is an LF: no bound needed
                if eol == start:
                    # A blank line between events: it sets nothing the last one did not.
                    start += 1
                    continue
                # A line that is not blank ends before stop - 1: its next byte is in range.
                if buf[eol + 1] == 0x0A:
                    # "If the line is empty (a blank line): Dispatch the event": a one-line
                    # event; as a data line, its event is the line's value.
                    if buf.startswith(b"data: ", start):
                        # Inline, not _decode(): a Python call per event is a fixed cost of the
                        # one-event-per-read regime; only a huge value takes the memoryview.
                        value = (
                            buf[start + 6 : eol].decode("utf-8", "replace")
                            if eol - start < _BIG
                            else _decode(buf, start + 6, eol)
                        )
                        events.append(
                            _new_event(ServerSentEvent, ("message", value, last_id, None))
                        )
                        start = eol + 2
                        continue
                elif buf.startswith(b"event: ", start):
                    eol2 = buf.find(10, eol + 1)
                    if buf[eol2 + 1] == 0x0A and buf.startswith(b"data: ", eol + 1):
                        value = (
                            buf[eol + 7 : eol2].decode("utf-8", "replace")
                            if eol2 - eol < _BIG
                            else _decode(buf, eol + 7, eol2)
                        )
                        kind = buf[start + 7 : eol].decode("utf-8", "replace") or "message"
                        events.append(_new_event(ServerSentEvent, (kind, value, last_id, None)))
                        start = eol2 + 2
                        continue
                blank = buf.find(b"\n\n", eol)
                event = self._event(_decode(buf, start, blank).split("\n"))
                if event is not None:
                    events.append(event)
                last_id = self._last_event_id
                start = blank + 2
        except LimitExceededError as exc:
            # An event crossed a line limit: the events before it are whole (stream
            # order) and go with the error.
            exc.events = events
            raise
        return events

    def _event(self, lines: list[str]) -> ServerSentEvent | None:
        """Interpret one event's lines (none blank, without their endings), then its blank
        line: the event it dispatches, or ``None`` when it had no data."""
        data: list[str] = []
        kind = ""
        retry: int | None = None
        for line in lines:
            if line.startswith("data: "):
                # The common case, taken before the general field split (same result).
                data.append(line[6:])
                continue
            if line[0] == ":":
                # "If the line starts with a U+003A COLON character (:): Ignore the line."
                continue
            name, colon, value = line.partition(":")
            # "If the line contains a U+003A COLON character: ... If value starts with a
            # U+0020 SPACE character, remove it from value." Otherwise the whole line is
            # the field name and the value is empty.
            if colon and value.startswith(" "):
                value = value[1:]
            if name == "data":
                data.append(value)
            elif name == "event":
                kind = value
            elif name == "id":
                # "If the field value does not contain U+0000 NULL, then set the last event
                # ID buffer to the field value. Otherwise, ignore the field."
                if "\x00" not in value:
                    self._id_buffer = value
            elif name == "retry":
                # "If the field value consists of only ASCII digits, then interpret the
                # field value as an integer in base ten" (no sign, no space, not empty).
                if value and value.isascii() and value.isdigit():
                    if len(value) > MAX_RETRY_DIGITS:
                        if len(data) > MAX_DATA_LINES_PER_EVENT:
                            # The data lines crossed their limit first, in stream order.
                            self._too_many_lines(len(data))
                        self._limit("MAX_RETRY_DIGITS", MAX_RETRY_DIGITS, len(value), "digits")
                    self._retry = retry = int(value)
            # "Otherwise: The field is ignored."
        # "If the line is empty (a blank line): Dispatch the event."
        self._last_event_id = self._id_buffer
        if not data:
            return None
        if len(data) > MAX_DATA_LINES_PER_EVENT:
            self._too_many_lines(len(data))
        return ServerSentEvent(kind or "message", "\n".join(data), self._last_event_id, retry)

    def finish(self, *, unterminated: Callable[[str], bool] | None = None) -> list[ServerSentEvent]:
        """Declare the end of the stream; refuse further input.

        "Once the end of the file is reached, any pending data must be discarded. (If the
        file ends in the middle of an event, before the final empty line, the incomplete
        event is not dispatched.)" So by default this returns no events.

        ``unterminated`` is for a caller that knows its format: servers that omit the
        final blank line (openai-node#2725) leave their last event undispatched. Given
        that event's data, it says whether the event is whole (a cut line can never pass
        for whole JSON); the events it accepts are returned, up to the first it refuses.

        Raises:
            UsageError: the framer already finished or failed.
        """
        if self._state != "open":
            raise self._refusal()
        out: list[ServerSentEvent] = []
        if unterminated is not None:
            # The blank line the server left out; its events are kept only when whole.
            events = self.feed(b"\n\n")
            # The caller's function may feed or finish this framer: refused (busy).
            self._state = _BUSY
            try:
                for event in events:
                    if not unterminated(event.data):
                        break
                    out.append(event)
            except BaseException:
                self._state = "open"
                raise
        self._state = "finished"
        self._pending = bytearray()
        return out

    # ----------------------------------------------------------------------------------
    # The limits a pending event's lines cross before it completes. The compiled twin
    # reads every line as it ends, so it raises each limit at the feed whose line crosses
    # it; this twin keeps the lines unread till the blank line, and looks here only at
    # what the limits need, at the same feeds, in the same order: the blocks' sizes up to
    # the chunk's last line ending, the lines' limits in stream order, then the
    # unfinished line's size.

    def _check_lines(self, complete: int) -> None:
        """Check the pending event's lines that ended in this chunk, up to ``complete``:
        a ``retry`` value takes effect (``retry`` is readable before the event is
        dispatched, as the spec says) or crosses ``MAX_RETRY_DIGITS``; the data lines
        are counted against ``MAX_DATA_LINES_PER_EVENT`` when the event is big enough
        to hold too many."""
        pending = self._pending
        scanned = self._scanned
        self._scanned = complete
        # One search over the new lines; only a hit reads them.
        if pending.find(b"retry", scanned, complete) >= 0:
            for line in pending[scanned:complete].split(b"\n"):
                if line[:5] == b"retry":
                    name, colon, value = line.partition(b":")
                    if name != b"retry":
                        continue
                    if colon and value[:1] == b" ":
                        value = value[1:]
                    # bytes.isdigit is ASCII digits only, as the spec's test is.
                    if value and value.isdigit():
                        if len(value) > MAX_RETRY_DIGITS:
                            # The event's lines up to this one, in stream order.
                            self._line_limits(pending, 0, complete)
                            self._limit("MAX_RETRY_DIGITS", MAX_RETRY_DIGITS, len(value), "digits")
                        self._retry = int(value)
        if complete >= _COUNT_LINES_FROM:
            lines = self._data_lines
            for line in pending[self._counted : complete].split(b"\n"):
                if line[:5] == b"data:" or line == b"data":
                    lines += 1
            self._counted = complete
            self._data_lines = lines
            if lines > MAX_DATA_LINES_PER_EVENT:
                self._too_many_lines(lines)

    def _too_large(self, complete: int) -> None:
        """The pending event, unfinished line included, is past ``max_event_bytes``:
        raise for its complete lines if they are, else after their lines' limits."""
        if complete > self.max_event_bytes:
            # Its lines that ended before the crossing come first in the stream.
            self._line_limits(self._pending, 0, self.max_event_bytes)
            self._fail(complete)
        self._check_lines(complete)
        self._fail(len(self._pending))

    def _line_limits(self, buf: bytes | bytearray, start: int, budget: int) -> None:
        """Raise the first line limit crossed by the lines of the event at ``start`` whose
        line endings are among its first ``budget`` bytes, in stream order: a ``retry``
        value's digits, or the data line past ``MAX_DATA_LINES_PER_EVENT``. Only on the
        way to an error: fed byte by byte, these lines would have raised before it."""
        if buf[start : start + 1] == b"\n":
            start += 1  # one more blank line (LF LF LF): not the event's own
        window = buf[start : start + budget]
        lines = 0
        for line in window[: window.rfind(b"\n") + 1].split(b"\n"):
            if line[:5] == b"data:" or line == b"data":
                lines += 1
            elif line[:5] == b"retry":
                name, colon, value = line.partition(b":")
                if colon and value[:1] == b" ":
                    value = value[1:]
                if name == b"retry" and value.isdigit() and len(value) > MAX_RETRY_DIGITS:
                    if lines > MAX_DATA_LINES_PER_EVENT:
                        self._too_many_lines(lines)
                    self._limit("MAX_RETRY_DIGITS", MAX_RETRY_DIGITS, len(value), "digits")
        # Counted to the end, as the compiled twin counts a read's lines before it checks.
        if lines > MAX_DATA_LINES_PER_EVENT:
            self._too_many_lines(lines)

    def _check_sizes(self, buf: bytes | bytearray, complete: int) -> None:
        """Raise if an event in ``buf[:complete]`` (whole events, then the next one's
        complete lines) is too big: for the first such event, after the events before it
        (which may cross a line limit first, and otherwise go with the error).

        An event counts its lines with their line endings, not the blank line that ends
        it (its last line ends at the first LF of its LF LF).
        """
        parts: list[bytes] | list[bytearray] = buf[:complete].split(b"\n\n")
        last = len(parts) - 1
        start = 0
        for i in range(len(parts)):
            part = parts[i]
            # A part that opens with an LF opens with one more blank line (LF LF LF): not
            # its own; the rest after the last LF LF already holds its line endings.
            size = len(part) + 1 - part.startswith(b"\n") - (i == last)
            if size > self.max_event_bytes:
                # buf[:start] is whole events, up to the LF of a blank line; then the
                # lines of this one that ended before it crossed the limit.
                events = self._events(buf, start) if start else []
                try:
                    self._line_limits(buf, start, self.max_event_bytes)
                except LimitExceededError as exc:
                    exc.events = events
                    raise
                self._fail(size, events)
            start += len(part) + 2

    def _refusal(self) -> UsageError:
        if self._state is _BUSY:
            return _reentered()
        return UsageError(f"the framer has {self._state}; it takes no more input")

    def __copy__(self) -> "SSEFramer":
        # A framer in the same state (the prefix tests fork parsers so); never one
        # copied in the middle of a feed, whose state is half-made.
        if self._state is _BUSY:
            raise _reentered()
        copy = object.__new__(type(self))
        for name in _PySSEFramer.__slots__:
            setattr(copy, name, getattr(self, name))
        copy._pending = bytearray(self._pending)
        return copy

    def __deepcopy__(self, memo: dict[int, Any]) -> "SSEFramer":
        # Every other attribute is immutable (str, int, bool, None).
        return self.__copy__()

    def _fail(self, size: int, events: list[ServerSentEvent] | None = None) -> None:
        self._state = "failed"
        self._pending = bytearray()
        raise EventTooLargeError(
            f"a pending event reached {size} bytes, over max_event_bytes={self.max_event_bytes}",
            limit=self.max_event_bytes,
            size=size,
            events=events or (),
        )

    def _too_many_lines(self, lines: int) -> None:
        self._limit("MAX_DATA_LINES_PER_EVENT", MAX_DATA_LINES_PER_EVENT, lines, "lines")

    def _limit(self, name: str, limit: int, size: int, unit: str) -> None:
        self._state = "failed"
        self._pending = bytearray()
        raise LimitExceededError(
            f"the stream crossed {name}: {size} {unit}, over {limit}",
            limit_name=name,
            limit=limit,
            size=size,
        )


# ----------------------------------------------------------------------------------------
# The compiled twin (sse_toolcalls/_sse_c.c): the same class, the same events and errors,
# held equal to the class above by tests/core/test_sse_twins.py. It is optional at install
# (setup.py); SSE_TOOLCALLS_PURE_PYTHON=1 forces the pure twin, as AIOHTTP_NO_EXTENSIONS
# and YARL_NO_EXTENSIONS do for theirs.

_PySSEFramer = SSEFramer
"""The pure-Python twin, always available (the tests run both)."""

_CSSEFramer: type[SSEFramer] | None = None
"""The compiled twin, or ``None`` when it was not built or could not be loaded."""

IMPLEMENTATION: Literal["c", "python"] = "python"
"""Which twin ``SSEFramer`` is: ``"c"`` (compiled) or ``"python"``."""

PURE_PYTHON = os.environ.get("SSE_TOOLCALLS_PURE_PYTHON", "") not in ("", "0")
"""Whether ``SSE_TOOLCALLS_PURE_PYTHON=1`` forces every pure twin: the one switch, read
once here (the framer, the JSON scan and the parsed-event walk all follow it)."""


def _load_compiled() -> type[SSEFramer] | None:
    try:
        # The names, not "from .. import _sse_c": that form reads as an import of the
        # package's face, which the framer sits below.
        from .._sse_c import SSEFramer as compiled_framer
        from .._sse_c import _setup
    except ImportError:
        # Not built (no compiler at install): the pure twin, as the install said.
        return None
    _setup(
        event=ServerSentEvent,
        base=SSEToolCallsError,
        usage=UsageError,
        framing=FramingError,
        too_large=EventTooLargeError,
        limit=LimitExceededError,
        max_event_bytes=DEFAULT_MAX_EVENT_BYTES,
        max_retry_digits=MAX_RETRY_DIGITS,
        max_data_lines=MAX_DATA_LINES_PER_EVENT,
    )
    return compiled_framer


_CSSEFramer = _load_compiled()
if not TYPE_CHECKING and _CSSEFramer is not None:
    if not PURE_PYTHON:
        SSEFramer = _CSSEFramer
        IMPLEMENTATION = "c"

# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
