"""Real MCP servers for the tests: the bank over Streamable HTTP on a loopback port (a
uvicorn thread, once per module), and the command to start it over stdio."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from sse_toolcalls.simulator.pytest_plugin import simulator

__all__ = ["bank_url", "serve_in_thread", "simulator"]

ROOT = Path(__file__).resolve().parents[2]
STDIO_BANK = (sys.executable, ["-m", "tests.mcp.bank_server"])
"""The command and arguments that serve the bank over stdio (run from ROOT)."""


@contextmanager
def serve_in_thread(app: Any) -> Iterator[str]:
    """Serve an ASGI app on a free loopback port in a thread; yield its base URL."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@pytest.fixture(scope="module")
def bank_url() -> Iterator[str]:
    """The bank's Streamable HTTP endpoint, one server for the module."""
    from .bank_server import http_app

    with serve_in_thread(http_app()) as base:
        yield f"{base}/mcp"
