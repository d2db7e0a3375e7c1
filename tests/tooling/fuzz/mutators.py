"""The structure-aware mutations, owned by the library (:mod:`sse_toolcalls.tooling.corpus.mutators`),
which ``sse-toolcalls fuzz`` and this atheris harness share."""

from __future__ import annotations

from sse_toolcalls.tooling.corpus.mutators import (
    HOSTILE,
    mutate_event_stream,
    mutate_json,
    repeat_bytes,
)

__all__ = ["HOSTILE", "mutate_event_stream", "mutate_json", "repeat_bytes"]
