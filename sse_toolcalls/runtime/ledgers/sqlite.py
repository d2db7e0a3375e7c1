"""The embedded default ledger: one SQLite file in WAL mode, safe across processes and
restarts."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from ..._faces import publish
from ..._jsonsafe import dumps_safe
from ..errors import LedgerError
from .base import DEFAULT_RETENTION_S, LedgerEntry

__all__ = ["BUSY_TIMEOUT_S", "SQLiteLedger"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS idempotency_ledger (
    key TEXT PRIMARY KEY,
    state TEXT NOT NULL CHECK (state IN ('in_flight', 'done')),
    tool TEXT NOT NULL,
    content TEXT,
    is_error INTEGER NOT NULL DEFAULT 0,
    started_at REAL NOT NULL,
    finished_at REAL
)
"""

BUSY_TIMEOUT_S = 5.0
"""How long a statement waits for another process's write lock, in seconds: ledger
writes hold it for about a millisecond, so five seconds only runs out when something is
badly stuck, and then the write is refused rather than run unguarded."""


class SQLiteLedger:
    """The embedded default: one SQLite file, one table, WAL journal.

    Safe across processes (SQLite's file locks make ``reserve`` an atomic insert-if-absent;
    WAL lets readers go on while one process writes) and across restarts (each
    ``reserve`` and ``record`` is committed with ``synchronous=FULL`` before the method
    returns, so a reservation is on disk before the handler starts). One connection per
    object, guarded by a lock.

    **Off the event loop.** SQLite blocks: an fsync per commit, and up to
    ``BUSY_TIMEOUT_S`` waiting for another process's lock. Each async method therefore
    runs its statement in a worker thread (``anyio.to_thread``); a cancellation waits for
    the statement to finish (the thread is never abandoned holding the connection), so a
    reservation is either on disk or not, never half made. The ``*_sync`` twins are the
    same statements for scripts without an event loop.
    """

    def __init__(self, path: str | Path, *, clock: Callable[[], float] = time.time) -> None:
        """Open (creating if needed) the ledger file at ``path``.

        Args:
            path: the database file (``":memory:"`` works but defeats the purpose).
            clock: seconds since the epoch, for the timestamps.

        Raises:
            LedgerError: the file cannot be opened or is not a ledger database.
        """
        self.path = str(path)
        """The database file."""
        self._clock = clock
        self._lock = threading.Lock()
        try:
            # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, so the check and
            # the insert of a reservation are one transaction under the write lock.
            self._db = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute(_SCHEMA)
        except sqlite3.Error as exc:
            raise LedgerError(f"cannot open the ledger at {self.path}: {exc}") from exc

    def __repr__(self) -> str:
        return f"SQLiteLedger({self.path!r})"

    def _row(self, key: str) -> LedgerEntry | None:
        row = self._db.execute(
            "SELECT key, state, tool, content, is_error, started_at, finished_at "
            "FROM idempotency_ledger WHERE key = ?",
            (key,),
        ).fetchone()
        if row is None:
            return None
        content = None if row[3] is None else json.loads(row[3])
        return LedgerEntry(
            key=row[0],
            state=row[1],
            tool=row[2],
            content=content,
            is_error=bool(row[4]),
            started_at=row[5],
            finished_at=row[6],
        )

    async def get(self, key: str) -> LedgerEntry | None:
        """See :meth:`IdempotencyLedger.get`."""
        return await anyio.to_thread.run_sync(self.get_sync, key)

    async def reserve(self, key: str, *, tool: str) -> LedgerEntry | None:
        """See :meth:`IdempotencyLedger.reserve`."""
        return await anyio.to_thread.run_sync(lambda: self.reserve_sync(key, tool=tool))

    async def record(
        self, key: str, content: str | dict[str, Any] | list[Any], *, is_error: bool = False
    ) -> None:
        """See :meth:`IdempotencyLedger.record`."""
        await anyio.to_thread.run_sync(lambda: self.record_sync(key, content, is_error=is_error))

    async def forget(self, key: str) -> None:
        """See :meth:`IdempotencyLedger.forget`."""
        await anyio.to_thread.run_sync(self.forget_sync, key)

    async def sweep(
        self, *, older_than: float = DEFAULT_RETENTION_S, include_in_flight: bool = False
    ) -> int:
        """See :meth:`IdempotencyLedger.sweep`."""
        return await anyio.to_thread.run_sync(
            lambda: self.sweep_sync(older_than=older_than, include_in_flight=include_in_flight)
        )

    def get_sync(self, key: str) -> LedgerEntry | None:
        """:meth:`get`, blocking (for scripts and threads)."""
        with self._lock:
            try:
                return self._row(key)
            except (sqlite3.Error, ValueError) as exc:
                raise LedgerError(f"cannot read the ledger at {self.path}: {exc}") from exc

    def reserve_sync(self, key: str, *, tool: str) -> LedgerEntry | None:
        """:meth:`reserve`, blocking."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    existing = self._row(key)
                    if existing is None:
                        self._db.execute(
                            "INSERT INTO idempotency_ledger (key, state, tool, started_at) "
                            "VALUES (?, 'in_flight', ?, ?)",
                            (key, tool, self._clock()),
                        )
                except BaseException:
                    self._db.execute("ROLLBACK")
                    raise
                self._db.execute("COMMIT")
                return existing
            except (sqlite3.Error, ValueError) as exc:
                raise LedgerError(f"cannot reserve in the ledger at {self.path}: {exc}") from exc

    def record_sync(
        self, key: str, content: str | dict[str, Any] | list[Any], *, is_error: bool = False
    ) -> None:
        """:meth:`record`, blocking."""
        now = self._clock()
        text = dumps_safe(content).decode("utf-8")
        with self._lock:
            try:
                self._db.execute(
                    "INSERT INTO idempotency_ledger "
                    "(key, state, tool, content, is_error, started_at, finished_at) "
                    "VALUES (?, 'done', '', ?, ?, ?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET state = 'done', "
                    "content = excluded.content, is_error = excluded.is_error, "
                    "finished_at = excluded.finished_at",
                    (key, text, int(is_error), now, now),
                )
            except sqlite3.Error as exc:
                raise LedgerError(f"cannot record in the ledger at {self.path}: {exc}") from exc

    def forget_sync(self, key: str) -> None:
        """:meth:`forget`, blocking."""
        with self._lock:
            try:
                self._db.execute("DELETE FROM idempotency_ledger WHERE key = ?", (key,))
            except sqlite3.Error as exc:
                raise LedgerError(f"cannot write the ledger at {self.path}: {exc}") from exc

    def sweep_sync(
        self, *, older_than: float = DEFAULT_RETENTION_S, include_in_flight: bool = False
    ) -> int:
        """:meth:`sweep`, blocking."""
        cutoff = self._clock() - older_than
        with self._lock:
            try:
                cursor = self._db.execute(
                    "DELETE FROM idempotency_ledger WHERE "
                    "(finished_at IS NOT NULL AND finished_at < ?) OR "
                    "(? AND finished_at IS NULL AND started_at < ?)",
                    (cutoff, int(include_in_flight), cutoff),
                )
            except sqlite3.Error as exc:
                raise LedgerError(f"cannot sweep the ledger at {self.path}: {exc}") from exc
            return cursor.rowcount

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()

    async def aclose(self) -> None:
        """Close the database connection (for ``async with``)."""
        await anyio.to_thread.run_sync(self.close)

    def __enter__(self) -> SQLiteLedger:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> SQLiteLedger:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
