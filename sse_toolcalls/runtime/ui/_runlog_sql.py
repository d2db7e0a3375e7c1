"""The kept events in SQL: the operations of :class:`~.runlog.RunLog`, written once for
SQLite and PostgreSQL (each module gives its own tables and a way to run a transaction).

Two tables: the runs (one row each: its chat, the owner that claimed it, its counts,
when it ended or last wrote) and their events (``(run key, n) -> bytes``). Each
operation is one transaction; the statements use ``?`` placeholders (PostgreSQL's
driver spells them ``%s``). An event is written with its run's new count in the same
transaction, and a reader reads the run's row before its events: once it sees the run
ended, every event up to the count it read is there.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

from .runlog import (
    MAX_READ_EVENTS,
    Bell,
    KeptEvents,
    KeptRun,
    RunDropped,
    RunLimits,
    RunLogError,
    RunLogFull,
)

__all__ = ["EVENTS_TABLE", "RUNS_TABLE", "Execute", "SqlRunLog", "Transactions"]

T = TypeVar("T")

RUNS_TABLE = "sse_toolcalls_ui_runs"
"""One row per kept run."""

EVENTS_TABLE = "sse_toolcalls_ui_run_events"
"""One row per kept event."""

Execute = Callable[[str, Sequence[Any]], Awaitable[list[tuple[Any, ...]]]]
"""Runs one statement of the current transaction; the rows it returned."""


class Transactions(Protocol):
    """A store's way to run one operation as one transaction."""

    async def transaction(
        self, doing: str, operation: Callable[[Execute], Awaitable[T]], *, write: bool = True
    ) -> T:
        """Run ``operation`` in a transaction; commit it, or roll back if it raised.
        ``write=False``: it only reads (a store may then take no write lock).

        Raises:
            RunLogError: the database refused or could not be reached.
        """


