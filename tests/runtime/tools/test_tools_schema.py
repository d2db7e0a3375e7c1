"""JSON Schema from Python signatures and docstrings, and decoding back to Python values."""

from __future__ import annotations

import datetime
import enum
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired, Optional, TypedDict, Union

import pydantic
import pytest
from jsonschema import Draft202012Validator

from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime.tools import function_schema
from sse_toolcalls.runtime.tools.signature import parse_docstring


def params(fn: Any) -> dict[str, Any]:
    _, schema, _ = function_schema(fn)
    Draft202012Validator.check_schema(schema)
    return schema


def prop(fn: Any, name: str = "x") -> dict[str, Any]:
    schema = params(fn)["properties"][name]
    assert isinstance(schema, dict)
    return schema


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclass
class Point:
    """A point on a map."""

    lat: float
    """Latitude in degrees."""

    lon: float
    """Longitude in degrees."""

    label: str = "here"
    """A name for the point."""


@dataclass
class Route:
    start: Point
    stops: list[Point]


class Address(pydantic.BaseModel):
    street: str
    city: str


class Person(pydantic.BaseModel):
    name: str
    home: Address
    work: Address | None = None


class Options(TypedDict):
    verbose: bool
    depth: NotRequired[int]
    tags: list[str]


def test_scalars_map_to_json_types() -> None:
    def f(a: str, b: int, c: float, d: bool, e: None) -> None: ...

    props = params(f)["properties"]
    assert props == {
        "a": {"type": "string"},
        "b": {"type": "integer"},
        "c": {"type": "number"},
        "d": {"type": "boolean"},
        "e": {"type": "null"},
    }


def test_required_are_the_parameters_without_defaults_and_extra_fields_are_refused() -> None:
    def f(a: int, b: int = 3, c: str | None = None) -> None: ...

    schema = params(f)
    assert schema["required"] == ["a"]
    assert schema["additionalProperties"] is False
    # A JSON default is shown to the model; a None default says nothing.
    assert schema["properties"]["b"]["default"] == 3
    assert "default" not in schema["properties"]["c"]


def test_kwargs_parameter_lets_extra_fields_through() -> None:
    def f(a: int, **rest: Any) -> None: ...

    schema = params(f)
    assert "additionalProperties" not in schema
    assert list(schema["properties"]) == ["a"]


def test_literal_becomes_enum_with_its_type() -> None:
    def f(x: Literal["celsius", "fahrenheit"]) -> None: ...

    assert prop(f) == {"type": "string", "enum": ["celsius", "fahrenheit"]}

    def g(x: Literal[1, "one"]) -> None: ...

    assert prop(g) == {"enum": [1, "one"]}


def test_enum_becomes_enum_of_values_and_decodes_to_the_member() -> None:
    def f(x: Colour, y: Level) -> None: ...

    _, schema, decode = function_schema(f)
    assert schema["properties"]["x"] == {"type": "string", "enum": ["red", "green"]}
    assert schema["properties"]["y"] == {"type": "integer", "enum": [1, 2]}
    assert decode({"x": "green", "y": 2}) == {"x": Colour.GREEN, "y": Level.HIGH}


