"""Permissions and approval through the Agent: a policy's answer per call, a paused run,
and a resume that runs an approved call once and a denied one never."""

from __future__ import annotations

from typing import Any

import pytest

from sse_toolcalls.calls import ToolCall
from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.approval import ApprovalContext, Decision, Deny
from sse_toolcalls.runtime.errors import ApprovalStateError
from sse_toolcalls.runtime.ledgers.memory import InMemoryLedger
from sse_toolcalls.runtime.tools import ToolRegistry
from tests.runtime.test_agent import FakeClient, answer, calling

pytestmark = pytest.mark.anyio


def tools(ran: list[str]) -> ToolRegistry:
    registry = ToolRegistry()

    def delete_file(path: str) -> str:
        """Delete a file."""
        ran.append(path)
        return f"deleted {path}"

    def list_files() -> list[str]:
        """List the files."""
        ran.append("list")
        return ["a", "b"]

    registry.register(delete_file, effect="write", needs_approval=True)
    registry.register(list_files)
    return registry


def turn_of_two() -> list[Any]:
    return [
        calling(("list_files", {}), ("delete_file", {"path": "a"})),
        answer("all done"),
    ]


async def test_a_call_that_needs_approval_waits_and_nothing_of_its_turn_runs() -> None:
    ran: list[str] = []
    client = FakeClient(turn_of_two())
    reply = await Agent(client, tools(ran)).run("clean up")
    assert ran == []  # not even the read beside it: the turn waits whole
    assert [c.call_id for c in reply.pending_approvals] == ["toolu_0_1"]
    assert reply.state is not None and not reply.is_fallback
    assert len(client.seen) == 1


async def test_approve_runs_once_and_a_second_resume_is_refused() -> None:
    ran: list[str] = []
    client = FakeClient(turn_of_two())
    agent = Agent(client, tools(ran))
    paused = await agent.run("clean up")
    assert paused.state is not None
    reply = await agent.resume(paused.state, approve=["toolu_0_1"])
    assert reply.text == "all done" and not reply.pending_approvals
    assert sorted(ran) == ["a", "list"]
    assert [r.outcome for r in reply.reports] == ["ok", "ok"]
    with pytest.raises(UsageError, match="already resumed"):
        await agent.resume(paused.state, approve=["toolu_0_1"])
    assert sorted(ran) == ["a", "list"]


async def test_a_resume_elsewhere_with_the_same_ledger_is_refused() -> None:
    """The decision is on record in the shared ledger: a second resume on another
    worker is refused before anything runs (it used to go on, replaying the write and
    running the rest of the request a second time)."""
    ran: list[str] = []
    ledger = InMemoryLedger()
    first = Agent(FakeClient(turn_of_two()), tools(ran), ledger=ledger)
    paused = await first.run("clean up")
    assert paused.state is not None
    await first.resume(paused.state, approve=["toolu_0_1"])
    again = Agent(FakeClient([answer("all done")]), tools(ran), ledger=ledger)
    with pytest.raises(ApprovalStateError, match="already resumed") as refused:
        await again.resume(paused.state, approve=["toolu_0_1"])
    assert refused.value.reason == "decided"
    assert sorted(ran) == ["a", "list"]


async def test_deny_never_runs_and_the_model_hears_the_user_declined() -> None:
    ran: list[str] = []
    client = FakeClient(turn_of_two())
    agent = Agent(client, tools(ran))
    paused = await agent.run("clean up")
    assert paused.state is not None
    reply = await agent.resume(paused.state, deny=["toolu_0_1"])
    assert ran == ["list"]
    declined = reply.results[1]
    assert declined.is_error and declined.call.call_id == "toolu_0_1"
    assert isinstance(declined.content, dict)
    assert declined.content["error"] == "declined"
    assert "user declined" in declined.content["message"]
    sent = client.seen[-1][-1]  # the results message the model got
    assert sent.results[1] == declined


async def test_resume_must_name_every_pending_call_once() -> None:
    agent = Agent(FakeClient(turn_of_two()), tools([]))
    paused = await agent.run("clean up")
    assert paused.state is not None
    for approve, deny in ([], []), (["toolu_0_1"], ["toolu_0_1"]), (["nope"], []):
        with pytest.raises(UsageError, match="pending"):
            await agent.resume(paused.state, approve=approve, deny=deny)


async def test_a_policy_denial_reaches_the_model_with_its_reason() -> None:
    ran: list[str] = []
    seen: list[tuple[str, int, str | None]] = []

    def policy(context: ApprovalContext, call: ToolCall) -> Decision:
        seen.append((context.conversation_id, context.turn, call.name))
        return (
            Deny(reason="listing is off during maintenance")
            if call.name == "list_files"
            else "allow"
        )

    registry = tools(ran)
    client = FakeClient([calling(("list_files", {})), answer("sorry")])
    reply = await Agent(client, registry, policy=policy).run("list", conversation_id="c1")
    assert ran == [] and reply.text == "sorry"
    (result,) = reply.results
    assert isinstance(result.content, dict)
    assert result.content["reason"] == "listing is off during maintenance"
    assert reply.reports[0].outcome == "declined"
    assert seen == [("c1", 0, "list_files")]


async def test_an_async_policy_can_ask_and_a_raising_one_denies() -> None:
    ran: list[str] = []

    async def asks(context: ApprovalContext, call: ToolCall) -> Decision:
        return "ask"

    paused = await Agent(FakeClient([calling(("list_files", {}))]), tools(ran), policy=asks).run(
        "x"
    )
    assert [c.name for c in paused.pending_approvals] == ["list_files"]

    def broken(context: ApprovalContext, call: ToolCall) -> Decision:
        raise RuntimeError("policy store down")

    client = FakeClient([calling(("list_files", {})), answer("ok")])
    reply = await Agent(client, tools(ran), policy=broken).run("x")
    assert ran == [] and reply.reports[0].outcome == "declined"


async def test_a_denial_wins_over_needs_approval() -> None:
    ran: list[str] = []

    def no_deletes(context: ApprovalContext, call: ToolCall) -> Decision:
        return Deny(reason="no deletes") if call.name == "delete_file" else "allow"

    client = FakeClient(turn_of_two())
    reply = await Agent(client, tools(ran), policy=no_deletes).run("x")
    assert not reply.pending_approvals and ran == ["list"]
    assert [r.outcome for r in reply.reports] == ["ok", "declined"]
