"""Instructions per ``feed`` under callgrind: the noise-free figure for the framer's hot path.

    python -m benchmarks.instructions                 # every case, pure twin
    python -m benchmarks.instructions --twin c w4-calls-anthropic
    python -m benchmarks.instructions --list

Wall time on a shared machine moves by tens of percent between runs; an instruction count
does not. Each case runs under ``valgrind --tool=callgrind`` twice, with one and with three
passes over its reads, and the difference over two passes is the cost of one pass with the
interpreter's start, the imports and the input's construction taken out; divided by the
number of reads it is instructions per ``feed``. Cases: ``w1-<size>`` frames W1's body
(2,000 events) in chunks of that many bytes; ``w4-frame-<dialect>`` and
``w4-calls-<dialect>`` are W4's one-event-per-read workload, framing only and bytes to
calls. Needs valgrind; runs in a few seconds per case.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["CASES", "main"]

_W1_EVENTS = 2_000

CASES = (
    "w1-64",
    "w1-1460",
    "w1-16384",
    "w4-frame-openai_chat",
    "w4-frame-openai_responses",
    "w4-frame-anthropic",
    "w4-calls-openai_chat",
    "w4-calls-openai_responses",
    "w4-calls-anthropic",
    "w4-calls-gemini",
)


def _reads(case: str) -> list[bytes]:
    from . import inputs

    if case.startswith("w1-"):
        body = inputs.framing_stream(n_events=_W1_EVENTS).body
        return inputs.chunked(body, int(case[3:]))
    dialect = case.split("-", 2)[2]
    return inputs.event_reads(inputs.parallel_calls(dialect).body)


def _runner(case: str, twin: str) -> Callable[[list[bytes]], Any]:
    from sse_toolcalls import ToolCallParser
    from sse_toolcalls import parser as parser_module
    from sse_toolcalls.framing import sse

    framer = sse._PySSEFramer if twin == "py" else sse._CSSEFramer
    if framer is None:
        raise SystemExit("the compiled twin is not built")
    if "-calls-" in case:
        parser_module.SSEFramer = framer  # type: ignore[attr-defined]
        dialect = case.split("-", 2)[2]

        def calls(reads: list[bytes]) -> Any:
            p = ToolCallParser(dialect)  # type: ignore[arg-type]
            out = [call for read in reads for call in p.feed(read)]
            return out + p.finish()

        return calls

    def frame(reads: list[bytes]) -> Any:
        f = framer()
        out = [event for read in reads for event in f.feed(read)]
        return out + f.finish()

    return frame


def _child(case: str, twin: str, passes: int) -> None:
    reads = _reads(case)
    run = _runner(case, twin)
    for _ in range(passes):
        run(reads)


def _count(case: str, twin: str, passes: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        cmd = [
            "valgrind",
            "--tool=callgrind",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            "benchmarks.instructions",
            "--child",
            case,
            "--twin",
            twin,
            "--passes",
            str(passes),
        ]
        # A fixed hash seed: dict and set layouts (the dialects' key lookups) otherwise
        # moved a 7-feed case by up to 10% between runs of the same code.
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        with open(out) as f:
            totals = re.search(r"^(?:summary|totals): (\d+)", f.read(), re.M)
    if totals is None:
        raise SystemExit("callgrind wrote no totals")
    return int(totals.group(1))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.instructions")
    parser.add_argument("cases", nargs="*", help="cases to count (default: all)")
    parser.add_argument("--twin", choices=("py", "c"), default="py")
    parser.add_argument("--list", action="store_true", help="list the cases")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--passes", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(CASES))
        return 0
    if args.child:
        _child(args.child, args.twin, args.passes)
        return 0
    for case in args.cases or CASES:
        if case not in CASES:
            parser.error(f"unknown case {case!r} (see --list)")
        reads = len(_reads(case))
        per_pass = (_count(case, args.twin, 3) - _count(case, args.twin, 1)) / 2
        per_feed = per_pass / reads
        print(f"{case:28} {args.twin:3} {reads:7d} feeds {per_feed:10.0f} instructions/feed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
