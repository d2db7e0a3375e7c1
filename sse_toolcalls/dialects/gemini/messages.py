"""Gemini (generateContent): model turns, function responses, declarations, request body.

Wire shapes (Gemini API reference, function calling guide):

- model turn: ``{"role": "model", "parts": [{"text"}, {"functionCall": {"name", "args",
  "id"?}, "thoughtSignature"?}, ...]}``: the signature goes back on the part it came
  on, exactly as received (thinking models refuse a replayed call without it);
- results: ONE user content with one ``functionResponse`` part per call, in call order
  (one content per response is refused: "number of function response parts should be
  equal to number of function call parts"); ``{"name", "response": {...}, "id"?}``: the
  ``id`` only when the call had one (some Gemini endpoints refuse ids they did not send);
- tools: ``[{"functionDeclarations": [{"name", "description", "parameters"}]}]``.

``response`` must be a JSON object. Following the documented convention ("Use 'output' key
to specify function output and 'error' key to specify error details"), an object result
is sent as it is, any other result as ``{"output": ...}`` and an error as
``{"error": ...}``.

Schemas. Gemini takes either ``parameters`` (its OpenAPI 3.0 ``Schema`` subset) or
``parametersJsonSchema`` (JSON Schema; not in every API version). We send ``parameters``
by default, because every Gemini endpoint (v1, v1beta, Vertex AI) accepts it, and convert
the registry's JSON Schema with ``gemini_schema``: ``$ref`` inlined from ``$defs``,
``anyOf``/type lists with ``null`` turned into ``nullable``, ``additionalProperties`` and
other keywords the subset lacks dropped (our own validation still enforces them).
``schema_field="parametersJsonSchema"`` sends the schema unconverted instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from ...calls import ToolCall, ToolResult, ToolSpec
from ...conversation import (
    AssistantMessage,
    Conversation,
    SystemPrompt,
    ToolResultsMessage,
    UserMessage,
    error_object,
    json_text,
    merge_options,
    ordered_results,
    system_text,
)
from ...errors import UsageError
from ...naming import ToolNameMap

__all__ = [
    "assistant_turn",
    "build_request",
    "format_results",
    "gemini_schema",
    "response_object",
    "tool_declarations",
]

DIALECT = "gemini"

SchemaField = Literal["parameters", "parametersJsonSchema"]


def _index(call: ToolCall) -> int:
    return call.index


def assistant_turn(
    text: str, calls: Sequence[ToolCall], *, names: ToolNameMap | None = None
) -> list[dict[str, Any]]:
    """The ``model`` content that asked for ``calls``: a text part (when there is text),
    then one ``functionCall`` part per call in call order, with ``id`` only when the call
    had one and its ``thoughtSignature`` exactly as received.

    Returns:
        A one-element list holding the content, or ``[]`` for a turn with neither text nor
        calls (the API refuses a content without parts).
    """
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
        parts.append({"functionResponse": function_response})
    return [{"role": "user", "parts": parts}] if parts else []


# --------------------------------------------------------------------------------------
# JSON Schema -> Gemini ``Schema`` (the OpenAPI 3.0 subset of ``parameters``).

_TYPES = {
    "string": "STRING",
    "number": "NUMBER",
    "integer": "INTEGER",
    "boolean": "BOOLEAN",
    "array": "ARRAY",
    "object": "OBJECT",
}
_COPIED = (
    "title",
    "description",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "default",
)
"""Keywords the ``Schema`` subset shares with JSON Schema, copied as they are."""
_FORMATS = {
    "STRING": {"enum", "date-time"},
    "INTEGER": {"int32", "int64"},
    "NUMBER": {"float", "double"},
}
"""The only formats the subset documents per type; others are moved to the description."""


def _is_null_schema(node: Any) -> bool:
    return isinstance(node, Mapping) and (
        node.get("type") == "null"
        or ("const" in node and node["const"] is None)
        or node.get("enum") == [None]
    )


def _note(out: dict[str, Any], text: str) -> None:
    """Append ``text`` to the description, so a constraint the subset cannot express still
    reaches the model."""
    description = out.get("description")
    out["description"] = f"{description} ({text})" if description else f"({text})"


class _Converter:
    """One conversion: the root (for ``$ref``) and the refs being expanded (for cycles)."""

    def __init__(self, root: Mapping[str, Any]) -> None:
        self._root = root
        self._expanding: list[str] = []

    def _resolve(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise UsageError(f"schema $ref {ref!r} is not local; inline it before declaring")
        node: Any = self._root
        for raw in ref[1:].split("/")[1:] if ref != "#" else []:
            key = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                raise UsageError(f"schema $ref {ref!r} does not resolve")
        return node

    def convert(self, node: Any) -> dict[str, Any]:
        if node is True or node is None:
            return {}
        if node is False or not isinstance(node, Mapping):
            raise UsageError(f"cannot express schema {node!r} for Gemini")
        if "$ref" in node:
            return self._convert_ref(node)
        if "allOf" in node:
            return self.convert(self._merge_all_of(node))
        for key in ("anyOf", "oneOf"):
            if key in node:
                return self._convert_union(node, key)
        return self._convert_plain(node)

    def _convert_ref(self, node: Mapping[str, Any]) -> dict[str, Any]:
        ref = node["$ref"]
        target = self._resolve(ref)
        if ref in self._expanding:
            # A recursive schema cannot be inlined; the subset has no references. The
            # recursion point keeps its type and says what it stands for.
            out: dict[str, Any] = {}
            kind = target.get("type") if isinstance(target, Mapping) else None
            if isinstance(kind, str) and kind in _TYPES:
                out["type"] = _TYPES[kind]
            _note(out, f"recursive: same shape as {ref}")
            return out
        self._expanding.append(ref)
        try:
            out = self.convert(target)
        finally:
            self._expanding.pop()
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if siblings:
            out.update(self._convert_plain(siblings, typed=False))
        return out

    def _merge_all_of(self, node: Mapping[str, Any]) -> dict[str, Any]:
        merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
        for item in node["allOf"]:
            sub, seen = item, set()
            # Follow references (their sibling keywords win); a cycle of bare references
            # stops at the first repeat and is left out.
            while isinstance(sub, Mapping) and "$ref" in sub and sub["$ref"] not in seen:
                seen.add(sub["$ref"])
                target = self._resolve(sub["$ref"])
                if not isinstance(target, Mapping):
                    break
                sub = {**target, **{k: v for k, v in sub.items() if k != "$ref"}}
            if not isinstance(sub, Mapping) or "$ref" in sub:
                continue
            for key, value in sub.items():
                if key == "properties":
                    merged["properties"] = {**merged.get("properties", {}), **value}
                elif key == "required":
                    merged["required"] = [*merged.get("required", []), *value]
                else:
                    merged.setdefault(key, value)
        return merged

    def _convert_union(self, node: Mapping[str, Any], key: str) -> dict[str, Any]:
        options = node[key]
        rest = {k: v for k, v in node.items() if k != key}
        nullable = any(_is_null_schema(o) for o in options)
        kept = [o for o in options if not _is_null_schema(o)]
        if len(kept) == 1:
            out = self.convert(kept[0])
        elif kept:
            out = {"anyOf": [self.convert(o) for o in kept]}
        else:
            out = {}
        if nullable:
            out["nullable"] = True
        if rest:
            out.update(self._convert_plain(rest, typed="type" in rest))
        return out

    def _convert_plain(self, node: Mapping[str, Any], *, typed: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {}
        nullable = False
        kind = node.get("type") if typed else None
        if isinstance(kind, list):
            nullable = "null" in kind
            kinds = [k for k in kind if k != "null"]
            kind = kinds[0] if len(kinds) == 1 else None
            if len(kinds) > 1:
                out["anyOf"] = [{"type": _TYPES[k]} for k in kinds if k in _TYPES]
        if kind is None and typed:
            if "properties" in node:
                kind = "object"
            elif "items" in node:
                kind = "array"
        if kind == "null":
            nullable, kind = True, None
        gemini_type = _TYPES.get(kind) if isinstance(kind, str) else None
        if gemini_type is not None:
            out["type"] = gemini_type
        for key in _COPIED:
            if key in node:
                out[key] = node[key]
        self._enum(node, out)
        fmt = node.get("format")
        if isinstance(fmt, str):
            if gemini_type is not None and fmt in _FORMATS.get(gemini_type, ()):
                out["format"] = fmt
            else:
                _note(out, f"format: {fmt}")
        if gemini_type == "OBJECT":
            properties = node.get("properties") or {}
            if properties:
                out["properties"] = {k: self.convert(v) for k, v in properties.items()}
                required = [r for r in node.get("required", ()) if r in properties]
                if required:
                    out["required"] = required
        elif gemini_type == "ARRAY" and isinstance(node.get("items"), Mapping | bool):
            out["items"] = self.convert(node["items"])
        if nullable:
            out["nullable"] = True
        return out

    @staticmethod
    def _enum(node: Mapping[str, Any], out: dict[str, Any]) -> None:
        if "const" in node:
            values = [node["const"]]
        elif isinstance(node.get("enum"), list):
            values = list(node["enum"])
        else:
            return
        if None in values:
            out["nullable"] = True
            values = [v for v in values if v is not None]
        if values and all(isinstance(v, str) for v in values):
            # The subset's enum is for strings only.
            out["type"] = "STRING"
            out["enum"] = values
        elif values:
            _note(out, f"one of {json_text(values)}")


def gemini_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` (JSON Schema) converted to the ``Schema`` subset of Gemini's ``parameters``.

    ``$ref`` to the same document is inlined (a recursive reference keeps only its type
    and a note); ``allOf`` is merged; ``anyOf``/``oneOf`` and type lists lose their
    ``null`` member to ``nullable``; non-string ``enum``/``const`` values and unsupported
    formats become a note in ``description``; an object without properties is sent
    without ``properties`` (Gemini refuses an empty one); everything else the subset lacks
    (``additionalProperties``, ``exclusiveMinimum``, ``$defs``...) is dropped.

    Raises:
        UsageError: a ``$ref`` is not local or does not resolve, or a (sub)schema is
            ``false`` or not an object.
    """
    return _Converter(schema).convert(schema)


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
) -> list[dict[str, Any]]:
    """The ``tools`` field: ``[{"functionDeclarations": [...]}]`` under wire names, or
    ``[]`` when there are no tools.

    Raises:
        UsageError: two specs share a name, an unknown ``schema_field``, or a schema that
            cannot be converted (see ``gemini_schema``).
    """
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


def build_request(
    conversation: Conversation,
    tools: Sequence[ToolSpec] = (),
    *,
    model: str,
    stream: bool = True,
    schema_field: SchemaField = "parameters",
    **options: Any,
) -> dict[str, Any]:
    """The JSON body of a Gemini ``generateContent`` / ``streamGenerateContent`` request.

    Gemini carries the model and the choice of streaming in the URL, not the body
    (``models/{model}:streamGenerateContent?alt=sse``), which the HTTP client builds: so
    ``model`` and ``stream`` are accepted for a uniform signature and checked, and appear
    nowhere in the body. System prompts go to ``systemInstruction``; empty user messages
    are left out (the API refuses empty text). ``options`` (``generationConfig``,
    ``toolConfig``...) are added as they are.

    Raises:
        UsageError: an empty ``model``, an option clashing with a field set here, results
            of another dialect, duplicate tool names, or a schema that cannot be converted.
    """
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
