"""JSON Schema to Gemini's ``Schema``, the OpenAPI 3.0 subset its ``parameters`` take.

Gemini API reference, ``Schema``: types in upper case, ``nullable`` instead of a null
member, ``enum`` for strings only, a few formats per type, no ``$ref``, no
``additionalProperties``. What the subset cannot say is dropped or, where the model
needs it, moved into the description; our own validation still enforces all of it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import UsageError
from .._messages import json_text

__all__ = ["gemini_schema"]

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
