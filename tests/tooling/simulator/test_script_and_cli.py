"""The JSON script format and the `serve` entry point the CLI wires up."""

from __future__ import annotations

import io
import json
import threading
import time
from pathlib import Path

import httpx
import pytest

from sse_toolcalls import iter_tool_calls
from sse_toolcalls.errors import UsageError
from sse_toolcalls.tooling.simulator import (
    ExpectedResult,
    HTTPError,
    ScriptedCall,
    Stall,
    Turn,
    load_script,
    script_from_json,
)
from sse_toolcalls.tooling.simulator.cli import serve

SCRIPT = {
    "model": "demo-1",
    "turns": [
        {
            "text": "Looking.",
            "calls": [{"name": "lookup_demo_value", "args": {"key": "height"}, "call_id": "c1"}],
            "fragment_size": 2,
            "fault": {"kind": "stall", "seconds": 0.01, "after_events": 1},
        },
        {
            "text": "170 cm.",
            "fault": {"kind": "http_error", "status": 429, "retry_after": "2"},
            "expect_results": [{"call_position": 0, "contains": "170"}],
        },
    ],
}


def test_a_json_script_builds_the_dataclasses(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(SCRIPT))
    script = load_script(path)
    assert script.model == "demo-1"
    first, second = script.turns
    assert first.calls == (
        ScriptedCall(name="lookup_demo_value", args={"key": "height"}, call_id="c1"),
    )
    assert first.fault == Stall(seconds=0.01, after_events=1)
    assert second == Turn(
        text="170 cm.",
        fault=HTTPError(status=429, retry_after="2"),
        expect_results=(ExpectedResult(call_position=0, contains="170"),),
    )


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"turns": "no"}, "turns"),
        ({"turns": [{"fault": {"kind": "meteor"}}]}, "turns[0].fault"),
        ({"turns": [{"calls": [{"name": "f"}]}]}, "turns[0].calls[0]"),
        ({"turns": [{"txt": "typo"}]}, "turns[0]"),
    ],
)
def test_a_bad_script_says_where(data: object, where: str) -> None:
    with pytest.raises(UsageError, match=where.replace("[", r"\[").replace("]", r"\]")):
        script_from_json(data)


def test_an_unreadable_script_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        load_script(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(UsageError):
        load_script(tmp_path / "bad.json")


def test_serve_plays_a_script_file_until_stopped(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(SCRIPT))
    out = io.StringIO()
    stop = threading.Event()
    status: list[int] = []
    thread = threading.Thread(
        target=lambda: status.append(serve(0, path, out=out, stop=stop)), daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 10
    while "listening on" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    base = out.getvalue().split("listening on ")[1].split()[0]
    with httpx.Client() as http:
        url = base + "/v1/chat/completions"
        with http.stream("POST", url, json={"stream": True}) as response:
            calls = list(iter_tool_calls(response, "openai_chat"))
    assert [(c.call_id, c.args) for c in calls] == [("c1", {"key": "height"})]
    stop.set()
    thread.join(10)
    assert status == [0]
    assert "anthropic" in out.getvalue()


def test_the_fixture_serves_and_records(simulator) -> None:  # type: ignore[no-untyped-def]
    simulator.play([Turn(text="hello")])
    url = simulator.base_url_for("anthropic") + "/v1/messages"
    with httpx.Client() as http, http.stream("POST", url, json={"stream": True}) as response:
        assert list(iter_tool_calls(response, "anthropic")) == []
    (request,) = simulator.requests
    assert (request.dialect, request.body, request.turn_number) == (
        "anthropic",
        {"stream": True},
        0,
    )
    simulator.assert_no_problems()
    with httpx.Client() as http:
        refused = http.post(url, json={"stream": True})
    assert refused.status_code == 400
    assert "no turn is left" in refused.json()["error"]["message"]
    with pytest.raises(AssertionError, match="no turn is left"):
        simulator.assert_no_problems()


def test_every_fault_but_raw_bytes_has_a_json_kind() -> None:
    import typing

    from sse_toolcalls.tooling.simulator import Fault, RawBody
    from sse_toolcalls.tooling.simulator.script import _FAULT_KINDS

    # The JSON format has no bytes; every other fault is scriptable from a file.
    assert set(_FAULT_KINDS.values()) == set(typing.get_args(Fault)) - {RawBody}
