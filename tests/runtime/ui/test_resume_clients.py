"""Drop-and-resume read by the official clients (issue 32, item 5): in every dialect of
the simulator, a run with an approval, its stream dropped in the middle of a tool
call's arguments and resumed by a GET with ``Last-Event-ID``. The ``ai`` package reads
the first part and the resume as one stream, and the replay a GET without an id gives
(useChat's resume path: the stream is a replay); ``@ag-ui/client`` reads the joined
stream. What they assemble must equal the uninterrupted reading and the run (the
message, its tool parts, results and approvals); the write runs once."""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import anyio
import httpx
import pytest

from sse_toolcalls import Dialect
from sse_toolcalls.calls import DIALECTS
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.ui.paused import PausedRuns
from sse_toolcalls.runtime.ui.resumable import (
    KeyedResponse,
    keyed_agui_response,
    keyed_vercel_response,
    resumable_app,
)
from sse_toolcalls.runtime.ui.vercel import VERCEL_HEADERS, InMemoryPausedRuns
from sse_toolcalls.tooling._loopback import LoopbackServer
from sse_toolcalls.tooling.simulator import ScriptedCall, Simulator, Turn
from tests.runtime.test_run_stream import NOTE, Notes, client

from .asgi_driver import App, Call, request
from .js_clients import require_clients, run_script
from .test_agui_client import USER
from .test_agui_client import body as agui_body
from .test_agui_client import read as agui_read
from .test_vercel_client import read, texts, tool_parts, user_body

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:Async generator 'httpx\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore\\.:ResourceWarning"),
]
per_dialect = pytest.mark.parametrize("dialect", DIALECTS)

TURNS = [
    Turn(text="Saving.", calls=(ScriptedCall(name="save_note", args=NOTE),), fragment_size=5),
    Turn(text="done"),
]


def kind(event: bytes) -> str:
    """The ``type`` of an event's JSON data ("" for ``[DONE]``)."""
    for line in event.split(b"\n"):
        if line.startswith(b"data: ") and line != b"data: [DONE]":
            found: str = json.loads(line[6:])["type"]
            return found
    return ""


def last_id(events: list[bytes]) -> str:
    [line] = [x for x in events[-1].split(b"\n") if x.startswith(b"id: ")]
    return line[4:].decode()


def in_the_arguments(dialect: Dialect, start: str, delta: str) -> Callable[[bytes], bool]:
    """Says yes to the event after which a drop falls inside a call's arguments: the
    second argument delta, or (Gemini, whose call arrives whole) the call's start."""
    seen = 0

    def when(event: bytes) -> bool:
        nonlocal seen
        if dialect == "gemini":
            return kind(event) == start
        seen += kind(event) == delta
        return seen == 2

    return when


async def drop_and_resume(
    app: App,
    body: dict[str, Any],
    chat: str,
    *,
    drop_when: Callable[[bytes], bool] | None = None,
    drop_after: int | None = None,
) -> tuple[list[bytes], list[bytes], list[bytes]]:
    """POST ``body``, drop, GET the rest with the last id seen; then GET the whole
    run again without an id (after the run's end). The three lists of events."""
    async with anyio.create_task_group() as group:
        first = Call(
            app,
            "POST",
            "/api/chat",
            body=json.dumps(body).encode(),
            drop_when=drop_when,
            drop_after=drop_after,
        )
        group.start_soon(first.run)
        with anyio.fail_after(30):
            await first.left.wait()
        assert first.status == 200 and first.events
        resumed = [(b"last-event-id", last_id(first.events).encode())]
        rest = await request(app, "GET", f"/api/chat/{chat}/stream", headers=resumed)
    whole = await request(app, "GET", f"/api/chat/{chat}/stream")
    assert rest.status == 200 and whole.status == 200
    assert first.events + rest.events == whole.events
    return first.events, rest.events, whole.events


def cut_in_arguments(rest: list[bytes], delta: str, done: str) -> None:
    """The drop fell inside the call's arguments: more of them (or, Gemini's whole
    call, their only piece) is the first thing the resume sends."""
    assert kind(rest[0]) in {delta, done}, kind(rest[0])


@per_dialect
async def test_the_ai_package_reads_a_run_dropped_in_a_call_s_arguments_and_resumed(
    dialect: Dialect, simulator: Simulator
) -> None:
    require_clients()
    notes = Notes()
    simulator.play(TURNS)
    async with client(simulator, dialect) as provider:
        agent = Agent(provider, notes.registry(needs_approval=True))
        paused = InMemoryPausedRuns()
        app = resumable_app(
            lambda body: keyed_vercel_response(agent, body, paused=paused), headers=VERCEL_HEADERS
        )
        asked = user_body("chat-r", "u1", "Note it")
        when = in_the_arguments(dialect, "tool-input-start", "tool-input-delta")
        first, rest, whole = await drop_and_resume(app, asked, "chat-r", drop_when=when)
        cut_in_arguments(rest, "tool-input-delta", "tool-input-available")
        joined = read(b"".join(first + rest))
        replayed = read(b"".join(whole))  # useChat's resume: a GET without an id replays
        assert joined["errors"] == [] and joined["message"] == replayed["message"]
        message = joined["message"]
        [part] = tool_parts(message)
        assert part["state"] == "approval-requested" and part["input"] == NOTE
        assert texts(message) == "Saving." and notes.saved == []
        # The approval, posted as useChat posts it; this stream dropped too.
        answered = copy.deepcopy(message)
        answered["parts"][message["parts"].index(part)].update(
            state="approval-responded", approval={"id": part["approval"]["id"], "approved": True}
        )
        answer: dict[str, Any] = {"id": "chat-r", "trigger": "submit-message"}
        answer["messages"] = [asked["messages"][0], answered]
        first, rest, whole = await drop_and_resume(app, answer, "chat-r", drop_after=3)
        done = read(b"".join(first + rest), answered)
        assert (
            done["errors"] == [] and done["message"] == read(b"".join(whole), answered)["message"]
        )
        [part] = tool_parts(done["message"])
        assert (part["state"], part["output"]) == ("output-available", "saved groceries")
        assert texts(done["message"]).endswith("done")
        # The same answer posted again (a retry after the drop): it attaches, runs nothing.
        again = await request(app, "POST", "/api/chat", body=json.dumps(answer).encode())
        assert again.events == whole
    assert notes.saved == [NOTE]
    assert len(simulator.requests) == 2
    simulator.assert_no_problems()


