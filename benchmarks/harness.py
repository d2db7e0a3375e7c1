"""Timing and checking: calibrated rounds, interleaved implementations, medians.

Method: before timing, each implementation runs once and its output is checked equal to
the expected output (a mismatch is reported and that implementation is not timed). A
calibration run picks how many back-to-back runs make one sample last ``min_time``; then
``reps`` samples are taken round-robin across the implementations (the order rotates each
round, so drift of the machine spreads over all of them) and the median is reported
(W4 reports the fastest sample too).
Garbage is collected between samples, never inside one.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .model import Impl

__all__ = [
    "Case",
    "Clock",
    "check",
    "growth_exponent",
    "measure",
    "measure_samples",
    "peak_memory",
    "time_run",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One implementation on one input."""

    impl: Impl
    dialect: str
    chunks: Sequence[bytes]


Clock = Callable[[], float]


def check(
    case: Case, expected: Any, *, clock: Clock = time.perf_counter
) -> tuple[str | None, float]:
    """Run ``case`` once; return the mismatch (or ``None``) and the run's time in seconds
    by ``clock`` (wall time unless told)."""
    gc.collect()
    start = clock()
    try:
        result = case.impl.run(case.dialect, case.chunks)
    except Exception as exc:  # a peer failing is a result to report, not a crash
        return f"raised {type(exc).__name__}: {str(exc)[:200]}", math.inf
    elapsed = clock() - start
    got = case.impl.normalize(result)
    if got != expected:
        return _describe_mismatch(got, expected), elapsed
    return None, elapsed


def _describe_mismatch(got: Any, expected: Any) -> str:
    if isinstance(got, list) and isinstance(expected, list):
        if len(got) != len(expected):
            return f"{len(got)} items, expected {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            if g != e:
                return f"item {i} differs: {str(g)[:160]} != {str(e)[:160]}"
    return "output differs"


def time_run(case: Case, inner: int, *, clock: Clock = time.perf_counter) -> float:
    """Seconds per run, over ``inner`` back-to-back runs."""
    run = case.impl.run
    dialect, chunks = case.dialect, case.chunks
    start = clock()
    for _ in range(inner):
        run(dialect, chunks)
    return (clock() - start) / inner


def measure(
    cases: Sequence[Case],
    first: Sequence[float],
    *,
    reps: int,
    min_time: float,
    progress: Callable[[str], None] = lambda _: None,
    clock: Clock = time.perf_counter,
) -> list[float]:
    """Median seconds per run of each case.

    ``first`` holds each case's checked run time, used for calibration.
    """
    found = measure_samples(
        cases, first, reps=reps, min_time=min_time, progress=progress, clock=clock
    )
    return [statistics.median(s) for s in found]


def measure_samples(
    cases: Sequence[Case],
    first: Sequence[float],
    *,
    reps: int,
    min_time: float,
    progress: Callable[[str], None] = lambda _: None,
    clock: Clock = time.perf_counter,
) -> list[list[float]]:
    """Every sample of each case, seconds per run, in the order taken (``measure``'s
    rounds)."""
    inners = [max(1, math.ceil(min_time / t)) if t > 0 else 1 for t in first]
    samples: list[list[float]] = [[] for _ in cases]
    order = list(range(len(cases)))
    for rep in range(reps):
        shift = rep % len(order)
        for i in order[shift:] + order[:shift]:
            gc.collect()
            samples[i].append(time_run(cases[i], inners[i], clock=clock))
        progress(f"  round {rep + 1}/{reps}")
    return samples


def peak_memory(case: Case) -> int:
    """Peak bytes allocated by one run (tracemalloc), beyond the input already held."""
    gc.collect()
    tracemalloc.start()
    try:
        case.impl.run(case.dialect, case.chunks)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def growth_exponent(sizes: Sequence[float], times: Sequence[float]) -> float | None:
    """Least-squares slope of log(time) against log(size); ``None`` under two points."""
    if len(sizes) < 2:
        return None
    xs = [math.log(s) for s in sizes]
    ys = [math.log(t) for t in times]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
