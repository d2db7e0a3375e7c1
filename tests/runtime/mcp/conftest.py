"""Real MCP servers for the tests: the bank over Streamable HTTP on a loopback port (a
uvicorn thread, once per module), and the command to start it over stdio."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from sse_toolcalls.tooling._loopback import LoopbackServer
from sse_toolcalls.tooling.simulator.pytest_plugin import simulator

__all__ = ["bank_url", "serve_in_thread", "simulator"]

ROOT = Path(__file__).resolve().parents[3]
STDIO_BANK = (sys.executable, ["-m", "tests.runtime.mcp.bank_server"])
"""The command and arguments that serve the bank over stdio (run from ROOT)."""


@contextmanager
def serve_in_thread(app: Any) -> Iterator[str]:
    """Serve an ASGI app on a free loopback port in a thread; yield its base URL."""
    # The package's own loopback server (the simulator's): one owner for the thread, the
    # port and the start-up wait. MCP's Streamable HTTP app needs its lifespan.
    server = LoopbackServer(app, what="an MCP test server", lifespan="on")
    server.start()
    try:
        yield f"http://{server.host}:{server.port}"
    finally:
        server.stop()


@pytest.fixture(scope="module")
def bank_url() -> Iterator[str]:
    """The bank's Streamable HTTP endpoint, one server for the module."""
    from .bank_server import http_app

    with serve_in_thread(http_app()) as base:
        yield f"{base}/mcp"
