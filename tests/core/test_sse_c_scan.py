"""The compiled framer's per-feed shortcuts (issue 16, W4) give the pure twin's events.

One pass over each chunk of up to 4 KiB says whether it holds a CR and whether it is all
ASCII (then its data lines skip their own check); it has an AVX2, an SSE2 and a byte-by-byte
version, and each one this machine can run is held to the pure twin here, with the flagged
byte at every position of chunks of every length around the vector widths. The events are
built without the collector's tracking, and the list a feed returns takes over the
framer's array: both must still behave as any event and any list.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sse_toolcalls.framing import sse as sse_module

compiled = sse_module._CSSEFramer
pure = sse_module._PySSEFramer
pytestmark = pytest.mark.skipif(compiled is None, reason="the C framer was not built")

VERSIONS = ("avx2", "sse2", "bytes")


def scan_module() -> Any:
    from sse_toolcalls import _sse_c

    return _sse_c


def runnable() -> list[str]:
    """The scan versions this machine runs (bytes always; SSE2 on every x86-64)."""
    if compiled is None:
        return []
    module = scan_module()
    found = []
    before = module._scan_version()
    try:
        for name in VERSIONS:
            try:
                module._scan_version(name)
            except ValueError:
                continue
            found.append(name)
    finally:
        module._scan_version(before)
    return found


@pytest.fixture(params=runnable() or ["none"])
def version(request: pytest.FixtureRequest) -> Iterator[str]:
    module = scan_module()
    before = module._scan_version(request.param)
    try:
        yield str(request.param)
    finally:
        module._scan_version(before)


def frame(cls: Any, chunks: list[bytes]) -> list[Any]:
    framer = cls()
    out: list[Any] = []
    for chunk in chunks:
        out.append(framer.feed(chunk))
    out.append(framer.finish())
    return out


def test_this_machine_runs_the_portable_versions() -> None:
    names = runnable()
    assert "bytes" in names
    import platform

    if platform.machine() in ("x86_64", "AMD64"):
        assert "sse2" in names


def test_an_unknown_version_is_refused() -> None:
    with pytest.raises(ValueError, match="not available"):
        scan_module()._scan_version("avx512")


# Lengths around 16, 32 and 64 and their multiples, where a vector loop hands over to its
# tail or to an overlapping last load.
LENGTHS = [*range(80), 95, 96, 97, 127, 128, 129, 191, 192, 193, 255, 256, 257]
FLAGS = [b"\r", b"\xc3\xa9", b"\x80", b"\r\n"]


def test_a_flagged_byte_anywhere_in_a_chunk_of_any_length(version: str) -> None:
    for length in LENGTHS:
        for flag in FLAGS:
            for at in range(length + 1):
                body = b"x" * at + flag + b"y" * (length - at)
                # "data: " and the blank line around it: the scan sees the whole chunk,
                # so the flag is at every offset of chunks of every length.
                raw = b"data: " + body + b"\n\n"
                assert frame(compiled, [raw]) == frame(pure, [raw]), (version, length, at, flag)


def test_clean_chunks_of_every_length(version: str) -> None:
    for length in LENGTHS:
        raw = b"data: " + b"z" * length + b"\n\ndata: 1\n\n"
        assert frame(compiled, [raw]) == frame(pure, [raw]), (version, length)


def test_a_chunk_past_the_scanned_size_takes_the_other_path(version: str) -> None:
    # 4096 bytes is the most a chunk may be for the one-pass scan; one more takes memchr.
    for size in (4095, 4096, 4097):
        for flag in (b"", b"\r", b"\xc3\xa9"):
            body = b"data: " + flag + b"q" * (size - 8 - len(flag)) + b"\n\n"
            assert len(body) == size
            assert frame(compiled, [body]) == frame(pure, [body])


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    raw=st.lists(
        st.sampled_from(
            [
                b"data: ",
                b"data:",
                b"id: 7",
                b"event: e",
                b":c",
                b"\n",
                b"\r",
                b"\r\n",
                b"ab",
                b"\xc3\xa9",
                b"\xff",
                b"retry: 5",
                b"x" * 40,
            ]
        ),
        max_size=60,
    ).map(b"".join),
    cuts=st.lists(st.integers(min_value=0), max_size=5),
)
def test_versions_agree_with_the_pure_twin_at_random_cuts(
    version: str, raw: bytes, cuts: list[int]
) -> None:
    points = sorted({c % (len(raw) + 1) for c in cuts})
    chunks = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    assert frame(compiled, chunks) == frame(pure, chunks)


def test_events_are_untracked_and_whole() -> None:
    assert compiled is not None
    events = compiled().feed(b"event: e\nid: 3\nretry: 10\ndata: a\ndata: b\n\ndata: c\n\n")
    assert events == [("e", "a\nb", "3", 10), ("message", "c", "3", None)]
    for event in events:
        assert type(event) is sse_module.ServerSentEvent
        assert not gc.is_tracked(event)
        assert event._replace(data="d").data == "d"
        assert hash(event) == hash(tuple(event))


def test_the_returned_list_is_an_ordinary_list() -> None:
    assert compiled is not None
    framer = compiled()
    first = framer.feed(b"data: 1\n\ndata: 2\n\n")
    second = framer.feed(b"data: 3\n\n")  # the framer made itself a new array
    first.extend(second * 50)
    first.append(None)  # type: ignore[arg-type]
    del first[1:40]
    assert len(first) == 14 and first[0].data == "1" and first[-1] is None
    assert [e.data for e in second] == ["3"]
    assert framer.feed(b"") == [] and framer.feed(b"data: 4") == []
    assert [e.data for e in framer.feed(b"\n\n")] == ["4"]


def test_setup_refuses_an_event_class_with_fields_of_its_own() -> None:
    module = scan_module()

    class Wider(tuple):  # type: ignore[type-arg]
        pass  # no __slots__: every instance has a __dict__

    with pytest.raises(TypeError, match="no fields of its own"):
        module._setup(
            event=Wider,
            base=Exception,
            usage=Exception,
            framing=Exception,
            too_large=Exception,
            limit=Exception,
            max_event_bytes=10,
            max_retry_digits=10,
            max_data_lines=10,
        )
    # The refusal changed nothing: the framer still makes ServerSentEvents.
    assert compiled is not None
    (event,) = compiled().feed(b"data: ok\n\n")
    assert type(event) is sse_module.ServerSentEvent


def outcome(cls: Any, chunks: list[bytes], limit: int | None) -> list[Any]:
    framer = cls() if limit is None else cls(max_event_bytes=limit)
    out: list[Any] = []
    try:
        for chunk in chunks:
            out.append(framer.feed(chunk))
        out.append(framer.finish())
    except Exception as exc:  # the error's whole state, whatever it is
        out.append((type(exc), str(exc), sorted(vars(exc).items())))
    return out


LONG = (
    b"\xef\xbb\xbfdata: " + b"a" * 300 + b"\nid: 9\n\n"
    b"data: " + b"b" * 290 + b"\xc3\xa9\ndata: c\n\n\n"
    b"event: e\ndata: " + b"d" * 280 + b"\n\n" + b"data: tail" + b"e" * 270
)


@pytest.mark.parametrize("limit", [None, 300, 320, 600, 700])
def test_a_long_read_after_an_unfinished_line_is_read_in_place(limit: int | None) -> None:
    # The unfinished line is completed from the read and the rest of the read is taken
    # in place (when no size check can be due): every cut, so that the pending bytes
    # hold part of the BOM, end just before a blank line, or hold most of an event.
    for point in range(1, len(LONG)):
        for chunks in ([LONG[:point], LONG[point:]], [LONG[:point], LONG[point:], b"\n\n"]):
            assert outcome(compiled, chunks, limit) == outcome(pure, chunks, limit), point


def test_a_repeated_event_type_is_reused_only_when_its_bytes_are_the_same() -> None:
    names = [b"abc", b"abc", b"abd", b"ab", b"", b"abd", b"\xc3\xa9tat", b"\xc3\xa9tat", b"abd"]
    raw = b"".join(b"event: " + name + b"\ndata: x\n\n" for name in names)
    raw += b"event: abd\nevent: abc\ndata: y\n\nevent\ndata: z\n\n"
    for chunks in ([raw], [raw[i : i + 1] for i in range(len(raw))]):
        assert frame(compiled, chunks) == frame(pure, chunks)
    assert compiled is not None
    assert [e.event for e in compiled().feed(raw)] == [
        *["abc", "abc", "abd", "ab", "message", "abd", "état", "état", "abd", "abc"],
        "message",
    ]


# The lines of a chunk not known ASCII as a whole (a non-ASCII byte somewhere in it, or
# past the scanned size) find their LF and their own ASCII-ness in one pass (line_end):
# a line must be called ASCII only when every byte before its LF is, whatever follows.
PAD = b":" + b"p" * 4100 + b"\n"  # a comment line that takes the chunk past 4096 bytes


def test_each_line_of_a_mixed_chunk_is_judged_on_its_own_bytes(version: str) -> None:
    for length in LENGTHS:
        for at in sorted({0, 1, length // 2, max(length - 1, 0), length}):
            for flagged in (False, True):
                first = b"a" * at + (b"\xc3\xa9" if flagged else b"") + b"b" * (length - at)
                for gap in (0, 1, 15, 31, 33, 63):
                    # the next line's non-ASCII byte lands in the same vector as this LF
                    second = b"c" * gap + b"\xc3\xa9"
                    for pad in (b"", PAD):
                        raw = pad + b"data: " + first + b"\ndata: " + second + b"\n\n"
                        got = frame(compiled, [raw])
                        assert got == frame(pure, [raw]), (version, length, at, gap, len(pad))
                        (event,) = got[0]
                        assert event.data.encode() == first + b"\n" + second


def test_a_long_ascii_line_in_a_large_chunk_is_ascii_text(version: str) -> None:
    for length in (4097, 5000, 20_000):
        raw = b"data: " + bytes(range(32, 127)) * (length // 95) + b"\n\n"
        ((event,), _) = frame(compiled, [raw])
        assert event.data.isascii() and event.data == raw[6:-2].decode()
        assert frame(compiled, [raw]) == frame(pure, [raw])


# A read of whole lines with nothing pending, after the stream's first read (which looks
# for the BOM), takes feed_whole_lines: no pass over the read before its lines, each
# line's end and ASCII-ness found by line_end, which also stops at a CR and hands the
# rest of the read to the general path. The bytes below 14 that line_end flags and
# passes (TAB, NUL, VT, FF) and those just outside its test (0x0E, 0x7F) are among the
# flags, and the read is also fed whole and byte by byte: the three must agree.
WHOLE_FLAGS = [*FLAGS, b"\t", b"\x00", b"\x0b", b"\x0c", b"\x0e", b"\x7f", b"\r\r", b"\xe2\x80\xa8"]
OPENING = b":open\n\n"


def reads_three_ways(raw: bytes) -> list[list[bytes]]:
    return [[OPENING, raw], [OPENING + raw], [bytes([b]) for b in OPENING + raw]]


def events_of(cls: Any, chunks: list[bytes]) -> list[Any]:
    return [e for batch in frame(cls, chunks) for e in batch]


def test_a_whole_line_read_with_a_flag_anywhere(version: str) -> None:
    for length in LENGTHS:
        for flag in WHOLE_FLAGS:
            for at in range(length + 1):
                body = b"x" * at + flag + b"y" * (length - at)
                raw = b"data: " + body + b"\n\n"
                chunks = [OPENING, raw]
                assert frame(compiled, chunks) == frame(pure, chunks), (version, length, at, flag)


def test_a_cr_in_a_later_line_of_a_whole_line_read(version: str) -> None:
    # The lines before the CR's are framed in place, the rest as if the read had been
    # split there; the stream's next reads, all LF, are framed as before.
    for length in (0, 1, 31, 32, 33, 63, 64, 65, 200):
        for ending in (b"\r\n", b"\r", b"\r\n\r\n", b"\n\r\n"):
            for lead in (b"", b"event: e\n", b"data: a\n\n", b"id: 1\ndata: b\n\n\n"):
                raw = lead + b"data: " + b"q" * length + ending + b"data: z\n\n"
                later = [b"data: after\n\n", b"event: f\ndata: \xc3\xa9\n\n"]
                for first in reads_three_ways(raw):
                    chunks = [*first, *later]
                    assert frame(compiled, chunks) == frame(pure, chunks), (length, ending, lead)
                    assert events_of(compiled, chunks) == events_of(compiled, [b"".join(chunks)])


def test_whole_line_reads_keep_the_pending_block_count_for_the_size_limit() -> None:
    # The block left pending by a whole-line read counts toward the next read's event
    # size; limits around each read's size and the block's, every read whole lines.
    reads = [
        OPENING,
        b"event: e\n",
        b"id: 5\n",
        b"data: " + b"a" * 40 + b"\n",
        b"\n",
        b"data: b\n\n",
        b"data: " + b"c" * 90 + b"\ndata: d\n",
    ]
    for limit in range(1, 140):
        assert outcome(compiled, reads, limit) == outcome(pure, reads, limit), limit


def test_whole_line_reads_count_the_data_lines_as_the_general_path() -> None:
    from sse_toolcalls.framing.sse import MAX_DATA_LINES_PER_EVENT as most

    for extra, tail in ((0, b""), (1, b""), (1, b"\n"), (0, b"data: x\r\n")):
        many = b"data: 1\n" * (most + extra) + tail
        reads = [OPENING, many, b"\n"]
        assert outcome(compiled, reads, None) == outcome(pure, reads, None), (extra, tail)
