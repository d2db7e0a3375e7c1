"""The event-stream framer's own promises: its limits and their typed errors, its use
(refusals, re-entry), the message's convenience reads, and its work, counted in calls and
bytes held, never timed. The differential against botocore is in
tests/core/test_eventstream_botocore.py.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import tracemalloc
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from types import FrameType
from typing import Any

import pytest

from sse_toolcalls.errors import LimitExceededError, UsageError
from sse_toolcalls.framing.eventstream import (
    DEFAULT_MAX_MESSAGE_BYTES,
    MAX_HEADERS_BYTES,
    MAX_HEADERS_PER_MESSAGE,
    ChecksumMismatchError,
    EventStreamError,
    EventStreamFramer,
    EventStreamLimitError,
    EventStreamMessage,
    EventStreamTimestamp,
    IncompleteMessageError,
    MessageTooLargeError,
)
from tests.core.test_eventstream_wire import (
    BYTE_ARRAY,
    FALSE,
    INTEGER,
    STRING,
    TIMESTAMP,
    TRUE,
    UUID,
    Header,
    bedrock_event,
    encode,
    frame,
)

GOOD = bedrock_event("messageStop", b'{"stopReason":"end_turn"}')


def _prelude(total: int, headers: int) -> bytes:
    # The first 12 bytes of ``frame`` with these lengths (its CRC is of the lengths).
    return frame(b"", b"", total=total)[:4] + frame(b"\x00" * headers, b"", total=total)[4:12]


# ----------------------------------------------------------------------------------------
# Limits.


def test_max_headers_per_message_is_the_last_count_read() -> None:
    headers: list[Header] = [(f"h{i}", TRUE, None) for i in range(MAX_HEADERS_PER_MESSAGE)]
    assert len(EventStreamFramer().feed(encode(headers, b""))[0].headers) == 1024
    framer = EventStreamFramer()
    with pytest.raises(EventStreamLimitError) as info:
        framer.feed(GOOD + encode([*headers, ("one more", FALSE, None)], b""))
    exc = info.value
    assert isinstance(exc, LimitExceededError) and isinstance(exc, EventStreamError)
    assert (exc.limit_name, exc.limit, exc.size) == ("MAX_HEADERS_PER_MESSAGE", 1024, 1025)
    assert exc.problem == "too_many_headers" and exc.offset == len(GOOD)
    assert [m.payload for m in exc.messages] == [b'{"stopReason":"end_turn"}']
    with pytest.raises(UsageError, match="failed"):
        framer.feed(GOOD)


def test_max_headers_bytes_is_refused_from_the_prelude_alone() -> None:
    framer = EventStreamFramer()
    announced = _prelude(16 + MAX_HEADERS_BYTES + 1, MAX_HEADERS_BYTES + 1)
    with pytest.raises(EventStreamLimitError) as info:
        framer.feed(announced)  # twelve bytes: nothing else was needed, or held
    assert (info.value.limit_name, info.value.size) == ("MAX_HEADERS_BYTES", MAX_HEADERS_BYTES + 1)
    assert info.value.problem == "headers_too_large"


@pytest.mark.parametrize("limit", [16, 100, 4096])
def test_max_message_bytes_is_the_largest_message_read(limit: int) -> None:
    exact = encode([], b"x" * (limit - 16))
    assert EventStreamFramer(max_message_bytes=limit).feed(exact)[0].payload == exact[12:-4]
    over = encode([], b"x" * (limit - 15))
    framer = EventStreamFramer(max_message_bytes=limit)
    # Refused at its twelfth byte: the rest is never buffered.
    assert framer.feed(over[:11]) == []
    with pytest.raises(MessageTooLargeError) as info:
        framer.feed(over[11:12])
    assert (info.value.limit, info.value.size, info.value.problem) == (
        limit,
        limit + 1,
        "message_too_large",
    )


def test_the_default_message_bound_is_botocores_largest_message() -> None:
    # 24 MiB of payload and 128 KiB of headers, with the 16 bytes of framing.
    assert DEFAULT_MAX_MESSAGE_BYTES == 24 * 1024 * 1024 + 128 * 1024 + 16
    framer = EventStreamFramer()
    assert framer.feed(_prelude(DEFAULT_MAX_MESSAGE_BYTES, 0)) == []
    with pytest.raises(MessageTooLargeError):
        EventStreamFramer().feed(_prelude(DEFAULT_MAX_MESSAGE_BYTES + 1, 0))


@pytest.mark.parametrize("bad", [15, 0, -1, 2.5, float("nan"), True, "100", None])
def test_max_message_bytes_must_be_a_count_of_at_least_16(bad: object) -> None:
    with pytest.raises(UsageError, match="max_message_bytes"):
        EventStreamFramer(max_message_bytes=bad)  # type: ignore[arg-type]


def test_the_framer_never_holds_more_than_one_unfinished_message() -> None:
    # Many messages fed in reads of 7 bytes: after each read, less than one message held.
    stream = b"".join(bedrock_event("contentBlockDelta", b"x" * n) for n in range(0, 400, 13))
    framer = EventStreamFramer()
    got = []
    for i in range(0, len(stream), 7):
        got += framer.feed(stream[i : i + 7])
        assert len(framer._pending) < max(len(GOOD) + 400, 12)
    assert [len(m.payload) for m in got] == list(range(0, 400, 13))


# ----------------------------------------------------------------------------------------
# Use.


def test_finish_after_whole_messages_returns_nothing_and_refuses_more() -> None:
    framer = EventStreamFramer()
    assert len(framer.feed(GOOD + GOOD)) == 2
    assert framer.finish() == []
    with pytest.raises(UsageError, match="finished"):
        framer.feed(GOOD)
    with pytest.raises(UsageError, match="finished"):
        framer.finish()


@pytest.mark.parametrize("held", [1, 11, 12, 13, len(GOOD) - 1])
def test_finish_inside_a_message_is_a_typed_truncation(held: int) -> None:
    framer = EventStreamFramer()
    assert framer.feed(GOOD + GOOD[:held]) != []
    with pytest.raises(IncompleteMessageError) as info:
        framer.finish()
    exc = info.value
    assert (exc.held, exc.offset, exc.problem) == (held, len(GOOD), "truncated")
    assert exc.expected == (len(GOOD) if held >= 12 else None)
    with pytest.raises(UsageError):
        framer.feed(b"")


@pytest.mark.parametrize("data", ["text", 12, None, [1, 2], bytearray(b"")])
def test_feed_takes_bytes_only(data: Any) -> None:
    framer = EventStreamFramer()
    if isinstance(data, bytearray):
        # A bytearray or memoryview is bytes enough (a protocol's annotation says bytes).
        assert framer.feed(data) == []  # type: ignore[arg-type]
        message = framer.feed(memoryview(GOOD))[0]  # type: ignore[arg-type]
        assert message.payload == b'{"stopReason":"end_turn"}'
        return
    with pytest.raises(UsageError, match="takes bytes"):
        framer.feed(data)
    framer = EventStreamFramer()
    framer.feed(GOOD[:5])
    with pytest.raises(UsageError, match="takes bytes"):
        framer.feed(data)


@pytest.mark.parametrize(
    "reenter",
    [
        lambda f: f.feed(GOOD),
        lambda f: f.finish(),
        lambda f: f.__init__(),
    ],
    ids=["feed", "finish", "init"],
)
def test_a_framer_is_not_reentrant(reenter: Callable[[EventStreamFramer], Any]) -> None:
    framer = EventStreamFramer()
    framer.feed(GOOD[:3])

    class Reentrant(bytes):
        # A callback run during the read (here: its length) that uses the same framer.
        def __len__(self) -> int:
            reenter(framer)
            return super().__len__()

    with pytest.raises(UsageError, match="not re-entrant"):
        framer.feed(Reentrant(GOOD[3:]))
    # The framer that was re-entered refuses what follows.
    with pytest.raises(UsageError, match="failed"):
        framer.feed(GOOD)


def test_errors_pickle_with_their_state() -> None:
    framer = EventStreamFramer()
    bad = bytearray(GOOD)
    bad[-2] ^= 1
    with pytest.raises(ChecksumMismatchError) as info:
        framer.feed(GOOD + bytes(bad))
    copy = pickle.loads(pickle.dumps(info.value))
    assert (copy.which, copy.expected, copy.computed, copy.offset) == (
        "message",
        info.value.expected,
        info.value.computed,
        len(GOOD),
    )
    assert copy.messages == info.value.messages and len(copy.messages) == 1


# ----------------------------------------------------------------------------------------
# The message.


def test_the_message_reads_awss_headers() -> None:
    event = EventStreamFramer().feed(GOOD)[0]
    assert (event.message_type, event.event_type, event.content_type) == (
        "event",
        "messageStop",
        "application/json",
    )
    assert event.exception_type is None and event.error_code is None
    bare = EventStreamFramer().feed(encode([], b""))[0]
    # No :message-type reads as an event, as botocore reads it.
    assert (bare.message_type, bare.event_type, bare.content_type) == ("event", None, None)
    odd = EventStreamFramer().feed(encode([(":event-type", INTEGER, 7)], b""))[0]
    assert odd.event_type is None  # not a string: never an int for a name
    with pytest.raises(AttributeError):
        event.payload = b""  # type: ignore[misc]


def test_timestamps_and_uuids() -> None:
    u = uuid.uuid4()
    headers: list[Header] = [
        ("when", TIMESTAMP, 1_700_000_000_123),
        ("id", UUID, u.bytes),
        ("raw", BYTE_ARRAY, b"\x00"),
        ("s", STRING, ""),
    ]
    message = EventStreamFramer().feed(encode(headers, b""))[0]
    when = message.headers["when"]
    assert isinstance(when, EventStreamTimestamp) and when == 1_700_000_000_123
    assert when.datetime == datetime(2023, 11, 14, 22, 13, 20, 123_000, tzinfo=UTC)
    assert repr(when) == "EventStreamTimestamp(1700000000123)"
    assert message.headers["id"] == u
    assert message.headers["raw"] == b"\x00" and message.headers["s"] == ""
    assert list(message.headers) == ["when", "id", "raw", "s"]  # wire order


def test_message_equality_is_by_value() -> None:
    a = EventStreamMessage(headers={"a": 1}, payload=b"x")
    assert a == EventStreamMessage(headers={"a": 1}, payload=b"x")


# ----------------------------------------------------------------------------------------
# Work.


def calls(function: Callable[[], Any]) -> tuple[Any, int]:
    """``function()``'s result and how many calls (Python and C) it made."""
    count = 0

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        result = function()
    finally:
        sys.setprofile(None)
    return result, count


