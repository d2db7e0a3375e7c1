"""JSON Schema to Gemini's ``parameters`` subset."""

from __future__ import annotations

from typing import Any

import pytest

from sse_toolcalls.dialects.gemini.schema import gemini_schema
from sse_toolcalls.errors import UsageError


def test_types_are_gemini_enum_names_and_required_is_kept() -> None:
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name", "minLength": 1},
            "days": {"type": "integer", "minimum": 1, "maximum": 7, "format": "int32"},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
            "metric": {"type": "boolean", "default": True},
        },
        "required": ["city", "nope"],
        "additionalProperties": False,
    }
    assert gemini_schema(schema) == {
        "type": "OBJECT",
        "properties": {
            "city": {"type": "STRING", "description": "City name", "minLength": 1},
            "days": {"type": "INTEGER", "minimum": 1, "maximum": 7, "format": "int32"},
            "tags": {"type": "ARRAY", "items": {"type": "STRING"}, "maxItems": 3},
            "metric": {"type": "BOOLEAN", "default": True},
        },
        # Gemini refuses required names that are not properties.
        "required": ["city"],
    }


def test_refs_to_defs_are_inlined() -> None:
    schema = {
        "type": "object",
        "properties": {
            "home": {"$ref": "#/$defs/Address", "description": "Where they live"},
            "work": {"$ref": "#/definitions/Address"},
        },
        "$defs": {
            "Address": {
                "type": "object",
                "properties": {"street": {"type": "string"}},
                "required": ["street"],
            }
        },
        "definitions": {"Address": {"type": "object", "properties": {"zip": {"type": "string"}}}},
    }
    out = gemini_schema(schema)
    assert "$defs" not in out and "definitions" not in out
    assert out["properties"]["home"] == {
        "type": "OBJECT",
        "properties": {"street": {"type": "STRING"}},
        "required": ["street"],
        "description": "Where they live",
    }
    assert out["properties"]["work"] == {
        "type": "OBJECT",
        "properties": {"zip": {"type": "STRING"}},
    }


def test_recursive_ref_stops_with_its_type_and_a_note() -> None:
    schema = {
        "$ref": "#/$defs/Node",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            }
        },
    }
    out = gemini_schema(schema)
    leaf = out["properties"]["children"]["items"]
    assert leaf["type"] == "OBJECT"
    assert "recursive" in leaf["description"]
    assert "properties" not in leaf


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"anyOf": [{"type": "string"}, {"type": "null"}]}, {"type": "STRING", "nullable": True}),
        ({"type": ["integer", "null"]}, {"type": "INTEGER", "nullable": True}),
        (
            {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
            {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}], "nullable": True},
        ),
        (
            {
                "anyOf": [{"$ref": "#/$defs/U"}, {"type": "null"}],
                "$defs": {"U": {"type": "number"}},
            },
            {"type": "NUMBER", "nullable": True},
        ),
        ({"enum": ["c", "f", None]}, {"type": "STRING", "enum": ["c", "f"], "nullable": True}),
        ({"const": "fixed"}, {"type": "STRING", "enum": ["fixed"]}),
        (
            {"type": "integer", "enum": [1, 2, 3]},
            {"type": "INTEGER", "description": "(one of [1,2,3])"},
        ),
        (
            {"type": "string", "format": "email", "description": "Contact"},
            {"type": "STRING", "description": "Contact (format: email)"},
        ),
        ({"type": "string", "format": "date-time"}, {"type": "STRING", "format": "date-time"}),
        # A free-form object is sent without an (empty) properties map.
        ({"type": "object", "additionalProperties": {"type": "string"}}, {"type": "OBJECT"}),
        ({"type": "object", "properties": {}}, {"type": "OBJECT"}),
        (
            {"properties": {"a": {"type": "string"}}},
            {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}},
        ),
        ({"type": "number", "exclusiveMinimum": 0, "multipleOf": 2}, {"type": "NUMBER"}),
    ],
)
def test_keyword_translation(schema: dict[str, Any], expected: dict[str, Any]) -> None:
    assert gemini_schema(schema) == expected


def test_all_of_is_merged() -> None:
    schema = {
        "allOf": [
            {"$ref": "#/$defs/Base"},
            {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
        ],
        "$defs": {
            "Base": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
        },
    }
    assert gemini_schema(schema) == {
        "type": "OBJECT",
        "properties": {"a": {"type": "STRING"}, "b": {"type": "INTEGER"}},
        "required": ["a", "b"],
    }


def test_unresolvable_or_remote_refs_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="does not resolve"):
        gemini_schema({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}})
    with pytest.raises(UsageError, match="not local"):
        gemini_schema({"$ref": "https://example.com/schema.json"})
    with pytest.raises(UsageError):
        gemini_schema({"type": "object", "properties": {"a": False}})


def test_the_input_schema_is_not_modified() -> None:
    schema = {
        "type": "object",
        "properties": {"x": {"$ref": "#/$defs/X"}},
        "$defs": {"X": {"type": ["string", "null"]}},
    }
    before = repr(schema)
    gemini_schema(schema)
    assert repr(schema) == before
