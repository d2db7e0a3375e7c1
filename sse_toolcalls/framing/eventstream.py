"""An incremental framer for AWS's binary event stream (``application/vnd.amazon.eventstream``).

Amazon Bedrock's ``ConverseStream`` and ``InvokeModelWithResponseStream`` answer with it
instead of SSE. Bytes go in through :meth:`EventStreamFramer.feed`, in any split; whole
messages come out, each only once its two CRCs check. No I/O, no clocks: the caller owns
the socket. The format, as AWS documents it ("Event stream encoding", Amazon Lex V2 and
Transcribe developer guides):

    "Each message consists of two sections: the prelude and the data. [...] Each section
    ends with a 4-byte big-endian integer CRC checksum. [...] Total message overhead,
    including the prelude and both checksums, is 16 bytes."

    total length (4) | headers length (4) | prelude CRC (4) | headers | payload | message CRC (4)

A header is a 1-byte name length, the UTF-8 name, a 1-byte value type and the value. The
framer knows the wire only: what an ``:event-type`` means, and whether an ``exception``
message is retryable, is the dialect's to say (STYLE 7). So a message whose
``:message-type`` is ``exception`` or ``error`` is returned as a message like any other,
its :attr:`EventStreamMessage.message_type` telling it apart, its ``exception_type``,
``error_code`` and ``error_message`` read from its headers: the bytes were well framed,
and raising here would both lose the messages after it and decide for the dialect.

The reference behaviour is botocore's ``EventStreamBuffer`` (tests/core/test_eventstream*.py
hold this framer equal to it on random, hostile and recorded streams). Where botocore lets
a malformed stream through, this framer refuses it with a typed error: a string, byte
array or uuid header value that runs past the headers section (botocore reads it short),
and a stream that ends inside a message (botocore keeps the bytes and says nothing).
Where botocore raises a foreign exception (``KeyError`` for an unknown header type,
``struct.error``, ``UnicodeDecodeError``), this framer raises its own.
"""

import struct
import zlib
from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, NoReturn, TypeAlias

from .._checks import check_count
from .._event import ServerSentEvent
from ..errors import FramingError, LimitExceededError, SSEToolCallsError, UsageError

if TYPE_CHECKING:
    from datetime import datetime
    from uuid import UUID

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "MAX_HEADERS_BYTES",
    "MAX_HEADERS_PER_MESSAGE",
    "MESSAGE_OVERHEAD_BYTES",
    "ChecksumMismatchError",
    "EventStreamError",
    "EventStreamEventFramer",
    "EventStreamFramer",
    "EventStreamLimitError",
    "EventStreamMessage",
    "EventStreamProblem",
    "EventStreamTimestamp",
    "HeaderValue",
    "IncompleteMessageError",
    "MessageTooLargeError",
]

MAX_HEADERS_BYTES: Final = 128 * 1024
"""Bound on one message's headers section, in bytes (its prelude's headers length).

The bound AWS's own parsers keep (botocore's ``_MAX_HEADERS_LENGTH``, aws-c-event-stream's
``AWS_EVENT_STREAM_MAX_HEADERS_SIZE``): a stream that passes theirs passes ours. Bedrock
sends three short string headers (about 70 bytes). Past it: :class:`EventStreamLimitError`,
raised from the prelude alone, before the headers are buffered."""

MAX_HEADERS_PER_MESSAGE: Final = 1024
"""Bound on the headers of one message, in headers.

The wire allows 65,536 in :data:`MAX_HEADERS_BYTES` (a header takes at least two bytes),
each a dict entry and a few Python objects (about 200 bytes): 13 MiB of objects from a
128 KiB section. Bedrock sends three to five; 1,024 is two hundred times that and
costs at most about 200 KiB. Past it: :class:`EventStreamLimitError`."""

MESSAGE_OVERHEAD_BYTES: Final = 16
"""A message's bytes besides its headers and payload: the 12-byte prelude (two lengths
and their CRC) and the 4-byte message CRC. No message is shorter."""

_MAX_PAYLOAD_BYTES_BOTOCORE = 24 * 1024 * 1024

