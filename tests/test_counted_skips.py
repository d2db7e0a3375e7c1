"""The counted skips (tests/counted_skips.py): a skip that the allowlist does not explain
fails a strict run, one that it explains does not, and a line without a reason is refused.
Each case is a real pytest run in a subprocess, on one worker and on two."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.counted_skips import ALLOWLIST, ALLOWLIST_ENV, STRICT_ENV, read_allowlist

ROOT = Path(__file__).resolve().parents[1]

PLANTED = """
import pytest

def test_runs():
    assert True

def test_planted_skip():
    pytest.skip("planted: the machine lacks something")

@pytest.mark.xfail(reason="an expected failure is no skip", strict=True)
def test_expected_failure():
    assert False
"""


def run(
    tmp_path: Path, allowlist: str, *, strict: bool, workers: int
) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_planted.py").write_text(PLANTED)
    (tmp_path / "allowed.txt").write_text(allowlist)
    env = dict(os.environ, **{ALLOWLIST_ENV: str(tmp_path / "allowed.txt")})
    env.pop(STRICT_ENV, None)
    if strict:
        env[STRICT_ENV] = "1"
    args = ["-n", str(workers)] if workers else ["-p", "no:xdist"]
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "tests.counted_skips",
            "-p",
            "no:cacheprovider",
            "-q",
            "-o",
            "addopts=",
            "--rootdir",
            str(tmp_path),
            *args,
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("workers", [0, 2])
def test_an_unexplained_skip_fails_a_strict_run(tmp_path: Path, workers: int) -> None:
    done = run(tmp_path, "# nothing allowed\n", strict=True, workers=workers)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "skips not on tests/allowed_skips.txt" in done.stdout
    assert "test_planted.py::test_planted_skip: " in done.stdout
    assert "planted: the machine lacks something" in done.stdout
    assert "test_expected_failure" not in done.stdout.split("skips not on")[1]


@pytest.mark.parametrize("workers", [0, 2])
def test_an_explained_skip_passes(tmp_path: Path, workers: int) -> None:
    allowed = "*test_planted.py::test_planted_skip  # planted on purpose\n"
    done = run(tmp_path, allowed, strict=True, workers=workers)
    assert done.returncode == 0, done.stdout + done.stderr


def test_outside_ci_a_skip_is_only_reported(tmp_path: Path) -> None:
    done = run(tmp_path, "", strict=False, workers=0)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_allowlist_line_says_why(tmp_path: Path) -> None:
    read_allowlist(ALLOWLIST)  # the repository's own list parses
    bad = tmp_path / "bad.txt"
    bad.write_text("tests/test_x.py::test_y\n")
    with pytest.raises(pytest.UsageError, match="every allowed skip says why"):
        read_allowlist(bad)