@per_dialect
async def test_ag_ui_s_client_reads_a_run_dropped_in_a_call_s_arguments_and_resumed(
    dialect: Dialect, simulator: Simulator
) -> None:
    require_clients()
    notes = Notes()
    simulator.play(TURNS)
    async with client(simulator, dialect) as provider:
        agent = Agent(provider, notes.registry(needs_approval=True))
        keeper = PausedRuns()
        app = resumable_app(lambda body: keyed_agui_response(agent, body, paused=keeper))
        run = agui_body("run-1", [USER], threadId="thread-r")
        when = in_the_arguments(dialect, "TOOL_CALL_START", "TOOL_CALL_ARGS")
        first, rest, whole = await drop_and_resume(app, run, "thread-r", drop_when=when)
        cut_in_arguments(rest, "TOOL_CALL_ARGS", "TOOL_CALL_ARGS")
        joined = agui_read(b"".join(first + rest), run)
        whole_read = agui_read(b"".join(whole), run)
        assert joined["error"] is None
        for field in ("messages", "outcome", "pendingInterrupts"):
            assert joined[field] == whole_read[field], field
        assert joined["outcome"]["outcome"] == "interrupt"
        [interrupt] = joined["outcome"]["interrupts"]
        [call] = joined["messages"][-1]["toolCalls"]
        assert json.loads(call["function"]["arguments"]) == NOTE
        assert interrupt["toolCallId"] == call["id"] and notes.saved == []
        answer = [
            {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": True}}
        ]
        second = agui_body("run-2", joined["messages"], threadId="thread-r", resume=answer)
        first, rest, whole = await drop_and_resume(app, second, "thread-r", drop_after=3)
        done = agui_read(b"".join(first + rest), second)
        assert done["error"] is None and done["outcome"]["outcome"] == "success"
        assert done["messages"] == agui_read(b"".join(whole), second)["messages"]
        result, last = done["messages"][-2:]
        assert result["role"] == "tool" and result["toolCallId"] == call["id"]
        assert last["content"] == "done"
        again = await request(app, "POST", "/api/chat", body=json.dumps(second).encode())
        assert again.events == whole
    assert notes.saved == [NOTE]
    assert len(simulator.requests) == 2
    simulator.assert_no_problems()


# --------------------------------------------------------------------------------------
# useChat's own reconnect, over HTTP.


def sse_blocks(stream: Iterator[bytes]) -> Iterator[bytes]:
    buffer = b""
    for piece in stream:
        buffer += piece
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            yield block + b"\n\n"


@per_dialect
def test_use_chat_s_reconnect_to_stream_resumes_a_dropped_run(dialect: Dialect) -> None:
    """``DefaultChatTransport.reconnectToStream`` (what ``useChat({resume: true})``
    calls) against the app under uvicorn: with the Last-Event-ID of a drop inside the
    call's arguments, and without one (the whole replay); 204 for an unknown chat."""
    require_clients()
    notes = Notes()

    async def respond(body: bytes) -> KeyedResponse:
        # In the server's own loop: the provider's connections belong to it.
        provider = client(simulator, dialect)
        answer = await keyed_vercel_response(Agent(provider, notes.registry()), body)

        async def closing() -> AsyncIterator[bytes]:
            try:
                async for chunk in answer.chunks:
                    yield chunk
            finally:
                await provider.aclose()

        return dataclasses.replace(answer, chunks=closing())

    with Simulator() as simulator:
        simulator.play(TURNS)
        server = LoopbackServer(resumable_app(respond, headers=VERCEL_HEADERS), what="the app")
        server.start()
        api = f"http://127.0.0.1:{server.port}/api/chat"
        try:
            first: list[bytes] = []
            when = in_the_arguments(dialect, "tool-input-start", "tool-input-delta")
            with (
                httpx.Client(timeout=60) as http,
                http.stream("POST", api, json=user_body("chat-u", "u1", "Note it")) as answer,
            ):
                for block in sse_blocks(answer.iter_bytes()):
                    first.append(block)
                    if when(block):
                        break
            joined = run_script(
                "vercel_reconnect.mjs", b"".join(first), api, "chat-u", last_id(first)
            )
            replayed = run_script("vercel_reconnect.mjs", b"", api, "chat-u")
            unknown = run_script("vercel_reconnect.mjs", b"", api, "no-such-chat")
        finally:
            server.stop()
        simulator.assert_no_problems()
    assert unknown == {"status": 204}
    assert joined["status"] == replayed["status"] == 200
    assert joined["errors"] == replayed["errors"] == []
    assert joined["message"] == replayed["message"]
    [part] = tool_parts(joined["message"])
    assert (part["state"], part["input"], part["output"]) == (
        "output-available",
        NOTE,
        "saved groceries",
    )
    assert texts(joined["message"]) == "Saving.done"
    assert notes.saved == [NOTE]
