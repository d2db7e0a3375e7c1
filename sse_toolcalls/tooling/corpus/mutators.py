"""Structure-aware mutations, beside libFuzzer's byte-level ones (no atheris here).

Byte mutations rarely keep an event's JSON valid, and never reach the limits worth
testing: nesting a thousand deep, a number past a double, a lone surrogate inside an
argument string that is itself JSON inside JSON. These mutations take one ``data:`` line
of the input, parse it, and put a hostile value in place of one of its nodes (or of a
node inside a string that holds JSON, as Chat ``arguments`` and Anthropic
``partial_json`` do); or they repeat a short run of bytes many times.

AWS's event stream (Amazon Bedrock) guards each message with two CRC32s, so a byte
mutation is nearly always a checksum error and never reaches a dialect. Its mutations
(:func:`mutate_event_stream`) work on whole messages instead: a hostile value in one
payload's JSON (or in the Anthropic event base64-encoded in a ``chunk``), a message
dropped, repeated or moved, its event type changed, then every message written again
with valid CRCs by :func:`event_stream_message`, this module's own encoder.
"""

from __future__ import annotations

import base64
import binascii
import json
import random
import re
import struct
import zlib
from typing import Any, Final

from .invariants import HEADER_BYTES

__all__ = [
    "EVENT_TYPES",
    "HOSTILE",
    "event_stream_message",
    "mutate_event_stream",
    "mutate_json",
    "repeat_bytes",
    "string_headers",
]

_HOLE = "\x00hole\x00"
_HOLE_JSON = json.dumps(_HOLE)


def _nested(opening: str, closing: str, depth: int) -> str:
    return opening * depth + closing * depth


HOSTILE: Final[tuple[str, ...]] = (
    "1e400",
    "-1e400",
    "12345678901234567890123",
    "1.5e-400",
    "-0",
    "NaN",
    "Infinity",
    '"\\ud800"',
    '"a\\udfffb"',
    '"\\u0000"',
    "null",
    "true",
    "0",
    "-1",
    "4294967297",
    "[]",
    "{}",
    '""',
    '"x"',
    # Depths around the interpreter's recursion limit (1,000) and orjson's (1,024): a
    # text orjson accepts may still be too deep for the stdlib code that handles it next.
    _nested("[", "]", 300),
    _nested("[", "]", 1000),
    _nested("[", "]", 1023),
    _nested("[", "]", 1100),
    '{"a":' * 1000 + "1" + "}" * 1000,
    '{"a":' * 1023 + "1" + "}" * 1023,
    '"$' + ".a" * 2100 + '"',
    '"$.a[99999999]"',
    '"$.a[4294967296].b"',
    '"' + "9" * 5000 + '"',
)
"""JSON texts (some not quite JSON) that a parser must refuse or carry exactly."""

_DATA_LINE = re.compile(rb"^data:[ ]?(.*)$", re.MULTILINE)


def mutate_json(data: bytes, rng: random.Random, max_size: int) -> bytes | None:
    """Put a hostile value (or a deletion) at a random node of one event's JSON.

    Returns ``None`` when the input holds no ``data:`` line of JSON, or the result would
    pass ``max_size``.
    """
    head, stream = data[:HEADER_BYTES], data[HEADER_BYTES:]
    lines = [m for m in _DATA_LINE.finditer(stream) if m.group(1)[:1] in (b"{", b"[")]
    if not lines:
        return None
    line = rng.choice(lines)
    try:
        # The mutator reads what the fuzzer made, which may nest past the recursion
        # limit or not be UTF-8: such a line is left to the byte-level mutations.
        payload = json.loads(line.group(1))
        text = _mutate(payload, rng, depth=0)
    except (ValueError, RecursionError):
        return None
    if text is None:
        return None
    out = head + stream[: line.start(1)] + text.encode("utf-8", "surrogatepass")
    out += stream[line.end(1) :]
    return out if len(out) <= max_size else None


def _mutate(payload: Any, rng: random.Random, depth: int) -> str | None:
    nodes: list[tuple[Any, Any]] = []  # (container, key) of every node below the root
    stack = [payload]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            nodes.append((node, key))
            if isinstance(value, dict | list):
                stack.append(value)
    if not nodes:
        return None
    container, key = rng.choice(nodes)
    value = container[key]
    hostile = rng.choice(HOSTILE)
    if isinstance(value, str) and value[:1] in "{[" and depth == 0 and rng.randrange(2):
        # JSON inside a string (Chat and Responses arguments, Anthropic partial_json).
        try:
            inner = json.loads(value)
        except (ValueError, RecursionError):
            inner = None
        if isinstance(inner, dict | list):
            text = _mutate(inner, rng, depth=1)
            if text is not None:
                container[key] = text
                return json.dumps(payload, ensure_ascii=False)
    if rng.randrange(6) == 0:
        del container[key]
        return json.dumps(payload, ensure_ascii=False)
    container[key] = _HOLE
    return json.dumps(payload, ensure_ascii=False).replace(_HOLE_JSON, hostile, 1)


