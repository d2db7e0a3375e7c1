"""The one loopback server thread (simulator and recording proxy): its misuse and its
failures are our typed errors, and stopping releases the port."""

from __future__ import annotations

import socket
from typing import Any

import httpx
import pytest

from sse_toolcalls.errors import UsageError
from sse_toolcalls.tooling._loopback import LoopbackServer


async def hello(scope: dict[str, Any], receive: Any, send: Any) -> None:
    assert scope["type"] == "http"
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"hi"})


def test_it_serves_refuses_a_second_start_and_releases_the_port() -> None:
    served = LoopbackServer(hello, what="the test server")
    assert served.port is None and not served.running
    served.start()
    try:
        port = served.port
        assert port is not None and served.running
        assert httpx.get(f"http://127.0.0.1:{port}/", timeout=10).text == "hi"
        with pytest.raises(UsageError, match="the test server is already running"):
            served.start()
    finally:
        served.stop()
    served.stop()  # idempotent
    assert served.port is None and not served.running
    with socket.socket() as probe:  # the port is free again
        probe.bind(("127.0.0.1", port))


def test_a_port_in_use_is_a_usage_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(UsageError, match=f"cannot bind 127.0.0.1:{port}"):
            LoopbackServer(hello, what="x", port=port).start()


def test_a_server_that_cannot_start_is_a_usage_error_and_leaves_nothing() -> None:
    served = LoopbackServer(hello, what="the broken server", lifespan="on")
    # lifespan "on" with an app that refuses the lifespan scope: uvicorn gives up.
    with pytest.raises(
        UsageError, match=r"the broken server did not start \(uvicorn ended with SystemExit"
    ):
        served.start()
    assert not served.running and served.port is None