DEFAULT_MAX_MESSAGE_BYTES: Final = (
    MESSAGE_OVERHEAD_BYTES + MAX_HEADERS_BYTES + _MAX_PAYLOAD_BYTES_BOTOCORE
)
"""Default bound on one message, in bytes, prelude and CRCs included (24 MiB + 128 KiB + 16).

The largest message botocore reads (24 MiB of payload, 128 KiB of headers): everything
a boto3 user can read, this framer reads too. aws-c-event-stream stops at 16 MiB; a
Bedrock message is one delta, a few hundred bytes (the largest in the recordings is
under 2 KB), and a whole tool input in one delta (Nova) stays far below either. A
message is buffered whole before it is released, so this is also the framer's memory
bound. Past it: :class:`MessageTooLargeError`, from the prelude alone."""

# Header value types, as the wire numbers them (AWS "Event stream encoding": "Header value
# type: 1 byte").
_TRUE, _FALSE, _BYTE, _SHORT, _INTEGER, _LONG, _BYTES, _STRING, _TIMESTAMP, _UUID = range(10)
_TYPE_NAMES: Final = (
    "bool true",
    "bool false",
    "byte",
    "short",
    "integer",
    "long",
    "byte array",
    "string",
    "timestamp",
    "uuid",
)
_FIXED: Final = {
    _BYTE: struct.Struct(">b"),
    _SHORT: struct.Struct(">h"),
    _INTEGER: struct.Struct(">i"),
    _LONG: struct.Struct(">q"),
    _TIMESTAMP: struct.Struct(">q"),
}
_PRELUDE = struct.Struct(">III")
_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")


class EventStreamTimestamp(int):
    """A ``timestamp`` header's value: milliseconds since the Unix epoch, as the wire has it.

    An ``int`` (equal to the milliseconds; lossless over the wire's whole 64-bit range,
    which ``datetime`` is not) of its own type, so that it is told apart from a ``long``
    header of the same number."""

    __slots__ = ()

    @property
    def datetime(self) -> "datetime | None":
        """The instant as an aware UTC ``datetime``, or ``None`` when it is outside
        ``datetime``'s years 1 to 9999 (the wire allows about 292 million years)."""
        from datetime import UTC, datetime, timedelta

        try:
            return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=int(self))
        except OverflowError:
            return None

    def __repr__(self) -> str:
        return f"EventStreamTimestamp({int(self)})"


