"""Gemini (generateContent): model turns, function responses, declarations, request body.

Wire shapes (Gemini API reference, function calling guide):

- model turn: ``{"role": "model", "parts": [{"text"}, {"functionCall": {"name", "args",
  "id"?}, "thoughtSignature"?}, ...]}``: the signature goes back on the part it came
  on, exactly as received (thinking models refuse a replayed call without it);
- results: ONE user content with one ``functionResponse`` part per call, in call order
  (one content per response is refused: "number of function response parts should be
  equal to number of function call parts"); ``{"name", "response": {...}, "id"?}``: the
  ``id`` only when the call had one (some Gemini endpoints refuse ids they did not send);
  a result's images and documents go in the ``functionResponse``'s own ``parts``
  (``{"inlineData": {"mimeType", "data", "displayName"?}}`` or ``{"fileData":
  {"mimeType", "fileUri"}}``, multimodal function responses);
- tools: ``[{"functionDeclarations": [{"name", "description", "parameters"}]}]``.

``response`` must be a JSON object. Following the documented convention ("Use 'output' key
to specify function output and 'error' key to specify error details"), an object result
is sent as it is, any other result as ``{"output": ...}`` and an error as
``{"error": ...}``.

Schemas. Gemini takes either ``parameters`` (its OpenAPI 3.0 ``Schema`` subset) or
``parametersJsonSchema`` (JSON Schema; not in every API version). We send ``parameters``
by default, because every Gemini endpoint (v1, v1beta, Vertex AI) accepts it, and convert
the registry's JSON Schema with ``gemini_schema`` (``schema.py``): ``$ref`` inlined from ``$defs``,
``anyOf``/type lists with ``null`` turned into ``nullable``, ``additionalProperties`` and
other keywords the subset lacks dropped (our own validation still enforces them).
``schema_field="parametersJsonSchema"`` sends the schema unconverted instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

from ...calls import MediaPart, ReasoningBlock, ToolCall, ToolResult, ToolSpec
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
    error_object,
    json_text,
    merge_options,
    ordered_results,
    system_text,
)
from ..naming import ToolNameMap
from .schema import gemini_schema

__all__ = [
    "assistant_turn",
    "build_request",
    "format_results",
    "response_object",
    "tool_declarations",
]

DIALECT = "gemini"

SchemaField = Literal["parameters", "parametersJsonSchema"]

_NO_STRICT = (
    "gemini's declarations have no strict flag: strict mode is the request's function "
    "calling mode (build_request(strict=True) sets functionCallingConfig.mode VALIDATED)"
)
_STRICT_MODE = "VALIDATED"
"""Gemini's function calling mode that "ensures function schema adherence" (its docs):
the documented equivalent of OpenAI's and Anthropic's strict tools, set per request."""


def _index(call: ToolCall) -> int:
    return call.index


def assistant_turn(
    text: str,
    calls: Sequence[ToolCall],
    *,
    names: ToolNameMap | None = None,
    reasoning: Sequence[ReasoningBlock] = (),
) -> list[dict[str, Any]]:
    """The ``model`` content that asked for ``calls``: a text part (when there is text),
    then one ``functionCall`` part per call in call order, with ``id`` only when the call
    had one and its ``thoughtSignature`` exactly as received.

    Returns:
        A one-element list holding the content, or ``[]`` for a turn with neither text nor
        calls (the API refuses a content without parts).
    """
    # Gemini's thought signatures ride on the calls; other dialects' blocks stay out.
    del reasoning
    parts: list[dict[str, Any]] = []
    if text:
        parts.append({"text": text})
    for call in sorted(calls, key=_index):
        function_call: dict[str, Any] = {
            "name": call.name if names is None else names.to_wire(call.name),
            "args": call.args,
        }
        if call.call_id is not None:
            function_call["id"] = call.call_id
        part: dict[str, Any] = {"functionCall": function_call}
        if call.thought_signature is not None:
            part["thoughtSignature"] = call.thought_signature
        parts.append(part)
    return [{"role": "model", "parts": parts}] if parts else []


def response_object(result: ToolResult) -> dict[str, Any]:
    """The ``functionResponse.response`` object for ``result``.

    An error is ``{"error": content}`` (content kept as it is when it already is an object
    with an ``"error"`` key). An ok object is sent as it is, unless it has an ``"output"``
    or ``"error"`` key, which Gemini would read as the convention's keys: then, like any
    non-object result, it is wrapped as ``{"output": content}``.

    Raises:
        UsageError: the content cannot be encoded as JSON.
    """
    # Encoding once here surfaces unencodable content as our error, not the client's.
    json_text(result.content)
    if result.is_error:
        return error_object(result.content)
    content = result.content
    if isinstance(content, dict) and "output" not in content and "error" not in content:
        return content
    return {"output": content}


def _media_part(part: MediaPart) -> dict[str, Any]:
    if part.url is not None:
        return {"fileData": {"mimeType": part.media_type, "fileUri": part.url}}
    blob: dict[str, Any] = {"mimeType": part.media_type, "data": base64_data(part)}
    if part.name:
        blob["displayName"] = part.name
    return {"inlineData": blob}


def format_results(
    results: Iterable[ToolResult], *, names: ToolNameMap | None = None
) -> list[dict[str, Any]]:
    """ONE ``user`` content with a ``functionResponse`` part per result, in call order,
    each with its call's (wire) name and its call's ``id`` only when the call had one.

    Returns:
        ``[content]``, or ``[]`` when there are no results.

    Raises:
        UsageError: a result answers a call of another dialect, two results answer the same
            call, or content cannot be encoded as JSON.
    """
    parts: list[dict[str, Any]] = []
    for result in ordered_results(results, DIALECT):
        call = result.call
        function_response: dict[str, Any] = {
            "name": call.name if names is None else names.to_wire(call.name),
            "response": response_object(result),
        }
        if call.call_id is not None:
            function_response["id"] = call.call_id
        if result.media:
            # Multimodal function responses: the images and documents ride inside the
            # functionResponse as its own parts (inlineData or fileData).
            function_response["parts"] = [_media_part(part) for part in result.media]
        parts.append({"functionResponse": function_response})
    return [{"role": "user", "parts": parts}] if parts else []


def _declaration(tool: ToolSpec, name: str, schema_field: SchemaField) -> dict[str, Any]:
    declaration: dict[str, Any] = {"name": name, "description": tool.description}
    if schema_field == "parametersJsonSchema":
        declaration["parametersJsonSchema"] = {
            k: v for k, v in tool.parameters.items() if k != "$schema"
        }
        return declaration
    parameters = gemini_schema(tool.parameters)
    # "For function with no parameters, this can be left unset", and an OBJECT without
    # properties is refused, so a tool without arguments declares none.
    if parameters.get("properties"):
        declaration["parameters"] = parameters
    return declaration


def tool_declarations(
    tools: Sequence[ToolSpec],
    *,
    names: ToolNameMap | None = None,
    schema_field: SchemaField = "parameters",
    strict: bool = False,
) -> list[dict[str, Any]]:
    """The ``tools`` field: ``[{"functionDeclarations": [...]}]`` under wire names, or
    ``[]`` when there are no tools. ``strict`` is refused (see :func:`build_request`).

    Raises:
        UsageError: ``strict``, two specs share a name, an unknown ``schema_field``, or a
            schema that cannot be converted (see ``gemini_schema``).
    """
    if strict:
        raise UsageError(_NO_STRICT)
    if schema_field not in ("parameters", "parametersJsonSchema"):
        raise UsageError(f"unknown Gemini schema field {schema_field!r}")
    if not tools:
        return []
    if names is None:
        names = ToolNameMap(DIALECT, [t.name for t in tools])
    return [
        {
            "functionDeclarations": [
                _declaration(tool, names.to_wire(tool.name), schema_field) for tool in tools
            ]
        }
    ]


def _validated_mode(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with ``toolConfig.functionCallingConfig.mode`` set to ``VALIDATED``
    (the caller's other ``toolConfig`` fields kept, such as ``allowedFunctionNames``).

    Raises:
        UsageError: the caller's ``toolConfig`` names another mode.
    """
    config = options.get("toolConfig")
    calling = config.get("functionCallingConfig") if isinstance(config, dict) else None
    mode = calling.get("mode") if isinstance(calling, dict) else None
    if config is not None and not isinstance(config, dict):
        raise UsageError("toolConfig must be an object")
    if mode not in (None, _STRICT_MODE):
        raise UsageError(
            f"strict=True sets functionCallingConfig.mode {_STRICT_MODE}; toolConfig asks "
            f"for {mode!r}: pass one or the other"
        )
    calling = dict(calling) if isinstance(calling, dict) else {}
    calling["mode"] = _STRICT_MODE
    return {**options, "toolConfig": {**(config or {}), "functionCallingConfig": calling}}


