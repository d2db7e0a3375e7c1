"""``sse-toolcalls bfcl``: the multi-turn replay with a progress bar and a table.

The progress bar goes to stderr (redrawn in place on a terminal, a line every tenth of
the run otherwise, so CI logs stay short); the table, the defects and the failures go to
stdout. The exit status is 0 when every case without a dataset defect ended in BFCL's
reference state with no problem, 1 otherwise, 2 when BFCL's data or code is missing.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sys
import time
from collections.abc import Sequence
from typing import TextIO

import anyio

from ...errors import UsageError
from .multi_turn import CaseReport, replay
from .single_turn import DATA_ENV, find_source

__all__ = ["format_table", "run_bfcl"]

_BAR_WIDTH = 30
"""Characters of the progress bar."""

_MAX_LISTED = 50
"""Failures printed in full; the rest are counted (a broken build would print thousands)."""


class _Progress:
    def __init__(self, stream: TextIO, jsonl: TextIO | None) -> None:
        self._jsonl = jsonl
        self._stream = stream
        self._tty = stream.isatty()
        self._last_tenth = -1
        self._started = time.monotonic()

    def __call__(self, report: CaseReport, done: int, total: int) -> None:
        if self._jsonl is not None:
            # One line per case as it ends: a long run killed half-way keeps its figures.
            self._jsonl.write(json.dumps(dataclasses.asdict(report)) + "\n")
            self._jsonl.flush()
        filled = _BAR_WIDTH * done // max(total, 1)
        bar = "#" * filled + "." * (_BAR_WIDTH - filled)
        elapsed = time.monotonic() - self._started
        line = f"[{bar}] {done}/{total} {elapsed:6.0f}s {report.case_id} {report.dialect}"
        if self._tty:
            self._stream.write("\r" + line.ljust(100))
            if done == total:
                self._stream.write("\n")
        elif done * 10 // max(total, 1) != self._last_tenth or done == total:
            self._last_tenth = done * 10 // max(total, 1)
            self._stream.write(line + "\n")
        self._stream.flush()


def format_table(reports: Sequence[CaseReport]) -> str:
    """The table per category and dialect: cases, identical states, defects, failures,
    faults injected and wall time, then a total line."""
    groups: dict[tuple[str, str], list[CaseReport]] = {}
    for report in reports:
        groups.setdefault((report.category, report.dialect), []).append(report)
    header = (
        f"{'category':<24} {'dialect':<17} {'cases':>6} {'identical':>9} {'defects':>7} "
        f"{'failed':>6} {'faults':>6} {'time':>8}"
    )
    lines = [header, "-" * len(header)]

    def row(category: str, dialect: str, group: Sequence[CaseReport]) -> str:
        return (
            f"{category:<24} {dialect:<17} {len(group):>6} "
            f"{sum(r.identical for r in group):>9} {sum(bool(r.defects) for r in group):>7} "
            f"{sum(not r.passed for r in group):>6} {sum(r.faults_injected for r in group):>6} "
            f"{sum(r.seconds for r in group):>7.1f}s"
        )

    for (category, dialect), group in groups.items():
        lines.append(row(category, dialect, group))
    lines.append("-" * len(header))
    lines.append(row("all", "", reports))
    return "\n".join(lines)


def run_bfcl(
    *,
    data: str | None,
    categories: Sequence[str],
    dialects: Sequence[str],
    faults: bool,
    sample: int | None,
    backend: str,
    jsonl: str | None = None,
    cases: Sequence[str] = (),
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run the replay and print its table; return the exit status (see the module)."""
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    source = find_source(data)
    if source is None:
        err.write(
            f"no BFCL data: set {DATA_ENV} or pass --data (pip download --no-deps bfcl-eval)\n"
        )
        return 2
    try:
        log = open(jsonl, "w", encoding="utf-8") if jsonl else None  # noqa: SIM115 (closed below)
    except OSError as exc:
        err.write(f"cannot write {jsonl}: {exc}\n")
        return 2
    progress = _Progress(err, log)
    # The faults are the point of --faults and the table counts them: the agent's warning
    # per handled fault would only break the progress bar (Python's last-resort handler).
    logging.getLogger("sse_toolcalls").addHandler(logging.NullHandler())

    async def main() -> list[CaseReport]:
        return await replay(
            source,
            categories=categories,
            dialects=dialects,
            faults=faults,
            count=sample,
            only=cases,
            progress=progress,
        )

    try:
        reports = anyio.run(main, backend=backend)
    except UsageError as exc:
        err.write(f"{exc}\n")
        return 2
    finally:
        if log is not None:
            log.close()
    title = "BFCL multi-turn replay" + (" under faults" if faults else "")
    out.write(f"{title} ({source.location.name}, {backend})\n\n{format_table(reports)}\n")
    defects = sorted({(r.case_id, d) for r in reports for d in r.defects})
    if defects:
        out.write(f"\ndataset defects ({len({c for c, _ in defects})} cases):\n")
        out.writelines(f"  {case}: {reason}\n" for case, reason in defects)
    failed = [r for r in reports if not r.passed]
    if failed:
        out.write(f"\nfailed ({len(failed)}):\n")
        for report in failed[:_MAX_LISTED]:
            out.writelines(f"  {p}\n" for p in report.problems[:3])
        if len(failed) > _MAX_LISTED:
            out.write(f"  ... and {len(failed) - _MAX_LISTED} more cases\n")
    out.flush()
    return 1 if failed else 0
