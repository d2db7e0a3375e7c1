"""MCP tools out: ``sse-toolcalls mcp serve module:registry`` (stdio) and ``--http PORT``,
driven by the SDK's own client; validation, the ledger, the sandbox and the approval rule
stay in front of the handlers."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any, cast

import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import (
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    RequestParamsMeta,
    ResourceLink,
    TextContent,
)

from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime.mcp import IDEMPOTENCY_KEY_META, build_server, load_registry
from sse_toolcalls.runtime.mcp.server import RESULT_URI_SCHEME
from sse_toolcalls.tooling.cli import main

from .conftest import ROOT
from .served_registry import PDF, PIXEL

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:Async generator 'httpx2?\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore2?\\.:ResourceWarning"),
]

SPEC = "tests.runtime.mcp.served_registry:registry"
SERVE = [sys.executable, "-m", "sse_toolcalls", "mcp", "serve", SPEC]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``mcp serve --http PORT`` as a subprocess, once for the module."""
    port = free_port()
    # Its standard error goes to a file, never an undrained pipe: a server that logs
    # (each failing tool's traceback) would block once a pipe's 64 KiB filled.
    log = tmp_path_factory.mktemp("mcp-serve") / "stderr.txt"
    with log.open("w") as err:
        process = subprocess.Popen([*SERVE, "--http", str(port)], cwd=ROOT, stderr=err)
    try:
        # 9 s seen at a load of 17 on two cores; only a server that never comes up waits it out.
        deadline = time.monotonic() + 90
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None, log.read_text()
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        assert f"http://127.0.0.1:{port}/mcp" in log.read_text()
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


@asynccontextmanager
async def session(transport: str, url: str) -> AsyncIterator[ClientSession]:
    if transport == "stdio":
        parameters = StdioServerParameters(command=SERVE[0], args=SERVE[1:], cwd=ROOT)
        async with stdio_client(parameters) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            yield s
    elif transport == "in-process":
        # The same server object the command serves, through the SDK's in-memory
        # transport: the handlers run in this process, where coverage sees them.
        async with Client(build_server(load_registry(SPEC))) as client:
            yield client.session
    else:
        async with (
            streamable_http_client(url) as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            yield s


def text(result: CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


def error(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error
    value: dict[str, Any] = json.loads(text(result))
    return value


@pytest.mark.parametrize("transport", ["stdio", "http", "in-process"])
async def test_the_sdks_client_calls_a_served_registry(
    transport: str, http_url: str, anyio_backend: str
) -> None:
    async with session(transport, http_url) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(listed) == {
            "forecast",
            "send_message",
            "messages_sent",
            "broken",
            "read_file",
            "delete_everything",
            "report",
            "whoami",
        }
        forecast = listed["forecast"]
        assert forecast.description is not None and forecast.description.startswith("Weather")
        assert forecast.input_schema["required"] == ["city"]
        assert forecast.annotations is not None and forecast.annotations.read_only_hint is True
        write = listed["send_message"].annotations
        assert write is not None
        assert (write.read_only_hint, write.destructive_hint) == (False, True)

        ok = await client.call_tool("forecast", {"city": "Lisbon", "days": 2})
        assert (ok.is_error, text(ok)) == (False, "2 sunny days in Lisbon")

        # Our validation answers, listing each problem; nothing ran.
        refused = error(await client.call_tool("forecast", {"days": "many"}))
        assert refused["error"] == "invalid_arguments"
        assert {p["path"] for p in refused["problems"]} == {"$.city", "$.days"}
        assert error(await client.call_tool("nope", {}))["error"] == "unknown_tool"

        # The ledger: the same idempotency key runs the write once; a new key runs again.
        before = int(text(await client.call_tool("messages_sent", {})))
        # RequestParamsMeta is an open TypedDict (PEP 728), which mypy cannot build yet.
        meta = cast(RequestParamsMeta, {IDEMPOTENCY_KEY_META: f"{transport}-{anyio_backend}"})
        first = await client.call_tool("send_message", {"to": "bob", "text": "hi"}, meta=meta)
        assert text(first) == f"message {before + 1} sent to bob"
        again = await client.call_tool("send_message", {"to": "bob", "text": "hi"}, meta=meta)
        replay = json.loads(text(again))
        assert (again.is_error, replay["replayed"], replay["result"]) == (
            False,
            True,
            f"message {before + 1} sent to bob",
        )
        await client.call_tool("send_message", {"to": "bob", "text": "hi"})
        assert int(text(await client.call_tool("messages_sent", {}))) == before + 2

        # A failing handler and the sandbox answer as results, never as crashes.
        assert error(await client.call_tool("broken", {"x": 1}))["error"] == "tool_failed"
        stopped = error(await client.call_tool("read_file", {"path": "/etc/hostname"}))
        assert stopped["error"] == "sandbox_violation", stopped

        # Images and documents come back as MCP media blocks, not as JSON text.
        media = await client.call_tool("report", {"city": "Lisbon"})
        summary, image, document, link = media.content
        assert isinstance(summary, TextContent) and summary.text == "report for Lisbon"
        assert isinstance(image, ImageContent) and image.mime_type == "image/png"
        assert base64.b64decode(image.data) == PIXEL
        assert isinstance(document, EmbeddedResource)
        blob = document.resource
        assert isinstance(blob, BlobResourceContents) and blob.mime_type == "application/pdf"
        assert (base64.b64decode(blob.blob), str(blob.uri)) == (
            PDF,
            f"{RESULT_URI_SCHEME}:report.pdf",
        )
        assert isinstance(link, ResourceLink) and (str(link.uri), link.name) == (
            "https://maps.example/lisbon.jpg",
            "map",
        )

        # The calls of one session share a conversation id; each HTTP session its own.
        who = text(await client.call_tool("whoami", {}))
        assert who == text(await client.call_tool("whoami", {}))
        if transport == "http":
            assert who.startswith("mcp-session-") and len(who) > len("mcp-session-")
            async with session(transport, http_url) as other:
                assert text(await other.call_tool("whoami", {})) not in ("", who)
        else:
            assert who == "mcp-connection"

        # No person to ask: a tool needing approval is declined, and did not run.
        declined = error(await client.call_tool("delete_everything", {}))
        assert declined["error"] == "declined"
        assert int(text(await client.call_tool("messages_sent", {}))) == before + 2


def test_a_bad_registry_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "serve", "tests.runtime.mcp.served_registry:nothing"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sse-toolcalls mcp serve: cannot load the registry")
    assert err.count("\n") == 1
    assert main(["mcp", "serve", "sse_toolcalls.tooling.cli:main"]) == 2
    assert "is a function, not a ToolRegistry" in capsys.readouterr().err
    with pytest.raises(UsageError, match="module:attribute"):
        load_registry("no_colon")


def test_a_port_in_use_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["mcp", "serve", SPEC, "--http", str(port)]) == 2
    assert "cannot listen on 127.0.0.1:" in capsys.readouterr().err
