"""Counted skips: with ``SSE_TOOLCALLS_STRICT_SKIPS=1`` (CI sets it), a skipped test that
no line of ``tests/allowed_skips.txt`` explains fails the run. A new skip is a decision,
made in a commit with its reason, never an accident of the machine (a missing server, a
missing package, a missing corpus).

A pytest plugin (``tests/conftest.py`` loads it; ``-p tests.counted_skips`` loads it in
any run). Under pytest-xdist the controller sees every worker's reports, so the check
runs there, once.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Any, Final

import pytest

STRICT_ENV: Final = "SSE_TOOLCALLS_STRICT_SKIPS"
ALLOWLIST_ENV: Final = "SSE_TOOLCALLS_ALLOWED_SKIPS"
ALLOWLIST: Final = Path(__file__).with_name("allowed_skips.txt")


def read_allowlist(path: Path) -> list[tuple[str, str]]:
    """``(node id pattern, why)`` for each line ``<pattern>  # <why>``; every line says why."""
    allowed = []
    for line in path.read_text().splitlines():
        pattern, _, why = line.partition("#")
        if pattern.strip():
            if not why.strip():
                raise pytest.UsageError(f"{path}: every allowed skip says why: {line!r}")
            allowed.append((pattern.strip(), why.strip()))
    return allowed


class CountedSkips:
    """Collects the skips no allowlist line explains, lists them, and fails the run."""

    def __init__(self, allowed: list[tuple[str, str]]) -> None:
        self.allowed = allowed
        self.unexplained: list[tuple[str, str]] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not report.skipped or hasattr(report, "wasxfail"):
            return
        reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else ""
        if not any(fnmatch.fnmatchcase(report.nodeid, pattern) for pattern, _ in self.allowed):
            self.unexplained.append((report.nodeid, reason))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.unexplained:
            terminalreporter.section("skips not on tests/allowed_skips.txt", red=True)
            for nodeid, reason in self.unexplained:
                terminalreporter.write_line(f"{nodeid}: {reason}")

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.unexplained and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(STRICT_ENV) == "1" and not hasattr(config, "workerinput"):
        path = Path(os.environ.get(ALLOWLIST_ENV, ALLOWLIST))
        config.pluginmanager.register(CountedSkips(read_allowlist(path)), "counted_skips")
