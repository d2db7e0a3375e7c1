"""Same calls, same error class, however the bytes are split: errors included (issue 29,
item 11 and its general defence).

A call completed in the same read as a later in-stream error used to be lost (``feed``
raised a ``ProviderError`` that carried nothing), while in an earlier read it was
returned. Now every stream error (``StreamError.completed``: a provider's error, a
truncation, a malformed event, a framing limit) carries the calls completed before it
that no read returned, so what the reads returned and then what the error carries is
one thing, wherever the reads split the stream (each call once):

- every stream of ``recorded_streams/`` and ``../shared/external_streams`` (when it is
  there), cut once at every position (the larger ones at every event boundary and two
  bytes either side), byte by byte and at random cuts;
- the simulator's in-stream error streams of every dialect, the error sent after each
  event of the turn (before anything, inside a call, straight after a call's last delta),
  once and twice, cut at every position;
- a call's last event, then an event past a framer's limit (``max_event_bytes``,
  ``MAX_DATA_LINES_PER_EVENT``, ``MAX_RETRY_DIGITS``), every dialect, every cut: the
  framer attaches the events of the failing read before the limit to its error, and the
  parser reads them before it fails; and the twins equal on such streams, events and
  error, at every cut;

on both framer twins, each outcome being (error class or "ok", the calls).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls import (
    DIALECTS,
    EventTooLargeError,
    FramingError,
    LimitExceededError,
    ProviderError,
    SSEToolCallsError,
    StreamError,
    StreamParser,
    ToolCall,
    ToolCallCompleted,
    ToolCallParser,
    UsageError,
    as_dialect,
)
from sse_toolcalls import parser as parser_module
from sse_toolcalls.dialects import spec_for
from sse_toolcalls.framing import sse as sse_module
from sse_toolcalls.framing.eventstream import MAX_HEADERS_BYTES
from sse_toolcalls.framing.sse import DEFAULT_MAX_EVENT_BYTES
from sse_toolcalls.tooling.simulator.encoders import encode_error_event, encode_turn
from sse_toolcalls.tooling.simulator.script import ErrorEvent, ScriptedCall, Turn
from tests.core.test_eventstream_wire import bedrock_event
from tests.outside import EXTERNAL_STREAMS, outside_corpus

ROOT = Path(__file__).resolve().parents[2]
RECORDED = ROOT / "recorded_streams"
EXTERNAL = EXTERNAL_STREAMS

TWINS = [
    pytest.param(sse_module._PySSEFramer, id="pure"),
    pytest.param(
        sse_module._CSSEFramer,
        id="compiled",
        marks=pytest.mark.skipif(
            sse_module._CSSEFramer is None, reason="the C framer was not built"
        ),
    ),
]

EVERY_CUT_UP_TO = 3_000
"""Streams up to this many bytes are cut at every position (the work is the square of
the size); larger ones at every event boundary and the bytes around it."""

Key = tuple[str, Any, str | None, int]
Outcome = tuple[str, tuple[Key, ...]]


def _key(call: ToolCall) -> Key:
    return (call.name, call.args, call.call_id, call.index)


def outcome(
    dialect: str | None,
    chunks: list[bytes],
    *,
    rich: bool = False,
    max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
) -> Outcome:
    """What the stream gives: ``("ok", calls)`` or ``(error class, the calls returned
    before it, then the calls it carries)``: a caller that kept what ``feed`` returned and
    then read the error's ``completed`` has each call once."""
    typed = None if dialect is None else as_dialect(dialect)
    cls: Any = StreamParser if rich else ToolCallParser
    parser = cls(typed, max_event_bytes=max_event_bytes)
    returned: list[ToolCall] = []

    def take(items: list[Any]) -> None:
        for item in items:
            if isinstance(item, ToolCallCompleted):
                returned.append(item.call)
            elif isinstance(item, ToolCall):
                returned.append(item)

    try:
        for chunk in chunks:
            take(parser.feed(chunk))
        take(parser.finish())
    except StreamError as exc:
        # Every stream error carries the calls completed before it that no read returned
        # (a provider's error, a truncation, a malformed event, a framing limit).
        every = [_key(c) for c in (*returned, *exc.completed)]
        return type(exc).__name__, tuple(every)
    return "ok", tuple(_key(c) for c in returned)


