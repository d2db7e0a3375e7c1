"""LiteLLM: ``ModelResponseStream`` per chunk, then ``stream_chunk_builder`` at the end.

That is LiteLLM's documented way to rebuild a streamed response (``chunks = []``, append
each streamed chunk, ``litellm.stream_chunk_builder(chunks)``). Events come from the openai
SDK's decoder, as LiteLLM's OpenAI provider uses that client.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from ..model import Call, Impl
from ._require import require

__all__ = ["impls"]


def impls() -> list[Impl]:
    """LiteLLM over Chat Completions."""
    # Without this LiteLLM fetches its model price map from GitHub at import time; the
    # benchmark machine must send nothing off-host, and the bundled copy is all we need.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    litellm = require("litellm", "litellm")
    streaming = require("openai._streaming", "openai")
    model_response_stream = litellm.ModelResponseStream
    builder = litellm.stream_chunk_builder

    def run(dialect: str, chunks: Sequence[bytes]) -> Any:
        collected: list[Any] = []
        for sse in streaming.SSEDecoder().iter_bytes(iter(chunks)):
            if sse.data.startswith("[DONE]"):
                break
            collected.append(model_response_stream(**json.loads(sse.data)))
        return builder(collected).choices[0].message.tool_calls

    def normalize(tool_calls: list[Any]) -> list[Call]:
        return [(t.id, t.function.name, json.loads(t.function.arguments)) for t in tool_calls]

    return [
        Impl(
            name="litellm",
            kind="calls",
            role="peer",
            dialects=("openai_chat",),
            run=run,
            normalize=normalize,
        )
    ]
