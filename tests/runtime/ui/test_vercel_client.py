"""The Vercel UI message stream read by the ``ai`` package itself (issue 32): a real
run against the simulator, every dialect, asyncio and trio, its bytes parsed by the
SDK's own SSE parser and assembled by ``readUIMessageStream``; the approval round trip
through the body ``useChat`` posts; an approved write runs once when posted twice."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import anyio
import pytest

from sse_toolcalls import Dialect
from sse_toolcalls.calls import DIALECTS
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.ui.vercel import VERCEL_HEADERS, vercel_response
from sse_toolcalls.tooling.simulator import HTTPError, ScriptedCall, Simulator, Turn
from tests.runtime.test_run_stream import NOTE, Notes, client, no_sleep

from .js_clients import run_script

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:Async generator 'httpx\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore\\.:ResourceWarning"),
]
per_dialect = pytest.mark.parametrize("dialect", DIALECTS)


def user_body(chat: str, message_id: str, text: str) -> dict[str, Any]:
    return {
        "id": chat,
        "trigger": "submit-message",
        "messages": [{"id": message_id, "role": "user", "parts": [{"type": "text", "text": text}]}],
    }


async def post(agent: Agent, body: dict[str, Any] | bytes) -> bytes:
    status, headers, chunks = await vercel_response(agent, body)
    assert status == 200 and headers == VERCEL_HEADERS
    out = []
    with anyio.fail_after(60):  # a hang guard
        async for piece in chunks:
            out.append(piece)
    return b"".join(out)


def read(stream: bytes, message: dict[str, Any] | None = None) -> dict[str, Any]:
    args = (json.dumps(message),) if message is not None else ()
    found: dict[str, Any] = run_script("vercel_read.mjs", stream, *args)
    return found


def tool_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in message["parts"] if p["type"].startswith("tool-")]


def texts(message: dict[str, Any], kind: str = "text") -> str:
    return "".join(p["text"] for p in message["parts"] if p["type"] == kind)


@per_dialect
async def test_the_sdk_assembles_the_run_text_calls_and_results(
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
        agent = Agent(provider, notes.registry())
        stream = await post(agent, user_body("chat-1", "u1", "Note: milk, eggs, bread"))
    simulator.assert_no_problems()
    assert stream.endswith(b"data: [DONE]\n\n")
    found = read(stream)
    assert found["errors"] == []
    # The SDK's own response headers, but for the hop-by-hop "connection" (an ASGI
    # server sets it, and HTTP/2 forbids it) and our content-type's charset.
    sdk = {k: v for k, v in found["headers"].items() if k != "connection"}
    assert VERCEL_HEADERS["content-type"].startswith(sdk.pop("content-type"))
    assert VERCEL_HEADERS["cache-control"].startswith(sdk.pop("cache-control"))
    assert sdk.items() <= VERCEL_HEADERS.items()
    message = found["message"]
    assert message["role"] == "assistant"
    assert texts(message) == "Saving it.Your note is saved."
    [part] = tool_parts(message)
    assert part["type"] == "tool-save_note" and part["state"] == "output-available"
    assert part["input"] == NOTE and part["output"] == "saved groceries"
    assert notes.saved == [NOTE]
    deltas = [c for c in found["chunks"] if c["type"] == "tool-input-delta"]
    if dialect != "gemini":  # Gemini sends each call whole
        assert len(deltas) > 3
        assert json.loads("".join(c["inputTextDelta"] for c in deltas)) == NOTE
    assert [p["type"] for p in message["parts"]].count("step-start") == 2
    usage = message["metadata"]["usage"]
    assert (usage["inputTokens"], usage["outputTokens"]) == (31, 11)
    # Every event has an id, in order, scoped to the message.
    ids = [line[4:] for line in stream.decode().split("\n") if line.startswith("id: ")]
    prefix = ids[0].rpartition(":")[0]
    assert ids == [f"{prefix}:{n}" for n in range(1, len(ids) + 1)]


@per_dialect
async def test_a_retry_voids_its_parts_and_a_fallback_is_text(
    dialect: Dialect, simulator: Simulator
) -> None:
    from sse_toolcalls.runtime.retry import RetryPolicy

    simulator.play([Turn(fault=HTTPError(status=503)), Turn(fault=HTTPError(status=503))])
    retry = RetryPolicy(attempts=2, sleep=no_sleep, random=lambda: 0.5, base_delay=0.25)
    async with client(simulator, dialect) as provider:
        agent = Agent(provider, Notes().registry(), retry=retry)
        found = read(await post(agent, user_body("chat-2", "u1", "hello")))
    message = found["message"]
    [retried] = [p for p in message["parts"] if p["type"] == "data-retry"]
    assert retried["data"]["attempt"] == 1
    assert texts(message) != "" and message["metadata"]["fallback"] == "provider_unavailable"


@per_dialect
async def test_an_approval_round_trip_runs_the_write_once_even_posted_twice(
    dialect: Dialect, simulator: Simulator
) -> None:
    notes = Notes()
    simulator.play([Turn(calls=(ScriptedCall(name="save_note", args=NOTE),)), Turn(text="done")])
    async with client(simulator, dialect) as provider:
        agent = Agent(provider, notes.registry(needs_approval=True))
        first = read(await post(agent, user_body("chat-3", "u1", "note")))
        asked = first["message"]
        [part] = tool_parts(asked)
        assert part["state"] == "approval-requested" and part["input"] == NOTE
        assert notes.saved == [] and asked["metadata"]["pendingApprovals"] == 1
        # What addToolApprovalResponse makes of the part, posted as useChat posts it.
        answered = copy.deepcopy(asked)
        answered["parts"][asked["parts"].index(part)].update(
            state="approval-responded", approval={"id": part["approval"]["id"], "approved": True}
        )
        body = {
            "id": "chat-3",
            "trigger": "submit-message",
            "messages": [user_body("chat-3", "u1", "note")["messages"][0], answered],
        }
        second = read(await post(agent, body), answered)
        assert notes.saved == [NOTE]
        message = second["message"]
        assert message["id"] == asked["id"]
        [part] = tool_parts(message)
        assert part["state"] == "output-available" and part["output"] == "saved groceries"
        assert texts(message) == "done"
        # The same answer again (a retried POST, a double click): nothing runs again.
        again = read(await post(agent, json.dumps(body).encode()), answered)
        assert notes.saved == [NOTE]
        assert again["errors"] and "already" in again["errors"][0]


@per_dialect
async def test_a_denied_approval_is_output_denied(dialect: Dialect, simulator: Simulator) -> None:
    notes = Notes()
    simulator.play(
        [Turn(calls=(ScriptedCall(name="save_note", args=NOTE),)), Turn(text="ok, not saved")]
    )
    async with client(simulator, dialect) as provider:
        agent = Agent(provider, notes.registry(needs_approval=True))
        asked = read(await post(agent, user_body("chat-4", "u1", "note")))["message"]
        [part] = tool_parts(asked)
        answered = copy.deepcopy(asked)
        answered["parts"][asked["parts"].index(part)].update(
            state="approval-responded",
            approval={"id": part["approval"]["id"], "approved": False, "reason": "no"},
        )
        body = {"id": "chat-4", "messages": [answered]}
        message = read(await post(agent, body), answered)["message"]
    assert notes.saved == []
    [part] = tool_parts(message)
    assert part["state"] == "output-denied"


@per_dialect
async def test_the_same_user_message_posted_twice_runs_its_write_once(
    dialect: Dialect, simulator: Simulator
) -> None:
    notes = Notes()
    turns = [Turn(calls=(ScriptedCall(name="save_note", args=NOTE),)), Turn(text="saved")]
    simulator.play(turns + turns)
    async with client(simulator, dialect) as provider:
        agent = Agent(provider, notes.registry())
        for _ in range(2):
            message = read(await post(agent, user_body("chat-5", "u1", "note")))["message"]
            [part] = tool_parts(message)
            assert part["state"] == "output-available"
    assert notes.saved == [NOTE]


async def test_an_answer_posted_in_another_chat_decides_nothing(simulator: Simulator) -> None:
    notes = Notes()
    simulator.play([Turn(calls=(ScriptedCall(name="save_note", args=NOTE),)), Turn(text="done")])
    async with client(simulator, "openai_chat") as provider:
        agent = Agent(provider, notes.registry(needs_approval=True))
        asked = read(await post(agent, user_body("chat-a", "u1", "note")))["message"]
        [part] = tool_parts(asked)
        answered = copy.deepcopy(asked)
        answered["parts"][asked["parts"].index(part)].update(
            state="approval-responded", approval={"id": part["approval"]["id"], "approved": True}
        )
        status, _, chunks = await vercel_response(agent, {"id": "chat-b", "messages": [answered]})
        assert status == 400 and b"no paused run of this chat" in b"".join(
            [c async for c in chunks]
        )
        assert notes.saved == []
        # The right chat still can.
        read(await post(agent, {"id": "chat-a", "messages": [answered]}), answered)
    assert notes.saved == [NOTE]


@pytest.mark.parametrize("dialect", ["openai_chat", "anthropic", "gemini"])
async def test_a_failing_tool_is_output_error_and_a_policy_denial_output_denied(
    dialect: Dialect, simulator: Simulator
) -> None:
    from sse_toolcalls.runtime.approval import ApprovalContext, Decision, Deny
    from sse_toolcalls.runtime.tools import ToolRegistry

    registry = ToolRegistry()

    def lookup(city: str) -> str:
        """Look a city up.

        Args:
            city: its name.
        """
        raise ValueError("the atlas is closed")

    def erase(city: str) -> str:
        """Erase a city.

        Args:
            city: its name.
        """
        raise AssertionError("a denied call never runs")

    registry.register(lookup)
    registry.register(erase, effect="write")

    def policy(context: ApprovalContext, call: Any) -> Decision:
        return Deny(reason="no erasing") if call.name == "erase" else "allow"

    simulator.play(
        [
            Turn(
                calls=(
                    ScriptedCall(name="lookup", args={"city": "Lyon"}),
                    ScriptedCall(name="erase", args={"city": "Lyon"}),
                )
            ),
            Turn(text="Sorry."),
        ]
    )
    async with client(simulator, dialect) as provider:
        agent = Agent(provider, registry, policy=policy)
        found = read(await post(agent, user_body("chat-6", "u1", "Lyon?")))
    assert found["errors"] == []
    looked, erased = tool_parts(found["message"])
    assert (looked["type"], looked["state"]) == ("tool-lookup", "output-error")
    assert looked["errorText"] != ""
    assert (erased["type"], erased["state"]) == ("tool-erase", "output-denied")
    assert looked["toolCallId"] != erased["toolCallId"]
    assert texts(found["message"]) == "Sorry."


@per_dialect
async def test_a_cut_in_a_call_s_arguments_is_voided_and_the_retry_shown_fresh(
    dialect: Dialect, simulator: Simulator
) -> None:
    from sse_toolcalls.runtime.retry import RetryPolicy
    from sse_toolcalls.runtime.ui.vercel import VOID_TEXT
    from sse_toolcalls.tooling.simulator.script import CutInArguments

    notes = Notes()
    call = ScriptedCall(name="save_note", args=NOTE)
    simulator.play(
        [
            Turn(text="Saving", calls=(call,), fragment_size=3, fault=CutInArguments()),
            Turn(text="Saving it.", calls=(call,), fragment_size=3),
            Turn(text="Saved."),
        ]
    )
    retry = RetryPolicy(attempts=3, sleep=no_sleep, random=lambda: 0.5, base_delay=0.25)
    async with client(simulator, dialect) as provider:
        agent = Agent(provider, notes.registry(), retry=retry)
        found = read(await post(agent, user_body("chat-7", "u1", "note")))
    assert notes.saved == [NOTE] and found["errors"] == []
    message = found["message"]
    [retried] = [p for p in message["parts"] if p["type"] == "data-retry"]
    # The step that ends with the data-retry part is void: the UI hides it; what is
    # left is the run.
    parts = message["parts"]
    end = parts.index(retried)
    begin = max(i for i in range(end) if parts[i]["type"] == "step-start")
    void, live = parts[begin : end + 1], parts[:begin] + parts[end + 1 :]
    assert {p["toolCallId"] for p in void if "toolCallId" in p} == set(
        retried["data"]["voidedToolCallIds"]
    )
    assert "".join(p["text"] for p in live if p["type"] == "text") == "Saving it.Saved."
    [done] = [p for p in live if p["type"] == "tool-save_note"]
    assert done["state"] == "output-available" and done["input"] == NOTE
    for part in void:
        if part["type"] == "tool-save_note":
            assert part["state"] == "output-error" and part["errorText"] == VOID_TEXT


TRICKY = 'line one\nline two\r\nthree\r four \u2028 five \U0001f95a \u00e9 "quoted" \\ data: [DONE]'
"""Line breaks of every kind, a JS line separator, non-BMP and escapes, and text that
looks like the stream's own end: the JSON in one data field must carry it all."""