def test_a_read_inside_a_message_costs_a_fixed_few_calls() -> None:
    # However much of the message is held, a read that does not complete it reads
    # nothing: the same calls for the first byte and the millionth.
    big = encode([(":event-type", STRING, "chunk")], b"x" * 1_000_000)
    framer = EventStreamFramer()
    framer.feed(big[:20])
    _, early = calls(lambda: framer.feed(big[20:21]))
    framer.feed(big[21:900_000])
    _, late = calls(lambda: framer.feed(big[900_000:900_001]))
    assert early == late <= 6
    got, _ = calls(lambda: framer.feed(big[900_001:]))
    assert len(got[0].payload) == 1_000_000


def test_many_messages_cost_calls_in_proportion() -> None:
    # Per message, the same calls whether the stream holds 100 or 1,000 of them, and
    # whether it comes whole or in 5-byte reads (a framer that re-read its buffer per
    # read or per message would grow with the count).
    def cost(count: int, step: int) -> float:
        stream = GOOD * count
        framer = EventStreamFramer()
        reads = [stream[i : i + step] for i in range(0, len(stream), step)]
        got, n = calls(lambda: [m for r in reads for m in framer.feed(r)])
        assert len(got) == count
        return n / count

    assert cost(1000, 10**9) == pytest.approx(cost(100, 10**9), rel=0.02)
    assert cost(1000, 5) == pytest.approx(cost(100, 5), rel=0.02)


