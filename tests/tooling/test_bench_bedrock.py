"""The Bedrock benchmark (``benchmarks/bench_bedrock.py``): its inputs, its floor and its
output check. Nothing here is timed; the figures are the benchmark's to print."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from botocore.eventstream import EventStreamBuffer  # type: ignore[import-untyped]
from hypothesis import given
from hypothesis import strategies as st

from benchmarks import bench_bedrock as bench
from benchmarks.model import Call
from tests.outside import outside_corpus

ROOT = Path(__file__).resolve().parent.parent.parent
_SMALL = bench.synthetic_converse(8)
_SMALL_TURN = _SMALL.bodies[0]
_SMALL_TURN_PAYLOADS = [bytes(p) for p in bench.floor_payloads([_SMALL_TURN])]
_SMALL_TURN_CALLS = _SMALL.expected
# The peers that load in a second; litellm's import alone takes about 10 s (the slow test).
QUICK_PEERS = "boto3,botocore-buffer,anthropic-sdk"


@pytest.mark.parametrize("make", [bench.synthetic_converse, bench.synthetic_anthropic])
def test_the_synthetic_turns_are_what_botocore_reads(make: Callable[[int], bench.Group]) -> None:
    group = make(40)
    buffer = EventStreamBuffer()  # checks both CRCs of every message
    buffer.add_data(group.bodies[0])
    messages = list(buffer)
    assert not buffer._data
    assert len(messages) == group.events
    assert {m.headers[":message-type"] for m in messages} == {"event"}
    assert [len(calls) for calls in group.expected] == [4]
    # Read size 0: one whole message a read.
    reads = bench.chunked(group.bodies[0], 0)
    assert b"".join(reads) == group.bodies[0] and len(reads) == group.events
    assert all(bench.message_count(read) == 1 for read in reads)
    # Every contender that needs nothing installed gives the generator's calls, whole
    # and in reads that cut every message.
    for read in bench.READS:
        streams = [(group.dialect, bench.chunked(group.bodies[0], read))]
        assert bench.ours(streams) == group.expected
        assert bench.floor(streams) == group.expected
        assert bench.floor_crc(streams) == group.expected


def test_the_floor_walk_holds_at_every_cut() -> None:
    body = bench.synthetic_converse(8).bodies[0]
    assert len(bench.floor_payloads([body])) == bench.message_count(body)
    # The first five messages, cut once at every byte and read in every small size.
    end = 0
    for _ in range(5):
        end += int.from_bytes(body[end : end + 4], "big")
    part = body[:end]
    whole = [bytes(payload) for payload in bench.floor_payloads([part])]
    assert len(whole) == 5 and whole[0].startswith(b'{"p":') and whole[0].endswith(b"}")
    for cut in range(len(part) + 1):
        assert [bytes(p) for p in bench.floor_payloads([part[:cut], part[cut:]])] == whole, cut
    for size in range(1, 40):
        got = bench.floor_payloads(bench.chunked(part, size))
        assert [bytes(p) for p in got] == whole, size


@given(cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_the_floor_walk_holds_however_the_body_is_cut(cuts: list[int]) -> None:
    body = _SMALL_TURN
    points = sorted({cut % (len(body) + 1) for cut in cuts})
    reads = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    assert [bytes(p) for p in bench.floor_payloads(reads)] == _SMALL_TURN_PAYLOADS
    assert bench.floor([("bedrock_converse", reads)]) == _SMALL_TURN_CALLS


def test_the_layers_split_ours_time(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--layers", "--fast", "--deltas", "40"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(",")[1].strip() for line in out] == [
        "bedrock_converse (40 deltas)",
        "bedrock_anthropic (40 deltas)",
    ]
    for line in out:
        assert "messages" in line and "events" in line and "calls" in line


def test_unknown_peers_are_refused() -> None:
    with pytest.raises(SystemExit) as raised:
        bench.main(["--fast", "--peers", "boto4"])
    assert raised.value.code == 2


def test_the_checked_floor_checks_both_crcs() -> None:
    # floor+crc is shown as the least cost of the integrity check: it must make it.
    body = bench.synthetic_converse(8).bodies[0]
    first = int.from_bytes(body[:4], "big")
    for at in (9, first - 5, first - 1):  # the prelude's CRC, the payload, the message CRC
        broken = body[:at] + bytes([body[at] ^ 1]) + body[at + 1 :]
        assert len(bench.floor_payloads([broken])) == bench.message_count(body)
        with pytest.raises(bench.ChecksumError):
            bench.floor_payloads([broken], crc=True)


def test_the_check_names_a_contender_that_gives_other_calls() -> None:
    group = bench.synthetic_converse(40)
    streams = [(group.dialect, bench.chunked(group.bodies[0], 64))]

    def dropped_fragment(streams: bench.Streams) -> list[list[Call]]:
        # The floor's answer with one argument value changed: a reassembly that lost one.
        calls = bench.floor(streams)
        call_id, name, args = calls[0][-1]
        calls[0][-1] = (call_id, name, {**args, "line": -1})
        return calls

    wrong = bench.Contender(
        name="wrong", role="peer", dialects=("bedrock_converse",), run=dropped_fragment
    )
    right = bench.Contender(
        name="ours", role="ours", dialects=("bedrock_converse",), run=bench.ours
    )
    assert bench.check(right, streams, group.expected) is None
    problem = bench.check(wrong, streams, group.expected)
    assert problem is not None and problem.startswith("body 0:")


@outside_corpus
def test_fast_mode_checks_every_contender_on_every_recording(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert bench.main(["--fast", "--peers", QUICK_PEERS]) == 0
    out = capsys.readouterr().out
    # Every recording of the manifest (16 when this was written), in its two dialects, and
    # both synthetic turns.
    groups = bench.recordings()
    assert sum(len(group.bodies) for group in groups) == len(bench.manifest()) >= 16
    for group in groups:
        assert f"recordings, {group.dialect} ({len(group.bodies)} files)" in out
    assert "synthetic, bedrock_converse (200 deltas)" in out
    assert "synthetic, bedrock_anthropic (200 deltas)" in out
    assert "outputs checked" in out and "WRONG" not in out
    for name in ("ours", "floor", "floor+crc", *QUICK_PEERS.split(",")):
        assert name in out


@outside_corpus
def test_fast_mode_fails_on_a_wrong_contender(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def wrong_peer() -> bench.Contender:
        def run(streams: bench.Streams) -> list[list[Call]]:
            # Every body's calls but the last one's.
            return [*bench.floor(streams)[:-1], []]

        return bench.Contender(
            name="wrong",
            role="peer",
            dialects=("bedrock_converse", "bedrock_anthropic"),
            run=run,
        )

    monkeypatch.setattr(bench, "PEERS", (*bench.PEERS, wrong_peer))
    assert bench.main(["--fast", "--peers", "wrong"]) == 1
    out = capsys.readouterr().out
    assert "WRONG OUTPUT" in out
    # Each group's last body has calls except the recordings of InvokeModel's (text only).
    assert "wrong, synthetic, bedrock_converse (200 deltas), 64 B: body 0:" in out
    assert "outputs checked" not in out


@pytest.mark.slow
@outside_corpus
@pytest.mark.timeout(600)
def test_fast_mode_with_every_peer_installed() -> None:
    # In a process of its own: litellm's import warns, and warnings are errors here.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_bedrock", "--fast"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "outputs checked" in proc.stdout
    for module, name in (("litellm", "litellm"), ("anthropic", "anthropic-sdk")):
        if importlib.util.find_spec(module) is not None:
            assert f"{name}/ours" in proc.stdout, proc.stdout
