"""OpenAI Responses API: assistant turns, tool results, tool declarations, request body.

Wire shapes (Responses API reference, input items):

- assistant text: ``{"type": "message", "role": "assistant", "content": text}``;
- each call: ``{"type": "function_call", "call_id", "name", "arguments": <JSON text>}``,
  plus the item ``id`` (``fc_...``) only on request (see ``assistant_turn``);
- each reasoning item, before the calls it preceded: ``{"type": "reasoning", "id",
  "summary": [{"type": "summary_text", "text"}], "encrypted_content"?, "content"?}``
  (a caller that does not store responses must send them back, with their encrypted
  content: "Reasoning items" in the reasoning guide);
- each result: ``{"type": "function_call_output", "call_id", "output": <text>}``, or
  with images or documents ``"output": [{"type": "input_text"}, {"type": "input_image",
  "image_url"}, {"type": "input_file", "filename", "file_data"}, ...]``;
- tools, flat: ``[{"type": "function", "name", "description", "parameters", "strict"}]``.

Function call outputs have no error flag: an error result is sent as the JSON object
``{"error": ...}`` (see ``dialects._messages.flagless_result_text``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...calls import Image, ReasoningBlock, ToolCall, ToolResult, ToolSpec
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
    data_url,
    flagless_result_text,
    interleaved,
    merge_options,
    ordered_results,
    require_call_id,
    system_text,
)
from ..naming import ToolNameMap

__all__ = ["assistant_turn", "build_request", "format_results", "tool_declarations"]

DIALECT = "openai_responses"

_ENCRYPTED = "reasoning.encrypted_content"


def _reasoning_item(block: ReasoningBlock) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "reasoning"}
    if block.item_id is not None:
        item["id"] = block.item_id
    item["summary"] = [{"type": "summary_text", "text": text} for text in block.summary]
    if block.text:
        item["content"] = [{"type": "reasoning_text", "text": block.text}]
    if block.data is not None:
        item["encrypted_content"] = block.data
    return item


def assistant_turn(
    text: str,
    calls: Sequence[ToolCall],
    *,
    names: ToolNameMap | None = None,
    include_item_ids: bool = False,
    reasoning: Sequence[ReasoningBlock] = (),
) -> list[dict[str, Any]]:
    """The input items that replay an assistant turn: the Responses reasoning items that
    came first (``reasoning``, as received), its text as a message item (when there is
    text), then one ``function_call`` item per call, in call order, each later
    reasoning item just before the call it preceded. Reasoning of other dialects is
    left out.

    The ``fc_...`` item id is left out unless ``include_item_ids``: the API refuses a
    ``function_call`` item that carries its id without the reasoning item that preceded
    it ("provided without its required 'reasoning' item"), which a turn kept without its
    reasoning lacks. ``call_id`` is what results are matched by, and it is always sent.

    Raises:
        UsageError: a call has no id.
    """
    leading, rest = interleaved(calls, reasoning, DIALECT)
    items: list[dict[str, Any]] = [_reasoning_item(block) for block in leading]
    if text:
        items.append({"type": "message", "role": "assistant", "content": text})
    for call in rest:
        if isinstance(call, ReasoningBlock):
            items.append(_reasoning_item(call))
            continue
        item: dict[str, Any] = {"type": "function_call"}
        if include_item_ids and call.item_id is not None:
            item["id"] = call.item_id
        item["call_id"] = require_call_id(call, DIALECT)
        item["name"] = call.name if names is None else names.to_wire(call.name)
        item["arguments"] = arguments_text(call)
        items.append(item)
    return items


def format_results(
    results: Iterable[ToolResult], *, names: ToolNameMap | None = None
) -> list[dict[str, Any]]:
    """One ``function_call_output`` item per result, in call order, each with its own
    call's ``call_id``. ``names`` is accepted for symmetry: outputs carry no name.

    Raises:
        UsageError: a result answers a call of another dialect or with no id, two results
            answer the same call, or content cannot be encoded as JSON.
    """
    del names
    return [
        {
            "type": "function_call_output",
            "call_id": require_call_id(result.call, DIALECT),
            "output": _output(result),
        }
        for result in ordered_results(results, DIALECT)
    ]


def _output(result: ToolResult) -> str | list[dict[str, Any]]:
    text = flagless_result_text(result)
    if not result.media:
        return text
    # The output as a list of input content items: its text, then ``input_image``
    # (``image_url``: a URL or a data URL) and ``input_file`` (``file_data``, a data URL,
    # with a ``filename``; or ``file_url``) items.
    items: list[dict[str, Any]] = [{"type": "input_text", "text": text}] if text else []
    for part in result.media:
        if isinstance(part, Image):
            items.append({"type": "input_image", "image_url": data_url(part), "detail": "auto"})
        elif part.url is not None:
            items.append({"type": "input_file", "file_url": part.url})
        else:
            name = part.name or "document"
            items.append({"type": "input_file", "filename": name, "file_data": data_url(part)})
    return items


def tool_declarations(
    tools: Sequence[ToolSpec], *, names: ToolNameMap | None = None, strict: bool = False
) -> list[dict[str, Any]]:
    """The ``tools`` field: one flat function tool per spec, under its wire name.

    ``strict`` is sent as ``false`` by default (the API's default is ``true``): strict
    mode accepts only schemas where every property is required and
    ``additionalProperties`` is false, which registry schemas in general are not; our own
    validation checks the arguments instead. With ``strict=True`` the schema is sent in
    strict form (:func:`sse_toolcalls.strict.strict_schema`); validate the calls
    with a ``ToolRegistry(strict=True)``, which maps the nulls back to absent.

    Raises:
        UsageError: two specs share a name; with ``strict``, a schema strict mode
            cannot express.
    """
    if names is None:
        names = ToolNameMap(DIALECT, [t.name for t in tools])
    if strict:
        # Imported here: the tools package loads jsonschema, which requests do not need.
        from ...strict import strict_schema
    return [
        {
            "type": "function",
            "name": names.to_wire(tool.name),
            "description": tool.description,
            "parameters": strict_schema(tool.parameters) if strict else tool.parameters,
            "strict": strict,
        }
        for tool in tools
    ]


def build_request(
    conversation: Conversation,
    tools: Sequence[ToolSpec] = (),
    *,
    model: str,
    stream: bool = True,
    include_item_ids: bool = False,
    strict: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """The JSON body of a Responses request (``POST .../responses``).

    System prompts go to ``instructions``; the turns become ``input`` items. Tool names are
    mapped to legal wire names. ``include_item_ids`` is passed to ``assistant_turn``;
    ``strict`` as in :func:`tool_declarations`; ``options`` (``store``, ``reasoning``,
    ``tool_choice``...) are added as they are, except that ``store=False`` adds
    ``"reasoning.encrypted_content"`` to ``include`` (the reasoning items of the next
    turn cannot come back without it).

    Raises:
        UsageError: an option clashes with a field set here, results of another dialect,
            calls without ids, or duplicate tool names.
    """
    names = ToolNameMap(DIALECT, [t.name for t in tools])
    if options.get("store") is False:
        # Unstored, a reasoning item goes back only as its encrypted content, which the
        # API returns only when asked for (the reasoning guide, "Encrypted reasoning
        # items"): ask for it, keeping the caller's own includes.
        include = list(options.get("include") or ())
        if _ENCRYPTED not in include:
            include.append(_ENCRYPTED)
        options = {**options, "include": include}
    items: list[dict[str, Any]] = []
    for message in conversation:
        if isinstance(message, UserMessage):
            items.append({"type": "message", "role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            items.extend(
                assistant_turn(
                    message.text,
                    message.calls,
                    names=names,
                    include_item_ids=include_item_ids,
                    reasoning=message.reasoning,
                )
            )
        elif isinstance(message, ToolResultsMessage):
            items.extend(format_results(message.results, names=names))
        elif not isinstance(message, SystemPrompt):
            raise UsageError(f"not a conversation message: {message!r}")
    body: dict[str, Any] = {"model": model}
    system = system_text(conversation)
    if system is not None:
        body["instructions"] = system
    body["input"] = items
    if tools:
        body["tools"] = tool_declarations(tools, names=names, strict=strict)
    body["stream"] = stream
    return merge_options(body, options)
