"""The kept events' protocol, held by all three logs alike (memory, SQLite, PostgreSQL):
claims, appends and reads, the bounds with their typed errors, expiry by a clock,
and two instances of a shared store seeing one another's runs (issue 32, item 4)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import pytest

from sse_toolcalls.runtime.ui.runlog import (
    MAX_READ_EVENTS,
    MemoryRunLog,
    RunDropped,
    RunLimits,
    RunLog,
    RunLogError,
    RunLogFull,
)
from sse_toolcalls.runtime.ui.runlog_sqlite import SQLiteRunLog

pytestmark = pytest.mark.anyio

Make = Callable[..., RunLog]
"""A log of the kind under test: ``make(limits=None, clock=None)``, one store."""


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def make(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Make]:
    kind = request.param
    opened: list[RunLog] = []
    memory: list[MemoryRunLog] = []
    dsn = request.getfixturevalue("postgres_dsn") if kind == "postgres" else ""

    def make(limits: RunLimits | None = None, clock: Clock | None = None) -> RunLog:
        clock = clock if clock is not None else Clock()
        log: RunLog
        if kind == "memory":
            # One store per test: a second "instance" is the same object.
            if not memory:
                memory.append(MemoryRunLog(limits, clock=clock))
            log = memory[0]
        elif kind == "sqlite":
            log = SQLiteRunLog(tmp_path / "runs.db", limits, clock=clock)
        else:
            from sse_toolcalls.runtime.ui.runlog_postgres import PostgresRunLog

            log = PostgresRunLog(dsn, limits, clock=clock)
        opened.append(log)
        return log

    yield make
    for log in opened:
        if isinstance(log, SQLiteRunLog):
            log.close()
        elif not isinstance(log, MemoryRunLog):
            await log.aclose()  # type: ignore[attr-defined]


def events(rng: random.Random, n: int) -> list[bytes]:
    # Any bytes: NUL, invalid UTF-8, empty-looking lines; the log keeps them as given.
    return [rng.randbytes(rng.randrange(0, 300)) + b"\x00\xff\n" for _ in range(n)]


async def test_a_run_is_claimed_once_and_read_back_from_any_place(make: Make) -> None:
    log = make()
    assert await log.open("r1", chat_id="c") is True
    assert await log.open("r1", chat_id="c") is False
    assert await make().open("r1", chat_id="c") is False  # another worker attaches
    rng = random.Random(32)
    kept = events(rng, MAX_READ_EVENTS + 40)
    for n, data in enumerate(kept, 1):
        await log.append("r1", n, data, event_key="msg")
    for after in sorted({0, 1, 7, MAX_READ_EVENTS, len(kept) - 1, len(kept), len(kept) + 5}):
        found = await make().read("r1", after)
        assert found is not None and not found.ended and found.event_key == "msg"
        assert found.events == tuple(kept[after : after + MAX_READ_EVENTS])
        assert found.count == len(kept)
    await log.end("r1")
    other = make()
    found = await other.read("r1", len(kept))
    assert found is not None and found.ended and found.events == ()
    latest = await other.latest("c")
    assert latest is not None and (latest.run_key, latest.count, latest.ended) == (
        "r1",
        len(kept),
        True,
    )
    assert await other.latest("another chat") is None
    assert await other.read("unknown", 0) is None


async def test_appends_out_of_order_or_after_the_end_are_refused(make: Make) -> None:
    log = make()
    await log.open("r", chat_id="c")
    with pytest.raises(RunLogError):
        await log.append("r", 2, b"x", event_key="k")
    await log.append("r", 1, b"x", event_key="k")
    with pytest.raises(RunLogError):
        await log.append("r", 3, b"x", event_key="k")
    await log.end("r")
    with pytest.raises(RunLogError):
        await log.append("r", 2, b"x", event_key="k")
    with pytest.raises(RunDropped):
        await log.append("never opened", 1, b"x", event_key="k")


async def test_the_events_and_bytes_bounds_refuse_with_run_log_full(make: Make) -> None:
    log = make(RunLimits(max_run_events=3, max_run_bytes=10))
    await log.open("a", chat_id="c")
    for n in (1, 2, 3):
        await log.append("a", n, b"x", event_key="k")
    with pytest.raises(RunLogFull):
        await log.append("a", 4, b"x", event_key="k")
    await log.open("b", chat_id="c")
    await log.append("b", 1, b"x" * 10, event_key="k")
    with pytest.raises(RunLogFull):
        await log.append("b", 2, b"y", event_key="k")
    found = await log.read("b", 0)
    assert found is not None and found.events == (b"x" * 10,)


async def test_past_the_runs_bound_the_oldest_runs_go_first(make: Make) -> None:
    log = make(RunLimits(max_runs=3))
    for i in range(5):
        assert await log.open(f"r{i}", chat_id=f"c{i % 4}")
    assert [await log.read(f"r{i}", 0) is None for i in range(5)] == [
        True,
        True,
        False,
        False,
        False,
    ]
    assert await log.latest("c1") is None
    latest = await log.latest("c0")
    assert latest is not None and latest.run_key == "r4"  # the chat's later run
    with pytest.raises(RunDropped):
        await log.append("r0", 1, b"x", event_key="k")


async def test_a_run_is_kept_its_time_after_its_end_and_a_silent_one_is_abandoned(
    make: Make,
) -> None:
    clock = Clock()
    log = make(RunLimits(keep_seconds=10, abandon_seconds=100), clock)
    await log.open("done", chat_id="c1")
    await log.end("done")
    await log.open("silent", chat_id="c2")
    await log.append("silent", 1, b"x", event_key="k")
    clock.now += 10
    assert await log.expire() == 0
    clock.now += 1
    assert await log.expire() == 1
    assert await log.latest("c1") is None
    clock.now += 90  # 101 s after the last write: it reads as ended
    found = await log.read("silent", 0)
    assert found is not None and found.ended
    clock.now += 10
    assert await log.expire() == 1
    assert await log.read("silent", 0) is None


async def test_racing_claims_of_one_run_give_one_owner(make: Make) -> None:
    logs = [make() for _ in range(4)]
    won: list[bool] = []

    async def claim(log: RunLog) -> None:
        won.append(await log.open("race", chat_id="c"))

    async with anyio.create_task_group() as group:
        for log in logs:
            group.start_soon(claim, log)
    assert sorted(won) == [False, False, False, True]


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, None])
def test_the_limits_are_checked(bad: object) -> None:
    from sse_toolcalls import UsageError

    for name in ("max_runs", "max_run_events", "max_run_bytes"):
        with pytest.raises(UsageError):
            RunLimits(**{name: bad})  # type: ignore[arg-type]
    for name in ("keep_seconds", "abandon_seconds"):
        if bad == 2.5:
            continue  # a fine number of seconds
        with pytest.raises(UsageError):
            RunLimits(**{name: bad})  # type: ignore[arg-type]


def test_a_file_that_is_no_database_is_a_run_log_error(tmp_path: Path) -> None:
    path = tmp_path / "not.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(RunLogError):
        SQLiteRunLog(path)
