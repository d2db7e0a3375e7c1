"""A defect to plant in a child process's parser (the atheris engine fuzzes in one).

``SSE_TOOLCALLS_FUZZ_IMPORT=tests.tooling.corpus._planted:plant`` makes the child call
:func:`plant`; a test plants the same defect in its own process with :func:`planted_feed`
to replay what the child found.
"""

from __future__ import annotations

from sse_toolcalls import ToolCall, ToolCallParser

__all__ = ["plant", "planted_feed"]

_REAL = ToolCallParser.feed


def planted_feed(self: ToolCallParser, data: bytes) -> list[ToolCall]:
    """A scratch parser's feed that trips on one byte value."""
    if b"\xff" in data:
        raise IndexError("planted")
    return _REAL(self, data)


def plant() -> None:
    """Replace ``ToolCallParser.feed`` with :func:`planted_feed` in this process."""
    ToolCallParser.feed = planted_feed  # type: ignore[method-assign]
