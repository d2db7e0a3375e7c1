"""Users' own streams: record them, check a corpus of them, fuzz against it.

Imported on demand only (the CLI's ``record``, ``check`` and ``fuzz``, or a test suite):
nothing here loads with ``import sse_toolcalls``.
"""

from __future__ import annotations

from .check import StreamResult, assert_stream_invariants, check_corpus, check_stream

__all__ = ["StreamResult", "assert_stream_invariants", "check_corpus", "check_stream"]
