"""The fuzz properties, owned by the library (:mod:`sse_toolcalls.corpus.invariants`).

``sse-toolcalls fuzz`` and this atheris harness hold inputs to the same checker, so a
finding of one replays in the other; this module only keeps the harness's import path.
"""

from __future__ import annotations

from sse_toolcalls.corpus.invariants import (
    BYTE_AT_A_TIME_MAX,
    HEADER_BYTES,
    SMALL_EVENT_LIMIT,
    TARGETS,
    InvariantError,
    check,
    decode,
    encode,
    feedings,
)

__all__ = [
    "BYTE_AT_A_TIME_MAX",
    "HEADER_BYTES",
    "SMALL_EVENT_LIMIT",
    "TARGETS",
    "InvariantError",
    "check",
    "decode",
    "encode",
    "feedings",
]
