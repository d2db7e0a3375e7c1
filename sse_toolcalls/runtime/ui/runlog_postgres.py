"""The kept events in PostgreSQL: workers on many machines share them, so a client may
reconnect to any worker (see :mod:`.runlog`). The project's pool and migrations
(``runtime/_pg.py``), its own tables and schema version (component ``ui_runs``)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import suppress
from typing import Any, TypeVar

import anyio

from .._pg import DEFAULT_ATTEMPTS, DEFAULT_MAX_SIZE, DEFAULT_TIMEOUT_S, Migration, PgPool, Session
from ._runlog_sql import EVENTS_TABLE, RUNS_TABLE, Execute, SqlRunLog
from .runlog import RunLimits, RunLogError

__all__ = ["RUNLOG_MIGRATIONS", "PostgresRunLog"]

T = TypeVar("T")

RUNLOG_MIGRATIONS: tuple[Migration, ...] = (
    (
        1,
        (
            f"CREATE TABLE {RUNS_TABLE} ("
            "seq bigserial PRIMARY KEY, "
            "run_key text NOT NULL UNIQUE, "
            "chat_id text NOT NULL, "
            "owner text NOT NULL, "
            "event_key text, "
            "n_events bigint NOT NULL DEFAULT 0, "
            "n_bytes bigint NOT NULL DEFAULT 0, "
            "ended_at double precision, "
            "touched_at double precision NOT NULL)",
            f"CREATE INDEX {RUNS_TABLE}_chat ON {RUNS_TABLE} (chat_id, seq)",
            f"CREATE TABLE {EVENTS_TABLE} ("
            "run_key text NOT NULL, n bigint NOT NULL, data bytea NOT NULL, "
            "PRIMARY KEY (run_key, n))",
        ),
    ),
)
"""The log's schema, step by step (applied on first use)."""


class _Postgres:
    def __init__(self, pool: PgPool) -> None:
        self.pool = pool

    async def transaction(
        self, doing: str, operation: Callable[[Execute], Awaitable[T]], *, write: bool = True
    ) -> T:
        # A read takes no lock in PostgreSQL either way (``write`` changes nothing).
        async def attempt(session: Session) -> T:
            async def execute(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
                _, rows = await session.execute(sql.replace("?", "%s"), params)
                return rows

            await session.execute("BEGIN")
            try:
                result = await operation(execute)
            except BaseException:
                with anyio.CancelScope(shield=True), suppress(Exception):
                    await session.execute("ROLLBACK")
                raise
            await session.execute("COMMIT")
            return result

        return await self.pool.run(doing, attempt)


class PostgresRunLog(SqlRunLog):
    """A :class:`~.runlog.RunLog` in PostgreSQL (the ``postgres`` extra)."""

    def __init__(
        self,
        dsn: str,
        limits: RunLimits | None = None,
        *,
        min_size: int = 1,
        max_size: int = DEFAULT_MAX_SIZE,
        timeout: float = DEFAULT_TIMEOUT_S,
        attempts: int = DEFAULT_ATTEMPTS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Args: the pool's as :class:`~sse_toolcalls.runtime.PostgresLedger`'s.

        Raises:
            UsageError: a size, ``attempts`` or ``timeout`` out of range.
        """
        self._pg = PgPool(
            dsn,
            what="Postgres run log",
            error=RunLogError,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            attempts=attempts,
            component="ui_runs",
            migrations=RUNLOG_MIGRATIONS,
        )
        super().__init__(_Postgres(self._pg), limits, clock)

    def __repr__(self) -> str:
        return f"PostgresRunLog(max_size={self._pg.max_size})"

    async def aclose(self) -> None:
        """Close the pool."""
        await self._pg.close()

    async def __aenter__(self) -> PostgresRunLog:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
