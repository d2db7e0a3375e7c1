"""Promises of the runtime attacked from a user's and an attacker's seat (the outside
suite's kind of test): each test here failed before the fix its docstring names."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from sse_toolcalls.calls import StreamEvent, StreamFinished, ToolCall, ToolSpec
from sse_toolcalls.conversation import AssistantMessage, Conversation
from sse_toolcalls.errors import ProviderError, UsageError
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.approval import ApprovalContext, Decision, Deny, approval_ids
from sse_toolcalls.runtime.breaker import CircuitBreaker
from sse_toolcalls.runtime.dispatch import Dispatcher
from sse_toolcalls.runtime.errors import ToolRetry
from sse_toolcalls.runtime.ledgers.memory import InMemoryLedger
from sse_toolcalls.runtime.retry import RetryPolicy
from sse_toolcalls.runtime.tools import Effect, ToolRegistry, ValidatedCall
from tests.runtime.test_agent import FakeClient, answer, calling, no_wait

pytestmark = pytest.mark.anyio


# --------------------------------------------------------------------------------------
# The same side effect never lost: a write the tool refused did not happen.


def bank() -> tuple[ToolRegistry, dict[str, bool], list[tuple[str, int]]]:
    registry = ToolRegistry()
    account = {"locked": True}
    sent: list[tuple[str, int]] = []

    def unlock() -> str:
        """Unlock the account."""
        account["locked"] = False
        return "unlocked"

    def transfer(to: str, amount: int) -> str:
        """Send money."""
        if account["locked"]:
            raise ToolRetry("the account is locked: call unlock, then call transfer again")
        sent.append((to, amount))
        return "sent"

    registry.register(unlock, effect="write")
    registry.register(transfer, effect="write")
    return registry, account, sent


async def test_a_write_the_tool_refused_runs_when_the_model_calls_it_again() -> None:
    """ToolRetry is the tool saying it did nothing: the ledger recorded it as the write's
    outcome, so the corrected call (same arguments, after the unlock the tool asked for)
    was "replayed" and the money never went (fixed: a refused write forgets its key)."""
    registry, _, sent = bank()
    client = FakeClient(
        [
            calling(("transfer", {"to": "bob", "amount": 10}), turn=0),
            calling(("unlock", {}), turn=1),
            calling(("transfer", {"to": "bob", "amount": 10}), turn=2),
            answer("done"),
        ]
    )
    ledger = InMemoryLedger()
    reply = await Agent(client, registry, ledger=ledger).run("send bob 10", request_id="r1")
    assert [(r.call.name, r.outcome) for r in reply.reports] == [
        ("transfer", "retry"),
        ("unlock", "ok"),
        ("transfer", "ok"),
    ]
    assert sent == [("bob", 10)]
    # The write that ran is on record, once: a re-submission of the request replays it.
    again = FakeClient([calling(("transfer", {"to": "bob", "amount": 10})), answer("done")])
    replay = await Agent(again, registry, ledger=ledger).run("send bob 10", request_id="r1")
    assert [r.outcome for r in replay.reports] == ["replayed"]
    assert sent == [("bob", 10)]


async def test_a_refused_write_leaves_nothing_in_flight_for_a_racing_twin() -> None:
    """The refused write's key is free again at once, not left reserved: a second
    dispatch of the same call right after runs the handler (it would have been told
    "this action may have run" had the key stayed in flight)."""
    registry, account, sent = bank()
    dispatcher = Dispatcher(registry, ledger=InMemoryLedger())
    call = ToolCall(
        name="transfer", args={"to": "eve", "amount": 5}, provider="anthropic", call_id="a", index=0
    )
    first = await dispatcher.dispatch([call], request_id="r")
    account["locked"] = False
    second = await dispatcher.dispatch([call], request_id="r")
    assert [first[0].outcome, second[0].outcome] == ["retry", "ok"]
    assert sent == [("eve", 5)]
    with anyio.fail_after(5):
        third = await dispatcher.dispatch([call], request_id="r")
    assert third[0].outcome == "replayed" and sent == [("eve", 5)]


# --------------------------------------------------------------------------------------
# Approvals: a person's answer applies to the call they were shown, and to no other.


def payments(paid: list[tuple[str, int]]) -> ToolRegistry:
    registry = ToolRegistry()

    def pay(to: str, amount: int) -> str:
        """Pay someone."""
        paid.append((to, amount))
        return "paid"

    registry.register(pay, effect="write", needs_approval=True)
    return registry


def same_id_turn() -> StreamFinished:
    # An OpenAI-compatible proxy that reuses one id for parallel calls (OpenRouter's
    # "same index and same id", hass_local_openai_llm#92): only the order tells them apart.
    return StreamFinished(
        stop_reason="tool_use",
        calls=tuple(
            ToolCall(name="pay", args=args, provider="anthropic", call_id="dup", index=i)
            for i, args in enumerate(({"to": "bob", "amount": 10}, {"to": "eve", "amount": 999}))
        ),
    )


async def test_approving_a_shared_call_id_approves_no_call_the_person_did_not_name() -> None:
    """Two pending calls with one call id: approving "dup" (the payment to Bob the person
    was shown) also paid Eve 999 (fixed: ids shared within a turn are told apart by
    position, ``dup#0`` and ``dup#1``, and the bare shared id is refused)."""
    paid: list[tuple[str, int]] = []
    agent = Agent(FakeClient([same_id_turn(), answer("done")]), payments(paid))
    paused = await agent.run("pay bob 10")
    assert paused.state is not None
    with pytest.raises(UsageError, match=r"dup#0, dup#1"):
        await agent.resume(paused.state, approve=["dup"])
    assert paid == []
    ids = approval_ids(paused.state.calls)
    assert ids == ["dup#0", "dup#1"]
    reply = await agent.resume(paused.state, approve=[ids[0]], deny=[ids[1]])
    assert paid == [("bob", 10)]
    assert [r.outcome for r in reply.reports] == ["ok", "declined"]


async def test_a_policy_denial_of_one_of_two_calls_sharing_an_id_stays_with_that_call() -> None:
    """The policy denies Eve's payment and asks about Bob's; both share an id. The
    denial, keyed by the shared id, was applied to Bob's approved call too."""
    paid: list[tuple[str, int]] = []

    def policy(context: ApprovalContext, call: ToolCall) -> Decision:
        return Deny(reason="no payments to eve") if call.args["to"] == "eve" else "ask"

    agent = Agent(FakeClient([same_id_turn(), answer("done")]), payments(paid), policy=policy)
    paused = await agent.run("pay bob 10")
    assert paused.state is not None
    assert [c.args["to"] for c in paused.pending_approvals] == ["bob"]
    reply = await agent.resume(paused.state, approve=["dup#0"])
    assert paid == [("bob", 10)]
    assert [r.outcome for r in reply.reports] == ["ok", "declined"]


def test_approval_ids_are_unique_in_every_turn() -> None:
    """Whatever ids a provider sends (shared, empty, absent, spelled like our own
    ``#n`` and ``id#n`` names), each call of a turn gets its own approval id, and a
    call whose id is its own keeps it."""
    spellings = ["a", "a", "", None, "#3", "a#1", "b", "#2"]
    calls = [
        ToolCall(name="t", args={}, provider="gemini", call_id=cid, index=i)
        for i, cid in enumerate(spellings)
    ]
    ids = approval_ids(calls)
    assert len(set(ids)) == len(ids)
    assert approval_ids([calls[6]]) == ["b"]
    assert approval_ids(calls[:2]) == ["a#0", "a#1"]


# --------------------------------------------------------------------------------------
# Agent.run ends with a reply whatever the provider does.


class TimingOutClient(FakeClient):
    """A client whose own I/O timed out (anyio.fail_after inside it, say): the stdlib's
    TimeoutError, the first time it is asked."""

    def __init__(self, steps: list[StreamFinished]) -> None:
        super().__init__(steps)
        self.asked = 0

    async def stream_events(
        self, conversation: Conversation, tools: Sequence[ToolSpec] = (), **options: Any
    ) -> AsyncIterator[StreamEvent]:
        self.asked += 1
        if self.asked == 1:
            raise TimeoutError("the client's own read timed out")
        async for event in super().stream_events(conversation, tools, **options):
            yield event


@pytest.mark.parametrize("request_timeout", [None, 30.0])
async def test_a_clients_own_timeout_is_a_retried_timeout_not_an_internal_error(
    request_timeout: float | None,
) -> None:
    """The agent read every TimeoutError in the request as its own ``request_timeout``
    and formatted that with ``:g``: without a request timeout, a client's TimeoutError
    became a TypeError and the ``internal_error`` fallback (fixed: a timeout that is not
    the agent's deadline is the client's, a retryable ``timeout`` all the same)."""
    client = TimingOutClient([answer("done")])
    agent = Agent(client, ToolRegistry(), retry=no_wait(), request_timeout=request_timeout)
    reply = await agent.run("hi")
    assert reply.text == "done" and not reply.is_fallback
    assert client.asked == 2
    kinds = [d.kind for d in reply.diagnostics]
    assert "internal_error" not in kinds
    timeouts = [d for d in reply.diagnostics if d.code == "timeout"]
    assert timeouts and "took longer than" not in timeouts[0].message


async def test_the_agents_own_deadline_still_says_how_long_it_waited() -> None:
    client = FakeClient([5.0, answer("done")])
    agent = Agent(client, ToolRegistry(), retry=no_wait(), request_timeout=0.05)
    reply = await agent.run("hi")
    assert reply.text == "done"
    assert [d.message for d in reply.diagnostics if d.code == "timeout"] == [
        "the request took longer than 0.05 s"
    ]


# --------------------------------------------------------------------------------------
# Agent.run ends with a reply whatever the tools do.


class Abort(BaseException):
    """What some libraries raise past ``except Exception`` (pytest's outcomes, gevent's
    GreenletExit, a framework's own abort)."""


def aborting(kind: str) -> ToolRegistry:
    registry = ToolRegistry()

    def sync_abort(x: int) -> str:
        """Abort, in a worker thread."""
        raise Abort("stop here")

    async def async_abort(x: int) -> str:
        """Abort, on the event loop."""
        raise Abort("stop here")

    def sync_exit(x: int) -> str:
        """Exit, in a worker thread (where Python's own threads ignore SystemExit)."""
        raise SystemExit(3)

    handler = {"sync": sync_abort, "async": async_abort, "exit": sync_exit}[kind]
    registry.register(handler, name="abort")

    def fine(x: int) -> str:
        """A sibling that works."""
        return f"fine {x}"

    registry.register(fine)
    return registry


@pytest.mark.parametrize("kind", ["sync", "async", "exit"])
async def test_a_handler_raising_past_exception_fails_its_call_and_the_run_replies(
    kind: str,
) -> None:
    """A handler raising a BaseException that is not a cancellation hung the dispatch on
    asyncio (a sync handler: anyio's worker never answered) and otherwise burst out of
    ``Agent.run`` as a BaseExceptionGroup (fixed: it is the call's failure, the sibling's
    result comes home, and the model gets the generic tool_failed text)."""
    client = FakeClient([calling(("abort", {"x": 1}), ("fine", {"x": 2})), answer("done")])
    with anyio.fail_after(10):
        reply = await Agent(client, aborting(kind)).run("hi")
    assert reply.text == "done" and not reply.is_fallback
    assert [r.outcome for r in reply.reports] == ["failed", "ok"]
    failed = reply.reports[0]
    assert failed.result.is_error and failed.result.call.call_id == "toolu_0_0"
    assert reply.reports[1].result.content == "fine 2"
    assert any(d.kind == "tool_failed" for d in failed.diagnostics)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_awaiting_a_future_someone_else_cancelled_fails_the_call_not_the_run() -> None:
    """On asyncio, awaiting a task that another task cancelled raises CancelledError in
    a handler that nobody cancelled. The dispatch took it for its own cancellation: the
    call was left without a report and ``Agent.run`` raised UsageError (fixed: a
    CancelledError while the handler's task has no cancellation pending is the
    handler's failure)."""
    import asyncio

    registry = ToolRegistry()

    async def fetch_shared(x: int) -> str:
        """Wait on a shared background job."""
        job = asyncio.get_running_loop().create_future()
        job.cancel()  # its owner shut it down
        return str(await job)

    registry.register(fetch_shared)
    client = FakeClient([calling(("fetch_shared", {"x": 1})), answer("done")])
    with anyio.fail_after(10):
        reply = await Agent(client, registry).run("hi")
    assert reply.text == "done" and not reply.is_fallback
    assert [r.outcome for r in reply.reports] == ["failed"]


async def test_a_tool_timeout_and_an_outer_cancel_still_cancel() -> None:
    """The other side of the rule above: a real cancellation is never a tool failure."""
    registry = ToolRegistry()

    async def slow(x: int) -> str:
        """Sleep."""
        await anyio.sleep(30)
        return "late"

    registry.register(slow, timeout=0.05)
    registry.register(slow, name="slower", timeout=20)
    call = ToolCall(name="slow", args={"x": 1}, provider="anthropic", call_id="a", index=0)
    [report] = await Dispatcher(registry).dispatch([call])
    assert report.outcome == "timeout"
    slower = ToolCall(name="slower", args={"x": 1}, provider="anthropic", call_id="b", index=0)
    with anyio.move_on_after(0.05) as scope:
        await Dispatcher(registry).dispatch([slower])
    assert scope.cancelled_caught


# --------------------------------------------------------------------------------------
# The breaker: refused for the cool-down, then one trial call, whatever became of it.


@pytest.mark.parametrize("effect", ["read", "write"])
async def test_a_cancelled_trial_call_gives_its_probe_slot_back(effect: Effect) -> None:
    """The half-open circuit's one trial call was cancelled (the user left, an outer
    deadline): its probe slot was never given back, so the circuit stayed half-open
    with its slot taken and refused the tool for the rest of the process (fixed: a
    cancelled trial says nothing about the tool and frees the slot)."""
    now = [0.0]
    breaker = CircuitBreaker(threshold=1, cooldown=10, clock=lambda: now[0])
    registry = ToolRegistry()
    mode = ["down"]

    async def lookup(x: int) -> str:
        """Look something up."""
        if mode[0] == "down":
            raise OSError("the service is down")
        if mode[0] == "slow":
            await anyio.sleep(30)
        return "found"

    registry.register(lookup, effect=effect)
    dispatcher = Dispatcher(registry, breaker=breaker, read_retries=0)

    def call(x: int) -> ToolCall:
        return ToolCall(
            name="lookup", args={"x": x}, provider="anthropic", call_id=f"c{x}", index=0
        )

    assert [r.outcome for r in await dispatcher.dispatch([call(1)])] == ["failed"]
    assert breaker.status("lookup").state == "open"
    now[0] = 20.0  # past the cool-down: one trial call may run
    mode[0] = "slow"
    with anyio.move_on_after(0.05) as scope:
        await dispatcher.dispatch([call(2)])
    assert scope.cancelled_caught
    mode[0] = "up"
    assert [r.outcome for r in await dispatcher.dispatch([call(3)])] == ["ok"]
    assert breaker.status("lookup").state == "closed"


@pytest.mark.parametrize("tool_timeout", [None, 30.0])
async def test_an_executors_own_timeout_is_the_calls_timeout(tool_timeout: float | None) -> None:
    """An executor (a remote runner, say) that lets its own TimeoutError out: with no
    tool timeout, run_once formatted ``None`` with ``:g`` and the TypeError burst out
    of the dispatch; with one, the message claimed the tool's deadline had passed."""
    registry = ToolRegistry()

    def remote(x: int) -> str:
        """Runs elsewhere."""
        return "never here"

    registry.register(remote, timeout=tool_timeout)

    async def executor(validated: ValidatedCall) -> Any:
        raise TimeoutError("the runner did not answer")

    call = ToolCall(name="remote", args={"x": 1}, provider="anthropic", call_id="a", index=0)
    [report] = await Dispatcher(registry, executor=executor, read_retries=0).dispatch([call])
    assert report.outcome == "timeout" and report.result.call.call_id == "a"
    [problem] = report.diagnostics
    assert "the runner did not answer" in problem.message
    assert "did not finish within" not in problem.message


# --------------------------------------------------------------------------------------
# What the model said stays what it said: a handler cannot rewrite the history.


def mutating() -> ToolRegistry:
    registry = ToolRegistry()

    def drain(queue: list[str], options: dict[str, Any], extra: Any = None) -> str:
        """Consume a queue (and scribble on what it was given)."""
        out = ",".join(queue)
        queue.clear()
        options["seen"] = True
        if isinstance(extra, dict):
            extra.clear()
        return out

    def drain_raw(queue: list[str], options: dict[str, Any]) -> str:
        queue.clear()
        options["seen"] = True
        return "drained"

    registry.register(drain)
    registry.add_schema_tool(
        "drain_raw",
        {
            "type": "object",
            "properties": {"queue": {"type": "array"}, "options": {"type": "object"}},
            "required": ["queue", "options"],
        },
        drain_raw,
        description="Consume a queue.",
    )
    return registry


@pytest.mark.parametrize("pydantic", ["on", "off"])
async def test_a_handler_mutating_its_arguments_leaves_the_models_call_alone(
    pydantic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A handler got the very lists and dicts of the model's call: clearing its queue
    rewrote the assistant turn sent back to the provider (the model was told it had
    asked for ``[]``), the reports and the conversation stored (fixed: the executor
    hands each handler its own copy of the JSON containers)."""
    if pydantic == "off":
        monkeypatch.setenv("SSE_TOOLCALLS_NO_PYDANTIC", "1")
    asked = {"queue": ["a", "b"], "options": {"fast": True}}
    client = FakeClient(
        [
            calling(("drain", {**asked, "extra": {"k": 1}}), ("drain_raw", asked)),
            answer("done"),
        ]
    )
    reply = await Agent(client, mutating()).run("drain both")
    assert [r.outcome for r in reply.reports] == ["ok", "ok"]
    [turn] = [m for m in client.seen[-1] if isinstance(m, AssistantMessage)]
    assert [c.args for c in turn.calls] == [{**asked, "extra": {"k": 1}}, asked]
    assert [r.call.args for r in reply.reports] == [{**asked, "extra": {"k": 1}}, asked]
    assert asked == {"queue": ["a", "b"], "options": {"fast": True}}


# --------------------------------------------------------------------------------------
# Provider retries: each wait is the latest answer's Retry-After (litellm#20722 retried on
# a stale exception's hint: 9 s where the provider asked for 107 s).


async def test_an_escalating_retry_after_is_honoured_at_each_retry() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        await anyio.lowlevel.checkpoint()

    def limited(after: float) -> ProviderError:
        return ProviderError(
            "rate limited",
            provider="anthropic",
            code="rate_limit_error",
            status=429,
            retryable=True,
            retry_after=after,
        )

    client = FakeClient([limited(3.0), limited(41.0), answer("done")])
    policy = RetryPolicy(attempts=3, jitter=False, sleep=sleep)
    reply = await Agent(client, ToolRegistry(), retry=policy).run("hi")
    assert reply.text == "done"
    assert waits == [3.0, 41.0]
