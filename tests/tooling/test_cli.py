"""The command line: replay prints calls or the error, demo completes on every dialect."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from sse_toolcalls import DIALECTS, Dialect
from sse_toolcalls.tooling.cli import main
from sse_toolcalls.tooling.demo import run_demo_async

from ..wire import Call, encode


def test_replay_prints_one_json_line_per_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stream = tmp_path / "turn.sse"
    calls = [Call("lookup", {"key": "height"}, "c1"), Call("lookup", {"key": "weight"}, "c2")]
    stream.write_bytes(encode("anthropic", calls))
    assert main(["replay", str(stream), "--chunk-size", "3"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(c["name"], c["args"], c["call_id"], c["provider"]) for c in lines] == [
        ("lookup", {"key": "height"}, "c1", "anthropic"),
        ("lookup", {"key": "weight"}, "c2", "anthropic"),
    ]


def test_replay_reports_truncation_as_json_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = encode("openai_chat", [Call("f", {"text": "a long value"}, "c1")], fragment=4)
    stream = tmp_path / "cut.sse"
    stream.write_bytes(raw[: raw.index(b" val")])
    assert main(["replay", str(stream), "--dialect", "openai_chat"]) == 1
    error = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert error["error"] == "TruncatedStreamError"
    assert error["partial"][0]["call_id"] == "c1"
    assert error["partial"][0]["raw_arguments"].startswith('{"text": "a ')


def test_replay_reports_provider_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stream = tmp_path / "err.sse"
    stream.write_bytes(
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    assert main(["replay", str(stream)]) == 1
    error = json.loads(capsys.readouterr().out)
    assert (error["error"], error["code"], error["retryable"]) == (
        "ProviderError",
        "overloaded_error",
        True,
    )


def test_replay_missing_file_is_a_usage_failure(tmp_path: Path) -> None:
    assert main(["replay", str(tmp_path / "nope.sse")]) == 2


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("lang", ["en", "pt-BR"])
def test_demo_completes_on_every_dialect(dialect: Dialect, lang: str) -> None:
    out = io.StringIO()
    status = anyio.run(lambda: run_demo_async(dialect=dialect, lang=lang, out=out))
    shown = out.getvalue()
    assert status == 0, shown
    assert "170 cm" in shown and "70 kg" in shown
    final = shown.strip().splitlines()[-3]
    assert "170 cm" in final and "70 kg" in final, final
    # One line per event of the exchange: no blank line inside it, whatever order the
    # dialect streams the calls in (Chat's two calls used to leave one after "#0 complete").
    exchange = shown.split("\n\n")[1]
    assert exchange.count("✓") == 2 and exchange.count("↩") == 2, shown


def test_console_script_runs_the_demo() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sse_toolcalls",
            "demo",
            "--dialect",
            "openai_responses",
            "--delay",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "You are 170 cm tall and weigh 70 kg." in result.stdout
