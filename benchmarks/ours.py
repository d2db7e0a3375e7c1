"""Our implementation: ``sse_toolcalls.SSEFramer`` (W1) and ``ToolCallParser`` (W2, W3)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .model import Call, Impl, MissingPeer

__all__ = ["impls"]


def _framer_class() -> Any:
    import sse_toolcalls

    cls = getattr(sse_toolcalls, "SSEFramer", None)
    if cls is None:
        # The package root may not re-export it yet while the library is being written.
        from sse_toolcalls.sse import SSEFramer as cls
    return cls


def _parser_class() -> Any:
    import sse_toolcalls

    cls = getattr(sse_toolcalls, "ToolCallParser", None)
    if cls is None:
        try:
            from sse_toolcalls.parser import ToolCallParser as cls
        except ImportError as exc:
            raise MissingPeer(f"sse_toolcalls.ToolCallParser: {exc}") from exc
    return cls


def impls() -> list[Impl]:
    """Our framer and parser, or :class:`MissingPeer` for a part not written yet."""
    out: list[Impl] = []
    framer = _framer_class()

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
    parser = _parser_class()

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
