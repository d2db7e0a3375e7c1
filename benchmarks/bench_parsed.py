"""Events an SDK already parsed: nanoseconds per event, read as objects against written back.

``python -m benchmarks.bench_parsed`` takes the recorded tool-calling streams
(``recorded_streams/``, one per dialect), parses each event's JSON once as an SDK does
(the stdlib's ``json.loads``), and times feeding the dicts to a parser two ways, in one
run so the ratio holds on a loaded machine:

- ``objects``: ``ToolCallParser.feed_event`` (the object is checked, then read as it is);
- ``pure``: the same on the pure walk, whichever twin is in use;
- ``text``: the way ``parse_events`` worked before, each dict written back with orjson as
  an SSE block and fed as bytes (``feed``), framed and parsed again.

Every run checks that both ways give the same calls. ``--fast`` times fewer repetitions
(the CI smoke in ``tests/tooling/test_benchmarks_smoke.py``); ``--instructions`` counts
instructions per event under callgrind instead (the noise-free figure; needs valgrind,
about three minutes a dialect on a loaded machine).

Figures (issue 12, the shared loaded machine, one run; ns per event, objects / text):
Chat 16,159 / 10,604 (0.66x), Responses 8,503 / 5,997 (0.71x), Anthropic 7,902 / 5,531
(0.70x), Gemini 24,022 / 13,492 (0.56x). Callgrind, Chat, one parser per stream of 8
events: 730,843 instructions with objects against 487,324 written back (1.50x). The
object path is *slower*: its pure-Python walk (``dialects/_parsed._measure``, about
47,000 instructions for one Chat chunk) costs more than orjson's dumps (5,800), the
framer (2,800) and orjson's loads (13,900) together. It is kept for what the round trip
got wrong (an SDK integer past 64 bits was a ``UsageError``, NaN became ``null``, depth
and size unbounded by name); a compiled walk would be the way to make it faster.

h37, the walk compiled (``sse_toolcalls/_walk_c.c``), callgrind per event, objects /
pure / text: Chat 49,579 / 92,213 / 57,450 (1.16x), Responses 28,382 / 45,814 / 35,621
(1.26x), Anthropic 26,952 / 43,285 / 30,999 (1.15x), Gemini 48,954 / 103,095 / 63,982
(1.31x); what is left is the dialects' reading (``benchmarks/RESULTS.md``, "h37").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from sse_toolcalls import SSEFramer, ToolCall, ToolCallParser
from sse_toolcalls.calls import Dialect

ROOT = Path(__file__).resolve().parent.parent
STREAMS: dict[Dialect, str] = {
    "openai_chat": "openai_chat/two_calls_height_weight.sse",
    "openai_responses": "openai_responses/two_calls_height_weight.sse",
    "anthropic": "anthropic/two_calls_height_weight.sse",
    "gemini": "gemini/vertex_partial_args_height_weight.sse",
}


def parsed_events(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """The stream's events as (event name, parsed JSON object), JSON-less events left out."""
    framer = SSEFramer()
    out = []
    for event in framer.feed(path.read_bytes()) + framer.finish():
        try:
            payload = json.loads(event.data)
        except ValueError:
            continue
        if isinstance(payload, dict):
            out.append((event.event, payload))
    return out


def via_objects(dialect: Dialect, events: list[tuple[str, dict[str, Any]]]) -> list[ToolCall]:
    parser = ToolCallParser(dialect)
    calls: list[ToolCall] = []
    for name, payload in events:
        calls += parser.feed_event(payload, name)
    return calls + parser.finish()


def via_text(dialect: Dialect, events: list[tuple[str, dict[str, Any]]]) -> list[ToolCall]:
    parser = ToolCallParser(dialect)
    calls: list[ToolCall] = []
    for name, payload in events:
        head = b"" if name == "message" else b"event: " + name.encode() + b"\n"
        calls += parser.feed(head + b"data: " + orjson.dumps(payload) + b"\n\n")
    if dialect == "openai_chat":
        calls += parser.feed(b"data: [DONE]\n\n")
    return calls + parser.finish()


