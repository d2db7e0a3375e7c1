"""A hostile MCP server for the tests (the SDK's low-level ``Server``): tool schemas with a
catastrophic pattern, a lookaround, a remote reference, a reference cycle and a huge
enum; tools answering with one huge text, many small parts, parts that add up past the
limit, and huge structured content. :func:`build` makes one; ``python -m
tests.runtime.mcp.hostile_server`` serves it over stdio."""

from __future__ import annotations

from typing import Any

from mcp.server.lowlevel import Server
from mcp_types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    ToolAnnotations,
)
from mcp_types import Tool as MCPTool

EVIL = "^(a+)+$"
"""Exponential on a backtracking engine."""

BIG = 4 * 1024 * 1024
"""Bytes of the big answers (over the limit the tests set, under the SDK's own)."""

SCHEMAS: dict[str, dict[str, Any]] = {
    "match": {"type": "object", "properties": {"s": {"type": "string", "pattern": EVIL}}},
    "keys": {
        "type": "object",
        "patternProperties": {EVIL: {"type": "integer"}},
        "additionalProperties": False,
    },
    "lookahead": {"type": "object", "properties": {"s": {"type": "string", "pattern": "(?=a)"}}},
    "remote": {"type": "object", "properties": {"s": {"$ref": "https://peer.example/s.json"}}},
    "cycle": {"type": "object", "allOf": [{"$ref": "#"}]},
    "enum": {"type": "object", "properties": {"s": {"enum": [str(n) for n in range(60_000)]}}},
}
"""Input schemas, by tool name; the answering tools below take no arguments."""

ANSWERS = ("flood", "confetti", "dribble", "structured", "fine")
OUTPUT_SCHEMAS: dict[str, dict[str, Any]] = {
    "shaped": {"type": "object", "properties": {"s": {"type": "string", "pattern": EVIL}}},
    "looped": {"type": "object", "allOf": [{"$ref": "#"}]},
}
"""Output schemas, by tool name: the SDK validates results against them with ``re``."""
REFUSED = ("lookahead", "remote", "cycle", "enum", *OUTPUT_SCHEMAS)
"""The tools the client must refuse when they are added."""


def _answer(name: str) -> CallToolResult:
    if name == "flood":
        return CallToolResult(content=[TextContent(text="x" * BIG)])
    if name == "confetti":
        return CallToolResult(content=[TextContent(text="") for _ in range(5_000)])
    if name == "dribble":
        part = "y" * (100 * 1024)
        return CallToolResult(content=[TextContent(text=part) for _ in range(BIG // len(part))])
    if name in OUTPUT_SCHEMAS:
        return CallToolResult(content=[], structured_content={"s": "a" * 64 + "!"})
    if name == "structured":
        return CallToolResult(content=[], structured_content={"rows": ["z" * 1024] * 4096})
    return CallToolResult(content=[TextContent(text=f"{name} ok")])


def build() -> Server[Any]:
    async def list_tools(ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        read = ToolAnnotations(read_only_hint=True)
        tools = [
            MCPTool(name=name, input_schema=schema, annotations=read)
            for name, schema in SCHEMAS.items()
        ]
        tools += [
            MCPTool(name=name, input_schema={"type": "object"}, annotations=read)
            for name in ANSWERS
        ]
        tools += [
            MCPTool(name=name, input_schema={"type": "object"}, output_schema=schema)
            for name, schema in OUTPUT_SCHEMAS.items()
        ]
        return ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        return _answer(params.name)

    return Server("hostile", on_list_tools=list_tools, on_call_tool=call_tool)


if __name__ == "__main__":  # pragma: no cover - run as a subprocess by the tests
    import anyio
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        server = build()
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
