"""OpenAI Chat Completions: assistant turns, tool results, tool declarations, request body.

Wire shapes (Chat Completions API reference):

- assistant turn: ``{"role": "assistant", "content": text | null, "tool_calls": [{"id",
  "type": "function", "function": {"name", "arguments": <JSON text>}}]}``;
- results: one ``{"role": "tool", "tool_call_id", "content": <text>}`` message per call,
  right after the assistant turn, in call order;
- tools: ``[{"type": "function", "function": {"name", "description", "parameters"}}]``.

Chat has no error flag on a tool message: an error result is sent as the JSON object
``{"error": ...}`` (see ``dialects._messages.flagless_result_text``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...calls import ReasoningBlock, ToolCall, ToolResult, ToolSpec
from ...conversation import (
    AssistantMessage,
    Conversation,
    SystemPrompt,
    ToolResultsMessage,
    UserMessage,
)
from ...errors import UsageError
from .._messages import (
    arguments_text,
    flagless_result_text,
    media_note,
    merge_options,
    ordered_results,
    system_text,
)
from ..naming import ToolNameMap

__all__ = ["assistant_turn", "build_request", "format_results", "tool_declarations"]

DIALECT = "openai_chat"


def _wire_name(call: ToolCall, names: ToolNameMap | None) -> str:
    return call.name if names is None else names.to_wire(call.name)


def _index(call: ToolCall) -> int:
    return call.index


def _tool_call(call: ToolCall, names: ToolNameMap | None) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    # A compatible server that sent no id gets none back, as in ``format_results``.
    if call.call_id is not None:
        entry["id"] = call.call_id
    entry["type"] = "function"
    entry["function"] = {"name": _wire_name(call, names), "arguments": arguments_text(call)}
    return entry


def assistant_turn(
    text: str,
    calls: Sequence[ToolCall],
    *,
    names: ToolNameMap | None = None,
    reasoning: Sequence[ReasoningBlock] = (),
) -> list[dict[str, Any]]:
    """The assistant message that asked for ``calls``, to continue the conversation.

    ``content`` is ``null`` when the turn had no text and made calls (as the API returns
    it); ``tool_calls`` is left out when there are none, since the API refuses an empty
    list. Arguments are the raw text the model wrote when it is valid JSON.

    Returns:
        A one-element list holding the message.
    """
    message: dict[str, Any] = {"role": "assistant", "content": text or (None if calls else "")}
    # A server that streamed reasoning_content (DeepSeek's thinking mode) refuses a tool
    # turn without it: "The reasoning_content in the thinking mode must be passed back to
    # the API". Only what such a server sent is sent; other dialects' blocks stay out.
    kept = [b.text for b in reasoning if b.provider == DIALECT and b.kind == "reasoning_content"]
    if kept:
        message["reasoning_content"] = "".join(kept)
    if calls:
        message["tool_calls"] = [_tool_call(call, names) for call in sorted(calls, key=_index)]
    return [message]


def format_results(
    results: Iterable[ToolResult], *, names: ToolNameMap | None = None
) -> list[dict[str, Any]]:
    """One ``role: "tool"`` message per result, in call order, each carrying its own
    call's ``tool_call_id``. A call the server sent without an id (some compatible servers
    do) gets a message without ``tool_call_id``; such servers match results by order.

    ``names`` is accepted for symmetry with the other dialects: Chat results carry no name.

    Raises:
        UsageError: a result answers a call of another dialect, two results answer the same
            call, or content cannot be encoded as JSON.
    """
    del names
    messages: list[dict[str, Any]] = []
    for result in ordered_results(results, DIALECT):
        message: dict[str, Any] = {"role": "tool"}
        if result.call.call_id is not None:
            message["tool_call_id"] = result.call.call_id
        text = flagless_result_text(result)
        if result.media:
            # Chat tool messages take only text: each image or document becomes a line
            # saying what it was (docs/design.md, "Multimodal results").
            text = "\n".join([text, *(media_note(part) for part in result.media)]).lstrip("\n")
        message["content"] = text
        messages.append(message)
    return messages


def tool_declarations(
    tools: Sequence[ToolSpec], *, names: ToolNameMap | None = None, strict: bool = False
) -> list[dict[str, Any]]:
    """The ``tools`` field: one function tool per spec, under its wire name.

    ``strict`` declares each tool ``"strict": true`` with its schema in strict form
    (:func:`sse_toolcalls.strict.strict_schema`: every property required, the
    optional ones nullable, no additional properties); validate the calls with a
    ``ToolRegistry(strict=True)``, which maps the nulls back to absent.

    Raises:
        UsageError: two specs share a name; with ``strict``, a schema strict mode
            cannot express.
    """
    if names is None:
        names = ToolNameMap(DIALECT, [t.name for t in tools])
    out: list[dict[str, Any]] = []
    for tool in tools:
        function: dict[str, Any] = {
            "name": names.to_wire(tool.name),
            "description": tool.description,
            "parameters": tool.parameters,
        }
        if strict:
            # Imported here: the tools package loads jsonschema, which requests do not need.
            from ...strict import strict_schema

            function["parameters"] = strict_schema(tool.parameters)
            function["strict"] = True
        out.append({"type": "function", "function": function})
    return out


def build_request(
    conversation: Conversation,
    tools: Sequence[ToolSpec] = (),
    *,
    model: str,
    stream: bool = True,
    strict: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """The JSON body of a Chat Completions request (``POST .../chat/completions``).

    System prompts become one leading ``system`` message. With ``stream``, usage is asked
    for (``stream_options.include_usage``) so the final chunk reports tokens. Tool names
    are mapped to legal wire names; calls in assistant turns may carry either the wire or
    the registry name. ``options`` (``temperature``, ``tool_choice``...) are added as they
    are. ``strict`` declares the tools strict (see :func:`tool_declarations`).

    Raises:
        UsageError: an option clashes with a field set here, results of another dialect,
            duplicate tool names, or content that cannot be encoded as JSON.
    """
    names = ToolNameMap(DIALECT, [t.name for t in tools])
    messages: list[dict[str, Any]] = []
    system = system_text(conversation)
    if system is not None:
        messages.append({"role": "system", "content": system})
    for message in conversation:
        if isinstance(message, UserMessage):
            messages.append({"role": "user", "content": message.text})
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
    body: dict[str, Any] = {"model": model, "messages": messages}
    if tools:
        body["tools"] = tool_declarations(tools, names=names, strict=strict)
    body["stream"] = stream
    if stream:
        body["stream_options"] = {"include_usage": True}
    return merge_options(body, options)
