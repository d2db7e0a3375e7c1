"""Dispatch of one turn's calls: order, concurrency, timeouts, isolation, cancellation,
the idempotency ledger and the circuit breaker. On asyncio and trio."""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls.calls import ToolCall
from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime.breaker import CircuitBreaker
from sse_toolcalls.runtime.dispatch import DEFAULT_MAX_CALLS_PER_TURN, Dispatcher
from sse_toolcalls.runtime.ledgers.base import LedgerEntry, LedgerError
from sse_toolcalls.runtime.ledgers.memory import InMemoryLedger
from sse_toolcalls.runtime.tools import ToolRegistry

pytestmark = pytest.mark.anyio


def call(name: str, args: dict[str, Any], index: int, call_id: str | None = None) -> ToolCall:
    return ToolCall(
        name=name,
        args=args,
        provider="anthropic",
        call_id=call_id if call_id is not None else f"toolu_{index}",
        index=index,
    )


def calls(*specs: tuple[str, dict[str, Any]]) -> list[ToolCall]:
    return [call(name, args, i) for i, (name, args) in enumerate(specs)]


class Log:
    def __init__(self) -> None:
        self.events: list[str] = []

    def __call__(self, event: str) -> None:
        self.events.append(event)

    def index(self, event: str) -> int:
        return self.events.index(event)


async def test_parallel_safe_calls_really_run_at_the_same_time() -> None:
    registry = ToolRegistry()
    arrived: list[str] = []
    everyone = anyio.Event()

    @registry.register(timeout=2.0)
    async def rendezvous(who: str) -> str:
        """Wait until all three have arrived (a deadlock if they ran one by one)."""
        arrived.append(who)
        if len(arrived) == 3:
            everyone.set()
        await everyone.wait()
        return f"{who} met the others"

    reports = await Dispatcher(registry).dispatch(
        calls(*[("rendezvous", {"who": w}) for w in ("a", "b", "c")])
    )
    assert [r.outcome for r in reports] == ["ok", "ok", "ok"]
    assert [r.result.content for r in reports] == [
        "a met the others",
        "b met the others",
        "c met the others",
    ]


async def test_stateful_tools_run_in_call_order_and_results_come_back_in_call_order() -> None:
    registry = ToolRegistry()
    log = Log()
    cwd = ["/"]

    @registry.register(parallel_safe=False, effect="write")
    async def cd(path: str) -> str:
        """Change directory."""
        log(f"cd {path} start")
        await anyio.sleep(0.05)  # slow, so a racing mkdir would see the old directory
        cwd[0] = path
        log(f"cd {path} end")
        return path

    @registry.register(parallel_safe=False, effect="write")
    async def mkdir(name: str) -> str:
        """Make a directory in the current one."""
        log(f"mkdir {name} start")
        return f"{cwd[0]}/{name}"

    @registry.register
    async def weather(city: str, delay: float) -> str:
        """A read that may run beside others."""
        log(f"weather {city} start")
        await anyio.sleep(delay)
        log(f"weather {city} end")
        return f"sunny in {city}"

    turn = calls(
        ("weather", {"city": "Lima", "delay": 0.1}),
        ("weather", {"city": "Oslo", "delay": 0.0}),
        ("cd", {"path": "/tmp"}),
        ("mkdir", {"name": "x"}),
        ("weather", {"city": "Rome", "delay": 0.0}),
    )
    reports = await Dispatcher(registry).dispatch(turn)
    assert [r.call for r in reports] == turn
    assert [r.result.call for r in reports] == turn
    assert [r.result.content for r in reports] == [
        "sunny in Lima",
        "sunny in Oslo",
        "/tmp",
        "/tmp/x",
        "sunny in Rome",
    ]
    # The two reads before the barrier overlapped; Oslo finished first but came back second.
    assert log.index("weather Oslo end") < log.index("weather Lima end")
    # cd waited for both reads, mkdir for cd, and the last read for mkdir.
    assert log.index("weather Lima end") < log.index("cd /tmp start")
    assert log.index("cd /tmp end") < log.index("mkdir x start")
    assert log.index("mkdir x start") < log.index("weather Rome start")


