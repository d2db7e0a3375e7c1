"""A ledger in a dict: one process, gone at exit (tests, short scripts)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..._faces import publish
from .base import DEFAULT_RETENTION_S, LedgerEntry

__all__ = ["InMemoryLedger"]


class InMemoryLedger:
    """A ledger in a dict: one process, gone at exit. For tests and short scripts.

    Each method answers at once (a dict under a lock, never waiting on anything), so
    awaiting it never blocks the loop."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        """Args:
        clock: seconds since the epoch, for the timestamps."""
        self._entries: dict[str, LedgerEntry] = {}
        self._lock = threading.Lock()
        self._clock = clock

    def __repr__(self) -> str:
        return f"InMemoryLedger(entries={len(self._entries)})"

    async def get(self, key: str) -> LedgerEntry | None:
        """See :meth:`IdempotencyLedger.get`."""
        with self._lock:
            return self._entries.get(key)

    async def reserve(self, key: str, *, tool: str) -> LedgerEntry | None:
        """See :meth:`IdempotencyLedger.reserve`."""
        with self._lock:
            existing = self._entries.get(key)
            if existing is not None:
                return existing
            self._entries[key] = LedgerEntry(
                key=key, state="in_flight", tool=tool, started_at=self._clock()
            )
            return None

    async def record(
        self, key: str, content: str | dict[str, Any] | list[Any], *, is_error: bool = False
    ) -> None:
        """See :meth:`IdempotencyLedger.record`."""
        with self._lock:
            now = self._clock()
            entry = self._entries.get(key) or LedgerEntry(
                key=key, state="in_flight", tool="", started_at=now
            )
            self._entries[key] = replace(
                entry, state="done", content=content, is_error=is_error, finished_at=now
            )

    async def forget(self, key: str) -> None:
        """See :meth:`IdempotencyLedger.forget`."""
        with self._lock:
            self._entries.pop(key, None)

    async def sweep(
        self, *, older_than: float = DEFAULT_RETENTION_S, include_in_flight: bool = False
    ) -> int:
        """See :meth:`IdempotencyLedger.sweep`."""
        with self._lock:
            cutoff = self._clock() - older_than
            old = [k for k, e in self._entries.items() if _expired(e, cutoff, include_in_flight)]
            for key in old:
                del self._entries[key]
            return len(old)

    def entries(self) -> list[LedgerEntry]:
        """Every entry, in reservation order."""
        with self._lock:
            return list(self._entries.values())


def _expired(entry: LedgerEntry, cutoff: float, include_in_flight: bool) -> bool:
    if entry.finished_at is not None:
        return entry.finished_at < cutoff
    return include_in_flight and entry.started_at < cutoff


# --------------------------------------------------------------------------------------
# SQLite.


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
