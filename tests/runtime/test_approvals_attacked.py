"""A paused run's state, attacked as it comes back from a browser or a second worker.

The promise (docs/threat-model.md, "Approvals"): a state resumes only as it was
paused (its record in the ledger, or its signature under the application's key), its
decision is taken once on every worker sharing the ledger (a denial is final), the call
that runs is byte for byte the call the person was shown, and the dispatcher runs no
``needs_approval`` call without its approval, whoever calls it. Each refusal is an
``ApprovalStateError`` raised before anything of the turn ran.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sse_toolcalls.calls import StreamFinished, ToolCall
from sse_toolcalls.conversation import AssistantMessage
from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime import approval as approval_module
from sse_toolcalls.runtime._seal import value_digest
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.approval import ApprovalState, call_digest, pending_ids
from sse_toolcalls.runtime.dispatch import Dispatcher
from sse_toolcalls.runtime.errors import ApprovalStateError, LedgerError
from sse_toolcalls.runtime.ledgers.base import LedgerEntry
from sse_toolcalls.runtime.ledgers.memory import InMemoryLedger
from sse_toolcalls.runtime.ledgers.sqlite import SQLiteLedger
from sse_toolcalls.runtime.tools import ToolRegistry
from tests.runtime.test_agent import FakeClient, answer

pytestmark = pytest.mark.anyio

KEY = b"k" * 32
"""An application key for the signed-state tests (its value does not matter)."""


def payments(paid: list[tuple[str, int]]) -> ToolRegistry:
    registry = ToolRegistry()

    def pay(to: str, amount: int) -> str:
        """Pay someone."""
        paid.append((to, amount))
        return f"paid {to} {amount}"

    def balance() -> int:
        """The balance."""
        return 100

    registry.register(pay, effect="write", needs_approval=True)
    registry.register(balance)
    return registry


def paying(*payments: tuple[str, int]) -> StreamFinished:
    return StreamFinished(
        stop_reason="tool_use",
        calls=tuple(
            ToolCall(
                name="pay",
                args={"to": to, "amount": amount},
                provider="anthropic",
                call_id=f"toolu_{i}",
                index=i,
            )
            for i, (to, amount) in enumerate(payments)
        ),
    )


def agent_for(paid: list[tuple[str, int]], *turns: StreamFinished, **options: Any) -> Agent:
    steps = list(turns) or [paying(("bob", 10))]
    return Agent(FakeClient([*steps, answer("done"), answer("done")]), payments(paid), **options)


async def paused_state(agent: Agent) -> ApprovalState:
    reply = await agent.run("pay bob 10", request_id="req-1")
    assert reply.state is not None and reply.pending_approvals
    return reply.state


def with_calls(state: ApprovalState, edit: Any) -> ApprovalState:
    """``state`` with every copy of its calls edited alike (``calls``, ``pending`` and
    the paused assistant message): the attacker's best forgery, consistent throughout."""
    calls = tuple(edit(c) for c in state.calls)
    pending = tuple(edit(c) for c in state.pending)
    messages = tuple(
        dataclasses.replace(m, calls=calls) if isinstance(m, AssistantMessage) and m.calls else m
        for m in state.messages
    )
    return dataclasses.replace(state, calls=calls, pending=pending, messages=messages)


def amount(value: Any, to: str = "mallory") -> Any:
    return lambda c: dataclasses.replace(c, args={**c.args, "amount": value, "to": to})


# --------------------------------------------------------------------------------------
# Example 1: the state edited between pause and resume.


async def test_an_edited_amount_and_recipient_is_refused_and_the_shown_call_runs() -> None:
    """The person approved "pay bob 10"; the state came back with 9999 to mallory.
    The edited call ran (fixed: the state is checked against its recorded digest)."""
    paid: list[tuple[str, int]] = []
    agent = agent_for(paid)
    state = await paused_state(agent)
    forged = with_calls(state, amount(9999))
    with pytest.raises(ApprovalStateError, match="differs from the one paused") as refused:
        await agent.resume(forged, approve=pending_ids(forged))
    assert refused.value.reason == "tampered"
    assert paid == []
    # The refusal took no decision: the state as shown is still good, once.
    reply = await agent.resume(state, approve=pending_ids(state))
    assert paid == [("bob", 10)] and reply.text == "done"


