"""Resumable streams of real runs (issue 32, item 4): an agent against the simulator,
both protocols. A client that drops after any k events and reconnects with the last id
it saw gets the run's events exactly once, in order; the run ran once (its model
requests, its write). Two uvicorn servers sharing one SQLite file or one PostgreSQL
database: POST to A, drop, GET from B follows the rest while the run is still live."""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest

from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.runtime.ui.paused import MAX_BODY_BYTES
from sse_toolcalls.runtime.ui.resumable import (
    KeyedResponse,
    keyed_agui_response,
    keyed_vercel_response,
    resumable_app,
)
from sse_toolcalls.runtime.ui.runlog import MemoryRunLog, RunLog
from sse_toolcalls.runtime.ui.runlog_sqlite import SQLiteRunLog
from sse_toolcalls.runtime.ui.sse_out import SSE_HEADERS
from sse_toolcalls.runtime.ui.vercel import VERCEL_HEADERS
from sse_toolcalls.tooling._loopback import LoopbackServer
from sse_toolcalls.tooling.simulator import ScriptedCall, Simulator, Turn
from tests.runtime.test_run_stream import NOTE, Notes, client

from .asgi_driver import App, Call, request

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:Async generator 'httpx\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore\\.:ResourceWarning"),
]

TURNS = [
    Turn(text="Saving.", calls=(ScriptedCall(name="save_note", args=NOTE),), fragment_size=6),
    Turn(text="Saved."),
]


