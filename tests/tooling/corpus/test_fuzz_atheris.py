"""``sse-toolcalls fuzz`` with the atheris engine: quiet on main's parser, finds a defect
planted in its child process, saves it where ``check`` replays it; ``--engine auto``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sse_toolcalls import ToolCallParser
from sse_toolcalls.tooling.cli import main
from sse_toolcalls.tooling.corpus import atheris_engine, check_corpus
from sse_toolcalls.tooling.corpus.atheris_engine import fuzz_corpus_atheris

from . import _planted
from .test_fuzz import corpus

ROOT = Path(__file__).resolve().parents[3]

# Without the fuzz extra these skip on a developer's machine; in CI (CI=true) atheris is
# installed before the tests, and a missing one must fail, not skip.
needs_atheris = pytest.mark.skipif(
    not atheris_engine.available() and not os.environ.get("CI"),
    reason="atheris is not installed (the fuzz extra: pip install -e '.[fuzz]')",
)


@pytest.fixture
def importable_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child process imports tests.tooling.corpus._planted: put the checkout on its path."""
    path = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    monkeypatch.setenv("PYTHONPATH", ":".join(path))


@needs_atheris
def test_main_parser_gives_no_findings(tmp_path: Path) -> None:
    folder = corpus(tmp_path / "c", ("anthropic", "gemini"))
    # The growth check is the shared one (tests/tooling/corpus/test_fuzz.py); its timing is no
    # part of this engine, and a loaded machine can make it noisy.
    report = fuzz_corpus_atheris(folder, seconds=60, runs=1500, seed=1, check_growth_first=False)
    assert report.findings == ()
    assert report.inputs >= 2 * 1500


@needs_atheris
def test_a_planted_crash_is_found_in_the_child_and_saved_to_replay(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    importable_tests: None,
) -> None:
    monkeypatch.setenv("SSE_TOOLCALLS_FUZZ_IMPORT", "tests.tooling.corpus._planted:plant")
    folder = corpus(tmp_path / "c", ("anthropic",))
    findings = tmp_path / "found"
    argv = ["fuzz", str(folder), "--engine", "atheris", "--runs", "3000", "--seed", "1"]
    status = main([*argv, "--findings", str(findings)])
    out = capsys.readouterr().out
    assert status == 1, out
    assert "FINDING crash-IndexError: IndexError: planted" in out
    assert out.splitlines()[-1].startswith("atheris: ")
    entries = json.loads((findings / "MANIFEST.json").read_text())
    crash = next(e for e in entries if e["finding"] == "crash-IndexError")
    assert crash["dialect"] == "anthropic"
    assert b"\xff" in (findings / crash["file"]).read_bytes()
    # The saved finding replays in the checker, on the same scratch parser; on main's it holds.
    monkeypatch.setattr(ToolCallParser, "feed", _planted.planted_feed)
    (result,) = [r for r in check_corpus(findings) if r.file == crash["file"]]
    assert result.problem is not None and "IndexError" in result.problem
    monkeypatch.undo()
    (result,) = [r for r in check_corpus(findings) if r.file == crash["file"]]
    assert result.problem is None


@needs_atheris
def test_auto_picks_atheris_when_it_imports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = corpus(tmp_path / "c", ("gemini",))
    assert main(["fuzz", str(folder), "--runs", "200", "--seed", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("atheris: ")


def test_auto_falls_back_to_hypothesis_without_atheris(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(atheris_engine, "available", lambda: False)
    folder = corpus(tmp_path / "c", ("gemini",))
    assert main(["fuzz", str(folder), "--runs", "50", "--seed", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("hypothesis: ")
    assert main(["fuzz", str(folder), "--engine", "atheris", "--runs", "50"]) == 2
    assert "atheris is not installed" in capsys.readouterr().err