# --------------------------------------------------------------------------------------
# Example 2: a copied state with a new token and request id.


@pytest.mark.parametrize("shared", [True, False], ids=["same agent", "second worker"])
async def test_a_copied_state_with_a_new_token_and_request_id_runs_nothing(shared: bool) -> None:
    """After the approved write ran, a copy of the state with a fresh token and request
    id (a new idempotency key) ran the write again (fixed: no pause of that token is
    on record)."""
    paid: list[tuple[str, int]] = []
    ledger = InMemoryLedger()
    agent = agent_for(paid, ledger=ledger)
    state = await paused_state(agent)
    await agent.resume(state, approve=pending_ids(state))
    assert paid == [("bob", 10)]
    copy = dataclasses.replace(state, token=secrets.token_hex(16), request_id="req-2")
    other = agent if shared else agent_for(paid, ledger=ledger)
    with pytest.raises(ApprovalStateError) as refused:
        await other.resume(copy, approve=pending_ids(copy))
    assert refused.value.reason in {"unknown", "tampered"}
    assert paid == [("bob", 10)]


async def test_a_copy_with_a_new_token_alone_or_a_new_request_id_alone_is_refused() -> None:
    paid: list[tuple[str, int]] = []
    agent = agent_for(paid)
    state = await paused_state(agent)
    new_token = dataclasses.replace(state, token=secrets.token_hex(16))
    with pytest.raises(ApprovalStateError, match="no pause") as unknown:
        await agent.resume(new_token, approve=pending_ids(state))
    assert unknown.value.reason == "unknown"
    new_request = dataclasses.replace(state, request_id="req-2")
    with pytest.raises(ApprovalStateError) as tampered:
        await agent.resume(new_request, approve=pending_ids(state))
    assert tampered.value.reason == "tampered"
    assert paid == []


# --------------------------------------------------------------------------------------
# Example 3: one state answered on two workers.


async def test_a_denial_is_final_on_every_worker_sharing_the_ledger(tmp_path: Path) -> None:
    """Denied on worker A, the same state approved on worker B ran the payment (fixed:
    the decision is reserved in the shared ledger, and B is refused)."""
    paid: list[tuple[str, int]] = []
    path = tmp_path / "ledger.db"
    with SQLiteLedger(path) as ledger_a, SQLiteLedger(path) as ledger_b:
        a = agent_for(paid, ledger=ledger_a)
        b = agent_for(paid, ledger=ledger_b)
        state = await paused_state(a)
        denied = await a.resume(state, deny=pending_ids(state))
        assert [r.outcome for r in denied.reports] == ["declined"]
        with pytest.raises(ApprovalStateError, match=r"already resumed \(denied\)") as refused:
            await b.resume(state, approve=pending_ids(state))
        assert refused.value.reason == "decided"
    assert paid == []


async def test_an_approval_taken_on_one_worker_is_not_denied_or_approved_on_another() -> None:
    paid: list[tuple[str, int]] = []
    ledger = InMemoryLedger()
    a, b = agent_for(paid, ledger=ledger), agent_for(paid, ledger=ledger)
    state = await paused_state(a)
    await b.resume(state, approve=pending_ids(state))
    for worker, answer_ in ((a, "deny"), (a, "approve"), (b, "approve")):
        with pytest.raises(ApprovalStateError, match=r"already resumed \(approved\)"):
            await worker.resume(state, **{answer_: pending_ids(state)})
    assert paid == [("bob", 10)]


