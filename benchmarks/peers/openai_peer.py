"""The openai SDK: its SSE decoder, ``ChatCompletionStreamState`` and the Responses state.

The SDK's ``Stream`` runs ``SSEDecoder.iter_bytes(response.iter_bytes())``, stops at
``[DONE]``, ``json.loads`` each event and builds the model with ``construct_type`` (no
validation, the default); ``client.chat.completions.stream()`` then feeds each chunk to
``ChatCompletionStreamState.handle_chunk`` and ``client.responses.stream()`` each event to
``ResponseStreamState.handle_event``. We run that chain over the chunks, without a socket.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from ..model import Call, Impl
from ._require import require

__all__ = ["impls"]

_ALL = ("openai_chat", "openai_responses", "anthropic")


def _events(chunks: Sequence[bytes]) -> Iterator[Any]:
    streaming = require("openai._streaming", "openai")
    return streaming.SSEDecoder().iter_bytes(iter(chunks))  # type: ignore[no-any-return]


def impls() -> list[Impl]:
    """The SDK's framer, Chat Completions state (plain and strict tools), Responses state."""
    require("openai", "openai")
    from openai._models import construct_type
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.lib.streaming.responses._responses import ResponseStreamState
    from openai.types.chat import ChatCompletionChunk
    from openai.types.responses import ResponseStreamEvent

    def frame(dialect: str, chunks: Sequence[bytes]) -> list[Any]:
        return list(_events(chunks))

    def frame_normalize(events: list[Any]) -> list[tuple[str, str]]:
        return [(e.event or "message", e.data) for e in events]

    def chat(input_tools: list[dict[str, Any]] | None) -> Any:
        def run(dialect: str, chunks: Sequence[bytes]) -> list[Any]:
            state: Any = (
                ChatCompletionStreamState(input_tools=input_tools)
                if input_tools is not None
                else ChatCompletionStreamState()
            )
            for sse in _events(chunks):
                if sse.data.startswith("[DONE]"):
                    break
                chunk = construct_type(type_=ChatCompletionChunk, value=json.loads(sse.data))
                for _ in state.handle_chunk(chunk):
                    pass
            message = state.get_final_completion().choices[0].message
            return list(message.tool_calls or ())

        return run

    def chat_normalize(tool_calls: list[Any]) -> list[Call]:
        return [(t.id, t.function.name, json.loads(t.function.arguments)) for t in tool_calls]

    def strict_run(dialect: str, chunks: Sequence[bytes]) -> list[Any]:
        # With strict tools the SDK re-parses each call's whole argument buffer in partial
        # mode on every delta; we declare every tool name the inputs use as strict.
        from ..inputs import TOOL_NAMES

        tools = [
            {
                "type": "function",
                "function": {
                    "name": name,
                    "parameters": {"type": "object", "properties": {}},
                    "strict": True,
                },
            }
            for name in TOOL_NAMES
        ]
        return chat(tools)(dialect, chunks)  # type: ignore[no-any-return]

    def responses(dialect: str, chunks: Sequence[bytes]) -> list[Any]:
        state: Any = ResponseStreamState(input_tools=[], text_format=None)
        completed: Any = None
        for sse in _events(chunks):
            event = construct_type(type_=ResponseStreamEvent, value=json.loads(sse.data))
            for out in state.handle_event(event):
                if out.type == "response.completed":
                    completed = out.response
        return [item for item in completed.output if item.type == "function_call"]

    def responses_normalize(items: list[Any]) -> list[Call]:
        return [(i.call_id, i.name, json.loads(i.arguments)) for i in items]

    return [
        Impl(
            name="openai-sdk",
            kind="framer",
            role="peer",
            dialects=_ALL,
            run=frame,
            normalize=frame_normalize,
        ),
        Impl(
            name="openai-sdk",
            kind="calls",
            role="peer",
            dialects=("openai_chat",),
            run=chat(None),
            normalize=chat_normalize,
        ),
        Impl(
            name="openai-sdk strict",
            kind="calls",
            role="peer",
            dialects=("openai_chat",),
            run=strict_run,
            normalize=chat_normalize,
        ),
        Impl(
            name="openai-sdk",
            kind="calls",
            role="peer",
            dialects=("openai_responses",),
            run=responses,
            normalize=responses_normalize,
        ),
    ]
