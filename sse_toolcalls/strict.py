"""Strict tool schemas, where a provider offers them, and the way back.

OpenAI's strict mode (``"strict": true`` on a Chat or Responses function tool) makes the
model's arguments match the schema exactly, but only for schemas where "all fields must
be required" and every object has ``additionalProperties: false``; an optional field is
emulated "by adding null as a type option" (OpenAI, Structured Outputs, "All fields must
be required"). :func:`strict_schema` does that transformation; :func:`unnullify` maps
the model's ``null`` for such a field back to "absent" before our own validation, so the
handler sees what it would have seen without strict mode (its default, not ``None``).

Anthropic's strict tool use (``"strict": true`` on a tool, grammar-constrained sampling)
keeps optional fields optional but wants ``additionalProperties: false`` on every object:
:func:`strict_schema` with ``all_required=False``. Gemini documents no strict flag for
function declarations; asking for one there is a ``UsageError``.

Pure functions over JSON values; the schema given is never modified.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .errors import UsageError

MAX_STRICT_DEPTH = 64
"""How deep a schema (or an argument object) is walked, in nested schemas: OpenAI's own
limit for strict schemas is 10 levels of objects; 64 bounds the recursion on any input."""

_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAPS = ("$defs", "definitions")
_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")


def _nullable(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` that also accepts ``null``."""
    kind = schema.get("type")
    out = dict(schema)
    if isinstance(kind, str):
        if kind == "null":
            return out
        out["type"] = [kind, "null"]
    elif isinstance(kind, list):
        if "null" not in kind:
            out["type"] = [*kind, "null"]
    else:
        # No type to widen (an enum alone, a $ref, an anyOf): say it as an alternative.
        return {"anyOf": [out, {"type": "null"}]}
    if "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out


def strict_schema(schema: Mapping[str, Any], *, all_required: bool = True) -> dict[str, Any]:
    """The strict-mode form of a JSON Schema.

    Every object gets ``additionalProperties: false``; with ``all_required`` (OpenAI)
    every property is listed in ``required`` and those that were optional accept
    ``null`` as well. Nested schemas (properties, items, ``anyOf``/``oneOf``/``allOf``,
    ``$defs``) are transformed alike.

    Raises:
        UsageError: a keyword the transformation reads is malformed (``properties``
            not an object of schemas, ``required`` not a list of names, ``items``,
            ``anyOf``, ``$defs``... not schemas, ``enum`` not a list, ``type`` neither a
            name nor a list of names); a reference points outside the schema (strict
            mode sends the schema alone); an object allows properties beyond its own
            (``additionalProperties`` true or a schema, ``patternProperties``), which
            strict mode cannot express; or the schema nests deeper than
            ``MAX_STRICT_DEPTH``.
    """
    # The core's own checks of what the walk below reads, not the runtime's metaschema
    # check (jsonschema): building a request is sans-I/O and loads no schema library
    # (tests/core/test_fresh_interpreter.py). A tool added to a ToolRegistry was checked
    # whole when it was added; a spec built by hand reaches here unchecked, and a
    # malformed keyword must be our UsageError, not a TypeError out of build_request.
    if not isinstance(schema, Mapping):
        raise UsageError(f"strict schema: a schema is a JSON object, not {type(schema).__name__}")
    return _strict(schema, all_required, 0, "$")


def _refuse(path: str, what: str) -> UsageError:
    return UsageError(f"strict schema: {what} at {path}; declare this tool without strict")


def _is_schema(value: Any) -> bool:
    # JSON Schema's boolean schemas (true: any value, false: none) are schemas too.
    return isinstance(value, Mapping | bool)


def _schema_map(value: Any) -> bool:
    return isinstance(value, Mapping) and all(map(_is_schema, value.values()))


def _schema_list(value: Any) -> bool:
    return isinstance(value, list) and all(map(_is_schema, value))


def _names_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(name, str) for name in value)


def _type_value(value: Any) -> bool:
    return isinstance(value, str) or _names_list(value)


def _local_ref(value: Any) -> bool:
    # Strict mode sends the schema alone: a reference must resolve inside it (OpenAI's
    # strict schemas allow "#" and "#/$defs/..." only).
    return isinstance(value, str) and value.startswith("#")


_SHAPES: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("properties", _schema_map, "an object of schemas"),
    ("required", _names_list, "a list of names"),
    ("items", _is_schema, "a schema"),
    *((key, _schema_list, "a list of schemas") for key in _SUBSCHEMA_LISTS),
    *((key, _schema_map, "an object of schemas") for key in _SUBSCHEMA_MAPS),
    ("type", _type_value, "a type name or a list of them"),
    ("enum", lambda value: isinstance(value, list), "a list"),
    *((key, _local_ref, "a reference inside the schema (#...)") for key in _REFERENCES),
)
"""Each keyword :func:`_strict` reads or rewrites, what its value must be, and that said
in words: a table, so a keyword the walk starts reading is one row here."""


