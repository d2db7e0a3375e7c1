"""Our implementation: ``sse_toolcalls.SSEFramer`` (W1) and ``ToolCallParser`` (W2, W3)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .model import Call, Impl

__all__ = ["impls"]


def impls() -> list[Impl]:
    """Our framer and parser."""
    from sse_toolcalls import SSEFramer as framer
    from sse_toolcalls import ToolCallParser as parser

    out: list[Impl] = []

    def frame(dialect: str, chunks: Sequence[bytes]) -> list[Any]:
        f = framer()
        events: list[Any] = []
        for chunk in chunks:
            events += f.feed(chunk)
        events += f.finish()
        return events

    def frame_normalize(events: list[Any]) -> list[tuple[str, str]]:
        return [(e.event or "message", e.data) for e in events]

    out.append(
        Impl(
            name="sse_toolcalls",
            kind="framer",
            role="ours",
            dialects=("openai_chat", "openai_responses", "anthropic"),
            run=frame,
            normalize=frame_normalize,
        )
    )

    def parse(dialect: str, chunks: Sequence[bytes]) -> list[Any]:
        p = parser(dialect)
        calls: list[Any] = []
        for chunk in chunks:
            calls += p.feed(chunk)
        calls += p.finish()
        return calls

    def parse_normalize(calls: list[Any]) -> list[Call]:
        return [(c.call_id, c.name, c.args) for c in calls]

    out.append(
        Impl(
            name="sse_toolcalls",
            kind="calls",
            role="ours",
            dialects=("openai_chat", "openai_responses", "anthropic", "gemini"),
            run=parse,
            normalize=parse_normalize,
        )
    )
    return out