def _cuts(raw: bytes, every_up_to: int) -> Iterator[int]:
    if len(raw) <= every_up_to:
        yield from range(1, len(raw))
        return
    near: set[int] = set()
    for boundary in itertools.chain(
        (i + 2 for i in range(len(raw)) if raw.startswith(b"\n\n", i)),
        (i + 4 for i in range(len(raw)) if raw.startswith(b"\r\n\r\n", i)),
    ):
        near.update(range(boundary - 3, boundary + 3))
    yield from sorted(c for c in near if 0 < c < len(raw))


def assert_split_independent(
    raw: bytes,
    dialect: str | None,
    every_up_to: int = EVERY_CUT_UP_TO,
    max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
) -> Outcome:
    whole = outcome(dialect, [raw], max_event_bytes=max_event_bytes)
    for cut in _cuts(raw, every_up_to):
        got = outcome(dialect, [raw[:cut], raw[cut:]], max_event_bytes=max_event_bytes)
        assert got == whole, cut
    singles = [raw[i : i + 1] for i in range(len(raw))]
    assert outcome(dialect, singles, max_event_bytes=max_event_bytes) == whole
    return whole


# --------------------------------------------------------------------------------------
# The corpora.


def _streams(folder: Path) -> list[tuple[str, str]]:
    manifest = json.loads((folder / "MANIFEST.json").read_text(encoding="utf-8"))
    out = []
    for entry in manifest:
        provider = entry["provider"]
        dialect = "openai_chat" if provider.startswith("openai_compat_") else provider
        if dialect in DIALECTS:
            out.append((entry["file"], dialect))
    return out


RECORDED_STREAMS = _streams(RECORDED)


@pytest.fixture(params=TWINS)
def twin(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(parser_module, "SSEFramer", request.param)
    return request.param


@pytest.mark.parametrize(("file", "dialect"), RECORDED_STREAMS)
def test_recorded_streams_at_every_cut(twin: Any, file: str, dialect: str) -> None:
    assert_split_independent((RECORDED / file).read_bytes(), dialect)


@outside_corpus
def test_external_streams_at_every_cut(twin: Any) -> None:
    streams = _streams(EXTERNAL)
    assert streams
    for file, dialect in streams:
        assert_split_independent((EXTERNAL / file).read_bytes(), dialect)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_recorded_streams_at_random_cuts(data: st.DataObject) -> None:
    file, dialect = data.draw(st.sampled_from(RECORDED_STREAMS))
    raw = (RECORDED / file).read_bytes()
    cuts = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(raw) - 1)), max_size=12))))
    chunks = [raw[a:b] for a, b in itertools.pairwise([0, *cuts, len(raw)])]
    assert outcome(dialect, chunks) == outcome(dialect, [raw])
    assert outcome(dialect, chunks, rich=True) == outcome(dialect, [raw], rich=True)


# --------------------------------------------------------------------------------------
# The simulator's error streams.

_TURNS = {
    "one call": Turn(calls=(ScriptedCall(name="weather", args={"city": "Oslo"}),)),
    "text and two calls": Turn(
        text="Let me see.",
        fragment_size=5,
        calls=(
            ScriptedCall(name="weather", args={"city": "Zürich"}),
            ScriptedCall(name="time", args={"zone": "CET", "n": [1, 2]}),
        ),
    ),
    "text only": Turn(text="Nothing to call."),
}


def _error_streams(dialect: str) -> Iterator[tuple[str, bytes, Turn, bool]]:
    """``(label, bytes, turn, whether the error comes after the whole turn)``."""
    for label, turn in _TURNS.items():
        events = encode_turn(dialect, turn)
        for after in range(len(events) + 1):
            error = ErrorEvent(after_events=after)
            raw = b"".join(encode_error_event(dialect, turn, error))
            late = after == len(events)
            yield f"{label}, error after {after}", raw, turn, late
            # Two errors: the second is never read (the first failed the parser).
            twice = ErrorEvent(after_events=0, code="rate_limit_exceeded", message="slow")
            second = encode_error_event(dialect, Turn(), twice)[-1]
            yield f"{label}, two errors after {after}", raw + second, turn, late