def test_a_read_inside_a_message_allocates_nothing_in_proportion_to_what_is_held() -> None:
    # Bytes allocated, not time: a read that copied the held message (``pending =
    # pending + data``, ``bytes(pending)``) would allocate its 4 MiB on every read.
    big = encode([], b"z" * (8 * 1024 * 1024))
    framer = EventStreamFramer()
    framer.feed(big[: 4 * 1024 * 1024])
    # One read first: the buffer grows by an eighth of itself there (a realloc that
    # tracemalloc counts whole, once per growth: amortised, not per read).
    framer.feed(big[4 * 1024 * 1024 : 4 * 1024 * 1024 + 1024])
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        for i in range(4 * 1024 * 1024 + 1024, 4 * 1024 * 1024 + 64 * 1024, 1024):
            framer.feed(big[i : i + 1024])
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    # The reads' own 1 KiB slices, within the room the growth left: far below one copy
    # of what is held.
    assert peak < 1024 * 1024


def test_a_huge_message_in_small_reads_stays_linear() -> None:
    # 8 MiB in 1 KiB reads: linear is a few milliseconds; a framer that copied or
    # re-scanned what it holds on every read would move 32 GiB and hit the suite's
    # timeout (a hang guard, not a timed assertion).
    big = encode([], b"y" * (8 * 1024 * 1024))
    framer = EventStreamFramer()
    out = []
    for i in range(0, len(big), 1024):
        out += framer.feed(big[i : i + 1024])
    assert len(out) == 1 and len(out[0].payload) == 8 * 1024 * 1024