def per_event(
    run: Callable[[Dialect, list[tuple[str, dict[str, Any]]]], list[ToolCall]],
    dialect: Dialect,
    events: list[tuple[str, dict[str, Any]]],
    repeat: int,
) -> float:
    """The best of five timings, in nanoseconds per event (CPU time)."""
    best = float("inf")
    for _ in range(5):
        start = time.process_time_ns()
        for _ in range(repeat):
            run(dialect, events)
        best = min(best, (time.process_time_ns() - start) / (repeat * len(events)))
    return best


def via_pure_objects(dialect: Dialect, events: list[tuple[str, dict[str, Any]]]) -> list[ToolCall]:
    """:func:`via_objects` on the pure walk, whichever twin is in use."""
    from sse_toolcalls.dialects import _parsed

    compiled, _parsed._c_measure = _parsed._c_measure, None
    try:
        return via_objects(dialect, events)
    finally:
        _parsed._c_measure = compiled


WAYS: dict[str, Callable[[Dialect, list[tuple[str, dict[str, Any]]]], list[ToolCall]]] = {
    "objects": via_objects,
    "objects-pure": via_pure_objects,
    "text": via_text,
}


def _callgrind(dialect: Dialect, way: str, passes: int) -> int:
    """Instructions of this module's child feeding the stream ``passes`` times."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        child = ["-m", "benchmarks.bench_parsed", "--child", dialect, way, str(passes)]
        # One hash seed: with random ones the start's dict probes alone move by ~1e6.
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        run = [*command, sys.executable, *child]
        subprocess.run(run, check=True, capture_output=True, env=env)
        with open(out) as f:
            totals = re.search(r"^(?:summary|totals): (\d+)", f.read(), re.M)
    if totals is None:
        raise SystemExit("callgrind wrote no totals")
    return int(totals.group(1))


def instructions() -> None:
    """Instructions per event under callgrind, each way: 45 passes less 5, over 40, so the
    interpreter's start, the imports and the first passes' warm-up are taken out."""
    print(f"{'dialect':<18}" + "".join(f"{way:>14}" for way in WAYS) + f"{'text/objects':>14}")
    for dialect, file in STREAMS.items():
        events = len(parsed_events(ROOT / "recorded_streams" / file))
        counts = {
            way: (_callgrind(dialect, way, 45) - _callgrind(dialect, way, 5)) / (40 * events)
            for way in WAYS
        }
        row = "".join(f"{counts[way]:>14.0f}" for way in WAYS)
        print(f"{dialect:<18}{row}{counts['text'] / counts['objects']:>13.2f}x")


def main(argv: list[str] | None = None) -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    options.add_argument("--fast", action="store_true", help="fewer repetitions (smoke)")
    options.add_argument(
        "--instructions", action="store_true", help="instructions per event (valgrind)"
    )
    options.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = options.parse_args(argv)
    if args.child:
        dialect, way, passes = args.child
        chosen = next(d for d in STREAMS if d == dialect)
        events = parsed_events(ROOT / "recorded_streams" / STREAMS[chosen])
        for _ in range(int(passes)):
            WAYS[way](chosen, events)
        return
    if args.instructions:
        instructions()
        return
    repeat = 20 if args.fast else 400
    head = f"{'dialect':<18}{'events':>7}{'objects ns':>12}{'pure ns':>10}{'text ns':>10}"
    print(f"{head}{'ratio':>8}{'pure':>8}")
    for dialect, file in STREAMS.items():
        events = parsed_events(ROOT / "recorded_streams" / file)
        objects, text = via_objects(dialect, events), via_text(dialect, events)
        assert [(c.name, c.args, c.call_id) for c in objects] == [
            (c.name, c.args, c.call_id) for c in text
        ], dialect
        fast = per_event(via_objects, dialect, events, repeat)
        pure = per_event(via_pure_objects, dialect, events, repeat)
        slow = per_event(via_text, dialect, events, repeat)
        row = f"{dialect:<18}{len(events):>7}{fast:>12.0f}{pure:>10.0f}{slow:>10.0f}"
        print(f"{row}{slow / fast:>7.2f}x{slow / pure:>7.2f}x")


if __name__ == "__main__":
    main()
