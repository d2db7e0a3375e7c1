"""Work budgets for a tool's schema (issue 29, examples 9 and 14): patterns on RE2, in
every place a schema holds one; references that stay inside the schema and resolve;
no reference cycle; size and depth limits; and, over arbitrary schemas and arguments,
nothing but our own ``UsageError`` out of registration, validation and strict mode.

The hang guards (``timeout``) only stop a test that would otherwise run for hours on a
backtracking engine; no assertion is about time."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sse_toolcalls import Dialect
from sse_toolcalls.calls import ToolCall, ToolSpec
from sse_toolcalls.conversation import Conversation, UserMessage
from sse_toolcalls.errors import UsageError
from sse_toolcalls.messages import build_request
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.runtime.tools.schema_guard import (
    MAX_PATTERN_CHARS,
    MAX_SCHEMA_BYTES,
    MAX_SCHEMA_DEPTH,
    MAX_SCHEMA_PATTERNS,
    check_schema_budget,
    first_pattern,
    pattern_search,
)
from sse_toolcalls.runtime.tools.validation import ArgumentValidator
from sse_toolcalls.strict import strict_schema, unnullify

EVIL = "^(a+)+$"
"""Exponential on a backtracking engine: 2**n steps for ``"a" * n + "!"``."""
EVIL_TEXT = "a" * 64 + "!"


def problems(schema: dict[str, Any], args: dict[str, Any]) -> list[tuple[str, str]]:
    _, _, found = ArgumentValidator(schema).validate(args)
    return [(p.path, p.kind) for p in found]


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("schema", "args", "expected"),
    [
        (
            {"type": "object", "properties": {"s": {"type": "string", "pattern": EVIL}}},
            {"s": EVIL_TEXT},
            [("$.s", "pattern_mismatch")],
        ),
        (
            {
                "type": "object",
                "patternProperties": {EVIL: {"type": "integer"}},
                "additionalProperties": False,
            },
            {EVIL_TEXT: 1},
            [(f"$[{EVIL_TEXT!r}]".replace("'", '"'), "unexpected_field")],
        ),
        (
            {"type": "object", "patternProperties": {EVIL: {"type": "integer"}}},
            {"a" * 64: "x"},
            [("$." + "a" * 64, "wrong_type")],
        ),
        (
            {"type": "object", "propertyNames": {"pattern": EVIL}},
            {EVIL_TEXT: 1},
            [("$", "pattern_mismatch")],
        ),
        (
            {
                "type": "object",
                "properties": {"s": {"$ref": "#/$defs/evil"}},
                "$defs": {"evil": {"type": "string", "pattern": EVIL}},
            },
            {"s": EVIL_TEXT},
            [("$.s", "pattern_mismatch")],
        ),
        (
            {
                "type": "object",
                "properties": {"s": {"type": "object", "additionalProperties": {"pattern": EVIL}}},
            },
            {"s": {"k": EVIL_TEXT}},
            [("$.s.k", "pattern_mismatch")],
        ),
        (
            {
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {"s": {"pattern": EVIL}},
                "additionalProperties": False,
                "patternProperties": {EVIL: {}},
            },
            {"s": EVIL_TEXT, EVIL_TEXT: 1},
            [
                ("$.s", "pattern_mismatch"),
                (f"$[{EVIL_TEXT!r}]".replace("'", '"'), "unexpected_field"),
            ],
        ),
    ],
    ids=[
        "pattern",
        "patternProperties",
        "patternProperties-match",
        "propertyNames",
        "$defs",
        "nested",
        "draft-07",
    ],
)
def test_a_catastrophic_pattern_is_matched_in_linear_time_wherever_it_sits(
    schema: dict[str, Any], args: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    assert problems(schema, args) == expected


def test_patterns_keep_json_schemas_search_semantics() -> None:
    # Unanchored unless the pattern anchors itself, as ECMA-262's search.
    assert pattern_search("b", "abc") and not pattern_search("^b", "abc")
    assert pattern_search("^[a-z]+$", "été") is False and pattern_search(r"^\w+$", "abc")
    assert pattern_search("é", "caté")
    # Characters, not bytes, even outside the BMP; a lone surrogate (JSON allows
    # "\ud800") is matched, not an encoding error.
    assert pattern_search("^.$", "é") and pattern_search("^[^a]$", "\U0001f600")
    assert pattern_search("^a", "a\ud800") and not pattern_search("^b", "\ud800")
    assert problems({"properties": {"s": {"pattern": "^x"}}}, {"s": "\udfff"}) == [
        ("$.s", "pattern_mismatch")
    ]
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}}
    assert problems(schema, {"code": "EUR"}) == []
    assert problems(schema, {"code": "EURO"}) == [("$.code", "pattern_mismatch")]


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ({"type": "string", "pattern": "(a)\\1"}, "$.pattern"),
        ({"type": "string", "pattern": "foo(?=bar)"}, "$.pattern"),
        ({"type": "string", "pattern": "(?<!x)y"}, "$.pattern"),
        ({"type": "object", "patternProperties": {"(?!secret)": {}}}, "$.patternProperties"),
        ({"propertyNames": {"pattern": "(x)\\1"}}, "$.propertyNames.pattern"),
        ({"$defs": {"d": {"pattern": "(?=a)"}}}, "$.$defs.d.pattern"),
        ({"type": "string", "pattern": "a" * (MAX_PATTERN_CHARS + 1)}, "$.pattern"),
    ],
)
def test_a_pattern_re2_cannot_run_is_refused_when_the_tool_is_added(
    schema: dict[str, Any], where: str
) -> None:
    wrapped = {"type": "object", "properties": {"x": schema}}
    at = re.escape("$.properties.x" + where[1:])
    with pytest.raises(UsageError, match=f"pattern at {at}"):
        ArgumentValidator(wrapped)


def test_data_that_looks_like_a_pattern_is_not_one() -> None:
    schema = {
        "type": "object",
        "properties": {"x": {"default": {"pattern": "(a)\\1"}, "enum": [{"pattern": "(?=a)"}]}},
    }
    ArgumentValidator(schema)


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("https://example.com/schema.json", "refers outside itself"),
        ("other.json#/x", "refers outside itself"),
        ("file:///etc/passwd", "refers outside itself"),
        ("#/$defs/missing", "does not resolve"),
        ("#nowhere", "does not resolve"),
    ],
)
def test_a_reference_outside_the_schema_or_unresolved_is_refused_when_added(
    ref: str, message: str
) -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": ref}}, "$defs": {"d": {}}}
    with pytest.raises(UsageError, match=message):
        ArgumentValidator(schema)
    registry = ToolRegistry()
    with pytest.raises(UsageError, match=message):
        registry.add_schema_tool("t", schema, lambda **kwargs: None, description="d")
    assert registry.names() == []


def test_a_remote_reference_never_reaches_validation() -> None:
    # Before: accepted, then the first call raised jsonschema's _WrappedReferencingError.
    registry = ToolRegistry()
    schema = {"type": "object", "properties": {"a": {"$ref": "https://example.com/x.json"}}}
    with pytest.raises(UsageError):
        registry.add_schema_tool("t", schema, lambda **kwargs: None, description="d")


def test_local_references_anchors_and_recursive_trees_are_accepted() -> None:
    tree = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#"}},
            "tag": {"$ref": "#tag"},
        },
        "$defs": {"t": {"$anchor": "tag", "type": "string"}},
    }
    assert problems(tree, {"name": "a", "children": [{"name": "b", "children": []}]}) == []
    assert problems(tree, {"children": [{"name": 1}]}) == [("$.children[0].name", "wrong_type")]
    assert problems(tree, {"tag": 5}) == [("$.tag", "wrong_type")]


@pytest.mark.parametrize(
    "schema",
    [
        {
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
            "properties": {"x": {"$ref": "#/$defs/a"}},
        },
        {"type": "object", "allOf": [{"$ref": "#"}]},
        {"type": "object", "anyOf": [{"not": {"$ref": "#"}}]},
        {"$defs": {"a": {"if": {"$ref": "#/$defs/a"}}}, "properties": {"x": {"$ref": "#/$defs/a"}}},
    ],
)
def test_a_reference_cycle_on_one_value_is_refused_not_a_recursion_error(
    schema: dict[str, Any],
) -> None:
    # Before: accepted, and the first call raised RecursionError.
    with pytest.raises(UsageError, match="cycle"):
        ArgumentValidator(schema)


def test_size_and_depth_are_bounded() -> None:
    huge_enum = {"type": "object", "properties": {"x": {"enum": list(range(100_000))}}}
    with pytest.raises(UsageError, match=f"{MAX_SCHEMA_BYTES}-byte limit"):
        ArgumentValidator(huge_enum)
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(5_000):
        deep = {"type": "array", "items": deep}
    with pytest.raises(UsageError, match=f"deeper than {MAX_SCHEMA_DEPTH}"):
        ArgumentValidator({"type": "object", "properties": {"x": deep}})
    with pytest.raises(UsageError, match="not a JSON value"):
        ArgumentValidator({"type": "object", "default": object()})


def test_unevaluated_properties_beside_pattern_properties_is_refused() -> None:
    schema = {"type": "object", "patternProperties": {"^a": {}}, "unevaluatedProperties": False}
    with pytest.raises(UsageError, match="unevaluatedProperties"):
        ArgumentValidator(schema)


def test_a_format_regex_value_is_checked_on_re2_without_running_it() -> None:
    schema = {"type": "object", "properties": {"r": {"type": "string", "format": "regex"}}}
    assert problems(schema, {"r": EVIL}) == []
    for bad in ("(", "(?=a)", "(a)\\1", "[" * 10_000, "a" * (MAX_PATTERN_CHARS + 1)):
        assert problems(schema, {"r": bad}) == [("$.r", "bad_format")], bad[:20]
    # Before: RecursionError out of validate() (Python's re parses groups recursively).
    assert problems(schema, {"r": "(" * 5_000 + ")" * 5_000}) in ([], [("$.r", "bad_format")])


# ----------------------------------------------------------------------------------------
# Example 14: strict mode over any spec, and nothing foreign out of a public function.

CONVERSATION: Conversation = [UserMessage(text="hi")]


@pytest.mark.parametrize("dialect", ["openai_chat", "openai_responses", "anthropic"])
@pytest.mark.parametrize(
    "parameters",
    [
        {"type": "object", "properties": {"o": {"type": "object", "additionalProperties": {}}}},
        {"type": "object", "properties": {"o": {"type": "object", "patternProperties": {"x": {}}}}},
        {"type": "object", "properties": {"o": 1}},
        {"type": "object", "properties": {"o": {"type": "string"}}, "required": 5},
        {"type": "object", "properties": {"o": {"type": "string"}}, "required": [[1]]},
        {"type": "object", "properties": [1, 2]},
        {"type": "object", "properties": {"o": {"$ref": "https://example.com/o.json"}}},
    ],
)
def test_strict_requests_refuse_what_strict_cannot_express_with_our_error(
    dialect: Any, parameters: dict[str, Any]
) -> None:
    # Before: TypeError, AttributeError from the walk of a malformed schema.
    spec = ToolSpec(name="t", description="d", parameters=parameters)
    with pytest.raises(UsageError):
        build_request(dialect, CONVERSATION, [spec], model="m", strict=True)


def test_a_function_tools_open_dict_in_strict_mode_is_our_error() -> None:
    registry = ToolRegistry()

    @registry.register
    def tag(labels: dict[str, str], extra: dict) -> str:  # type: ignore[type-arg]
        """Tag something."""
        return "ok"

    dialects: tuple[Dialect, ...] = ("openai_chat", "openai_responses", "anthropic")
    for dialect in dialects:
        with pytest.raises(UsageError, match="additionalProperties"):
            build_request(dialect, CONVERSATION, registry.specs(), model="m", strict=True)


_KEYWORDS = st.sampled_from(
    [
        "type", "properties", "items", "required", "pattern", "patternProperties",
        "additionalProperties", "$ref", "$defs", "enum", "const", "allOf", "anyOf", "oneOf",
        "not", "if", "then", "else", "propertyNames", "minLength", "format", "$id",
        "$anchor", "$dynamicRef", "unevaluatedProperties", "prefixItems", "dependentSchemas",
    ]
)  # fmt: skip
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.sampled_from(["object", "string", "#", "#/$defs/a", "(a+)+$", "(?=x)", "a", "http://x"])
)
_SCHEMAS = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(_KEYWORDS | st.sampled_from(["a", "b"]), inner, max_size=4)
    ),
    max_leaves=12,
)
_ARGS = st.dictionaries(
    st.sampled_from(["a", "b", "aaaa!"]),
    st.recursive(
        st.none()
        | st.integers()
        | st.text(max_size=6)
        | st.text(st.characters(categories=["Cs", "Ll"]), max_size=4),
        lambda inner: (
            st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner, max_size=2)
        ),
        max_leaves=4,
    ),
    max_size=3,
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.dictionaries(_KEYWORDS, _SCHEMAS, max_size=5), _ARGS)
def test_nothing_but_our_error_leaves_registration_validation_or_strict_mode(
    schema: dict[str, Any], args: dict[str, Any]
) -> None:
    try:
        validator = ArgumentValidator(schema)
    except UsageError:
        pass
    else:
        try:
            validator.validate(args)
        except UsageError:
            pass
    for all_required in (True, False):
        try:
            strict_schema(schema, all_required=all_required)
        except UsageError:
            pass
    unnullify(args, schema)
    registry = ToolRegistry()
    try:
        registry.add_schema_tool("t", schema, lambda **kwargs: None, description="d")
    except UsageError:
        return
    registry.validate(ToolCall(name="t", args=args, provider="openai_chat", call_id="c", index=0))


def _nested(levels: int) -> dict[str, Any]:
    """A schema of ``levels`` levels of JSON nesting (the schema object is level 1)."""
    schema: dict[str, Any] = {}
    for _ in range(levels - 1):
        schema = {"not": schema}
    return schema


def test_each_schema_limit_at_and_just_past() -> None:
    check_schema_budget(_nested(MAX_SCHEMA_DEPTH))
    with pytest.raises(UsageError, match="deeper"):
        check_schema_budget(_nested(MAX_SCHEMA_DEPTH + 1))
    padding = MAX_SCHEMA_BYTES - len('{"description":""}')
    check_schema_budget({"description": "x" * padding})
    with pytest.raises(UsageError, match="byte limit"):
        check_schema_budget({"description": "x" * (padding + 1)})
    fits = {"type": "object", "properties": {"s": {"pattern": "a" * MAX_PATTERN_CHARS}}}
    assert problems(fits, {"s": "a" * MAX_PATTERN_CHARS}) == []
    with pytest.raises(UsageError, match="character limit"):
        ArgumentValidator({"properties": {"s": {"pattern": "a" * (MAX_PATTERN_CHARS + 1)}}})


_SAFE_PATTERNS = ["^a", "b$", "^[0-9]+$", "x", "^$", "é"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "ab", "1", "x", "é"]), max_size=3, unique=True),
    st.lists(st.sampled_from(_SAFE_PATTERNS), max_size=3, unique=True),
    st.sampled_from([False, True, {"type": "integer"}, None]),
    st.sampled_from([None, "^a", "[0-9]"]),
    st.dictionaries(
        st.text(alphabet="ab1xé9", max_size=3), st.integers() | st.text(max_size=2), max_size=5
    ),
)
def test_the_re2_keywords_agree_with_jsonschemas_own(
    names: list[str],
    patterns: list[str],
    extra: Any,
    pattern: str | None,
    instance: dict[str, Any],
) -> None:
    """A differential: on patterns both engines read alike, our RE2 keywords give the
    errors (path and message) of jsonschema's stock ones."""
    from jsonschema import Draft202012Validator

    schema: dict[str, Any] = {
        "type": "object",
        "properties": {name: {"type": "string"} for name in names},
        "patternProperties": {p: {"type": "integer"} for p in patterns},
        "propertyNames": {"pattern": pattern} if pattern else {},
    }
    if extra is not None:
        schema["additionalProperties"] = extra
    ours = ArgumentValidator(schema)._validator

    def seen(validator: Any) -> list[tuple[str, str]]:
        return sorted((e.json_path, e.message) for e in validator.iter_errors(instance))

    assert seen(ours) == seen(Draft202012Validator(schema))


