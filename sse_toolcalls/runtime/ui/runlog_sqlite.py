"""The kept events in a SQLite file (WAL): the workers of one machine share it, so a
client may reconnect to any of them (see :mod:`.runlog`)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from ..ledgers.sqlite import BUSY_TIMEOUT_S
from ._runlog_sql import EVENTS_TABLE, RUNS_TABLE, Execute, SqlRunLog
from .runlog import RunLimits, RunLogError

__all__ = ["SQLiteRunLog"]

T = TypeVar("T")

_SCHEMA = (
    f"CREATE TABLE IF NOT EXISTS {RUNS_TABLE} ("
    "seq INTEGER PRIMARY KEY AUTOINCREMENT, "
    "run_key TEXT NOT NULL UNIQUE, "
    "chat_id TEXT NOT NULL, "
    "owner TEXT NOT NULL, "
    "event_key TEXT, "
    "n_events INTEGER NOT NULL DEFAULT 0, "
    "n_bytes INTEGER NOT NULL DEFAULT 0, "
    "ended_at REAL, "
    "touched_at REAL NOT NULL)",
    f"CREATE INDEX IF NOT EXISTS {RUNS_TABLE}_chat ON {RUNS_TABLE} (chat_id, seq)",
    f"CREATE TABLE IF NOT EXISTS {EVENTS_TABLE} ("
    "run_key TEXT NOT NULL, n INTEGER NOT NULL, data BLOB NOT NULL, "
    "PRIMARY KEY (run_key, n)) WITHOUT ROWID",
)


class _SQLite:
    """One connection; one transaction at a time (an anyio lock: one event loop's),
    each statement in a worker thread."""

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self.db = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            self.db.execute("PRAGMA journal_mode=WAL")
            for statement in _SCHEMA:
                self.db.execute(statement)
        except sqlite3.Error as exc:
            raise RunLogError(f"cannot open the run log at {path}: {exc}") from exc
        self._lock: anyio.Lock | None = None

    def _run(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self.db.execute(sql, params).fetchall()

    async def transaction(
        self, doing: str, operation: Callable[[Execute], Awaitable[T]], *, write: bool = True
    ) -> T:
        if self._lock is None:
            self._lock = anyio.Lock()

        async def execute(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
            return await anyio.to_thread.run_sync(self._run, sql, params)

        async with self._lock:
            try:
                # IMMEDIATE: the write lock first, so two processes claiming the same
                # run take turns instead of both reading "not there". A read takes no
                # lock (WAL): followers polling never hold a drain's write back.
                await execute("BEGIN IMMEDIATE" if write else "BEGIN", ())
                try:
                    result = await operation(execute)
                except BaseException:
                    with anyio.CancelScope(shield=True), suppress(sqlite3.Error):
                        await execute("ROLLBACK", ())
                    raise
                await execute("COMMIT", ())
            except sqlite3.Error as exc:
                raise RunLogError(f"the run log could not {doing}: {exc}") from exc
            return result

    def close(self) -> None:
        self.db.close()


class SQLiteRunLog(SqlRunLog):
    """A :class:`~.runlog.RunLog` in a SQLite file (the same file as the ledger's
    works: its own tables). One instance per event loop; several processes may open
    the same file."""

    def __init__(
        self,
        path: str | Path,
        limits: RunLimits | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Open (creating if needed) the log at ``path``.

        Raises:
            RunLogError: the file cannot be opened or is not a database.
        """
        self.path = str(path)
        """The database file."""
        self._sqlite = _SQLite(self.path)
        super().__init__(self._sqlite, limits, clock)

    def __repr__(self) -> str:
        return f"SQLiteRunLog({self.path!r})"

    def close(self) -> None:
        """Close the database connection."""
        self._sqlite.close()

    def __enter__(self) -> SQLiteRunLog:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