@per_dialect
async def test_reasoning_and_tricky_text_arrive_whole(
    dialect: Dialect, simulator: Simulator
) -> None:
    simulator.play([Turn(thinking="Think: " + TRICKY, text=TRICKY, fragment_size=2)])
    async with client(simulator, dialect) as provider:
        agent = Agent(provider, Notes().registry())
        found = read(await post(agent, user_body("chat-8", "u1", "hi")))
    assert found["errors"] == []
    message = found["message"]
    assert texts(message) == TRICKY
    assert texts(message, "reasoning") == "Think: " + TRICKY
    kinds = [p["type"] for p in message["parts"]]
    assert kinds.index("reasoning") < kinds.index("text")
    assert all(p.get("state") == "done" for p in message["parts"] if "state" in p)


async def test_answers_must_cover_every_pending_call(simulator: Simulator) -> None:
    notes = Notes()
    other = {**NOTE, "title": "chores"}
    simulator.play(
        [
            Turn(
                calls=(
                    ScriptedCall(name="save_note", args=NOTE),
                    ScriptedCall(name="save_note", args=other),
                )
            ),
            Turn(text="one saved"),
        ]
    )
    async with client(simulator, "anthropic") as provider:
        agent = Agent(provider, notes.registry(needs_approval=True))
        asked = read(await post(agent, user_body("chat-9", "u1", "notes")))["message"]
        first, second = tool_parts(asked)
        answered = copy.deepcopy(asked)
        answered["parts"][asked["parts"].index(first)].update(
            state="approval-responded", approval={"id": first["approval"]["id"], "approved": True}
        )
        body = {"id": "chat-9", "messages": [answered]}
        status, _, _ = await vercel_response(agent, body)
        assert status == 400 and notes.saved == []
        answered["parts"][asked["parts"].index(second)].update(
            state="approval-responded",
            approval={"id": second["approval"]["id"], "approved": False},
        )
        message = read(await post(agent, body), answered)["message"]
    assert notes.saved == [NOTE]
    assert [p["state"] for p in tool_parts(message)] == ["output-available", "output-denied"]