HeaderValue: TypeAlias = "bool | int | bytes | str | UUID"
"""The value of a header, by its wire type: ``bool`` (bool true, bool false), ``int``
(byte, short, integer, long: the width is the encoding's), ``bytes`` (byte array), ``str``
(string), :class:`EventStreamTimestamp` (timestamp), ``uuid.UUID`` (uuid)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EventStreamMessage:
    """One whole message of the stream, both its CRCs checked."""

    headers: "dict[str, HeaderValue]"
    """The headers by name, in wire order (see :data:`HeaderValue` for the types)."""

    payload: bytes
    """The payload, as received (Bedrock's are JSON)."""

    # Convenience reads of the headers AWS defines; a header of another type than string
    # reads as None (as a missing one does), so a caller never gets an int for a name.

    def _string(self, name: str) -> str | None:
        value = self.headers.get(name)
        return value if isinstance(value, str) else None

    @property
    def message_type(self) -> str:
        """``:message-type``: ``"event"``, ``"exception"`` (a modeled error: its kind in
        ``:exception-type``, its details in the payload) or ``"error"`` (an unmodeled one:
        ``:error-code`` and ``:error-message``). ``"event"`` when the header is missing,
        as botocore reads it; another value is returned as it is."""
        value = self._string(":message-type")
        return "event" if value is None else value

    @property
    def event_type(self) -> str | None:
        """``:event-type`` (``contentBlockDelta``, ``chunk``...), or ``None``."""
        return self._string(":event-type")

    @property
    def content_type(self) -> str | None:
        """``:content-type`` (``application/json``), or ``None``."""
        return self._string(":content-type")

    @property
    def exception_type(self) -> str | None:
        """``:exception-type`` of an ``exception`` message (``throttlingException``...)."""
        return self._string(":exception-type")

    @property
    def error_code(self) -> str | None:
        """``:error-code`` of an ``error`` message."""
        return self._string(":error-code")

    @property
    def error_message(self) -> str | None:
        """``:error-message`` of an ``error`` message."""
        return self._string(":error-message")


# ----------------------------------------------------------------------------------------
# Errors. They live beside the framer, so that a framing is one module (issue 21); each
# is a FramingError (the bytes cannot be framed), so ``except FramingError`` catches
# either framing's.

EventStreamProblem = Literal[
    "prelude_crc",
    "message_crc",
    "length_too_small",
    "headers_past_message",
    "message_too_large",
    "headers_too_large",
    "too_many_headers",
    "header_past_headers",
    "unknown_header_type",
    "invalid_utf8",
    "duplicate_header",
    "truncated",
    "internal",
]
"""What was wrong with a stream, as :attr:`EventStreamError.problem` names it."""


class EventStreamError(FramingError):
    """The bytes are not a valid AWS event stream; ``problem`` says what was wrong.

    The framer that raised refuses more input."""

    def __init__(
        self,
        message: str,
        *,
        problem: EventStreamProblem,
        offset: int,
        messages: "list[EventStreamMessage] | None" = None,
    ) -> None:
        super().__init__(message)
        self._set(problem=problem, offset=offset, messages=messages)

    def _set(
        self,
        *,
        problem: EventStreamProblem,
        offset: int,
        messages: "list[EventStreamMessage] | None",
    ) -> None:
        self.problem: EventStreamProblem = problem
        """What was wrong, as a word a caller can compare: ``"prelude_crc"``,
        ``"message_crc"``, ``"length_too_small"``, ``"headers_past_message"``,
        ``"message_too_large"``, ``"headers_too_large"``, ``"too_many_headers"``,
        ``"header_past_headers"``, ``"unknown_header_type"``, ``"invalid_utf8"``,
        ``"duplicate_header"``, ``"truncated"`` (at :meth:`EventStreamFramer.finish`),
        ``"internal"`` (the net under the others)."""
        self.offset = offset
        """Where the message at fault begins, in bytes from the start of the stream."""
        self.messages: list[EventStreamMessage] = list(messages or ())
        """The whole messages the failing read completed before the fault, in stream
        order, which the framer does not return (as :attr:`EventTooLargeError.events`):
        the outcome is then the same however the reads split."""
        self.events: list[ServerSentEvent] = []
        """The same messages as events, when the framing seam's framer
        (:class:`EventStreamEventFramer`) raised: what the parser reads before failing."""


class ChecksumMismatchError(EventStreamError):
    """A message's prelude CRC or message CRC is not the CRC32 of the bytes it covers."""

    def __init__(
        self,
        message: str,
        *,
        which: Literal["prelude", "message"],
        expected: int,
        computed: int,
        offset: int,
    ) -> None:
        super().__init__(
            message, problem="prelude_crc" if which == "prelude" else "message_crc", offset=offset
        )
        self.which = which
        """``"prelude"`` (the 8 bytes of the two lengths) or ``"message"`` (everything
        before the last four bytes)."""
        self.expected = expected
        """The CRC32 the message carries."""
        self.computed = computed
        """The CRC32 of the bytes as received."""


class MessageTooLargeError(EventStreamError):
    """A message's prelude announces more bytes than ``max_message_bytes``; raised from
    the prelude, before any of them is buffered."""

    def __init__(self, message: str, *, limit: int, size: int, offset: int) -> None:
        super().__init__(message, problem="message_too_large", offset=offset)
        self.limit = limit
        """The framer's ``max_message_bytes``."""
        self.size = size
        """The total length the prelude announced, in bytes."""


class EventStreamLimitError(EventStreamError, LimitExceededError):
    """A message crossed :data:`MAX_HEADERS_BYTES` or :data:`MAX_HEADERS_PER_MESSAGE`.

    Both an :class:`EventStreamError` and a :class:`LimitExceededError` (``limit_name``
    names the constant), as the SSE framer's line limits are."""

    def __init__(
        self,
        message: str,
        *,
        problem: EventStreamProblem,
        limit_name: str,
        limit: int,
        size: int,
        offset: int,
    ) -> None:
        LimitExceededError.__init__(self, message, limit_name=limit_name, limit=limit, size=size)
        self._set(problem=problem, offset=offset, messages=None)


class IncompleteMessageError(EventStreamError):
    """The stream ended inside a message: :meth:`EventStreamFramer.finish` found bytes of
    it held (a cut connection, a proxy that truncated the body)."""

    def __init__(self, message: str, *, held: int, expected: int | None, offset: int) -> None:
        super().__init__(message, problem="truncated", offset=offset)
        self.held = held
        """The bytes of the unfinished message received."""
        self.expected = expected
        """Its total length, when its prelude arrived (else ``None``)."""


_SEEN_SECTIONS: Final = 64
"""How many distinct header sections a framer keeps decoded: a Bedrock stream has one per
event type (about eight), an exception's one more."""

_SEEN_SECTION_BYTES: Final = 256
"""Only sections up to this many bytes are kept (Bedrock's are about 70): the memory of
what is kept stays under 64 x 256 bytes of keys and their small dicts."""

_BUSY: Final = "busy"
"""The state of a framer inside its own ``feed`` or ``finish``."""


def _reentered() -> UsageError:
    return UsageError(
        "the framer was called from inside its own feed() or finish() (a finalizer or a "
        "callback run during it): a framer is not re-entrant"
    )


class EventStreamFramer:
    """Turns the bytes of an AWS event stream into :class:`EventStreamMessage` values,
    incrementally.

    Work is linear in the input however it is split: the unfinished message grows in one
    ``bytearray``; a read that cannot complete it (fewer bytes held than its prelude
    announced) costs an append and a comparison, nothing is scanned twice, and a
    message's bytes are read once, when its last byte arrives.
    """

    __slots__ = (
        "_consumed",
        "_need",
        "_pending",
        "_prelude",
        "_seen",
        "_state",
        "max_message_bytes",
    )

    def __init__(self, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        if getattr(self, "_state", None) is _BUSY:
            raise _reentered()
        self.max_message_bytes = check_count(
            "max_message_bytes", max_message_bytes, minimum=MESSAGE_OVERHEAD_BYTES
        )
        """Bound on one message, prelude and CRCs included, in bytes; past it
        :class:`MessageTooLargeError`."""
        self._pending = bytearray()
        """The unfinished message's bytes received so far (never a whole message)."""
        self._prelude: tuple[int, int, int] | None = None
        """The unfinished message's checked prelude (total length, headers length, CRC),
        once its 12 bytes arrived."""
        self._need = 12
        """How many bytes ``_pending`` must hold before there is anything to read: the
        prelude's 12, then the message's total length."""
        self._consumed = 0
        """The stream's bytes before the unfinished message (for errors' offsets)."""
        self._seen: dict[bytes, dict[str, HeaderValue]] = {}
        """Header sections decoded so far, by their bytes (at most ``_SEEN_SECTIONS``)."""
        self._state = "open"

    def feed(self, data: bytes) -> list[EventStreamMessage]:
        """Take the next bytes of the stream and return the messages they complete.

        Raises:
            ChecksumMismatchError: a prelude or message CRC does not match.
            MessageTooLargeError: a prelude announced more than ``max_message_bytes``.
            EventStreamLimitError: past :data:`MAX_HEADERS_BYTES` or
                :data:`MAX_HEADERS_PER_MESSAGE`.
            EventStreamError: another malformed message (``problem`` says which).

            Each leaves the framer refusing more input; its ``messages`` are the whole
            messages this read completed before the fault, which it does not return.
            UsageError: ``data`` is not bytes, or the framer already finished or failed.
        """
        if self._state != "open":
            raise self._refusal()
        self._state = _BUSY
        messages: list[EventStreamMessage] = []
        try:
            if not isinstance(data, bytes):
                if not isinstance(data, bytearray | memoryview):
                    raise TypeError
                # Its bytes, whatever its format: a memoryview's len() counts its items,
                # which are not bytes when its format is wider ("I", "d"...).
                data = bytes(data)
            pending = self._pending
            if len(pending) + len(data) < self._need:
                # The common read inside a message: held, nothing read.
                pending += data
                return messages
            buf: bytes | bytearray
            if pending:
                pending += data
                buf = pending
            else:
                # Nothing held: read the caller's bytes in place, keep only the rest.
                buf = data
            end = len(buf)
            pos = 0
            prelude = self._prelude
            while True:
                if prelude is None:
                    if end - pos < 12:
                        break
                    prelude = self._read_prelude(buf, pos)
                total = prelude[0]
                if end - pos < total:
                    break
                messages.append(self._message(buf, pos, prelude))
                pos += total
                self._consumed += total
                prelude = None
            self._prelude = prelude
            self._need = 12 if prelude is None else prelude[0]
            if buf is pending:
                # O(1) in CPython: a bytearray drops its head by moving its start.
                del pending[:pos]
            elif pos < end:
                pending += buf[pos:]
            return messages
        except EventStreamError as exc:
            self._state = "failed"
            self._pending = bytearray()
            exc.messages = messages
            raise
        except SSEToolCallsError:
            self._state = "failed"
            self._pending = bytearray()
            raise
        except Exception as exc:
            # Only our exceptions leave the core, whatever the bytes (STYLE 6); the checks
            # in the readers are the real defences, this is the net under them.
            self._state = "failed"
            self._pending = bytearray()
            if not isinstance(data, bytes | bytearray | memoryview):
                raise UsageError(f"feed() takes bytes, not {type(data).__name__}") from exc
            raise EventStreamError(
                f"the framer failed on its input ({type(exc).__name__}: {exc})",
                problem="internal",
                offset=self._consumed,
                messages=messages,
            ) from exc
        finally:
            if self._state is _BUSY:
                self._state = "open"

    def finish(self) -> list[EventStreamMessage]:
        """Declare the end of the stream; refuse further input.

        Every message was released as its last byte arrived, so this returns none; it
        is a list for the framings' common shape.

        Raises:
            IncompleteMessageError: bytes of an unfinished message were held.
            UsageError: the framer already finished or failed.
        """
        if self._state != "open":
            raise self._refusal()
        held = len(self._pending)
        expected = None if self._prelude is None else self._prelude[0]
        self._state = "finished"
        self._pending = bytearray()
        if held:
            self._state = "failed"
            announced = "" if expected is None else f" of the {expected} its prelude announced"
            raise IncompleteMessageError(
                f"the stream ended inside a message: {held} bytes{announced} received",
                held=held,
                expected=expected,
                offset=self._consumed,
            )
        return []

    # ------------------------------------------------------------------------------------

    def _read_prelude(self, buf: "bytes | bytearray", pos: int) -> tuple[int, int, int]:
        """Check and return the prelude at ``pos`` (12 bytes are there): its CRC first, as
        AWS says ("so that [the reader] can detect corrupted byte-length information
        immediately without causing errors, such as buffer overruns"), then its lengths,
        so nothing a corrupt or hostile length announces is ever buffered."""
        total, headers, crc = _PRELUDE.unpack_from(buf, pos)
        computed = zlib.crc32(buf[pos : pos + 8])
        offset = self._consumed
        if computed != crc:
            raise ChecksumMismatchError(
                f"the prelude CRC of the message at byte {offset} is {crc:#010x}, but its "
                f"lengths' CRC32 is {computed:#010x}",
                which="prelude",
                expected=crc,
                computed=computed,
                offset=offset,
            )
        if headers > MAX_HEADERS_BYTES:
            raise EventStreamLimitError(
                f"the message at byte {offset} announces {headers} bytes of headers, over "
                f"MAX_HEADERS_BYTES={MAX_HEADERS_BYTES}",
                problem="headers_too_large",
                limit_name="MAX_HEADERS_BYTES",
                limit=MAX_HEADERS_BYTES,
                size=headers,
                offset=offset,
            )
        if total < MESSAGE_OVERHEAD_BYTES:
            raise EventStreamError(
                f"the message at byte {offset} announces a total length of {total} bytes, "
                f"less than the {MESSAGE_OVERHEAD_BYTES} of its prelude and CRCs",
                problem="length_too_small",
                offset=offset,
            )
        if total > self.max_message_bytes:
            raise MessageTooLargeError(
                f"the message at byte {offset} announces {total} bytes, over "
                f"max_message_bytes={self.max_message_bytes}",
                limit=self.max_message_bytes,
                size=total,
                offset=offset,
            )
        if headers > total - MESSAGE_OVERHEAD_BYTES:
            raise EventStreamError(
                f"the message at byte {offset} announces {headers} bytes of headers in a "
                f"message of {total} bytes (at most {total - MESSAGE_OVERHEAD_BYTES})",
                problem="headers_past_message",
                offset=offset,
            )
        return total, headers, crc

    def _message(
        self, buf: "bytes | bytearray", pos: int, prelude: tuple[int, int, int]
    ) -> EventStreamMessage:
        """The whole message at ``pos``, its prelude checked: its message CRC checked,
        then its headers read."""
        total, headers_length, prelude_crc = prelude
        crc_at = pos + total - 4
        headers_at = pos + 12
        payload_at = headers_at + headers_length
        section = bytes(buf[headers_at:payload_at])
        payload = bytes(buf[payload_at:crc_at])
        # "Message CRC: The 4-byte CRC checksum from the start of the message to the start
        # of the checksum": the prelude's 8 bytes' CRC is prelude_crc, so it carries on
        # from there, over the prelude CRC's own 4 bytes, the headers and the payload.
        computed = zlib.crc32(
            payload, zlib.crc32(section, zlib.crc32(buf[pos + 8 : headers_at], prelude_crc))
        )
        (expected,) = _U32.unpack_from(buf, crc_at)
        if computed != expected:
            raise ChecksumMismatchError(
                f"the message CRC of the message at byte {self._consumed} is "
                f"{expected:#010x}, but its bytes' CRC32 is {computed:#010x}",
                which="message",
                expected=expected,
                computed=computed,
                offset=self._consumed,
            )
        # A stream repeats a few header sections (Bedrock: one per event type), so each
        # distinct small one is decoded once per framer: 4.6 -> 2.8 ms for the 402
        # messages of the 16 recordings fed whole (timeit, best of 7, project machine).
        # Every message gets its own dict (the values are immutable).
        seen = self._seen
        headers = seen.get(section)
        if headers is None:
            headers = self._headers(section) if section else {}
            if len(section) <= _SEEN_SECTION_BYTES and len(seen) < _SEEN_SECTIONS:
                seen[section] = headers
        return EventStreamMessage(headers=dict(headers), payload=payload)

    def _headers(self, section: bytes) -> "dict[str, HeaderValue]":
        """The headers in ``section``: each is a name length (1 byte), the name, a value
        type (1 byte), then the value (a fixed size by type, or a 2-byte length and that
        many bytes)."""
        headers: dict[str, HeaderValue] = {}
        stop = len(section)
        at = 0
        try:
            while at < stop:
                name_at = at + 1
                at = name_at + section[at]
                if at >= stop:
                    # The name and its type byte must both fit.
                    self._malformed("header_past_headers", "a header's name runs past the headers")
                name = section[name_at:at].decode()
                kind = section[at]
                at += 1
                value: HeaderValue
                if kind in (_STRING, _BYTES):
                    if at + 2 > stop:
                        self._malformed(
                            "header_past_headers", f"header {name!r}'s length runs past the headers"
                        )
                    end = at + 2 + (section[at] << 8 | section[at + 1])
                    if end > stop:
                        self._malformed(
                            "header_past_headers",
                            f"header {name!r}'s {end - at - 2}-byte value runs past the headers",
                        )
                    raw = section[at + 2 : end]
                    value = raw.decode() if kind == _STRING else raw
                    at = end
                elif kind == _TRUE:
                    value = True
                elif kind == _FALSE:
                    value = False
                elif kind == _UUID:
                    if at + 16 > stop:
                        self._malformed(
                            "header_past_headers", f"header {name!r}'s uuid runs past the headers"
                        )
                    # Imported here: no Bedrock message carries a uuid header, and the
                    # module is not free to import (issue 16: import cost of the core).
                    from uuid import UUID

                    value = UUID(bytes=section[at : at + 16])
                    at += 16
                else:
                    fixed = _FIXED.get(kind)
                    if fixed is None:
                        self._malformed(
                            "unknown_header_type",
                            f"header {name!r} has the unknown value type {kind}",
                        )
                    if at + fixed.size > stop:
                        self._malformed(
                            "header_past_headers",
                            f"header {name!r}'s {_TYPE_NAMES[kind]} runs past the headers",
                        )
                    (number,) = fixed.unpack_from(section, at)
                    value = EventStreamTimestamp(number) if kind == _TIMESTAMP else number
                    at += fixed.size
                if name in headers:
                    # "any header can appear only once" (AWS); botocore refuses it too.
                    self._malformed("duplicate_header", f"header {name!r} appears twice")
                if len(headers) == MAX_HEADERS_PER_MESSAGE:
                    raise EventStreamLimitError(
                        f"the message at byte {self._consumed} has more than "
                        f"MAX_HEADERS_PER_MESSAGE={MAX_HEADERS_PER_MESSAGE} headers",
                        problem="too_many_headers",
                        limit_name="MAX_HEADERS_PER_MESSAGE",
                        limit=MAX_HEADERS_PER_MESSAGE,
                        size=MAX_HEADERS_PER_MESSAGE + 1,
                        offset=self._consumed,
                    )
                headers[name] = value
        except UnicodeDecodeError as exc:
            raise EventStreamError(
                f"a header of the message at byte {self._consumed} is not UTF-8 ({exc.reason})",
                problem="invalid_utf8",
                offset=self._consumed,
            ) from None
        return headers

    def _malformed(self, problem: EventStreamProblem, what: str) -> NoReturn:
        raise EventStreamError(
            f"the message at byte {self._consumed} is malformed: {what}",
            problem=problem,
            offset=self._consumed,
        )

    def _refusal(self) -> UsageError:
        if self._state is _BUSY:
            return _reentered()
        return UsageError(f"the framer has {self._state}; it takes no more input")


# ----------------------------------------------------------------------------------------
# The framing seam: messages as the events every dialect reads.

ERROR_EVENT: Final = "error"
"""The event name of an ``error`` message (an unmodeled error: ``:error-code`` and
``:error-message`` in its headers, its data the JSON ``{"errorCode", "message"}``)."""


def message_event(message: EventStreamMessage) -> ServerSentEvent:
    """One message as the event a dialect reads: an ``event`` message by its
    ``:event-type`` (``contentBlockDelta``, ``chunk``), an ``exception`` message by its
    ``:exception-type`` (``throttlingException``: AWS's exception names end in
    "Exception", no event type does), both with the payload as text; any other
    message type as :data:`ERROR_EVENT`. What an event or an exception means is the
    dialect's to say."""
    headers = message.headers
    name = headers.get(":event-type")
    if type(name) is str and name and headers.get(":message-type", "event") == "event":
        # Nearly every message: read without the properties' calls (the general path
        # below gives the same event for these headers); 4% of a Converse parse (0.0775
        # -> 0.0747 s for the 14 Converse recordings x 30, best of 7, process time).
        return ServerSentEvent(name, message.payload.decode("utf-8", "replace"), "", None)
    kind = message.message_type
    if kind == "event":
        name = message.event_type or "message"
    elif kind == "exception":
        name = message.exception_type or "exception"
    else:
        from .. import _json

        body = {"errorCode": message.error_code or kind, "message": message.error_message or ""}
        return ServerSentEvent(ERROR_EVENT, _json.dumps(body).decode(), "", None)
    # "replace", as the SSE framer decodes: a payload that is not UTF-8 is then JSON that
    # does not parse, which the dialect reports as a malformed event.
    return ServerSentEvent(name, message.payload.decode("utf-8", "replace"), "", None)


class EventStreamEventFramer:
    """The event stream on the framing seam (``sse_toolcalls.framing.Framer``): the
    messages of :class:`EventStreamFramer`, each as the event :func:`message_event`
    makes of it. Its errors are the framer's; a failing read's earlier messages are in
    their ``events`` as events (``EventStreamError.messages`` as messages)."""

    __slots__ = ("_framer",)

    def __init__(self, *, max_event_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self._framer = EventStreamFramer(max_message_bytes=max_event_bytes)

    @property
    def max_event_bytes(self) -> int:
        """Bound on one message, prelude and CRCs included, in bytes."""
        return self._framer.max_message_bytes

    def feed(self, data: bytes) -> list[ServerSentEvent]:
        """The events the next bytes complete (see :meth:`EventStreamFramer.feed`)."""
        try:
            messages = self._framer.feed(data)
        except EventStreamError as exc:
            exc.events = [message_event(message) for message in exc.messages]
            raise
        return [message_event(message) for message in messages] if messages else []

    def finish(self, *, unterminated: object = None) -> list[ServerSentEvent]:
        """The end of the stream (``unterminated`` is SSE's: every message here is whole
        or not there).

        A message the end cut short is no event, as the SSE framer drops an event that
        its blank line never closed: the dialect's end check then tells a cut turn
        (:class:`TruncatedStreamError`, with the call that was being streamed as its
        partial call) from a whole one, as it does for a cut SSE body. Raising the
        framer's :class:`IncompleteMessageError` here would hand a parser's caller a
        FramingError where every other dialect gives a truncation, and lose the partial
        call; :class:`EventStreamFramer` still raises it for its direct callers."""
        del unterminated
        with suppress(IncompleteMessageError):
            self._framer.finish()
        return []