async def test_the_concurrency_limit_holds() -> None:
    registry = ToolRegistry()
    running = [0]
    peak = [0]

    @registry.register
    async def work(n: int) -> int:
        """Some work."""
        running[0] += 1
        peak[0] = max(peak[0], running[0])
        await anyio.sleep(0.02)
        running[0] -= 1
        return n

    reports = await Dispatcher(registry, max_concurrency=2).dispatch(
        calls(*[("work", {"n": n}) for n in range(6)])
    )
    assert [r.result.content for r in reports] == [str(n) for n in range(6)]
    assert peak[0] == 2


async def test_one_failure_never_cancels_its_siblings() -> None:
    registry = ToolRegistry()
    finished: list[str] = []

    @registry.register
    def explode(reason: str) -> str:
        """Raises."""
        raise RuntimeError(f"secret internals: {reason}")

    @registry.register(timeout=0.2)
    async def hang() -> str:
        """Never answers."""
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    @registry.register
    async def slow_ok() -> str:
        """Answers after the others failed."""
        await anyio.sleep(0.3)
        finished.append("slow_ok")
        return "fine"

    turn = calls(("explode", {"reason": "db down"}), ("hang", {}), ("slow_ok", {}))
    reports = await Dispatcher(registry, read_retries=0).dispatch(turn)
    assert [r.outcome for r in reports] == ["failed", "timeout", "ok"]
    assert finished == ["slow_ok"]
    failed, timed_out, ok = (r.result for r in reports)
    assert failed.is_error and failed.content["error"] == "tool_failed"  # type: ignore[call-overload, index]
    assert "secret internals" not in str(failed.content)
    assert timed_out.is_error and timed_out.content["error"] == "tool_timeout"  # type: ignore[call-overload, index]
    assert (ok.is_error, ok.content) == (False, "fine")
    assert [r.result.call.call_id for r in reports] == ["toolu_0", "toolu_1", "toolu_2"]
    assert "secret internals: db down" in (reports[0].diagnostics[0].exception or "")


async def test_invalid_and_unknown_calls_do_not_run() -> None:
    registry = ToolRegistry()
    ran: list[int] = []

    @registry.register(effect="write")
    def charge(cents: int) -> str:
        """Charge the card."""
        ran.append(cents)
        return "charged"

    turn = [
        call("charge", {"cents": "a lot"}, 0),
        call("chrage", {"cents": 5}, 1),
        ToolCall(
            name="charge",
            args={},
            provider="openai_chat",
            call_id="call_2",
            index=2,
            raw_arguments='{"cents": 5',
            arguments_error="unexpected end of input",
        ),
    ]
    ledger = InMemoryLedger()
    reports = await Dispatcher(registry, ledger=ledger).dispatch(turn)
    assert ran == []
    assert ledger.entries() == []
    assert [r.outcome for r in reports] == ["refused"] * 3
    assert [r.runs for r in reports] == [0, 0, 0]
    assert [r.result.content["error"] for r in reports] == [  # type: ignore[call-overload, index]
        "invalid_arguments",
        "unknown_tool",
        "invalid_arguments",
    ]
    assert [r.result.call for r in reports] == turn


async def test_a_failed_read_is_retried_and_a_failed_write_is_not() -> None:
    registry = ToolRegistry()
    attempts = {"read": 0, "write": 0}

    @registry.register
    def flaky_read() -> str:
        """Fails once, then works."""
        attempts["read"] += 1
        if attempts["read"] == 1:
            raise ConnectionError("blip")
        return "data"

    @registry.register(effect="write")
    def flaky_write() -> str:
        """Fails once, then would work."""
        attempts["write"] += 1
        if attempts["write"] == 1:
            raise ConnectionError("blip")
        return "written"

    reports = await Dispatcher(registry).dispatch(calls(("flaky_read", {}), ("flaky_write", {})))
    assert [(r.outcome, r.runs) for r in reports] == [("ok", 2), ("failed", 1)]
    assert attempts == {"read": 2, "write": 1}
    assert reports[1].result.is_error


