"""The Berkeley Function Calling Leaderboard (BFCL) as an outside check of the library.

**Optional.** Nothing in the library imports this package, and BFCL's data is never a
dependency: without the data, :func:`find_source` returns ``None`` and the users of this
package (``benchmarks/bfcl_check.py``, ``sse-toolcalls bfcl``, ``tests/test_bfcl*.py``) say
so and stop. It uses only the library's public layers, so it lives outside them.

- :mod:`.single_turn`: the single-turn categories' ground truths validate and their
  mutations are refused (the tools layer).
- :mod:`.multi_turn`: the multi-turn categories replayed through ``Agent`` against BFCL's
  own stateful API classes, in every dialect, optionally under the simulator's faults, each
  turn's state compared with BFCL's reference execution by BFCL's own checker (imported
  lazily, from the wheel, only when a replay starts).
"""

from __future__ import annotations

from .single_turn import (
    CATEGORIES,
    DATA_ENV,
    KNOWN_DEFECTS,
    BFCLSource,
    Entry,
    EntryReport,
    Mutation,
    check_entry,
    find_source,
    gorilla_schema,
    ground_truth_calls,
    mutations,
    registry_for,
)

__all__ = [
    "CATEGORIES",
    "DATA_ENV",
    "KNOWN_DEFECTS",
    "BFCLSource",
    "Entry",
    "EntryReport",
    "Mutation",
    "check_entry",
    "find_source",
    "gorilla_schema",
    "ground_truth_calls",
    "mutations",
    "registry_for",
]