@pytest.mark.parametrize("dialect", DIALECTS)
def test_simulator_error_streams_at_every_cut(twin: Any, dialect: str) -> None:
    for label, raw, turn, late in _error_streams(dialect):
        # Every cut of the short ones; the event boundaries (where a call's last event
        # and the error meet) of all: the work stays within seconds per dialect.
        kind, carried = assert_split_independent(raw, dialect, every_up_to=800)
        scripted = [(c.name, c.args) for c in turn.calls]
        if late and dialect != "gemini":
            # After the end marker the turn is whole and nothing later is read (Gemini
            # has no end marker: its turn ends with the stream, so the error counts).
            assert kind == "ok", label
            assert [(name, args) for name, args, _, _ in carried] == scripted, label
            continue
        # An in-stream error is a provider error wherever it comes, and the calls it
        # carries are the turn's first ones, whole: never a guess, never out of order.
        assert kind == "ProviderError", label
        assert [(name, args) for name, args, _, _ in carried] == scripted[: len(carried)], label
        # Rich stream and detection agree with the calls-only parser.
        assert outcome(dialect, [raw], rich=True) == (kind, carried), label
        assert outcome(None, [raw])[0] == kind, label


@pytest.mark.parametrize("dialect", ["openai_responses", "anthropic", "gemini"])
def test_a_call_in_the_same_read_as_the_error_is_carried(dialect: str) -> None:
    # The example of the issue: the call's last event and the error in one read.
    turn = _TURNS["one call"]
    events = encode_turn(dialect, turn)
    completing = next(
        n for n in range(1, len(events) + 1) if outcome(dialect, [b"".join(events[:n])])[1]
    )
    raw = b"".join(encode_error_event(dialect, turn, ErrorEvent(after_events=completing)))
    head = b"".join(events[: completing - 1])
    parser = ToolCallParser(as_dialect(dialect))
    assert parser.feed(head) == []
    with pytest.raises(ProviderError) as info:
        parser.feed(raw[len(head) :])
    assert [(c.name, c.args) for c in info.value.completed] == [("weather", {"city": "Oslo"})]


@pytest.mark.parametrize("dialect", ["openai_responses", "anthropic", "gemini"])
@pytest.mark.parametrize(
    "tail",
    [
        pytest.param(b"data: {not json\n\n", id="malformed event"),
        pytest.param(b"data: [1, 2]\n\n", id="not an object"),
        pytest.param(b"event: error\ndata: {}\n\n", id="empty error event"),
    ],
)
def test_other_errors_after_a_call_carry_it_at_every_cut(
    twin: Any, dialect: str, tail: bytes
) -> None:
    # The neighbours of the in-stream error: whatever ends the stream after a call's
    # last event (before the turn's end), in the same read or a later one, the call is
    # carried by the error.
    turn = _TURNS["text and two calls"]
    events = encode_turn(dialect, turn)
    done = next(n for n in range(1, len(events) + 1) if outcome(dialect, [b"".join(events[:n])])[1])
    raw = b"".join(events[:done]) + tail
    whole = outcome(dialect, [raw])
    assert whole[0] != "ok", whole
    assert [k[:2] for k in whole[1]] == [("weather", {"city": "Zürich"})]
    for cut in range(1, len(raw)):
        assert outcome(dialect, [raw[:cut], raw[cut:]]) == whole, cut


# --------------------------------------------------------------------------------------
# A framer's limit after a call's last event: the events before the limit in the failing
# read used to be dropped (both twins checked a read's sizes before framing any of its
# events, and dropped what they had framed when a line limit failed), so a call completed
# in that read was carried only when the reads split before the failing event.

SMALL_DATA_LINES = 4
"""``MAX_DATA_LINES_PER_EVENT`` for the tests that cross it at every cut: at the real
65,536 an event past it is 320 KiB, whose every cut is too much work."""

