"""An incremental Server-Sent Events framer, exact to the WHATWG spec.

Bytes go in through :meth:`SSEFramer.feed`, in any split; complete events come out.
The spec is "9.2.6 Interpreting an event stream" of the HTML Living Standard; the lines
that implement a rule quote it. No I/O, no clocks: the caller owns the socket.
"""

# No "from __future__ import annotations": typing.NamedTuple turns string annotations into
# ForwardRefs, each compile()d, and the process's first compile() builds every class of
# the ast module: 10 M of the framer's 59 M instructions to import (callgrind, issue 16).
# An annotation here must name something already defined (or be quoted).
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, NamedTuple

from . import _adopt
from .errors import (
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


class ServerSentEvent(NamedTuple):
    """One dispatched event.

    A NamedTuple rather than a frozen dataclass: it is built once per event on the hot
    path, and construction measured 0.65 us against 2.9 us for a frozen slotted dataclass
    on the project machine (timeit, 1e6 constructions).
    """

    event: str
    """The event type: ``"message"`` when the block had no ``event`` field or an empty one."""

    data: str
    """The ``data`` values joined with LF."""

    id: str
    """The last event ID in effect when the event was dispatched (``""`` if none)."""

    retry: int | None
    """The last valid ``retry`` value inside this event's own block, else ``None``."""


class SSEFramer:
    """Turns a byte stream into :class:`ServerSentEvent` values, incrementally.

    Work is linear in the input however it is split: an unfinished line grows in one
    ``bytearray`` and is read in place, by index, when its line ending arrives.
    """

    __slots__ = (
        "_block_bytes",
        "_block_retry",
        "_bom_checked",
        "_data",
        "_event_type",
        "_id_buffer",
        "_last_event_id",
        "_pending",
        "_retry",
        "_skip_lf",
        "_state",
        "max_event_bytes",
    )

    def __init__(self, *, max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES) -> None:
        if max_event_bytes < 1:
            raise UsageError("max_event_bytes must be at least 1")
        self.max_event_bytes = max_event_bytes
        """Bound on one pending event, in bytes; past it :class:`EventTooLargeError`."""
        self._pending = bytearray()
        """The unfinished line's bytes."""
        self._block_bytes = 0
        self._data: list[str] = []
        self._event_type = ""
        self._id_buffer = ""
        self._last_event_id = ""
        self._block_retry: int | None = None
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
            UsageError: the framer already finished or failed.
        """
        # One method from bytes to events (issue 16, item 2): the old feed -> _feed ->
        # _text -> _part chain cost a Python call per layer on every read, and most reads
        # (64-byte chunks, or one whole event) need none of the layers' generality.
        if self._state != "open":
            raise UsageError(f"the framer has {self._state}; it takes no more input")
        try:
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
            # 13 (CR) as an int: CPython 3.11's bytes.__contains__ first tries a bytes
            # needle as an integer, raising and clearing a TypeError on every call; 0.42 us
            # against 0.05 us per 64-byte chunk (timeit, 1e6 calls; issue 16).
            if 13 in data:
                # "Lines must be separated by either a U+000D CARRIAGE RETURN U+000A LINE
                # FEED (CRLF) character pair, a single U+000A LINE FEED (LF) character, or a
                # single U+000D CARRIAGE RETURN (CR) character." Normalise to LF; a CR at
                # the very end may be the first half of a CRLF split across chunks.
                self._skip_lf = data[-1] == 0x0D
                data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            pending = self._pending
            # A read of whole events ends with LF: one index instead of an rfind, whose
            # argument parsing alone is about 1 k instructions (callgrind, issue 16).
            end = len(data) if data[-1] == 0x0A else data.rfind(b"\n") + 1
            if not end:
                # No line ends here (most 64-byte chunks): keep the bytes and wait.
                pending += data
                if len(pending) + self._block_bytes > self.max_event_bytes:
                    self._fail(len(pending) + self._block_bytes)
                return []
            buf: bytes | bytearray
            if pending:
                # The unfinished line grew in one bytearray (amortised appends, no
                # per-chunk objects); the lines are read from it in place, by index, and
                # what follows the last LF stays in it, so nothing is copied to bytes.
                end += len(pending)
                pending += data
                buf = pending
            else:
                buf = data
            start = 0
            if not self._bom_checked:
                self._bom_checked = True
                # The UTF-8 decode algorithm strips exactly one leading BOM, even when the
                # network split it: the first line is whole by now.
                if buf.startswith(_BOM):
                    start = 3
            if end - start + self._block_bytes > self.max_event_bytes:
                self._check_sizes(buf[start:end])
            events = self._lines_in(buf, start, end)
            if buf is pending:
                del pending[:end]
            elif end < len(data):
                pending += data[end:]
            if pending and len(pending) + self._block_bytes > self.max_event_bytes:
                self._fail(len(pending) + self._block_bytes)
            return events
        except SSEToolCallsError:
            raise
        except Exception as exc:
            # Only our exceptions leave the core, whatever the bytes (STYLE 6); the limits
            # above are the real defences, this is the net under them.
            self._state = "failed"
            self._pending = bytearray()
            self._data = []
            if not isinstance(data, bytes | bytearray | memoryview):
                raise UsageError(f"feed() takes bytes, not {type(data).__name__}") from exc
            raise FramingError(
                f"the framer failed on its input ({type(exc).__name__}: {exc})"
            ) from exc

    def _lines_in(self, buf: bytes | bytearray, start: int, end: int) -> list[ServerSentEvent]:
        """Interpret ``buf[start:end]``: complete lines, each ended by LF, from a line start.

        Fast path: from a fresh block, every block that is one ``data:`` line (Chat
        Completions, Gemini) or one ``event:`` line and one ``data:`` line (Anthropic,
        Responses) is read by index on the bytes, each line's end found by ``find``
        (``memchr``), and only its values decoded. Exact by construction, block by block:
        the old batch checks (``str.count`` of LFs over the decoded chunk, a plain loop
        over UCS-2 text) were 2.7 k of the 24.7 k instructions per one-event read.
        Anything else (a block begun in an earlier chunk, comments, ``id``, ``retry``,
        several data lines, an unfinished block) goes line by line through
        :meth:`_lines`, which also keeps the block's byte count.
        """
        events: list[ServerSentEvent] = []
        if self._block_bytes:
            # A block began in an earlier chunk: finish it line by line, then go fast.
            if buf[start] == 0x0A:
                events = self._lines([""])
                start += 1
            else:
                first = buf.find(b"\n\n", start, end)
                if first < 0:
                    # Every line here goes on with that block: its count grows by them.
                    before = self._block_bytes
                    self._lines(_decode(buf, start, end - 1).split("\n"))
                    self._block_bytes = before + end - start
                    return events
                lines = _decode(buf, start, first).split("\n")
                lines.append("")
                events = self._lines(lines)
                start = first + 2
        last_id = self._last_event_id
        while start < end:
            eol = buf.find(b"\n", start)  # buf[end - 1] is an LF: no bound needed
            if eol + 1 == end:
                break  # the last line here opens a block that later chunks finish
            if buf[eol + 1] == 0x0A:
                # "If the line is empty (a blank line): Dispatch the event": a one-line
                # block; as a data line, its event is the line's value.
                if not buf.startswith(b"data: ", start):
                    break
                # Inline, not _decode(): a Python call per event is a fixed cost of the
                # one-event-per-read regime; only a huge value takes the memoryview.
                value = (
                    buf[start + 6 : eol].decode("utf-8", "replace")
                    if eol - start < _BIG
                    else _decode(buf, start + 6, eol)
                )
                events.append(_new_event(ServerSentEvent, ("message", value, last_id, None)))
                start = eol + 2
                continue
            if not buf.startswith(b"event: ", start):
                break
            eol2 = buf.find(b"\n", eol + 1)
            if eol2 + 1 == end or buf[eol2 + 1] != 0x0A or not buf.startswith(b"data: ", eol + 1):
                break
            value = (
                buf[eol + 7 : eol2].decode("utf-8", "replace")
                if eol2 - eol < _BIG
                else _decode(buf, eol + 7, eol2)
            )
            kind = buf[start + 7 : eol].decode("utf-8", "replace") or "message"
            events.append(_new_event(ServerSentEvent, (kind, value, last_id, None)))
            start = eol2 + 2
        if start < end:
            events += self._lines(_decode(buf, start, end - 1).split("\n"))
            # The pending block after these lines, counted on the bytes (the one place
            # that counts: counting decoded lines made an invalid byte 1 byte whole but 3,
            # its U+FFFD re-encoded, when cut; issue 9): what follows the last blank line.
            last = buf.rfind(b"\n\n", start, end)
            # A range opening with LF opens with the blank line that ended the last block.
            if last >= 0:
                self._block_bytes = end - last - 2
            else:
                self._block_bytes = end - start - (buf[start] == 0x0A)
        return events

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
            raise UsageError(f"the framer has {self._state}; it takes no more input")
        out: list[ServerSentEvent] = []
        if unterminated is not None:
            # The blank line the server left out; its events are kept only when whole.
            for event in self.feed(b"\n\n"):
                if not unterminated(event.data):
                    break
                out.append(event)
        self._state = "finished"
        self._pending = bytearray()
        self._data = []
        return out

    # ----------------------------------------------------------------------------------

    def _check_sizes(self, head: bytes | bytearray) -> None:
        """Raise if a block in ``head`` (the first one with what was pending) is too big.

        A block counts its lines with their line endings, not the blank line that ends it
        (the last line of a complete block ends at the first LF of its LF LF).
        """
        parts = head.split(b"\n\n")
        # A part that opens with an LF opens with one more blank line (LF LF LF): not its own.
        sizes = [len(part) + 1 - part.startswith(b"\n") for part in parts]
        sizes[-1] -= 1  # the rest after the last LF LF already holds its line endings
        if head[0] != 0x0A:
            # The first block goes on with the pending one, unless head opens with the
            # blank line that ended it (that block was counted when it arrived, issue 9).
            sizes[0] += self._block_bytes
        if max(sizes) > self.max_event_bytes:
            self._fail(max(sizes))

    def _fail(self, size: int) -> None:
        self._state = "failed"
        self._pending = bytearray()
        self._data = []
        raise EventTooLargeError(
            f"a pending event reached {size} bytes, over max_event_bytes={self.max_event_bytes}",
            limit=self.max_event_bytes,
            size=size,
        )

    def _lines(self, lines: list[str]) -> list[ServerSentEvent]:
        """Interpret complete lines (without their endings); return dispatched events."""
        events: list[ServerSentEvent] = []
        data = self._data
        for line in lines:
            if not line:
                # "If the line is empty (a blank line): Dispatch the event."
                self._last_event_id = self._id_buffer
                if data:
                    if len(data) > MAX_DATA_LINES_PER_EVENT:
                        # Checked here too, so a whole chunk fails as a split one does.
                        self._too_many_lines(len(data))
                    events.append(
                        ServerSentEvent(
                            self._event_type or "message",
                            "\n".join(data),
                            self._last_event_id,
                            self._block_retry,
                        )
                    )
                    data = self._data = []
                self._event_type = ""
                self._block_retry = None
                self._block_bytes = 0
                continue
            # Only marks the block open for _lines_in; feed sets the count, in bytes received.
            self._block_bytes += len(line) + 1
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
                self._event_type = value
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
                        self._limit("MAX_RETRY_DIGITS", MAX_RETRY_DIGITS, len(value), "digits")
                    self._retry = self._block_retry = int(value)
            # "Otherwise: The field is ignored."
        if len(data) > MAX_DATA_LINES_PER_EVENT:
            self._too_many_lines(len(data))
        return events

    def _too_many_lines(self, lines: int) -> None:
        self._limit("MAX_DATA_LINES_PER_EVENT", MAX_DATA_LINES_PER_EVENT, lines, "lines")

    def _limit(self, name: str, limit: int, size: int, unit: str) -> None:
        self._state = "failed"
        self._pending = bytearray()
        self._data = []
        raise LimitExceededError(
            f"the stream crossed {name}: {size} {unit}, over {limit}",
            limit_name=name,
            limit=limit,
            size=size,
        )


# ----------------------------------------------------------------------------------------
# The compiled twin (sse_toolcalls/_sse_c.c): the same class, the same events and errors,
# held equal to the class above by tests/test_sse_twins.py. It is optional at install
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
        from . import _sse_c
    except ImportError:
        # Not built (no compiler at install): the pure twin, as the install said.
        return None
    _sse_c._setup(
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
    return _sse_c.SSEFramer


_CSSEFramer = _load_compiled()
if not TYPE_CHECKING and _CSSEFramer is not None:
    if not PURE_PYTHON:
        SSEFramer = _CSSEFramer
        IMPLEMENTATION = "c"

# Last, once the classes exist: they take the path users import them from (see the root).
_adopt(__name__)
