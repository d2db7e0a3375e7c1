"""Structure-aware mutations, beside libFuzzer's byte-level ones (no atheris here).

Byte mutations rarely keep an event's JSON valid, and never reach the limits worth
testing: nesting a thousand deep, a number past a double, a lone surrogate inside an
argument string that is itself JSON inside JSON. These mutations take one ``data:`` line
of the input, parse it, and put a hostile value in place of one of its nodes (or of a
node inside a string that holds JSON, as Chat ``arguments`` and Anthropic
``partial_json`` do); or they repeat a short run of bytes many times.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any, Final

from .invariants import HEADER_BYTES

__all__ = ["HOSTILE", "mutate_json", "repeat_bytes"]

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
