"""The SSE framer: the spec's rules one by one, then chunking invariance and fuzzing."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls import EventTooLargeError, ServerSentEvent, SSEFramer, UsageError
from sse_toolcalls.framing import sse as sse_module
from sse_toolcalls.framing.sse import MAX_RETRY_DIGITS


def frame(*chunks: bytes, **options: int) -> tuple[list[ServerSentEvent], SSEFramer]:
    framer = SSEFramer(**options)
    events: list[ServerSentEvent] = []
    for chunk in chunks:
        events.extend(framer.feed(chunk))
    events.extend(framer.finish())
    return events, framer


def every_split(raw: bytes) -> list[list[bytes]]:
    """The input whole, byte by byte, and cut once at every position."""
    splits = [[raw], [raw[i : i + 1] for i in range(len(raw))]]
    splits += [[raw[:i], raw[i:]] for i in range(1, len(raw))]
    return splits


def test_basic_event_and_defaults() -> None:
    events, framer = frame(b"data: hello\n\n")
    assert events == [ServerSentEvent("message", "hello", "", None)]
    assert framer.last_event_id == ""
    assert framer.retry is None


def test_fields_event_id_retry_multiline_data() -> None:
    raw = b"event: add\nid: 7\nretry: 1500\ndata: a\ndata:b\ndata:  c\n\ndata: next\n\n"
    for chunks in every_split(raw):
        events, framer = frame(*chunks)
        assert events == [
            ServerSentEvent("add", "a\nb\n c", "7", 1500),
            ServerSentEvent("message", "next", "7", None),
        ]
        assert framer.retry == 1500


@pytest.mark.parametrize("ending", [b"\n", b"\r", b"\r\n"])
def test_every_line_ending_at_every_split(ending: bytes) -> None:
    raw = b"data: one" + ending + b"data: two" + ending + ending + b"data: 3" + ending * 2
    for chunks in every_split(raw):
        events, _ = frame(*chunks)
        assert [e.data for e in events] == ["one\ntwo", "3"]


def test_cr_at_chunk_end_and_lf_at_next_start_is_one_line_ending() -> None:
    # eventsource-parser#17: 'data: A\r\n', 'data: B\r', 'data: C\r\n', '\n' is ONE event.
    events, _ = frame(b"data: A\r\n", b"data: B\r", b"data: C\r\n", b"\n")
    assert [e.data for e in events] == ["A\nB\nC"]


def test_final_cr_is_a_complete_line_ending() -> None:
    events, _ = frame(b"data: x\r\r")
    assert [e.data for e in events] == ["x"]


def test_one_leading_bom_is_stripped_even_when_split() -> None:
    raw = b"\xef\xbb\xbfdata: a\n\n"
    for chunks in every_split(raw):
        events, _ = frame(*chunks)
        assert [e.data for e in events] == ["a"]


def test_a_second_bom_is_text_so_the_field_is_unknown() -> None:
    events, _ = frame(b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\ndata: b\n\n")
    assert [e.data for e in events] == ["b"]


def test_utf8_split_across_chunks_and_invalid_bytes_replaced() -> None:
    raw = "data: héllo 🙂 中文\n\n".encode()
    for chunks in every_split(raw):
        events, _ = frame(*chunks)
        assert [e.data for e in events] == ["héllo 🙂 中文"]
    events, _ = frame(b"data: a\xffb\n\n")
    assert events[0].data == "a\ufffdb"


def test_only_cr_and_lf_end_lines() -> None:
    text = "data: a\u2028b\u2029c\x85d\x0be\x0cf\n\n"
    events, _ = frame(text.encode())
    assert events[0].data == "a\u2028b\u2029c\x85d\x0be\x0cf"


def test_comments_unknown_fields_and_colonless_lines() -> None:
    events, _ = frame(b": keep-alive\nfoo: bar\ndata\n\n: x\ndata:x\n\n")
    assert [e.data for e in events] == ["", "x"]


def test_id_with_nul_is_ignored_and_id_persists() -> None:
    events, framer = frame(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n")
    assert [e.id for e in events] == ["1", "1"]
    assert framer.last_event_id == "1"


@pytest.mark.parametrize("value", [b"-1", b"+5", b"  5", b"5.0", b"1_0", b"", "\u0665".encode()])
def test_retry_accepts_ascii_digits_only(value: bytes) -> None:
    events, framer = frame(b"retry:" + value + b"\ndata: a\n\n")
    assert events[0].retry is None
    assert framer.retry is None


def test_retry_takes_effect_even_without_dispatch() -> None:
    events, framer = frame(b"retry: 0042\n\n")
    assert events == []
    assert framer.retry == 42


def test_blank_line_without_data_dispatches_nothing_but_sets_last_event_id() -> None:
    events, framer = frame(b"id: 9\nevent: x\n\ndata: a\n\n")
    assert events == [ServerSentEvent("message", "a", "9", None)]
    assert framer.last_event_id == "9"


def test_unterminated_final_block_is_dropped_and_its_id_not_kept() -> None:
    events, framer = frame(b"data: a\n\nid: 5\ndata: b\n")
    assert [e.data for e in events] == ["a"]
    assert framer.last_event_id == ""


def test_event_size_limit_raises_typed_error_and_refuses_more() -> None:
    framer = SSEFramer(max_event_bytes=100)
    assert framer.feed(b"data: " + b"x" * 50 + b"\n\n")
    with pytest.raises(EventTooLargeError) as info:
        for _ in range(10):
            framer.feed(b"x" * 30)
    assert info.value.limit == 100
    assert info.value.size > 100
    with pytest.raises(UsageError):
        framer.feed(b"\n\n")


def test_limit_counts_the_whole_pending_event_not_only_one_line() -> None:
    framer = SSEFramer(max_event_bytes=100)
    with pytest.raises(EventTooLargeError):
        for _ in range(10):
            framer.feed(b"data: " + b"y" * 20 + b"\n")


def test_finish_refuses_more_input() -> None:
    framer = SSEFramer()
    framer.finish()
    with pytest.raises(UsageError):
        framer.feed(b"data: a\n\n")
    with pytest.raises(UsageError):
        framer.finish()


def test_empty_chunks_are_harmless() -> None:
    events, _ = frame(b"", b"data: a\r", b"", b"\n", b"", b"\n")
    assert [e.data for e in events] == ["a"]


# -- properties ---------------------------------------------------------------------------

# Values free of line endings; field values may start with spaces or colons.
line_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),  # type: ignore[arg-type]  # hypothesis wants a Literal category tuple
    max_size=30,
)
an_event = st.fixed_dictionaries(
    {
        "event": st.sampled_from(["", "message", "add", "response.output_item.added"]),
        "data": st.lists(line_text, min_size=1, max_size=3),
        "id": st.one_of(st.none(), line_text.filter(lambda s: "\x00" not in s)),
        "retry": st.one_of(st.none(), st.integers(0, 10**MAX_RETRY_DIGITS - 1)),
        "comment": st.booleans(),
    }
)


def encode(events: list[dict[str, object]], endings: list[bytes]) -> bytes:
    """A test-only SSE encoder: the oracle the framer must invert."""
    out: list[bytes] = []
    k = 0

    def line(text: str) -> None:
        nonlocal k
        ending = endings[k % len(endings)]
        if not text and out and out[-1].endswith(b"\r") and ending.startswith(b"\n"):
            ending = b"\r"  # a CR then an LF would be one line ending, not two
        out.append(text.encode() + ending)
        k += 1

    for ev in events:
        if ev["comment"]:
            line(": keep-alive")
        if ev["event"]:
            line(f"event: {ev['event']}")
        if ev["id"] is not None:
            line(f"id: {ev['id']}")
        if ev["retry"] is not None:
            line(f"retry: {ev['retry']}")
        for piece in ev["data"]:  # type: ignore[attr-defined]
            line(f"data: {piece}")
        line("")
    return b"".join(out)


def expected(events: list[dict[str, object]]) -> list[ServerSentEvent]:
    out = []
    last_id = ""
    for ev in events:
        if ev["id"] is not None:
            last_id = str(ev["id"])
        out.append(
            ServerSentEvent(
                str(ev["event"]) or "message",
                "\n".join(ev["data"]),  # type: ignore[arg-type]
                last_id,
                ev["retry"],  # type: ignore[arg-type]
            )
        )
    return out


@settings(max_examples=150, deadline=None)
@given(
    events=st.lists(an_event, max_size=6),
    endings=st.lists(st.sampled_from([b"\n", b"\r", b"\r\n"]), min_size=1, max_size=4),
    bom=st.booleans(),
    cuts=st.lists(st.integers(min_value=0), max_size=12),
)
def test_round_trip_through_encoder_at_any_split(
    events: list[dict[str, object]], endings: list[bytes], bom: bool, cuts: list[int]
) -> None:
    raw = (b"\xef\xbb\xbf" if bom else b"") + encode(events, endings)
    points = sorted({c % (len(raw) + 1) for c in cuts})
    chunks = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    got, _ = frame(*chunks)
    assert got == expected(events)


@settings(max_examples=300, deadline=None)
@given(raw=st.binary(max_size=400), cuts=st.lists(st.integers(min_value=0), max_size=8))
def test_arbitrary_bytes_give_events_or_our_errors_and_never_depend_on_splits(
    raw: bytes, cuts: list[int]
) -> None:
    whole, _ = frame(raw)
    points = sorted({c % (len(raw) + 1) for c in cuts})
    chunks = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    split, _ = frame(*chunks)
    assert split == whole
    small = SSEFramer(max_event_bytes=64)
    try:
        for chunk in chunks:
            small.feed(chunk)
        small.finish()
    except EventTooLargeError:
        pass


def test_every_two_cut_split_of_mixed_blocks_matches_whole() -> None:
    # Blocks of every shape the fast paths special-case, next to ones they must not take.
    raw = (
        b": c\n\ndata: first\nid: 1\n\ndata:second\nid\n\ndata:  third\n\n"
        b"event: a\ndata: x\n\nevent: b\ndata: y\n\ndata: p\ndata: q\n\n\n\ndata: z\n\n"
    )
    whole, _ = frame(raw)
    assert [e.data for e in whole] == ["first", "second", " third", "x", "y", "p\nq", "z"]
    for i in range(1, len(raw)):
        for j in range(i, len(raw)):
            split, _ = frame(raw[:i], raw[i:j], raw[j:])
            assert split == whole, (i, j)


def test_retry_in_an_unfinished_block_takes_effect_when_its_line_ends() -> None:
    framer = SSEFramer()
    assert [e.data for e in framer.feed(b"data: a\n\nretry: 250")] == ["a"]
    assert framer.retry is None
    assert framer.feed(b"\ndata: b") == []
    assert framer.retry == 250  # before the block is dispatched, as the spec says
    assert [e.retry for e in framer.feed(b"\n\n")] == [250]


_TWINS = [t for t in (sse_module._PySSEFramer, sse_module._CSSEFramer) if t is not None]


def _limited_outcome(cls: Any, chunks: list[bytes], limit: int) -> Any:
    framer = cls(max_event_bytes=limit)
    try:
        events = [e for chunk in chunks for e in framer.feed(chunk)]
        return ("events", events, framer.finish())
    except EventTooLargeError as exc:
        return ("too large", exc.size)


@pytest.mark.parametrize("twin", _TWINS, ids=[t.__module__ for t in _TWINS])
def test_a_leading_bom_never_counts_toward_the_limit_however_it_is_split(twin: Any) -> None:
    # Fed whole, the BOM is stripped before any size is taken; fed byte by byte, the
    # unfinished first line held it (or the start of it) and crossed the limit by up to
    # three bytes (found by the framer fuzz target, both twins).
    bom = b"\xef\xbb\xbf"
    for first in (b"data: " + b"a" * 8, b"\xef\xbbdata: x", bom + b"data: y", b"\xef"):
        raw = bom + first + b"\n\ndata: z\n\n"
        for limit in range(1, len(raw) + 2):
            whole = _limited_outcome(twin, [raw], limit)
            kind = whole[0]
            for chunks in (
                [raw[i : i + 1] for i in range(len(raw))],
                *([raw[:cut], raw[cut:]] for cut in range(1, len(raw))),
            ):
                assert _limited_outcome(twin, chunks, limit)[0] == kind, (first, limit, chunks)


@pytest.mark.parametrize("twin", _TWINS, ids=[t.__module__ for t in _TWINS])
def test_a_read_that_opens_with_a_split_crlfs_lf_and_ends_no_line(twin: Any) -> None:
    # The pure twin takes such a read (after dropping the LF) down its line-less path:
    # the same events, and the same limit crossed at the same byte, as fed whole.
    raw = b"data: a\r\nxyzxyz\r\ndata: b\r\n\r\n"
    cut = raw.index(b"\n")  # the first chunk ends with the CR
    later = raw.index(b"\r", cut)  # the second holds the LF and "xyzxyz", no line end
    chunks = [raw[:cut], raw[cut:later], raw[later:]]
    for limit in range(1, len(raw) + 2):
        split, whole = _limited_outcome(twin, chunks, limit), _limited_outcome(twin, [raw], limit)
        assert split[0] == whole[0], limit
        if split[0] == "events":
            assert split == whole
    framer = twin()
    assert [e.data for chunk in chunks for e in framer.feed(chunk)] == ["a\nb"]
