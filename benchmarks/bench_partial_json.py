"""The arguments parsed so far (``ToolArgumentsPreview``): time against argument size.

``python -m benchmarks.bench_partial_json`` feeds seeded argument texts of 10 KB to 10 MB
to :class:`~sse_toolcalls.runtime.partial_json.PartialJSON` in 16-character fragments (a
provider's delta is a few tokens) and reads the preview after every fragment, as a UI
would; it prints CPU seconds per size and the growth exponent (least-squares slope of
log time against log size; 1.0 is linear). Two shapes: ``text`` (one long string with
escapes and non-ASCII, the case of a file written by a tool call) and ``records`` (many
small objects: numbers, literals, short strings, the structure-heavy case). For
contrast, ``reparse`` is the usual way (close the brackets of the prefix and
``json.loads`` it per fragment), timed at the small sizes only: it is quadratic.

Every run checks its output: the final preview must equal ``json.loads`` of the text.
``--fast``: 10 KB and 100 KB only, one repetition (the CI smoke in
``tests/tooling/test_benchmarks_smoke.py``). Figures: ``benchmarks/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from sse_toolcalls.runtime.partial_json import PartialJSON

FRAGMENT = 16
SIZES = (10_000, 100_000, 1_000_000, 10_000_000)
REPARSE_SIZES = (2_000, 5_000, 10_000)


def text_arguments(size: int, seed: int = 11) -> str:
    """``{"path": ..., "content": <one long string>}`` of about ``size`` characters."""
    rng = random.Random(seed)
    words = ["def", "return", 'say "hi"', "path\\to", "tab\there", "café", "naïve", "🥚", "42"]
    parts: list[str] = []
    total = 0
    while total < size:
        word = rng.choice(words)
        parts.append(word)
        parts.append("\n" if rng.random() < 0.1 else " ")
        total += len(word) + 1
    return json.dumps({"path": "src/big.py", "content": "".join(parts), "overwrite": True})


def record_arguments(size: int, seed: int = 12) -> str:
    """``{"rows": [{...}, ...]}`` of about ``size`` characters."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    total = 0
    while total < size:
        row = {
            "id": rng.randrange(10**9),
            "score": round(rng.random() * 100, 3),
            "ok": rng.random() < 0.5,
            "tag": rng.choice(["a", "bb", "ccc", None]),
            "xy": [rng.randrange(100), -rng.randrange(100)],
        }
        rows.append(row)
        total += len(json.dumps(row)) + 2
    return json.dumps({"rows": rows, "count": len(rows)})


def preview(text: str) -> Any:
    reader = PartialJSON()
    shown: Any = None
    for start in range(0, len(text), FRAGMENT):
        shown = reader.feed(text[start : start + FRAGMENT])
    return shown


def reparse(text: str) -> Any:
    """The usual way: the whole prefix, its brackets closed, parsed per fragment."""
    shown: Any = None
    for end in range(FRAGMENT, len(text) + FRAGMENT, FRAGMENT):
        prefix = text[:end]
        closers = []
        in_string = escaped = False
        for char in prefix:
            if in_string:
                if escaped:
                    escaped = False
                elif char == "\\":
                    escaped = True
                elif char == '"':
                    in_string = False
            elif char == '"':
                in_string = True
            elif char in "[{":
                closers.append("]" if char == "[" else "}")
            elif char in "]}":
                closers.pop()
        with contextlib.suppress(ValueError):
            shown = json.loads(prefix + ('"' if in_string else "") + "".join(reversed(closers)))
    return shown


def timed(run: Callable[[str], Any], text: str, repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        # CPU seconds of this process, not wall time: the machine is shared, and a
        # 10 MB run is long enough to be interleaved with everyone else's work.
        start = time.process_time()
        shown = run(text)
        best = min(best, time.process_time() - start)
        if shown != json.loads(text):
            raise SystemExit(f"WRONG OUTPUT from {run.__name__} at {len(text)} chars")
    return best


def _runs(size: int, repeat: int) -> int:
    # The best of many short runs at the small sizes: on a loaded machine one run of a
    # few milliseconds is mostly noise, and the slope is only as good as its ends.
    return 1 if size >= 10**7 else max(repeat, 1_000_000 // size if repeat > 1 else 1)


def exponent(points: list[tuple[int, float]]) -> float:
    xs = [math.log(s) for s, _ in points]
    ys = [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="small sizes, one repetition")
    args = parser.parse_args(argv)
    sizes = SIZES[:2] if args.fast else SIZES
    repeat = 1 if args.fast else 3
    print(f"| shape | mode | {' | '.join(f'{s // 1000:,} KB' for s in sizes)} | exponent |")
    print(f"|---|---|{'---:|' * len(sizes)}---:|")
    worst = 0.0
    for shape, make in (("text", text_arguments), ("records", record_arguments)):
        points = [(len(t), timed(preview, t, _runs(s, repeat))) for s in sizes for t in [make(s)]]
        slope = exponent(points)
        worst = max(worst, slope)
        cells = " | ".join(f"{t:.4f} s" for _, t in points)
        print(f"| {shape} | PartialJSON | {cells} | {slope:.2f} |")
        if not args.fast:
            small = [(len(t), timed(reparse, t, 1)) for s in REPARSE_SIZES for t in [make(s)]]
            cells = " | ".join(f"{t:.4f} s @{n // 1000} KB" for n, t in small[:3])
            print(f"| {shape} | reparse (contrast) | {cells} | {exponent(small):.2f} |")
    print(f"\nworst PartialJSON exponent: {worst:.2f} (fragments of {FRAGMENT} characters)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
