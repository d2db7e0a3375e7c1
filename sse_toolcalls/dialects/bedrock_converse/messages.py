"""Amazon Bedrock Converse: assistant turns, tool results, tool declarations, request body.

Wire shapes (Converse API reference: ``Message``, ``ContentBlock``, ``ToolResultBlock``,
``ReasoningContentBlock``, ``ToolConfiguration``; checked in the tests against the
``bedrock-runtime`` service model botocore ships):

- assistant turn: ``{"role": "assistant", "content": [{"reasoningContent":
  {"reasoningText": {"text", "signature"?}} | {"redactedContent": <base64>}}, ...,
  {"text"}, {"toolUse": {"toolUseId", "name", "input": {...}}}, ...]}``: the reasoning
  blocks exactly as received, first, and any later one before the call it preceded
  ("If you pass a reasoning block back to the API in a multi-turn conversation, include
  the text and its signature unmodified");
- results: ONE user message whose content starts with one ``toolResult`` block per call,
  in call order: ``{"toolUseId", "content": [{"json": {...}} | {"text"}, {"image":
  {"format", "source": {"bytes": <base64>} | {"s3Location": {"uri"}}}}, {"document":
  {"format", "name", "source": ...}}], "status": "success" | "error"}``; any text the
  user adds follows them in the same message (Converse refuses two user messages in a
  row);
- tools: ``{"toolConfig": {"tools": [{"toolSpec": {"name", "description"?,
  "inputSchema": {"json": <schema>}}}], "toolChoice"?: {"auto": {}} | {"any": {}} |
  {"tool": {"name"}}}}``.

Rules of the service that the builders keep, each refused with a ``ValidationException``
otherwise: roles alternate (consecutive messages of one role are joined); a text block is
never blank ("text content blocks must be non-empty", "must contain non-whitespace
text"); ``toolConfig`` is present whenever the messages hold ``toolUse`` or
``toolResult`` blocks (without tools to list, a ``UsageError``); a document's name is
unique in the whole request ("Messages can't contain duplicate document names") and uses
only letters, digits, single spaces, hyphens, parentheses and square brackets; a request
holds at most :data:`MAX_DOCUMENTS` documents.

Reasoning blocks of this dialect go back as the stream gave them (``stream.py``): a
``redacted_thinking`` block, or one with only ``data``, is ``redactedContent`` (``data``
is its base64 text, as on the wire); any other is ``reasoningText`` with its ``text``
and, when it had one, its ``signature`` (the union holds one of the two, so a block that
streamed both goes back as the text its signature proves).

Model and streaming are in the URL (``/model/{modelId}/converse-stream``), not the body.
The body is the HTTP JSON body: blobs (image and document bytes, ``redactedContent``)
are base64 text there, where boto3 takes ``bytes``.
"""

from __future__ import annotations

import re
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
from ..naming import ToolNameMap, is_legal_name

__all__ = [
    "MAX_DOCUMENTS",
    "assistant_turn",
    "build_request",
    "format_results",
    "thinking_refused",
    "tool_declarations",
]

DIALECT = "bedrock_converse"

_TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_.:-]{1,64}")
"""``ToolUseId`` in the service model: "Minimum length of 1. Maximum length of 64",
pattern ``[a-zA-Z0-9_.:-]+`` (Kimi's ids, ``functions.glob_search:0``, use the dot and
the colon)."""

_EMPTY_ERROR = "The tool failed without a message."
"""An error result with no content still needs a text block that is not blank."""

_EMPTY_RESULT = "The tool returned no content."
"""An empty ok result likewise: the service refuses blank text blocks."""

_IMAGE_FORMATS = {
    "image/png": "png",
    "image/jpeg": "jpeg",
    "image/jpg": "jpeg",
    "image/gif": "gif",
    "image/webp": "webp",
}
"""``ImageFormat``: png, jpeg, gif, webp, by MIME type."""

_DOCUMENT_FORMATS = {
    "application/pdf": "pdf",
    "text/csv": "csv",
    "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html",
    "text/plain": "txt",
    "text/markdown": "md",
}
"""``DocumentFormat``: pdf, csv, doc, docx, xls, xlsx, html, txt, md, by MIME type."""

