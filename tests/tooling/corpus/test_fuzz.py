"""``sse-toolcalls fuzz``: quiet on a correct parser, finds defects planted in a scratch one."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from sse_toolcalls import Dialect, ToolCall, ToolCallParser
from sse_toolcalls.runtime import ToolRegistry
from sse_toolcalls.tooling.cli import main
from sse_toolcalls.tooling.corpus import check_corpus
from sse_toolcalls.tooling.corpus.fuzz import check_growth, fuzz_corpus

from ...wire import Call, encode


def corpus(folder: Path, dialects: tuple[str, ...] = ("openai_chat", "anthropic")) -> Path:
    folder.mkdir()
    entries = []
    for dialect in dialects:
        calls = [
            Call("lookup", {"key": "height", "n": 3}, "c1"),
            Call("lookup", {"key": "w"}, "c2"),
        ]
        (folder / f"{dialect}.sse").write_bytes(encode(dialect, calls, fragment=6))
        entries.append({"file": f"{dialect}.sse", "provider": dialect})
    (folder / "MANIFEST.json").write_text(json.dumps(entries))
    return folder


def test_the_parser_on_main_gives_no_findings(tmp_path: Path) -> None:
    # The baseline of the planted defects below: a fixed amount of seeded work. (Chat is
    # left out: events after [DONE] still reach StreamParser, a known open finding,
    # tests/tooling/fuzz/findings/openai_chat/invariant-rich-finished, which this fuzzer found
    # too: in 3 s on this test's two-call Chat stream.)
    folder = corpus(tmp_path / "c", ("anthropic", "gemini"))
    report = fuzz_corpus(folder, seconds=60, seed=1, max_inputs=300)
    assert report.findings == () and report.inputs >= 300


def test_a_planted_crash_is_found_and_saved_to_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = ToolCallParser.feed

    def feed(self: ToolCallParser, data: bytes) -> list[ToolCall]:
        if b"\xff" in data:  # a scratch parser that trips on one byte value
            raise IndexError("planted")
        return real(self, data)

    monkeypatch.setattr(ToolCallParser, "feed", feed)
    folder = corpus(tmp_path / "c", ("anthropic",))
    findings = tmp_path / "found"
    status = main(
        [
            "fuzz",
            str(folder),
            "--engine",
            "hypothesis",
            "--seconds",
            "20",
            "--seed",
            "3",
            "--findings",
            str(findings),
        ]
    )
    assert status == 1
    out = capsys.readouterr().out
    assert "FINDING crash-IndexError: IndexError: planted" in out
    entries = json.loads((findings / "MANIFEST.json").read_text())
    crash = next(e for e in entries if e["finding"] == "crash-IndexError")
    stream = (findings / crash["file"]).read_bytes()
    assert b"\xff" in stream
    # The saved finding replays in the checker.
    (result,) = [r for r in check_corpus(findings) if r.file == crash["file"]]
    assert result.problem is not None and "IndexError" in result.problem


def test_a_planted_split_dependence_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = ToolCallParser.feed

    def feed(self: ToolCallParser, data: bytes) -> list[ToolCall]:
        calls = real(self, data)
        return calls if len(data) % 2 == 0 or len(data) > 4096 else []

    monkeypatch.setattr(ToolCallParser, "feed", feed)
    folder = corpus(tmp_path / "c", ("anthropic",))
    report = fuzz_corpus(folder, seconds=8, seed=5, check_growth_first=False)
    assert any(f.kind.startswith("split-") for f in report.findings), report.findings


GROWN = encode("anthropic", [Call("f", {"text": "x" * 40}, "c1")], fragment=10)
"""The growth checks' stream (grown 8- and 64-fold by check_growth: 10 and 79 KB)."""


class Rescanning(ToolCallParser):
    """A scratch parser that scans everything it has read so far on every read: the
    quadratic bug STYLE 4 warns of (a buffer or a growing string scanned per delta)."""

    def __init__(self, dialect: Dialect | None) -> None:
        super().__init__(dialect)
        self.seen = bytearray()

    def feed(self, data: bytes) -> list[ToolCall]:
        self.seen += data
        self.rescan()
        return super().feed(data)

    def rescan(self) -> None:
        # CPU work in proportion to what was read: at the 8-fold size it costs several
        # times the real parse (a quadratic that small would not be the parser's), so
        # at 64-fold it is 60 times that, far past the 32-fold bar, under coverage too
        # (the scan is C, which coverage does not slow, while the parse slows twofold).
        # Three scans a read were too few: under coverage on a loaded CI machine one of
        # the three confirmations measured under the bar (a fresh-clone run, 2026-12-02).
        for _ in range(6):
            re.findall(rb'"', self.seen)


class Waiting(Rescanning):
    """The same growth of wall time, spent waiting rather than working: what a busy
    machine does to a linear parser that loses its core (a neighbour's job runs)."""

    def rescan(self) -> None:
        time.sleep(len(self.seen) * 3e-8)


@pytest.mark.timeout(300)
def test_a_planted_quadratic_parse_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_growth(GROWN, "anthropic") is None
    import sse_toolcalls.tooling.corpus.fuzz as fuzz

    monkeypatch.setattr(fuzz, "ToolCallParser", Rescanning)
    found = check_growth(GROWN, "anthropic")
    assert found is not None and found.kind == "growth-time", found


@pytest.mark.timeout(300)
def test_time_spent_waiting_is_no_growth(monkeypatch: pytest.MonkeyPatch) -> None:
    # The wall clock of this parser grows quadratically (the old check, on wall time,
    # reported it: the flakes of a loaded machine, made deterministic); its work does not.
    import sse_toolcalls.tooling.corpus.fuzz as fuzz

    monkeypatch.setattr(fuzz, "ToolCallParser", Waiting)
    assert check_growth(GROWN, "anthropic") is None


def test_hostile_arguments_reach_the_registry_but_never_a_handler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: list[Any] = []
    registry = ToolRegistry()

    @registry.register
    def lookup(key: str, n: int = 0) -> str:
        ran.append(key)
        return key

    seen: list[str] = []
    real_check = registry.check

    def check(call: ToolCall) -> Any:
        seen.append(call.name)
        if call.args.get("n") == 3:
            raise TypeError("a validator that breaks on an argument")  # planted
        return real_check(call)

    monkeypatch.setattr(registry, "check", check)
    module = ModuleType("user_tools")
    module.registry = registry  # type: ignore[attr-defined]
    monkeypatch.setitem(__import__("sys").modules, "user_tools", module)
    folder = corpus(tmp_path / "c")
    status = main(
        [
            "fuzz",
            str(folder),
            "--engine",
            "hypothesis",
            "--seconds",
            "5",
            "--seed",
            "2",
            "--registry",
            "user_tools:registry",
        ]
    )
    assert status == 1 and seen and ran == []
    entries = json.loads((folder / "findings" / "MANIFEST.json").read_text())
    assert [e["finding"] for e in entries] == ["registry-crash-TypeError"]


def test_a_bad_registry_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = corpus(tmp_path / "c")
    assert main(["fuzz", str(folder), "--seconds", "1", "--registry", "nope"]) == 2
    assert "module:attribute" in capsys.readouterr().err
