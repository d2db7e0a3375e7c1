"""AG-UI out of a real run (issue 32): the simulator in every dialect, our stream read by
``@ag-ui/client``'s own ``HttpAgent`` (``js/agui_read.mjs``), what it assembles compared
with the run's; approvals as interrupts, answered by the next run's ``resume``; a run
posted twice runs its write once."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from sse_toolcalls import Dialect
from sse_toolcalls.calls import DIALECTS, ReasoningDelta
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.clients import ProviderClient, client_for
from sse_toolcalls.runtime.events import AgentEvent, FallbackShown, RetryScheduled
from sse_toolcalls.runtime.ledgers.memory import InMemoryLedger
from sse_toolcalls.runtime.retry import RetryPolicy
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.runtime.ui.agui import PausedRuns, agui_events, agui_response, conversation_of
from sse_toolcalls.runtime.ui.asgi import UIResponse, ui_app
from sse_toolcalls.runtime.ui.sse_out import sse_event
from sse_toolcalls.tooling._loopback import LoopbackServer
from sse_toolcalls.tooling.simulator import Cut, HTTPError, ScriptedCall, Simulator, Turn

from .js_clients import require_clients, run_script

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:Async generator 'httpx\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore\\.:ResourceWarning"),
]
per_dialect = pytest.mark.parametrize("dialect", DIALECTS)

NOTE = {"title": "groceries", "lines": ["milk", "eggs \u00e9\U0001f95a", "bread"], "pinned": True}


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


def body(run_id: str, messages: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    return {
        "threadId": "thread-1",
        "runId": run_id,
        "messages": messages,
        "tools": [],
        "context": [],
        **more,
    }


async def post(agent: Agent, run: dict[str, Any], paused: PausedRuns) -> tuple[int, bytes]:
    status, headers, chunks = agui_response(agent, json.dumps(run).encode(), paused=paused)
    assert headers["content-type"].startswith("text/event-stream")
    out: list[bytes] = []
    with anyio.fail_after(30):
        async for chunk in chunks:
            out.append(chunk)
    return status, b"".join(out)


def read(stream: bytes, run: dict[str, Any]) -> Any:
    return run_script(
        "agui_read.mjs",
        json.dumps(
            {
                "stream": stream.decode("utf-8"),
                "messages": run["messages"],
                "threadId": run["threadId"],
                "runId": run["runId"],
                **({"resume": run["resume"]} if "resume" in run else {}),
            }
        ).encode(),
    )


USER = {"id": "u1", "role": "user", "content": "Note: milk, eggs, bread"}


@per_dialect
async def test_the_client_assembles_the_runs_text_calls_and_results(
    dialect: Dialect, simulator: Simulator
) -> None:
    require_clients()
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
    run = body("run-1", [USER])
    async with client(simulator, dialect) as provider:
        status, stream = await post(Agent(provider, notes.registry()), run, PausedRuns())
    simulator.assert_no_problems()
    assert status == 200 and notes.saved == [NOTE]
    got = read(stream, run)
    assert got["error"] is None, got
    assert got["posted"]["threadId"] == "thread-1" and got["posted"]["runId"] == "run-1"
    assert got["outcome"]["outcome"] == "success"
    [usage] = got["outcome"]["usage"]
    assert (usage["inputTokens"], usage["outputTokens"]) == (31, 11)
    messages = got["messages"]
    assert messages[0] == USER
    first, result, last = messages[1:]
    assert first["role"] == "assistant" and first["content"] == "Saving it."
    [call] = first["toolCalls"]
    assert call["function"]["name"] == "save_note"
    assert json.loads(call["function"]["arguments"]) == NOTE
    assert result["role"] == "tool" and result["toolCallId"] == call["id"]
    assert result["content"] == "saved groceries"
    assert last == {"id": last["id"], "role": "assistant", "content": "Your note is saved."}
    # Arguments streamed as the provider sent them (Gemini sends each call whole).
    assert got["events"].count("TOOL_CALL_ARGS") > (1 if dialect != "gemini" else 0)
    # Every event carries a run-scoped sequence id.
    ids = [line for line in stream.decode().split("\n") if line.startswith("id: ")]
    assert ids == [f"id: run-1:{n}" for n in range(1, len(ids) + 1)]
    assert len(ids) == len(got["events"])


@per_dialect
async def test_an_approval_is_an_interrupt_answered_once_by_the_next_runs_resume(
    dialect: Dialect, simulator: Simulator
) -> None:
    require_clients()
    notes = Notes()
    simulator.play(
        [
            Turn(
                calls=(ScriptedCall(name="save_note", args=NOTE),),
                fragment_size=5,
                usage={"input_tokens": 11, "output_tokens": 5},
            ),
            Turn(text="Saved.", usage={"input_tokens": 20, "output_tokens": 6}),
        ]
    )
    paused = PausedRuns()
    first = body("run-1", [USER])
    async with client(simulator, dialect) as provider:
        agent = Agent(provider, notes.registry(needs_approval=True))
        status, stream = await post(agent, first, paused)
        asked = read(stream, first)
        assert status == 200 and notes.saved == [] and asked["error"] is None
        assert asked["outcome"]["outcome"] == "interrupt"
        [interrupt] = asked["outcome"]["interrupts"]
        [call] = asked["messages"][-1]["toolCalls"]
        assert interrupt["toolCallId"] == call["id"] and interrupt["reason"] == "tool_approval"
        assert [i["id"] for i in asked["pendingInterrupts"]] == [interrupt["id"]]
        answer = [
            {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
        ]
        second = body("run-2", asked["messages"], resume=answer)
        status, stream = await post(agent, second, paused)
        done = read(stream, second)
        assert done["error"] is None and done["outcome"]["outcome"] == "success"
        # Each run reports its own calls' usage (AG-UI's rule for a resumed run).
        [before] = asked["outcome"]["usage"]
        [after] = done["outcome"]["usage"]
        assert (before["inputTokens"], before["outputTokens"]) == (11, 5)
        assert (after["inputTokens"], after["outputTokens"]) == (20, 6)
        assert done["posted"]["resume"] == answer
        result, last = done["messages"][-2:]
        assert result["role"] == "tool" and result["toolCallId"] == call["id"]
        assert last["content"] == "Saved."
        assert notes.saved == [NOTE]
        # The same answer posted again: refused as a run error, the write not run again.
        status, stream = await post(agent, second, paused)
        again = read(stream, second)
    assert status == 200 and again["error"] is not None
    assert again["error"]["code"] == "ApprovalStateError"
    assert notes.saved == [NOTE]


async def test_the_same_run_posted_twice_runs_its_write_once(simulator: Simulator) -> None:
    notes = Notes()
    turn = Turn(calls=(ScriptedCall(name="save_note", args=NOTE),))
    simulator.play([turn, Turn(text="Saved."), turn, Turn(text="Saved.")])
    run = body("run-1", [USER])
    async with client(simulator, "openai_chat") as provider:
        agent = Agent(provider, notes.registry())
        for _ in range(2):
            status, stream = await post(agent, run, PausedRuns())
            assert status == 200 and b'"RUN_FINISHED"' in stream
    assert notes.saved == [NOTE]
    replayed = [
        json.loads(line[6:])
        for line in stream.decode().split("\n")
        if line.startswith("data: ") and "TOOL_CALL_RESULT" in line
    ]
    # The second run's result is the first run's, replayed from the ledger.
    [result] = [json.loads(r["content"]) for r in replayed]
    assert result["replayed"] is True and result["result"] == "saved groceries"


async def no_sleep(seconds: float) -> None:
    await anyio.lowlevel.checkpoint()


async def tee(agent: Agent, run: dict[str, Any], seen: list[AgentEvent]) -> bytes:
    """The run's AG-UI stream, keeping the run's own events in ``seen``."""

    async def recorded(events: AsyncIterator[AgentEvent]) -> AsyncIterator[AgentEvent]:
        async for event in events:
            seen.append(event)
            yield event

    out: list[bytes] = []
    with anyio.fail_after(30):
        async with agent.run_stream(
            conversation_of(run["messages"], agent.client.dialect),  # type: ignore[attr-defined]
            conversation_id=run["threadId"],
            request_id=run["runId"],
        ) as events:
            async for event in agui_events(
                recorded(events),
                thread_id=run["threadId"],
                run_id=run["runId"],
                messages=run["messages"],
            ):
                out.append(sse_event(json.dumps(event), id=str(len(out) + 1)))
    return b"".join(out)


@per_dialect
async def test_a_retry_mid_call_voids_what_it_showed_by_a_messages_snapshot(
    dialect: Dialect, simulator: Simulator
) -> None:
    require_clients()
    notes = Notes()
    simulator.play(
        [
            Turn(
                thinking="Let me think.",
                text="Half an answer",
                calls=(ScriptedCall(name="save_note", args=NOTE),),
                fragment_size=4,
                fault=Cut(after_events=8, extra_bytes=3),
            ),
            Turn(thinking="Again.", text="Fresh."),
        ]
    )
    retry = RetryPolicy(attempts=2, sleep=no_sleep, random=lambda: 0.5, base_delay=0.25)
    run = body("run-1", [USER])
    seen: list[AgentEvent] = []
    async with client(simulator, dialect) as provider:
        stream = await tee(Agent(provider, notes.registry(), retry=retry), run, seen)
    assert notes.saved == []
    assert any(isinstance(e, RetryScheduled) for e in seen), seen
    got = read(stream, run)
    assert got["error"] is None, got
    assert "MESSAGES_SNAPSHOT" in got["events"]
    last = max(i for i, e in enumerate(seen) if isinstance(e, RetryScheduled))
    voided = "".join(e.text for e in seen[:last] if isinstance(e, ReasoningDelta))
    reasoning = "".join(e.text for e in seen[last:] if isinstance(e, ReasoningDelta))
    expected = [("user", USER["content"])]
    # The voided attempt's reasoning is emptied (see agui), its text and call gone.
    expected += [("reasoning", "")] if voided else []
    expected += [("reasoning", reasoning)] if reasoning else []
    expected.append(("assistant", "Fresh."))
    assert [(m["role"], m.get("content")) for m in got["messages"]] == expected
    assert not any(m.get("toolCalls") for m in got["messages"])


@per_dialect
async def test_a_fallback_is_a_text_message_and_the_run_finishes(
    dialect: Dialect, simulator: Simulator
) -> None:
    require_clients()
    simulator.play([Turn(fault=HTTPError(status=503)), Turn(fault=HTTPError(status=503))])
    retry = RetryPolicy(attempts=2, sleep=no_sleep, random=lambda: 0.5, base_delay=0.25)
    run = body("run-1", [USER])
    seen: list[AgentEvent] = []
    async with client(simulator, dialect) as provider:
        stream = await tee(Agent(provider, Notes().registry(), retry=retry), run, seen)
    [fallback] = [e for e in seen if isinstance(e, FallbackShown)]
    got = read(stream, run)
    assert got["error"] is None and got["outcome"]["outcome"] == "success"
    assert [(m["role"], m["content"]) for m in got["messages"][1:]] == [
        ("assistant", fallback.text)
    ]
    assert got["events"].count("CUSTOM") == 1  # the retry, said as such


@pytest.mark.parametrize("dialect", ["anthropic", "gemini"])
async def test_a_denied_interrupt_runs_nothing_and_another_thread_cannot_answer(
    dialect: Dialect, simulator: Simulator
) -> None:
    require_clients()
    notes = Notes()
    simulator.play(
        [Turn(calls=(ScriptedCall(name="save_note", args=NOTE),)), Turn(text="Not saved.")]
    )
    paused = PausedRuns()
    first = body("run-1", [USER])
    async with client(simulator, dialect) as provider:
        agent = Agent(provider, notes.registry(needs_approval=True))
        _, stream = await post(agent, first, paused)
        asked = read(stream, first)
        [interrupt] = asked["outcome"]["interrupts"]
        approve = [
            {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
        ]
        # The same interrupt id posted from another thread: refused, nothing decided.
        stranger = {**body("run-x", asked["messages"], resume=approve), "threadId": "thread-2"}
        status, stream = await post(agent, stranger, paused)
        assert status == 400 and b'"RUN_ERROR"' in stream and notes.saved == []
        cancel = [{"interruptId": interrupt["id"], "status": "cancelled"}]
        second = body("run-2", asked["messages"], resume=cancel)
        _, stream = await post(agent, second, paused)
        done = read(stream, second)
    assert done["error"] is None and notes.saved == []
    result, last = done["messages"][-2:]
    assert result["role"] == "tool" and result["toolCallId"] == interrupt["toolCallId"]
    assert "declined" in result["content"]
    assert last["content"] == "Not saved."


async def test_a_paused_run_posted_again_and_approved_again_writes_once(
    simulator: Simulator,
) -> None:
    # A reload re-posts the run (same runId) after its approval: a second pause, a second
    # approval. The write runs once: both turns share the request's write key.
    notes = Notes()
    turn = Turn(calls=(ScriptedCall(name="save_note", args=NOTE),))
    paused = PausedRuns()
    first = body("run-1", [USER])
    contents: list[str] = []
    tokens: set[str] = set()
    async with client(simulator, "openai_responses") as provider:
        agent = Agent(provider, notes.registry(needs_approval=True))
        for n in range(2):
            simulator.play([turn, Turn(text="Saved.")])  # each post, a conversation of its own
            _, stream = await post(agent, first, paused)
            [interrupt] = next(
                json.loads(line[6:])
                for line in stream.decode().split("\n")
                if line.startswith("data: ") and '"RUN_FINISHED"' in line
            )["outcome"]["interrupts"]
            tokens.add(interrupt["id"])
            answer = {
                "interruptId": interrupt["id"],
                "status": "resolved",
                "payload": {"approved": True},
            }
            _, stream = await post(agent, body(f"run-{n + 2}", [USER], resume=[answer]), paused)
            contents += [
                json.loads(line[6:])["content"]
                for line in stream.decode().split("\n")
                if line.startswith("data: ") and '"TOOL_CALL_RESULT"' in line
            ]
            simulator.assert_no_problems()
    assert len(tokens) == 2 and notes.saved == [NOTE]
    assert contents[0] == "saved groceries" and '"replayed": true' in contents[1]


def test_the_clients_own_posts_served_by_ui_app_approve_a_write_once() -> None:
    """The whole way: HttpAgent posts its RunAgentInput to ``ui_app`` under uvicorn, a
    real run against the simulator pauses, the client answers the interrupt with its own
    ``buildResumeArray``, and the approved write runs once."""
    require_clients()
    notes = Notes()
    paused = PausedRuns()
    ledger = InMemoryLedger()  # one ledger for every request, as workers share one

    async def respond(body: bytes) -> UIResponse:
        # In the server's own event loop: the provider's connections belong to it.
        provider = client(simulator, "anthropic")
        agent = Agent(provider, notes.registry(needs_approval=True), ledger=ledger)
        status, headers, chunks = agui_response(agent, body, paused=paused)

        async def closing() -> AsyncIterator[bytes]:
            try:
                async for chunk in chunks:
                    yield chunk
            finally:
                await provider.aclose()

        return status, headers, closing()

    with Simulator() as simulator:
        simulator.play(
            [Turn(calls=(ScriptedCall(name="save_note", args=NOTE),)), Turn(text="Saved.")]
        )
        served = LoopbackServer(ui_app(respond), what="the UI app")
        served.start()
        try:
            got = run_script(
                "agui_http.mjs",
                json.dumps(
                    {
                        "url": f"http://127.0.0.1:{served.port}/agent",
                        "threadId": "thread-asgi",
                        "text": "Note: milk",
                        "approve": True,
                    }
                ).encode(),
            )
        finally:
            served.stop()
        simulator.assert_no_problems()
    assert [r.get("outcome") for r in got["runs"]] == ["interrupt", "success"], got
    assert notes.saved == [NOTE]
    assert [m["role"] for m in got["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert got["messages"][-1]["content"] == "Saved."