def test_optional_and_union_become_any_of() -> None:
    def f(x: Optional[int], y: Union[int, str], z: float | None) -> None: ...  # noqa: UP007, UP045

    props = params(f)["properties"]
    assert props["x"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert props["y"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert props["z"] == {"anyOf": [{"type": "number"}, {"type": "null"}]}


def test_lists_sets_and_tuples() -> None:
    def f(
        a: list[int],
        b: Sequence[str],
        c: set[str],
        d: tuple[int, str],
        e: tuple[float, ...],
    ) -> None: ...

    _, schema, decode = function_schema(f)
    props = schema["properties"]
    assert props["a"] == {"type": "array", "items": {"type": "integer"}}
    assert props["b"] == {"type": "array", "items": {"type": "string"}}
    assert props["c"] == {"type": "array", "items": {"type": "string"}, "uniqueItems": True}
    assert props["d"] == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "items": False,
        "minItems": 2,
    }
    assert props["e"] == {"type": "array", "items": {"type": "number"}}
    decoded = decode({"a": [1], "b": ["x"], "c": ["p", "q"], "d": [1, "s"], "e": [1, 2.5]})
    assert decoded == {"a": [1], "b": ["x"], "c": {"p", "q"}, "d": (1, "s"), "e": (1.0, 2.5)}
    assert isinstance(decoded["e"][0], float)


def test_dicts_become_objects_with_value_schema() -> None:
    def f(a: dict[str, int], b: Mapping[str, list[str]], c: dict[str, Any]) -> None: ...

    props = params(f)["properties"]
    assert props["a"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert props["b"] == {
        "type": "object",
        "additionalProperties": {"type": "array", "items": {"type": "string"}},
    }
    assert props["c"] == {"type": "object", "additionalProperties": {}}


def test_dict_with_non_string_keys_is_refused() -> None:
    def f(a: dict[int, str]) -> None: ...

    with pytest.raises(UsageError, match="keys must be str"):
        function_schema(f)


def test_dataclass_becomes_closed_object_with_field_docs_and_decodes_to_instances() -> None:
    def f(route: Route) -> None: ...

    _, schema, decode = function_schema(f)
    point = schema["properties"]["route"]["properties"]["start"]
    assert point["type"] == "object"
    assert point["required"] == ["lat", "lon"]
    assert point["additionalProperties"] is False
    assert point["description"] == "A point on a map."
    assert point["properties"]["lat"] == {"type": "number", "description": "Latitude in degrees."}
    assert point["properties"]["label"]["default"] == "here"
    value = {"start": {"lat": 1, "lon": 2}, "stops": [{"lat": 3, "lon": 4, "label": "b"}]}
    route = decode({"route": value})["route"]
    assert route == Route(start=Point(lat=1.0, lon=2.0), stops=[Point(lat=3, lon=4, label="b")])


def test_pydantic_model_definitions_are_hoisted_and_refs_resolve() -> None:
    def f(person: Person, manager: Person | None = None) -> None: ...

    _, schema, decode = function_schema(f)
    assert "Address" in schema["$defs"]
    validator = Draft202012Validator(schema)
    good = {"person": {"name": "Ann", "home": {"street": "1 Main", "city": "Oslo"}}}
    assert validator.is_valid(good)
    bad = {"person": {"name": "Ann", "home": {"street": "1 Main"}}}
    assert not validator.is_valid(bad)
    decoded = decode(good)
    assert decoded["person"] == Person(name="Ann", home=Address(street="1 Main", city="Oslo"))


def test_typed_dict_keys_follow_required_and_not_required() -> None:
    def f(options: Options) -> None: ...

    schema = params(f)["properties"]["options"]
    assert schema["required"] == ["verbose", "tags"]
    assert set(schema["properties"]) == {"verbose", "depth", "tags"}


def test_dates_times_and_uuids_become_formatted_strings_and_decode() -> None:
    def f(d: datetime.date, dt: datetime.datetime, t: datetime.time, u: uuid.UUID) -> None: ...

    _, schema, decode = function_schema(f)
    props = schema["properties"]
    assert props["d"] == {"type": "string", "format": "date"}
    assert props["dt"] == {"type": "string", "format": "date-time"}
    assert props["t"] == {"type": "string", "format": "time"}
    assert props["u"] == {"type": "string", "format": "uuid"}
    out = decode(
        {
            "d": "2025-06-01",
            "dt": "2025-06-01t10:00:00z",
            "t": "10:30:00+02:00",
            "u": "123e4567-e89b-12d3-a456-426614174000",
        }
    )
    assert out["d"] == datetime.date(2025, 6, 1)
    assert out["dt"] == datetime.datetime(2025, 6, 1, 10, tzinfo=datetime.UTC)
    assert out["t"].hour == 10
    assert out["u"] == uuid.UUID("123e4567-e89b-12d3-a456-426614174000")


def test_integral_float_for_int_hint_is_delivered_as_int() -> None:
    def f(n: int, x: float) -> None: ...

    _, _, decode = function_schema(f)
    out = decode({"n": 5.0, "x": 5})
    assert out == {"n": 5, "x": 5.0}
    assert type(out["n"]) is int
    assert type(out["x"]) is float


def test_union_decodes_by_the_member_the_value_matches() -> None:
    def f(when: datetime.date | int, colour: Colour | None = None) -> None: ...

    _, _, decode = function_schema(f)
    assert decode({"when": "2025-01-02"})["when"] == datetime.date(2025, 1, 2)
    assert decode({"when": 7})["when"] == 7
    assert decode({"when": 7, "colour": None})["colour"] is None
    assert decode({"when": 7, "colour": "red"})["colour"] is Colour.RED


def test_annotated_string_is_a_description_any_is_unconstrained() -> None:
    def f(x: Annotated[int, "How many"], y: Any) -> None: ...

    props = params(f)["properties"]
    assert props["x"] == {"type": "integer", "description": "How many"}
    assert props["y"] == {}


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def f(x): ...", "no type hint"),
        ("def f(x: int, /): ...", "cannot be passed by keyword"),
        ("def f(*xs: int): ...", "cannot be passed by keyword"),
        ("def f(x: bytes): ...", "cannot describe the type bytes"),
        ("def f(x: complex): ...", "cannot describe the type complex"),
    ],
)
def test_signatures_the_model_cannot_be_told_about_are_refused(source: str, message: str) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    with pytest.raises(UsageError, match=message):
        function_schema(namespace["f"])


@dataclass
class Node:
    children: list[Node]


def test_recursive_dataclass_is_refused_not_looped() -> None:
    def f(tree: Node) -> None: ...

    with pytest.raises(UsageError, match="recursive"):
        function_schema(f)


def test_google_docstring() -> None:
    doc = """Get the weather.

    Looks it up online.

    Args:
        city (str): The city,
            such as Paris.
        unit: The unit.

    Returns:
        The forecast.
    """
    description, docs = parse_docstring(doc)
    assert description == "Get the weather.\n\nLooks it up online."
    assert docs == {"city": "The city, such as Paris.", "unit": "The unit."}


def test_sphinx_docstring() -> None:
    doc = """Get the weather.

    :param city: The city.
    :param str unit: The unit,
        celsius or fahrenheit.
    :returns: The forecast.
    """
    description, docs = parse_docstring(doc)
    assert description == "Get the weather."
    assert docs == {"city": "The city.", "unit": "The unit, celsius or fahrenheit."}


def test_numpy_docstring() -> None:
    doc = """Get the weather.

    Parameters
    ----------
    city : str
        The city.
    days : int
        How many days,
        at most 14.

    Returns
    -------
    str
    """
    description, docs = parse_docstring(doc)
    assert description == "Get the weather."
    assert docs == {"city": "The city.", "days": "How many days, at most 14."}


def test_function_docstring_feeds_descriptions() -> None:
    def get_weather(city: str, days: int = 1) -> str:
        """Get the weather.

        Args:
            city: The city.
            days: How many days.
        """
        return ""

    description, schema, _ = function_schema(get_weather)
    assert description == "Get the weather."
    assert schema["properties"]["city"]["description"] == "The city."
    assert schema["properties"]["days"] == {
        "type": "integer",
        "description": "How many days.",
        "default": 1,
    }
