"""Strict mode's own checks of the keywords it reads (sse_toolcalls/strict.py).

Strict mode is the core's (building a request is sans-I/O), so it checks what its walk
reads without the runtime's metaschema check: every malformed keyword it would read or
rewrite is our ``UsageError`` naming where, never a ``TypeError`` out of build_request.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from sse_toolcalls.errors import UsageError
from sse_toolcalls.strict import strict_schema


def _optional(sub: dict[str, Any]) -> dict[str, Any]:
    """``sub`` as an optional property (so that strict mode rewrites it to accept null)."""
    return {"type": "object", "properties": {"p": sub}}


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        (_optional({"type": "string", "enum": 3}), "'enum' is not a list at $.p"),
        (_optional({"type": 5}), "'type' is not a type name"),
        (_optional({"type": ["string", 1]}), "'type' is not a type name"),
        (_optional({"type": "array", "items": [1]}), "'items' is not a schema at $.p"),
        (_optional({"anyOf": [{"type": "string"}, 7]}), "'anyOf' is not a list of schemas"),
        ({"$defs": {"a": 1}, "type": "object"}, "'$defs' is not an object of schemas at $"),
        ({"type": "object", "properties": {"p": None}}, "'properties' is not an object"),
        ({"type": "object", "required": ["a", 1]}, "'required' is not a list of names"),
        (_optional({"$ref": "other.json#/a"}), "is not a reference inside the schema"),
        (_optional({"$dynamicRef": 3}), "is not a reference inside the schema"),
    ],
)
def test_a_malformed_keyword_is_our_error_naming_where(schema: Any, where: str) -> None:
    for all_required in (True, False):
        with pytest.raises(UsageError, match=re.escape(where)):
            strict_schema(schema, all_required=all_required)


def test_a_schema_that_is_not_an_object_is_our_error() -> None:
    with pytest.raises(UsageError, match="not list"):
        strict_schema([1])  # type: ignore[arg-type]  # the run-time check


def test_well_formed_references_and_boolean_schemas_pass() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/a"}, "b": False},
        "$defs": {"a": {"type": "array", "items": True}},
    }
    strict = strict_schema(schema)
    assert strict["properties"] == {
        "a": {"anyOf": [{"$ref": "#/$defs/a"}, {"type": "null"}]},
        "b": {"type": "null"},
    }
    assert strict["$defs"] == {"a": {"type": "array", "items": True}}