_S3_URI = re.compile(r"s3://[a-z0-9][.\-a-z0-9]{1,61}[a-z0-9](/.*)?")
"""``S3Uri`` in the service model, at most 1,024 characters: a bucket name of 3 to 63
of a-z, 0-9, '.' and '-', then the key. Converse reads media from S3 only."""

_MAX_S3_URI = 1024

_MAX_DOCUMENT_NAME = 200
"""``DocumentBlock.name``: "Maximum length of 200"."""

MAX_DOCUMENTS = 5
"""Documents in one request: the service refuses more ("You can't include more than 5
documents in a request"). A conversation whose tools returned more keeps the latest
ones; each earlier one becomes a line of text saying it was left out, so an agent that
read a sixth document is not stuck with a conversation the service refuses."""

_NAME_UNSAFE = re.compile(r"[^a-zA-Z0-9\s()\[\]-]+")
_SPACES = re.compile(r"\s+")

_CHOICE_HELP = "tool_choice is 'auto', 'any', a declared tool's name, or Converse's own object"


def _shown(value: object) -> str:
    # A name or id in an error message, cut short: either may be as long as a caller
    # made it.
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _legal_name(name: str) -> str:
    if not isinstance(name, str) or not is_legal_name(DIALECT, name):
        raise UsageError(
            f"tool name {_shown(name)} breaks Bedrock's rule [a-zA-Z0-9_-]{{1,64}}: declare the "
            "tools in build_request, or pass the ToolNameMap the calls were mapped with"
        )
    return name


def _wire_name(name: str, names: ToolNameMap | None) -> str:
    return _legal_name(name if names is None else names.to_wire(name))


def _tool_use_id(call: ToolCall) -> str:
    call_id = require_call_id(call, DIALECT)
    if not _TOOL_USE_ID.fullmatch(call_id):
        raise UsageError(
            f"call {_shown(call.name)} (index {call.index}) has the id {_shown(call_id)}, "
            "which Bedrock refuses (1 to 64 of a-z, A-Z, 0-9, '_', '.', ':', '-'); a "
            "conversation from another provider is carried over with "
            "sse_toolcalls.crossing.carry_over"
        )
    return call_id


def _redacted(block: ReasoningBlock) -> bool:
    if block.data is None:
        return False
    return block.kind == "redacted_thinking" or not (block.text or block.signature is not None)


def _reasoning_block(block: ReasoningBlock) -> dict[str, Any]:
    if _redacted(block):
        return {"reasoningContent": {"redactedContent": block.data}}
    text: dict[str, Any] = {"text": block.text}
    if block.signature is not None:
        text["signature"] = block.signature
    return {"reasoningContent": {"reasoningText": text}}


def _kept(block: ReasoningBlock) -> bool:
    # A block with neither text nor signature nor payload says nothing the model needs
    # back, and an empty reasoningText would be a blank block.
    if _redacted(block):
        return bool(block.data)
    return bool(block.text) or block.signature is not None


def assistant_turn(
    text: str,
    calls: Sequence[ToolCall],
    *,
    names: ToolNameMap | None = None,
    reasoning: Sequence[ReasoningBlock] = (),
) -> list[dict[str, Any]]:
    """The assistant message that asked for ``calls``: its reasoning blocks of this
    dialect that came first (exactly as received), a text block (when the text is not
    blank), then one ``toolUse`` block per call in call order, with the call's own id,
    its wire name and its arguments object, each later reasoning block just before the
    call it preceded. Reasoning of other dialects is left out.

    Returns:
        A one-element list holding the message, or ``[]`` for a turn with nothing to
        send (the service refuses empty content and blank text).

    Raises:
        UsageError: a call has no id or one Bedrock refuses, or a name (after ``names``)
            breaks Bedrock's name rule.
    """
    leading, rest = interleaved(calls, reasoning, DIALECT)
    blocks: list[dict[str, Any]] = [_reasoning_block(b) for b in leading if _kept(b)]
    if text.strip():
        blocks.append({"text": text})
    for item in rest:
        if isinstance(item, ReasoningBlock):
            if _kept(item):
                blocks.append(_reasoning_block(item))
            continue
        blocks.append(
            {
                "toolUse": {
                    "toolUseId": _tool_use_id(item),
                    "name": _wire_name(item.name, names),
                    "input": item.args,
                }
            }
        )
    return [{"role": "assistant", "content": blocks}] if blocks else []