EventKey = tuple[str, str, str, int | None]
Raised = tuple[str, str | None, int, int, tuple[EventKey, ...]]
Framed = tuple[tuple[tuple[EventKey, ...], ...], Raised | None]


@contextlib.contextmanager
def data_line_limit(lines: int) -> Iterator[None]:
    """Both twins with ``MAX_DATA_LINES_PER_EVENT`` at ``lines`` (the pure twin reads the
    module's constants, the compiled one the value ``_setup`` gave it), then as before."""
    saved = sse_module.MAX_DATA_LINES_PER_EVENT, sse_module._COUNT_LINES_FROM

    def setup(most: int) -> None:
        sse_module.MAX_DATA_LINES_PER_EVENT = most
        sse_module._COUNT_LINES_FROM = 5 * (most + 1)
        if sse_module._CSSEFramer is not None:
            from sse_toolcalls import _sse_c

            _sse_c._setup(
                event=sse_module.ServerSentEvent,
                base=SSEToolCallsError,
                usage=UsageError,
                framing=FramingError,
                too_large=EventTooLargeError,
                limit=LimitExceededError,
                max_event_bytes=DEFAULT_MAX_EVENT_BYTES,
                max_retry_digits=sse_module.MAX_RETRY_DIGITS,
                max_data_lines=most,
            )

    setup(lines)
    try:
        yield
    finally:
        setup(saved[0])
        sse_module._COUNT_LINES_FROM = saved[1]


@pytest.fixture
def few_data_lines() -> Iterator[None]:
    with data_line_limit(SMALL_DATA_LINES):
        yield


def _limit_tails(limit: int) -> dict[str, tuple[bytes, str]]:
    """What follows the call's last event, and the error it must end in."""
    digits = b"9" * (sse_module.MAX_RETRY_DIGITS + 1)
    lines = b"data: 1\n" * (SMALL_DATA_LINES + 1)
    big = b"x" * (limit + 1)
    return {
        "oversized event": (b"data: " + big + b"\n\n", "EventTooLargeError"),
        "oversized, unterminated": (b"data: " + big, "EventTooLargeError"),
        "oversized after an event": (b": ping\n\ndata: " + big + b"\n\n", "EventTooLargeError"),
        "too many data lines": (lines + b"\n", "LimitExceededError"),
        "too many data lines, pending": (lines, "LimitExceededError"),
        "too many retry digits": (b"retry: " + digits + b"\n\n", "LimitExceededError"),
        "too many retry digits, pending": (
            b"event: x\nretry: " + digits + b"\n",
            "LimitExceededError",
        ),
        # Inside one event too, the limit crossed first in the stream wins: the retry
        # line ends before the event grows past max_event_bytes.
        "too many retry digits, then oversized": (
            b"retry: " + digits + b"\ndata: " + big + b"\n\n",
            "LimitExceededError",
        ),
        # An earlier error in the same read wins over the limit after it.
        "malformed, then oversized": (
            b"data: {not json\n\ndata: " + big + b"\n\n",
            "MalformedStreamError",
        ),
    }


def _after_the_call(dialect: str) -> tuple[bytes, list[Key], int]:
    """The turn's events up to the first read that returns a call, the calls it returns,
    and a ``max_event_bytes`` just above the turn's largest event. (Chat releases its
    calls at its end marker, ``[DONE]``, after which an event is not read, but the
    framer's limits still hold.)"""
    events = encode_turn(dialect, _TURNS["text and two calls"])
    parser = ToolCallParser(as_dialect(dialect))
    for n, event in enumerate(events, 1):
        calls = parser.feed(event)
        if calls:
            return b"".join(events[:n]), [_key(c) for c in calls], max(map(len, events)) + 8
    raise AssertionError(f"no call of {dialect} completes before the end")


