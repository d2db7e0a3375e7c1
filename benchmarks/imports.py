"""What importing the package costs a fresh interpreter (issue 16: import time).

    python -m benchmarks.imports [--runs 41] [--tree DIR ...] [--callgrind]

Each statement (``import sse_toolcalls``, ``from sse_toolcalls import SSEFramer``...) is
timed inside a clean subprocess (no inherited environment, ``.pyc`` files written), from
just before the statement to just after it, so the interpreter's own start is not in the
figure; the median of ``--runs`` subprocesses is reported, the statements taken in turn so
that a burst of load on the machine falls on all of them alike. Every statement runs with
the compiled framer and with ``SSE_TOOLCALLS_PURE_PYTHON=1``.

``--tree`` measures another checkout of the package side by side in the same run (a
``git archive`` of an older commit, say: before and after). ``--callgrind`` adds the
instructions each statement executes beyond ``python -c pass`` under valgrind, which do
not depend on the machine's load.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

STATEMENTS = (
    "import sse_toolcalls",
    "from sse_toolcalls import SSEFramer",
    "from sse_toolcalls import StreamParser",
    "from sse_toolcalls import Agent",
)
"""The package alone, the framer, the streaming parser, and the whole runtime."""

PEERS = ("import httpx_sse", "import openai", "import anthropic")
"""The same figure for the libraries a user would otherwise stream with."""

MODES: dict[str, dict[str, str]] = {
    "compiled": {},
    "pure": {"SSE_TOOLCALLS_PURE_PYTHON": "1"},
}

# The child prints the statement's wall and CPU times, whether the extension is loaded, and how
# many modules the statement added (the interpreter's start excluded).
_PROBE = """\
import sys, time
_before = len(sys.modules)
_t, _c = time.perf_counter(), time.process_time()
{statement}
_t, _c = time.perf_counter() - _t, time.process_time() - _c
print(_t, _c, "sse_toolcalls._sse_c" in sys.modules, len(sys.modules) - _before)
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class Row:
    """One statement in one mode of one tree."""

    tree: str
    statement: str
    mode: str
    ms: float | None
    """Median wall time of the statement, in milliseconds; ``None`` when it failed."""
    cpu_ms: float | None
    """Median CPU time of the statement's process, in milliseconds: on a loaded machine
    it is far closer to the wall time of an idle one than the wall time is."""
    runs: int
    extension: bool
    """Whether the compiled framer was loaded by the statement."""
    modules: int
    """Modules the statement added to ``sys.modules``."""
    instructions: int | None = None
    """Instructions beyond ``python -c pass`` (``--callgrind``)."""


def _env(tree: Path, mode: str) -> dict[str, str]:
    return {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin", **MODES[mode]}


def _run_once(tree: Path, statement: str, mode: str) -> tuple[float, float, bool, int] | None:
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE.format(statement=statement)],
        capture_output=True,
        text=True,
        cwd=tree,
        env=_env(tree, mode),
        check=False,
    )
    if proc.returncode != 0:
        return None
    wall, cpu, extension, modules = proc.stdout.split()
    return float(wall), float(cpu), extension == "True", int(modules)


_VALGRIND = ("valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null")


