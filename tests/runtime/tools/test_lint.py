"""The catalogue's description checks: each code fires on its pattern and only there."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

import pytest

from sse_toolcalls import ToolSpec
from sse_toolcalls.runtime.tools import Finding, ToolRegistry
from sse_toolcalls.runtime.tools.lint import (
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


# BFCL's multi-turn docs open every tool of a class with the same two sentences.
_PREAMBLE = (
    "This tool belongs to the Gorilla file system. It is a simple file system that allows "
    "users to perform basic file operations such as navigating directories, creating files "
    "and directories, reading and writing to files, etc. Tool description: "
)


def test_a_catalogues_shared_preamble_does_not_make_its_tools_overlap() -> None:
    cat = spec(name="cat", description=_PREAMBLE + "Display the contents of a file.")
    diff = spec(name="diff", description=_PREAMBLE + "Compare two files line by line.")
    mkdir = spec(name="mkdir", description=_PREAMBLE + "Create a new directory.")
    # Pairwise, the preamble is most of each bag (similarity knows no catalogue)...
    assert similarity(cat, diff) >= OVERLAP_THRESHOLD
    # ...in the catalogue it is the catalogue's, and says nothing about either tool.
    assert [f for f in lint_tools([cat, diff, mkdir]) if f.code == "tools_overlap"] == []
    # Two near-duplicates behind the preamble are still found.
    shown = spec(name="display_file", description=_PREAMBLE + "Display the contents of a file.")
    again = spec(name="display_file_contents", description=shown.description)
    overlaps = [f for f in lint_tools([shown, diff, mkdir, again]) if f.code == "tools_overlap"]
    assert [(f.tool, "'display_file_contents'" in f.message) for f in overlaps] == [
        ("display_file", True)
    ]


def test_only_whole_sentences_shared_by_three_tools_are_a_preamble() -> None:
    # Words in common are no preamble: BFCL's near-duplicates open with "Get the", and a
    # third tool opening so too changes nothing.
    rate = spec(
        name="currency_conversion.get_rate",
        description="Get the currency conversion rate from one currency to another at a date.",
        properties={"from_currency": {}, "to_currency": {}, "date": {}},
    )
    latest = spec(
        name="currency_conversion.get_latest_rate",
        description="Get the latest currency conversion rate from one currency to another.",
        properties={"from_currency": {}, "to_currency": {}},
    )
    fee = spec(name="bank.get_fee", description="Get the fee a bank charges for a transfer.")
    found = [f.tool for f in lint_tools([rate, latest, fee]) if f.code == "tools_overlap"]
    assert found == ["currency_conversion.get_rate"]
    # Two tools that open with the same sentences may be one tool twice: they count.
    a_tool = spec(name="a_tool", description=_PREAMBLE + "Do A.")
    b_tool = spec(name="b_tool", description=_PREAMBLE + "Do B.")
    assert [f.code for f in lint_tools([a_tool, b_tool]) if f.code == "tools_overlap"] == [
        "tools_overlap"
    ]
    # And a closing sentence every tool of three shares is boilerplate too.
    closing = " Data from the Gorilla file system, which is simple and local to the user."
    ends = [replace(t, description=t.description + closing) for t in (rate, latest, fee)]
    assert [f.tool for f in lint_tools(ends) if f.code == "tools_overlap"] == found


def _format_messages(name: str, description: str) -> list[str]:
    props = {name: {"type": "string", "description": description}}
    return [
        f.message for f in lint_tools([spec(properties=props)]) if f.code == "format_undeclared"
    ]


@pytest.mark.parametrize(
    "name", ["websiteId", "date_format", "date_range", "UrlName", "email_key", "url_pattern"]
)
def test_a_name_about_a_date_or_url_is_no_date_or_url(name: str) -> None:
    # BFCL: "The unique identifier of the website", "such as 'MM/DD/YYYY'", "'YYYY-MM-DD
    # to YYYY-MM-DD'", "a URL slug".
    assert _format_messages(name, "The value.") == []


@pytest.mark.parametrize(
    ("description", "layout"),
    [
        ("The birth date. Must be in MM-DD-YYYY format.", "MM-DD-YYYY"),
        ("The date, in the format of 'dd/mm/yyyy', such as '15/03/2024'.", "DD/MM/YYYY"),
        ("Date of the concert in 'mm-yyyy' format.", "MM-YYYY"),
        ("In the format 'YYYY-MM-DD HH:mm:ss'.", "YYYY-MM-DD HH:MM:SS"),
        ("In ISO-8601 format (e.g., 'YYYY-MM-DDTHH:MM:SS'), no offset.", "YYYY-MM-DDTHH:MM:SS"),
    ],
)
def test_a_layout_that_is_no_format_wants_a_pattern(description: str, layout: str) -> None:
    # "format": "date" would refuse every value such a tool takes.
    (message,) = _format_messages("start_date", description)
    assert f"{layout!r}" in message and '"pattern"' in message


def test_a_date_shown_with_its_time_and_offset_wants_date_time() -> None:
    for description in (
        "In ISO 8601 format (e.g., '2023-01-01T00:00:00Z').",
        "In ISO 8601 format such as 'YYYY-MM-DDTHH:MM:SSZ'.",
    ):
        (message,) = _format_messages("starting_date", description)
        assert message.endswith("add \"format\": 'date-time'")
    (message,) = _format_messages("start_date", "In the format 'YYYY-MM-DD', such as '2023-04-01'.")
    assert message.endswith("add \"format\": 'date'")


@pytest.mark.parametrize(
    ("name", "description"),
    [
        ("date", "Date of the concert, e.g. this weekend, today, tomorrow, or date string."),
        ("movie_date", "Accepts values like 'today', 'tomorrow', '24th Feb'; format 'DD MMM'."),
        ("url", "The host to scan, without the HTTPS schema. For example: 'example.com'."),
        ("email", "The address, or 'me' for the signed-in user."),
    ],
)
def test_values_the_format_would_refuse_make_no_finding(name: str, description: str) -> None:
    assert _format_messages(name, description) == []


@pytest.mark.parametrize(
    "description",
    [
        # BFCL's basketball.game_stats: a noun, no choices follow.
        "One of the competing teams in the game.",
        # BFCL's Hotels_2_BookHouse: a layout, not two values.
        "The location, formatted as 'City, State' or 'City, Country', e.g. 'Paris, France'.",
    ],
)
def test_words_that_list_no_choices_want_no_enum(description: str) -> None:
    props = {"team": {"type": "string", "description": description}}
    assert lint_tools([spec(properties=props)]) == []


@pytest.mark.parametrize(
    "description",
    ["One of: celsius, fahrenheit.", "One of 'celsius', 'fahrenheit'.", "One of c, f, k."],
)
def test_one_of_followed_by_choices_wants_an_enum(description: str) -> None:
    props = {"unit": {"type": "string", "description": description}}
    assert [f.code for f in lint_tools([spec(properties=props)])] == ["enum_values_unlisted"]
