"""Two copies of one request racing (issue 29, item 17): the copy that finds the key in
flight waits, within ``in_flight_wait``, for the owner's result and replays it; it says
"this action may have run" only when the owner is gone (its timeout and the record's
deadline passed since the reservation) or the wait bound passed. Counted in ledger reads
and outcomes, never in time: the short waits below are bounds, not measurements."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from sse_toolcalls.calls import ToolCall
from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime.dispatch import Dispatcher
from sse_toolcalls.runtime.ledgers.base import LedgerEntry
from sse_toolcalls.runtime.ledgers.memory import InMemoryLedger
from sse_toolcalls.runtime.ledgers.sqlite import SQLiteLedger
from sse_toolcalls.runtime.report import CallReport
from sse_toolcalls.runtime.tools import ToolRegistry

pytestmark = pytest.mark.anyio

GUARD = 60.0
"""Seconds after which a test counts as hung."""


def _call(call_id: str, to: str = "bob") -> ToolCall:
    return ToolCall(name="pay", args={"to": to}, provider="anthropic", call_id=call_id, index=0)


class CountingLedger(InMemoryLedger):
    """Counts ``get`` calls; ``looked`` is set once ``get`` was called ``after`` times."""

    def __init__(self, after: int = 0, **options: Any) -> None:
        super().__init__(**options)
        self.gets = 0
        self.after = after
        self.looked = anyio.Event()

    async def get(self, key: str) -> LedgerEntry | None:
        self.gets += 1
        if self.gets >= self.after:
            self.looked.set()
        return await super().get(key)


async def test_the_loser_replays_the_winners_result_once_it_lands() -> None:
    # The winner stays inside its write until the loser has looked at the key three
    # times (its first look, then two while waiting): deterministic, no timing.
    ledger = CountingLedger(after=3)
    executed: list[str] = []
    inside = anyio.Event()
    registry = ToolRegistry()

    @registry.register(effect="write")
    async def pay(to: str) -> str:
        """Pay someone."""
        executed.append(to)
        inside.set()
        await ledger.looked.wait()
        return f"paid {to}"

    winner = Dispatcher(registry, ledger=ledger)
    loser = Dispatcher(registry, ledger=ledger)
    reports: dict[str, CallReport] = {}

    async def first() -> None:
        (reports["winner"],) = await winner.dispatch([_call("a")], request_id="r1")

    async def second() -> None:
        (reports["loser"],) = await loser.dispatch([_call("b")], request_id="r1")

    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as group:
            group.start_soon(first)
            await inside.wait()
            ledger.gets = 0  # the winner's own look does not count
            group.start_soon(second)
    assert executed == ["bob"]
    assert reports["winner"].outcome == "ok"
    assert reports["loser"].outcome == "replayed", reports["loser"]
    assert reports["loser"].result.content["result"] == "paid bob"  # type: ignore[call-overload, index]
    assert reports["loser"].call.call_id == "b"


async def test_forty_raced_requests_on_sqlite_each_run_once_and_none_says_may_have_run(
    tmp_path: Path,
) -> None:
    """Two workers (each its own SQLite connection to one file), every request given to
    both at once: 40 of 40 saw "may have run" somewhere before the wait."""
    executed: list[str] = []
    registry = ToolRegistry()

    @registry.register(effect="write")
    async def pay(to: str) -> str:
        """Pay someone."""
        executed.append(to)
        await anyio.sleep(0.05)  # a write takes a while: the twin arrives meanwhile
        return f"paid {to}"

    path = tmp_path / "ledger.db"
    with SQLiteLedger(path) as one, SQLiteLedger(path) as two:
        workers = [Dispatcher(registry, ledger=one), Dispatcher(registry, ledger=two)]
        outcomes: dict[int, list[str]] = {n: [] for n in range(40)}

        async def submit(worker: Dispatcher, n: int) -> None:
            (report,) = await worker.dispatch([_call(f"c{n}", f"user{n}")], request_id=f"r{n}")
            outcomes[n].append(report.outcome)

        with anyio.fail_after(GUARD):
            async with anyio.create_task_group() as group:
                for n in range(40):
                    for worker in workers:
                        group.start_soon(submit, worker, n)
    assert sorted(executed) == sorted(f"user{n}" for n in range(40))
    assert all(sorted(o) == ["ok", "replayed"] for o in outcomes.values()), outcomes


async def test_an_owner_long_gone_is_reported_at_once() -> None:
    # Reserved an hour ago by the ledger's clock: the tool's timeout and the record's
    # deadline have passed, so nobody will record it; one look, no wait.
    ledger = CountingLedger(clock=lambda: 0.0)
    registry = ToolRegistry()
    registry.register(effect="write", timeout=5)(_never_runs)
    dispatcher = Dispatcher(registry, ledger=ledger, in_flight_wait=GUARD)
    key = dispatcher._keys([registry.check(_call("a"))], "r1")[0]
    assert key is not None
    await ledger.reserve(key, tool="pay")
    with anyio.fail_after(GUARD):
        (report,) = await dispatcher.dispatch([_call("a")], request_id="r1")
    assert report.outcome == "unconfirmed"
    assert ledger.gets == 1


@pytest.mark.parametrize("skew", [0.0, 3600.0], ids=["same_clock", "owner_an_hour_ahead"])
async def test_an_owner_that_never_records_is_reported_once_the_wait_bound_passed(
    skew: float,
) -> None:
    # The winner crashed mid-write just now (or its clock runs an hour ahead of ours):
    # the loser waits, looking again and again, and gives up at the bound.
    ledger = CountingLedger(clock=lambda: time.time() + skew)
    registry = ToolRegistry()
    registry.register(effect="write")(_never_runs)
    dispatcher = Dispatcher(registry, ledger=ledger, in_flight_wait=0.3)
    key = dispatcher._keys([registry.check(_call("a"))], "r1")[0]
    assert key is not None
    await ledger.reserve(key, tool="pay")
    with anyio.fail_after(GUARD):
        (report,) = await dispatcher.dispatch([_call("a")], request_id="r1")
    assert report.outcome == "unconfirmed"
    assert report.result.content["error"] == "write_unconfirmed"  # type: ignore[call-overload, index]
    assert ledger.gets > 1


async def test_a_ledger_failing_during_the_wait_ends_it_as_may_have_run() -> None:
    class Failing(CountingLedger):
        async def get(self, key: str) -> LedgerEntry | None:
            entry = await super().get(key)
            if self.gets > 1:
                raise RuntimeError("connection lost")
            return entry

    ledger = Failing()
    registry = ToolRegistry()
    registry.register(effect="write")(_never_runs)
    dispatcher = Dispatcher(registry, ledger=ledger, in_flight_wait=GUARD)
    key = dispatcher._keys([registry.check(_call("a"))], "r1")[0]
    assert key is not None
    await ledger.reserve(key, tool="pay")
    with anyio.fail_after(GUARD):
        (report,) = await dispatcher.dispatch([_call("a")], request_id="r1")
    assert report.outcome == "unconfirmed"
    assert ledger.gets == 2


async def test_a_key_forgotten_while_waiting_is_run_by_the_waiting_copy() -> None:
    # The owner's tool asked the model to retry (its key is then forgotten) while the
    # twin waited: nothing ran, so the twin reserves the key and runs the write itself.
    class Forgetting(CountingLedger):
        async def get(self, key: str) -> LedgerEntry | None:
            if self.gets == 1:
                await self.forget(key)
            return await super().get(key)

    ledger = Forgetting()
    executed: list[str] = []
    registry = ToolRegistry()

    @registry.register(effect="write")
    def pay(to: str) -> str:
        """Pay someone."""
        executed.append(to)
        return "paid"

    dispatcher = Dispatcher(registry, ledger=ledger, in_flight_wait=GUARD)
    key = dispatcher._keys([registry.check(_call("a"))], "r1")[0]
    assert key is not None
    await ledger.reserve(key, tool="pay")
    with anyio.fail_after(GUARD):
        (report,) = await dispatcher.dispatch([_call("a")], request_id="r1")
    assert (report.outcome, executed) == ("ok", ["bob"])
    assert ledger.gets == 2


@pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf")])
def test_the_wait_must_be_a_number_of_seconds(bad: float) -> None:
    with pytest.raises(UsageError):
        Dispatcher(ToolRegistry(), in_flight_wait=bad)


def _never_runs(to: str) -> str:
    """Pay someone."""
    raise AssertionError("a write in flight elsewhere ran here")


_never_runs.__name__ = "pay"
