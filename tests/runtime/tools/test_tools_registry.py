"""The registry: adding tools, refusing calls with structured results (the runtime runs
them: tests/runtime/test_execute.py)."""

from __future__ import annotations

import datetime
import enum
import json
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import anyio.lowlevel
import pydantic
import pytest

from sse_toolcalls.calls import ToolCall, ToolResult, ToolSpec
from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime import Dispatcher
from sse_toolcalls.runtime.errors import InvalidArgumentsError, UnknownToolError
from sse_toolcalls.runtime.tools import NO_TOOL_FITS_NAME, Tool, ToolRegistry, ValidatedCall

pytestmark = pytest.mark.anyio


def call(
    name: str,
    args: dict[str, Any] | None = None,
    *,
    call_id: str | None = "call_1",
    arguments_error: str | None = None,
    provider: Any = "anthropic",
) -> ToolCall:
    return ToolCall(
        name=name,
        args=args or {},
        provider=provider,
        call_id=call_id,
        index=0,
        raw_arguments=json.dumps(args or {}),
        arguments_error=arguments_error,
    )


async def run(registry: ToolRegistry, c: ToolCall) -> ToolResult:
    """``c`` run the one way a call runs (the dispatcher), with no retry, so each run
    counts once; a fresh ledger each time, so a write runs."""
    (report,) = await Dispatcher(registry, read_retries=0).dispatch([c])
    return report.result


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


@dataclass(frozen=True)
class Location:
    lat: float
    lon: float


class Counter:
    """Counts handler runs: the proof that nothing ran."""

    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []

    def __call__(self, **kwargs: Any) -> str:
        self.runs.append(kwargs)
        return "ran"


def weather_registry(counter: Counter) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    def get_weather(
        city: str,
        unit: Unit,
        days: int,
        location: Location,
        start: datetime.date,
    ) -> dict[str, Any]:
        """Forecast for a city.

        Args:
            city: The city.
            unit: Temperature unit.
            days: Number of days.
            location: Where exactly.
            start: First day.
        """
        counter.runs.append(
            {"city": city, "unit": unit, "days": days, "location": location, "start": start}
        )
        return {"city": city, "unit": unit, "days": days, "start": start, "location": location}

    @registry.register(name="book_table", effect="write", parallel_safe=False, timeout=5)
    async def book(restaurant: str, guests: int = 2) -> str:
        """Book a table."""
        counter.runs.append({"restaurant": restaurant, "guests": guests})
        await anyio.lowlevel.checkpoint()
        return f"booked {restaurant} for {guests}"

    return registry


class Span(pydantic.BaseModel):
    low: int
    high: int

    @pydantic.model_validator(mode="after")
    def ordered(self) -> Span:
        # A rule JSON Schema cannot state: only the model's own check can refuse it.
        if self.low > self.high:
            raise ValueError("low must not exceed high")
        return self


GOOD = {
    "city": "Paris",
    "unit": "celsius",
    "days": 3,
    "location": {"lat": 48.85, "lon": 2.35},
    "start": "2025-06-01",
}


async def test_sync_handler_receives_decoded_python_values() -> None:
    counter = Counter()
    registry = weather_registry(counter)
    result = await run(registry, call("get_weather", GOOD))
    assert not result.is_error
    assert counter.runs == [
        {
            "city": "Paris",
            "unit": Unit.CELSIUS,
            "days": 3,
            "location": Location(lat=48.85, lon=2.35),
            "start": datetime.date(2025, 6, 1),
        }
    ]
    # The return value goes back as JSON.
    assert result.content == {
        "city": "Paris",
        "unit": "celsius",
        "days": 3,
        "start": "2025-06-01",
        "location": {"lat": 48.85, "lon": 2.35},
    }


async def test_result_keeps_the_call_as_its_address() -> None:
    counter = Counter()
    registry = weather_registry(counter)
    for call_id, provider in [("toolu_1", "anthropic"), ("", "openai_chat"), (None, "gemini")]:
        c = call("get_weather", GOOD, call_id=call_id, provider=provider)
        result = await run(registry, c)
        assert result.call is c
        bad = call("get_weather", {}, call_id=call_id, provider=provider)
        assert (await run(registry, bad)).call is bad


