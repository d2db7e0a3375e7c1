"""A registry for ``sse-toolcalls mcp serve tests.runtime.mcp.served_registry:registry``: a read,
a write that counts its runs, a failing tool, a sandboxed tool, one needing approval, one
returning an image, a document and a link, and one telling its conversation id."""

from __future__ import annotations

import sys

from sse_toolcalls.calls import Document, Image
from sse_toolcalls.runtime.sandbox import Sandbox
from sse_toolcalls.runtime.tools import ToolContext, ToolRegistry
from tests.runtime.sandbox import tools

registry = ToolRegistry()
sent: list[str] = []


@registry.register
def forecast(city: str, days: int = 1) -> str:
    """Weather forecast for a city.

    Args:
        city: The city name.
        days: How many days ahead, 1 to 7.
    """
    # A chatty tool: under stdio, standard output is the MCP channel, and a stray line
    # there would break the session (the SDK diverts it to standard error).
    sys.stdout.write("computing the forecast\n")
    sys.stdout.flush()
    return f"{days} sunny days in {city}"


@registry.register(effect="write")
def send_message(to: str, text: str) -> str:
    """Send a message (a write: it must never run twice for one request)."""
    sent.append(to)
    return f"message {len(sent)} sent to {to}"


@registry.register(effect="read")
def messages_sent() -> int:
    """How many messages were sent since the server started."""
    return len(sent)


@registry.register
def broken(x: int) -> str:
    """A tool whose dependency is down."""
    raise OSError("the database is unreachable")


# Declares nothing readable: reading any file is a violation, answered as a result.
registry.register(tools.read_file, sandbox=Sandbox(timeout=20))


@registry.register(effect="write", needs_approval=True)
def delete_everything() -> str:
    """Delete every message (each call needs a person's approval)."""
    sent.clear()
    return "deleted"


PIXEL = b"\x89PNG\r\n\x1a\n one pixel"
PDF = b"%PDF-1.4 a report"


@registry.register(effect="read")
def report(city: str) -> list[object]:
    """A city's weather report: a summary, a chart, the full PDF and a link to the map."""
    return [
        f"report for {city}",
        Image(media_type="image/png", data=PIXEL),
        Document(media_type="application/pdf", data=PDF, name="report.pdf"),
        Image(media_type="image/jpeg", url="https://maps.example/lisbon.jpg", name="map"),
    ]


@registry.register(effect="read")
def whoami(context: ToolContext[None]) -> str:
    """Which conversation (MCP session) this call belongs to."""
    return context.conversation_id
