"""AWS's binary event stream, written out: the framing of Bedrock's streaming answers
(``application/vnd.amazon.eventstream``).

The simulator's own encoder, written from AWS's description of the format ("Event stream
encoding", in the Transcribe and Lex guides) and never from the library's framer, which
it is the oracle for (the import contract "simulator-oracle"). Each message:

- the prelude: "the total byte-length ... of the entire message, including the 4-byte
  length field itself", then "the headers byte-length ... not including the headers
  length field itself" (both 4-byte big-endian);
- the prelude CRC: "the 4-byte CRC checksum for the prelude portion of the message,
  excluding the CRC itself" (CRC32, "often referred to as GZIP CRC32");
- the headers, each a 1-byte name length, the name, a 1-byte value type and the value
  (a string, type 7, and a byte array, type 6: a 2-byte length, then the bytes);
- the payload;
- the message CRC: "the 4-byte CRC checksum from the start of the message to the start
  of the checksum".

"Total message overhead, including the prelude and both checksums, is 16 bytes."

Pure and deterministic; importable without any server or async library.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

from ...errors import UsageError

MEDIA_TYPE = "application/vnd.amazon.eventstream"
"""The content type of a body in this framing."""

PRELUDE_BYTES = 12
"""The prelude (total length, headers length) and its CRC: a cut before this many bytes of
a message is a cut inside its prelude."""

MAX_MESSAGE_BYTES = 16 * 1024 * 1024 + 128 * 1024 + 16
"""The largest message written, in bytes: AWS's limits of 16 MiB of payload and 128 KiB
of headers (the ones botocore's reader enforces) and the 16 bytes of overhead. Past it a
real reader refuses the message, so the simulator never sends one."""

_STRING = 7
_BYTES = 6
_OVERHEAD = 16

HeaderValue = str | bytes
"""A header's value: a string (type 7, as Bedrock sends every header) or bytes (type 6)."""


def _header(name: str, value: HeaderValue) -> bytes:
    raw_name = name.encode("utf-8")
    if not 0 < len(raw_name) < 256:
        raise UsageError(f"an event-stream header name is 1 to 255 bytes, got {name!r}")
    kind, raw = (_STRING, value.encode("utf-8")) if isinstance(value, str) else (_BYTES, value)
    if len(raw) > 0xFFFF:
        raise UsageError(f"the value of header {name!r} is over 65535 bytes")
    return bytes([len(raw_name)]) + raw_name + bytes([kind]) + struct.pack(">H", len(raw)) + raw


def encode_message(headers: Sequence[tuple[str, HeaderValue]], payload: bytes) -> bytes:
    """One event-stream message: ``headers`` in the order given, then ``payload``.

    Raises:
        UsageError: a header name or value too long for its length field, or a message
            over :data:`MAX_MESSAGE_BYTES`.
    """
    block = b"".join(_header(name, value) for name, value in headers)
    total = _OVERHEAD + len(block) + len(payload)
    if total > MAX_MESSAGE_BYTES:
        raise UsageError(f"an event-stream message of {total} bytes is over the limit")
    prelude = struct.pack(">II", total, len(block))
    head = prelude + struct.pack(">I", zlib.crc32(prelude)) + block + payload
    return head + struct.pack(">I", zlib.crc32(head))


def event_message(event_type: str, payload: bytes) -> bytes:
    """A message of type ``event``, with Bedrock's headers in Bedrock's order
    (``:event-type``, ``:content-type``, ``:message-type``: see the captured streams)."""
    return encode_message(
        [
            (":event-type", event_type),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        payload,
    )


def exception_message(exception_type: str, payload: bytes) -> bytes:
    """A message of type ``exception`` (``throttlingException``...): the error the
    service sends in the stream, after some events went out."""
    return encode_message(
        [
            (":exception-type", exception_type),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        payload,
    )


def error_message(code: str, message: str) -> bytes:
    """A message of type ``error``: a failure of the stream itself, named by its
    ``:error-code`` and ``:error-message`` headers, with no payload (the model's errors
    are exception messages, which :class:`~.script.ErrorEvent` sends). A test that wants
    one puts it in a :class:`~.script.RawBody`."""
    return encode_message(
        [(":error-code", code), (":error-message", message), (":message-type", "error")], b""
    )


def flip_byte(message: bytes, offset: int) -> bytes:
    """``message`` with the byte at ``offset`` (negative: from the end) inverted, so one of
    its checksums no longer matches: in the prelude or its CRC, the prelude's; anywhere
    after, the message's.

    Raises:
        UsageError: ``offset`` outside the message.
    """
    if not -len(message) <= offset < len(message):
        raise UsageError(f"offset {offset} is outside a message of {len(message)} bytes")
    at = offset % len(message)
    return message[:at] + bytes([message[at] ^ 0xFF]) + message[at + 1 :]


__all__ = [
    "MAX_MESSAGE_BYTES",
    "MEDIA_TYPE",
    "PRELUDE_BYTES",
    "HeaderValue",
    "encode_message",
    "error_message",
    "event_message",
    "exception_message",
    "flip_byte",
]
