"""``sse-toolcalls catalogue``: Markdown, declarations, findings and exit status."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from sse_toolcalls import DIALECTS, ToolSpec, UsageError, as_dialect
from sse_toolcalls.conversation import UserMessage
from sse_toolcalls.messages import build_request, tool_declarations
from sse_toolcalls.runtime.sandbox import Sandbox
from sse_toolcalls.runtime.tools import Tool, ToolRegistry
from sse_toolcalls.tooling.catalogue import CatalogueEntry, load_catalogue, render_markdown
from sse_toolcalls.tooling.cli import main

WEATHER = ToolSpec(
    name="get_weather",
    description="Get the current weather in a city. Use it when the user asks about weather.",
    parameters={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city, such as Paris."},
            "unit": {
                "type": "string",
                "enum": ["celsius", "fahrenheit"],
                "description": "The unit.",
                "default": "celsius",
            },
        },
        "required": ["city"],
    },
)

# A registry for the tests below: one tool with a finding (its unit parameter is
# undescribed), loadable as tests.tooling.test_catalogue:REGISTRY.
REGISTRY = ToolRegistry()


@REGISTRY.register(effect="write", parallel_safe=False, needs_approval=True)
def book_table(restaurant: str, people: int) -> str:
    """Book a table at a restaurant. Use it when the user asks to reserve.

    Args:
        restaurant: The restaurant's name.
    """
    return "booked"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_the_demo_registries_are_clean_under_strict(capsys: pytest.CaptureFixture[str]) -> None:
    # What CI runs (.ci/run).
    status, out, err = run(
        ["catalogue", "sse_toolcalls.tooling.demo:demo_registry", "--strict"], capsys
    )
    assert status == 0, out
    assert "## `lookup_demo_value`" in out
    assert "No findings." in out
    assert err == ""


def test_a_registry_target_shows_effects_and_findings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(["catalogue", "tests.tooling.test_catalogue:REGISTRY"], capsys)
    assert status == 0  # findings fail only with --strict
    assert "1 tool." in out
    assert "- **Effect:** write (changes something: never run twice for one call)" in out
    assert "- **Runs:** in this process (timeout 30 s)" in out
    assert "- **Beside other calls:** no" in out
    assert "- **Approval:** a person approves each call" in out
    assert "| `restaurant` | string | yes | The restaurant's name. |" in out
    assert "- **parameter_description_missing** `book_table` · `people`:" in out
    assert err == "1 finding\n"
    status, _, _ = run(["catalogue", "tests.tooling.test_catalogue:REGISTRY", "--strict"], capsys)
    assert status == 1


def test_a_sandboxed_tool_says_where_it_runs() -> None:
    tool = Tool(
        name="resize",
        description="Resize an image. Use it when the user uploads a picture.",
        parameters={"type": "object", "properties": {}},
        handler=print,
        sandbox=Sandbox(read=("/data",), write=("/tmp/out",), timeout=5),
    )
    text = render_markdown([CatalogueEntry(spec=tool.spec, tool=tool)], [])
    assert "in a sandbox: reads `/data`; writes `/tmp/out`; no network; timeout 5 s" in text
    assert "No parameters." in text


def _neutral(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description, "parameters": spec.parameters}


@pytest.mark.parametrize("shape", ["neutral", "request", "converse_request", *DIALECTS])
def test_a_json_file_in_any_shape_reads_back_the_same_tools(tmp_path: Path, shape: str) -> None:
    if shape == "neutral":
        data: Any = [_neutral(WEATHER)]
    elif shape == "request":
        data = {"model": "m", "tools": tool_declarations("openai_chat", [WEATHER])}
    elif shape == "converse_request":
        data = build_request("bedrock_converse", [UserMessage(text="hi")], [WEATHER], model="m")
    else:
        data = tool_declarations(as_dialect(shape), [WEATHER])
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(data))
    (entry,) = load_catalogue(str(path))
    assert entry.tool is None
    assert entry.spec.name == WEATHER.name
    assert entry.spec.description == WEATHER.description
    got = entry.spec.parameters
    if shape == "gemini":
        # Gemini's OpenAPI subset keeps no defaults; types come back lower-cased.
        assert got["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]
        assert got["properties"]["city"]["type"] == "string"
        assert got["required"] == ["city"]
    else:
        assert got == WEATHER.parameters


def test_gemini_nullable_reads_back_as_a_null_type(tmp_path: Path) -> None:
    declaration = {
        "functionDeclarations": [
            {
                "name": "f",
                "description": "d",
                "parameters": {
                    "type": "OBJECT",
                    "properties": {"x": {"type": "STRING", "nullable": True}},
                },
            }
        ]
    }
    path = tmp_path / "g.json"
    path.write_text(json.dumps([declaration]))
    (entry,) = load_catalogue(str(path))
    assert entry.spec.parameters == {
        "type": "object",
        "properties": {"x": {"type": ["string", "null"]}},
    }


def test_declarations_are_written_for_every_dialect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([_neutral(WEATHER)]))
    out_dir = tmp_path / "declarations"
    status, out, _ = run(
        ["catalogue", str(path), "--declarations", str(out_dir), "--strict"], capsys
    )
    assert status == 0, out
    assert "- **Effect:** not declared" in out
    for dialect in DIALECTS:
        written = json.loads((out_dir / f"{dialect}.json").read_text())
        assert written == tool_declarations(dialect, [WEATHER])


def test_a_dialect_that_cannot_declare_a_schema_fails_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = _neutral(WEATHER) | {
        "parameters": {
            "type": "object",
            "properties": {"x": {"description": "An x.", "$ref": "other.json#/x"}},
        }
    }
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([odd]))
    status, _, err = run(["catalogue", str(path), "--declarations", str(tmp_path / "d")], capsys)
    assert status == 1
    assert "gemini: cannot declare these tools" in err
    assert (tmp_path / "d" / "openai_chat.json").is_file()


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("nonexistent.json", "cannot read"),
        ("no_colon_here", "neither a JSON file nor a module:attribute"),
        ("sse_toolcalls.nope:thing", "cannot load"),
        ("sse_toolcalls.tooling.demo:_WORDS", "is not a ToolRegistry"),
    ],
)
def test_unreadable_targets_exit_2(
    target: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(["catalogue", target], capsys)
    assert status == 2
    assert message in err
    assert out == ""


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "cannot read"),
        ('{"a": 1}', "expected a list"),
        ("[1]", "must be an object"),
        ('[{"what": 1}]', "not a tool definition of a known shape"),
        ('[{"name": ""}]', "non-empty string name"),
        ('[{"name": "f", "description": 3}]', "must be a string"),
        ('[{"name": "f", "parameters": []}]', "must be an object schema"),
        ('[{"functionDeclarations": [3]}]', "must be an object"),
    ],
)
def test_malformed_files_exit_2(
    tmp_path: Path, content: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.json"
    path.write_text(content)
    status, _, err = run(["catalogue", str(path)], capsys)
    assert status == 2
    assert message in err


def test_markdown_cells_stay_in_their_column() -> None:
    spec = ToolSpec(
        name="f",
        description="d",
        parameters={
            "type": "object",
            "properties": {"a": {"type": "string", "description": "x | y\nz"}},
        },
    )
    text = render_markdown([CatalogueEntry(spec=spec)], [])
    assert "| `a` | string | no | x \\| y z |" in text
    assert io.StringIO(text).read().count("\n| `a`") == 1


@pytest.mark.parametrize(
    "item",
    [
        {"toolSpec": {"name": "f"}},
        {"toolSpec": {"name": "f", "inputSchema": {"type": "object"}}},
        {"toolSpec": {"name": "f", "inputSchema": "x"}},
        {"toolSpec": {"inputSchema": {"json": {"type": "object"}}}},
    ],
)
def test_a_converse_tool_without_its_schema_or_name_is_refused(tmp_path: Path, item: Any) -> None:
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([item]))
    with pytest.raises(UsageError, match="toolSpec"):
        load_catalogue(str(path))
