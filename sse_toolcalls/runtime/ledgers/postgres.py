"""The idempotency ledger on PostgreSQL: one truth for many workers on many machines
(the conversation store's twin is ``stores/postgres.py``; both on ``runtime/_pg.py``).

A retried user request can land on another worker than its first attempt; the
promise that a write never runs twice then needs one store all workers share, which a
SQLite file on one machine cannot be. :class:`PostgresLedger` is that store, on psycopg
3 and its connection pool (the ``postgres`` extra: ``pip install
'sse_toolcalls[postgres]'``).

- **One atomic reservation.** ``INSERT ... ON CONFLICT (key) DO NOTHING RETURNING``:
  of two workers racing on one key, exactly one gets the row back and runs the write;
  the other reads the entry and replays it, or reports it in flight.
- **A lost connection never runs anything twice.** Each reservation carries an owner
  token (a random id made per call). When the connection drops under the ``INSERT``
  (a restart, a failover, ``pg_terminate_backend``), nobody can tell whether it
  committed, so the statement is tried again on a fresh connection: a conflict on a
  row with our token means our first try did commit, and we hold it; another token
  means another worker does. When the database stays unreachable, ``reserve`` raises
  :class:`~sse_toolcalls.runtime.errors.LedgerError` and the write does not run (if our lost
  try had committed, the key stays in flight: a re-submitted request reports "may
  have run", never runs it). ``record`` is an upsert of the same values, so it is
  tried again the same way; if it never gets through, the key stays in flight.
- **A schema with a version.** ``sse_toolcalls_schema`` holds each component's version;
  on first use the ledger brings its table up to :data:`SCHEMA_VERSION` one step at a
  time, in one transaction under an advisory lock, so workers starting together take
  turns, and a database newer than the library is refused.
- **Retention**: :meth:`PostgresLedger.sweep` deletes done rows older than
  ``DEFAULT_RETENTION_S`` (30 days; indexed), keeping rows in flight unless told. Run it
  from a scheduled job (one worker, daily is plenty).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import Any

from ..._faces import publish
from ..._jsonsafe import dumps_safe
from .._pg import DEFAULT_ATTEMPTS, DEFAULT_MAX_SIZE, DEFAULT_TIMEOUT_S, Migration, PgPool, Row
from ..errors import LedgerError
from ..ledgers.base import DEFAULT_RETENTION_S, LedgerEntry

__all__ = ["LEDGER_TABLE", "MIGRATIONS", "SCHEMA_VERSION", "PostgresLedger"]

LEDGER_TABLE = "sse_toolcalls_ledger"
"""The ledger's table."""

MIGRATIONS: tuple[Migration, ...] = (
    (
        1,
        (
            f"CREATE TABLE {LEDGER_TABLE} ("
            "key text PRIMARY KEY, "
            "state text NOT NULL CHECK (state IN ('in_flight', 'done')), "
            "tool text NOT NULL, "
            "content text, "
            "is_error boolean NOT NULL DEFAULT false, "
            "started_at double precision NOT NULL, "
            "finished_at double precision)",
        ),
    ),
    (
        # The owner token (a lost connection's reservation recognised as our own) and
        # the sweep's indexes (a full scan per sweep grows with every write ever made).
        2,
        (
            f"ALTER TABLE {LEDGER_TABLE} ADD COLUMN owner text",
            f"CREATE INDEX {LEDGER_TABLE}_finished ON {LEDGER_TABLE} (finished_at) "
            "WHERE finished_at IS NOT NULL",
            f"CREATE INDEX {LEDGER_TABLE}_in_flight ON {LEDGER_TABLE} (started_at) "
            "WHERE finished_at IS NULL",
        ),
    ),
)

SCHEMA_VERSION = MIGRATIONS[-1][0]
"""The ledger schema this library writes (a database at an older one is migrated)."""

_COLUMNS = "key, state, tool, content, is_error, started_at, finished_at, owner"

_RESERVE_ROUNDS = 3
"""Rounds of insert-then-read in one reservation: a round only repeats when the row was
forgotten between our insert's conflict and our read, which a person does rarely."""


