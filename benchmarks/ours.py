"""Our implementation: ``sse_toolcalls.SSEFramer`` (W1) and ``ToolCallParser`` (W2, W3).

Both twins are measured side by side when the compiled one is built: the rows are
``sse_toolcalls[c]`` and ``sse_toolcalls[py]`` (the parser then runs on each framer in
turn, and on the compiled ``json_scan`` or its pure path, as
``SSE_TOOLCALLS_PURE_PYTHON`` picks them at import), else the one row
``sse_toolcalls[py]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .model import Call, Impl

__all__ = ["impls"]


def impls() -> list[Impl]:
    """Our framer and parser."""
    from sse_toolcalls import ToolCallParser as parser
    from sse_toolcalls import parser as parser_module
    from sse_toolcalls.dialects import _common
    from sse_toolcalls.framing import sse

    twins: list[tuple[str, Any, Any]] = [("py", sse._PySSEFramer, None)]
    if sse._CSSEFramer is not None:
        twins.insert(0, ("c", sse._CSSEFramer, _common.C_JSON_SCAN))
    out: list[Impl] = []
    for label, framer, scan in twins:
        out += _impls(f"sse_toolcalls[{label}]", framer, scan, parser, parser_module, _common)
    return out


def _impls(
    name: str, framer: Any, scan: Any, parser: Any, parser_module: Any, common: Any
) -> list[Impl]:
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
            name=name,
            kind="framer",
            role="ours",
            dialects=("openai_chat", "openai_responses", "anthropic"),
            run=frame,
            normalize=frame_normalize,
        )
    )

    def parse(dialect: str, chunks: Sequence[bytes]) -> list[Any]:
        # The parser builds its framer from its module's global: point it at this twin,
        # and the strict loader at this twin's scan (the pure one's depth test was W3's
        # superlinear cost, which a [py] row on the compiled scan did not show).
        parser_module.SSEFramer = framer
        common._c_json_scan = scan
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
            name=name,
            kind="calls",
            role="ours",
            dialects=("openai_chat", "openai_responses", "anthropic", "gemini"),
            run=parse,
            normalize=parse_normalize,
        )
    )
    return out
