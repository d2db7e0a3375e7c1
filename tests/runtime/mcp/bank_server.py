"""A real MCP server for the tests (the SDK's own MCPServer): a read tool, a write tool,
a failing tool and an image tool. ``python -m tests.runtime.mcp.bank_server`` serves it over
stdio; :func:`http_app` is its Streamable HTTP app. The write's count is kept in the
server, so a test sees from the outside how often it really ran."""

from __future__ import annotations

import base64
from collections import defaultdict

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import ToolAnnotations
from starlette.applications import Starlette

# A 1x1 PNG: small enough to stay inline in a result part.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def build() -> MCPServer:
    """A fresh server with its own balances (one per process, or per HTTP app)."""
    server = MCPServer("bank")
    balances: defaultdict[str, int] = defaultdict(int, alice=100)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def balance(account: str) -> str:
        """The balance of an account, in euros."""
        return f"{account} has {balances[account]} EUR"

    @server.tool(annotations=ToolAnnotations(destructive_hint=True))
    def deposit(account: str, amount: int) -> str:
        """Add money to an account."""
        balances[account] += amount
        return f"deposited {amount} EUR; {account} now has {balances[account]} EUR"

    @server.tool()
    def close_account(account: str) -> str:
        """Close an account (always refused: the tool that fails)."""
        raise ToolError(f"account {account} cannot be closed while it holds money")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def chart(account: str) -> Image:
        """A chart of an account's balance."""
        return Image(data=PIXEL, format="png")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def audit(account: str) -> str:
        """A full audit of an account (it hangs: the tool that times out)."""
        await anyio.sleep(60)
        return "never"

    return server


def http_app() -> Starlette:
    """The server as a Streamable HTTP app (at ``/mcp``), with fresh balances."""
    return build().streamable_http_app()


if __name__ == "__main__":
    build().run("stdio")