async def test_a_replayed_write_returns_the_recorded_result_under_the_new_id() -> None:
    registry = ToolRegistry()
    executed: list[dict[str, Any]] = []

    @registry.register(effect="write")
    def transfer(to: str, cents: int) -> dict[str, Any]:
        """Move money."""
        executed.append({"to": to, "cents": cents})
        return {"receipt": f"R{len(executed)}"}

    ledger = InMemoryLedger()
    dispatcher = Dispatcher(registry, ledger=ledger)
    first = await dispatcher.dispatch(
        [call("transfer", {"to": "bob", "cents": 500}, 0, "toolu_old")], request_id="req-1"
    )
    # The provider regenerates the turn: same call, new id, keys in another order, and
    # the amount as a string the registry coerces: still the same action.
    again = await dispatcher.dispatch(
        [call("transfer", {"cents": "500", "to": "bob"}, 0, "toolu_new")], request_id="req-1"
    )
    assert executed == [{"to": "bob", "cents": 500}]
    assert (first[0].outcome, again[0].outcome) == ("ok", "replayed")
    assert again[0].runs == 0
    assert again[0].result.call.call_id == "toolu_new"
    replay = again[0].result.content
    assert isinstance(replay, dict)
    assert replay["replayed"] is True and replay["result"] == {"receipt": "R1"}
    assert again[0].key == first[0].key
    # The same transfer in a new request (the user asked again) is a new action: it runs.
    later = await dispatcher.dispatch(
        [call("transfer", {"to": "bob", "cents": 500}, 0)], request_id="req-2"
    )
    assert later[0].outcome == "ok"
    assert len(executed) == 2


async def test_identical_writes_in_one_turn_are_two_actions_each_guarded() -> None:
    registry = ToolRegistry()
    executed: list[str] = []

    @registry.register(effect="write")
    def add_item(item: str) -> str:
        """Add one item to the cart."""
        executed.append(item)
        return f"{len(executed)} in cart"

    dispatcher = Dispatcher(registry)
    turn = calls(("add_item", {"item": "apple"}), ("add_item", {"item": "apple"}))
    first = await dispatcher.dispatch(turn, request_id="c")
    second = await dispatcher.dispatch(turn, request_id="c")
    assert executed == ["apple", "apple"]
    assert [r.outcome for r in first] == ["ok", "ok"]
    assert [r.outcome for r in second] == ["replayed", "replayed"]
    assert sorted(r.result.content["result"] for r in second) == ["1 in cart", "2 in cart"]  # type: ignore[call-overload, index]


async def test_a_write_left_in_flight_is_never_run_again() -> None:
    registry = ToolRegistry()
    executed: list[str] = []

    @registry.register(effect="write")
    def send_email(to: str) -> str:
        """Send an email."""
        executed.append(to)
        return "sent"

    # A crash after the reservation, long ago (its clock): the owner is gone.
    ledger = InMemoryLedger(clock=lambda: 1000.0)
    dispatcher = Dispatcher(registry, ledger=ledger)
    turn = calls(("send_email", {"to": "ana@example.com"}))
    key = dispatcher._keys([registry.check(turn[0])], "c")[0]
    assert key is not None
    await ledger.reserve(key, tool="send_email")
    reports = await dispatcher.dispatch(turn, request_id="c")
    assert executed == []
    assert reports[0].outcome == "unconfirmed"
    assert reports[0].result.is_error
    assert reports[0].result.content["error"] == "write_unconfirmed"  # type: ignore[call-overload, index]
    entry = await ledger.get(key)
    assert entry is not None and entry.state == "in_flight"


async def test_a_write_that_times_out_is_recorded_and_says_it_may_have_happened() -> None:
    registry = ToolRegistry()
    started: list[str] = []

    @registry.register(effect="write", timeout=0.1)
    async def publish(post: str) -> str:
        """Publish a post."""
        started.append(post)
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    ledger = InMemoryLedger()
    dispatcher = Dispatcher(registry, ledger=ledger)
    turn = calls(("publish", {"post": "hello"}))
    first = await dispatcher.dispatch(turn, request_id="c")
    again = await dispatcher.dispatch(turn, request_id="c")
    assert started == ["hello"]
    assert (first[0].outcome, again[0].outcome) == ("timeout", "replayed")
    assert "may still have happened" in first[0].result.content["message"]  # type: ignore[call-overload, index]
    assert again[0].result.is_error


class BrokenLedger(InMemoryLedger):
    async def reserve(self, key: str, *, tool: str) -> LedgerEntry | None:
        raise LedgerError("database is locked")


async def test_a_write_whose_key_cannot_be_reserved_does_not_run() -> None:
    registry = ToolRegistry()
    executed: list[str] = []

    @registry.register(effect="write")
    def pay(to: str) -> str:
        """Pay someone."""
        executed.append(to)
        return "paid"

    @registry.register
    def balance() -> int:
        """Read the balance."""
        return 10

    reports = await Dispatcher(registry, ledger=BrokenLedger()).dispatch(
        calls(("pay", {"to": "bob"}), ("balance", {}))
    )
    assert executed == []
    assert [r.outcome for r in reports] == ["ledger_error", "ok"]
    assert reports[0].result.is_error


