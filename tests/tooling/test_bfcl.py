"""BFCL's single-turn data as an outside check: ground truths validate, mutations are
refused with the right problem, and every ground-truth turn survives each dialect's stream.

The data comes from the ``bfcl-eval`` wheel (``pip download --no-deps bfcl-eval``), found
through ``BFCL_DATA_DIR`` or an installed package. Without it the sample test fails when
``CI=true`` (CI must provide it) and is skipped elsewhere; the converter tests below it need
no data.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import random
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from sse_toolcalls import Dialect
from sse_toolcalls.calls import DIALECTS, ToolCall
from sse_toolcalls.parser import ToolCallParser
from sse_toolcalls.runtime.errors import InvalidArgumentsError, UnknownToolError
from sse_toolcalls.tooling import bfcl
from sse_toolcalls.tooling.simulator.encoders import encode_turn
from sse_toolcalls.tooling.simulator.script import ScriptedCall, Turn

SAMPLE_EVERY = 10
"""One entry in ten of each category: about 240 entries, a few seconds."""

SEED = 20250601


def round_trip(calls: list[ToolCall], dialect: Dialect, rng: random.Random) -> list[ToolCall]:
    turn = Turn(
        calls=tuple(ScriptedCall(name=c.name, args=c.args, call_id=c.call_id) for c in calls),
        fragment_size=rng.randint(1, 24),
    )
    data = b"".join(encode_turn(dialect, turn))
    cuts = sorted(rng.sample(range(1, len(data)), k=min(12, len(data) - 1)))
    parser = ToolCallParser(dialect)
    out: list[ToolCall] = []
    for a, b in itertools.pairwise([0, *cuts, len(data)]):
        out.extend(parser.feed(data[a:b]))
    out.extend(parser.finish())
    return out


def identity(calls: list[ToolCall]) -> list[tuple[Any, ...]]:
    return [(c.name, c.args, c.call_id, c.index) for c in calls]


def test_the_conversion_is_optional_and_outside_the_tools_package() -> None:
    # Regression (issue 10): it was sse_toolcalls.runtime.tools.bfcl, part of the tools layer.
    assert importlib.util.find_spec("sse_toolcalls.runtime.tools.bfcl") is None
    code = (
        "import sys, sse_toolcalls, sse_toolcalls.runtime.tools, sse_toolcalls.runtime, "
        "sse_toolcalls.tooling.simulator, sse_toolcalls.tooling.cli\n"
        "print(sorted(m for m in sys.modules if 'bfcl' in m))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_bfcl_sample_validates_refuses_mutations_and_round_trips() -> None:
    source = bfcl.find_source()
    if source is None:
        message = f"no BFCL data: set {bfcl.DATA_ENV} (pip download --no-deps bfcl-eval)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    rng = random.Random(SEED)
    unexpected: list[str] = []
    counts = {"calls": 0, "validated": 0, "mutations": 0, "refused": 0, "round_trips": 0}
    for category in bfcl.CATEGORIES:
        entries = source.entries(category)
        assert entries, category
        for entry in entries[::SAMPLE_EVERY]:
            report = bfcl.check_entry(entry)
            counts["calls"] += report.calls
            counts["validated"] += report.validated
            counts["mutations"] += report.mutations
            counts["refused"] += report.refused
            if entry.id not in bfcl.KNOWN_DEFECTS:
                unexpected.extend(report.failures)
            calls = bfcl.ground_truth_calls(entry)
            for dialect in DIALECTS:
                counts["round_trips"] += 1
                back = round_trip(calls, dialect, rng)
                if identity(back) != identity(calls):
                    unexpected.append(f"{entry.id}: {dialect} round trip differs")
    assert unexpected == []
    assert counts["mutations"] == counts["refused"]
    # The sample is not vacuous: hundreds of calls and thousands of mutations.
    assert counts["calls"] > 250
    assert counts["mutations"] > 1000


# --------------------------------------------------------------------------------------
# The converter itself, on BFCL-shaped definitions written here.

FUNCTION: dict[str, Any] = {
    "name": "math.hypot",
    "description": "Euclidean norm.",
    "parameters": {
        "type": "dict",
        "properties": {
            "x": {"type": "integer", "description": "x"},
            "y": {"type": "float", "description": "y"},
            "point": {"type": "tuple", "items": {"type": "float"}},
            "mode": {"type": "string", "enum": ["fast", "exact"], "optional": True},
            "data": {"type": "any"},
            "extra": {
                "type": "dict",
                "properties": {"k": {"type": "string"}, "v": {"type": "integer"}},
                "required": ["k"],
            },
        },
        "required": ["x", "y"],
    },
}


def entry(ground_truth: list[dict[str, Any]]) -> bfcl.Entry:
    return bfcl.Entry(
        id="t_0", category="simple_python", functions=(FUNCTION,), ground_truth=tuple(ground_truth)
    )


def test_gorilla_types_become_json_schema() -> None:
    schema = bfcl.gorilla_schema(FUNCTION["parameters"])
    assert schema["type"] == "object"
    props = schema["properties"]
    assert props["y"] == {"type": "number", "description": "y"}
    assert props["point"] == {"type": "array", "items": {"type": "number"}}
    assert props["mode"] == {"type": "string", "enum": ["fast", "exact"]}
    assert props["data"] == {}
    assert props["extra"]["type"] == "object"
    # The input is left as it was.
    assert FUNCTION["parameters"]["type"] == "dict"


def test_ground_truth_takes_first_value_and_omits_optional_blanks() -> None:
    e = entry(
        [
            {
                "math.hypot": {
                    "x": [4],
                    "y": ["", 5.0],
                    "mode": ["", "fast"],
                    "extra": [{"k": ["a", "b"], "v": ["", 1]}],
                }
            },
            {"math.hypot": {"x": [1], "y": [2], "point": [[1.5, 2.5]]}},
        ]
    )
    first, second = bfcl.ground_truth_calls(e)
    # "" first for the required y: a correct call must send it, so the next value is used.
    assert first.args == {"x": 4, "y": 5.0, "extra": {"k": "a"}}
    assert (first.call_id, first.index, second.call_id, second.index) == ("call_0", 0, "call_1", 1)
    assert json.loads(first.raw_arguments) == first.args
    assert second.args == {"x": 1, "y": 2, "point": [1.5, 2.5]}


def test_mutations_are_refused_with_their_problem_and_path() -> None:
    e = entry([{"math.hypot": {"x": [4], "y": [5], "mode": ["fast"], "data": [[1]]}}])
    registry = bfcl.registry_for(e)
    (call,) = bfcl.ground_truth_calls(e)
    registry.check(call)
    tool = registry.get("math.hypot")
    assert tool is not None
    found = {}
    for mutation in bfcl.mutations(call, tool.parameters):
        try:
            registry.check(mutation.call)
        except UnknownToolError:
            found[mutation.what] = [("unknown_tool", "$")]
        except InvalidArgumentsError as exc:
            found[mutation.what] = [(p.kind, p.path) for p in exc.problems]
        assert (mutation.kind, mutation.path) in found[mutation.what], mutation.what
    assert set(found) == {
        "drop required 'x'",
        "drop required 'y'",
        "wrong type for 'x'",
        "wrong type for 'y'",
        "wrong type for 'mode'",
        "value outside the enum of 'mode'",
        "unknown tool name",
    }


def test_check_entry_counts_and_reports_a_bad_ground_truth() -> None:
    good = bfcl.check_entry(entry([{"math.hypot": {"x": [4], "y": [5]}}]))
    assert (good.calls, good.validated, good.failures) == (1, 1, ())
    assert good.mutations == good.refused == 5
    bad = bfcl.check_entry(entry([{"math.hypot": {"x": ["four"], "y": [5]}}]))
    assert (bad.calls, bad.validated, bad.mutations) == (1, 0, 0)
    assert "$.x must be an integer; got the string 'four'" in bad.failures[0]


def write_data(folder: Path) -> None:
    record = {
        "id": "simple_python_0",
        "question": [],
        "function": [FUNCTION],
    }
    answer = {"id": "simple_python_0", "ground_truth": [{"math.hypot": {"x": [1], "y": [2]}}]}
    (folder / "possible_answer").mkdir(parents=True)
    (folder / "BFCL_v4_simple_python.json").write_text(json.dumps(record) + "\n")
    (folder / "possible_answer" / "BFCL_v4_simple_python.json").write_text(json.dumps(answer))


def test_data_is_found_in_a_folder_a_wheel_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "unpacked"
    write_data(data)
    wheel = tmp_path / "wheels" / "bfcl_eval-1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    with zipfile.ZipFile(wheel, "w") as archive:
        for path in data.rglob("*.json"):
            archive.write(path, "bfcl_eval/data/" + path.relative_to(data).as_posix())
    for location in (data, wheel, wheel.parent):
        source = bfcl.find_source(location)
        assert source is not None, location
        (found,) = source.entries("simple_python")
        assert found.id == "simple_python_0"
        assert found.ground_truth == ({"math.hypot": {"x": [1], "y": [2]}},)
    monkeypatch.setenv(bfcl.DATA_ENV, str(wheel.parent))
    source = bfcl.find_source()
    assert source is not None
    assert source.location == wheel
    assert bfcl.find_source(tmp_path / "nothing here") is not None  # falls back to the env
    monkeypatch.setenv(bfcl.DATA_ENV, str(tmp_path / "nothing here"))
    installed = importlib.util.find_spec("bfcl_eval") is not None
    assert (bfcl.find_source(tmp_path / "nothing here either") is None) is not installed