class PostgresLedger:
    """An :class:`~.base.IdempotencyLedger` on PostgreSQL (many workers, one truth).

    The pool is opened (and the schema migrated) on first use, on whichever anyio
    backend runs it (asyncio: psycopg's async pool; trio: its sync pool in worker
    threads); use one ledger object per event loop, and close it with :meth:`aclose`
    or ``async with``.
    """

    def __init__(
        self,
        dsn: str,
        *,
        min_size: int = 1,
        max_size: int = DEFAULT_MAX_SIZE,
        timeout: float = DEFAULT_TIMEOUT_S,
        attempts: int = DEFAULT_ATTEMPTS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Args:
            dsn: a libpq connection string or URI
                (``"postgresql://app@db.internal/agents"``; the password from
                ``PGPASSWORD`` or ``~/.pgpass`` rather than in code).
            min_size: connections kept open.
            max_size: connections at most (``DEFAULT_MAX_SIZE``).
            timeout: seconds to get a connection (``DEFAULT_TIMEOUT_S``).
            attempts: tries of one operation across lost connections.
            clock: seconds since the epoch, for the timestamps and the sweep.

        Raises:
            UsageError: a size, ``attempts`` or ``timeout`` that is not a number in
                range (``min_size`` at least 1 and at most ``max_size``).
        """
        self._pg = PgPool(
            dsn,
            what="Postgres ledger",
            error=LedgerError,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            attempts=attempts,
            component="ledger",
            migrations=MIGRATIONS,
        )
        self._clock = clock

    def __repr__(self) -> str:
        return f"PostgresLedger(max_size={self._pg.max_size})"

    @staticmethod
    def _entry(row: Row) -> LedgerEntry:
        return LedgerEntry(
            key=row[0],
            state=row[1],
            tool=row[2],
            content=None if row[3] is None else _loads(row[3]),
            is_error=bool(row[4]),
            started_at=float(row[5]),
            finished_at=None if row[6] is None else float(row[6]),
        )

    async def get(self, key: str) -> LedgerEntry | None:
        """See :meth:`~.base.IdempotencyLedger.get`."""
        row = await self._pg.run(
            "read an entry",
            lambda s: s.fetchone(f"SELECT {_COLUMNS} FROM {LEDGER_TABLE} WHERE key = %s", (key,)),
        )
        return None if row is None else self._entry(row)

    async def reserve(self, key: str, *, tool: str) -> LedgerEntry | None:
        """See :meth:`~.base.IdempotencyLedger.reserve`: one atomic insert-if-absent;
        a lost connection is tried again, and a row with this call's own owner token
        is this call's reservation."""
        owner = uuid.uuid4().hex
        started = self._clock()

        async def reserve(session: Any) -> LedgerEntry | None:
            for _ in range(_RESERVE_ROUNDS):
                won = await session.fetchone(
                    f"INSERT INTO {LEDGER_TABLE} (key, state, tool, started_at, owner) "
                    "VALUES (%s, 'in_flight', %s, %s, %s) "
                    "ON CONFLICT (key) DO NOTHING RETURNING key",
                    (key, tool, started, owner),
                )
                if won is not None:
                    return None
                row = await session.fetchone(
                    f"SELECT {_COLUMNS} FROM {LEDGER_TABLE} WHERE key = %s", (key,)
                )
                if row is None:
                    continue  # forgotten between the two statements: try again
                if row[7] == owner and row[1] == "in_flight":
                    return None  # our own insert, whose answer the lost connection ate
                return self._entry(row)
            raise LedgerError(f"the key {key} kept disappearing while being reserved")

        return await self._pg.run("reserve a key", reserve)

    async def record(
        self, key: str, content: str | dict[str, Any] | list[Any], *, is_error: bool = False
    ) -> None:
        """See :meth:`~.base.IdempotencyLedger.record`: an upsert of fixed values, so
        trying it again after a lost connection is safe."""
        now = self._clock()
        text = dumps_safe(content).decode("utf-8")
        await self._pg.run(
            "record a result",
            lambda s: s.execute(
                f"INSERT INTO {LEDGER_TABLE} "
                "(key, state, tool, content, is_error, started_at, finished_at) "
                "VALUES (%s, 'done', '', %s, %s, %s, %s) "
                "ON CONFLICT (key) DO UPDATE SET state = 'done', "
                "content = excluded.content, is_error = excluded.is_error, "
                "finished_at = excluded.finished_at",
                (key, text, is_error, now, now),
            ),
        )

    async def forget(self, key: str) -> None:
        """See :meth:`~.base.IdempotencyLedger.forget`."""
        await self._pg.run(
            "forget a key",
            lambda s: s.execute(f"DELETE FROM {LEDGER_TABLE} WHERE key = %s", (key,)),
        )

    async def sweep(
        self, *, older_than: float = DEFAULT_RETENTION_S, include_in_flight: bool = False
    ) -> int:
        """See :meth:`~.base.IdempotencyLedger.sweep`."""
        cutoff = self._clock() - older_than

        async def sweep(session: Any) -> int:
            count, _ = await session.execute(
                f"DELETE FROM {LEDGER_TABLE} WHERE finished_at IS NOT NULL AND finished_at < %s",
                (cutoff,),
            )
            if include_in_flight:
                more, _ = await session.execute(
                    f"DELETE FROM {LEDGER_TABLE} WHERE finished_at IS NULL AND started_at < %s",
                    (cutoff,),
                )
                count += more
            return int(count)

        return await self._pg.run("sweep old entries", sweep)

    async def schema_version(self) -> int:
        """The ledger's schema version in the database (after migrating it).

        Raises:
            LedgerError: the database cannot be reached.
        """
        return await self._pg.schema_version()

    async def aclose(self) -> None:
        """Close the pool (a later call opens a new one)."""
        await self._pg.close()

    async def __aenter__(self) -> PostgresLedger:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _loads(text: str) -> Any:
    return json.loads(text)


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