async def test_a_worker_with_a_ledger_of_its_own_cannot_resume_an_unsigned_state() -> None:
    """Two workers that share nothing cannot agree on one decision: without a key the
    second refuses the state rather than take a second one."""
    paid: list[tuple[str, int]] = []
    a, b = agent_for(paid), agent_for(paid)
    state = await paused_state(a)
    with pytest.raises(ApprovalStateError, match="no pause") as refused:
        await b.resume(state, approve=pending_ids(state))
    assert refused.value.reason == "unknown"
    assert paid == []


async def answer_on(worker: Agent, state: ApprovalState, verdict: str, won: list[str]) -> None:
    """One worker's answer to ``state``: its verdict appended to ``won`` when it took
    the decision, ``"refused"`` when the other worker had."""
    try:
        await worker.resume(state, **{verdict: pending_ids(state)})
    except ApprovalStateError as exc:
        assert exc.reason == "decided"
        won.append("refused")
    else:
        won.append(verdict)


@pytest.mark.parametrize("store", ["memory", "sqlite"])
async def test_approve_and_deny_racing_on_two_workers_take_one_decision(
    store: str, tmp_path: Path
) -> None:
    """Approve on one worker and deny on another at the same moment, many times over:
    exactly one resume wins each race, and the payment ran exactly when it was the
    approval that won."""
    for round_ in range(8):
        paid: list[tuple[str, int]] = []
        if store == "memory":
            shared = InMemoryLedger()
            ledgers: list[Any] = [shared, shared]
        else:
            path = tmp_path / f"race{round_}.db"
            ledgers = [SQLiteLedger(path), SQLiteLedger(path)]
        a, b = (agent_for(paid, ledger=ledger) for ledger in ledgers)
        state = await paused_state(a)
        won: list[str] = []
        async with anyio.create_task_group() as group:
            group.start_soon(answer_on, a, state, "approve", won)
            group.start_soon(answer_on, b, state, "deny", won)
        assert sorted(won) in (["approve", "refused"], ["deny", "refused"])
        assert paid == ([("bob", 10)] if "approve" in won else [])
        for ledger in ledgers:
            if isinstance(ledger, SQLiteLedger):
                ledger.close()


async def test_approve_and_deny_racing_on_postgres_take_one_decision(postgres_dsn: str) -> None:
    from sse_toolcalls.runtime.ledgers.postgres import PostgresLedger

    paid: list[tuple[str, int]] = []
    async with PostgresLedger(postgres_dsn) as la, PostgresLedger(postgres_dsn) as lb:
        a, b = agent_for(paid, ledger=la), agent_for(paid, ledger=lb)
        state = await paused_state(a)
        won: list[str] = []
        async with anyio.create_task_group() as group:
            group.start_soon(answer_on, a, state, "approve", won)
            group.start_soon(answer_on, b, state, "deny", won)
        assert sorted(won) in (["approve", "refused"], ["deny", "refused"])
        assert paid == ([("bob", 10)] if "approve" in won else [])


# --------------------------------------------------------------------------------------
# Example 4: the dispatcher, the lowest layer that runs writes.


async def test_the_dispatcher_runs_no_needs_approval_call_without_its_approval() -> None:
    """``Dispatcher.dispatch`` ran a ``needs_approval`` write with no approval at all
    (fixed: such a call runs only with its call digest in ``approved``)."""
    paid: list[tuple[str, int]] = []
    dispatcher = Dispatcher(payments(paid))
    call = paying(("bob", 10)).calls[0]
    (report,) = await dispatcher.dispatch([call], request_id="r")
    assert report.outcome == "declined" and report.runs == 0 and report.result.is_error
    assert [d.kind for d in report.diagnostics] == ["approval_missing"]
    assert paid == []
    (report,) = await dispatcher.dispatch(
        [call], request_id="r", approved=[call_digest(call, request_id="r")]
    )
    assert report.outcome == "ok" and paid == [("bob", 10)]


