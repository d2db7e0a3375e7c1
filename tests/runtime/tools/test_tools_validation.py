"""Validation of arguments: every problem kind with its path, formats, and coercion."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.weather import INVALID, SCHEMA, VALID
from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime.tools import ArgumentValidator, Problem, coerce_string
from sse_toolcalls.runtime.tools.validation import (
    _READERS,
    MAX_MESSAGE_CHARS,
    MAX_REPORTED_PROBLEMS,
    MAX_VALIDATED_ARGUMENTS_DEPTH,
    path_text,
    too_deep,
)

# The benchmark's weather schema (one definition), with a few more kinds of field.
WEATHER: dict[str, Any] = {
    **SCHEMA,
    "properties": {
        **SCHEMA["properties"],
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        "verbose": {"type": "boolean"},
        "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "ratio": {"type": "number"},
    },
}


def test_the_benchmarks_invalid_call_has_its_five_problems() -> None:
    _, _, found = ArgumentValidator(SCHEMA).validate(INVALID)
    assert {p.path: p.kind for p in found} == {
        "$.unit": "not_in_enum",
        "$.days": "wrong_type",
        "$.location.lat": "missing_field",
        "$.start": "bad_format",
        "$.extra": "unexpected_field",
    }
    assert ArgumentValidator(SCHEMA).validate(VALID)[2] == ()


@pytest.fixture(scope="module")
def weather() -> ArgumentValidator:
    return ArgumentValidator(WEATHER)


def problems(validator: ArgumentValidator, args: dict[str, Any]) -> dict[str, Problem]:
    _, _, found = validator.validate(args)
    by_path = {p.path: p for p in found}
    assert len(by_path) == len(found), "one problem per path expected here"
    return by_path


def with_(**changes: Any) -> dict[str, Any]:
    args: dict[str, Any] = json.loads(json.dumps(VALID))
    args.update(changes)
    return args


def test_valid_arguments_pass_unchanged(weather: ArgumentValidator) -> None:
    args, coercions, found = weather.validate(VALID)
    assert found == ()
    assert coercions == ()
    assert args is VALID


def test_every_problem_is_reported_at_once_with_its_path(weather: ArgumentValidator) -> None:
    bad = {
        "city": "Paris",
        "unit": "kelvin",
        "days": "five",
        "location": {"lat": "north"},
        "start": "2025-02-30",
        "extra": 1,
    }
    found = problems(weather, bad)
    assert {path: p.kind for path, p in found.items()} == {
        "$.unit": "not_in_enum",
        "$.days": "wrong_type",
        "$.location.lat": "wrong_type",
        "$.location.lon": "missing_field",
        "$.start": "bad_format",
        "$.extra": "unexpected_field",
    }


def test_missing_field_names_the_field_and_its_type(weather: ArgumentValidator) -> None:
    args = with_()
    del args["days"]
    found = problems(weather, args)
    assert list(found) == ["$.days"]
    assert found["$.days"].kind == "missing_field"
    assert found["$.days"].message == "required field 'days' (an integer) is missing"


def test_enum_problem_lists_allowed_values(weather: ArgumentValidator) -> None:
    found = problems(weather, with_(unit="kelvin"))
    problem = found["$.unit"]
    assert problem.allowed == ("celsius", "fahrenheit")
    assert problem.message == "must be one of 'celsius', 'fahrenheit'; got 'kelvin'"


def test_wrong_type_says_what_was_wanted_and_got(weather: ArgumentValidator) -> None:
    assert problems(weather, with_(city=5))["$.city"].message == (
        "must be a string; got the integer 5"
    )
    assert problems(weather, with_(verbose="yes"))["$.verbose"].message == (
        "must be true or false; got the string 'yes'"
    )
    # Optional types come as anyOf; the problem is still a plain wrong type.
    limit = problems(weather, with_(limit="many"))["$.limit"]
    assert limit.kind == "wrong_type"
    assert limit.message == "must be an integer or null; got the string 'many'"


def test_stringified_array_gets_a_hint_and_is_not_coerced(weather: ArgumentValidator) -> None:
    problem = problems(weather, with_(tags='["a", "b"]'))["$.tags"]
    assert problem.kind == "wrong_type"
    assert "send the array itself" in problem.message


def test_problem_inside_an_array_has_its_index(weather: ArgumentValidator) -> None:
    found = problems(weather, with_(tags=["a", 7]))
    assert found["$.tags[1]"].kind == "wrong_type"


def test_range_length_and_size_problems(weather: ArgumentValidator) -> None:
    assert problems(weather, with_(days=0))["$.days"].kind == "out_of_range"
    assert problems(weather, with_(days=0))["$.days"].message == "must be at least 1; got 0"
    assert problems(weather, with_(days=15))["$.days"].message == "must be at most 14; got 15"
    assert problems(weather, with_(city=""))["$.city"].kind == "too_short"
    assert problems(weather, with_(tags=["a", "b", "c", "d"]))["$.tags"].kind == "too_long"


def test_other_keywords_become_problems_too() -> None:
    validator = ArgumentValidator(
        {
            "type": "object",
            "properties": {
                "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "ids": {"type": "array", "uniqueItems": True},
                "mode": {"const": "fast"},
                "shape": {
                    "oneOf": [
                        {"type": "object", "required": ["r"]},
                        {"type": "object", "required": ["w", "h"]},
                    ]
                },
                "step": {"type": "number", "multipleOf": 0.5},
            },
        }
    )
    found = problems(
        validator, {"code": "usd", "ids": [1, 1], "mode": "slow", "shape": {"x": 1}, "step": 0.3}
    )
    assert found["$.code"].kind == "pattern_mismatch"
    assert found["$.ids"].kind == "not_unique"
    assert found["$.mode"].kind == "not_in_enum"
    assert found["$.mode"].allowed == ("fast",)
    assert found["$.shape"].kind == "no_matching_alternative"
    assert found["$.step"].kind == "out_of_range"


def test_odd_keys_are_quoted_in_paths() -> None:
    assert path_text([]) == "$"
    assert path_text(["a", 0, "b c", "x.y"]) == '$.a[0]["b c"]["x.y"]'


def test_invalid_schema_is_refused_when_compiled() -> None:
    with pytest.raises(UsageError, match="invalid JSON Schema"):
        ArgumentValidator({"type": "object", "properties": {"a": {"type": "integr"}}})


def test_schema_of_another_draft_is_honoured() -> None:
    # Draft 7 knows no prefixItems: the keyword is ignored there, enforced in 2020-12.
    base = {"type": "array", "prefixItems": [{"type": "string"}]}
    schema07 = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"a": base},
    }
    schema2020 = {"type": "object", "properties": {"a": base}}
    assert ArgumentValidator(schema07).validate({"a": [1]})[2] == ()
    assert ArgumentValidator(schema2020).validate({"a": [1]})[2] != ()


# --------------------------------------------------------------------------------------
# Formats


def format_validator(fmt: str) -> ArgumentValidator:
    return ArgumentValidator(
        {"type": "object", "properties": {"v": {"type": "string", "format": fmt}}}
    )


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        (
            "date",
            ["2025-06-01", "2024-02-29"],
            ["2025-02-30", "2023-02-29", "20250601", "2025-6-1", "2025-06-01T00:00:00", "June 1"],
        ),
        (
            "date-time",
            [
                "2025-06-01T10:00:00Z",
                "2025-06-01T10:00:00.5+02:00",
                "2025-06-01t10:00:00z",
                "2025-06-01 10:00:00Z",
                "2016-12-31T23:59:60Z",
                "2025-06-01T10:00:00.123456789-05:30",
            ],
            [
                "2025-06-01T10:00:00",
                "2025-06-01 10:00",
                "2025-02-30T10:00:00Z",
                "tomorrow",
                "2025-06-01T24:00:00Z",
                "2025-06-01T10:00:00+24:00",
                "2025-06-01T10:00:00.Z",
                "2025-06-01T10:00:30:60Z",
                "2025-06-01T10:30:60Z",
                "20250601T100000Z",
                "2025-06-01T10:00:00+0200",
                "2025-06-01T1\u0660:00:00Z",
                "2025-06-01T10:00:00Z ",
            ],
        ),
        (
            "time",
            ["10:00:00Z", "23:59:59+01:00", "23:59:60Z", "10:00:00.25-03:00"],
            ["25:00:00Z", "10:00", "noon", "10:00:00", "10:60:00Z", "10:00:00+01"],
        ),
        (
            "email",
            ["ann@example.com", "a.b+tag@mail.example.org", "x@[192.0.2.1]", "x@localhost"],
            ["ann", "ann@", "@example.com", "not an email@@x", "a b@example.com", "a@-bad-.com"],
        ),
        (
            "uri",
            [
                "https://example.com/a?b=c#d",
                "mailto:ann@example.com",
                "urn:isbn:0451450523",
                "HTTPS://EXAMPLE.COM/%7Eann",
                "http://[2001:db8::1]:8080/",
                "file:///etc/hosts",
            ],
            [
                "example.com",
                "/relative/path",
                "https://exa mple.com",
                "not a uri",
                "https://example.com/%zz",
                "https://example.com/%4",
                "http://[not-ip]/",
                "http://[::1/",
                "1http://example.com",
                "https://example.com/café",
                "https://example.com/\\x",
                "https://example.com/\n",
                "",
            ],
        ),
        (
            "uuid",
            ["123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000"],
            ["123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400", "xyz"],
        ),
    ],
)
def test_formats_are_really_enforced(fmt: str, good: list[str], bad: list[str]) -> None:
    validator = format_validator(fmt)
    for value in good:
        assert validator.validate({"v": value})[2] == (), value
    for value in bad:
        found = validator.validate({"v": value})[2]
        assert [p.kind for p in found] == ["bad_format"], value
        assert found[0].path == "$.v"


def test_format_problem_explains_the_expected_form() -> None:
    (problem,) = format_validator("date").validate({"v": "01/06/2025"})[2]
    assert problem.message == (
        "must be a calendar date written YYYY-MM-DD, such as 2025-06-01; got '01/06/2025'"
    )


# --------------------------------------------------------------------------------------
# Coercion


@pytest.mark.parametrize(
    ("field", "sent", "received"),
    [
        ("days", "5", 5),
        ("days", "14", 14),
        ("ratio", "2.5", 2.5),
        ("ratio", "-0.5", -0.5),
        ("ratio", "5", 5),
        ("ratio", "1e3", 1000.0),
        ("verbose", "true", True),
        ("verbose", "false", False),
        ("limit", "7", 7),
    ],
)
def test_unambiguous_strings_are_coerced_and_reported(
    weather: ArgumentValidator, field: str, sent: str, received: Any
) -> None:
    original = with_(**{field: sent})
    args, coercions, found = weather.validate(original)
    assert found == ()
    assert args[field] == received
    assert type(args[field]) is type(received)
    assert [(c.path, c.original, c.value) for c in coercions] == [(f"$.{field}", sent, received)]
    # The model's own arguments are left as they were sent.
    assert original[field] == sent


@pytest.mark.parametrize(
    ("field", "sent"),
    [
        ("days", "05"),
        ("days", "+5"),
        ("days", " 5"),
        ("days", "5.0"),
        ("days", "1e1"),
        ("days", "1_0"),
        ("days", "0x10"),
        ("days", 2.7),
        ("days", True),
        ("ratio", "nan"),
        ("ratio", "inf"),
        ("ratio", "1e999"),
        ("ratio", ".5"),
        ("ratio", "5."),
        ("ratio", "2,5"),
        ("ratio", False),
        ("verbose", "yes"),
        ("verbose", "True"),
        ("verbose", "1"),
        ("verbose", "on"),
        ("verbose", 1),
        ("verbose", 0),
        ("city", 5),
        ("city", 2.5),
        ("city", True),
        ("city", None),
        ("tags", "a"),
        ("tags", '["a"]'),
        ("limit", "null"),
    ],
)
def test_ambiguous_values_are_refused_not_coerced(
    weather: ArgumentValidator, field: str, sent: Any
) -> None:
    _args, coercions, found = weather.validate(with_(**{field: sent}))
    assert coercions == ()
    assert [p.path for p in found] == [f"$.{field}"]
    assert found[0].kind == "wrong_type"


def test_integral_float_is_already_a_valid_integer(weather: ArgumentValidator) -> None:
    _args, coercions, found = weather.validate(with_(days=5.0))
    assert found == ()
    assert coercions == ()


def test_coerced_value_must_still_meet_the_other_rules(weather: ArgumentValidator) -> None:
    _args, coercions, found = weather.validate(with_(days="99"))
    assert coercions == ()
    assert [(p.path, p.kind, p.message) for p in found] == [
        ("$.days", "out_of_range", "must be at most 14; got 99")
    ]


def test_coercion_does_not_apply_where_the_schema_accepts_a_string() -> None:
    validator = ArgumentValidator(
        {"type": "object", "properties": {"zip": {"type": "string"}, "n": {"type": "integer"}}}
    )
    args, coercions, found = validator.validate({"zip": "05123", "n": "3"})
    assert found == ()
    assert args == {"zip": "05123", "n": 3}
    assert [c.path for c in coercions] == ["$.n"]


def test_coercion_inside_nested_objects_and_arrays() -> None:
    validator = ArgumentValidator(
        {
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"qty": {"type": "integer"}}},
                }
            },
        }
    )
    sent: dict[str, Any] = {"items": [{"qty": 1}, {"qty": "2"}]}
    args, coercions, found = validator.validate(sent)
    assert found == ()
    assert args == {"items": [{"qty": 1}, {"qty": 2}]}
    assert coercions[0].path == "$.items[1].qty"
    assert sent["items"][1]["qty"] == "2"


def test_other_problems_are_reported_after_coercion(weather: ArgumentValidator) -> None:
    _, _, found = weather.validate(with_(days="5", unit="kelvin"))
    assert [p.path for p in found] == ["$.unit"]


@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_any_integer_text_round_trips_for_integer(n: int) -> None:
    assert coerce_string(str(n), ("integer",)) == (True, n)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_any_finite_float_text_round_trips_for_number(x: float) -> None:
    ok, value = coerce_string(json.dumps(x), ("number",))
    assert ok
    assert value == x


@given(st.text(max_size=20))
def test_coercion_only_yields_what_the_text_spells_in_json(text: str) -> None:
    for wanted in (("integer",), ("number",), ("boolean",)):
        ok, value = coerce_string(text, wanted)
        if ok:
            # Whatever was coerced is exactly the JSON reading of the text.
            assert json.loads(text) == value
            assert text == text.strip()
        else:
            assert value is None


@given(st.text(max_size=20))
def test_no_string_is_ever_coerced_to_string_null_array_or_object(text: str) -> None:
    assert coerce_string(text, ("string", "null", "array", "object")) == (False, None)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=6,
)


@given(st.dictionaries(st.sampled_from([*WEATHER["properties"], "other"]), JSON_VALUES))
def test_validate_never_passes_what_the_schema_refuses(args: dict[str, Any]) -> None:
    from jsonschema import Draft202012Validator

    from sse_toolcalls.runtime.tools.formats import format_checker

    reference = Draft202012Validator(WEATHER, format_checker=format_checker())
    validator = ArgumentValidator(WEATHER)
    before = json.dumps(args, sort_keys=True)
    out, coercions, found = validator.validate(args)
    # The model's arguments are never modified in place.
    assert json.dumps(args, sort_keys=True) == before
    if found:
        assert not reference.is_valid(args)
        assert all(p.path.startswith("$") and p.message for p in found)
    else:
        # Whatever passes is valid as delivered; coercion happened only if needed.
        assert reference.is_valid(out)
        assert (coercions == ()) == reference.is_valid(args)
        for coercion in coercions:
            assert isinstance(coercion.original, str)


# --------------------------------------------------------------------------------------
# Hostile arguments: bounded work, a structured refusal, never RecursionError (issue 9).


def nested(levels: int, leaf: Any = "x") -> Any:
    """``levels`` arrays around ``leaf``, built without recursion."""
    value = leaf
    for _ in range(levels):
        value = [value]
    return value


ARRAYS = {
    "type": "object",
    "properties": {
        "items": {"type": "array"},
        "names": {"type": "array", "items": {"type": "string"}},
        "tree": {"$ref": "#/$defs/tree"},
    },
    "$defs": {"tree": {"type": "array", "items": {"$ref": "#/$defs/tree"}}},
}


def test_a_string_of_brackets_where_an_array_is_wanted_is_a_wrong_type() -> None:
    (problem,) = ArgumentValidator(ARRAYS).validate({"items": "[" * 100_000})[2]
    assert (problem.path, problem.kind) == ("$.items", "wrong_type")
    assert len(problem.message) < 200


@pytest.mark.parametrize("levels", [985, 995, 2_000, 100_000])
def test_arguments_nested_past_the_limit_are_refused_before_validation(levels: int) -> None:
    (problem,) = ArgumentValidator(ARRAYS).validate({"names": nested(levels, 1)})[2]
    assert problem.kind == "too_deep"
    # The arguments object is level 1, "names" level 2: the first level past the limit.
    assert problem.path == "$.names" + "[0]" * (MAX_VALIDATED_ARGUMENTS_DEPTH - 1)
    assert str(MAX_VALIDATED_ARGUMENTS_DEPTH) in problem.message


def test_the_depth_limit_is_exact_even_through_a_recursive_schema() -> None:
    validator = ArgumentValidator(ARRAYS)
    # The arguments object is level 1, so "tree" may hold MAX_VALIDATED_ARGUMENTS_DEPTH - 1 levels.
    at_limit = {"tree": nested(MAX_VALIDATED_ARGUMENTS_DEPTH - 2, [])}
    assert validator.validate(at_limit)[2] == ()
    past = {"tree": nested(MAX_VALIDATED_ARGUMENTS_DEPTH - 1, [])}
    assert [p.kind for p in validator.validate(past)[2]] == ["too_deep"]
    assert too_deep(at_limit) is None and too_deep(past) is not None


def test_a_deep_wrong_value_under_the_limit_is_quoted_briefly() -> None:
    (problem,) = ArgumentValidator(ARRAYS).validate({"names": [nested(60, 1)]})[2]
    assert (problem.path, problem.kind) == ("$.names[0]", "wrong_type")
    assert len(problem.message) <= MAX_MESSAGE_CHARS + 3


def test_a_huge_wrong_value_is_quoted_briefly() -> None:
    (problem,) = ArgumentValidator(WEATHER).validate(with_(city=list(range(200_000))))[2][:1]
    assert problem.path == "$.city"
    assert len(problem.message) < 200


def test_many_problems_are_listed_up_to_the_cap_then_counted() -> None:
    found = ArgumentValidator(ARRAYS).validate({"names": list(range(10_000))})[2]
    assert len(found) == MAX_REPORTED_PROBLEMS + 1
    assert [p.path for p in found[:3]] == ["$.names[0]", "$.names[1]", "$.names[2]"]
    assert found[-1].kind == "more_problems"
    assert str(10_000 - MAX_REPORTED_PROBLEMS) in found[-1].message


# One schema and one value breaking it, per keyword of the table, with the problem kind.
_KEYWORD_CASES: dict[str, tuple[dict[str, Any], Any, str]] = {
    "required": ({"required": ["a"]}, {}, "missing_field"),
    "additionalProperties": ({"additionalProperties": False}, {"a": 1}, "unexpected_field"),
    "unevaluatedProperties": ({"unevaluatedProperties": False}, {"a": 1}, "unexpected_field"),
    "type": ({"properties": {"a": {"type": "integer"}}}, {"a": "x"}, "wrong_type"),
    "anyOf": ({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}, {}, "no_matching_alternative"),
    "oneOf": ({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, {}, "no_matching_alternative"),
    "enum": ({"properties": {"a": {"enum": [1]}}}, {"a": 2}, "not_in_enum"),
    "const": ({"properties": {"a": {"const": 1}}}, {"a": 2}, "not_in_enum"),
    "format": ({"properties": {"a": {"format": "date"}}}, {"a": "x"}, "bad_format"),
    "minimum": ({"properties": {"a": {"minimum": 1}}}, {"a": 0}, "out_of_range"),
    "maximum": ({"properties": {"a": {"maximum": 1}}}, {"a": 2}, "out_of_range"),
    "exclusiveMinimum": ({"properties": {"a": {"exclusiveMinimum": 1}}}, {"a": 1}, "out_of_range"),
    "exclusiveMaximum": ({"properties": {"a": {"exclusiveMaximum": 1}}}, {"a": 1}, "out_of_range"),
    "multipleOf": ({"properties": {"a": {"multipleOf": 2}}}, {"a": 3}, "out_of_range"),
    "minLength": ({"properties": {"a": {"minLength": 2}}}, {"a": "x"}, "too_short"),
    "maxLength": ({"properties": {"a": {"maxLength": 1}}}, {"a": "xy"}, "too_long"),
    "minItems": ({"properties": {"a": {"minItems": 1}}}, {"a": []}, "too_short"),
    "maxItems": ({"properties": {"a": {"maxItems": 0}}}, {"a": [1]}, "too_long"),
    "minProperties": ({"minProperties": 1}, {}, "too_short"),
    "maxProperties": ({"maxProperties": 0}, {"a": 1}, "too_long"),
    "pattern": ({"properties": {"a": {"pattern": "^y"}}}, {"a": "x"}, "pattern_mismatch"),
    "uniqueItems": ({"properties": {"a": {"uniqueItems": True}}}, {"a": [1, 1]}, "not_unique"),
}


def test_every_keyword_of_the_table_is_read_in_its_own_words() -> None:
    # The keyword chain is a table (issue 10): each keyword it names has a case here, and
    # a keyword outside it keeps jsonschema's message as a "constraint" problem.
    assert set(_KEYWORD_CASES) == set(_READERS)
    for keyword, (schema, value, kind) in _KEYWORD_CASES.items():
        _, _, problems = ArgumentValidator({"type": "object", **schema}).validate(value)
        assert [p.kind for p in problems] == [kind], keyword
    _, _, problems = ArgumentValidator({"type": "object", "not": {}}).validate({})
    assert [p.kind for p in problems] == ["constraint"]


# --------------------------------------------------------------------------------------
# Optional values: the error names what is allowed, not "closest: must be null"


def optional_validator() -> ArgumentValidator:
    return ArgumentValidator(
        {
            "type": "object",
            "properties": {
                "unit": {"anyOf": [{"enum": ["celsius", "fahrenheit"]}, {"type": "null"}]},
                "day": {"anyOf": [{"type": "null"}, {"type": "string", "format": "date"}]},
                "xs": {
                    "anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "null"}]
                },
            },
        }
    )


def test_an_optional_enum_names_its_values_and_null() -> None:
    (problem,) = optional_validator().validate({"unit": "kelvin"})[2]
    assert problem.kind == "not_in_enum"
    assert problem.message == "must be one of 'celsius', 'fahrenheit', or null; got 'kelvin'"
    assert problem.allowed == ("celsius", "fahrenheit", None)
    assert "closest" not in problem.message


def test_an_optional_date_names_its_form_and_null() -> None:
    (problem,) = optional_validator().validate({"day": "2025-13-01"})[2]
    assert problem.kind == "bad_format"
    assert problem.message == (
        "must be a calendar date written YYYY-MM-DD, such as 2025-06-01, or null; got '2025-13-01'"
    )


def test_inside_an_optional_array_null_is_not_offered_for_one_item() -> None:
    (problem,) = optional_validator().validate({"xs": [1, "a"]})[2]
    assert problem.path == "$.xs[1]"
    assert problem.message == "must be an integer; got the string 'a'"


def test_null_is_valid_for_an_optional_value() -> None:
    assert optional_validator().validate({"unit": None, "day": None, "xs": None})[2] == ()