def _check_keywords(schema: Mapping[str, Any], path: str) -> None:
    """Refuse a malformed keyword among those :func:`_strict` reads or rewrites."""
    for key, fits, shape in _SHAPES:
        if key in schema and not fits(schema[key]):
            raise _refuse(path, f"{key!r} is not {shape}")


def _strict(schema: Mapping[str, Any], all_required: bool, depth: int, path: str) -> dict[str, Any]:
    if depth > MAX_STRICT_DEPTH:
        raise UsageError(f"strict schema: nested deeper than {MAX_STRICT_DEPTH} at {path}")
    _check_keywords(schema, path)
    out: dict[str, Any] = dict(schema)
    properties = schema.get("properties")
    is_object = schema.get("type") == "object" or isinstance(properties, Mapping)
    if is_object:
        extra = schema.get("additionalProperties", False)
        if extra is not False or schema.get("patternProperties"):
            raise UsageError(
                f"strict schema: the object at {path} allows properties beyond its own "
                "(additionalProperties, patternProperties), which strict mode cannot "
                "express; declare this "
                "tool without strict"
            )
        out["additionalProperties"] = False
        props: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
        required = _names(schema.get("required"))
        new_props: dict[str, Any] = {}
        for name, sub in props.items():
            if isinstance(sub, bool):
                # JSON Schema's boolean schemas: true (any value) is what strict mode
                # cannot say; false (no value) stays, and as optional means "null only".
                if sub:
                    raise UsageError(
                        f"strict schema: the property at {path}.{name} accepts any value "
                        "(true), which strict mode cannot express; declare this tool "
                        "without strict"
                    )
                new_props[name] = (
                    {"type": "null"} if all_required and name not in required else False
                )
                continue
            child = _strict(sub, all_required, depth + 1, f"{path}.{name}")
            if all_required and name not in required:
                child = _nullable(child)
            new_props[name] = child
        out["properties"] = new_props
        if all_required:
            out["required"] = list(props)
    items = schema.get("items")
    if isinstance(items, Mapping):
        out["items"] = _strict(items, all_required, depth + 1, f"{path}[]")
    for key in _SUBSCHEMA_LISTS:
        subs = schema.get(key)
        if isinstance(subs, list):
            out[key] = [
                _strict(s, all_required, depth + 1, f"{path}.{key}[{i}]")
                if isinstance(s, Mapping)
                else s
                for i, s in enumerate(subs)
            ]
    for key in _SUBSCHEMA_MAPS:
        defs = schema.get(key)
        if isinstance(defs, Mapping):
            out[key] = {
                name: _strict(s, all_required, depth + 1, f"{path}.{key}.{name}")
                if isinstance(s, Mapping)
                else s
                for name, s in defs.items()
            }
    return out


def _accepts_null(schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_accepts_null(s) for key in ("anyOf", "oneOf") for s in schema.get(key) or ())


def unnullify(arguments: Any, schema: Mapping[str, Any]) -> Any:
    """The arguments a strict-mode model sent, with every ``null`` that stands for an
    absent optional property removed, at every level of nested objects and arrays.

    "Optional" is read from ``schema``, the tool's own (non-strict) schema: a property it
    does not require. An optional property whose own schema already accepts ``null`` keeps
    its ``null`` (the model may have meant it). Values are returned unchanged where the
    schema says nothing (a ``$ref``, an ``anyOf``): our validation reports them as usual.
    """
    return _unnull(arguments, schema, 0)


def _names(required: Any) -> set[str]:
    """The names a ``required`` lists (nothing for a malformed one: ``unnullify`` takes
    any schema and never raises)."""
    return {n for n in required if isinstance(n, str)} if isinstance(required, list) else set()


def _unnull(value: Any, schema: Any, depth: int) -> Any:
    if depth > MAX_STRICT_DEPTH or not isinstance(schema, Mapping):
        return value
    if isinstance(value, dict):
        properties = schema.get("properties")
        if not isinstance(properties, Mapping):
            return value
        required = _names(schema.get("required"))
        out: dict[str, Any] = {}
        for name, item in value.items():
            sub = properties.get(name)
            if item is None and name not in required and not _accepts_null(sub):
                continue
            out[name] = _unnull(item, sub, depth + 1)
        return out
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            return [_unnull(item, items, depth + 1) for item in value]
    return value


__all__ = ["MAX_STRICT_DEPTH", "strict_schema", "unnullify"]
