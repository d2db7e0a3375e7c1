"""The streaming Agent (issue 11, item 6): ``run_stream`` against the simulator, every
dialect, asyncio and trio; ``run`` is the same pipeline with the events dropped."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from sse_toolcalls import Dialect
from sse_toolcalls.calls import (
    DIALECTS,
    StreamEvent,
    TextDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolSpec,
)
from sse_toolcalls.conversation import Conversation
from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime.agent import Agent, AgentReply
from sse_toolcalls.runtime.approval import ApprovalContext, Decision, Deny, approval_id
from sse_toolcalls.runtime.clients import ProviderClient, client_for
from sse_toolcalls.runtime.events import (
    AgentEvent,
    ApprovalRequested,
    FallbackShown,
    RequestStarted,
    RetryScheduled,
    RunFinished,
    ToolArgumentsPreview,
    ToolCallRefused,
    ToolCallResult,
)
from sse_toolcalls.runtime.retry import RetryPolicy
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.tooling.simulator import HTTPError, ScriptedCall, Simulator, Turn

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:Async generator 'httpx\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore\\.:ResourceWarning"),
]
per_dialect = pytest.mark.parametrize("dialect", DIALECTS)

NOTE = {"title": "groceries", "lines": ["milk", "eggs \u00e9\U0001f95a", "bread"], "pinned": True}
"""Arguments with a nested list, a non-ASCII string and a literal: worth previewing."""


async def no_sleep(seconds: float) -> None:
    await anyio.lowlevel.checkpoint()


class Notes:
    def __init__(self) -> None:
        self.saved: list[dict[str, Any]] = []

    def registry(self, *, needs_approval: bool = False) -> ToolRegistry:
        registry = ToolRegistry()

        def save_note(title: str, lines: list[str], pinned: bool) -> str:
            """Save a note.

            Args:
                title: its title.
                lines: its lines.
                pinned: whether it stays on top.
            """
            self.saved.append({"title": title, "lines": lines, "pinned": pinned})
            return f"saved {title}"

        registry.register(save_note, effect="write", needs_approval=needs_approval)
        return registry


def client(sim: Simulator, dialect: Dialect) -> ProviderClient:
    return client_for(
        dialect,
        model="sim-model-1",
        api_key="test-key",
        base_url=sim.base_url_for(dialect),
        idle_timeout=2.0,
    )


async def collect(agent: Agent, text: str) -> list[AgentEvent]:
    events: list[AgentEvent] = []
    with anyio.fail_after(30):
        async with agent.run_stream(text, request_id="msg-1") as stream:
            async for event in stream:
                events.append(event)
        assert stream.reply is not None
    return events


def of(kind: type[Any], events: Sequence[AgentEvent]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


@per_dialect
async def test_a_streamed_run_shows_text_calls_growing_arguments_results_and_the_reply(
    dialect: Dialect, simulator: Simulator
) -> None:
    notes = Notes()
    simulator.play(
        [
            Turn(
                text="Saving it.",
                calls=(ScriptedCall(name="save_note", args=NOTE),),
                fragment_size=3,
                usage={"input_tokens": 11, "output_tokens": 5},
            ),
            Turn(text="Your note is saved.", usage={"input_tokens": 20, "output_tokens": 6}),
        ]
    )
    async with client(simulator, dialect) as provider:
        events = await collect(Agent(provider, notes.registry()), "Note: milk, eggs, bread")
    simulator.assert_no_problems()
    assert notes.saved == [NOTE]
    assert isinstance(events[0], RequestStarted) and events[0].step == 1
    assert isinstance(events[-1], RunFinished)
    reply = events[-1].reply
    assert reply.text == "Your note is saved." and not reply.is_fallback
    texts = "".join(e.text for e in of(TextDelta, events))
    assert texts == "Saving it.Your note is saved."
    [started] = of(ToolCallStarted, events)
    assert started.name == "save_note"
    [completed] = of(ToolCallCompleted, events)
    assert completed.call.args == NOTE
    [result] = of(ToolCallResult, events)
    assert result.outcome == "ok" and result.call == completed.call
    assert result.result.content == "saved groceries"
    order = [type(e).__name__ for e in events]
    assert order.index("ToolCallStarted") < order.index("ToolCallCompleted")
    assert order.index("ToolCallCompleted") < order.index("ToolCallResult")
    assert [e.step for e in of(RequestStarted, events)] == [1, 2]
    previews: list[ToolArgumentsPreview] = of(ToolArgumentsPreview, events)
    if dialect != "gemini":  # Gemini sends each call whole: no argument deltas
        assert len(previews) > 3
        assert "".join(p.delta for p in previews) == completed.call.raw_arguments
        assert previews[-1].arguments == NOTE  # the live value, complete at the end
        assert all(p.name == "save_note" for p in previews)
    # Item 7: the totals, summed over both turns, whatever the dialect calls them.
    assert reply.usage.input_tokens == 31 and reply.usage.output_tokens == 11
    assert reply.usage.turns == 2
    assert reply.steps == 2 and reply.requests == 2 and reply.retries == 0
    assert reply.elapsed > 0


@per_dialect
async def test_run_and_run_stream_give_the_same_reply(
    dialect: Dialect, simulator: Simulator
) -> None:
    replies: list[AgentReply] = []
    for streamed in (False, True):
        notes = Notes()
        simulator.play([Turn(calls=(ScriptedCall(name="save_note", args=NOTE),)), Turn(text="ok")])
        async with client(simulator, dialect) as provider:
            agent = Agent(provider, notes.registry())
            if streamed:
                events = await collect(agent, "note")
                replies.append(events[-1].reply)  # type: ignore[union-attr]
            else:
                replies.append(await agent.run("note", request_id="msg-1"))
        assert notes.saved == [NOTE]
    plain, streamed_reply = replies
    assert plain.text == streamed_reply.text
    assert [r.outcome for r in plain.reports] == [r.outcome for r in streamed_reply.reports]
    assert plain.conversation == streamed_reply.conversation


@per_dialect
async def test_a_retry_says_its_delay_and_a_fallback_is_an_event(
    dialect: Dialect, simulator: Simulator
) -> None:
    simulator.play(
        [Turn(fault=HTTPError(status=503)), Turn(fault=HTTPError(status=503)), Turn(text="hi")]
    )
    retry = RetryPolicy(attempts=2, sleep=no_sleep, random=lambda: 0.5, base_delay=0.25)
    async with client(simulator, dialect) as provider:
        events = await collect(Agent(provider, Notes().registry(), retry=retry), "hello")
    [scheduled] = of(RetryScheduled, events)
    assert scheduled.attempt == 1 and scheduled.delay == pytest.approx(0.1875)
    assert [(e.step, e.attempt) for e in of(RequestStarted, events)] == [(1, 1), (1, 2)]
    [fallback] = of(FallbackShown, events)
    assert fallback.reason == "provider_unavailable"
    assert events[-2] == fallback and isinstance(events[-1], RunFinished)
    assert events[-1].reply.text == fallback.text and events[-1].reply.retries == 1


@per_dialect
async def test_an_approval_request_is_an_event_and_resume_streams_the_rest(
    dialect: Dialect, simulator: Simulator
) -> None:
    notes = Notes()
    used = {"input_tokens": 3, "output_tokens": 2}
    simulator.play(
        [
            Turn(calls=(ScriptedCall(name="save_note", args=NOTE),), usage=used),
            Turn(text="done", usage=used),
        ]
    )
    async with client(simulator, dialect) as provider:
        agent = Agent(provider, notes.registry(needs_approval=True))
        events = await collect(agent, "note")
        [asked] = of(ApprovalRequested, events)
        assert notes.saved == [] and not of(ToolCallResult, events)
        assert isinstance(events[-1], RunFinished) and events[-1].reply.state == asked.state
        resumed: list[AgentEvent] = []
        approve = [approval_id(c) for c in asked.calls]
        async with agent.resume_stream(asked.state, approve=approve) as stream:
            async for event in stream:
                resumed.append(event)
    assert notes.saved == [NOTE]
    assert [e.outcome for e in of(ToolCallResult, resumed)] == ["ok"]
    assert stream.reply is not None and stream.reply.text == "done"
    # The totals go on across the pause.
    assert stream.reply.steps == 2 and stream.reply.usage.turns == 2
    assert stream.reply.usage.input_tokens == 6


async def test_a_denied_call_is_a_refusal_event() -> None:
    from tests.runtime.test_agent import FakeClient, answer, calling

    def policy(context: ApprovalContext, call: Any) -> Decision:
        return Deny(reason="notes are read-only today")

    agent = Agent(
        FakeClient([calling(("save_note", NOTE)), answer("sorry")]),
        Notes().registry(),
        policy=policy,
    )
    events = await collect(agent, "note")
    [refused] = of(ToolCallRefused, events)
    assert refused.reason == "notes are read-only today"
    assert [e.outcome for e in of(ToolCallResult, events)] == ["declined"]


class Hanging:
    """A client whose turn streams a little text, then waits forever."""

    dialect = "anthropic"

    def __init__(self) -> None:
        self.closed = False

    async def stream_events(
        self, conversation: Conversation, tools: Sequence[ToolSpec] = (), **options: Any
    ) -> AsyncIterator[StreamEvent]:
        try:
            yield TextDelta(text="thinking")
            await anyio.sleep_forever()
        finally:
            self.closed = True


async def test_leaving_the_block_early_cancels_the_run_and_closes_the_stream() -> None:
    hanging = Hanging()
    agent = Agent(hanging, Notes().registry())
    with anyio.fail_after(5):
        async with agent.run_stream("hello") as stream:
            async for event in stream:
                if isinstance(event, TextDelta):
                    break
    assert hanging.closed and stream.reply is None


class Misused:
    dialect = "anthropic"

    async def stream_events(
        self, conversation: Conversation, tools: Sequence[ToolSpec] = (), **options: Any
    ) -> AsyncIterator[StreamEvent]:
        raise UsageError("this conversation cannot be encoded")
        yield TextDelta(text="")  # pragma: no cover - makes this an async generator


async def test_misuse_before_any_tool_ran_is_raised_from_the_stream_and_from_run() -> None:
    agent = Agent(Misused(), Notes().registry())
    with pytest.raises(UsageError, match="cannot be encoded"):
        async with agent.run_stream("hello") as stream:
            async for _event in stream:
                pass
    with pytest.raises(UsageError, match="cannot be encoded"):
        await agent.run("hello")


async def test_run_sync_refuses_a_running_loop() -> None:
    from tests.runtime.test_agent import FakeClient, answer

    agent = Agent(FakeClient([answer("hi")]), Notes().registry())
    with pytest.raises(UsageError, match=r"await agent\.run"):
        agent.run_sync("hello")


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_run_sync_runs_a_script(backend: Any) -> None:
    from tests.runtime.test_agent import FakeClient, answer

    agent = Agent(FakeClient([answer("hi there")]), Notes().registry())
    reply = agent.run_sync("hello", backend=backend)
    assert reply.text == "hi there" and reply.steps == 1
