"""The PostgreSQL plumbing shared by the ledger and the conversation store: a pool on
either anyio backend, retries on a lost connection, and the schema's migrations.

psycopg's own async connections run on asyncio only (psycopg issue 29), so on asyncio
this uses ``psycopg_pool.AsyncConnectionPool`` and on trio the same pool's synchronous
twin, each statement in a worker thread (never abandoned: a statement's answer is
always awaited, so the caller knows what was committed when it can know it). The
callers see one interface, :class:`_Session`, and write each operation once.

psycopg and psycopg_pool are imported here only, on first use (the ``postgres`` extra).
"""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any, TypeVar

import anyio
import anyio.lowlevel
import anyio.to_thread

from .._checks import check_count, check_quantity

__all__ = [
    "DEFAULT_ATTEMPTS",
    "DEFAULT_MAX_SIZE",
    "DEFAULT_TIMEOUT_S",
    "Migration",
    "PgPool",
    "Session",
]

T = TypeVar("T")

DEFAULT_MAX_SIZE = 10
"""Connections one pool may hold: a ledger statement holds one for about a millisecond,
so ten serve hundreds of writes per second per worker, well inside a server's default
``max_connections`` (100) across a few workers."""

DEFAULT_TIMEOUT_S = 10.0
"""Seconds to get a connection from the pool (connecting included): long enough for a
server failing over, short enough that a write is refused (not run) while the user
still waits for an answer."""

DEFAULT_ATTEMPTS = 3
"""Tries of one operation when the connection is lost under it: each operation is
written so that running it again is safe (a reservation carries its owner, a record is
an upsert of the same values), so a dropped connection costs a try, not a guess."""

Row = tuple[Any, ...]

Migration = tuple[int, Sequence[str]]
"""A schema step: the version it brings the component to, and its statements."""

_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]{0,62}")

SCHEMA_TABLE = "sse_toolcalls_schema"
"""One row per component (``ledger``, ``conversations``): the schema version it is at."""


class Session:
    """One connection, autocommit: each statement commits on its own unless inside
    ``BEGIN``/``COMMIT`` the caller issued."""

    def __init__(self, run: Callable[[str, Sequence[Any]], Awaitable[tuple[int, list[Row]]]]):
        self._run = run

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> tuple[int, list[Row]]:
        """Run one statement; its row count and the rows it returned (if any)."""
        return await self._run(sql, params)

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        """Run one statement; its first row, or ``None``."""
        _, rows = await self._run(sql, params)
        return rows[0] if rows else None


