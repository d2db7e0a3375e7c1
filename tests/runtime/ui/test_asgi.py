"""The UI streams' ASGI app, served by a real uvicorn on loopback and read by httpx."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping

import httpx
import pytest

from sse_toolcalls import UsageError
from sse_toolcalls.runtime.ui.asgi import UIResponse, ui_app
from sse_toolcalls.runtime.ui.sse_out import SSE_HEADERS, sse_event
from sse_toolcalls.tooling._loopback import LoopbackServer

received: list[bytes] = []
closed: list[bool] = []


async def _chunks(body: bytes) -> AsyncIterator[bytes]:
    try:
        for i, word in enumerate(body.decode().split()):
            yield sse_event(word, id=str(i))
    finally:
        closed.append(True)


def _echo(body: bytes) -> UIResponse:
    received.append(body)
    headers: Mapping[str, str] = {**SSE_HEADERS, "x-protocol": "test"}
    return 200, headers, _chunks(body)


async def _echo_async(body: bytes) -> UIResponse:
    return _echo(body)


@pytest.fixture(params=[_echo, _echo_async], ids=["sync", "async"])
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    received.clear()
    closed.clear()
    served = LoopbackServer(ui_app(request.param, max_body_bytes=1000), what="the UI app")
    served.start()
    try:
        yield f"http://127.0.0.1:{served.port}"
    finally:
        served.stop()


def test_a_post_is_streamed_back_with_the_responders_headers(server: str) -> None:
    with httpx.Client() as client:
        answer = client.post(server + "/chat", content=b"hello ui world")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == SSE_HEADERS["content-type"]
    assert answer.headers["x-protocol"] == "test"
    assert answer.content == b"".join(
        sse_event(word, id=str(i)) for i, word in enumerate(["hello", "ui", "world"])
    )
    assert received == [b"hello ui world"]
    assert closed == [True]


def test_a_body_in_many_pieces_is_read_whole(server: str) -> None:
    def pieces() -> Iterator[bytes]:
        yield from (b"a ", b"b ", b"c")

    with httpx.Client() as client:
        answer = client.post(server, content=pieces())
    assert answer.status_code == 200
    assert received == [b"a b c"]


def test_other_methods_and_large_bodies_never_reach_the_responder(server: str) -> None:
    with httpx.Client() as client:
        got = client.get(server)
        assert (got.status_code, got.headers["allow"]) == (405, "POST")
        assert client.post(server, content=b"x" * 1001).status_code == 413
        assert client.post(server, content=b"x" * 1000).status_code == 200
    assert received == [b"x" * 1000]


@pytest.mark.parametrize("bad", [0, -1, 1.5, "10", True])
def test_the_body_bound_is_a_positive_count(bad: object) -> None:
    with pytest.raises(UsageError):
        ui_app(_echo, max_body_bytes=bad)  # type: ignore[arg-type]


def test_a_chat_served_by_the_app_is_read_by_the_ai_package() -> None:
    """The whole way: useChat's body POSTed to ``ui_app`` under uvicorn, a real run against
    the simulator, the answer's bytes read by the ``ai`` package (as the browser would)."""
    from sse_toolcalls.runtime.agent import Agent
    from sse_toolcalls.runtime.ui.vercel import VERCEL_HEADERS, vercel_response
    from sse_toolcalls.tooling.simulator import ScriptedCall, Simulator, Turn

    from ..test_run_stream import NOTE, Notes, client
    from .test_vercel_client import read, tool_parts, user_body

    notes = Notes()

    async def respond(body: bytes) -> UIResponse:
        # In the server's own event loop: the provider's connections belong to it.
        provider = client(simulator, "anthropic")
        status, headers, chunks = await vercel_response(Agent(provider, notes.registry()), body)

        async def closing() -> AsyncIterator[bytes]:
            try:
                async for chunk in chunks:
                    yield chunk
            finally:
                await provider.aclose()

        return status, headers, closing()

    with Simulator() as simulator:
        simulator.play(
            [
                Turn(text="Saving.", calls=(ScriptedCall(name="save_note", args=NOTE),)),
                Turn(text="Saved."),
            ]
        )
        served = LoopbackServer(ui_app(respond), what="the UI app")
        served.start()
        try:
            with httpx.Client(timeout=60) as http:
                answer = http.post(
                    f"http://127.0.0.1:{served.port}/api/chat",
                    json=user_body("chat-asgi", "u1", "Note: milk"),
                )
        finally:
            served.stop()
        simulator.assert_no_problems()
    assert answer.status_code == 200
    assert (
        answer.headers["x-vercel-ai-ui-message-stream"]
        == VERCEL_HEADERS["x-vercel-ai-ui-message-stream"]
    )
    found = read(answer.content)
    assert found["errors"] == []
    [part] = tool_parts(found["message"])
    assert (part["state"], part["input"]) == ("output-available", NOTE)
    assert notes.saved == [NOTE]