def build_request(
    conversation: Conversation,
    tools: Sequence[ToolSpec] = (),
    *,
    model: str,
    stream: bool = True,
    schema_field: SchemaField = "parameters",
    strict: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """The JSON body of a Gemini ``generateContent`` / ``streamGenerateContent`` request.

    ``strict`` sets the request's ``toolConfig.functionCallingConfig.mode`` to
    ``VALIDATED``, Gemini's documented schema-adherence mode (its declarations have no
    strict flag); the arguments are validated by our registry either way. A
    ``toolConfig`` option that names another mode beside it is a ``UsageError``.

    Gemini carries the model and the choice of streaming in the URL, not the body
    (``models/{model}:streamGenerateContent?alt=sse``), which the HTTP client builds: so
    ``model`` and ``stream`` are accepted for a uniform signature and checked, and appear
    nowhere in the body. System prompts go to ``systemInstruction``; empty user messages
    are left out (the API refuses empty text). ``options`` (``generationConfig``,
    ``toolConfig``...) are added as they are.

    Raises:
        UsageError: ``strict`` with a ``toolConfig`` of another mode, an empty
            ``model``, an option clashing with a field set here, results of another
            dialect, duplicate tool names, or a schema that cannot be converted.
    """
    if strict and tools:
        options = _validated_mode(options)
    del stream
    if not model:
        raise UsageError("model must be a non-empty model name")
    names = ToolNameMap(DIALECT, [t.name for t in tools])
    contents: list[dict[str, Any]] = []
    for message in conversation:
        if isinstance(message, UserMessage):
            if message.text:
                contents.append({"role": "user", "parts": [{"text": message.text}]})
        elif isinstance(message, AssistantMessage):
            contents.extend(assistant_turn(message.text, message.calls, names=names))
        elif isinstance(message, ToolResultsMessage):
            contents.extend(format_results(message.results, names=names))
        elif not isinstance(message, SystemPrompt):
            raise UsageError(f"not a conversation message: {message!r}")
    body: dict[str, Any] = {"contents": contents}
    declarations = tool_declarations(tools, names=names, schema_field=schema_field)
    if declarations:
        body["tools"] = declarations
    system = system_text(conversation)
    if system is not None:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    return merge_options(body, options)
