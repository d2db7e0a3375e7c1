"""httpx-sse's decoder, fed the way httpx feeds it.

``EventSource.iter_sse`` reads ``response.iter_text()``: httpx decodes each network chunk
with its incremental UTF-8 ``TextDecoder``, httpx-sse's ``SSELineDecoder`` splits lines,
each line is ``rstrip("\\n")``-ed and given to ``SSEDecoder.decode``. We run exactly that
chain over the chunks, without a socket.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ..model import Impl
from ._require import require

__all__ = ["impls", "iter_sse"]


def iter_sse(chunks: Sequence[bytes]) -> Iterator[Any]:
    """Yield httpx-sse ``ServerSentEvent`` objects, as ``EventSource.iter_sse`` would."""
    decoders = require("httpx_sse._decoders", "httpx-sse")
    text_decoder = require("httpx._decoders", "httpx").TextDecoder(encoding="utf-8")
    lines = decoders.SSELineDecoder()
    sse = decoders.SSEDecoder()

    def texts() -> Iterator[str]:
        # httpx's Response.iter_text: decode each chunk, skip empty text, flush at the end.
        for chunk in chunks:
            text = text_decoder.decode(chunk)
            if text:
                yield text
        text = text_decoder.flush()
        if text:
            yield text

    for text in texts():
        for line in lines.decode(text):
            event = sse.decode(line.rstrip("\n"))
            if event is not None:
                yield event
    for line in lines.flush():
        event = sse.decode(line.rstrip("\n"))
        if event is not None:
            yield event


def impls() -> list[Impl]:
    """httpx-sse as a framer."""
    require("httpx_sse", "httpx-sse")

    def run(dialect: str, chunks: Sequence[bytes]) -> list[Any]:
        return list(iter_sse(chunks))

    def normalize(events: list[Any]) -> list[tuple[str, str]]:
        # httpx-sse dispatches blocks without data too (the spec says not to); drop them
        # so the comparison is about the events every implementation reports.
        return [(e.event or "message", e.data) for e in events if e.data]

    return [
        Impl(
            name="httpx-sse",
            kind="framer",
            role="peer",
            dialects=("openai_chat", "openai_responses", "anthropic"),
            run=run,
            normalize=normalize,
        )
    ]