class PgPool:
    """A pool opened on first use, on the running backend; closed by :meth:`close`."""

    def __init__(
        self,
        dsn: str,
        *,
        what: str,
        error: Callable[[str], Exception],
        min_size: int = 1,
        max_size: int = DEFAULT_MAX_SIZE,
        timeout: float = DEFAULT_TIMEOUT_S,
        attempts: int = DEFAULT_ATTEMPTS,
        component: str,
        migrations: Sequence[Migration],
    ) -> None:
        check_count("attempts", attempts, minimum=1)
        check_count("min_size", min_size, minimum=1)
        check_count("max_size", max_size, minimum=min_size)
        check_quantity("timeout", timeout, positive=True)
        self.dsn = dsn
        self.what = what
        self.error = error
        self.min_size = min_size
        self.max_size = max_size
        self.timeout = timeout
        self.attempts = attempts
        self.component = component
        self.migrations = tuple(migrations)
        self._pool: Any = None
        self._async = False
        self._loop: Any = None  # the event loop the pool and the lock belong to
        self._lock: anyio.Lock | None = None

    @property
    def version(self) -> int:
        """The schema version this library writes."""
        return self.migrations[-1][0]

    def _imports(self) -> tuple[Any, Any]:
        try:
            import psycopg
            import psycopg_pool
        except ImportError as exc:
            raise self.error(
                f"the {self.what} needs psycopg 3 and psycopg_pool: "
                "pip install 'sse_toolcalls[postgres]'"
            ) from exc
        return psycopg, psycopg_pool

    def _bound_lock(self) -> anyio.Lock:
        """The lock of the running event loop. A pool belongs to the loop that opened
        it: on another loop (a second ``anyio.run``), the old one is dropped unclosed
        (its loop is gone) and a new one is opened."""
        token = anyio.lowlevel.current_token()
        if self._lock is None or self._loop != token:
            self._loop, self._lock, self._pool = token, anyio.Lock(), None
        return self._lock

    async def _open(self) -> None:
        async with self._bound_lock():
            if self._pool is not None:
                return
            psycopg, psycopg_pool = self._imports()
            try:
                asyncio.get_running_loop()
                self._async = True
            except RuntimeError:  # trio: the sync pool, in worker threads
                self._async = False
            kwargs = {"autocommit": True, "connect_timeout": max(1, round(self.timeout))}
            try:
                if self._async:
                    pool = psycopg_pool.AsyncConnectionPool(
                        self.dsn,
                        kwargs=kwargs,
                        min_size=self.min_size,
                        max_size=self.max_size,
                        timeout=self.timeout,
                        open=False,
                    )
                    await pool.open(wait=True, timeout=self.timeout)
                else:
                    pool = psycopg_pool.ConnectionPool(
                        self.dsn,
                        kwargs=kwargs,
                        min_size=self.min_size,
                        max_size=self.max_size,
                        timeout=self.timeout,
                        open=False,
                    )
                    await anyio.to_thread.run_sync(
                        lambda: pool.open(wait=True, timeout=self.timeout)
                    )
            except (psycopg.Error, psycopg_pool.PoolTimeout) as exc:
                raise self.error(
                    f"cannot connect the {self.what}: {exc}{await self._why(psycopg)}"
                ) from exc
            self._pool = pool
            try:
                await self._migrate()
            except BaseException:
                await self._close_pool()
                raise

    async def _why(self, psycopg: Any) -> str:
        """Why one direct connection fails (the pool only says it timed out)."""

        def connect() -> None:
            psycopg.connect(self.dsn, connect_timeout=max(1, round(self.timeout))).close()

        try:
            await anyio.to_thread.run_sync(connect)
        except Exception as exc:
            return f" ({' '.join(str(exc).split())})"
        return ""

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Session]:
        """A connection from the pool, for one operation (opening the pool first)."""
        if self._pool is None or self._loop != anyio.lowlevel.current_token():
            await self._open()
        pool = self._pool
        if self._async:
            async with pool.connection() as conn:

                async def run_async(sql: str, params: Sequence[Any]) -> tuple[int, list[Row]]:
                    cursor = await conn.execute(sql, params)
                    rows = await cursor.fetchall() if cursor.description else []
                    return cursor.rowcount, rows

                yield Session(run_async)
            return
        conn = await anyio.to_thread.run_sync(pool.getconn)
        # Set while no statement runs on ``conn``: a statement cut short (the caller's
        # deadline on a server that stopped answering) is abandoned in its thread, and
        # the connection goes back to the pool only once that thread lets go of it.
        idle = threading.Event()
        idle.set()
        try:

            def run_sync(sql: str, params: Sequence[Any]) -> tuple[int, list[Row]]:
                idle.clear()
                try:
                    cursor = conn.execute(sql, params)
                    rows = cursor.fetchall() if cursor.description else []
                    return cursor.rowcount, rows
                finally:
                    idle.set()

            async def run_thread(sql: str, params: Sequence[Any]) -> tuple[int, list[Row]]:
                return await anyio.to_thread.run_sync(run_sync, sql, params, abandon_on_cancel=True)

            yield Session(run_thread)
        finally:
            if idle.is_set():
                with anyio.CancelScope(shield=True):
                    await anyio.to_thread.run_sync(pool.putconn, conn)
            else:

                def give_back() -> None:
                    idle.wait()
                    pool.putconn(conn)

                threading.Thread(target=give_back, name="pg-give-back", daemon=True).start()

    async def run(self, doing: str, operation: Callable[[Session], Awaitable[T]]) -> T:
        """Run ``operation`` on a pooled connection; on a lost connection, again on a
        fresh one (it must be safe to repeat), up to ``attempts`` times.

        Raises:
            the ``error`` type: the database refused, or stayed unreachable.
        """
        psycopg, psycopg_pool = self._imports()
        last: Exception | None = None
        for attempt in range(self.attempts):
            try:
                async with self.session() as session:
                    return await operation(session)
            except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
                # The connection went (a restart, a failover, pg_terminate_backend) or
                # the pool timed out: the pool drops the broken connection; check the
                # idle ones too, so the next try does not pick another dead one.
                last = exc
                if attempt + 1 < self.attempts and self._pool is not None:
                    await self._check_idle()
            except psycopg.Error as exc:
                raise self.error(f"the {self.what} refused to {doing}: {exc}") from exc
            except psycopg_pool.PoolTimeout as exc:  # pragma: no cover - an OperationalError
                last = exc
        raise self.error(
            f"the {self.what} could not {doing}: the connection was lost "
            f"{self.attempts} times: {last}"
        ) from last

    async def _check_idle(self) -> None:
        try:
            if self._async:
                await self._pool.check()
            else:
                await anyio.to_thread.run_sync(self._pool.check)
        except Exception:
            pass

    async def _migrate(self) -> None:
        """Bring the component's tables to :attr:`version`, one step at a time, in one
        transaction under an advisory lock (workers starting together take turns)."""
        assert _IDENTIFIER.fullmatch(self.component)

        async def migrate(session: Session) -> None:
            await session.execute("BEGIN")
            try:
                # Any fixed number works: every worker of every component takes this one.
                await session.execute("SELECT pg_advisory_xact_lock(7315000015)")
                await session.execute(
                    f"CREATE TABLE IF NOT EXISTS {SCHEMA_TABLE} ("
                    "component text PRIMARY KEY, version integer NOT NULL, "
                    "migrated_at timestamptz NOT NULL DEFAULT now())"
                )
                row = await session.fetchone(
                    f"SELECT version FROM {SCHEMA_TABLE} WHERE component = %s",
                    (self.component,),
                )
                current = 0 if row is None else int(row[0])
                if current > self.version:
                    raise self.error(
                        f"the database's {self.component} schema is version {current}, "
                        f"newer than this library's {self.version}: upgrade sse_toolcalls"
                    )
                for version, statements in self.migrations:
                    if version <= current:
                        continue
                    for statement in statements:
                        await session.execute(statement)
                    await session.execute(
                        f"INSERT INTO {SCHEMA_TABLE} (component, version) VALUES (%s, %s) "
                        "ON CONFLICT (component) DO UPDATE SET version = excluded.version, "
                        "migrated_at = now()",
                        (self.component, version),
                    )
                await session.execute("COMMIT")
            except BaseException:
                with anyio.CancelScope(shield=True):
                    with suppress(Exception):
                        await session.execute("ROLLBACK")
                raise

        psycopg, _ = self._imports()
        try:
            async with self.session() as session:
                await migrate(session)
        except psycopg.Error as exc:
            raise self.error(f"cannot migrate the {self.what}'s schema: {exc}") from exc

    async def schema_version(self) -> int:
        """The component's schema version in the database."""

        async def read(session: Session) -> int:
            row = await session.fetchone(
                f"SELECT version FROM {SCHEMA_TABLE} WHERE component = %s", (self.component,)
            )
            return 0 if row is None else int(row[0])

        return await self.run("read its schema version", read)

    async def _close_pool(self) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        with anyio.CancelScope(shield=True):
            if self._async:
                await pool.close()
            else:
                await anyio.to_thread.run_sync(pool.close)

    async def close(self) -> None:
        """Close the pool (a later operation opens a new one)."""
        async with self._bound_lock():
            await self._close_pool()