async def test_an_approval_names_one_call_of_one_request_exactly() -> None:
    """Neighbours at the dispatcher: the digest of A given for B in the same turn, for
    the same call in another request, for the call under another id, index or tool
    name, or for the call with any argument changed: nothing runs. A read beside it is
    not held up."""
    paid: list[tuple[str, int]] = []
    dispatcher = Dispatcher(payments(paid))
    a, b = paying(("bob", 10), ("eve", 999)).calls
    grant_a = call_digest(a, request_id="r")
    reports = await dispatcher.dispatch([a, b], request_id="r", approved=[grant_a])
    assert [r.outcome for r in reports] == ["ok", "declined"]
    assert paid == [("bob", 10)]
    edits = [
        dataclasses.replace(a, args={"to": "bob", "amount": 11}),
        dataclasses.replace(a, args={"to": "bob ", "amount": 10}),
        dataclasses.replace(a, args={"to": "bob", "amount": 10.0}),
        dataclasses.replace(a, args={"to": "bob", "amount": 10, "memo": ""}),
        dataclasses.replace(a, call_id="toolu_9"),
        dataclasses.replace(a, index=1),
        dataclasses.replace(a, raw_arguments='{"to": "eve", "amount": 999}'),
    ]
    for edited in edits:
        assert call_digest(edited, request_id="r") != grant_a
        (report,) = await dispatcher.dispatch([edited], request_id="r", approved=[grant_a])
        assert report.outcome in ("declined", "refused"), edited
    (other,) = await dispatcher.dispatch([a], request_id="r2", approved=[grant_a])
    (none,) = await dispatcher.dispatch([a], approved=[grant_a])  # a request id of its own
    assert other.outcome == none.outcome == "declined"
    balance = ToolCall(name="balance", args={}, provider="anthropic", call_id="x", index=0)
    (read,) = await dispatcher.dispatch([balance])
    assert read.outcome == "ok"
    assert paid == [("bob", 10)]


# --------------------------------------------------------------------------------------
# Neighbours of the examples through the Agent.


def _swap_order(state: ApprovalState) -> ApprovalState:
    calls = tuple(
        dataclasses.replace(c, index=len(state.calls) - 1 - c.index) for c in state.calls[::-1]
    )
    return dataclasses.replace(state, calls=calls, pending=calls)


EDITS: dict[str, Callable[[ApprovalState], ApprovalState]] = {
    "amount only in calls": lambda s: dataclasses.replace(
        s, calls=with_calls(s, amount(9999, "bob")).calls
    ),
    "amount only in pending": lambda s: dataclasses.replace(
        s, pending=with_calls(s, amount(9999, "bob")).pending
    ),
    "tool name": lambda s: with_calls(s, lambda c: dataclasses.replace(c, name="balance")),
    "call id": lambda s: with_calls(s, lambda c: dataclasses.replace(c, call_id="toolu_x")),
    "swapped order": _swap_order,
    "request id": lambda s: dataclasses.replace(s, request_id="req-other"),
    "conversation id": lambda s: dataclasses.replace(s, conversation_id="someone else"),
    "steps": lambda s: dataclasses.replace(s, steps=-100),
    "history length": lambda s: dataclasses.replace(s, history_length=0),
    "paused at": lambda s: dataclasses.replace(s, paused_at=s.paused_at + 1),
    "the policy's denials": lambda s: dataclasses.replace(s, denied=(("toolu_1", "no"),)),
    "a list for a tuple of different content": lambda s: dataclasses.replace(
        s,
        refused_before=["pay"],  # type: ignore[arg-type]  # what a JSON round trip gives
    ),
    "an object no state holds": lambda s: dataclasses.replace(
        s,
        lang=object(),  # type: ignore[arg-type]  # what a pickle from a client may hold
    ),
}


