"""MCP tools in from a hostile server (issue 29, example 9): its schemas are checked
before use (a catastrophic pattern runs on RE2 in linear time; a lookaround, a remote
reference, a cycle or a huge enum is refused when added: the whole server, or that
tool with ``skip_invalid``), and its answers are bounded in bytes and parts, refused
with an error result the model can act on.

The hang guard (``timeout``) only stops a run that would go on for hours on a
backtracking engine; no assertion is about time."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent

from sse_toolcalls.calls import ToolCall
from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime import Dispatcher
from sse_toolcalls.runtime.mcp import (
    MAX_RESULT_PARTS,
    MCPConnection,
    connect_stdio,
    register_session_tools,
)
from sse_toolcalls.runtime.mcp.client import result_too_large
from sse_toolcalls.runtime.tools import ToolRegistry

from .conftest import ROOT
from .hostile_server import ANSWERS, BIG, EVIL, REFUSED, SCHEMAS, build

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(240)]

LIMIT = 1024 * 1024
"""The tests' ``max_result_bytes``: a quarter of the server's big answers."""


def call(name: str, **args: Any) -> ToolCall:
    return ToolCall(name=name, args=args, provider="openai_chat", call_id=f"c-{name}", index=0)


async def test_a_hostile_schema_refuses_the_whole_server(anyio_backend: str) -> None:
    registry = ToolRegistry()
    async with Client(build()) as client:
        with pytest.raises(UsageError, match="tool cannot be added"):
            await register_session_tools(client.session, registry)
    assert registry.names() == []


async def test_hostile_schemas_are_skipped_and_hostile_answers_refused(anyio_backend: str) -> None:
    registry = ToolRegistry()
    async with Client(build()) as client:
        connection = MCPConnection(session=client.session, registry=registry)
        await register_session_tools(
            client.session,
            registry,
            skip_invalid=True,
            connection=connection,
            max_result_bytes=LIMIT,
        )
        reasons = dict(connection.skipped)
        assert sorted(reasons) == sorted(REFUSED)
        assert "RE2" in reasons["lookahead"]
        assert "refers outside itself" in reasons["remote"]
        assert "cycle" in reasons["cycle"]
        assert "byte limit" in reasons["enum"]
        assert "output schema has a pattern" in reasons["shaped"]
        assert "output schema" in reasons["looped"] and "cycle" in reasons["looped"]
        assert set(registry.names()) == {"match", "keys", *ANSWERS}

        dispatcher = Dispatcher(registry)
        evil = "a" * 64 + "!"
        calls = [
            call("match", s=evil),
            call("keys", **{evil: 1}),
            *(call(name) for name in ANSWERS),
        ]
        reports = await dispatcher.dispatch(calls)
        by_name = {report.call.name: report.result for report in reports}

    # The catastrophic pattern: an ordinary refusal, nothing sent to the server.
    refused = by_name["match"].content
    assert isinstance(refused, dict) and refused["error"] == "invalid_arguments"
    assert refused["problems"][0]["problem"] == "pattern_mismatch"
    keys = by_name["keys"].content
    assert isinstance(keys, dict) and keys["problems"][0]["problem"] == "unexpected_field"
    assert SCHEMAS["match"]["properties"]["s"]["pattern"] == EVIL

    # Oversized answers: an error result naming the limit, none of the flood kept.
    for name in ("flood", "dribble", "structured"):
        result = by_name[name]
        assert result.is_error, name
        text = json.dumps(result.content)
        assert "max_result_bytes" in text and len(text) < 2_000, name
    confetti = by_name["confetti"]
    assert confetti.is_error and f"limit of {MAX_RESULT_PARTS}" in json.dumps(confetti.content)
    assert by_name["fine"].content == "fine ok" and not by_name["fine"].is_error


async def test_a_limit_that_fits_lets_the_same_answer_through(anyio_backend: str) -> None:
    registry = ToolRegistry()
    async with Client(build()) as client:
        await register_session_tools(
            client.session, registry, skip_invalid=True, max_result_bytes=BIG + 1
        )
        (report,) = await Dispatcher(registry).dispatch([call("flood")])
    assert not report.result.is_error and report.result.content == "x" * BIG


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
async def test_the_limit_is_a_whole_number_of_bytes(bad: Any, anyio_backend: str) -> None:
    async with Client(build()) as client:
        with pytest.raises(UsageError, match="max_result_bytes"):
            await register_session_tools(client.session, ToolRegistry(), max_result_bytes=bad)


async def test_over_stdio_the_same_defences_hold(anyio_backend: str) -> None:
    registry = ToolRegistry()
    async with connect_stdio(
        sys.executable,
        ["-m", "tests.runtime.mcp.hostile_server"],
        registry=registry,
        cwd=str(ROOT),
        skip_invalid=True,
        max_result_bytes=LIMIT,
    ) as connection:
        assert sorted(dict(connection.skipped)) == sorted(REFUSED)
        reports = await Dispatcher(registry).dispatch(
            [call("match", s="a" * 64 + "!"), call("flood")]
        )
    assert reports[0].result.is_error and reports[1].result.is_error
    assert "max_result_bytes" in json.dumps(reports[1].result.content)


def test_each_result_limit_at_and_just_past() -> None:
    def text(n: int) -> CallToolResult:
        return CallToolResult(content=[TextContent(text="é" * (n // 2) + "x" * (n % 2))])

    assert result_too_large(text(LIMIT), LIMIT) is None
    assert "max_result_bytes" in (result_too_large(text(LIMIT + 1), LIMIT) or "")
    parts: list[Any] = [TextContent(text="") for _ in range(MAX_RESULT_PARTS)]
    assert result_too_large(CallToolResult(content=parts)) is None
    over = CallToolResult(content=[*parts, TextContent(text="")])
    assert f"limit of {MAX_RESULT_PARTS}" in (result_too_large(over) or "")
    # Structured content counts when there is no content, as JSON.
    rows = {"r": "z" * (LIMIT - len('{"r":""}'))}
    assert result_too_large(CallToolResult(content=[], structured_content=rows), LIMIT) is None
    rows["r"] += "z"
    assert result_too_large(CallToolResult(content=[], structured_content=rows), LIMIT)


def test_every_kind_of_part_counts_toward_the_limit() -> None:
    from mcp_types import (
        AudioContent,
        BlobResourceContents,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextResourceContents,
    )

    n = 1000
    parts: list[Any] = [
        ImageContent(data="A" * n, mime_type="image/png"),
        AudioContent(data="A" * n, mime_type="audio/wav"),
        EmbeddedResource(resource=TextResourceContents(uri="file:///t", text="é" * (n // 2))),
        EmbeddedResource(resource=BlobResourceContents(uri="file:///b", blob="A" * n)),
    ]
    for part in parts:
        result = CallToolResult(content=[part])
        assert result_too_large(result, n) is None, part.type
        assert result_too_large(result, n - 1) is not None, part.type
    link = CallToolResult(content=[ResourceLink(uri="https://x.example/" + "p" * n, name="n")])
    assert result_too_large(link, n) is not None and result_too_large(link, 2 * n) is None