def thinking_refused(conversation: Conversation) -> bool:
    """Whether Claude on Converse would refuse ``conversation`` with thinking on
    (``additionalModelRequestFields.thinking``): its last assistant turn made calls but
    holds no reasoning block of this dialect, as a turn carried over from another
    provider does not (Anthropic's rule: "a final assistant message must start with a
    thinking block")."""
    for message in reversed(conversation):
        if isinstance(message, AssistantMessage):
            own = any(block.provider == DIALECT for block in message.reasoning)
            return bool(message.calls) and not own
    return False


def _media_type(part: MediaPart) -> str:
    return part.media_type.split(";", 1)[0].strip().lower()


def _document_name(part: MediaPart, call_id: str, position: int) -> str:
    """A name the service takes, unique in the request: the part's own name in the
    allowed characters, then a bracketed digest of its call's id and its place among the
    call's media (ids are unique in a conversation), the same on every replay."""
    import hashlib

    base = _SPACES.sub(" ", _NAME_UNSAFE.sub("-", part.name or "")).strip() or "document"
    seed = f"{call_id}\x00{position}".encode("utf-8", "surrogatepass")
    suffix = f" [{hashlib.sha256(seed).hexdigest()[:12]}]"
    return base[: _MAX_DOCUMENT_NAME - len(suffix)].rstrip() + suffix


def _media_block(part: MediaPart, call_id: str, position: int) -> dict[str, Any] | None:
    """The image or document block for ``part``, or ``None`` where Converse cannot take
    it: a format it does not list, a URL that is not an S3 URI (it fetches nothing
    else), or no bytes at all (a blob of at least one byte)."""
    is_image = isinstance(part, Image)
    formats = _IMAGE_FORMATS if is_image else _DOCUMENT_FORMATS
    wire_format = formats.get(_media_type(part))
    if wire_format is None:
        return None
    if part.url is not None:
        if len(part.url) > _MAX_S3_URI or not _S3_URI.fullmatch(part.url):
            return None
        source: dict[str, Any] = {"s3Location": {"uri": part.url}}
    elif part.data:
        source = {"bytes": base64_data(part)}
    else:
        return None
    if is_image:
        return {"image": {"format": wire_format, "source": source}}
    name = _document_name(part, call_id, position)
    return {"document": {"format": wire_format, "name": name, "source": source}}


def _media_note(part: MediaPart) -> str:
    kind = "image" if isinstance(part, Image) else "document"
    size = f"{len(part.data)} bytes" if part.data is not None else part.url
    name = f" {part.name!r}" if part.name else ""
    return (
        f"[{kind}{name} ({part.media_type}, {size}) returned by the tool; not shown: "
        "Bedrock takes png, jpeg, gif or webp images and pdf, csv, doc, docx, xls, xlsx, "
        "html, txt or md documents, as bytes or from S3]"
    )


def _result_block(result: ToolResult) -> dict[str, Any]:
    call_id = _tool_use_id(result.call)
    content: list[dict[str, Any]] = []
    if isinstance(result.content, dict):
        # An object goes as Converse's own JSON content; any other value as its text.
        content.append({"json": result.content})
    else:
        text = content_text(result.content)
        if text.strip():
            content.append({"text": text})
    media: list[dict[str, Any]] = []
    for position, part in enumerate(result.media):
        block = _media_block(part, call_id, position)
        if block is None:
            content.append({"text": _media_note(part)})
        else:
            media.append(block)
    if not content and not media:
        content.append({"text": _EMPTY_ERROR if result.is_error else _EMPTY_RESULT})
    return {
        "toolResult": {
            "toolUseId": call_id,
            "content": content + media,
            "status": "error" if result.is_error else "success",
        }
    }