def _event_stream_tails(limit: int, dialect: str) -> dict[str, tuple[bytes, str]]:
    """The same for AWS's event stream (the Bedrock dialects): its framer's limits are
    read from a message's 12-byte prelude, and a corrupted message is its error too."""
    empty = len(bedrock_event("futureEventType", b""))
    big = bedrock_event("futureEventType", b"x" * (limit + 1 - empty))
    lengths = struct.pack(">II", 16 + MAX_HEADERS_BYTES + 1, MAX_HEADERS_BYTES + 1)
    headers_past = lengths + struct.pack(">I", zlib.crc32(lengths))
    unknown = bedrock_event("futureEventType", b'{"p":"abc"}')
    good = bedrock_event("futureEventType", b'{"p":"abcdef"}')
    corrupted = good[:-5] + bytes([good[-5] ^ 0x20]) + good[-4:]
    malformed = bedrock_event(
        "chunk" if dialect == "bedrock_anthropic" else "contentBlockDelta", b"{not json"
    )
    return {
        "oversized message": (big, "MessageTooLargeError"),
        "oversized, its prelude only": (big[:12], "MessageTooLargeError"),
        "oversized after an event": (unknown + big, "MessageTooLargeError"),
        "headers past MAX_HEADERS_BYTES": (headers_past, "EventStreamLimitError"),
        "a corrupted message": (unknown + corrupted, "ChecksumMismatchError"),
        # An earlier error in the same read wins over the limit after it.
        "malformed, then oversized": (malformed + big, "MalformedStreamError"),
    }


def _tails(dialect: str, limit: int) -> dict[str, tuple[bytes, str]]:
    if spec_for(dialect).framing == "eventstream":
        return _event_stream_tails(limit, dialect)
    return _limit_tails(limit)


@pytest.mark.usefixtures("few_data_lines")
@pytest.mark.parametrize(
    ("dialect", "tail"), [(d, t) for d in DIALECTS for t in _tails(d, limit=64)]
)
def test_a_call_before_a_framer_limit_is_carried_at_every_cut(
    twin: Any, dialect: str, tail: str
) -> None:
    head, calls, limit = _after_the_call(dialect)
    rest, expected = _tails(dialect, limit)[tail]
    if dialect == "openai_chat" and expected == "MalformedStreamError":
        expected = "EventTooLargeError"  # the malformed event comes after [DONE]
    raw = head + rest
    kind, carried = assert_split_independent(raw, dialect, max_event_bytes=limit)
    assert kind == expected
    assert list(carried) == calls
    assert calls[0][:2] == ("weather", {"city": "Zürich"})
    # Detection: the same when the dialect is recognised from the stream (every event
    # boundary and the bytes around it, and byte by byte).
    assert assert_split_independent(raw, None, every_up_to=0, max_event_bytes=limit) == (
        kind,
        carried,
    )
    assert outcome(dialect, [raw], rich=True, max_event_bytes=limit) == (kind, carried)


@pytest.mark.parametrize("dialect", ["openai_chat", "gemini"])
def test_a_call_before_too_many_data_lines_at_the_real_limit(twin: Any, dialect: str) -> None:
    # The lowered limit above stands in for this one, at its real value: the event
    # boundaries and the bytes around them, byte by byte.
    head, calls, _ = _after_the_call(dialect)
    raw = head + b"data\n" * (sse_module.MAX_DATA_LINES_PER_EVENT + 1) + b"\n"
    kind, carried = assert_split_independent(raw, dialect, every_up_to=0)
    assert kind == "LimitExceededError"
    assert list(carried) == calls


def _framed(cls: Any, chunks: list[bytes], limit: int) -> Framed:
    """Each feed's events, then the error's class, limit name, limit, size and events."""
    framer = cls(max_event_bytes=limit)
    got: list[tuple[EventKey, ...]] = []
    try:
        for chunk in chunks:
            got.append(tuple(framer.feed(chunk)))
        got.append(tuple(framer.finish()))
    except (EventTooLargeError, LimitExceededError) as exc:
        raised = (
            type(exc).__name__,
            getattr(exc, "limit_name", None),
            exc.limit,
            exc.size,
            tuple(exc.events),
        )
        return tuple(got), raised
    return tuple(got), None


