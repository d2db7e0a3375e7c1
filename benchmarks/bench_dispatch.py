"""Dispatch time of one turn of N calls: all to a barrier tool (``parallel_safe=False``)
against all to a parallel-safe tool, and the growth exponent of each.

Each call's handler is an ``async`` function that returns at once, so the numbers are the
dispatcher's own overhead (validation, keys, task group, waiting). Before timing, each run
is checked: every call answered ``ok``, in call order, and the barrier calls ran one after
another (a counter sees at most one running). The turn cap is raised to N for the run.

Run: ``python benchmarks/bench_dispatch.py`` (``--fast`` for a smoke run: small N, one
repetition). Measured on the project machine (2 shared cores, Python 3.11), N = 4,000:
barrier 39.2 s before the linear fix (each barrier waited on every earlier call), 0.45-0.61 s
after; parallel-safe 0.64-0.90 s.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

import anyio
import anyio.lowlevel

from sse_toolcalls.calls import ToolCall
from sse_toolcalls.runtime.dispatch import Dispatcher
from sse_toolcalls.runtime.tools import ToolRegistry


def _turn(n: int, *, parallel_safe: bool) -> tuple[Dispatcher, list[ToolCall], list[int]]:
    running: list[int] = [0]
    peak: list[int] = [0]

    async def step(i: int) -> str:
        running[0] += 1
        peak[0] = max(peak[0], running[0])
        await anyio.lowlevel.checkpoint()
        running[0] -= 1
        return f"done {i}"

    registry = ToolRegistry()
    registry.add_schema_tool(
        "step",
        {"type": "object", "properties": {"i": {"type": "integer"}}},
        step,
        parallel_safe=parallel_safe,
    )
    calls = [
        ToolCall(name="step", args={"i": i}, provider="openai_chat", call_id=f"c{i}", index=i)
        for i in range(n)
    ]
    return Dispatcher(registry, max_calls_per_turn=n), calls, peak


def measure(n: int, *, parallel_safe: bool) -> float:
    dispatcher, calls, peak = _turn(n, parallel_safe=parallel_safe)
    start = time.perf_counter()
    reports = anyio.run(dispatcher.dispatch, calls)
    elapsed = time.perf_counter() - start
    if [r.result.content for r in reports] != [f"done {i}" for i in range(n)]:
        raise SystemExit(f"WRONG OUTPUT: n={n} parallel_safe={parallel_safe}")
    if not parallel_safe and peak[0] != 1:
        raise SystemExit(f"WRONG ORDER: {peak[0]} barrier calls ran at once")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="small N, one repetition")
    options = parser.parse_args()
    sizes = [50, 100] if options.fast else [1000, 2000, 4000]
    repeats = 1 if options.fast else 3
    print(f"Python {sys.version.split()[0]}; median of {repeats}")
    print("| calls | barrier (s) | parallel-safe (s) |")
    print("|---:|---:|---:|")
    rows: dict[bool, list[float]] = {False: [], True: []}
    for n in sizes:
        for safe in (False, True):
            rows[safe].append(
                statistics.median(measure(n, parallel_safe=safe) for _ in range(repeats))
            )
        print(f"| {n} | {rows[False][-1]:.3f} | {rows[True][-1]:.3f} |")
    for safe, times in rows.items():
        slope = math.log(times[-1] / times[0]) / math.log(sizes[-1] / sizes[0])
        print(f"growth exponent, {'parallel-safe' if safe else 'barrier'}: {slope:.2f}")


if __name__ == "__main__":
    main()