def format_results(
    results: Iterable[ToolResult], *, names: ToolNameMap | None = None
) -> list[dict[str, Any]]:
    """ONE user message holding a ``toolResult`` block per result, in call order, each
    with its own call's ``toolUseId`` and ``status`` (``error`` for an error result).
    An object result is ``json`` content, any other its text; images and documents
    follow it, or a line of text says what could not be sent. ``names`` is accepted for
    symmetry: results carry no name.

    Returns:
        ``[message]``, or ``[]`` when there are no results.

    Raises:
        UsageError: a result answers a call of another dialect or with no id (or one
            Bedrock refuses), or two results answer the same call. Content JSON cannot
            hold is written as its nearest JSON value when the body is encoded
            (``sse_toolcalls._jsonsafe``), never refused.
    """
    del names
    blocks = [_result_block(r) for r in ordered_results(results, DIALECT)]
    return [{"role": "user", "content": blocks}] if blocks else []


def tool_declarations(
    tools: Sequence[ToolSpec], *, names: ToolNameMap | None = None, strict: bool = False
) -> list[dict[str, Any]]:
    """The ``toolConfig.tools`` list: one ``toolSpec`` per spec, under its wire name, with
    the JSON Schema as ``inputSchema.json``; an empty description is left out (the
    service wants a non-empty one or none).

    ``strict`` declares each tool ``"strict": true`` (structured outputs on the tool's
    input), its schema with ``additionalProperties: false`` on every object; optional
    properties stay optional.

    Raises:
        UsageError: two specs share a name, a name from ``names`` breaks Bedrock's rule,
            or, with ``strict``, a schema strict mode cannot express.
    """
    if names is None:
        names = ToolNameMap(DIALECT, [t.name for t in tools])
    out: list[dict[str, Any]] = []
    for tool in tools:
        spec: dict[str, Any] = {"name": _wire_name(tool.name, names)}
        if tool.description:
            spec["description"] = tool.description
        schema = tool.parameters
        if strict:
            # Imported here, as in the anthropic dialect: requests do not need it.
            from ...strict import strict_schema

            schema = strict_schema(tool.parameters, all_required=False)
            spec["strict"] = True
        spec["inputSchema"] = {"json": schema}
        out.append({"toolSpec": spec})
    return out


def _tool_choice(choice: object, names: ToolNameMap, declared: set[str]) -> dict[str, Any]:
    """``toolConfig.toolChoice`` for the caller's ``tool_choice``.

    Raises:
        UsageError: not one of the accepted forms, or a tool that is not declared.
    """
    name: object = None
    if isinstance(choice, str):
        if choice in ("auto", "any"):
            return {choice: {}}
        name = choice
    elif isinstance(choice, dict) and len(choice) == 1:
        ((kind, value),) = choice.items()
        if kind in ("auto", "any") and value == {}:
            return {kind: {}}
        if kind == "tool" and isinstance(value, dict) and set(value) == {"name"}:
            name = value["name"]
    if not isinstance(name, str):
        from ..._jsonsafe import safe_repr

        raise UsageError(f"{_CHOICE_HELP}, not {safe_repr(choice)[:200]}")
    wire = names.to_wire(name)
    if wire not in declared:
        raise UsageError(f"tool_choice names {name!r}, which is not among the declared tools")
    return {"tool": {"name": wire}}


def _inference_config(max_tokens: int, options: dict[str, Any]) -> dict[str, Any]:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise UsageError(f"max_tokens must be a positive integer, not {max_tokens!r}")
    given = options.pop("inferenceConfig", {})
    if not isinstance(given, dict):
        raise UsageError("inferenceConfig must be an object")
    if "maxTokens" in given:
        raise UsageError("max_tokens and inferenceConfig.maxTokens: pass one or the other")
    return {**given, "maxTokens": max_tokens}


def _within_document_limit(messages: list[dict[str, Any]]) -> None:
    """All but the last :data:`MAX_DOCUMENTS` documents of the tool results replaced, in
    place, by a line of text that names them."""
    places = [
        (content, position)
        for message in messages
        for block in message["content"]
        if "toolResult" in block
        for content in (block["toolResult"]["content"],)
        for position, item in enumerate(content)
        if "document" in item
    ]
    for content, position in places[: max(len(places) - MAX_DOCUMENTS, 0)]:
        document = content[position]["document"]
        content[position] = {
            "text": f"[document {document['name']!r} ({document['format']}) returned by the "
            f"tool; left out: Bedrock takes at most {MAX_DOCUMENTS} documents in a request, "
            "and later ones were kept]"
        }