@pytest.mark.parametrize("edit", list(EDITS), ids=list(EDITS))
@pytest.mark.parametrize("signed", [False, True], ids=["recorded", "signed"])
async def test_any_edit_of_the_state_is_refused(edit: str, signed: bool) -> None:
    paid: list[tuple[str, int]] = []
    agent = agent_for(
        paid, paying(("bob", 10), ("carol", 20)), **({"approval_key": KEY} if signed else {})
    )
    state = await paused_state(agent)
    forged = EDITS[edit](state)
    with pytest.raises(ApprovalStateError) as refused:
        await agent.resume(forged, approve=pending_ids(state))
    assert refused.value.reason == "tampered"
    assert paid == []


async def test_a_state_that_comes_back_with_lists_for_its_tuples_still_resumes() -> None:
    """A JSON round trip turns tuples into lists: the same values, so the same state."""
    paid: list[tuple[str, int]] = []
    agent = agent_for(paid, paying(("bob", 10), ("carol", 20)))
    state = await paused_state(agent)
    listed = dataclasses.replace(
        state,
        calls=list(state.calls),  # type: ignore[arg-type]
        pending=list(state.pending),  # type: ignore[arg-type]
        messages=list(state.messages),  # type: ignore[arg-type]
        refused_before=list(state.refused_before),  # type: ignore[arg-type]
    )
    await agent.resume(listed, approve=pending_ids(state))
    assert sorted(paid) == [("bob", 10), ("carol", 20)]


async def test_a_state_replayed_after_success_is_refused_before_anything_runs() -> None:
    paid: list[tuple[str, int]] = []
    client_steps = [paying(("bob", 10)), answer("done")]
    agent = Agent(FakeClient(client_steps), payments(paid))
    state = await paused_state(agent)
    await agent.resume(state, approve=pending_ids(state))
    requests = len(agent.client.seen)  # type: ignore[attr-defined]
    for verdict in ("approve", "deny"):
        with pytest.raises(ApprovalStateError, match="already resumed") as refused:
            await agent.resume(state, **{verdict: pending_ids(state)})
        assert refused.value.reason == "decided"
    assert paid == [("bob", 10)]
    assert len(agent.client.seen) == requests  # type: ignore[attr-defined]


async def test_approving_a_call_that_was_not_paused_takes_no_decision() -> None:
    """Naming a call that is not pending (one the policy already allowed, or one made
    up) is refused as misuse, and leaves the state good for its real answer."""
    paid: list[tuple[str, int]] = []
    agent = agent_for(paid, paying(("bob", 10), ("carol", 20)))
    state = await paused_state(agent)
    for approve in (["toolu_7"], [*pending_ids(state), "toolu_7"], pending_ids(state)[:1]):
        with pytest.raises(UsageError, match="pending") as misuse:
            await agent.resume(state, approve=approve)
        assert not isinstance(misuse.value, ApprovalStateError)
    await agent.resume(state, approve=["toolu_0"], deny=["toolu_1"])
    assert paid == [("bob", 10)]


async def test_a_decision_for_one_call_stays_with_that_call() -> None:
    paid: list[tuple[str, int]] = []
    agent = agent_for(paid, paying(("bob", 10), ("eve", 999)))
    state = await paused_state(agent)
    reply = await agent.resume(state, approve=["toolu_0"], deny=["toolu_1"])
    assert paid == [("bob", 10)]
    assert [r.outcome for r in reply.reports] == ["ok", "declined"]


# --------------------------------------------------------------------------------------
# Signed states (approval_key).


async def test_a_signed_state_resumes_on_a_worker_with_another_ledger_once() -> None:
    """With a shared key, a worker whose ledger never saw the pause checks the
    signature instead; its own ledger then holds the decision."""
    paid: list[tuple[str, int]] = []
    a = agent_for(paid, approval_key=KEY)
    b = agent_for(paid, approval_key=KEY)
    state = await paused_state(a)
    assert len(state.signature) == 64
    await b.resume(state, approve=pending_ids(state))
    assert paid == [("bob", 10)]
    with pytest.raises(ApprovalStateError, match="already resumed"):
        await b.resume(state, approve=pending_ids(state))
    assert paid == [("bob", 10)]