def _whole(framed: Framed) -> tuple[tuple[EventKey, ...], Raised | None]:
    """The events of every read, those the error carries included, and the error
    without its size (a size counts the bytes pending when the read crossed it, which
    depends on the split)."""
    (reads, raised) = framed
    events = tuple(e for read in reads for e in read)
    if raised is None:
        return events, None
    kind, name, limit, _, carried = raised
    return events + carried, (kind, name, limit, 0, ())


_PIECES = [
    b"data: a\n\n",
    b"event: e\ndata: bb\n\n",
    b"id: 7\ndata: c\n\n",
    b": ping\n\n",
    b"data: 1\ndata: 2\n\n",
    b"retry: 120\ndata: r\n\n",
    b"data: " + b"x" * 30 + b"\n\n",
    b"retry: " + b"9" * 65 + b"\n\n",
    b"data: 1\n" * (SMALL_DATA_LINES + 1) + b"\n",
    b"\n",
    # Two limits in one event: whichever the stream crosses first.
    b"retry: " + b"9" * 65 + b"\ndata: " + b"y" * 40 + b"\n\n",
    b"data: 1\n" * (SMALL_DATA_LINES + 3) + b"data: " + b"z" * 40 + b"\n\n",
    b"data: 1\n" * (SMALL_DATA_LINES + 1) + b"retry: " + b"9" * 65 + b"\n\n",
    b"data: 1\n" * 3 + b"retry: " + b"9" * 65 + b"\n" + b"data: 1\n" * 3 + b"\n",
]


@settings(max_examples=150, deadline=None)
@given(
    pieces=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=6),
    crlf=st.booleans(),
    limit=st.integers(min_value=8, max_value=120),
)
def test_twins_give_the_same_events_and_error_at_every_cut(
    pieces: list[bytes], crlf: bool, limit: int
) -> None:
    if sse_module._CSSEFramer is None:
        pytest.skip("the C framer was not built")
    raw = b"".join(pieces)
    if crlf:
        raw = raw.replace(b"\n", b"\r\n")
    pure, compiled = sse_module._PySSEFramer, sse_module._CSSEFramer
    with data_line_limit(SMALL_DATA_LINES):
        whole = _framed(pure, [raw], limit)
        assert _framed(compiled, [raw], limit) == whole
        # The same events (returned, or carried by the error) and the same error at
        # every cut: the twins agree with each other and with the whole read.
        for cut in range(1, len(raw)):
            chunks = [raw[:cut], raw[cut:]]
            split = _framed(pure, chunks, limit)
            assert _framed(compiled, chunks, limit) == split, cut
            assert _whole(split) == _whole(whole), cut
        singles = [raw[i : i + 1] for i in range(len(raw))]
        assert _framed(compiled, singles, limit) == _framed(pure, singles, limit)
        assert _whole(_framed(pure, singles, limit)) == _whole(whole)


@pytest.mark.parametrize("dialect", ["openai_responses", "anthropic", "gemini"])
def test_a_call_then_an_error_is_each_call_once_in_one_read_or_two(dialect: str) -> None:
    """A caller that keeps what ``feed`` returned and adds the error's ``completed`` has
    the call once, whether the error came in the call's read or a read of its own: the
    error carries only what no read returned (before, two reads gave the call twice)."""
    turn = _TURNS["one call"]
    events = encode_turn(dialect, turn)
    completing = next(
        n for n in range(1, len(events) + 1) if outcome(dialect, [b"".join(events[:n])])[1]
    )
    raw = b"".join(encode_error_event(dialect, turn, ErrorEvent(after_events=completing)))
    call_part = b"".join(events[:completing])
    seen = []
    for reads in ([raw], [call_part, raw[len(call_part) :]]):
        parser = ToolCallParser(as_dialect(dialect))
        got: list[ToolCall] = []
        with pytest.raises(ProviderError) as info:
            for read in reads:
                got += parser.feed(read)
        seen.append([(c.name, c.args) for c in (*got, *info.value.completed)])
    assert seen == [[("weather", {"city": "Oslo"})]] * 2
