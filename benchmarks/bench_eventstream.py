"""The event-stream framer against botocore's parser, on the real Bedrock recordings.

``python -m benchmarks.bench_eventstream`` frames the 16 recordings of
``../shared/external_streams/bedrock/`` (``SSE_TOOLCALLS_SHARED`` moves it) with
:class:`~sse_toolcalls.framing.eventstream.EventStreamFramer` and with botocore's
``EventStreamBuffer`` (the parser boto3 runs), in three read sizes: each file whole, in
1,024-byte reads (a socket's), and in 64-byte reads; every repetition frames all 16
files ``--loops`` times. It prints the median CPU seconds of ``--repeats`` repetitions
for each, and the ratio botocore / ours (above 1: ours is faster), one run for both.

Every run checks its output first: the same messages (headers and payloads) from both,
under every read size. ``--fast``: 3 repetitions of 2 loops (the CI smoke).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from sse_toolcalls.framing.eventstream import EventStreamFramer

READS = (None, 1024, 64)
"""Read sizes: ``None`` is each file whole."""


def recordings() -> list[bytes]:
    root = Path(__file__).resolve().parents[1]
    shared = Path(os.environ.get("SSE_TOOLCALLS_SHARED", root.parent / "shared"))
    folder = shared / "external_streams" / "bedrock"
    files = sorted(folder.glob("*.eventstream"))
    if not files:
        sys.exit(f"no recordings in {folder} (set SSE_TOOLCALLS_SHARED)")
    return [path.read_bytes() for path in files]


def chunked(data: bytes, size: int | None) -> list[bytes]:
    if size is None:
        return [data]
    return [data[i : i + size] for i in range(0, len(data), size)]


def ours(streams: Sequence[Sequence[bytes]]) -> list[list[tuple[dict[str, Any], bytes]]]:
    out = []
    for chunks in streams:
        framer = EventStreamFramer()
        messages = [m for chunk in chunks for m in framer.feed(chunk)]
        framer.finish()
        out.append([(m.headers, m.payload) for m in messages])
    return out


def theirs(streams: Sequence[Sequence[bytes]]) -> list[list[tuple[dict[str, Any], bytes]]]:
    from botocore.eventstream import EventStreamBuffer  # type: ignore[import-untyped]

    out = []
    for chunks in streams:
        buffer = EventStreamBuffer()
        messages = []
        for chunk in chunks:
            buffer.add_data(chunk)
            messages += [(m.headers, m.payload) for m in buffer]
        assert not buffer._data, "botocore left bytes over"
        out.append(messages)
    return out


def median_seconds(function: Callable[[], object], *, loops: int, repeats: int) -> float:
    """The median CPU seconds of ``repeats`` runs of ``loops`` calls."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        for _ in range(loops):
            function()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--loops", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--fast", action="store_true", help="3 repeats of 2 loops")
    args = parser.parse_args(argv)
    loops, repeats = (2, 3) if args.fast else (args.loops, args.repeats)
    files = recordings()
    size = sum(map(len, files))
    print(f"{len(files)} recordings, {size:,} bytes; median CPU s of {repeats} x {loops} loops")
    print(f"{'reads':>8} {'ours':>10} {'botocore':>10} {'botocore/ours':>14}")
    for read in READS:
        streams = [chunked(data, read) for data in files]
        # Correct before fast: the same messages from both.
        assert ours(streams) == theirs(streams), f"outputs differ at reads of {read}"
        mine = median_seconds(partial(ours, streams), loops=loops, repeats=repeats)
        peer = median_seconds(partial(theirs, streams), loops=loops, repeats=repeats)
        label = "whole" if read is None else f"{read} B"
        print(f"{label:>8} {mine:>10.4f} {peer:>10.4f} {peer / mine:>14.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
