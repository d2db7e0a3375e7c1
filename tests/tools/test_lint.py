"""The catalogue's description checks: each code fires on its pattern and only there."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from sse_toolcalls import ToolSpec
from sse_toolcalls.tools import Finding, ToolRegistry
from sse_toolcalls.tools.lint import (
    FINDING_CODES,
    OVERLAP_THRESHOLD,
    lint_tools,
    similarity,
    tokens,
)

GOOD = "Get the current weather in a city. Use it when the user asks about the weather."


def spec(
    name: str = "get_weather",
    description: str = GOOD,
    properties: dict[str, Any] | None = None,
) -> ToolSpec:
    if properties is None:
        properties = {"city": {"type": "string", "description": "The city, such as Paris."}}
    return ToolSpec(
        name=name,
        description=description,
        parameters={"type": "object", "properties": properties},
    )


def codes(findings: list[Finding]) -> list[tuple[str, str, str | None]]:
    return [(f.code, f.tool, f.parameter) for f in findings]


def test_a_clean_tool_has_no_findings() -> None:
    assert lint_tools([spec()]) == []


@pytest.mark.parametrize(
    ("description", "code"),
    [
        ("", "tool_description_missing"),
        ("Weather.", "tool_description_vague"),
        ("get weather", "tool_description_vague"),
        ("Get the current weather in a city.", "tool_when_to_use"),
    ],
)
def test_tool_descriptions(description: str, code: str) -> None:
    found = [f.code for f in lint_tools([spec(description=description)])]
    assert code in found


@pytest.mark.parametrize(
    "description",
    [
        GOOD,
        "Get the weather. Call this before planning an outdoor event.",
        "Get the weather; only for cities, not for regions.",
        "Get the weather if the user names a city.",
    ],
)
def test_usage_cues_satisfy_when_to_use(description: str) -> None:
    assert "tool_when_to_use" not in [f.code for f in lint_tools([spec(description=description)])]


def test_every_parameter_needs_a_description_nested_ones_too() -> None:
    properties = {
        "city": {"type": "string"},
        "where": {
            "type": "object",
            "description": "Where.",
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number", "title": "L"}},
        },
        "stops": {
            "type": "array",
            "description": "Stops.",
            "items": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    }
    found = codes(lint_tools([spec(properties=properties)]))
    assert found == [
        ("parameter_description_missing", "get_weather", "city"),
        ("parameter_description_missing", "get_weather", "where.lat"),
        ("parameter_description_missing", "get_weather", "stops[].name"),
    ]


def test_a_local_ref_is_followed_and_a_self_reference_ends() -> None:
    parameters = {
        "type": "object",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "child": {"$ref": "#/$defs/Node", "description": "The next node."},
                    "label": {"type": "string"},
                },
            }
        },
        "properties": {"root": {"$ref": "#/$defs/Node", "description": "The first node."}},
    }
    found = lint_tools([ToolSpec(name="walk", description=GOOD, parameters=parameters)])
    paths = [f.parameter for f in found if f.code == "parameter_description_missing"]
    assert "root.label" in paths
    assert "root.child.label" in paths
    assert len(paths) <= 20  # bounded by MAX_SCHEMA_DEPTH, not infinite


@pytest.mark.parametrize(
    ("text", "listed"),
    [
        ("The unit, one of celsius or fahrenheit.", True),
        ("Either 'asc' or 'desc'.", True),
        ("The sort order: 'asc', 'desc'.", True),
        ("Possible values: low, high.", True),
        ("The city, e.g. 'Paris' or 'Rome'.", False),
        ("The city, such as 'Boston, MA'.", False),
        ("The city.", False),
        ("Example values could be 'Red', 'Blue', or 'Green'.", False),
        ("Specific game conditions. (eg: 'snowy weather', 'hard mode').", False),
        ("Options include: 'civil', 'criminal', 'small_claims', etc.", False),
        ("Valid options range from 1 to 6.", False),
        ("The query spans the range ['from', 'to').", False),
        ("Level of detail, either 'summary' or 'full'.", True),
    ],
)
def test_choices_in_prose_want_an_enum(text: str, listed: bool) -> None:
    props: dict[str, Any] = {"unit": {"type": "string", "description": text}}
    found = [f.code for f in lint_tools([spec(properties=props)])]
    assert ("enum_values_unlisted" in found) is listed
    props["unit"]["enum"] = ["x"]
    assert "enum_values_unlisted" not in [f.code for f in lint_tools([spec(properties=props)])]


@pytest.mark.parametrize(
    ("name", "wanted"),
    [
        ("start_date", "date"),
        ("birthday", "date"),
        ("createdTimestamp", "date-time"),
        ("event_date_time", "date-time"),
        ("recipient_email", "email"),
        ("homepage_url", "uri"),
        ("callbackUri", "uri"),
        ("update_mode", None),
        ("candidate", None),
        ("emailed", None),
    ],
)
def test_formats_where_the_name_says_so(name: str, wanted: str | None) -> None:
    props = {name: {"type": "string", "description": "The value."}}
    found = [f for f in lint_tools([spec(properties=props)]) if f.code == "format_undeclared"]
    assert [wanted is not None and wanted in f.message for f in found] == ([True] if wanted else [])
    for declared in ({"format": "date"}, {"pattern": "^x$"}):
        ok = {name: {"type": "string", "description": "The value.", **declared}}
        assert not [f for f in lint_tools([spec(properties=ok)]) if f.code == "format_undeclared"]


def test_an_array_of_urls_wants_a_format_on_its_items() -> None:
    props = {"urls": {"type": "array", "description": "Pages.", "items": {"type": "string"}}}
    assert [f.code for f in lint_tools([spec(properties=props)])] == ["format_undeclared"]


def test_a_number_described_by_its_valid_values_wants_a_range_not_an_enum() -> None:
    props = {"level": {"type": "integer", "description": "Valid values are 1 to 10."}}
    assert lint_tools([spec(properties=props)]) == []


def test_a_command_name_that_is_not_run_is_no_escape_hatch() -> None:
    # BFCL's help.display: "The name of the command to display help for."
    helper = spec(
        name="help.display",
        description="Display help for a command. Use it when the user asks how a command works.",
        properties={"command": {"type": "string", "description": "The command to explain."}},
    )
    assert lint_tools([helper]) == []


def test_escape_hatches() -> None:
    shell = spec(
        name="run_shell",
        description="Run a shell command. Use it when nothing else fits.",
        properties={"cmd": {"type": "string", "description": "The command line."}},
    )
    evaluate = spec(
        name="exec",
        description="Run anything. Use it when nothing else fits.",
        properties={"text": {"type": "string", "description": "What to run."}},
    )
    found = codes(lint_tools([shell, evaluate]))
    assert ("escape_hatch", "run_shell", "cmd") in found
    assert ("escape_hatch", "exec", "text") in found
    # Constrained, the same parameter is no escape hatch.
    tame = spec(
        name="run_shell",
        description="Run a shell command. Use it when nothing else fits.",
        properties={"cmd": {"type": "string", "enum": ["uptime"], "description": "Which."}},
    )
    assert lint_tools([tame]) == []


def test_tokens_split_names_and_drop_stop_words() -> None:
    assert tokens("getWeatherForecasts") == ["get", "weather", "forecast"]
    assert tokens("api.get_the_urls") == ["api", "get", "url"]


def test_overlap_flags_near_duplicates_not_inverses() -> None:
    # BFCL's multiple_17, as written there.
    rate = spec(
        name="currency_conversion.get_rate",
        description=(
            "Get the currency conversion rate from one currency to another at a specified date."
        ),
        properties={"from_currency": {}, "to_currency": {}, "date": {}},
    )
    latest = spec(
        name="currency_conversion.get_latest_rate",
        description="Get the latest currency conversion rate from one currency to another.",
        properties={"from_currency": {}, "to_currency": {}},
    )
    to_f = spec(name="celsius_to_fahrenheit", description="Convert celsius to fahrenheit.")
    to_c = spec(name="fahrenheit_to_celsius", description="Convert fahrenheit to celsius.")
    assert similarity(rate, latest) >= OVERLAP_THRESHOLD
    assert similarity(to_f, to_c) < OVERLAP_THRESHOLD
    assert similarity(rate, rate) == pytest.approx(1.0)
    assert similarity(rate, spec(name="x", description="")) < 0.5
    overlaps = [f for f in lint_tools([rate, latest, to_f, to_c]) if f.code == "tools_overlap"]
    assert [(f.tool, "get_latest_rate" in f.message) for f in overlaps] == [
        ("currency_conversion.get_rate", True)
    ]


def test_registry_lint_is_lint_tools_of_its_specs() -> None:
    registry = ToolRegistry()

    @registry.register
    def convert(amount: float, unit: Literal["kg", "lb"]) -> float:
        """Convert a weight.

        Args:
            amount: How much.
        """
        return amount

    found = registry.lint()
    assert found == lint_tools(registry.specs())
    assert codes(found) == [
        ("tool_description_vague", "convert", None),
        ("tool_when_to_use", "convert", None),
        ("parameter_description_missing", "convert", "unit"),
    ]
    assert {f.code for f in found} <= set(FINDING_CODES)
