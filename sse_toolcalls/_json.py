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
