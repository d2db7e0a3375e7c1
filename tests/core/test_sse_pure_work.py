"""The pure framer's work per chunk, counted in calls (never timed): it carries the
unfinished event, so a chunk that completes no event costs a fixed few searches and one
append however many lines it holds, and an event's lines are read once, when its blank
line arrives (issue 16, item 2). What a caller sees is held equal to the compiled twin
and the reference by tests/core/test_sse_twins.py and tests/core/test_sse_reference.py.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from sse_toolcalls import ServerSentEvent
from sse_toolcalls.framing import sse as sse_module

Framer = sse_module._PySSEFramer


def c_calls(function: Callable[[], Any]) -> tuple[Any, int]:
    """``function()``'s result and how many C functions (methods of bytes, str, list...)
    it called."""
    count = 0

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event == "c_call":
            count += 1

    sys.setprofile(profile)
    try:
        result = function()
    finally:
        sys.setprofile(None)
    return result, count - 1  # sys.setprofile(None) itself


@pytest.mark.parametrize("lines", [1, 10, 1000])
def test_a_chunk_that_completes_no_event_costs_the_same_however_many_lines(lines: int) -> None:
    framer = Framer()
    assert framer.feed(b"event: e\n") == []
    chunk = b"id: 7\n:comment\n" + b"data: some text\n" * lines + b"data: unfinis"
    got, calls = c_calls(lambda: framer.feed(chunk))
    assert got == []
    # The old framer read every line as it ended: a decode, a split and two or three
    # calls per line (3,000 and more here at 1,000 lines).
    assert calls <= 8
    [event] = framer.feed(b"hed\n\n")
    assert event == ServerSentEvent("e", "some text\n" * lines + "unfinished", "7", None)


def test_an_events_lines_are_read_once_when_it_completes() -> None:
    # Fed a line at a time, each line is looked at when its chunk arrives only for the
    # limits (one search), and the event's lines are decoded and split once.
    framer = Framer()
    body = b"event: e\n" + b"data: x\n" * 200
    counts = []
    for line in body.splitlines(True):
        got, calls = c_calls(lambda: framer.feed(line))  # noqa: B023 - called at once
        assert got == []
        counts.append(calls)
    assert max(counts) <= 8
    [event], last = c_calls(lambda: framer.feed(b"\n"))
    assert event.data == "\n".join(["x"] * 200)
    # One decode, one split, and per line the field test and the append.
    assert last <= 3 * 200 + 20


def test_a_huge_line_in_small_chunks_costs_one_search_and_one_append_per_chunk() -> None:
    framer = Framer()
    framer.feed(b"data: ")
    calls = [c_calls(lambda: framer.feed(b"x" * 64))[1] for _ in range(1000)]
    # rfind, len, and nothing that grows with what is pending.
    assert max(calls) <= 2
    [event] = framer.feed(b"\n\n")
    assert len(event.data) == 64_000


def test_retry_is_read_when_its_line_ends_before_the_event_completes() -> None:
    # The spec sets the reconnection time as the line is read, not at dispatch; the
    # carried event keeps that (the compiled twin and the reference agree).
    framer = Framer()
    assert framer.feed(b"data: a\nretry: 25") == []
    assert framer.retry is None
    assert framer.feed(b"0\ndata: b\n") == []
    assert framer.retry == 250
    [event] = framer.feed(b"\n")
    assert event == ServerSentEvent("message", "a\nb", "", 250)