async def test_the_circuit_opens_refuses_and_probes_after_the_cooldown() -> None:
    registry = ToolRegistry()
    runs = [0]
    healthy = [False]

    @registry.register
    def search(q: str) -> str:
        """Search."""
        runs[0] += 1
        if not healthy[0]:
            raise ConnectionError("search backend down")
        return f"results for {q}"

    now = [0.0]
    breaker = CircuitBreaker(threshold=3, cooldown=60.0, clock=lambda: now[0])
    dispatcher = Dispatcher(registry, breaker=breaker, read_retries=0)
    for _ in range(3):
        (report,) = await dispatcher.dispatch(calls(("search", {"q": "x"})))
        assert report.outcome == "failed"
    (refused,) = await dispatcher.dispatch(calls(("search", {"q": "x"})))
    assert runs[0] == 3
    assert refused.outcome == "unavailable"
    assert refused.result.is_error
    assert refused.result.content["error"] == "tool_unavailable"  # type: ignore[call-overload, index]
    assert "unavailable for now" in refused.result.content["message"]  # type: ignore[call-overload, index]
    now[0] = 60.0
    healthy[0] = True
    (probe,) = await dispatcher.dispatch(calls(("search", {"q": "x"})))
    assert (probe.outcome, probe.result.content, runs[0]) == ("ok", "results for x", 4)
    assert breaker.status("search").state == "closed"


async def test_outer_cancellation_propagates_and_leaves_no_half_recorded_state() -> None:
    registry = ToolRegistry()
    started: list[str] = []
    entered = anyio.Event()

    @registry.register(effect="write", parallel_safe=False)
    async def write(name: str) -> str:
        """A write; the one named "slow" takes a while."""
        started.append(name)
        if name == "slow":
            entered.set()
            await anyio.sleep(10)
        return f"{name} done"

    ledger = InMemoryLedger()
    # No wait on the key the cancelled turn left in flight (its owner is this very
    # dispatcher, gone): see test_in_flight_wait.py for the wait.
    dispatcher = Dispatcher(registry, ledger=ledger, in_flight_wait=0)
    turn = calls(("write", {"name": "slow"}), ("write", {"name": "quick"}))
    outcome: list[Any] = []
    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:

            async def run() -> None:
                outcome.append(await dispatcher.dispatch(turn, request_id="c"))

            group.start_soon(run)
            await entered.wait()
            group.cancel_scope.cancel()
    assert outcome == [], "a cancelled dispatch returns nothing partial"
    assert started == ["slow"], "the write queued behind it never started"
    assert [(e.tool, e.state) for e in ledger.entries()] == [("write", "in_flight")]
    # Afterwards the interrupted write is not repeated; the one that never started runs.
    reports = await dispatcher.dispatch(turn, request_id="c")
    assert started == ["slow", "quick"]
    assert [r.outcome for r in reports] == ["unconfirmed", "ok"]
    assert [e.state for e in ledger.entries()] == ["in_flight", "done"]


# --------------------------------------------------------------------------------------
# Barriers stay linear; a turn over the cap is refused whole (issue 9).


_Event = anyio.Event


class CountingEvent:
    """anyio.Event that counts the waits on it, for every event of a dispatch."""

    waits = 0

    def __init__(self) -> None:
        self._event = _Event()

    def set(self) -> None:
        self._event.set()

    async def wait(self) -> None:
        CountingEvent.waits += 1
        await self._event.wait()


def stepper(*, parallel_safe: bool, log: list[tuple[str, int]] | None = None) -> ToolRegistry:
    registry = ToolRegistry()

    async def step(i: int) -> str:
        if log is not None:
            log.append(("start", i))
        await anyio.lowlevel.checkpoint()
        if log is not None:
            log.append(("end", i))
        return f"done {i}"

    registry.add_schema_tool(
        "step",
        {"type": "object", "properties": {"i": {"type": "integer"}}},
        step,
        parallel_safe=parallel_safe,
    )
    return registry


