"""The price of the sandbox: wall time of one call, p50 and p99, per backend.

Cases, each calling the same small handler (``benchmarks/sandbox_tools.py``, it echoes
its arguments) with the same arguments:

- ``in process``: the function called directly (no sandbox at all, the floor);
- ``child, unsandboxed``: a fresh child per call with rlimits and the supervisor but no
  confinement (``backend="none", allow_unsandboxed=True``): the cost of the child itself;
- ``landlock``: that child confined by Landlock;
- ``bwrap``: the child under bubblewrap (namespaces, a new filesystem view);
- ``landlock, warm`` and ``bwrap, warm``: the same call on a warm worker of a
  :class:`~sse_toolcalls.runtime.sandbox.WarmPool` (a zygote in that confinement, with the handler
  imported, forking a fresh supervisor and worker per call, its directory reset after);
- ``first warm call``: the first call of a tool on a new pool (it starts the zygote), one
  per round, on the best backend.

Every call's value is checked before it counts. Calls of the cases are interleaved, so a
burst of load on the shared machine hits all of them alike.

Run: ``python benchmarks/bench_sandbox.py`` (``--fast`` for a CI smoke run).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio

from benchmarks.sandbox_tools import echo
from sse_toolcalls.runtime.sandbox import (
    Backend,
    Sandbox,
    WarmPool,
    available_backends,
    run_in_sandbox,
)

ARGUMENTS = {"path": "notes.txt", "limit": 10}
EXPECTED = {"echo": ARGUMENTS}
BOX = Sandbox(read=["."], timeout=30)


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def _in_process() -> Any:
    return echo(**ARGUMENTS)


def _sandboxed(backend: Backend, pool: WarmPool | None = None) -> Callable[[], Awaitable[Any]]:
    async def call() -> Any:
        result = await run_in_sandbox(
            BOX,
            echo,
            ARGUMENTS,
            backend=backend,
            allow_unsandboxed=backend == "none",
            pool=pool,
        )
        if result.violation is not None:
            raise AssertionError(f"{backend}: {result.violation}")
        if result.warm is not (pool is not None):
            raise AssertionError(f"{backend}: warm is {result.warm}")
        return result.value

    return call


def _first_warm(backend: Backend) -> Callable[[], Awaitable[Any]]:
    async def call() -> Any:
        async with WarmPool() as pool:
            return await _sandboxed(backend, pool)()

    return call


async def _measure(calls: int) -> dict[str, list[float]]:
    cases: dict[str, Callable[[], Awaitable[Any]]] = {
        "in process": _in_process,
        "child, unsandboxed": _sandboxed("none"),
    }
    backends: list[Backend] = [
        "bwrap" if name == "bwrap" else "landlock" for name in available_backends(BOX)
    ]
    for backend in backends:
        cases[backend] = _sandboxed(backend)
    async with WarmPool() as pool:
        for backend in reversed(backends):
            cases[f"{backend}, warm"] = _sandboxed(backend, pool)
        if backends:
            cases["first warm call"] = _first_warm(backends[0])
        times: dict[str, list[float]] = {name: [] for name in cases}
        for name, call in cases.items():  # one warm-up each: caches, the bwrap probe, zygotes
            if await call() != EXPECTED:
                raise AssertionError(f"{name}: wrong value")
        for _ in range(calls):
            for name, call in cases.items():
                started = time.perf_counter()
                value = await call()
                times[name].append(time.perf_counter() - started)
                if value != EXPECTED:
                    raise AssertionError(f"{name}: wrong value {value!r}")
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="5 calls per case (CI smoke run)")
    parser.add_argument("--calls", type=int, default=200, help="calls per case")
    parser.add_argument("--backend", default="asyncio", choices=("asyncio", "trio"))
    args = parser.parse_args(argv)
    calls = 5 if args.fast else args.calls
    times = anyio.run(_measure, calls, backend=args.backend)
    floor = statistics.median(times["in process"])
    print(
        f"# sandbox overhead, {calls} calls per case, {args.backend}, "
        f"Python {platform.python_version()}, {platform.machine()}, {platform.release()}"
    )
    print(f"{'case':<22}{'p50 ms':>10}{'p99 ms':>10}{'p50 - floor ms':>16}")
    for name, values in times.items():
        p50, p99 = _percentile(values, 0.5), _percentile(values, 0.99)
        print(f"{name:<22}{p50 * 1e3:>10.2f}{p99 * 1e3:>10.2f}{(p50 - floor) * 1e3:>16.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
