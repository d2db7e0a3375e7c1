"""orjson for the core, imported when first used.

Importing orjson also imports uuid, datetime, json and platform: 12 to 17 ms of
``import sse_toolcalls`` on the project machine (``python -X importtime``), a third of
its 50 ms budget. The first call of either name below imports orjson and rebinds the name
to orjson's own function, so every later call is orjson's, behind one attribute lookup.
Callers catch ``ValueError`` (orjson's decode error derives from it) and ``TypeError``
(its encode error).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _first_loads(data: str | bytes | bytearray | memoryview) -> Any:
    global loads  # noqa: PLW0603 - rebinding on first use is the point of this module
    import orjson

    loads = orjson.loads
    return orjson.loads(data)


def _first_dumps(value: Any) -> bytes:
    global dumps  # noqa: PLW0603 - as above
    import orjson

    dumps = orjson.dumps
    return orjson.dumps(value)


loads: Callable[[str | bytes | bytearray | memoryview], Any] = _first_loads
"""``orjson.loads``."""

dumps: Callable[[Any], bytes] = _first_dumps
"""``orjson.dumps``."""


def json_type(value: Any) -> str:
    """The JSON Schema type of a parsed JSON value (``"null"``, ``"boolean"``,
    ``"integer"``, ``"number"``, ``"string"``, ``"array"``, ``"object"``), or the Python
    type's name for a value JSON cannot hold.

    The one answer to "what JSON kind is this value" (a ``bool`` is not an integer; a
    tuple is an array, as the encoders write it).
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


JSON_TYPE_PHRASES = {
    "null": "null",
    "boolean": "a boolean",
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "array": "an array",
    "object": "an object",
}
"""Each JSON type as a message names it ("got an array")."""
