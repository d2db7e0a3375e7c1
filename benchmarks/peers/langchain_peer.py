"""langchain-core chunk merging, the way a LangChain agent accumulates a streamed turn.

langchain-openai turns each Chat Completions chunk into an ``AIMessageChunk`` whose
``tool_call_chunks`` carry the fragments (``_convert_delta_to_message_chunk``); the caller
sums the chunks (``full = full + chunk``) and reads ``full.tool_calls``. langchain-openai
itself is not needed for that: we do its conversion here, over events from the openai SDK's
decoder (the client langchain-openai uses).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..model import Call, Impl
from ._require import require

__all__ = ["impls"]


def impls() -> list[Impl]:
    """langchain-core merging over Chat Completions."""
    messages = require("langchain_core.messages", "langchain-core")
    streaming = require("openai._streaming", "openai")
    ai_chunk = messages.AIMessageChunk
    tool_call_chunk = require("langchain_core.messages.tool", "langchain-core").tool_call_chunk

    def run(dialect: str, chunks: Sequence[bytes]) -> Any:
        full: Any = None
        for sse in streaming.SSEDecoder().iter_bytes(iter(chunks)):
            if sse.data.startswith("[DONE]"):
                break
            chunk = json.loads(sse.data)
            if not chunk["choices"]:
                continue
            delta = chunk["choices"][0]["delta"]
            raw = delta.get("tool_calls") or []
            message = ai_chunk(
                content=delta.get("content") or "",
                id=chunk["id"],
                tool_call_chunks=[
                    tool_call_chunk(
                        name=rtc["function"].get("name"),
                        args=rtc["function"].get("arguments"),
                        id=rtc.get("id"),
                        index=rtc["index"],
                    )
                    for rtc in raw
                ],
            )
            full = message if full is None else full + message
        return full.tool_calls

    def normalize(tool_calls: list[dict[str, Any]]) -> list[Call]:
        return [(t["id"], t["name"], t["args"]) for t in tool_calls]

    return [
        Impl(
            name="langchain-core",
            kind="calls",
            role="peer",
            dialects=("openai_chat",),
            run=run,
            normalize=normalize,
        )
    ]