async def test_a_turn_of_barrier_calls_waits_a_linear_number_of_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sse_toolcalls.runtime.dispatch.anyio.Event", CountingEvent)
    CountingEvent.waits = 0
    n = 600
    turn = calls(*[("step", {"i": i}) for i in range(n)])
    reports = await Dispatcher(stepper(parallel_safe=False), max_calls_per_turn=n).dispatch(turn)
    assert [r.result.content for r in reports] == [f"done {i}" for i in range(n)]
    # Each barrier waits for the one before it: n - 1 waits. Waiting on every earlier
    # call, as before, was n (n - 1) / 2 = 179,700 here (24.7 s for 4,000 calls).
    assert CountingEvent.waits == n - 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=12))
def test_barriers_order_any_mix_of_calls(pattern: list[bool]) -> None:
    """True marks a call to a barrier tool: it starts after every earlier call ended,
    and every later call starts after it ended."""
    log: list[tuple[str, int]] = []
    safe, alone = stepper(parallel_safe=True, log=log), stepper(parallel_safe=False, log=log)
    free_tool, alone_tool = safe.get("step"), alone.get("step")
    assert free_tool is not None and alone_tool is not None
    registry = ToolRegistry()
    registry.add(dataclasses.replace(free_tool, name="free"))
    registry.add(dataclasses.replace(alone_tool, name="alone"))
    turn = calls(*[("alone" if b else "free", {"i": i}) for i, b in enumerate(pattern)])
    reports = anyio.run(Dispatcher(registry).dispatch, turn)
    assert [r.outcome for r in reports] == ["ok"] * len(pattern)
    at = {event: n for n, event in enumerate(log)}
    for i, barrier in enumerate(pattern):
        for j in range(len(pattern)):
            if barrier and j < i:
                assert at["end", j] < at["start", i]
            if barrier and j > i:
                assert at["end", i] < at["start", j]


async def test_a_turn_at_the_call_cap_runs() -> None:
    turn = calls(*[("step", {"i": i}) for i in range(DEFAULT_MAX_CALLS_PER_TURN)])
    reports = await Dispatcher(stepper(parallel_safe=False)).dispatch(turn)
    assert {r.outcome for r in reports} == {"ok"}


async def test_a_turn_past_the_call_cap_is_refused_whole_with_a_result_per_call() -> None:
    log: list[tuple[str, int]] = []
    n = DEFAULT_MAX_CALLS_PER_TURN + 1
    turn = calls(*[("step", {"i": i}) for i in range(n)])
    reports = await Dispatcher(stepper(parallel_safe=True, log=log)).dispatch(turn)
    assert log == []  # nothing ran, not even the first calls
    assert [r.call for r in reports] == turn
    assert {(r.outcome, r.runs, r.result.is_error) for r in reports} == {("over_limit", 0, True)}
    content = reports[-1].result.content
    assert isinstance(content, dict)
    assert content["error"] == "too_many_calls"
    assert f"at most {DEFAULT_MAX_CALLS_PER_TURN}" in content["message"]
    assert reports[0].diagnostics[0].kind == "calls_over_limit"


def test_the_call_cap_must_be_positive() -> None:
    with pytest.raises(UsageError):
        Dispatcher(ToolRegistry(), max_calls_per_turn=0)


async def test_a_reissued_write_spelled_differently_is_replayed_not_run_again() -> None:
    """125 and 125.0 both reach the handler as 125: one write (issue 9, hole 8)."""
    registry = ToolRegistry()
    paid: list[int] = []

    @registry.register(effect="write")
    def pay(to: str, cents: int) -> str:
        """Pay someone."""
        paid.append(cents)
        return f"paid {cents}"

    dispatcher = Dispatcher(registry)
    first = await dispatcher.dispatch(
        [call("pay", {"to": "bob", "cents": 125}, 0, "a")], request_id="c"
    )
    again = await dispatcher.dispatch(
        [call("pay", {"cents": 125.0, "to": "bob"}, 0, "b")], request_id="c"
    )
    assert paid == [125]
    assert (first[0].outcome, again[0].outcome) == ("ok", "replayed")
    assert first[0].key == again[0].key
    assert again[0].result.content["result"] == "paid 125"  # type: ignore[call-overload, index]
    assert again[0].result.call.call_id == "b"


def test_the_agent_passes_its_call_cap_to_the_dispatcher() -> None:
    from sse_toolcalls.runtime.agent import Agent

    agent = Agent(object(), ToolRegistry(), max_calls_per_turn=3)  # type: ignore[arg-type]
    assert agent.dispatcher.max_calls_per_turn == 3
