"""``sse-toolcalls check``: passes on our corpora, finds defects planted in the parser."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from sse_toolcalls import ToolCall, ToolCallParser
from sse_toolcalls.tooling.cli import main
from sse_toolcalls.tooling.corpus import assert_stream_invariants, check_corpus, check_stream
from sse_toolcalls.tooling.corpus.check import EVERY_CUT_MAX_BYTES, _cuts

from ...wire import Call, encode

ROOT = Path(__file__).resolve().parents[3]
RECORDED = ROOT / "recorded_streams"
TWO_CALLS = [Call("lookup", {"key": "height"}, "c1"), Call("lookup", {"key": "weight"}, "c2")]


def small_corpus(folder: Path) -> Path:
    """A corpus of one stream per dialect, two calls each, with a manifest."""
    entries = []
    for dialect in ("openai_chat", "openai_responses", "anthropic", "gemini"):
        name = f"{dialect}/two.sse"
        (folder / dialect).mkdir(parents=True)
        (folder / name).write_bytes(encode(dialect, TWO_CALLS, fragment=5))
        want = [{"name": c.name, "args": c.args, "call_id": c.call_id} for c in TWO_CALLS]
        entries.append(
            {"file": name, "provider": dialect, "expected": {"outcome": "complete", "calls": want}}
        )
    (folder / "MANIFEST.json").write_text(json.dumps(entries))
    return folder


def test_a_correct_corpus_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = small_corpus(tmp_path / "c")
    assert [r.problem for r in check_corpus(corpus)] == [None] * 4
    assert main(["check", str(corpus)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "4 passed, 0 failed"


Patch = Callable[[pytest.MonkeyPatch], None]


def split_dependent(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scratch parser that loses the calls a one-byte feed completes."""
    real = ToolCallParser.feed

    def feed(self: ToolCallParser, data: bytes) -> list[ToolCall]:
        calls = real(self, data)
        return [] if len(data) == 1 else calls

    monkeypatch.setattr(ToolCallParser, "feed", feed)


def drops_a_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scratch parser that never releases a stream's second call."""
    real_feed, real_finish = ToolCallParser.feed, ToolCallParser.finish

    def feed(self: ToolCallParser, data: bytes) -> list[ToolCall]:
        return [c for c in real_feed(self, data) if c.index != 1]

    def finish(self: ToolCallParser) -> list[ToolCall]:
        return [c for c in real_finish(self) if c.index != 1]

    monkeypatch.setattr(ToolCallParser, "feed", feed)
    monkeypatch.setattr(ToolCallParser, "finish", finish)


def crashes_on_a_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scratch parser that lets a KeyError out when a feed ends inside ``"key"``."""
    real = ToolCallParser.feed

    def feed(self: ToolCallParser, data: bytes) -> list[ToolCall]:
        if data.endswith(b'"ke'):
            raise KeyError("ke")
        return real(self, data)

    monkeypatch.setattr(ToolCallParser, "feed", feed)


@pytest.mark.parametrize(
    ("plant", "found"),
    [
        (split_dependent, "[byte by byte] gave 0 calls"),
        (drops_a_call, "calls differ"),
        (crashes_on_a_cut, "raised KeyError"),
    ],
    ids=["split-dependent", "drops a call", "crashes at a cut"],
)
def test_planted_defects_are_found_with_one_line_per_stream(
    plant: Patch,
    found: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    corpus = small_corpus(tmp_path / "c")
    plant(monkeypatch)
    assert main(["check", str(corpus)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].endswith("failed") and not lines[-1].endswith(" 0 failed")
    fails = lines[:-1]
    assert fails and all(line.startswith("FAIL ") and "\n" not in line for line in fails)
    assert any(found in line for line in fails), fails


def test_expected_calls_are_compared_with_their_types(tmp_path: Path) -> None:
    raw = encode("anthropic", [Call("f", {"n": 1}, "c1")])
    right = {"outcome": "complete", "calls": [{"name": "f", "args": {"n": 1}, "call_id": "c1"}]}
    wrong = {"outcome": "complete", "calls": [{"name": "f", "args": {"n": 1.0}, "call_id": "c1"}]}
    assert check_stream(raw, dialect="anthropic", expected=right) is None
    problem = check_stream(raw, dialect="anthropic", expected=wrong)
    assert problem is not None and "calls differ" in problem
    assert "expected truncated" in str(
        check_stream(raw, dialect="anthropic", expected={"outcome": "truncated"})
    )


def test_the_prefix_property_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    # A parser that releases a call whose stream was cut (no truncation error): whole
    # and every split agree with each other, so only the prefix check can catch it.
    raw = encode("anthropic", TWO_CALLS)
    real = ToolCallParser.finish

    def finish(self: ToolCallParser) -> list[ToolCall]:
        try:
            return real(self)
        except Exception:
            return [ToolCall(name="ghost", args={}, call_id="g", index=9, provider="anthropic")]

    monkeypatch.setattr(ToolCallParser, "finish", finish)
    problem = check_stream(raw, dialect="anthropic")
    assert problem is not None and "cut at" in problem and "ghost" in problem


def test_the_cut_rule() -> None:
    small = b"data: {}\n\n" * 10
    assert _cuts(small, random.Random(1)) == list(range(len(small)))
    large = b"data: {}\n\n" * (EVERY_CUT_MAX_BYTES // 10 + 1)
    cuts = _cuts(large, random.Random(1))
    assert len(cuts) < len(large) and {8, 9, 10, 11} <= set(cuts)


def test_assert_stream_invariants_reads_the_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = small_corpus(tmp_path / "c")
    stream = corpus / "openai_chat" / "two.sse"
    assert_stream_invariants(stream)
    drops_a_call(monkeypatch)
    with pytest.raises(AssertionError, match="calls differ"):
        assert_stream_invariants(stream)


def test_a_folder_without_a_manifest_is_every_stream_detected(tmp_path: Path) -> None:
    first = sorted((RECORDED / "anthropic").glob("*.sse"))[0]
    shutil.copy(first, tmp_path / "a.sse")
    assert [r.file for r in check_corpus(tmp_path)] == ["a.sse"]


def test_unreadable_corpora_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "MANIFEST.json").write_text('{"not": "a list"}')
    assert main(["check", str(tmp_path)]) == 2
    assert "expected a JSON list" in capsys.readouterr().err