def _append(messages: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    # Converse wants the roles to alternate: a message of the same role as the one
    # before joins it (a user's text after the tool results, as Anthropic's API wants).
    if messages and messages[-1]["role"] == role:
        messages[-1]["content"].extend(blocks)
    else:
        messages.append({"role": role, "content": blocks})


def build_request(
    conversation: Conversation,
    tools: Sequence[ToolSpec] = (),
    *,
    model: str,
    stream: bool = True,
    max_tokens: int | None = None,
    strict: bool = False,
    tool_choice: str | dict[str, Any] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """The JSON body of a ``Converse`` / ``ConverseStream`` request.

    The model and the choice of streaming are in the URL (``/model/{modelId}/
    converse-stream``), which the HTTP client builds: ``model`` and ``stream`` are
    accepted for a uniform signature, ``model`` is checked, and neither is in the body.
    System prompts go to ``system``; blank user messages are left out; consecutive
    messages of one role are joined; past :data:`MAX_DOCUMENTS` documents in the tool
    results, the earliest become a line of text each. ``max_tokens`` sets
    ``inferenceConfig.maxTokens`` (beside the caller's other ``inferenceConfig``
    fields); ``tool_choice`` is ``"auto"``, ``"any"``, a declared tool's (registry or
    wire) name, or Converse's own ``{"auto": {}}`` / ``{"any": {}}`` / ``{"tool":
    {"name": ...}}`` (the way to force a tool named ``auto`` or ``any``). ``options``
    (``inferenceConfig``, ``additionalModelRequestFields``, ``guardrailConfig``...) are
    added as they are.

    Raises:
        UsageError: an empty ``model``; a conversation that holds tool calls or results
            but no ``tools`` (the service wants ``toolConfig`` then, and it must list at
            least one tool); a ``tool_choice`` without tools or naming no declared
            tool; ``max_tokens`` beside ``inferenceConfig.maxTokens``; an option
            clashing with a field set here; results of another dialect; calls without
            ids; duplicate tool names.
    """
    del stream
    if not isinstance(model, str) or not model:
        raise UsageError("model must be a non-empty model id (it goes in the URL)")
    names = ToolNameMap(DIALECT, [t.name for t in tools])
    messages: list[dict[str, Any]] = []
    tool_blocks = False
    for message in conversation:
        if isinstance(message, UserMessage):
            if message.text.strip():
                _append(messages, "user", [{"text": message.text}])
        elif isinstance(message, AssistantMessage):
            tool_blocks = tool_blocks or bool(message.calls)
            for turn in assistant_turn(
                message.text, message.calls, names=names, reasoning=message.reasoning
            ):
                _append(messages, "assistant", turn["content"])
        elif isinstance(message, ToolResultsMessage):
            for turn in format_results(message.results, names=names):
                tool_blocks = True
                _append(messages, "user", turn["content"])
        elif not isinstance(message, SystemPrompt):
            raise UsageError(f"not a conversation message: {message!r}")
    _within_document_limit(messages)
    body: dict[str, Any] = {"messages": messages}
    system = system_text(conversation)
    if system is not None and system.strip():
        body["system"] = [{"text": system}]
    if max_tokens is not None:
        options = dict(options)
        body["inferenceConfig"] = _inference_config(max_tokens, options)
    if tools:
        declarations = tool_declarations(tools, names=names, strict=strict)
        config: dict[str, Any] = {"tools": declarations}
        if tool_choice is not None:
            declared = {d["toolSpec"]["name"] for d in declarations}
            config["toolChoice"] = _tool_choice(tool_choice, names, declared)
        body["toolConfig"] = config
    elif tool_choice is not None:
        raise UsageError("tool_choice needs tools to choose from")
    elif tool_blocks and "toolConfig" not in options:
        raise UsageError(
            "the conversation holds tool calls or results, and Bedrock refuses them "
            "without a toolConfig listing at least one tool: pass the tools"
        )
    return merge_options(body, options)
