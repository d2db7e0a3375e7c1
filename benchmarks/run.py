"""Run every benchmark side by side in one process and print the tables.

    python -m benchmarks [--fast] [--only W1,W2,W3,W4,W5,IMPORT] [--json out.json] [--plot DIR]
    python -m benchmarks --from-json out.json --plot benchmarks/plots   # no new run

``--fast`` is the CI smoke: tiny inputs, one repetition, every implementation's output
checked; it exits non-zero when any implementation present gives a wrong answer or
when ours is missing. See ``benchmarks/README.md`` for the workloads.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import os
import platform
import statistics
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

from benchmarks import floor, imports, inputs, many_streams, ours
from benchmarks.harness import (
    Case,
    check,
    growth_exponent,
    measure,
    measure_samples,
    peak_memory,
)
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
    w4_reps: int
    """W4's rounds: more than the others', as its samples are short and cheap."""
    min_time: float
    budget: float
    """Seconds one W3 run may take; larger sizes of that implementation are skipped."""
    memory: bool
    w5: many_streams.Plan
    """The many-streams workload."""


FULL = Settings(
    w1_events=20_000,
    w1_chunks=(64, 1460, 16384),
    w2_calls=8,
    w2_arg_bytes=2000,
    w3_sizes=(10_000, 100_000, 1_000_000, 10_000_000),
    w3_dialects=("openai_chat", "anthropic"),
    reps=5,
    w4_reps=11,
    min_time=0.2,
    budget=8.0,
    memory=True,
    w5=many_streams.Plan(
        streams=200,
        n_calls=2,
        arg_bytes=300,
        gap_ms=1.0,
        impls=tuple(many_streams.IMPLS),
        dialects=inputs.W2_DIALECTS,
        profile=True,
        one_process=False,
        timeout_s=900,
    ),
)

FAST = Settings(
    w1_events=300,
    w1_chunks=(64, 1460, 16384),
    w2_calls=2,
    w2_arg_bytes=300,
    w3_sizes=(1_000, 4_000),
    w3_dialects=("openai_chat", "anthropic"),
    reps=1,
    w4_reps=1,
    min_time=0.0,
    budget=5.0,
    memory=False,
    # Ours (both twins, httpx and httpx2) and the hand-written loop in every dialect, each
    # stream's calls checked, one process per client. Not the SDKs: their imports alone
    # took 70 s of a 225 s smoke on the loaded machine; the full run checks them.
    w5=many_streams.Plan(
        streams=12,
        n_calls=2,
        arg_bytes=300,
        gap_ms=0.2,
        impls=("ours-httpx", "ours-httpx2", "hand"),
        dialects=inputs.W2_DIALECTS,
        profile=True,
        one_process=True,
        timeout_s=240,
    ),
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
    w5: list[dict[str, Any]] = field(default_factory=list)
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
        "httpx2",
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
    return [
        (case, statistics.median(samples))
        for case, samples in _sampled_cases(cases, expected, settings.reps, settings, report, where)
    ]


def _sampled_cases(
    cases: list[Case],
    expected: Any,
    reps: int,
    settings: Settings,
    report: Report,
    where: str,
) -> list[tuple[Case, list[float]]]:
    """Check each case, time the ones that are right in ``reps`` rounds; returns (case,
    seconds per run of each sample), the checked run alone when ``reps`` is 0."""
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
    if reps <= 0 or not good:
        return [(case, [t]) for case, t in zip(good, first, strict=True)]
    found = measure_samples(good, first, reps=reps, min_time=settings.min_time, progress=_log)
    return list(zip(good, found, strict=True))


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
                    "ns_feed": statistics.median(samples) / len(reads) * 1e9,
                    "ns_feed_fastest": min(samples) / len(reads) * 1e9,
                    "feeds_s": len(reads) / statistics.median(samples),
                }
                for case, samples in _sampled_cases(
                    cases, expected, settings.w4_reps, settings, report, f"W4 {dialect} {kind}"
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
                "clock": "cpu",
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
                # tracemalloc slows every allocation about ten times (pydantic-heavy
                # peers more): memory is measured only where a run is short, a peer's
                # under 0.5 s, ours and the floor's under an eighth of the budget. The
                # deltas runs under tracemalloc (1 MB: 240 k events) were most of the
                # time a W3 to 10 MB took (RESULTS, h35).
                short = t < (0.5 if case.impl.role == "peer" else settings.budget / 8)
                if settings.memory and short:
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
    """Checked run of each implementation; one under 2 s gets 3 more samples (median).

    Times are CPU time of this process (``time.process_time``): W3 is about how a cost
    grows with size, and on a shared machine the wall time of one long run is mostly the
    other jobs' (the 10 MB runs under a load of 20 took ten times their CPU time). One
    sample is one moment of the host's: round 9's compiled twin took 617 ms for the 10 MB
    Chat event in a run that timed it once, 317 ms (median of three) in another, and
    284-331 ms in four runs in a row in one process, which lifted its growth exponent
    from 1.08 to 1.10. The bar was 0.5 s; W3 with the 2 s bar took 240 s, with 0.5 s
    200 and 240 s (RESULTS, round 9)."""
    out: list[tuple[Case, float]] = []
    cpu = time.process_time
    for impl in active:
        case = Case(impl=impl, dialect=dialect, chunks=chunks)
        problem, first = check(case, expected, clock=cpu)
        if problem is not None:
            report.failures.append(f"W3 {dialect} {size} B: {impl.name} ({impl.role}): {problem}")
            _log(f"  WRONG {impl.name}: {problem}")
            continue
        if settings.reps > 1 and first < settings.budget / 4:
            out.append((case, measure([case], [first], reps=3, min_time=0.05, clock=cpu)[0]))
        else:
            out.append((case, first))
    return out


def run_w5(settings: Settings, report: Report) -> None:
    """W5: hundreds of concurrent streams over loopback HTTP; CPU per stream, shares."""
    plan = settings.w5
    _log(
        f"W5: {plan.streams} concurrent streams per client, {plan.n_calls} calls of "
        f"{plan.arg_bytes} B each, {plan.gap_ms} ms between the server's writes"
    )
    rows, missing, failures = many_streams.run(plan, _log)
    report.missing += missing
    report.failures += failures
    report.w5 = _w5_rows(report.w5 + rows)


def _w5_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """W5's rows by dialect, each with its ratios against the best peer of its dialect."""
    out: list[dict[str, Any]] = []
    for dialect in inputs.W2_DIALECTS:
        group = [r for r in rows if r["dialect"] == dialect]
        for r in group:
            r["role"] = "ours" if r["key"].startswith("ours") else "peer"
            r["streams_cpu_s"] = r["streams"] / r["cpu_s"] if r["cpu_s"] > 0 else 0.0
        _ratios(group, "streams_cpu_s")
        out += group
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
    if report.missing:
        lines += [
            "",
            f"**PEERS MISSING ({len(report.missing)})**: not run, so every `x best peer` "
            "below is against the peers that ran only (list at the end).",
        ]
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
        # The sizes measured (a saved run's settings may name sizes it never reached).
        sizes = tuple(sorted({s for r in report.w3 for s in r["sizes"]})) or settings.w3_sizes
        head = " | ".join(_size(s) for s in sizes)
        # Runs saved before W3 took CPU time were timed by the wall clock.
        cpu = all(r.get("clock") == "cpu" for r in report.w3)
        lines += [
            "",
            f"### W3: one call's arguments growing; {'CPU ' if cpu else ''}ms per stream, "
            "growth exponent, peak memory",
            "",
            "`event`: the whole arguments in one event, 64 B chunks; `deltas`: 4-character "
            "deltas, 1460 B chunks. `> budget`: not run, the previous size predicted more "
            f"than {settings.budget:.0f} s. Peak: tracemalloc, MiB, at the largest size "
            "measured (x floor's at the same size); measured where a run is short (under "
            f"{settings.budget / 8:g} s, a peer's under 0.5 s).",
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
            "`fastest`: the least of the rounds' samples (11 in a full run), the cost with "
            "the least interference from the host; the ratios use the medians.",
            "",
            "| dialect | job | implementation | ns per feed | fastest | x floor | x best peer |",
            "|---|---|---|---:|---:|---:|---:|",
        ]
        for r in report.w4:
            # Runs saved before the fastest sample was kept have no such field.
            fastest = r.get("ns_feed_fastest")
            lines.append(
                f"| {r['dialect']} | {r['kind']} | {_label(r)} | {r['ns_feed']:.0f} | "
                f"{_f(fastest, '.0f')} | {_f(r['x_floor'], '.2f')} | "
                f"{_f(r['x_best_peer'], '.2f')} |"
            )
    if report.w5:
        plan = settings.w5
        lines += [
            "",
            f"### W5: {plan.streams} concurrent streams over loopback HTTP "
            f"({plan.n_calls} calls of about {plan.arg_bytes} B each, one or two events "
            f"per write, {plan.gap_ms:g} ms apart), client process only",
            "",
            "CPU: `time.process_time` of the client process over the streams, per stream; "
            "`x best peer` in streams per CPU-second (higher is better). RSS: the client's "
            "peak (`VmHWM`), and how much of it the run added. Shares: cProfile of the "
            "same streams, C functions counted to their callers; parsing is our package "
            "for ours, the peer's reader (httpx-sse, SDK, pydantic, json, the loop) for "
            "peers.",
            "",
            "| dialect | implementation | CPU ms/stream | x best peer | wall s | peak RSS MiB "
            "| run +MiB | parsing | HTTP client | event loop | other |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in report.w5:
            sh = r.get("shares") or {}
            lines.append(
                f"| {r['dialect']} | {_label(r)} | {r['cpu_ms_stream']:.2f} | "
                f"{_f(r['x_best_peer'], '.2f')} | {r['wall_s']:.1f} | "
                f"{r['rss_peak_mib']:.0f} | {r['rss_run_mib']:.1f} | "
                + " | ".join(_pct(sh.get(k)) for k in ("parsing", "http", "loop", "other"))
                + " |"
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


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{share * 100:.0f}%"


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
    """Run the benchmarks (or load a saved run); returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--fast", action="store_true", help="tiny inputs, 1 repetition (CI)")
    parser.add_argument(
        "--only",
        default="W1,W2,W3,W4,W5,IMPORT",
        help="comma-separated workloads (IMPORT: the import times)",
    )
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    parser.add_argument(
        "--plot", type=Path, metavar="DIR", help="write PNG charts there (needs matplotlib)"
    )
    parser.add_argument(
        "--from-json",
        type=Path,
        nargs="+",
        metavar="FILE",
        help="run nothing: the tables (and --plot) of runs saved with --json, merged",
    )
    parser.add_argument(
        "--skip-peers", default="", help="comma-separated peer modules to leave out"
    )
    parser.add_argument(
        "--w3-sizes",
        default="",
        help="W3's argument sizes in bytes, comma-separated (default 10 KB to 10 MB)",
    )
    parser.add_argument(
        "--w5-impls",
        default="",
        help=f"W5's clients, comma-separated (default all: {','.join(many_streams.IMPLS)})",
    )
    args = parser.parse_args(argv)
    # LiteLLM fetches its price map from GitHub unless told not to; nothing here may leave
    # the machine. Set for this process and every child it starts, before any import.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    if args.from_json:
        report, settings = _load(args.from_json)
        if args.json:
            args.json.write_text(json.dumps(_jsonable(report, settings, False), indent=2))
        print(render(report, settings))
        if args.plot:
            _plot(report, args.plot)
        return 0
    settings = FAST if args.fast else FULL
    if args.w3_sizes:
        sizes = tuple(int(n) for n in args.w3_sizes.split(",") if n.strip())
        settings = dataclasses.replace(settings, w3_sizes=sizes)
    if args.w5_impls:
        keys = tuple(k.strip() for k in args.w5_impls.split(",") if k.strip())
        unknown = sorted(set(keys) - set(many_streams.IMPLS))
        if unknown:
            parser.error(f"--w5-impls: unknown {', '.join(unknown)}")
        settings = dataclasses.replace(settings, w5=dataclasses.replace(settings.w5, impls=keys))
    only = {w.strip().upper() for w in args.only.split(",") if w.strip()}
    report = Report(machine={**_machine(), "versions": _versions()})
    started = time.perf_counter()

    impls: list[Impl] = list(floor.IMPLS)
    try:
        impls = ours.impls() + impls
    except (MissingPeer, ImportError) as exc:
        report.missing.append(f"sse_toolcalls: {exc}")
    skip = frozenset(s.strip() for s in args.skip_peers.split(",") if s.strip())
    if only & {"W1", "W2", "W3", "W4"}:
        # W5's clients import their peers in processes of their own.
        peer_impls, missing = load_peers(skip)
        impls += peer_impls
        report.missing += missing
        _warn_missing(missing)
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
    if "W5" in only:
        run_w5(settings, report)
    if "IMPORT" in only:
        run_importtime(report, 1 if args.fast else 21, peers=not args.fast)

    print(render(report, settings))
    print(f"\n(total {time.perf_counter() - started:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps(_jsonable(report, settings, args.fast), indent=2))
    if args.plot:
        _plot(report, args.plot)
    _warn_missing(report.missing)
    ours_missing = any(m.startswith("sse_toolcalls") for m in report.missing)
    return 1 if report.failures or ours_missing else 0


def _warn_missing(missing: Sequence[str]) -> None:
    # Said on stderr at the start and again at the end, and in the tables: a run without a
    # peer names a wrong "best peer", and a results table from it must not pass unnoticed.
    if missing:
        _log(
            f"PEERS MISSING ({len(missing)}): not run, so every 'x best peer' leaves them "
            "out; pip install -e '.[bench]'"
        )
        for line in missing:
            _log(f"  peer not run: {line}")


def _plot(report: Report, directory: Path) -> None:
    from benchmarks import plot

    try:
        written = plot.write_all(_jsonable(report, None, False), directory)
    except plot.NoMatplotlib as exc:
        _log(f"--plot: {exc}")
        raise SystemExit(2) from exc
    for path in written:
        _log(f"wrote {path}")


def _jsonable(report: Report, settings: Settings | None, fast: bool) -> dict[str, Any]:
    out = {name: getattr(report, name) for name in Report.__slots__}
    if settings is not None:
        out["settings"] = dataclasses.asdict(settings)
        out["fast"] = fast
    return out


def _load(paths: Sequence[Path]) -> tuple[Report, Settings]:
    """Runs saved by ``--json``, merged (each workload's rows from the files that have
    them, machine and settings from the first), and the settings they ran with."""
    report = Report()
    settings: Settings | None = None
    for path in paths:
        data = json.loads(path.read_text())
        for name in Report.__slots__:
            if name == "machine":
                report.machine = report.machine or data.get("machine", {})
            elif name in ("missing", "failures", "w5"):
                # W5's clients may come from several runs (--w5-impls): rows add up.
                getattr(report, name).extend(data.get(name, []))
            elif not getattr(report, name):
                setattr(report, name, data.get(name, []))
        saved = data.get("settings")
        if settings is None and saved is not None:
            plan = many_streams.Plan(**_tuples(saved.pop("w5")))
            saved.setdefault("w4_reps", saved["reps"])  # runs saved before W4 had its own
            settings = Settings(**_tuples(saved), w5=plan)
    report.missing = list(dict.fromkeys(report.missing))
    report.w5 = _w5_rows(report.w5)
    return report, settings or FULL


def _tuples(fields: dict[str, Any]) -> Any:
    # JSON has no tuples; the settings' sequences are tuples.
    return {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}


if __name__ == "__main__":
    sys.exit(main())