async def test_a_client_that_sends_only_finished_turns_still_shows_each_call() -> None:
    from tests.runtime.test_agent import FakeClient, answer, calling

    notes = Notes()
    agent = Agent(FakeClient([calling(("save_note", NOTE)), answer("saved")]), notes.registry())
    found = read(await post(agent, user_body("chat-10", "u1", "note")))
    assert found["errors"] == [] and notes.saved == [NOTE]
    [part] = tool_parts(found["message"])
    assert part["state"] == "output-available" and part["input"] == NOTE


def seeded_run(rng: random.Random) -> tuple[list[Any], str, dict[str, dict[str, Any]]]:
    """A random run's events in run_stream's order (attempts, text and reasoning in any
    interleaving, calls whose arguments stream, retries that void an attempt); the
    text and the calls of its attempts that were not voided."""
    from sse_toolcalls.calls import ReasoningDelta, TextDelta, ToolCall, ToolCallCompleted
    from sse_toolcalls.calls import ToolCallStarted as Started
    from sse_toolcalls.runtime.diagnostics import Diagnostic
    from sse_toolcalls.runtime.events import RequestStarted, RetryScheduled, ToolArgumentsPreview

    events: list[Any] = []
    kept_text: list[str] = []
    kept_calls: dict[str, dict[str, Any]] = {}
    for step in range(1, rng.randint(1, 3) + 1):
        for attempt in range(1, 3):
            events.append(RequestStarted(step=step, attempt=attempt))
            text: list[str] = []
            calls: dict[str, dict[str, Any]] = {}
            for _ in range(rng.randint(0, 6)):
                piece = rng.choice(["a", "\u00e9\n", "\U0001f95a", " ", "\r\n"])
                if rng.random() < 0.5:
                    events.append(TextDelta(text=piece))
                    text.append(piece)
                else:
                    events.append(ReasoningDelta(text=piece))
            voided = attempt == 1 and rng.random() < 0.4
            for index in range(rng.randint(0, 2)):
                args = {"n": rng.randint(0, 9), "s": rng.choice(["x", "\u00e9", "\U0001f95a"])}
                raw = json.dumps(args, ensure_ascii=False)
                call_id = rng.choice([None, f"c{index}"])
                events.append(Started(index=index, call_id=call_id, name="t"))
                cut = rng.randint(0, len(raw))
                for piece in (raw[:cut], raw[cut:]):
                    if piece:
                        events.append(
                            ToolArgumentsPreview(index=index, name="t", delta=piece, arguments=None)
                        )
                if voided and rng.random() < 0.5:
                    break  # cut in the arguments: never completed
                call = ToolCall(
                    name="t", args=args, provider="anthropic", call_id=call_id, index=index
                )
                events.append(ToolCallCompleted(call=call))
                calls[f"{step}/{index}"] = args
            if voided:
                events.append(
                    RetryScheduled(
                        attempt=1, delay=0.0, diagnostic=Diagnostic(kind="x", message="y")
                    )
                )
                continue
            kept_text += text
            kept_calls.update(calls)
            break
    return events, "".join(kept_text), kept_calls