@pytest.mark.parametrize(
    "signature",
    [
        "",
        "0" * 64,
        "truncated",
        "upper",
        "another key",
        "non-ascii",
    ],
)
async def test_a_bad_signature_is_refused(signature: str) -> None:
    paid: list[tuple[str, int]] = []
    a = agent_for(paid, approval_key=KEY)
    b = agent_for(paid, approval_key=KEY)  # no record of the pause: the key alone decides
    state = await paused_state(a)
    good = state.signature
    spelled = {
        "truncated": good[:-2],
        "upper": good.upper() if good.upper() != good else good + "0",
        "another key": approval_module.sealed(
            state, approval_module.ApprovalKey(b"x" * 32)
        ).signature,
        "non-ascii": good[:-1] + "\u0660",
    }.get(signature, signature)
    forged = dataclasses.replace(state, signature=spelled)
    with pytest.raises(ApprovalStateError, match="signature") as refused:
        await b.resume(forged, approve=pending_ids(state))
    assert refused.value.reason == "tampered"
    assert paid == []


async def test_an_edited_state_re_signed_without_the_key_is_refused() -> None:
    """Editing a signed state and keeping its signature, or re-signing it with a key
    guessed wrong, never checks."""
    paid: list[tuple[str, int]] = []
    a = agent_for(paid, approval_key=KEY)
    b = agent_for(paid, approval_key=KEY)
    state = await paused_state(a)
    forged = with_calls(state, amount(9999))
    for candidate in (
        forged,
        approval_module.sealed(forged, approval_module.ApprovalKey(b"y" * 32)),
    ):
        with pytest.raises(ApprovalStateError, match="signature"):
            await b.resume(candidate, approve=pending_ids(candidate))
    assert paid == []


async def test_a_state_older_than_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    paid: list[tuple[str, int]] = []
    agent = agent_for(paid)
    state = await paused_state(agent)
    late = state.paused_at + approval_module.MAX_PAUSE_AGE_S + 1
    monkeypatch.setattr("sse_toolcalls.runtime.agent.time.time", lambda: late)
    with pytest.raises(ApprovalStateError, match="older") as refused:
        await agent.resume(state, approve=pending_ids(state))
    assert refused.value.reason == "expired"
    assert paid == []


@pytest.mark.parametrize("key", [b"short", "a text key of some length", 12345])
def test_an_approval_key_too_short_or_not_bytes_is_refused(key: Any) -> None:
    with pytest.raises(UsageError, match="approval_key"):
        Agent(FakeClient([]), payments([]), approval_key=key)


def test_the_key_never_shows_in_the_agents_repr() -> None:
    agent = Agent(FakeClient([]), payments([]), approval_key=KEY)
    assert "kkkk" not in repr(agent) and "kkkk" not in str(vars(agent))


# --------------------------------------------------------------------------------------
# A ledger that fails: nothing runs, the user still gets a reply.


class FailingLedger(InMemoryLedger):
    """A shared ledger that fails on the methods named in ``failing``."""

    def __init__(self) -> None:
        super().__init__()
        self.failing: set[str] = set()

    async def get(self, key: str) -> LedgerEntry | None:
        if "get" in self.failing:
            raise LedgerError("the ledger is down")
        return await super().get(key)

    async def reserve(self, key: str, *, tool: str) -> LedgerEntry | None:
        if "reserve" in self.failing:
            raise LedgerError("the ledger is down")
        return await super().reserve(key, tool=tool)

    async def record(self, key: str, content: Any, *, is_error: bool = False) -> None:
        if "record" in self.failing:
            raise LedgerError("the ledger is down")
        await super().record(key, content, is_error=is_error)