class SqlRunLog:
    """The operations of :class:`~.runlog.RunLog` over a :class:`Transactions`."""

    def __init__(
        self, db: Transactions, limits: RunLimits | None, clock: Callable[[], float]
    ) -> None:
        self.limits = limits if limits is not None else RunLimits()
        self.bell = Bell()
        self._db = db
        self._clock = clock

    def _is_ended(self, ended_at: float | None, touched_at: float, now: float) -> bool:
        return ended_at is not None or now - float(touched_at) > self.limits.abandon_seconds

    async def _expire(self, execute: Execute, now: float) -> int:
        due = (
            f"SELECT run_key FROM {RUNS_TABLE} WHERE "
            "(ended_at IS NOT NULL AND ended_at < ?) OR (ended_at IS NULL AND touched_at < ?)"
        )
        keep, abandon = self.limits.keep_seconds, self.limits.abandon_seconds
        params = (now - keep, now - abandon - keep)
        rows = await execute(due, params)
        if not rows:
            return 0
        await execute(f"DELETE FROM {EVENTS_TABLE} WHERE run_key IN ({due})", params)
        await execute(f"DELETE FROM {RUNS_TABLE} WHERE run_key IN ({due})", params)
        return len(rows)

    async def open(self, run_key: str, *, chat_id: str) -> bool:
        """See :meth:`~.runlog.RunLog.open`."""
        # This claim's own mark: tried again after a commit lost with the connection,
        # the claim finds its own row (and still runs the run); any other finds another.
        owner = uuid.uuid4().hex

        async def claim(execute: Execute) -> tuple[bool, list[str]]:
            now = self._clock()
            await self._expire(execute, now)
            rows = await execute(f"SELECT owner FROM {RUNS_TABLE} WHERE run_key = ?", (run_key,))
            if rows:
                return rows[0][0] == owner, []
            [(count,)] = await execute(f"SELECT count(*) FROM {RUNS_TABLE}", ())
            dropped: list[str] = []
            if count >= self.limits.max_runs:
                oldest = f"SELECT run_key FROM {RUNS_TABLE} ORDER BY seq LIMIT ?"
                extra = (int(count) - self.limits.max_runs + 1,)
                dropped = [r[0] for r in await execute(oldest, extra)]
                await execute(f"DELETE FROM {EVENTS_TABLE} WHERE run_key IN ({oldest})", extra)
                await execute(f"DELETE FROM {RUNS_TABLE} WHERE run_key IN ({oldest})", extra)
            # Another worker may claim it at the same moment: the key decides (the later
            # insert waits for the first's commit, then inserts nothing).
            await execute(
                f"INSERT INTO {RUNS_TABLE} (run_key, chat_id, owner, touched_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (run_key) DO NOTHING",
                (run_key, chat_id, owner, now),
            )
            rows = await execute(f"SELECT owner FROM {RUNS_TABLE} WHERE run_key = ?", (run_key,))
            return bool(rows) and rows[0][0] == owner, dropped

        claimed, dropped = await self._db.transaction("open a run", claim)
        for key in dropped:
            self.bell.ring(key)
        return claimed

    async def append(self, run_key: str, n: int, data: bytes, *, event_key: str) -> None:
        """See :meth:`~.runlog.RunLog.append`."""
        limits = self.limits

        async def write(execute: Execute) -> None:
            rows = await execute(
                f"SELECT n_events, n_bytes, ended_at FROM {RUNS_TABLE} WHERE run_key = ?",
                (run_key,),
            )
            if not rows:
                raise RunDropped(f"run {run_key!r} is not kept")
            count, size, ended_at = int(rows[0][0]), int(rows[0][1]), rows[0][2]
            if n == count:
                return  # this very append, committed before a lost connection
            if n != count + 1 or ended_at is not None:
                raise RunLogError(f"run {run_key!r}: event {n} is not its next")
            if n > limits.max_run_events:
                raise RunLogFull(f"run {run_key!r} is past {limits.max_run_events} events")
            if size + len(data) > limits.max_run_bytes:
                raise RunLogFull(f"run {run_key!r} is past {limits.max_run_bytes} bytes")
            await execute(
                f"INSERT INTO {EVENTS_TABLE} (run_key, n, data) VALUES (?, ?, ?)",
                (run_key, n, bytes(data)),
            )
            await execute(
                f"UPDATE {RUNS_TABLE} SET n_events = ?, n_bytes = ?, touched_at = ?, "
                "event_key = COALESCE(event_key, ?) WHERE run_key = ?",
                (n, size + len(data), self._clock(), event_key, run_key),
            )

        await self._db.transaction("keep an event", write)
        self.bell.ring(run_key)

    async def read(self, run_key: str, after: int) -> KeptEvents | None:
        """See :meth:`~.runlog.RunLog.read`."""

        async def fetch(execute: Execute) -> KeptEvents | None:
            rows = await execute(
                f"SELECT n_events, ended_at, touched_at, event_key FROM {RUNS_TABLE} "
                "WHERE run_key = ?",
                (run_key,),
            )
            if not rows:
                return None
            count, ended_at, touched_at, event_key = rows[0]
            events = await execute(
                f"SELECT data FROM {EVENTS_TABLE} WHERE run_key = ? AND n > ? AND n <= ? "
                "ORDER BY n LIMIT ?",
                (run_key, max(after, 0), int(count), MAX_READ_EVENTS),
            )
            return KeptEvents(
                events=tuple(bytes(e[0]) for e in events),
                count=int(count),
                ended=self._is_ended(ended_at, touched_at, self._clock()),
                event_key=event_key,
            )

        return await self._db.transaction("read a run", fetch, write=False)

    async def end(self, run_key: str) -> None:
        """See :meth:`~.runlog.RunLog.end`."""

        async def mark(execute: Execute) -> None:
            await execute(
                f"UPDATE {RUNS_TABLE} SET ended_at = COALESCE(ended_at, ?) WHERE run_key = ?",
                (self._clock(), run_key),
            )

        try:
            await self._db.transaction("end a run", mark)
        finally:
            self.bell.ring(run_key)

    async def latest(self, chat_id: str) -> KeptRun | None:
        """See :meth:`~.runlog.RunLog.latest`."""

        async def find(execute: Execute) -> KeptRun | None:
            now = self._clock()
            await self._expire(execute, now)
            rows = await execute(
                f"SELECT run_key, event_key, n_events, ended_at, touched_at FROM {RUNS_TABLE} "
                "WHERE chat_id = ? ORDER BY seq DESC LIMIT 1",
                (chat_id,),
            )
            if not rows:
                return None
            run_key, event_key, count, ended_at, touched_at = rows[0]
            return KeptRun(
                run_key=run_key,
                event_key=event_key,
                count=int(count),
                ended=self._is_ended(ended_at, touched_at, now),
            )

        return await self._db.transaction("find a chat's run", find)

    async def expire(self) -> int:
        """See :meth:`~.runlog.RunLog.expire`."""
        return await self._db.transaction(
            "expire runs", lambda execute: self._expire(execute, self._clock())
        )
