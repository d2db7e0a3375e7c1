"""Run every benchmark side by side in one process and print the tables.

    python -m benchmarks [--fast] [--only W1,W2,W3,W4] [--json out.json]

``--fast`` is the CI smoke: tiny inputs, one repetition, every implementation's output
checked; it exits non-zero when any implementation present gives a wrong answer or
when ours is missing. See ``benchmarks/README.md`` for the workloads.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as ``python benchmarks/run.py``: make the repository root importable.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

from benchmarks import floor, imports, inputs, ours
from benchmarks.harness import Case, check, growth_exponent, measure, peak_memory
from benchmarks.model import Impl, MissingPeer
from benchmarks.peers import load as load_peers

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """Sizes and repetitions of one run."""

    w1_events: int
    w1_chunks: tuple[int, ...]
    w2_calls: int
    w2_arg_bytes: int
    w3_sizes: tuple[int, ...]
    w3_dialects: tuple[str, ...]
    reps: int
    min_time: float
    budget: float
    """Seconds one W3 run may take; larger sizes of that implementation are skipped."""
    memory: bool


FULL = Settings(
    w1_events=20_000,
    w1_chunks=(64, 1460, 16384),
    w2_calls=8,
    w2_arg_bytes=2000,
    w3_sizes=(10_000, 100_000, 1_000_000, 10_000_000),
    w3_dialects=("openai_chat", "anthropic"),
    reps=5,
    min_time=0.2,
    budget=8.0,
    memory=True,
)

FAST = Settings(
    w1_events=300,
    w1_chunks=(64, 1460, 16384),
    w2_calls=2,
    w2_arg_bytes=300,
    w3_sizes=(1_000, 4_000),
    w3_dialects=("openai_chat", "anthropic"),
    reps=1,
    min_time=0.0,
    budget=5.0,
    memory=False,
)


@dataclass(slots=True, kw_only=True)
class Report:
    """Everything measured, for the tables and ``--json``."""

    machine: dict[str, Any] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    w1: list[dict[str, Any]] = field(default_factory=list)
    w2: list[dict[str, Any]] = field(default_factory=list)
    w3: list[dict[str, Any]] = field(default_factory=list)
    w4: list[dict[str, Any]] = field(default_factory=list)
    importtime: list[dict[str, Any]] = field(default_factory=list)


_T0 = time.perf_counter()


def _log(message: str) -> None:
    print(f"[{time.perf_counter() - _T0:6.1f}s] {message}", file=sys.stderr, flush=True)


def _machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import os

    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
    }


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {}
    for dist in (
        "orjson",
        "httpx",
        "httpx-sse",
        "openai",
        "anthropic",
        "sseclient-py",
        "langchain-core",
        "litellm",
    ):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "missing"
    return out


def _timed_cases(
    cases: list[Case],
    expected: Any,
    settings: Settings,
    report: Report,
    where: str,
) -> list[tuple[Case, float]]:
    """Check each case, time the ones that are right; returns (case, median seconds)."""
    good: list[Case] = []
    first: list[float] = []
    for case in cases:
        problem, elapsed = check(case, expected)
        if problem is None:
            good.append(case)
            first.append(elapsed)
        else:
            report.failures.append(f"{where}: {case.impl.name} ({case.impl.role}): {problem}")
            _log(f"  WRONG {case.impl.name}: {problem}")
    if settings.reps <= 0 or not good:
        return list(zip(good, first, strict=True))
    times = measure(good, first, reps=settings.reps, min_time=settings.min_time, progress=_log)
    return list(zip(good, times, strict=True))


def _ratios(rows: list[dict[str, Any]], key: str) -> None:
    """Add ``x_floor`` and ``x_best_peer`` (higher is better) to rows of one group."""
    floor_value = next((r[key] for r in rows if r["role"] == "floor"), None)
    peers = [r[key] for r in rows if r["role"] == "peer"]
    best_peer = max(peers) if peers else None
    for r in rows:
        r["x_floor"] = r[key] / floor_value if floor_value else None
        r["x_best_peer"] = r[key] / best_peer if best_peer else None


def run_w1(impls: list[Impl], settings: Settings, report: Report) -> None:
    """W1: framing only, Chat Completions events, several chunk sizes; MB/s."""
    stream = inputs.framing_stream(n_events=settings.w1_events)
    framers = [i for i in impls if i.kind == "framer"]
    reference = floor.IMPLS[0].normalize(floor.frame([stream.body]))
    _log(f"W1: {len(stream.body) / 1e6:.2f} MB, {stream.n_events} events")
    for size in settings.w1_chunks:
        _log(f" chunks of {size} B")
        chunks = inputs.chunked(stream.body, size)
        cases = [Case(impl=i, dialect="openai_chat", chunks=chunks) for i in framers]
        rows = [
            {
                "chunk": size,
                "impl": case.impl.name,
                "role": case.impl.role,
                "mb_s": len(stream.body) / 1e6 / t,
                "seconds": t,
            }
            for case, t in _timed_cases(cases, reference, settings, report, f"W1 {size} B")
        ]
        _ratios(rows, "mb_s")
        report.w1 += rows


def run_w2(impls: list[Impl], settings: Settings, report: Report) -> None:
    """W2: bytes to complete calls, per dialect, 1460-byte chunks; calls/s and MB/s."""
    for dialect in inputs.W2_DIALECTS:
        stream = inputs.parallel_calls(
            dialect, n_calls=settings.w2_calls, arg_bytes=settings.w2_arg_bytes
        )
        _log(
            f"W2 {dialect}: {len(stream.body) / 1e6:.2f} MB, {stream.n_events} events, "
            f"{len(stream.calls)} calls"
        )
        expected = [(c.call_id, c.name, c.args) for c in stream.calls]
        chunks = inputs.chunked(stream.body, 1460)
        cases = [
            Case(impl=i, dialect=dialect, chunks=chunks)
            for i in impls
            if i.kind == "calls" and dialect in i.dialects
        ]
        rows = [
            {
                "dialect": dialect,
                "impl": case.impl.name,
                "role": case.impl.role,
                "calls_s": len(stream.calls) / t,
                "mb_s": len(stream.body) / 1e6 / t,
                "seconds": t,
            }
            for case, t in _timed_cases(cases, expected, settings, report, f"W2 {dialect}")
        ]
        _ratios(rows, "calls_s")
        report.w2 += rows


def run_w4(impls: list[Impl], settings: Settings, report: Report) -> None:
    """W4: one event per read (sometimes two), W2's bodies; ns per ``feed``.

    Framing (no Gemini framer row: the framers' table is the three LF dialects) and bytes
    to calls, per dialect. Ratios are feeds per second against the floor's and the best
    peer's (higher is better), so 0.5x is twice the floor's time per feed.
    """
    for dialect in inputs.W2_DIALECTS:
        stream = inputs.parallel_calls(
            dialect, n_calls=settings.w2_calls, arg_bytes=settings.w2_arg_bytes
        )
        reads = inputs.event_reads(stream.body)
        sep = b"\r\n\r\n" if dialect == "gemini" else b"\n\n"
        framed = floor.IMPLS[0].normalize(floor.frame([stream.body], sep))
        calls = [(c.call_id, c.name, c.args) for c in stream.calls]
        _log(f"W4 {dialect}: {len(reads)} reads of {len(stream.body) / len(reads):.0f} B")
        for kind, expected in (("framer", framed), ("calls", calls)):
            cases = [
                Case(impl=i, dialect=dialect, chunks=reads)
                for i in impls
                if i.kind == kind and dialect in i.dialects
            ]
            if not cases:
                continue
            rows = [
                {
                    "dialect": dialect,
                    "kind": kind,
                    "impl": case.impl.name,
                    "role": case.impl.role,
                    "ns_feed": t / len(reads) * 1e9,
                    "feeds_s": len(reads) / t,
                }
                for case, t in _timed_cases(
                    cases, expected, settings, report, f"W4 {dialect} {kind}"
                )
            ]
            _ratios(rows, "feeds_s")
            report.w4 += rows


def run_w3(impls: list[Impl], settings: Settings, report: Report) -> None:
    """W3: growth with the size of one call's arguments, in two delivery modes."""
    plans: list[tuple[str, str, int, list[Impl]]] = []
    for dialect in settings.w3_dialects:
        calls = [i for i in impls if i.kind == "calls" and dialect in i.dialects]
        plans.append(("event", dialect, 64, calls))
        plans.append(("deltas", dialect, 1460, calls))
    # Framers on the one-event body too: copying the pending event per chunk shows here.
    framers = [i for i in impls if i.kind == "framer"]
    plans.insert(1, ("event", "openai_chat", 64, framers))
    for mode, dialect, chunk_size, group in plans:
        kind = group[0].kind if group else "calls"
        rows: dict[int, dict[str, Any]] = {
            id(i): {
                "mode": mode,
                "dialect": dialect,
                "kind": kind,
                "impl": i.name,
                "role": i.role,
                "sizes": [],
                "seconds": [],
                "peak_bytes": [],
                "capped_at": None,
            }
            for i in group
        }
        active = list(group)
        for size in settings.w3_sizes:
            if not active:
                break
            stream = inputs.big_call(dialect, size, mode=mode)
            chunks = inputs.chunked(stream.body, chunk_size)
            _log(
                f"W3 {mode} {dialect} {kind}: {size} B args, {len(stream.body) / 1e6:.1f} MB, "
                f"{len(chunks)} chunks"
            )
            if kind == "framer":
                expected: Any = floor.IMPLS[0].normalize(floor.frame([stream.body]))
            else:
                expected = [(c.call_id, c.name, c.args) for c in stream.calls]
            timed = _w3_times(active, dialect, chunks, expected, settings, report, size)
            still: list[Impl] = []
            for case, t in timed:
                row = rows[id(case.impl)]
                row["sizes"].append(size)
                row["seconds"].append(t)
                # tracemalloc slows pydantic-heavy peers several times over: their memory
                # is measured only where a run is short.
                if settings.memory and (case.impl.role != "peer" or t < 0.5):
                    row["peak_bytes"].append(peak_memory(case))
                else:
                    row["peak_bytes"].append(None)
                # Predict the next size's time from the growth seen so far (at least
                # linear); a peer past the budget stops here. Ours and the floor always
                # run: the targets are stated up to the largest size.
                # The last pair's slope too: growth often steepens past caches.
                exponent = max(
                    growth_exponent(row["sizes"], row["seconds"]) or 1.0,
                    growth_exponent(row["sizes"][-2:], row["seconds"][-2:]) or 1.0,
                )
                predicted = t * (10 ** max(1.0, exponent))
                if case.impl.role == "peer" and predicted > settings.budget:
                    row["capped_at"] = size
                else:
                    still.append(case.impl)
            dropped = {id(c.impl) for c, _ in timed}
            for i in active:
                if id(i) not in dropped:
                    rows[id(i)]["capped_at"] = rows[id(i)]["capped_at"] or -1
            active = still
            del stream, chunks, timed
        for row in rows.values():
            row["exponent"] = growth_exponent(row["sizes"], row["seconds"])
            report.w3.append(row)


def _w3_times(
    active: list[Impl],
    dialect: str,
    chunks: Sequence[bytes],
    expected: Any,
    settings: Settings,
    report: Report,
    size: int,
) -> list[tuple[Case, float]]:
    """Checked run of each implementation; short ones get up to 3 more samples."""
    out: list[tuple[Case, float]] = []
    for impl in active:
        case = Case(impl=impl, dialect=dialect, chunks=chunks)
        problem, first = check(case, expected)
        if problem is not None:
            report.failures.append(f"W3 {dialect} {size} B: {impl.name} ({impl.role}): {problem}")
            _log(f"  WRONG {impl.name}: {problem}")
            continue
        if settings.reps > 1 and first < settings.budget / 16:
            out.append((case, measure([case], [first], reps=3, min_time=0.05)[0]))
        else:
            out.append((case, first))
    return out


def run_importtime(report: Report, runs: int, *, peers: bool) -> None:
    """The statements of :mod:`benchmarks.imports` (``import sse_toolcalls``, the framer,
    the parser, the Agent; both twins), median wall and CPU time of clean subprocesses."""
    rows = imports.measure({"ours": ROOT}, runs=runs)
    if peers:
        rows += imports.measure({"peers": ROOT}, imports.PEERS, runs=runs, modes=("compiled",))
    report.importtime = [asdict(row) for row in rows]


# --------------------------------------------------------------------------------------
# Tables


def _f(value: float | None, fmt: str = ".1f", suffix: str = "") -> str:
    return "-" if value is None else f"{value:{fmt}}{suffix}"


def render(report: Report, settings: Settings) -> str:
    """The Markdown tables."""
    lines: list[str] = []
    m = report.machine
    lines.append(
        f"Machine: {m.get('cpu')}, {m.get('cores')} cores, {m.get('platform')}, "
        f"{m.get('implementation')} {m.get('python')}"
    )
    lines.append("Versions: " + ", ".join(f"{k} {v}" for k, v in m.get("versions", {}).items()))
    if report.w1:
        lines += ["", "### W1: framing only (Chat Completions events), MB/s, median", ""]
        lines += [
            "| chunk | implementation | MB/s | x floor | x best peer |",
            "|---:|---|---:|---:|---:|",
        ]
        for r in report.w1:
            lines.append(
                f"| {r['chunk']} B | {_label(r)} | {r['mb_s']:.1f} | "
                f"{_f(r['x_floor'], '.2f')} | {_f(r['x_best_peer'], '.2f')} |"
            )
    if report.w2:
        lines += [
            "",
            f"### W2: bytes to complete calls ({settings.w2_calls} calls of about "
            f"{settings.w2_arg_bytes} B, 3-8 character fragments, 1460 B chunks), median",
            "",
            "| dialect | implementation | calls/s | MB/s | x floor | x best peer |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for r in report.w2:
            lines.append(
                f"| {r['dialect']} | {_label(r)} | {r['calls_s']:.1f} | {r['mb_s']:.1f} | "
                f"{_f(r['x_floor'], '.2f')} | {_f(r['x_best_peer'], '.2f')} |"
            )
    if report.w3:
        sizes = settings.w3_sizes
        head = " | ".join(_size(s) for s in sizes)
        lines += [
            "",
            "### W3: one call's arguments growing; ms per stream, growth exponent, peak memory",
            "",
            "`event`: the whole arguments in one event, 64 B chunks; `deltas`: 4-character "
            "deltas, 1460 B chunks. `> budget`: not run, the previous size predicted more "
            f"than {settings.budget:.0f} s. Peak: tracemalloc, MiB, at the largest size "
            "measured (x floor's at the same size).",
            "",
            f"| mode | dialect | implementation | {head} | exponent | peak MiB |",
            "|---|---|---|" + "---:|" * len(sizes) + "---:|---:|",
        ]
        for r in report.w3:
            cells = []
            for s in sizes:
                if s in r["sizes"]:
                    cells.append(f"{r['seconds'][r['sizes'].index(s)] * 1000:.1f}")
                elif r["capped_at"] == -1:
                    cells.append("wrong")
                else:
                    cells.append("> budget")
            lines.append(
                f"| {r['mode']} | {r['dialect']} | {_label(r)} | {' | '.join(cells)} | "
                f"{_f(r['exponent'], '.2f')} | {_peak(r, report.w3)} |"
            )
    if report.w4:
        lines += [
            "",
            "### W4: one event per read (one or two whole events per chunk, W2's bodies), "
            "ns per feed, median",
            "",
            "| dialect | job | implementation | ns per feed | x floor | x best peer |",
            "|---|---|---|---:|---:|---:|",
        ]
        for r in report.w4:
            lines.append(
                f"| {r['dialect']} | {r['kind']} | {_label(r)} | {r['ns_feed']:.0f} | "
                f"{_f(r['x_floor'], '.2f')} | {_f(r['x_best_peer'], '.2f')} |"
            )
    if report.importtime:
        lines += ["", "### Import time (the statement alone, clean subprocesses, median)", ""]
        lines += imports.table([imports.Row(**r) for r in report.importtime])
    if report.missing:
        lines += ["", "Not run (package missing):"] + [f"- {m}" for m in report.missing]
    if report.failures:
        lines += ["", "WRONG OUTPUT (not timed):"] + [f"- {f}" for f in report.failures]
    return "\n".join(lines)


def _label(row: dict[str, Any]) -> str:
    name = str(row["impl"])
    if row["role"] == "ours":
        return f"**{name}**"
    if row["role"] == "floor":
        return f"_{name}_"
    if row.get("kind") == "framer" and row.get("mode"):
        return f"{name} (framer)"
    return name


def _size(n: int) -> str:
    return f"{n // 1_000_000} MB" if n >= 1_000_000 else f"{n // 1000} KB"


def _peak(row: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    pairs = [(s, p) for s, p in zip(row["sizes"], row["peak_bytes"], strict=True) if p]
    if not pairs:
        return "-"
    size, peak = pairs[-1]
    text = f"{peak / 2**20:.1f} @{_size(size)}"
    base = next(
        (
            r
            for r in rows
            if r["role"] == "floor"
            and r["mode"] == row["mode"]
            and r["dialect"] == row["dialect"]
            and r["kind"] == row["kind"]
        ),
        None,
    )
    if base and size in base["sizes"]:
        floor_peak = base["peak_bytes"][base["sizes"].index(size)]
        if floor_peak:
            text += f" ({peak / floor_peak:.1f}x)"
    return text


# --------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmarks; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--fast", action="store_true", help="tiny inputs, 1 repetition (CI)")
    parser.add_argument("--only", default="W1,W2,W3,W4", help="comma-separated workloads")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument(
        "--skip-peers", default="", help="comma-separated peer modules to leave out"
    )
    args = parser.parse_args(argv)
    settings = FAST if args.fast else FULL
    only = {w.strip().upper() for w in args.only.split(",") if w.strip()}
    report = Report(machine={**_machine(), "versions": _versions()})
    started = time.perf_counter()

    impls: list[Impl] = list(floor.IMPLS)
    try:
        impls = ours.impls() + impls
    except (MissingPeer, ImportError) as exc:
        report.missing.append(f"sse_toolcalls: {exc}")
    skip = frozenset(s.strip() for s in args.skip_peers.split(",") if s.strip())
    peer_impls, missing = load_peers(skip)
    impls += peer_impls
    report.missing += missing
    for line in missing:
        _log(f"peer not run: {line}")
    # The peers' imports leave millions of objects (litellm alone ~1 s per full collection);
    # freezing them keeps the gc.collect() between samples cheap and out of the numbers.
    gc.collect()
    gc.freeze()

    if "W1" in only:
        run_w1(impls, settings, report)
    if "W2" in only:
        run_w2(impls, settings, report)
    if "W3" in only:
        run_w3(impls, settings, report)
    if "W4" in only:
        run_w4(impls, settings, report)
    if args.fast:
        run_importtime(report, 1, peers=False)
    else:
        run_importtime(report, 21, peers=True)

    print(render(report, settings))
    print(f"\n(total {time.perf_counter() - started:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps(_jsonable(report), indent=2))
    ours_missing = any(m.startswith("sse_toolcalls") for m in report.missing)
    return 1 if report.failures or ours_missing else 0


def _jsonable(report: Report) -> dict[str, Any]:
    return {name: getattr(report, name) for name in Report.__slots__}


if __name__ == "__main__":
    sys.exit(main())
