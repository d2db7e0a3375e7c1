"""The conversation loop (basic): user message -> stream -> calls -> registry -> results ->
next request -> ... -> the assistant's final text, within a step limit.

Every call gets a result under its own id: invalid arguments and unknown tools are
answered with error results by the registry, so the model can correct itself. Provider
errors propagate (retries and fallbacks are a later layer's job).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import _adopt
from ..calls import StreamFinished, ToolCall, ToolResult
from ..conversation import (
    AssistantMessage,
    Conversation,
    Message,
    ToolResultsMessage,
    UserMessage,
)
from ..errors import UsageError

if TYPE_CHECKING:
    from ..tools.registry import ToolRegistry
    from .clients import ProviderClient

DEFAULT_MAX_STEPS = 8
"""Requests one loop may make: enough for a few rounds of parallel calls, and a bound on
the cost of a model that keeps calling tools without ever answering."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopOutcome:
    """How a conversation loop ended."""

    text: str
    """The assistant's last visible text (the final answer when ``finished``)."""

    finished: bool
    """True when the model answered without calls; False when the step limit hit first."""

    steps: int
    """How many requests were made."""

    conversation: tuple[Message, ...]
    """The whole conversation, the new assistant turns and results included."""

    calls: tuple[ToolCall, ...]
    """Every call the model made, in order."""

    results: tuple[ToolResult, ...]
    """Every result sent back, in order (errors included)."""


async def run_conversation(
    client: ProviderClient,
    registry: ToolRegistry,
    conversation: Conversation | str,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    **options: Any,
) -> LoopOutcome:
    """Talk with the model until it answers without calling a tool, or ``max_steps``.

    Args:
        client: the provider client (its dialect decides every format).
        registry: the tools the model may call.
        conversation: the conversation so far, or the user's first message as text.
        max_steps: the most requests to make.
        options: request options passed to every request (``temperature``...).

    Returns:
        The outcome: the final text, whether the model finished, the conversation.

    Raises:
        ProviderError: the provider failed (HTTP error, error event, timeout).
        TruncatedStreamError: an answer was cut off.
        UsageError: ``max_steps`` below 1, or a conversation the dialect cannot encode.
    """
    if max_steps < 1:
        raise UsageError("max_steps must be at least 1")
    messages: list[Message] = (
        [UserMessage(text=conversation)] if isinstance(conversation, str) else list(conversation)
    )
    tools = registry.specs()
    all_calls: list[ToolCall] = []
    all_results: list[ToolResult] = []
    text = ""
    for step in range(1, max_steps + 1):
        finished = await _one_turn(client, messages, tools, options)
        text = finished.text
        messages.append(AssistantMessage(text=finished.text, calls=finished.calls))
        if not finished.calls:
            return _outcome(
                text, True, step, messages=messages, calls=all_calls, results=all_results
            )
        # Calls run one after another in call order; parallel dispatch is a later layer.
        results = [await registry.run(call) for call in finished.calls]
        all_calls += finished.calls
        all_results += results
        messages.append(ToolResultsMessage(results=tuple(results)))
    return _outcome(text, False, max_steps, messages=messages, calls=all_calls, results=all_results)


async def _one_turn(
    client: ProviderClient, messages: Sequence[Message], tools: Any, options: dict[str, Any]
) -> StreamFinished:
    last: StreamFinished | None = None
    async for event in client.stream_events(messages, tools, **options):
        if isinstance(event, StreamFinished):
            last = event
    if last is None:
        # The parser ends every successful stream with StreamFinished or raises.
        raise UsageError("the stream ended without its end event")
    return last


def _outcome(
    text: str,
    finished: bool,
    steps: int,
    *,
    messages: list[Message],
    calls: list[ToolCall],
    results: list[ToolResult],
) -> LoopOutcome:
    return LoopOutcome(
        text=text,
        finished=finished,
        steps=steps,
        conversation=tuple(messages),
        calls=tuple(calls),
        results=tuple(results),
    )


__all__ = ["DEFAULT_MAX_STEPS", "LoopOutcome", "run_conversation"]

# Last, once the classes exist: they take the path users import them from (see the root).
_adopt(__name__)
