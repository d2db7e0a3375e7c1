"""The anthropic SDK: its SSE decoder and ``MessageStream``'s accumulation.

The SDK's ``Stream`` runs ``SSEDecoder.iter_bytes(response.iter_bytes())``, skips ``ping``,
``json.loads`` each event and builds it with ``construct_type``; ``MessageStream`` then calls
``accumulate_event`` and ``build_events`` per event. We run that chain over the chunks.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from ..model import Call, Impl
from ._require import require

__all__ = ["impls"]


def _events(chunks: Sequence[bytes]) -> Iterator[Any]:
    streaming = require("anthropic._streaming", "anthropic")
    return streaming.SSEDecoder().iter_bytes(iter(chunks))  # type: ignore[no-any-return]


def impls() -> list[Impl]:
    """The SDK's framer, and its message accumulation."""
    require("anthropic", "anthropic")
    from anthropic._models import construct_type
    from anthropic.lib.streaming._messages import accumulate_event, build_events
    from anthropic.types import RawMessageStreamEvent

    def frame(dialect: str, chunks: Sequence[bytes]) -> list[Any]:
        return list(_events(chunks))

    def frame_normalize(events: list[Any]) -> list[tuple[str, str]]:
        return [(e.event or "message", e.data) for e in events]

    def accumulate(dialect: str, chunks: Sequence[bytes]) -> list[Any]:
        snapshot: Any = None
        json_bufs: dict[int, bytes] = {}
        for sse in _events(chunks):
            if sse.event == "ping" or not sse.data:
                continue
            event: Any = construct_type(type_=RawMessageStreamEvent, value=json.loads(sse.data))
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
            for _ in build_events(event=event, message_snapshot=snapshot):
                pass
        return [block for block in snapshot.content if block.type == "tool_use"]

    def accumulate_normalize(blocks: list[Any]) -> list[Call]:
        return [(b.id, b.name, b.input) for b in blocks]

    return [
        Impl(
            name="anthropic-sdk",
            kind="framer",
            role="peer",
            dialects=("openai_chat", "openai_responses", "anthropic"),
            run=frame,
            normalize=frame_normalize,
        ),
        Impl(
            name="anthropic-sdk",
            kind="calls",
            role="peer",
            dialects=("anthropic",),
            run=accumulate,
            normalize=accumulate_normalize,
        ),
    ]