def _instructions(tree: Path, code: str, mode: str) -> int | None:
    proc = subprocess.run(
        [*_VALGRIND, sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tree,
        env=_env(tree, mode),
        check=False,
    )
    match = re.search(r"Collected : (\d+)", proc.stderr)
    return int(match.group(1)) if proc.returncode == 0 and match else None


def measure(
    trees: Mapping[str, Path],
    statements: Sequence[str] = STATEMENTS,
    *,
    runs: int,
    modes: Sequence[str] = tuple(MODES),
    callgrind: bool = False,
) -> list[Row]:
    """Time every statement in every mode of every tree (see the module docstring)."""
    cells = [(label, s, m) for label in trees for s in statements for m in modes]
    samples: dict[tuple[str, str, str], list[tuple[float, float, bool, int]]]
    samples = {cell: [] for cell in cells}
    failed: set[tuple[str, str, str]] = set()
    for cell in cells:  # once each, unmeasured: writes the .pyc files
        if _run_once(trees[cell[0]], cell[1], cell[2]) is None:
            failed.add(cell)
    for _ in range(runs):
        for cell in cells:
            if cell not in failed and (sample := _run_once(trees[cell[0]], *cell[1:])):
                samples[cell].append(sample)
    rows = []
    for cell in cells:
        got = samples[cell]
        count = None
        if callgrind and got:
            tree = trees[cell[0]]
            floor = _instructions(tree, "pass", cell[2])
            total = _instructions(tree, cell[1], cell[2])
            count = total - floor if total is not None and floor is not None else None
        rows.append(
            Row(
                tree=cell[0],
                statement=cell[1],
                mode=cell[2],
                ms=statistics.median(s[0] for s in got) * 1000 if got else None,
                cpu_ms=statistics.median(s[1] for s in got) * 1000 if got else None,
                runs=len(got),
                extension=any(s[2] for s in got),
                modules=max((s[3] for s in got), default=0),
                instructions=count,
            )
        )
    return rows


def table(rows: Sequence[Row]) -> list[str]:
    """The rows as a Markdown table, one line per tree and statement, both modes side by side."""
    modes = list(dict.fromkeys(r.mode for r in rows))
    callgrind = any(r.instructions is not None for r in rows)
    head = ["tree", "statement"] + [f"{m} ms, wall / CPU" for m in modes] + ["modules added"]
    if callgrind:
        head += [f"{m} M instructions" for m in modes]
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    keys = list(dict.fromkeys((r.tree, r.statement) for r in rows))
    for tree, statement in keys:
        by_mode = {r.mode: r for r in rows if (r.tree, r.statement) == (tree, statement)}
        cells = [tree, f"`{statement}`"]
        for mode in modes:
            row = by_mode.get(mode)
            if row is None:
                cells.append("-")  # not run in this mode (the peers have no twins)
            elif row.ms is None or row.cpu_ms is None:
                cells.append("failed")
            else:
                shown = f"{row.ms:.1f} / {row.cpu_ms:.1f}"
                cells.append(shown + (" (C)" if row.extension else ""))
        cells.append(" / ".join(str(by_mode[m].modules) for m in modes if m in by_mode))
        if callgrind:
            for mode in modes:
                row = by_mode.get(mode)
                count = row.instructions if row else None
                cells.append("-" if count is None else f"{count / 1e6:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print the table; returns the exit status (1 when a statement failed)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.imports", description=__doc__)
    parser.add_argument("--runs", type=int, default=41, help="subprocesses per cell")
    parser.add_argument(
        "--tree",
        action="append",
        type=Path,
        default=[],
        help="another checkout to measure beside this one (repeatable)",
    )
    parser.add_argument("--callgrind", action="store_true", help="also count instructions")
    parser.add_argument("--peers", action="store_true", help="also time the peers' imports")
    args = parser.parse_args(argv)
    if args.callgrind and shutil.which("valgrind") is None:
        parser.error("--callgrind needs valgrind on PATH")
    trees = {"this": ROOT, **{str(t): t.resolve() for t in args.tree}}
    rows = measure(trees, runs=args.runs, callgrind=args.callgrind)
    if args.peers:
        rows += measure({"peers": ROOT}, PEERS, runs=args.runs, modes=("compiled",))
    print(f"Median of {args.runs} clean subprocesses each, Python {sys.version.split()[0]}, ")
    print(f"{os.cpu_count()} cores; (C): the compiled framer was loaded.\n")
    print("\n".join(table(rows)))
    return 1 if any(r.ms is None for r in rows if r.tree != "peers") else 0


if __name__ == "__main__":
    sys.exit(main())