def test_register_declares_effect_parallelism_and_timeout() -> None:
    registry = weather_registry(Counter())
    booking = registry.get("book_table")
    assert booking is not None
    assert (booking.effect, booking.parallel_safe, booking.timeout) == ("write", False, 5)
    weather = registry.get("get_weather")
    assert weather is not None
    assert (weather.effect, weather.parallel_safe, weather.timeout) == ("read", True, 30.0)
    assert "get_weather" in registry
    assert "nope" not in registry
    assert registry.get("nope") is None
    assert [t.name for t in registry] == ["get_weather", "book_table"] == registry.names()
    assert len(registry) == 2


def test_register_returns_the_function_unchanged() -> None:
    registry = ToolRegistry()

    def add(a: int, b: int) -> int:
        return a + b

    assert registry.register(add) is add
    assert add(2, 3) == 5


def test_specs_are_the_neutral_declarations() -> None:
    registry = weather_registry(Counter())
    specs = registry.specs()
    assert [s.name for s in specs] == ["get_weather", "book_table"]
    weather = specs[0]
    assert isinstance(weather, ToolSpec)
    assert weather.description == "Forecast for a city."
    assert weather.parameters["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]
    assert weather.parameters["required"] == ["city", "unit", "days", "location", "start"]


def test_duplicate_and_invalid_tools_are_refused() -> None:
    registry = weather_registry(Counter())
    with pytest.raises(UsageError, match="already registered"):

        @registry.register
        def get_weather(city: str) -> str:
            return city

    with pytest.raises(UsageError, match="invalid JSON Schema"):
        registry.add_schema_tool("t", {"type": "object", "required": "a"}, print)
    with pytest.raises(UsageError, match="must describe an object"):
        registry.add_schema_tool("t", {"type": "string"}, print)
    with pytest.raises(UsageError, match="timeout"):
        registry.add_schema_tool("t", {"type": "object"}, print, timeout=0)
    with pytest.raises(UsageError, match="non-empty name"):
        registry.add_schema_tool("", {"type": "object"}, print)


async def test_raw_schema_tool_gets_json_arguments() -> None:
    registry = ToolRegistry()
    received: list[dict[str, Any]] = []

    def handler(**kwargs: Any) -> list[Any]:
        received.append(kwargs)
        return [1, 2]

    registry.add_schema_tool(
        "lookup",
        {
            "type": "object",
            "properties": {"id": {"type": "string", "format": "uuid"}, "n": {"type": "integer"}},
            "required": ["id"],
        },
        handler,
        description="Look a thing up.",
    )
    uid = "123e4567-e89b-12d3-a456-426614174000"
    result = await run(registry, call("lookup", {"id": uid, "n": "4"}))
    assert result.content == [1, 2]
    assert received == [{"id": uid, "n": 4}]


# --------------------------------------------------------------------------------------
# Refusals


async def test_invalid_arguments_become_one_error_result_listing_every_problem() -> None:
    counter = Counter()
    registry = weather_registry(counter)
    bad = call(
        "get_weather",
        {"city": "Paris", "unit": "kelvin", "location": {"lat": "north", "lon": 2}, "x": 1},
    )
    result = await run(registry, bad)
    assert result.is_error
    assert result.call is bad
    assert counter.runs == []
    content = result.content
    assert isinstance(content, dict)
    assert content["error"] == "invalid_arguments"
    assert content["tool"] == "get_weather"
    assert content["message"] == (
        "The arguments for 'get_weather' have 5 problems; fix each one and call the tool again."
    )
    assert content["problems"] == [
        {
            "path": "$.unit",
            "problem": "not_in_enum",
            "message": "must be one of 'celsius', 'fahrenheit'; got 'kelvin'",
            "allowed": ["celsius", "fahrenheit"],
        },
        {
            "path": "$.location.lat",
            "problem": "wrong_type",
            "message": "must be a number; got the string 'north'",
        },
        {
            "path": "$.days",
            "problem": "missing_field",
            "message": "required field 'days' (an integer) is missing",
        },
        {
            "path": "$.start",
            "problem": "missing_field",
            "message": "required field 'start' (a string) is missing",
        },
        {
            "path": "$.x",
            "problem": "unexpected_field",
            "message": (
                "'x' is not an accepted field; the accepted fields are "
                "'city', 'unit', 'days', 'location', 'start'"
            ),
        },
    ]
    # The content is plain JSON, ready for any dialect's result message.
    assert json.loads(json.dumps(content)) == content


async def test_arguments_that_were_not_json_are_refused_without_validation() -> None:
    counter = Counter()
    registry = weather_registry(counter)
    bad = call("get_weather", {}, arguments_error="Expecting ',' delimiter: line 1 column 9")
    result = await run(registry, bad)
    assert result.is_error
    assert counter.runs == []
    content = result.content
    assert isinstance(content, dict)
    assert content["error"] == "invalid_arguments"
    assert content["problems"] == [
        {
            "path": "$",
            "problem": "invalid_json",
            "message": (
                "the arguments were not valid JSON (Expecting ',' delimiter: line 1 column 9); "
                "send them as one JSON object"
            ),
        }
    ]


async def test_unknown_tool_is_an_error_result_listing_the_tools() -> None:
    registry = weather_registry(Counter())
    result = await run(registry, call("get_wether", {"city": "Paris"}))
    assert result.is_error
    content = result.content
    assert isinstance(content, dict)
    assert content["error"] == "unknown_tool"
    assert content["available_tools"] == ["get_weather", "book_table"]
    assert "Did you mean 'get_weather'?" in content["message"]
    assert content["problems"][0]["problem"] == "unknown_tool"


def test_check_raises_and_validate_returns_a_result() -> None:
    registry = weather_registry(Counter())
    with pytest.raises(UnknownToolError) as unknown:
        registry.check(call("nope"))
    assert unknown.value.call == call("nope")
    with pytest.raises(InvalidArgumentsError) as invalid:
        registry.check(call("get_weather", {**GOOD, "days": "many"}))
    assert [(p.path, p.kind) for p in invalid.value.problems] == [("$.days", "wrong_type")]
    refused = registry.validate(call("get_weather", {**GOOD, "days": "many"}))
    assert isinstance(refused, ToolResult)
    assert refused.is_error
    accepted = registry.validate(call("get_weather", {**GOOD, "days": "4"}))
    assert isinstance(accepted, ValidatedCall)
    assert accepted.arguments["days"] == 4
    assert accepted.kwargs["unit"] is Unit.CELSIUS
    assert [(c.path, c.original, c.value) for c in accepted.coercions] == [("$.days", "4", 4)]


def test_error_result_needs_the_call() -> None:
    with pytest.raises(UsageError):
        ToolRegistry().error_result(UnknownToolError("x"))


async def test_nothing_runs_before_it_validates() -> None:
    counter = Counter()
    registry = weather_registry(counter)
    refused = [
        call("get_weather", {**GOOD, "unit": "kelvin"}),
        call("get_weather", {**GOOD, "start": "2025-02-30"}),
        call("get_weather", {**GOOD, "days": 2.7}),
        call("get_weather", {**GOOD, "extra": True}),
        call("get_weather", GOOD, arguments_error="Unterminated string"),
        call("book_table", {"restaurant": "X", "guests": "two"}),
        call("book_table", {}),
        call("get_weathers", GOOD),
    ]
    for c in refused:
        assert (await run(registry, c)).is_error
    assert counter.runs == []
    assert not (
        await run(registry, call("book_table", {"restaurant": "X", "guests": "3"}))
    ).is_error
    assert counter.runs == [{"restaurant": "X", "guests": 3}]


async def test_pydantic_validator_refusal_is_an_invalid_arguments_result() -> None:
    registry = ToolRegistry()
    ran: list[Span] = []

    @registry.register
    def count(span: Span) -> int:
        ran.append(span)
        return span.high - span.low

    assert (await run(registry, call("count", {"span": {"low": 1, "high": 4}}))).content == "3"
    result = await run(registry, call("count", {"span": {"low": 5, "high": 4}}))
    assert result.is_error
    assert isinstance(result.content, dict)
    assert result.content["error"] == "invalid_arguments"
    (problem,) = result.content["problems"]
    assert problem["path"] == "$.span"
    assert "low must not exceed high" in problem["message"]
    assert len(ran) == 1


# --------------------------------------------------------------------------------------
# The no-op tool


async def test_no_tool_fits_is_off_until_enabled() -> None:
    registry = weather_registry(Counter())
    assert NO_TOOL_FITS_NAME not in registry
    assert (await run(registry, call(NO_TOOL_FITS_NAME, {"reason": "x"}))).is_error


async def test_no_tool_fits_tool_answers_and_is_recognised() -> None:
    counter = Counter()
    registry = weather_registry(counter)
    tool = registry.enable_no_tool_fits()
    assert isinstance(tool, Tool)
    assert registry.specs()[-1].name == "no_suitable_tool"
    assert registry.specs()[-1].parameters["required"] == ["reason"]
    c = call("no_suitable_tool", {"reason": "the user asked for a poem"})
    assert registry.is_no_tool_fits(c)
    assert not registry.is_no_tool_fits(call("get_weather", GOOD))
    result = await run(registry, c)
    assert not result.is_error
    assert isinstance(result.content, str)
    assert "Answer the user directly" in result.content
    assert counter.runs == []
    # It is validated like any tool.
    assert (await run(registry, call("no_suitable_tool", {}))).is_error
    with pytest.raises(UsageError):
        registry.enable_no_tool_fits()


def test_no_tool_fits_name_can_be_chosen() -> None:
    registry = ToolRegistry()
    registry.enable_no_tool_fits("none_of_these")
    assert registry.is_no_tool_fits(call("none_of_these", {"reason": "r"}))


def test_literal_parameter_in_registered_tool() -> None:
    registry = ToolRegistry()

    @registry.register
    def convert(amount: float, to: Literal["usd", "eur"]) -> float:
        return amount

    checked = registry.check(call("convert", {"amount": "2.5", "to": "eur"}))
    assert checked.kwargs == {"amount": 2.5, "to": "eur"}


@pytest.mark.parametrize(
    "args",
    [
        {"items": "[" * 100_000},  # a string of brackets where an array is wanted
        {"items": [[[[]]]], "names": "{" * 100_000},
    ],
    ids=["brackets", "braces"],
)
async def test_hostile_argument_strings_give_an_error_result(args: dict[str, Any]) -> None:
    counter = Counter()
    registry = ToolRegistry()
    registry.add_schema_tool(
        "put",
        {
            "type": "object",
            "properties": {"items": {"type": "array"}, "names": {"type": "object"}},
        },
        counter,
    )
    result = await run(registry, call("put", args))
    assert result.is_error and counter.runs == []
    assert isinstance(result.content, dict)
    assert result.content["error"] == "invalid_arguments"
    assert result.content["problems"][0]["problem"] == "wrong_type"


async def test_arguments_nested_a_thousand_deep_give_an_error_result() -> None:
    counter = Counter()
    registry = ToolRegistry()
    registry.add_schema_tool(
        "put",
        {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}},
        counter,
    )
    deep: Any = 1
    for _ in range(985):
        deep = [deep]
    deep_call = ToolCall(
        name="put", args={"items": deep}, provider="anthropic", call_id="c", index=0
    )
    result = await run(registry, deep_call)
    assert result.is_error and counter.runs == []
    assert isinstance(result.content, dict)
    assert [p["problem"] for p in result.content["problems"]] == ["too_deep"]


def test_remove_takes_a_tool_out_and_frees_its_name() -> None:
    registry = ToolRegistry()
    registry.enable_no_tool_fits()
    tool = registry.add_schema_tool("echo", {"type": "object"}, lambda: "hi")
    assert registry.remove("echo") is tool
    assert "echo" not in registry and registry.names() == ["no_suitable_tool"]
    registry.add_schema_tool("echo", {"type": "object"}, lambda: "again")
    registry.remove("no_suitable_tool")
    assert not registry.is_no_tool_fits(
        ToolCall(name="no_suitable_tool", args={}, provider="anthropic", call_id="c", index=0)
    )
    with pytest.raises(UsageError, match="no tool named 'gone'"):
        registry.remove("gone")
