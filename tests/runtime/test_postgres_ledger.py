"""The Postgres ledger against a real server (the session's throwaway cluster), on
asyncio (psycopg's async pool) and trio (its sync pool in worker threads)."""

from __future__ import annotations

import time
from typing import Any

import anyio
import anyio.to_thread
import pytest

from sse_toolcalls.calls import ToolCall
from sse_toolcalls.runtime import _pg
from sse_toolcalls.runtime.dispatch import Dispatcher
from sse_toolcalls.runtime.errors import LedgerError
from sse_toolcalls.runtime.ledgers.base import DEFAULT_RETENTION_S, IdempotencyLedger
from sse_toolcalls.runtime.ledgers.postgres import LEDGER_TABLE, SCHEMA_VERSION, PostgresLedger
from sse_toolcalls.runtime.tools import ToolRegistry

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def sql(dsn: str, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """One statement on a connection of its own (the test's view of the database)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        cursor = conn.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


async def test_the_protocol_reserve_record_forget(postgres_dsn: str) -> None:
    async with PostgresLedger(postgres_dsn, clock=lambda: 100.0) as ledger:
        assert isinstance(ledger, IdempotencyLedger)
        assert await ledger.get("k") is None
        assert await ledger.reserve("k", tool="pay") is None
        pending = await ledger.get("k")
        assert pending is not None
        assert (pending.state, pending.tool, pending.started_at) == ("in_flight", "pay", 100.0)
        again = await ledger.reserve("k", tool="pay")
        assert again is not None and again.state == "in_flight"
        await ledger.record("k", {"paid": 10, "big": 12345678901234567890123}, is_error=True)
        done = await ledger.get("k")
        assert done is not None
        assert (done.state, done.content, done.is_error, done.finished_at) == (
            "done",
            {"paid": 10, "big": 12345678901234567890123},
            True,
            100.0,
        )
        await ledger.forget("k")
        assert await ledger.get("k") is None
        assert await ledger.schema_version() == SCHEMA_VERSION


async def test_racing_workers_get_exactly_one_reservation(postgres_dsn: str) -> None:
    ledgers = [PostgresLedger(postgres_dsn) for _ in range(8)]
    winners: list[int] = []

    async def contend(n: int) -> None:
        if await ledgers[n].reserve("contended", tool="pay") is None:
            winners.append(n)

    for ledger in ledgers:  # open the pools (and migrate) first, so that they race
        await ledger.get("warm-up")
    async with anyio.create_task_group() as group:
        for n in range(len(ledgers)):
            group.start_soon(contend, n)
    for ledger in ledgers:
        await ledger.aclose()
    assert len(winners) == 1


async def test_the_sweep_keeps_writes_that_may_have_run(postgres_dsn: str) -> None:
    clock = Clock()
    async with PostgresLedger(postgres_dsn, clock=clock) as ledger:
        await ledger.reserve("old-done", tool="t")
        await ledger.record("old-done", "ok")
        await ledger.reserve("old-in-flight", tool="t")
        clock.now += DEFAULT_RETENTION_S + 1
        await ledger.reserve("recent", tool="t")
        await ledger.record("recent", "ok")
        assert await ledger.sweep() == 1
        assert await ledger.get("old-done") is None
        assert await ledger.get("old-in-flight") is not None
        assert await ledger.sweep(include_in_flight=True) == 1
        assert await ledger.get("recent") is not None


async def test_a_version_1_schema_is_migrated_with_its_rows(postgres_dsn: str) -> None:
    sql(
        postgres_dsn,
        "CREATE TABLE sse_toolcalls_schema (component text PRIMARY KEY, "
        "version integer NOT NULL, migrated_at timestamptz NOT NULL DEFAULT now())",
    )
    sql(postgres_dsn, "INSERT INTO sse_toolcalls_schema (component, version) VALUES ('ledger', 1)")
    for statement in __import__(
        "sse_toolcalls.runtime.ledgers.postgres"
    ).runtime.ledgers.postgres.MIGRATIONS[0][1]:
        sql(postgres_dsn, statement)
    sql(
        postgres_dsn,
        f"INSERT INTO {LEDGER_TABLE} (key, state, tool, content, started_at, finished_at) "
        "VALUES ('old', 'done', 'pay', '\"paid\"', 1, 2)",
    )
    async with PostgresLedger(postgres_dsn) as ledger:
        old = await ledger.get("old")
        assert old is not None and (old.state, old.content) == ("done", "paid")
        assert await ledger.schema_version() == SCHEMA_VERSION == 2
    columns = {r[0] for r in sql(
        postgres_dsn,
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s",
        (LEDGER_TABLE,),
    )}  # fmt: skip
    assert "owner" in columns


async def test_a_database_newer_than_the_library_is_refused(postgres_dsn: str) -> None:
    async with PostgresLedger(postgres_dsn) as ledger:
        await ledger.get("k")
    sql(postgres_dsn, "UPDATE sse_toolcalls_schema SET version = 99 WHERE component = 'ledger'")
    async with PostgresLedger(postgres_dsn) as ledger:
        with pytest.raises(LedgerError, match="version 99, newer"):
            await ledger.get("k")


async def test_dropped_connections_are_replaced_and_nothing_is_guessed(
    postgres_dsn: str,
) -> None:
    async with PostgresLedger(postgres_dsn, min_size=2, max_size=2) as ledger:
        await ledger.reserve("a", tool="pay")
        killed = sql(
            postgres_dsn,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        assert killed, "the ledger's connections were found and dropped"
        await ledger.record("a", "ok")  # on a fresh connection
        entry = await ledger.get("a")
        assert entry is not None and entry.state == "done"


async def test_a_reservation_whose_answer_was_lost_is_still_ours(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The INSERT commits, then the connection dies before its answer: the try on a
    fresh connection finds the row with this call's owner token, so the call holds
    the reservation (it is not refused, and nobody else can take it)."""
    import psycopg

    real = _pg.Session.fetchone
    lost: list[str] = []

    async def fetchone(self: _pg.Session, statement: str, params: Any = ()) -> Any:
        row = await real(self, statement, params)
        if statement.startswith("INSERT") and not lost:
            lost.append(statement)
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        return row

    async with PostgresLedger(postgres_dsn) as ledger, PostgresLedger(postgres_dsn) as other:
        await ledger.get("warm-up")
        monkeypatch.setattr(_pg.Session, "fetchone", fetchone)
        assert await ledger.reserve("k", tool="pay") is None
        assert lost, "the answer of the first insert was lost"
        theirs = await other.reserve("k", tool="pay")
        assert theirs is not None and theirs.state == "in_flight"


async def test_an_unreachable_database_refuses_the_write(tmp_path: Any) -> None:
    registry = ToolRegistry()
    ran: list[str] = []

    @registry.register(effect="write")
    def pay(to: str) -> str:
        """Pay someone."""
        ran.append(to)
        return "paid"

    dsn = f"host={tmp_path} user=nobody dbname=none"  # no server listens there
    ledger = PostgresLedger(dsn, timeout=1.0, attempts=2)
    call = ToolCall(name="pay", args={"to": "bob"}, provider="openai_chat", call_id="c", index=0)
    reports = await Dispatcher(registry, ledger=ledger).dispatch([call])
    assert ran == []
    assert reports[0].outcome == "ledger_error"
    with pytest.raises(LedgerError):
        await ledger.get("k")
    await ledger.aclose()


async def test_a_waiting_statement_never_blocks_the_event_loop(postgres_dsn: str) -> None:
    """Another connection locks the table for 0.4 s: the reservation waits for it,
    and a heartbeat task ticking every 10 ms keeps ticking meanwhile."""
    import psycopg

    async with PostgresLedger(postgres_dsn) as ledger:
        await ledger.get("warm-up")
        holder = psycopg.connect(postgres_dsn, autocommit=True)
        holder.execute("BEGIN")
        holder.execute(f"LOCK TABLE {LEDGER_TABLE} IN ACCESS EXCLUSIVE MODE")
        gaps: list[float] = []
        done = anyio.Event()

        async def heartbeat() -> None:
            last = time.perf_counter()
            while not done.is_set():
                await anyio.sleep(0.01)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        def release() -> None:
            time.sleep(0.4)
            holder.execute("COMMIT")

        async with anyio.create_task_group() as group:
            group.start_soon(heartbeat)
            group.start_soon(anyio.to_thread.run_sync, release)
            await anyio.sleep(0.02)
            started = time.perf_counter()
            assert await ledger.reserve("k", tool="t") is None
            waited = time.perf_counter() - started
            done.set()
        holder.close()
    assert waited > 0.3, "the reservation really waited for the lock"
    assert max(gaps) < 0.2, f"the loop stalled for {max(gaps):.3f} s"


def test_one_ledger_serves_one_event_loop_after_another(postgres_dsn: str) -> None:
    """A pool belongs to its loop: on the next ``anyio.run`` (even on another backend)
    the ledger opens a new one instead of failing with a foreign loop's lock."""
    ledger = PostgresLedger(postgres_dsn)

    async def write(key: str) -> str | None:
        assert await ledger.reserve(key, tool="pay") is None
        await ledger.record(key, "ok")
        entry = await ledger.get(key)
        return None if entry is None else entry.state

    assert anyio.run(write, "first", backend="asyncio") == "done"
    assert anyio.run(write, "second", backend="trio") == "done"

    async def close() -> None:
        await ledger.aclose()

    anyio.run(close)


async def test_a_missing_server_is_named_in_the_error(tmp_path: Any) -> None:
    ledger = PostgresLedger(f"host={tmp_path} dbname=none", timeout=1.0, attempts=1)
    with pytest.raises(LedgerError, match="No such file or directory"):
        await ledger.get("k")
