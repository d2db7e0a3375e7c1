"""Anthropic Messages: assistant turns, tool results, tool declarations, request body.

Wire shapes (Messages API, tool use guide):

- assistant turn: ``{"role": "assistant", "content": [{"type": "thinking", "thinking",
  "signature"} | {"type": "redacted_thinking", "data"}, ..., {"type": "text", "text"},
  {"type": "tool_use", "id", "name", "input": {...}}, ...]}``: the thinking blocks
  unchanged, first, and any later one before the call it preceded ("Preserving thinking
  blocks": with thinking on, a tool turn must begin with them);
- results: ONE user message whose content starts with the ``tool_result`` blocks
  ``{"type": "tool_result", "tool_use_id", "content": <text>, "is_error": bool}``, in call
  order ("tool result blocks must come first"; any text follows them); a result with
  images or documents has a list as ``content``: a text block, then ``{"type":
  "image" | "document", "source": {"type": "base64", "media_type", "data"} | {"type":
  "url", "url"}}``;
- tools: ``[{"name", "description", "input_schema"}]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...calls import Image, MediaPart, ReasoningBlock, ToolCall, ToolResult, ToolSpec
from ...conversation import (
    AssistantMessage,
    Conversation,
    SystemPrompt,
    ToolResultsMessage,
    UserMessage,
)
from ...errors import UsageError
from .._messages import (
    base64_data,
    content_text,
    interleaved,
    merge_options,
    ordered_results,
    require_call_id,
    system_text,
)
from ..naming import ToolNameMap

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "assistant_turn",
    "build_request",
    "format_results",
    "thinking_refused",
    "tool_declarations",
]

DIALECT = "anthropic"

DEFAULT_MAX_TOKENS = 4096
"""``max_tokens`` is required by the Messages API; 4,096 tokens fits every current Claude
model's output limit and leaves room for several calls with long arguments."""

_EMPTY_ERROR = "The tool failed without a message."
"""The API refuses a ``tool_result`` with ``is_error: true`` and empty content."""


def _thinking_block(block: ReasoningBlock) -> dict[str, Any]:
    if block.kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data or ""}
    return {"type": "thinking", "thinking": block.text, "signature": block.signature or ""}


def assistant_turn(
    text: str,
    calls: Sequence[ToolCall],
    *,
    names: ToolNameMap | None = None,
    reasoning: Sequence[ReasoningBlock] = (),
) -> list[dict[str, Any]]:
    """The assistant message that asked for ``calls``: its Anthropic thinking blocks that
    came first (``reasoning``, exactly as received), a text block (when there is text),
    then one ``tool_use`` block per call, in call order, with the call's own id and its
    arguments object, each later thinking block just before the call it preceded.
    Reasoning of other dialects is left out.

    Returns:
        A one-element list holding the message, or ``[]`` for a turn with neither text nor
        calls (the API refuses empty content and empty text blocks).

    Raises:
        UsageError: a call has no id.
    """
    leading, rest = interleaved(calls, reasoning, DIALECT)
    blocks: list[dict[str, Any]] = [_thinking_block(block) for block in leading]
    if text:
        blocks.append({"type": "text", "text": text})
    for call in rest:
        if isinstance(call, ReasoningBlock):
            blocks.append(_thinking_block(call))
            continue
        blocks.append(
            {
                "type": "tool_use",
                "id": require_call_id(call, DIALECT),
                "name": call.name if names is None else names.to_wire(call.name),
                "input": call.args,
            }
        )
    return [{"role": "assistant", "content": blocks}] if blocks else []


def thinking_refused(conversation: Conversation) -> bool:
    """Whether the API would refuse ``conversation`` with thinking on: its last assistant
    turn made calls but holds no Anthropic thinking block ("a final assistant message
    must start with a thinking block"), as a turn carried over from another provider,
    or kept without its reasoning, does not."""
    for message in reversed(conversation):
        if isinstance(message, AssistantMessage):
            own = any(block.provider == DIALECT for block in message.reasoning)
            return bool(message.calls) and not own
    return False


def _media_block(part: MediaPart) -> dict[str, Any]:
    # "image" and "document" content blocks, by base64 or by URL (vision and PDF
    # support guides; both may stand in a tool_result's content).
    kind = "image" if isinstance(part, Image) else "document"
    if part.url is not None:
        source: dict[str, Any] = {"type": "url", "url": part.url}
    else:
        source = {"type": "base64", "media_type": part.media_type, "data": base64_data(part)}
    block: dict[str, Any] = {"type": kind, "source": source}
    if kind == "document" and part.name:
        block["title"] = part.name
    return block


