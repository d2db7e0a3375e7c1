"""The command line behaves (issue 17, item 5): ``--version``; every usage error one line
on standard error with exit status 2, never a traceback; ``serve`` logs each request and
plays its script to each new client (or loops); ``replay -`` reads standard input, shows
a turn without calls and, with ``--events``, the rich stream; every ``--help`` ends with
an example."""

from __future__ import annotations

import argparse
import io
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from sse_toolcalls.tooling.cli import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_STATUSES,
    EXIT_USAGE,
    build_parser,
    main,
)
from sse_toolcalls.tooling.simulator.cli import serve

from ..wire import Call, encode


def run_cli(
    argv: Sequence[str], capsys: pytest.CaptureFixture[str]
) -> tuple[int | str | None, str, str]:
    """(exit status, stdout, stderr) of one command, argparse's own exits included."""
    try:
        status: int | str | None = main(list(argv))
    except SystemExit as exit_:
        status = exit_.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import metadata

    status, out, _ = run_cli(["--version"], capsys)
    assert status == EXIT_OK
    assert out == f"sse-toolcalls {metadata.version('sse_toolcalls')}\n"


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


def usage_errors(tmp_path: Path, busy_port: int) -> list[tuple[list[str], str]]:
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{not json")
    bad_script = tmp_path / "bad_script.json"
    bad_script.write_text(json.dumps({"turns": [{"fault": {"kind": "meteor"}}]}))
    return [
        ([], "required: command"),
        (["launch"], "invalid choice"),
        (["serve", "--port", "x"], "not a whole number"),
        (["serve", "--port", "70000"], "0 to 65535"),
        (["serve", "--port", "-1"], "0 to 65535"),
        (["serve", "--script", str(tmp_path / "missing.json"), "--port", "0"], "cannot read"),
        (["serve", "--script", str(bad_json), "--port", "0"], "not JSON"),
        (["serve", "--script", str(bad_script), "--port", "0"], "turns[0].fault"),
        (["serve", "--port", str(busy_port)], f"cannot bind 127.0.0.1:{busy_port}"),
        (["replay", str(tmp_path / "nope.sse")], "cannot read"),
        (["replay", "-", "--chunk-size", "0"], "at least 1"),
        (["replay", "-", "--dialect", "cohere"], "invalid choice"),
        (["demo", "--delay", "nan"], "finite"),
        (["record", "--upstream", "http://x", "--out", "o", "--port", "99999"], "0 to 65535"),
        (["fuzz", "corpus", "--seconds", "soon"], "not a number"),
        (["check"], "required: folder"),
        (["check", str(tmp_path / "no_folder")], "is not a folder"),
    ]


def test_every_usage_error_is_one_line_with_status_2(
    tmp_path: Path, busy_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv, said in usage_errors(tmp_path, busy_port):
        status, out, err = run_cli(argv, capsys)
        assert status == EXIT_USAGE, (argv, err)
        assert out == "", (argv, out)
        assert err.count("\n") == 1 and err.endswith("\n"), (argv, err)
        assert err.startswith("sse-toolcalls"), (argv, err)
        assert "error:" in err and said in err, (argv, err)
        assert "Traceback" not in err


def test_the_exit_statuses_are_listed_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run_cli(["--help"], capsys)
    assert status == EXIT_OK
    assert {EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED} == set(EXIT_STATUSES)
    listed = out.split("exit statuses:")[1]
    for code, meaning in EXIT_STATUSES.items():
        assert f"{code:<4} {meaning}" in listed


def commands() -> list[str]:
    """Every subcommand of the parser (a command added later is checked too)."""
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return sorted(action.choices)
    raise AssertionError("the parser has no subcommands")


def test_every_command_has_help_with_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    names = commands()
    assert {"replay", "demo", "serve", "record", "check", "fuzz"} <= set(names)
    for name in names:
        status, out, _ = run_cli([name, "--help"], capsys)
        assert status == EXIT_OK, name
        example = out.split("example")[-1]
        assert f"sse-toolcalls {name}" in example, (name, out)


# -- replay ---------------------------------------------------------------------------


def stdin_of(monkeypatch: pytest.MonkeyPatch, raw: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))


TEXT_ONLY = (
    b'data: {"choices":[{"index":0,"delta":{"content":"Hello"}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{"content":" there"}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)


def test_replay_reads_standard_input_and_shows_a_turn_without_calls(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stdin_of(monkeypatch, TEXT_ONLY)
    status, out, err = run_cli(["replay", "-", "--chunk-size", "7"], capsys)
    assert (status, err) == (EXIT_OK, "")
    assert [json.loads(line) for line in out.splitlines()] == [
        {"text": "Hello there", "finish_reason": "stop"}
    ]


def test_replay_of_standard_input_prints_calls_as_from_a_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    raw = encode("anthropic", [Call("lookup", {"key": "height"}, "c1")])
    stdin_of(monkeypatch, raw)
    piped = run_cli(["replay", "-"], capsys)
    (tmp_path / "turn.sse").write_bytes(raw)
    from_file = run_cli(["replay", str(tmp_path / "turn.sse")], capsys)
    assert piped == from_file
    assert json.loads(piped[1])["call_id"] == "c1"  # calls only: no text line


def test_replay_events_prints_the_rich_stream(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = encode("openai_chat", [Call("lookup", {"key": "height"}, "c1")], fragment=4)
    stdin_of(monkeypatch, raw)
    status, out, _ = run_cli(["replay", "-", "--events"], capsys)
    assert status == EXIT_OK
    events = [json.loads(line) for line in out.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "call_started" and kinds[-1] == "finished"
    assert "arguments" in kinds and kinds.count("call_completed") == 1
    deltas = "".join(e["delta"] for e in events if e["event"] == "arguments")
    assert json.loads(deltas) == {"key": "height"}
    (completed,) = [e for e in events if e["event"] == "call_completed"]
    assert (completed["name"], completed["call_id"]) == ("lookup", "c1")
    assert events[-1]["calls"] == ["c1"]
    stdin_of(monkeypatch, TEXT_ONLY)
    _, out, _ = run_cli(["replay", "-", "--events"], capsys)
    texts = [json.loads(line) for line in out.splitlines()]
    assert texts[:2] == [{"event": "text", "text": "Hello"}, {"event": "text", "text": " there"}]
    assert texts[-1]["finish_reason"] == "stop"


def test_replay_of_a_cut_stream_from_standard_input_fails_with_status_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Cut before the closing chunk (with it, the turn is proven over even without [DONE]).
    stdin_of(monkeypatch, TEXT_ONLY[: TEXT_ONLY.index(b'data: {"choices":[{"index":0,"delta":{},')])
    status, out, _ = run_cli(["replay", "-", "--dialect", "openai_chat"], capsys)
    assert status == EXIT_FAILED
    assert json.loads(out.splitlines()[-1])["error"] == "TruncatedStreamError"


# -- serve ----------------------------------------------------------------------------


@contextmanager
def serving(script: dict[str, Any], tmp_path: Path, *, loop: bool = False) -> Iterator[Any]:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    out = io.StringIO()
    stop = threading.Event()
    status: list[int] = []
    thread = threading.Thread(
        target=lambda: status.append(serve(0, path, out=out, stop=stop, loop=loop)), daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 10
    while "listening on" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    base = out.getvalue().split("listening on ")[1].split()[0]
    try:
        yield base, out
    finally:
        stop.set()
        thread.join(10)
    assert status == [0]


def ask(base: str, messages: list[dict[str, Any]]) -> tuple[int, str]:
    """One Chat request; (status, the body as text)."""
    with httpx.Client(timeout=10) as http:
        response = http.post(
            base + "/v1/chat/completions",
            json={"model": "m", "stream": True, "messages": messages},
        )
        return response.status_code, response.text


HELLO = [{"role": "user", "content": "hi"}]


def request_lines(out: io.StringIO, count: int) -> list[str]:
    """The first ``count`` request lines, waiting for them: a line is written once its
    response has gone out, so it may follow the client's return by a moment."""
    deadline = time.monotonic() + 10
    while True:
        lines = [line for line in out.getvalue().splitlines() if " -> " in line]
        if len(lines) >= count or time.monotonic() > deadline:
            assert len(lines) == count, out.getvalue()
            return lines
        time.sleep(0.01)


def test_serve_logs_each_request_and_replays_its_script_to_each_new_client(
    tmp_path: Path,
) -> None:
    script = {
        "turns": [
            {"fault": {"kind": "http_error", "status": 503}},
            {"text": "Hello from the script.", "fragment_size": 100},
        ]
    }
    with serving(script, tmp_path) as (base, out):
        for _ in range(2):  # two clients, one after the other
            assert ask(base, HELLO)[0] == 503
            # The client retries the same request: the next turn, not the script again.
            status, body = ask(base, HELLO)
            assert status == 200 and "Hello from the script." in body
        lines = request_lines(out, 4)
    first, second = lines[0], lines[1]
    assert "openai_chat /v1/chat/completions -> 503 turn 1 fault HTTPError(503)" in first
    assert "openai_chat /v1/chat/completions -> 200 turn 2 fault none" in second
    # The second client's two lines are the first's (less the time of day).
    assert [line.split(" ", 1)[1] for line in lines[2:]] == [
        line.split(" ", 1)[1] for line in lines[:2]
    ]


def test_serve_says_when_a_conversation_outruns_its_script_and_loop_wraps(
    tmp_path: Path,
) -> None:
    script = {"turns": [{"text": "only turn", "fragment_size": 100}]}
    going_on = [
        *HELLO,
        {"role": "assistant", "content": "only turn"},
        {"role": "user", "content": "and?"},
    ]
    with serving(script, tmp_path) as (base, out):
        assert ask(base, HELLO)[0] == 200
        status, body = ask(base, going_on)
        assert status == 400 and "no turn is left" in body
        assert "-> 400 turn - fault none" in request_lines(out, 2)[-1]
    with serving(script, tmp_path, loop=True) as (base, out):
        assert "round and round" in out.getvalue()
        for messages in (HELLO, going_on, going_on):
            status, body = ask(base, messages)
            assert status == 200 and "only turn" in body
        assert all("-> 200 turn 1" in line for line in request_lines(out, 3))


def test_a_wrong_path_is_logged_too(tmp_path: Path) -> None:
    with serving({"turns": [{"text": "x"}]}, tmp_path) as (base, out):
        with httpx.Client(timeout=10) as http:
            assert http.post(base + "/v2/nothing", json={}).status_code == 404
        assert "- /v2/nothing -> 404 turn - fault none" in request_lines(out, 1)[-1]


def test_ctrl_c_is_status_130_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sse_toolcalls.tooling.cli

    def interrupted(*args: Any, **kwargs: Any) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(sse_toolcalls.tooling.cli, "replay", interrupted)
    assert run_cli(["replay", "-"], capsys) == (EXIT_INTERRUPTED, "", "")


def test_replay_events_names_each_whole_reasoning_block(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    own = Path(__file__).resolve().parents[2] / "recorded_streams"
    raw = (own / "anthropic" / "thinking_then_tool_use.sse").read_bytes()
    stdin_of(monkeypatch, raw)
    status, out, _ = run_cli(["replay", "-", "--dialect", "anthropic", "--events"], capsys)
    assert status == EXIT_OK
    events = [json.loads(line) for line in out.splitlines()]
    (block,) = [e for e in events if e["event"] == "reasoning_completed"]
    thought = "".join(e["text"] for e in events if e["event"] == "reasoning")
    assert block == {"event": "reasoning_completed", "kind": "thinking", "chars": len(thought)}
    assert thought and events[-1]["event"] == "finished"