def repeat_bytes(data: bytes, rng: random.Random, max_size: int) -> bytes | None:
    """Repeat 1-8 bytes of the stream 2 to 4,400 times where they stand (a retry's
    digits, a bracket, one long line), or ``None`` when there is no room."""
    if len(data) <= HEADER_BYTES:
        return None
    start = rng.randrange(HEADER_BYTES, len(data))
    piece = data[start : start + rng.randint(1, 8)]
    times = min((max_size - len(data)) // len(piece), rng.choice((2, 16, 300, 1100, 4400)))
    if times < 2:
        return None
    return data[:start] + piece * times + data[start:]


# --------------------------------------------------------------------------------------
# AWS's event stream.

EVENT_TYPES: Final = (
    "messageStart",
    "contentBlockStart",
    "contentBlockDelta",
    "contentBlockStop",
    "messageStop",
    "metadata",
    "chunk",
    "throttlingException",
    "modelStreamErrorException",
    "validationException",
    "futureEventType",
)
"""The ``:event-type`` / ``:exception-type`` values a mutation swaps in: Bedrock's, its
exceptions', and one no reader knows."""

_PRELUDE_BYTES = 12
_CRC_BYTES = 4


def string_headers(pairs: list[tuple[str, str]]) -> bytes:
    """A headers section of string headers ("Event stream encoding": name length, name,
    value type 7, a 2-byte value length, the value)."""
    out = []
    for name, value in pairs:
        raw_name, raw_value = name.encode(), value.encode()
        out.append(
            bytes([len(raw_name)])
            + raw_name
            + b"\x07"
            + struct.pack(">H", len(raw_value))
            + raw_value
        )
    return b"".join(out)


def event_stream_message(section: bytes, payload: bytes) -> bytes:
    """One message around a headers section and a payload: the prelude (total length,
    headers length, the CRC32 of those 8 bytes), then the CRC32 of all before it."""
    lengths = struct.pack(">II", 16 + len(section) + len(payload), len(section))
    body = lengths + struct.pack(">I", zlib.crc32(lengths)) + section + payload
    return body + struct.pack(">I", zlib.crc32(body))


def _messages(stream: bytes) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The ``(headers section, payload)`` of each whole message, read by its lengths (no
    CRC checked: the mutation rewrites them), and the bytes after the last one."""
    out = []
    at = 0
    while len(stream) - at >= _PRELUDE_BYTES:
        total, headers = struct.unpack_from(">II", stream, at)
        if total < 16 or headers > total - 16 or at + total > len(stream):
            break
        start = at + _PRELUDE_BYTES
        out.append(
            (stream[start : start + headers], stream[start + headers : at + total - _CRC_BYTES])
        )
        at += total
    return out, stream[at:]


def _string_pairs(section: bytes) -> list[tuple[str, str]] | None:
    """The headers of a section made of string headers only, or ``None``."""
    pairs = []
    at = 0
    try:
        while at < len(section):
            end = at + 1 + section[at]
            name = section[at + 1 : end].decode()
            if section[end] != 7:
                return None
            (length,) = struct.unpack_from(">H", section, end + 1)
            value = section[end + 3 : end + 3 + length]
            if len(value) != length:
                return None
            pairs.append((name, value.decode()))
            at = end + 3 + length
    except (IndexError, struct.error, UnicodeDecodeError):
        return None
    return pairs


def _mutate_payload(payload: bytes, rng: random.Random) -> bytes | None:
    """A hostile value at a node of the payload's JSON, or of the Anthropic event inside
    a ``chunk``'s base64 ``bytes`` (re-encoded, so the dialect reaches it)."""
    try:
        obj = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict | list):
        return None
    if isinstance(obj, dict) and isinstance(obj.get("bytes"), str) and rng.randrange(4):
        try:
            inner = json.loads(base64.b64decode(obj["bytes"], validate=True))
            text = _mutate(inner, rng, depth=0) if isinstance(inner, dict | list) else None
        except (binascii.Error, ValueError, RecursionError):
            text = None
        if text is not None:
            raw = text.encode("utf-8", "surrogatepass")
            obj["bytes"] = base64.b64encode(raw).decode("ascii")
            return json.dumps(obj).encode()
    try:
        text = _mutate(obj, rng, depth=0)
    except RecursionError:
        return None
    return None if text is None else text.encode("utf-8", "surrogatepass")


def mutate_event_stream(data: bytes, rng: random.Random, max_size: int) -> bytes | None:
    """One whole-message mutation of an event-stream input, every CRC valid after it.

    Returns ``None`` when the input holds no whole message, or the result would pass
    ``max_size``.
    """
    head, stream = data[:HEADER_BYTES], data[HEADER_BYTES:]
    messages, tail = _messages(stream)
    if not messages:
        return None
    at = rng.randrange(len(messages))
    section, payload = messages[at]
    kind = rng.randrange(5)
    if kind == 0:
        mutated = _mutate_payload(payload, rng)
        if mutated is None:
            return None
        messages[at] = (section, mutated)
    elif kind == 1:
        del messages[at]
    elif kind == 2:
        # Many of one message (a delta): the dialects' counts and sizes add up.
        messages[at:at] = [messages[at]] * rng.choice((1, 2, 30, 300))
    elif kind == 3:
        other = rng.randrange(len(messages))
        messages[at], messages[other] = messages[other], messages[at]
    else:
        pairs = _string_pairs(section)
        if not pairs:
            return None
        name = rng.choice(EVENT_TYPES)
        kind_header = "exception" if name.endswith("Exception") else "event"
        type_header = ":exception-type" if kind_header == "exception" else ":event-type"
        rest = [
            (n, v) for n, v in pairs if n not in (":event-type", ":exception-type", ":message-type")
        ]
        messages[at] = (
            string_headers([(type_header, name), *rest, (":message-type", kind_header)]),
            payload,
        )
    out = head + b"".join(event_stream_message(s, p) for s, p in messages) + tail
    return out if len(out) <= max_size else None