def test_importing_the_framer_loads_neither_botocore_nor_uuid() -> None:
    code = (
        "import sys, sse_toolcalls.framing.eventstream as e; "
        "e.EventStreamFramer().feed(b''); "
        "print(sorted(m for m in ('botocore', 'uuid', 'anyio', 'httpx') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_repeated_header_sections_are_decoded_once_but_never_shared() -> None:
    framer = EventStreamFramer()
    first, second = framer.feed(GOOD + GOOD)
    assert first.headers == second.headers and first.headers is not second.headers
    first.headers[":event-type"] = "changed"  # the caller's own dict
    assert framer.feed(GOOD)[0].event_type == "messageStop"
    # Bounded: at most 64 sections kept, none over 256 bytes.
    many = b"".join(encode([("n", INTEGER, i)], b"") for i in range(200))
    big = encode([("s", STRING, "x" * 300)], b"")
    assert len(framer.feed(many + big + big)) == 202
    assert len(framer._seen) == 64
    assert all(len(section) <= 256 for section in framer._seen)


def test_a_wide_memoryview_is_read_by_its_bytes() -> None:
    # len() of a memoryview counts its items: a message in 4-byte items is still whole.
    padded = GOOD + b"\x00" * (-len(GOOD) % 4)
    wide = memoryview(padded).cast("I")
    assert len(wide) < len(padded)
    framer = EventStreamFramer()
    assert framer.feed(wide)[0].event_type == "messageStop"  # type: ignore[arg-type]
    assert len(framer._pending) == len(padded) - len(GOOD)


def test_a_timestamp_past_datetimes_years_has_no_datetime() -> None:
    assert EventStreamTimestamp(2**63 - 1).datetime is None
    assert EventStreamTimestamp(-(2**63)).datetime is None
    assert EventStreamTimestamp(0).datetime == datetime(1970, 1, 1, tzinfo=UTC)