@pytest.mark.parametrize("failing", [{"get"}, {"reserve"}])
async def test_a_ledger_down_at_resume_runs_nothing_and_replies(failing: set[str]) -> None:
    paid: list[tuple[str, int]] = []
    ledger = FailingLedger()
    agent = agent_for(paid, ledger=ledger)
    state = await paused_state(agent)
    ledger.failing = failing
    reply = await agent.resume(state, approve=pending_ids(state))
    assert reply.is_fallback and reply.reason == "internal_error" and reply.text
    assert "approval_record_error" in [d.kind for d in reply.diagnostics]
    assert paid == []
    ledger.failing = set()
    # Nothing was decided: once the ledger answers, the state is still good, once.
    await agent.resume(state, approve=pending_ids(state))
    assert paid == [("bob", 10)]


async def test_an_unchecked_state_of_odd_values_with_the_ledger_down_still_replies() -> None:
    """With the ledger down the state cannot be checked: nothing of it beyond its
    messages and texts is read, so odd values in it never raise from ``resume``."""
    paid: list[tuple[str, int]] = []
    ledger = FailingLedger()
    agent = agent_for(paid, ledger=ledger)
    state = await paused_state(agent)
    ledger.failing = {"get"}
    odd = dataclasses.replace(
        state,
        denied=(("a", "b", "c"),),  # type: ignore[arg-type]
        retries=((1, 2, 3),),  # type: ignore[arg-type]
        elapsed="soon",  # type: ignore[arg-type]
        request_id=7,  # type: ignore[arg-type]
        messages="not messages",  # type: ignore[arg-type]
    )
    reply = await agent.resume(odd, approve=pending_ids(state))
    assert reply.is_fallback and reply.reason == "internal_error"
    assert paid == []


async def test_a_decision_whose_detail_is_not_recorded_is_still_taken_once() -> None:
    paid: list[tuple[str, int]] = []
    ledger = FailingLedger()
    agent = agent_for(paid, ledger=ledger)
    state = await paused_state(agent)
    ledger.failing = {"record"}
    reply = await agent.resume(state, approve=pending_ids(state))
    assert paid == [("bob", 10)]
    assert "approval_record_error" in [d.kind for d in reply.diagnostics]
    with pytest.raises(ApprovalStateError, match="already resumed"):
        await agent.resume(state, deny=pending_ids(state))


@pytest.mark.parametrize("signed", [False, True])
async def test_a_pause_that_cannot_be_recorded(signed: bool) -> None:
    """Unsigned, a pause nobody could check later is not offered: the reply is a
    fallback and the conversation keeps no call without its result. Signed, the
    signature is the proof and the pause stands."""
    paid: list[tuple[str, int]] = []
    ledger = FailingLedger()
    ledger.failing = {"record"}
    agent = agent_for(paid, ledger=ledger, **({"approval_key": KEY} if signed else {}))
    reply = await agent.run("pay bob 10")
    assert "approval_record_error" in [d.kind for d in reply.diagnostics]
    if signed:
        assert reply.state is not None
        ledger.failing = set()
        await agent.resume(reply.state, approve=pending_ids(reply.state))
        assert paid == [("bob", 10)]
    else:
        assert reply.state is None and reply.is_fallback
        assert not any(isinstance(m, AssistantMessage) for m in reply.conversation)
        assert paid == []