async def test_seeded_orders_of_events_are_read_whole_by_the_sdk() -> None:
    from sse_toolcalls.runtime.ui.sse_out import sse_event
    from sse_toolcalls.runtime.ui.vercel import ui_message_chunks

    runs = [seeded_run(random.Random(seed)) for seed in range(60)]

    async def stream_of(events: list[Any]) -> str:
        async def gen() -> Any:
            for event in events:
                yield event

        out = [sse_event(json.dumps(c)) async for c in ui_message_chunks(gen())]
        return b"".join([*out, sse_event("[DONE]")]).decode()

    texts_in = [await stream_of(events) for events, _, _ in runs]
    found = run_script("vercel_many.mjs", json.dumps(texts_in).encode())
    for (events, text, calls), got in zip(runs, found, strict=True):
        assert got["errors"] == [], events
        # Nothing to show is no message at all (the SDK writes one on its first part).
        parts = got["message"]["parts"] if "message" in got else []
        # The live parts: those outside a step that a data-retry part ends.
        live: list[dict[str, Any]] = []
        step: list[dict[str, Any]] = []
        for part in parts:
            if part["type"] == "step-start":
                live += step
                step = []
            step.append(part)
            if part["type"] == "data-retry":
                step = []
        live += step
        assert "".join(p["text"] for p in live if p["type"] == "text") == text
        inputs = [p["input"] for p in live if p["type"] == "tool-t"]
        assert inputs == list(calls.values())
        assert all(p["state"] == "input-available" for p in live if p["type"] == "tool-t")
