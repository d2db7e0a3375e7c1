"""Profile our implementation on one workload with cProfile (or pyinstrument).

    python -m benchmarks.profile W1 --chunk 1460
    python -m benchmarks.profile W2 --dialect anthropic
    python -m benchmarks.profile W3 --dialect openai_chat --mode deltas --size 1000000
    python -m benchmarks.profile W2 --dialect openai_chat --pyinstrument
    python -m benchmarks.profile W2 --dialect gemini --twin py   # the pure twin

Runs the same inputs as :mod:`benchmarks.run` and prints the functions with the most own
time, so each hotspot can be traced to a line.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from collections.abc import Sequence

from benchmarks import inputs, ours


def main(argv: Sequence[str] | None = None) -> int:
    """Profile; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile")
    parser.add_argument("workload", choices=["W1", "W2", "W3"])
    parser.add_argument("--dialect", default="openai_chat", choices=inputs.W2_DIALECTS)
    parser.add_argument("--chunk", type=int, default=1460)
    parser.add_argument("--mode", default="deltas", choices=["event", "deltas"])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--pyinstrument", action="store_true")
    parser.add_argument(
        "--twin", choices=["c", "py"], default="c", help="which twin (c when it is built)"
    )
    args = parser.parse_args(argv)

    # Two rows per twin (the framer, the parser); the pure twin's alone when the
    # compiled one is not built.
    rows = {(i.name, i.kind): i for i in ours.impls()}
    name = f"sse_toolcalls[{args.twin}]"
    if (name, "framer") not in rows:
        parser.error(f"{name} is not built here")
    framer, calls = rows[name, "framer"], rows[name, "calls"]
    if args.workload == "W1":
        impl, dialect = framer, "openai_chat"
        body = inputs.framing_stream().body
    elif args.workload == "W2":
        impl, dialect = calls, args.dialect
        body = inputs.parallel_calls(dialect).body
    else:
        impl, dialect = calls, args.dialect
        body = inputs.big_call(dialect, args.size, mode=args.mode).body
    chunks = inputs.chunked(body, args.chunk)

    def work() -> None:
        for _ in range(args.repeat):
            impl.run(dialect, chunks)

    if args.pyinstrument:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.0005)
        profiler.start()
        work()
        profiler.stop()
        print(profiler.output_text(unicode=False, color=False, show_all=False))
        return 0
    profile = cProfile.Profile()
    profile.runcall(work)
    stats = pstats.Stats(profile, stream=sys.stdout)
    stats.sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