def body_for(protocol: str, chat: str) -> bytes:
    if protocol == "vercel":
        message = {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Note it"}]}
        return json.dumps({"id": chat, "trigger": "submit-message", "messages": [message]}).encode()
    user = {"id": "u1", "role": "user", "content": "Note it"}
    run = {"threadId": chat, "runId": f"run-{chat}", "messages": [user], "tools": [], "context": []}
    return json.dumps(run).encode()


def app_for(protocol: str, agent: Agent, runs: RunLog) -> App:
    async def respond(body: bytes) -> KeyedResponse:
        if protocol == "vercel":
            return await keyed_vercel_response(agent, body)
        return await keyed_agui_response(agent, body)

    headers = VERCEL_HEADERS if protocol == "vercel" else SSE_HEADERS
    return resumable_app(respond, runs=runs, headers=headers)


def ids(events: list[bytes]) -> list[str]:
    return [
        line[4:].decode() for e in events for line in e.split(b"\n") if line.startswith(b"id: ")
    ]


@pytest.mark.parametrize("protocol", ["vercel", "agui"])
async def test_every_cut_of_a_real_run_resumes_it_exactly_once(
    protocol: str, simulator: Simulator
) -> None:
    notes = Notes()
    async with client(simulator, "anthropic") as provider:
        app = app_for(protocol, Agent(provider, notes.registry()), MemoryRunLog())
        k, total = 0, None
        while total is None or k <= total:
            simulator.play(TURNS)
            asked = len(simulator.requests)
            chat = f"chat-{k}"
            async with anyio.create_task_group() as group:
                first = Call(app, "POST", "/api/chat", body=body_for(protocol, chat), drop_after=k)
                group.start_soon(first.run)
                with anyio.fail_after(30):
                    await first.left.wait()
                headers = [(b"last-event-id", ids(first.events)[-1].encode())] if k else []
                rest = await request(app, "GET", f"/api/chat/{chat}/stream", headers=headers)
            whole = await request(app, "GET", f"/api/chat/{chat}/stream")
            if total is None:
                total = len(whole.events)
                key = ids(whole.events)[0].rpartition(":")[0]
                assert ids(whole.events) == [f"{key}:{n}" for n in range(1, total + 1)]
            assert first.events + rest.events == whole.events, k
            assert len(whole.events) == total
            # After the last event: 204 once the run's end is kept, else a 200 that
            # ends empty (the run was still closing when the client asked).
            assert rest.status == 200 if k < total else rest.status in {200, 204}
            assert len(simulator.requests) - asked == 2  # one run: its two model requests
            k += 1
        simulator.assert_no_problems()
    assert notes.saved == [NOTE] * (total + 1)


# --------------------------------------------------------------------------------------
# Two workers.


class Gate:
    """A write that waits for the test: the run is live while the test reconnects."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.saved: list[dict[str, Any]] = []

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()

        async def save_note(title: str, lines: list[str], pinned: bool) -> str:
            """Save a note.

            Args:
                title: its title.
                lines: its lines.
                pinned: whether it stays on top.
            """
            await anyio.to_thread.run_sync(self.open.wait, 60)  # a hang guard
            self.saved.append({"title": title, "lines": lines, "pinned": pinned})
            return f"saved {title}"

        registry.register(save_note, effect="write")
        return registry


def served(protocol: str, simulator: Simulator, gate: Gate, runs: RunLog) -> LoopbackServer:
    async def respond(body: bytes) -> KeyedResponse:
        # In the server's own loop: the provider's connections belong to it.
        provider = client(simulator, "openai_chat")
        agent = Agent(provider, gate.registry())
        if protocol == "vercel":
            answer = await keyed_vercel_response(agent, body)
        else:
            answer = await keyed_agui_response(agent, body)

        async def closing() -> AsyncIterator[bytes]:
            try:
                async for chunk in answer.chunks:
                    yield chunk
            finally:
                await provider.aclose()

        return KeyedResponse(
            status=answer.status,
            headers=answer.headers,
            chunks=closing(),
            run_key=answer.run_key,
            chat_id=answer.chat_id,
        )

    headers = VERCEL_HEADERS if protocol == "vercel" else SSE_HEADERS
    server = LoopbackServer(resumable_app(respond, runs=runs, headers=headers), what="worker")
    server.start()
    return server


def sse_blocks(stream: Iterator[bytes]) -> Iterator[bytes]:
    """The response's events, block by block, as they arrive."""
    buffer = b""
    for piece in stream:
        buffer += piece
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            yield block + b"\n\n"


def drop_and_resume_on_another_worker(protocol: str, runs: list[RunLog], tool_marker: str) -> None:
    gate = Gate()
    with Simulator() as simulator:
        simulator.play(TURNS)
        a, b = (served(protocol, simulator, gate, log) for log in runs)
        try:
            url_a = f"http://127.0.0.1:{a.port}/api/chat"
            url_b = f"http://127.0.0.1:{b.port}/api/chat"
            first: list[bytes] = []
            with httpx.Client(timeout=60) as http:
                with http.stream("POST", url_a, content=body_for(protocol, "chat-x")) as answer:
                    assert answer.status_code == 200
                    for block in sse_blocks(answer.iter_bytes()):
                        first.append(block)
                        if tool_marker.encode() in block:
                            break  # the call is shown; its write waits at the gate: drop
                last = ids(first)[-1]
                with http.stream(
                    "GET", f"{url_b}/chat-x/stream", headers={"last-event-id": last}
                ) as rest:
                    assert rest.status_code == 200
                    blocks = sse_blocks(rest.iter_bytes())
                    gate.open.set()  # B is following while the run is live
                    second = list(blocks)
                whole = http.get(f"{url_b}/chat-x/stream")
        finally:
            gate.open.set()
            a.stop()
            b.stop()
        simulator.assert_no_problems()
    assert whole.status_code == 200
    assert b"".join(first + second) == whole.content
    n = len(ids(first + second))
    assert ids(first + second) == [f"{last.rpartition(':')[0]}:{i}" for i in range(1, n + 1)]
    assert gate.saved == [NOTE]
    assert len(simulator.requests) == 2


MARKERS = {"vercel": "tool-input-available", "agui": "TOOL_CALL_END"}


@pytest.mark.parametrize("protocol", ["vercel", "agui"])
def test_a_reconnect_to_another_worker_on_sqlite_follows_the_live_run(
    protocol: str, tmp_path: Path
) -> None:
    path = tmp_path / "runs.db"
    logs: list[RunLog] = [SQLiteRunLog(path), SQLiteRunLog(path)]
    drop_and_resume_on_another_worker(protocol, logs, MARKERS[protocol])


@pytest.mark.parametrize("protocol", ["vercel", "agui"])
def test_a_reconnect_to_another_worker_on_postgres_follows_the_live_run(
    protocol: str, postgres_dsn: str
) -> None:
    from sse_toolcalls.runtime.ui.runlog_postgres import PostgresRunLog

    logs: list[RunLog] = [PostgresRunLog(postgres_dsn), PostgresRunLog(postgres_dsn)]
    drop_and_resume_on_another_worker(protocol, logs, MARKERS[protocol])


@pytest.mark.parametrize("protocol", ["vercel", "agui"])
async def test_a_bad_body_is_the_protocol_s_400_and_nothing_is_kept(
    protocol: str, simulator: Simulator
) -> None:
    runs = MemoryRunLog()
    async with client(simulator, "anthropic") as provider:
        app = app_for(protocol, Agent(provider, Notes().registry()), runs)
        for body in (b"not json", b"[]", b'{"id": "c", "messages": []}'):
            answer = await request(app, "POST", "/api/chat", body=body)
            assert answer.status == 400 and answer.events
    assert repr(runs) == "MemoryRunLog(runs=0)"
    assert simulator.requests == ()


async def test_a_store_that_cannot_be_reached_is_a_503_and_the_run_never_starts(
    simulator: Simulator, tmp_path: Path
) -> None:
    from sse_toolcalls.runtime.ui.runlog_postgres import PostgresRunLog

    # Without psycopg the log refuses the same way (RunLogError). A unix socket folder with no server in it: refused at once, nothing leaves the host.
    runs = PostgresRunLog(f"postgresql:///none?host={tmp_path}", timeout=1, attempts=1)
    async with client(simulator, "anthropic") as provider:
        app = app_for("vercel", Agent(provider, Notes().registry()), runs)
        answer = await request(app, "POST", "/api/chat", body=body_for("vercel", "c"))
        assert answer.status == 503 and b"cannot be kept" in answer.data
        got = await request(app, "GET", "/api/chat/c/stream")
        assert got.status == 503
    assert simulator.requests == ()


@pytest.mark.parametrize("protocol", ["vercel", "agui"])
async def test_a_body_past_the_bound_given_directly_is_refused_unread(
    protocol: str, simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sse_toolcalls.runtime.ui import resumable

    parsed: list[int] = []

    def loads(text: bytes) -> Any:
        parsed.append(len(text))
        return json.loads(text)

    # Only the keyed functions' own parse is watched (the module's name for json).
    monkeypatch.setattr(resumable, "json", SimpleNamespace(loads=loads))
    big = body_for(protocol, "c")[:-1] + b', "pad": "' + b"x" * MAX_BODY_BYTES + b'"}'
    async with client(simulator, "anthropic") as provider:
        agent = Agent(provider, Notes().registry())
        if protocol == "vercel":
            answer = await keyed_vercel_response(agent, big)
        else:
            answer = await keyed_agui_response(agent, big)
    assert (answer.status, answer.run_key, parsed) == (400, None, [])
