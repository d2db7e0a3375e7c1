"""MCP tools in, against real servers (the SDK's MCPServer) over stdio (a subprocess) and
Streamable HTTP (loopback): every tool registered with its schema and effect, driven by
Agent in every dialect on both backends, isError and images mapped, writes behind the
ledger, bad arguments stopped before the server, the tools gone with the session."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import pytest
from mcp import ClientSession
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ListToolsResult,
    PaginatedRequestParams,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from mcp_types import Tool as MCPTool

from sse_toolcalls.calls import DIALECTS, Document, Image, ToolCall
from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime import Agent, Dispatcher, InMemoryLedger
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.runtime.mcp import (
    MAX_INLINE_DATA_CHARS,
    MAX_MEDIA_BYTES,
    MCPConnection,
    connect_http,
    connect_stdio,
    effect_of,
    register_session_tools,
    result_value,
)
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.runtime.tools.results import ok_result
from sse_toolcalls.tooling.simulator import ExpectedResult, ScriptedCall, Simulator, Turn

from .conftest import ROOT, STDIO_BANK

pytestmark = [
    pytest.mark.anyio,
    # httpx's body iterators are not closed when a body is abandoned early; trio warns
    # when it finalises them (see tests/tooling/simulator/test_end_to_end.py).
    pytest.mark.filterwarnings("ignore:Async generator 'httpx2?\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore2?\\.:ResourceWarning"),
]


@asynccontextmanager
async def bank(transport: str, url: str, registry: ToolRegistry) -> AsyncIterator[MCPConnection]:
    if transport == "stdio":
        command, args = STDIO_BANK
        async with connect_stdio(command, args, registry=registry, cwd=str(ROOT)) as connection:
            yield connection
    else:
        async with connect_http(url, registry=registry) as connection:
            yield connection


def script(account: str, dialect: str) -> list[Turn]:
    # The chart is an image for the model where the dialect takes images; Chat
    # Completions reads only text, so it gets a line naming the image instead.
    chart = (
        ExpectedResult(call_position=1, media=(), contains="image (image/png")
        if dialect == "openai_chat"
        else ExpectedResult(call_position=1, media=("image/png",))
    )
    return [
        Turn(
            calls=(
                ScriptedCall(name="balance", args={"account": account}),
                ScriptedCall(name="chart", args={"account": account}),
                ScriptedCall(name="close_account", args={"account": account}),
            )
        ),
        Turn(
            expect_results=(
                ExpectedResult(call_position=0, contains=f"{account} has 0 EUR"),
                chart,
                ExpectedResult(call_position=2, contains="cannot be closed", is_error=True),
            ),
            calls=(ScriptedCall(name="deposit", args={"account": account, "amount": 5}),),
        ),
        Turn(
            expect_results=(ExpectedResult(call_position=0, contains="now has 5 EUR"),),
            text="Deposited.",
        ),
    ]


async def text_of(connection: MCPConnection, tool: str, **arguments: Any) -> str:
    result = await connection.session.call_tool(tool, arguments)
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_an_mcp_servers_tools_through_agent_in_every_dialect(
    transport: str, bank_url: str, simulator: Simulator, anyio_backend: str
) -> None:
    registry = ToolRegistry()
    async with bank(transport, bank_url, registry) as connection:
        assert {t.name: t.effect for t in connection.tools} == {
            "balance": "read",
            "deposit": "write",
            "close_account": "write",  # no hint: the safe default
            "chart": "read",
            "audit": "read",
        }
        assert registry.names() == ["balance", "deposit", "close_account", "chart", "audit"]
        ledger = InMemoryLedger()
        for dialect in DIALECTS:
            account = f"{dialect}-{anyio_backend}"
            simulator.play(script(account, dialect))
            async with client_for(
                dialect,
                model="sim-model-1",
                api_key="test-key",
                base_url=simulator.base_url_for(dialect),
            ) as provider:
                reply = await Agent(provider, registry, ledger=ledger).run(
                    "Put 5 EUR in my account", request_id=f"req-{account}"
                )
            simulator.assert_no_problems()
            assert (reply.text, reply.is_fallback) == ("Deposited.", False), dialect
            outcomes = [(r.call.name, r.outcome, r.result.is_error) for r in reply.reports]
            assert outcomes == [
                ("balance", "ok", False),
                ("chart", "ok", False),
                ("close_account", "failed", True),
                ("deposit", "ok", False),
            ], dialect
            chart = reply.reports[1].result
            assert (chart.content, [m.media_type for m in chart.media]) == ("", ["image/png"])
            closed = reply.reports[2].result.content
            assert isinstance(closed, dict) and closed["error"] == "tool_error"
            assert "cannot be closed while it holds money" in closed["message"]
            # The write went through the ledger: the same call of the same request is
            # answered from it, and the server's balance shows one deposit.
            deposit = reply.reports[3]
            assert deposit.key is not None
            (again,) = await Dispatcher(registry, ledger=ledger).dispatch(
                [deposit.call], request_id=f"req-{account}"
            )
            assert (again.outcome, again.runs) == ("replayed", 0)
            assert await text_of(connection, "balance", account=account) == (f"{account} has 5 EUR")

        # Arguments that break the server's schema are refused here; nothing is sent.
        bad = ToolCall(
            name="deposit",
            args={"account": "alice", "amount": "a lot"},
            provider="openai_chat",
            call_id="call_bad",
            index=0,
        )
        (refused,) = await Dispatcher(registry, ledger=ledger).dispatch([bad])
        assert (refused.outcome, refused.runs) == ("refused", 0)
        assert await text_of(connection, "balance", account="alice") == "alice has 100 EUR"
        handler = registry.get("balance")
        assert handler is not None

    # The session's lifetime is the block: its tools are gone, a kept handler says why.
    assert registry.names() == []
    with pytest.raises(UsageError, match="has ended"):
        await handler.handler(account="alice")


def mcp_tool(annotations: ToolAnnotations | None) -> MCPTool:
    return MCPTool(name="t", input_schema={"type": "object"}, annotations=annotations)


@pytest.mark.parametrize(
    ("annotations", "effect"),
    [
        (None, "write"),
        (ToolAnnotations(), "write"),
        (ToolAnnotations(read_only_hint=True), "read"),
        (ToolAnnotations(read_only_hint=False), "write"),
        (ToolAnnotations(destructive_hint=False, idempotent_hint=True), "write"),
        (ToolAnnotations(read_only_hint=True, destructive_hint=True), "read"),
    ],
)
def test_annotations_map_to_effects(annotations: ToolAnnotations | None, effect: str) -> None:
    assert effect_of(mcp_tool(annotations)) == effect


def test_the_application_overrides_a_servers_hints() -> None:
    lying = mcp_tool(ToolAnnotations(read_only_hint=True))
    assert effect_of(lying, {"t": "write"}) == "write"
    assert effect_of(mcp_tool(None), {"t": "read"}) == "read"


def test_content_blocks_become_text_json_parts_or_media() -> None:
    assert result_value(CallToolResult(content=[TextContent(text="hi")])) == "hi"
    big = "A" * (MAX_INLINE_DATA_CHARS + 1)
    parts = result_value(
        CallToolResult(
            content=[
                TextContent(text="two"),
                ResourceLink(uri="file:///r.txt", name="r", mime_type="text/plain"),
                EmbeddedResource(resource=TextResourceContents(uri="file:///a", text="body")),
                EmbeddedResource(resource=BlobResourceContents(uri="file:///b", blob="AAAA")),
                AudioContent(data=big, mime_type="audio/wav"),
            ]
        )
    )
    assert parts == [
        {"type": "text", "text": "two"},
        {"type": "resource_link", "uri": "file:///r.txt", "name": "r", "mime_type": "text/plain"},
        {"type": "resource", "uri": "file:///a", "text": "body"},
        {"type": "resource", "uri": "file:///b", "data": "AAAA"},
        {
            "type": "audio",
            "mime_type": "audio/wav",
            "omitted": f"{len(big)} characters of base64 data, over the inline limit",
        },
    ]
    structured = CallToolResult(content=[], structured_content={"total": 3})
    assert result_value(structured) == {"total": 3}
    assert result_value(CallToolResult(content=[])) == ""


def test_images_and_pdfs_become_media_within_the_limit() -> None:
    png, pdf = b"\x89PNG\r\n\x1a\n", b"%PDF-1.7 body"
    over = "A" * ((MAX_MEDIA_BYTES // 3 + 1) * 4)  # decodes to just over the limit
    value = result_value(
        CallToolResult(
            content=[
                TextContent(text="the chart and the report"),
                ImageContent(data=base64.b64encode(png).decode(), mime_type="image/png"),
                EmbeddedResource(
                    resource=BlobResourceContents(
                        uri="file:///out/report.pdf",
                        mime_type="application/pdf",
                        blob=base64.b64encode(pdf).decode(),
                    )
                ),
                ImageContent(data=over, mime_type="image/jpeg"),
                ImageContent(data="not base64!", mime_type="image/gif"),
            ]
        )
    )
    assert value == [
        {"type": "text", "text": "the chart and the report"},
        Image(media_type="image/png", data=png),
        Document(media_type="application/pdf", data=pdf, name="report.pdf"),
        {
            "type": "image",
            "mime_type": "image/jpeg",
            "omitted": f"{len(over)} characters of base64 data, over the media limit",
        },
        {"type": "image", "mime_type": "image/gif", "omitted": "its base64 data does not decode"},
    ]
    # Through the runtime: the JSON parts are the content, the media ride with it (one
    # text beside media only is the content as a string).
    result = ok_result(CALL, value)
    assert result.content == [
        {"type": "text", "text": "the chart and the report"},
        {
            "type": "image",
            "mime_type": "image/jpeg",
            "omitted": f"{len(over)} characters of base64 data, over the media limit",
        },
        {"type": "image", "mime_type": "image/gif", "omitted": "its base64 data does not decode"},
    ]
    assert [m.media_type for m in result.media] == ["image/png", "application/pdf"]
    alone = ok_result(
        CALL,
        result_value(
            CallToolResult(
                content=[TextContent(text="t"), ImageContent(data="AAAA", mime_type="image/png")]
            )
        ),
    )
    assert (alone.content, alone.media) == ("t", (Image(media_type="image/png", data=b"\0\0\0"),))


CALL = ToolCall(name="t", args={}, provider="anthropic", call_id="toolu_1", index=0)


async def test_a_name_clash_adds_nothing_of_the_second_server_and_a_prefix_avoids_it(
    bank_url: str, anyio_backend: str
) -> None:
    registry = ToolRegistry()
    async with connect_http(bank_url, registry=registry):
        with pytest.raises(UsageError, match="'balance' is already registered"):
            async with connect_http(bank_url, registry=registry):
                pass  # pragma: no cover - the clash is found before the block
        assert len(registry) == 5
        async with connect_http(
            bank_url,
            registry=registry,
            prefix="savings_",
            effects={"deposit": "read"},
            approve_writes=True,
        ) as savings:
            assert [(t.name, t.effect, t.needs_approval) for t in savings.tools][:3] == [
                ("savings_balance", "read", False),
                ("savings_deposit", "read", False),
                ("savings_close_account", "write", True),
            ]
            assert len(registry) == 10
        assert len(registry) == 5
    assert len(registry) == 0


async def test_the_applications_own_exception_leaves_the_block_as_itself(
    bank_url: str, anyio_backend: str
) -> None:
    registry = ToolRegistry()
    with pytest.raises(KeyError, match="mine"):
        async with connect_http(bank_url, registry=registry):
            raise KeyError("mine")
    assert len(registry) == 0


async def test_a_hung_tool_times_out_and_the_session_goes_on(
    bank_url: str, anyio_backend: str
) -> None:
    registry = ToolRegistry()
    async with connect_http(bank_url, registry=registry, call_timeout=0.5) as connection:
        hung = ToolCall(
            name="audit", args={"account": "alice"}, provider="gemini", call_id=None, index=0
        )
        (report,) = await Dispatcher(registry, read_retries=0).dispatch([hung])
        assert (report.outcome, report.result.is_error) == ("timeout", True)
        assert await text_of(connection, "balance", account="alice") == "alice has 100 EUR"


class PagedSession:
    """Just enough of a ClientSession for tools/list: pages of tools, by cursor."""

    def __init__(self, pages: list[list[MCPTool]], *, endless: bool = False) -> None:
        self.pages = pages
        self.endless = endless
        self.cursors: list[str | None] = []

    async def list_tools(self, *, params: PaginatedRequestParams | None = None) -> ListToolsResult:
        cursor = params.cursor if params is not None else None
        self.cursors.append(cursor)
        page = 0 if cursor is None else int(cursor)
        more = self.endless or page + 1 < len(self.pages)
        return ListToolsResult(
            tools=self.pages[page % len(self.pages)] if not self.endless else [],
            next_cursor=str(page + 1) if more else None,
        )


def listed(name: str, schema: dict[str, Any] | None = None) -> MCPTool:
    return MCPTool(name=name, input_schema=schema or {"type": "object"})


async def test_every_page_is_read_and_a_bad_schema_refuses_the_whole_server(
    anyio_backend: str,
) -> None:
    bad = listed("bad", {"type": "object", "properties": {"x": {"type": "no-such-type"}}})
    pages = [[listed("a")], [listed("b"), bad], [listed("c")]]
    session = PagedSession(pages)
    registry = ToolRegistry()
    with pytest.raises(
        UsageError, match=r"tool cannot be added: bad: invalid JSON Schema at \$.properties.x.type"
    ):
        await register_session_tools(cast(ClientSession, session), registry)
    assert session.cursors == [None, "1", "2"]
    assert registry.names() == []  # nothing half-added

    connection = MCPConnection(session=cast(ClientSession, session), registry=registry)
    tools = await register_session_tools(
        cast(ClientSession, PagedSession(pages)),
        registry,
        skip_invalid=True,
        connection=connection,
    )
    assert [t.name for t in tools] == registry.names() == ["a", "b", "c"]
    ((name, reason),) = connection.skipped
    assert name == "bad" and "schema" in reason


async def test_a_cursor_that_never_ends_is_refused(anyio_backend: str) -> None:
    endless = PagedSession([[listed("a")]], endless=True)
    with pytest.raises(UsageError, match="more than 100 pages"):
        await register_session_tools(cast(ClientSession, endless), ToolRegistry())
    assert len(endless.cursors) == 100


async def test_a_listing_of_too_many_tools_is_refused(anyio_backend: str) -> None:
    from sse_toolcalls.runtime.mcp.client import MAX_LISTED_TOOLS

    fits = [[listed(f"t{n}") for n in range(MAX_LISTED_TOOLS)]]
    registry = ToolRegistry()
    await register_session_tools(cast(ClientSession, PagedSession(fits)), registry)
    assert len(registry) == MAX_LISTED_TOOLS
    over = [[listed(f"t{n}") for n in range(MAX_LISTED_TOOLS // 2)]] * 2 + [[listed("last")]]
    with pytest.raises(UsageError, match=f"more than {MAX_LISTED_TOOLS} tools"):
        await register_session_tools(cast(ClientSession, PagedSession(over)), ToolRegistry())
