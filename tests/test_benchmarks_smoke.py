"""The benchmarks' CI smoke: ``python -m benchmarks --fast`` checks every implementation's
output and must exit 0; the seeded inputs it shares with the tests must be deterministic and
mean what they claim."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import floor, inputs

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.timeout(330)  # the run itself is bounded at 300 s below
def test_fast_mode_checks_everything_and_exits_zero(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--fast", "--json", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "WRONG OUTPUT" not in proc.stdout
    import json

    report = json.loads(out.read_text())
    assert report["failures"] == []
    ours_w2 = {r["dialect"] for r in report["w2"] if r["role"] == "ours"}
    assert ours_w2 == set(inputs.W2_DIALECTS)
    assert any(r["role"] == "ours" for r in report["w1"])
    assert {r["mode"] for r in report["w3"] if r["role"] == "ours"} == {"event", "deltas"}


@pytest.mark.parametrize("dialect", inputs.W2_DIALECTS)
def test_inputs_are_deterministic_per_seed(dialect: str) -> None:
    a = inputs.parallel_calls(dialect, n_calls=3, arg_bytes=400, seed=7)
    b = inputs.parallel_calls(dialect, n_calls=3, arg_bytes=400, seed=7)
    c = inputs.parallel_calls(dialect, n_calls=3, arg_bytes=400, seed=8)
    assert a == b
    assert a.body != c.body


@pytest.mark.parametrize("dialect", inputs.W2_DIALECTS)
@pytest.mark.parametrize("chunk", [1, 7, 1460, 1 << 30])
def test_floor_reassembles_the_expected_calls_however_split(dialect: str, chunk: int) -> None:
    stream = inputs.parallel_calls(dialect, n_calls=3, arg_bytes=400)
    calls = floor.IMPLS[1].run(dialect, inputs.chunked(stream.body, chunk))
    assert calls == [(c.call_id, c.name, c.args) for c in stream.calls]
    assert len(calls) == 3


@pytest.mark.parametrize("mode", ["event", "deltas"])
@pytest.mark.parametrize("dialect", ["openai_chat", "anthropic", "openai_responses"])
def test_big_call_arguments_have_the_requested_size(dialect: str, mode: str) -> None:
    stream = inputs.big_call(dialect, 20_000, mode=mode)
    assert 18_000 <= stream.arg_bytes <= 22_000
    calls = floor.IMPLS[1].run(dialect, inputs.chunked(stream.body, 64))
    assert calls == [(c.call_id, c.name, c.args) for c in stream.calls]


def test_framing_stream_is_about_twenty_thousand_chat_events() -> None:
    stream = inputs.framing_stream()
    blocks = floor.frame([stream.body])
    assert len(blocks) == stream.n_events
    assert 18_000 <= stream.n_events <= 22_000
    assert blocks[-1] == "data: [DONE]"
    kinds = {"tool_calls" in b for b in blocks}
    assert kinds == {True, False}


@pytest.mark.parametrize("sep", [b"\n\n", b"\r\n\r\n"])
def test_the_floor_framer_finds_separators_cut_anywhere(sep: bytes) -> None:
    body = sep.join([b"data: a", b"data: \xc3\xa9", b"", b"data: b" * 5]) + sep + b"data: c"
    whole = floor.frame([body], sep)
    assert whole == ["data: a", "data: \u00e9", "", "data: b" * 5]
    for size in range(1, 9):
        assert floor.frame(inputs.chunked(body, size), sep) == whole
    for cut in range(len(body)):
        assert floor.frame([body[:cut], body[cut:]], sep) == whole


@pytest.mark.parametrize("dialect", inputs.W2_DIALECTS)
def test_event_reads_hold_one_or_two_whole_events(dialect: str) -> None:
    body = inputs.parallel_calls(dialect, n_calls=2, arg_bytes=300).body
    sep = b"\r\n\r\n" if dialect == "gemini" else b"\n\n"
    reads = inputs.event_reads(body)
    assert b"".join(reads) == body
    counts = {read.count(sep) for read in reads}
    assert counts == {1, 2}
    assert all(read.endswith(sep) for read in reads)


def test_the_partial_arguments_benchmark_checks_its_outputs() -> None:
    from benchmarks import bench_partial_json as bench

    for make in (bench.text_arguments, bench.record_arguments):
        text = make(3000)
        assert bench.timed(bench.preview, text, 1) > 0  # raises on a wrong preview
        assert bench.reparse(text) == bench.preview(text)
    assert bench.exponent([(10, 1.0), (100, 10.0), (1000, 100.0)]) == pytest.approx(1.0)


def test_the_parsed_events_benchmark_checks_its_outputs(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import bench_parsed as bench

    bench.main(["--fast"])  # asserts both ways give the same calls in every dialect
    out = capsys.readouterr().out
    assert all(dialect in out for dialect in bench.STREAMS)