# --------------------------------------------------------------------------------------
# The property: any edit of the paused call is refused, signed or recorded.


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    to=st.text(max_size=8),
    value=st.one_of(
        st.integers(), st.floats(allow_nan=False), st.text(max_size=4), st.booleans(), st.none()
    ),
    where=st.sampled_from(["calls", "pending", "everywhere"]),
    signed=st.booleans(),
    backend=st.sampled_from(["asyncio", "trio"]),
)
def test_no_edit_of_the_shown_call_ever_runs(
    to: str, value: Any, where: str, signed: bool, backend: str
) -> None:
    shown = ("bob", 10)
    if (to, value) == shown and type(value) is int:
        return  # not an edit

    async def attack() -> list[tuple[str, int]]:
        paid: list[tuple[str, int]] = []
        agent = agent_for(paid, **({"approval_key": KEY} if signed else {}))
        state = await paused_state(agent)
        edited = with_calls(state, amount(value, to))
        forged = {
            "calls": dataclasses.replace(state, calls=edited.calls),
            "pending": dataclasses.replace(state, pending=edited.pending),
            "everywhere": edited,
        }[where]
        try:
            await agent.resume(forged, approve=pending_ids(state))
        except ApprovalStateError as exc:
            assert exc.reason == "tampered"
        else:
            raise AssertionError("an edited state was resumed")
        return paid

    assert anyio.run(attack, backend=backend) == []


# --------------------------------------------------------------------------------------
# The digest itself: equal values, equal digest; any other value, another.

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=12,
)


@settings(max_examples=400)
@given(a=JSON, b=JSON)
def test_two_values_share_a_digest_exactly_when_their_json_is_the_same(a: Any, b: Any) -> None:
    """The oracle is JSON with sorted keys: it tells ``1`` from ``1.0`` and ``true``,
    ``-0.0`` from ``0.0``, and ignores the order of an object's keys, as the digest
    must (the order of a dict is not part of a call; the type of a number is)."""
    same = json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    assert (value_digest(a) == value_digest(b)) == same
    assert value_digest(a) == value_digest(json.loads(json.dumps(a)))


@settings(max_examples=200)
@given(args=st.dictionaries(st.text(max_size=4), JSON, max_size=4), other=JSON)
def test_a_call_digest_changes_with_any_argument(args: dict[str, Any], other: Any) -> None:
    call = ToolCall(name="pay", args=args, provider="anthropic", call_id="c", index=0)
    for key in [*args, "extra"]:
        edited = dataclasses.replace(call, args={**args, key: other})
        same = json.dumps(edited.args, sort_keys=True) == json.dumps(args, sort_keys=True)
        assert (call_digest(edited, request_id="r") == call_digest(call, request_id="r")) == same


def test_a_shared_structure_costs_its_distinct_parts_not_its_expansion() -> None:
    """60 levels of a list holding the level below twice: 2**60 leaves written out,
    61 objects in memory. The digest visits each object once (a walk of the expansion
    would never end: this test is its hang guard)."""
    value: Any = ["leaf"]
    for _ in range(60):
        value = [value, value]
    assert len(value_digest(value)) == 32


def test_a_cycle_or_an_object_of_no_known_kind_is_refused_as_tampered() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    for bad in (cycle, {"a": object()}, [1, {2, 3}]):
        with pytest.raises(ApprovalStateError) as refused:
            value_digest(bad)
        assert refused.value.reason == "tampered"


async def test_something_that_is_not_a_state_is_refused() -> None:
    agent = agent_for([])
    state = await paused_state(agent)
    for fake in (dataclasses.asdict(state), None, "state"):
        with pytest.raises(ApprovalStateError, match="not an ApprovalState"):
            await agent.resume(fake, approve=pending_ids(state))  # type: ignore[arg-type]


async def test_the_ledger_shows_the_pause_and_the_decision_to_people_reading_it() -> None:
    paid: list[tuple[str, int]] = []
    ledger = InMemoryLedger()
    agent = agent_for(paid, ledger=ledger)
    state = await paused_state(agent)
    assert [(e.tool, e.state) for e in ledger.entries()] == [("<approval pause>", "done")]
    await agent.resume(state, deny=pending_ids(state))
    entries = {e.tool: e for e in ledger.entries()}
    assert set(entries) == {"<approval pause>", "<approval decision>"}
    decision = entries["<approval decision>"].content
    assert isinstance(decision, dict) and decision["verdict"] == "denied"
    assert decision["deny"] == [call_digest(state.pending[0], request_id="req-1")]