def _result_block(result: ToolResult) -> dict[str, Any]:
    text = content_text(result.content)
    if result.is_error and not text and not result.media:
        text = _EMPTY_ERROR
    content: str | list[dict[str, Any]] = text
    if result.media:
        # With images or documents the content is a list of blocks, the text first (the
        # API refuses an empty text block).
        blocks = [{"type": "text", "text": text}] if text else []
        content = blocks + [_media_block(part) for part in result.media]
    return {
        "type": "tool_result",
        "tool_use_id": require_call_id(result.call, DIALECT),
        "content": content,
        "is_error": result.is_error,
    }


def format_results(
    results: Iterable[ToolResult], *, names: ToolNameMap | None = None
) -> list[dict[str, Any]]:
    """ONE user message holding a ``tool_result`` block per result, in call order, each
    with its own call's ``tool_use_id`` and ``is_error``. ``names`` is accepted for
    symmetry: results carry no name.

    Returns:
        ``[message]``, or ``[]`` when there are no results.

    Raises:
        UsageError: a result answers a call of another dialect or with no id, two results
            answer the same call, or content cannot be encoded as JSON.
    """
    del names
    blocks = [_result_block(r) for r in ordered_results(results, DIALECT)]
    return [{"role": "user", "content": blocks}] if blocks else []


def tool_declarations(
    tools: Sequence[ToolSpec], *, names: ToolNameMap | None = None, strict: bool = False
) -> list[dict[str, Any]]:
    """The ``tools`` field: one custom tool per spec, under its wire name, with the JSON
    Schema as ``input_schema``.

    ``strict`` declares each tool ``"strict": true`` (strict tool use: grammar-constrained
    inputs), its schema with ``additionalProperties: false`` on every object; optional
    properties stay optional there, so nothing needs mapping back.

    Raises:
        UsageError: two specs share a name; with ``strict``, a schema strict mode
            cannot express.
    """
    if names is None:
        names = ToolNameMap(DIALECT, [t.name for t in tools])
    out: list[dict[str, Any]] = []
    for tool in tools:
        declaration: dict[str, Any] = {
            "name": names.to_wire(tool.name),
            "description": tool.description,
            "input_schema": tool.parameters,
        }
        if strict:
            # Imported here: the tools package loads jsonschema, which requests do not need.
            from ...strict import strict_schema

            declaration["input_schema"] = strict_schema(tool.parameters, all_required=False)
            declaration["strict"] = True
        out.append(declaration)
    return out


def build_request(
    conversation: Conversation,
    tools: Sequence[ToolSpec] = (),
    *,
    model: str,
    stream: bool = True,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    strict: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """The JSON body of a Messages request (``POST .../v1/messages``).

    System prompts go to ``system``. A user message that directly follows tool results (or
    another user message) joins that user message, after its ``tool_result`` blocks, as
    the API wants; an empty user message is left out. Tool names are mapped to legal
    wire names; ``options`` (``temperature``, ``tool_choice``, ``thinking``...) are added as
    they are.

    Raises:
        UsageError: an option clashes with a field set here, results of another dialect,
            calls without ids, or duplicate tool names.
    """
    names = ToolNameMap(DIALECT, [t.name for t in tools])
    messages: list[dict[str, Any]] = []
    for message in conversation:
        if isinstance(message, UserMessage):
            # The API refuses empty text blocks; an empty user message says nothing.
            if not message.text:
                continue
            block = {"type": "text", "text": message.text}
            if messages and messages[-1]["role"] == "user":
                messages[-1]["content"].append(block)
            else:
                messages.append({"role": "user", "content": [block]})
        elif isinstance(message, AssistantMessage):
            messages.extend(
                assistant_turn(
                    message.text, message.calls, names=names, reasoning=message.reasoning
                )
            )
        elif isinstance(message, ToolResultsMessage):
            messages.extend(format_results(message.results, names=names))
        elif not isinstance(message, SystemPrompt):
            raise UsageError(f"not a conversation message: {message!r}")
    body: dict[str, Any] = {"model": model, "max_tokens": max_tokens}
    system = system_text(conversation)
    if system is not None:
        body["system"] = system
    body["messages"] = messages
    if tools:
        body["tools"] = tool_declarations(tools, names=names, strict=strict)
    body["stream"] = stream
    return merge_options(body, options)
