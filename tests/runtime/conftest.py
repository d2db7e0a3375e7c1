"""The simulator fixture is the one users get from the plugin. The chaos suite's counts
are written to ``<pytest basetemp>/chaos_summary.json`` (and to
``$SSE_TOOLCALLS_CHAOS_SUMMARY`` when set) and printed at the end of the run."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sse_toolcalls.tooling.simulator.pytest_plugin import simulator

__all__ = ["ChaosCounts", "simulator"]

_SUMMARY = pytest.StashKey[tuple[Path, dict[str, Any]]]()


@dataclass
class ChaosCounts:
    """What the chaos suite did, summed over every scenario, dialect and backend."""

    scenarios: int = 0
    faults_injected: int = 0
    requests: int = 0
    writes_attempted: int = 0
    writes_executed: int = 0
    writes_executed_twice: int = 0
    tools_run_half_way: int = 0
    user_messages_shown: int = 0
    fallback_messages: int = 0
    ids_mismatched: int = 0
    by_scenario: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, scenario: str, **counts: int) -> None:
        self.scenarios += 1
        row = self.by_scenario.setdefault(scenario, {"runs": 0})
        row["runs"] += 1
        for name, value in counts.items():
            setattr(self, name, getattr(self, name) + value)
            row[name] = row.get(name, 0) + value

    def as_dict(self) -> dict[str, Any]:
        return {
            "scenarios": self.scenarios,
            "faults_injected": self.faults_injected,
            "requests": self.requests,
            "writes_attempted": self.writes_attempted,
            "writes_executed": self.writes_executed,
            "writes_executed_twice": self.writes_executed_twice,
            "tools_run_half_way": self.tools_run_half_way,
            "user_messages_shown": self.user_messages_shown,
            "fallback_messages": self.fallback_messages,
            "ids_mismatched": self.ids_mismatched,
            "by_scenario": self.by_scenario,
        }


@pytest.fixture(scope="session")
def chaos_counts(
    tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config
) -> Iterator[ChaosCounts]:
    counts = ChaosCounts()
    yield counts
    summary = counts.as_dict()
    text = json.dumps(summary, indent=2, sort_keys=True)
    path = tmp_path_factory.getbasetemp() / "chaos_summary.json"
    path.write_text(text)
    extra = os.environ.get("SSE_TOOLCALLS_CHAOS_SUMMARY")
    if extra:
        Path(extra).write_text(text)
    pytestconfig.stash[_SUMMARY] = (path, summary)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    _many_workers_summary(terminalreporter, config)
    found = config.stash.get(_SUMMARY, None)
    if found is None:
        return
    path, summary = found
    terminalreporter.write_sep("-", "chaos summary")
    for name, value in summary.items():
        if name != "by_scenario":
            terminalreporter.write_line(f"{name}: {value}")
    for scenario, row in sorted(summary["by_scenario"].items()):
        cells = ", ".join(f"{k}={v}" for k, v in sorted(row.items()))
        terminalreporter.write_line(f"  {scenario}: {cells}")
    terminalreporter.write_line(f"written to {path}")


def _many_workers_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The counts of ``test_many_workers.py``, when it ran."""
    factory = getattr(config, "_tmp_path_factory", None)
    if factory is None:
        return
    path = factory.getbasetemp() / "many_workers_summary.json"
    if not path.exists():
        return
    terminalreporter.write_sep("-", "many workers, faults, one truth")
    for name, value in sorted(json.loads(path.read_text()).items()):
        terminalreporter.write_line(f"{name}: {value}")
    terminalreporter.write_line(f"written to {path}")
