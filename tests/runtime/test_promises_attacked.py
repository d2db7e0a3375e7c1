"""Promises of the runtime attacked from a user's and an attacker's seat (the outside
suite's kind of test): each test here failed before the fix its docstring names."""

from __future__ import annotations

import anyio
import pytest

from sse_toolcalls.calls import ToolCall
from sse_toolcalls.errors import ToolRetry
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.dispatch import Dispatcher
from sse_toolcalls.runtime.ledger import InMemoryLedger
from sse_toolcalls.tools import ToolRegistry
from tests.runtime.test_agent import FakeClient, answer, calling

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
