"""JSON that cannot fail: any Python value to a JSON value, and to bytes, without raising.

Used wherever text leaves us after a tool has run (a result's content, an assistant turn
echoing the model's arguments, a request body, a ledger row): once a tool ran, an
exception while writing the next request would leave the user without a reply and the
model without the result. Strict JSON encoders refuse many values a handler can return
or a stream can carry; this module maps each one to the nearest JSON value instead:

| value | JSON value |
|---|---|
| ``str`` with lone surrogates (``os.listdir`` of an undecodable file name) | ``\\udc80``-``\\udcff`` (escaped bytes) become ``\\x80``..., other lone surrogates U+FFFD; a pair written as two code points is joined |
| ``bytes``, ``bytearray``, ``memoryview`` | UTF-8 text, undecodable bytes as ``\\xNN`` |
| NaN, infinities | ``null`` (as orjson writes them) |
| an ``int`` above :data:`MAX_INT_BITS` | a string saying how many bits it has |
| ``tuple``, ``set``, ``frozenset`` and other iterables of known kinds | arrays |
| an object key that is not a string | the JSON text of the key (``1`` -> ``"1"``), else its ``str`` |
| ``Enum``, ``date``/``time``/``datetime``, ``UUID``, ``Decimal``, paths | value, ISO text, text |
| dataclass instance, pydantic model | its fields, ``model_dump(mode="json")`` |
| a container that contains itself | ``"<cycle>"`` at the repeat |
| nesting below :data:`MAX_DEPTH` | ``"<nested too deep>"`` |
| anything else | ``str(value)``, else ``repr(value)``, else ``"<TypeName object>"`` |

orjson writes the common case (through :mod:`._json`); ``datetime``, ``decimal``, ``uuid``
and ``json`` are imported only on the slow path, to keep ``import sse_toolcalls`` light.
"""  # noqa: E501

from __future__ import annotations

import dataclasses
import enum
import math
import os
import re
from collections.abc import Mapping
from typing import Any

from . import _json

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_BITS",
    "clean_text",
    "dumps_safe",
    "json_value",
    "safe_repr",
    "safe_str",
]

MAX_DEPTH = 200
"""Deepest nesting (arrays and objects) written, in levels: below orjson's own limit of
255, so its fast path can encode every value this module returns, and far below Python's
recursion limit; a tool result or an argument object deeper than this is not data a
model can use."""

MAX_INT_BITS = 14_000
"""Largest integer written as a number, in bits (about 4,200 decimal digits): Python
refuses to print integers past 4,300 digits (``sys.int_info.str_digits_check_threshold``,
which guards against its quadratic conversion)."""

_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _join_pair(match: re.Match[str]) -> str:
    pair = match.group()
    high, low = pair[0], pair[1]
    return chr(0x10000 + ((ord(high) - 0xD800) << 10) + (ord(low) - 0xDC00))


def _replace_lone(match: re.Match[str]) -> str:
    code = ord(match.group())
    # U+DC80..U+DCFF is how Python's "surrogateescape" (os.listdir, sys.argv) spells
    # an undecodable byte: show the byte, so a file name stays recognisable.
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return "\ufffd"


def clean_text(text: str) -> str:
    """``text`` made encodable as UTF-8 (see the module table); unchanged when it is.

    Returns:
        A string without lone surrogates.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(_replace_lone, _SURROGATE_PAIR.sub(_join_pair, str(text)))
    return text


def safe_str(value: object) -> str:
    """``str(value)``, else ``repr(value)``, else ``<TypeName object>``; always clean text."""
    return _render(value, (str, repr))


def safe_repr(value: object) -> str:
    """``repr(value)``, else ``str(value)``, else ``<TypeName object>``; always clean text."""
    return _render(value, (repr, str))


def _render(value: object, renders: tuple[Any, ...]) -> str:
    for render in renders:
        try:
            text = render(value)
        except Exception:
            continue  # a raising __str__ is exactly what is handled here
        if isinstance(text, str):
            return clean_text(text)
    return f"<{clean_text(type(value).__name__)} object>"


def _key_text(key: object) -> str:
    # The stdlib's spelling of scalar keys (json.dumps({1: 0}) == '{"1": 0}').
    if isinstance(key, str):
        return clean_text(key)
    if key is None or isinstance(key, bool):
        return {None: "null", True: "true", False: "false"}[key]
    if isinstance(key, int | float):
        value = json_value(key)
        return "null" if value is None else str(value)
    return safe_str(key)


def json_value(value: Any, *, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value nearest to ``value`` (module table); never raises an ``Exception``.

    Returns:
        ``None``, a ``bool``, an ``int`` of at most :data:`MAX_INT_BITS` bits, a finite
        ``float``, a clean ``str``, or lists and ``str``-keyed dicts of those, at most
        ``max_depth`` levels deep and without cycles.
    """
    return _convert(value, max_depth, set())


def _convert(value: Any, depth: int, path: set[int]) -> Any:
    try:
        return _convert_unguarded(value, depth, path)
    except RecursionError:
        return "<nested too deep>"
    except Exception:
        # A container whose iteration raises, a model_dump that fails...: the text of
        # the value is still something the model can be shown.
        return safe_str(value)


def _convert_unguarded(value: Any, depth: int, path: set[int]) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        if value.bit_length() > MAX_INT_BITS:
            return f"<integer of {value.bit_length()} bits>"
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "backslashreplace")
    if isinstance(value, enum.Enum):
        return _convert(value.value, depth, path)
    import datetime
    import decimal
    import uuid

    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, decimal.Decimal):
        return str(value) if value.is_finite() else None
    if isinstance(value, os.PathLike):
        name = os.fspath(value)
        if isinstance(name, str):
            return clean_text(name)
        return name.decode("utf-8", "backslashreplace")
    container = isinstance(value, Mapping | list | tuple | set | frozenset)
    model = dataclasses.is_dataclass(value) and not isinstance(value, type)
    dump = None if container or model else getattr(value, "model_dump", None)
    if not (container or model or callable(dump)):
        return safe_str(value)
    if depth <= 0:
        return "<nested too deep>"
    marker = id(value)
    if marker in path:
        return "<cycle>"
    path.add(marker)
    try:
        if isinstance(value, Mapping):
            return {_key_text(k): _convert(v, depth - 1, path) for k, v in value.items()}
        if container:
            return [_convert(item, depth - 1, path) for item in value]
        if model:
            return {
                f.name: _convert(getattr(value, f.name), depth - 1, path)
                for f in dataclasses.fields(value)
            }
        assert dump is not None
        return _convert(dump(mode="json"), depth - 1, path)
    finally:
        path.discard(marker)


def dumps_safe(value: Any) -> bytes:
    """Compact UTF-8 JSON of ``value``, converted per the module table where needed.

    orjson writes the common case directly; only a value it refuses (a lone surrogate,
    a big integer, a set, a cycle...) is converted first.

    Returns:
        The JSON text as bytes; never raises an ``Exception``.
    """
    try:
        return _json.dumps(value)
    except (TypeError, ValueError):
        pass
    converted = json_value(value)
    try:
        return _json.dumps(converted)
    except (TypeError, ValueError):
        # Integers past 64 bits, which orjson refuses and JSON allows (bounded by
        # MAX_INT_BITS above, so the stdlib can print them).
        import json

        return json.dumps(
            converted, ensure_ascii=False, allow_nan=False, separators=(",", ":")
        ).encode("utf-8")