def test_what_the_walk_refuses_beyond_patterns() -> None:
    with pytest.raises(UsageError, match="JSON object, not list"):
        ArgumentValidator([{"type": "object"}])  # type: ignore[arg-type]
    # A nested $id moves the base: "#" there is that subschema, still inside.
    nested = {
        "type": "object",
        "properties": {
            "n": {
                "$id": "https://peer.example/n",
                "type": "integer",
                "not": {"$ref": "#/$defs/s"},
                "$defs": {"s": {"type": "string"}},
            }
        },
    }
    assert problems(nested, {"n": 1.5}) == [("$.n", "wrong_type")]
    assert problems(nested, {"n": "x"}) == [("$.n", "wrong_type"), ("$.n", "constraint")]
    assert first_pattern({"properties": {"a": {"patternProperties": {"x": {}}}}}) == (
        "$.properties.a.patternProperties"
    )
    assert first_pattern({"properties": {"pattern": {"type": "string"}}}) is None


def test_the_count_of_patterns_at_and_just_past_its_limit() -> None:
    def schema(count: int) -> dict[str, Any]:
        keys = {f"^k{n}$": {"type": "integer"} for n in range(count - 1)}
        return {
            "type": "object",
            "patternProperties": keys,
            "properties": {"s": {"type": "string", "pattern": "^s"}},
        }

    assert problems(schema(MAX_SCHEMA_PATTERNS), {"k3": "x"}) == [("$.k3", "wrong_type")]
    with pytest.raises(UsageError, match=f"more than {MAX_SCHEMA_PATTERNS} patterns"):
        ArgumentValidator(schema(MAX_SCHEMA_PATTERNS + 1))
