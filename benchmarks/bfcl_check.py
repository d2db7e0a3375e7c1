"""BFCL single-turn data as an outside check of validation and stream reassembly.

For every entry of the single-turn categories (simple_python, multiple, parallel,
parallel_multiple and the live_* ones):

1. every ground-truth call must validate against its converted function definition;
2. every systematic mutation (a required field dropped, a wrong type, a value outside an
   enum, an unknown tool name) must be refused with the expected problem at its path;
3. every ground-truth turn, encoded as each dialect's SSE stream by the simulator's
   encoders and split at random places, must come back from ``ToolCallParser`` identical
   (name, arguments, id and position).

Data: ``pip download --no-deps bfcl-eval -d /tmp/bfcl`` then
``BFCL_DATA_DIR=/tmp/bfcl python benchmarks/bfcl_check.py`` (or ``--data PATH``).
``--every N`` checks one entry in N; ``--failures`` prints each failure.
Exit status 1 when anything other than a known dataset defect fails.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

from sse_toolcalls import Dialect

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import itertools

from sse_toolcalls.calls import DIALECTS, ToolCall
from sse_toolcalls.parser import ToolCallParser
from sse_toolcalls.tooling import bfcl
from sse_toolcalls.tooling.simulator.encoders import encode_turn
from sse_toolcalls.tooling.simulator.script import ScriptedCall, Turn


def split_randomly(data: bytes, rng: random.Random) -> list[bytes]:
    """``data`` cut at up to 12 random places (single bytes included)."""
    if len(data) < 2:
        return [data]
    cuts = sorted(rng.sample(range(1, len(data)), k=min(12, len(data) - 1)))
    bounds = [0, *cuts, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(bounds)]


def round_trip(calls: list[ToolCall], dialect: Dialect, rng: random.Random) -> list[ToolCall]:
    """Encode ``calls`` as one turn of ``dialect``, split the bytes, parse them back."""
    turn = Turn(
        calls=tuple(ScriptedCall(name=c.name, args=c.args, call_id=c.call_id) for c in calls),
        fragment_size=rng.randint(1, 24),
    )
    data = b"".join(encode_turn(dialect, turn))
    parser = ToolCallParser(dialect)
    out: list[ToolCall] = []
    for piece in split_randomly(data, rng):
        out.extend(parser.feed(piece))
    out.extend(parser.finish())
    return out


def same_calls(sent: list[ToolCall], received: list[ToolCall]) -> bool:
    """Whether the parsed calls are the sent ones: name, arguments, id and position."""
    return [(c.name, c.args, c.call_id, c.index) for c in sent] == [
        (c.name, c.args, c.call_id, c.index) for c in received
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", help=f"wheel or data folder (default: ${bfcl.DATA_ENV})")
    parser.add_argument("--every", type=int, default=1, help="check one entry in N")
    parser.add_argument("--seed", type=int, default=20250601)
    parser.add_argument("--failures", action="store_true", help="print every failure")
    args = parser.parse_args(argv)

    source = bfcl.find_source(args.data)
    if source is None:
        print(f"no BFCL data: set {bfcl.DATA_ENV} or pass --data", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    totals: Counter[str] = Counter()
    failures: list[str] = []
    known: list[str] = []
    started = time.perf_counter()
    print(f"BFCL data: {source.location}")
    print(
        f"{'category':<24}{'entries':>8}{'calls':>7}{'valid':>7}{'known':>7}"
        f"{'mutations':>11}{'refused':>9}{'round trips':>13}{'identical':>11}"
    )
    for category in bfcl.CATEGORIES:
        row: Counter[str] = Counter()
        for entry in source.entries(category)[:: args.every]:
            row["entries"] += 1
            report = bfcl.check_entry(entry)
            row["calls"] += report.calls
            row["valid"] += report.validated
            row["mutations"] += report.mutations
            row["refused"] += report.refused
            if entry.id in bfcl.KNOWN_DEFECTS and report.validated < report.calls:
                row["known"] += report.calls - report.validated
                known.append(f"{entry.id}: {bfcl.KNOWN_DEFECTS[entry.id]}")
                failures.extend(f"(known) {f}" for f in report.failures)
            else:
                failures.extend(report.failures)
            calls = bfcl.ground_truth_calls(entry)
            for dialect in DIALECTS:
                row["round trips"] += 1
                try:
                    back = round_trip(calls, dialect, rng)
                except Exception as exc:  # report, and go on with the other entries
                    failures.append(f"{entry.id}: {dialect} round trip raised {exc!r}")
                    continue
                if same_calls(calls, back):
                    row["identical"] += 1
                else:
                    failures.append(f"{entry.id}: {dialect} round trip differs")
        totals.update(row)
        print(
            f"{category:<24}{row['entries']:>8}{row['calls']:>7}{row['valid']:>7}"
            f"{row['known']:>7}{row['mutations']:>11}{row['refused']:>9}"
            f"{row['round trips']:>13}{row['identical']:>11}"
        )
    print(
        f"{'total':<24}{totals['entries']:>8}{totals['calls']:>7}{totals['valid']:>7}"
        f"{totals['known']:>7}{totals['mutations']:>11}{totals['refused']:>9}"
        f"{totals['round trips']:>13}{totals['identical']:>11}"
    )
    print()
    print(
        f"ground truths validated: {totals['valid']} of {totals['calls']} "
        f"({totals['known']} refused as they must be: the dataset breaks its own schema)"
    )
    print(f"mutations refused with the right problem: {totals['refused']} of {totals['mutations']}")
    print(
        f"round trips identical: {totals['identical']} of {totals['round trips']} "
        f"({len(DIALECTS)} dialects, random splits, seed {args.seed})"
    )
    print(f"time: {time.perf_counter() - started:.1f} s")
    unexpected = [f for f in failures if not f.startswith("(known)")]
    if args.failures:
        for line in failures:
            print("  " + line)
    elif known:
        print(f"known dataset defects: {len(known)} entries (--failures lists them)")
    if unexpected:
        print(f"UNEXPECTED FAILURES: {len(unexpected)}")
        if not args.failures:
            for line in unexpected[:20]:
                print("  " + line)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
