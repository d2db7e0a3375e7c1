"""Anthropic models on Amazon Bedrock (``InvokeModel`` / ``InvokeModelWithResponseStream``):
assistant turns, tool results, tool declarations, request body.

The body is the Anthropic Messages body (``dialects/anthropic/messages.py`` has every
wire shape) as Bedrock's Anthropic model parameters want it: no ``model`` and no
``stream`` (both are in the URL: ``/model/{modelId}/invoke-with-response-stream``), and
``"anthropic_version": "bedrock-2023-05-31"``.

The anthropic dialect's builders do the work: this dialect's calls, results and
reasoning blocks are handed to them re-addressed to ``anthropic``, after this dialect's
own checks (a result answers a call of this dialect), so the two can never disagree
on a wire shape.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

from ...calls import ReasoningBlock, ToolCall, ToolResult, ToolSpec
from ...conversation import (
    AssistantMessage,
    Conversation,
    Message,
    ToolResultsMessage,
)
from ...errors import UsageError
from .._messages import ordered_results, require_call_id
from ..anthropic import messages as anthropic
from ..naming import ToolNameMap

__all__ = [
    "ANTHROPIC_VERSION",
    "assistant_turn",
    "build_request",
    "format_results",
    "thinking_refused",
    "tool_declarations",
]

DIALECT = "bedrock_anthropic"

ANTHROPIC_VERSION = "bedrock-2023-05-31"
"""``anthropic_version`` of Bedrock's Anthropic Messages body: "must be
bedrock-2023-05-31" (Bedrock's Anthropic Claude Messages API parameters)."""


def _call(call: ToolCall) -> ToolCall:
    # Checked here too, so that the error names this dialect, not the one doing the work.
    require_call_id(call, DIALECT)
    return dataclasses.replace(call, provider="anthropic") if call.provider == DIALECT else call


def _reasoning(blocks: Iterable[ReasoningBlock]) -> tuple[ReasoningBlock, ...]:
    # Only this dialect's blocks go back (another provider's cannot be read); they are
    # Anthropic's own thinking blocks, so the anthropic builder places them.
    return tuple(
        dataclasses.replace(block, provider="anthropic")
        for block in blocks
        if block.provider == DIALECT
    )


def _results(results: Iterable[ToolResult]) -> list[ToolResult]:
    """``results`` checked as this dialect's (the errors name it), re-addressed.

    Raises:
        UsageError: as ``ordered_results``.
    """
    checked = ordered_results(results, DIALECT)
    return [dataclasses.replace(r, call=_call(r.call)) for r in checked]


def _as_anthropic(conversation: Conversation) -> list[Message]:
    out: list[Message] = []
    for message in conversation:
        if isinstance(message, AssistantMessage):
            calls = tuple(_call(c) for c in message.calls)
            reasoning = _reasoning(message.reasoning)
            out.append(AssistantMessage(text=message.text, calls=calls, reasoning=reasoning))
        elif isinstance(message, ToolResultsMessage):
            out.append(ToolResultsMessage(results=tuple(_results(message.results))))
        else:
            out.append(message)
    return out


def assistant_turn(
    text: str,
    calls: Sequence[ToolCall],
    *,
    names: ToolNameMap | None = None,
    reasoning: Sequence[ReasoningBlock] = (),
) -> list[dict[str, Any]]:
    """The assistant message that asked for ``calls``, as the anthropic dialect writes it
    (thinking blocks of this dialect exactly as received, text, ``tool_use`` blocks).

    Returns:
        A one-element list holding the message, or ``[]`` for an empty turn.

    Raises:
        UsageError: a call has no id.
    """
    return anthropic.assistant_turn(
        text, [_call(c) for c in calls], names=names, reasoning=_reasoning(reasoning)
    )


def format_results(
    results: Iterable[ToolResult], *, names: ToolNameMap | None = None
) -> list[dict[str, Any]]:
    """ONE user message of ``tool_result`` blocks, in call order, as the anthropic
    dialect writes it.

    Returns:
        ``[message]``, or ``[]`` when there are no results.

    Raises:
        UsageError: a result answers a call of another dialect or with no id, or two
            results answer the same call.
    """
    return anthropic.format_results(_results(results), names=names)


def tool_declarations(
    tools: Sequence[ToolSpec], *, names: ToolNameMap | None = None, strict: bool = False
) -> list[dict[str, Any]]:
    """The ``tools`` field, as the anthropic dialect writes it, under this dialect's wire
    names.

    Raises:
        UsageError: two specs share a name; with ``strict``, a schema strict mode
            cannot express.
    """
    if names is None:
        names = ToolNameMap(DIALECT, [t.name for t in tools])
    return anthropic.tool_declarations(tools, names=names, strict=strict)


def thinking_refused(conversation: Conversation) -> bool:
    """Whether the model would refuse ``conversation`` with thinking on (its last
    assistant turn made calls but holds no thinking block of this dialect): the
    anthropic dialect's rule, read on this dialect's blocks."""
    turns = [
        AssistantMessage(calls=m.calls, reasoning=_reasoning(m.reasoning))
        for m in conversation
        if isinstance(m, AssistantMessage)
    ]
    return anthropic.thinking_refused(turns)


def build_request(
    conversation: Conversation,
    tools: Sequence[ToolSpec] = (),
    *,
    model: str,
    stream: bool = True,
    max_tokens: int = anthropic.DEFAULT_MAX_TOKENS,
    strict: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """The JSON body of an ``InvokeModel`` / ``InvokeModelWithResponseStream`` request to
    an Anthropic model: the anthropic dialect's body with ``anthropic_version`` first
    and without ``model`` and ``stream``, which the URL carries (``model`` is checked;
    both are accepted for a uniform signature). ``options`` (``temperature``,
    ``tool_choice``, ``thinking``, ``anthropic_beta``...) are added as they are.

    Raises:
        UsageError: an empty ``model``, an option clashing with a field set here
            (``anthropic_version`` included), results of another dialect, calls without
            ids, or duplicate tool names.
    """
    if not isinstance(model, str) or not model:
        raise UsageError("model must be a non-empty model id (it goes in the URL)")
    if "anthropic_version" in options:
        raise UsageError(
            f"options ['anthropic_version'] clash with fields build_request sets itself "
            f"(Bedrock takes only {ANTHROPIC_VERSION!r})"
        )
    body = anthropic.build_request(
        _as_anthropic(conversation),
        tools,
        model=model,
        stream=stream,
        max_tokens=max_tokens,
        strict=strict,
        **options,
    )
    del body["model"], body["stream"]
    return {"anthropic_version": ANTHROPIC_VERSION, **body}
