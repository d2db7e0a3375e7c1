"""The event-stream framer held equal to botocore's ``EventStreamBuffer`` (the reference):
random valid streams at random splits, hostile messages, and the real Bedrock recordings
in ``../shared/external_streams/bedrock/`` at every split point (all of them for the
small files, a seeded sample for the rest).
"""

from __future__ import annotations

import json
import random
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from botocore import eventstream as boto  # type: ignore[import-untyped]
from hypothesis import example, given
from hypothesis import strategies as st

from sse_toolcalls.errors import FramingError
from sse_toolcalls.framing.eventstream import (
    MAX_HEADERS_BYTES,
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
    STRING,
    TIMESTAMP,
    UUID,
    Header,
    bedrock_event,
    big_streams,
    botocore_reads,
    encode,
    frame,
    ours,
    split,
    streams,
)
from tests.outside import EXTERNAL_STREAMS, corpus_params, manifest_entries, outside_corpus

BEDROCK = EXTERNAL_STREAMS / "bedrock"


def framed(chunks: Sequence[bytes]) -> list[EventStreamMessage]:
    """Our messages from ``chunks`` fed in turn, then ``finish()``; after every read the
    framer holds less than one message (its memory bound)."""
    framer = EventStreamFramer()
    out: list[EventStreamMessage] = []
    for chunk in chunks:
        out += framer.feed(chunk)
        assert len(framer._pending) < framer._need
    assert framer.finish() == []
    return out


def outcome(chunks: Sequence[bytes]) -> tuple[list[EventStreamMessage], str | None, int | None]:
    """Every message the framer gave (returned, then carried by the error), and the
    error's problem and offset: the whole outcome, which no split may change."""
    framer = EventStreamFramer()
    out: list[EventStreamMessage] = []
    try:
        for chunk in chunks:
            out += framer.feed(chunk)
        framer.finish()
    except EventStreamError as exc:
        return out + exc.messages, exc.problem, exc.offset
    return out, None, None


# ----------------------------------------------------------------------------------------
# Valid streams.


@given(streams, st.lists(st.integers(min_value=0), max_size=20))
def test_random_streams_frame_as_botocore_frames_them_at_random_splits(
    stream: list[tuple[list[Header], bytes]], cuts: list[int]
) -> None:
    data = b"".join(encode(h, p) for h, p in stream)
    chunks = split(data, cuts)
    expected, left = botocore_reads(chunks)
    assert left == 0
    assert ours(framed(chunks)) == expected
    assert ours(framed([data])) == expected
    assert len(expected) == len(stream)


@given(big_streams, st.lists(st.integers(min_value=0), max_size=30))
def test_values_near_the_wire_bound_frame_as_botocore_frames_them(
    stream: list[tuple[list[Header], bytes]], cuts: list[int]
) -> None:
    data = b"".join(encode(h, p) for h, p in stream)
    chunks = split(data, cuts)
    expected, left = botocore_reads(chunks)
    assert left == 0
    assert ours(framed(chunks)) == expected


@given(streams)
def test_random_streams_frame_as_botocore_frames_them_byte_by_byte(
    stream: list[tuple[list[Header], bytes]],
) -> None:
    data = b"".join(encode(h, p) for h, p in stream)
    expected, _ = botocore_reads([data])
    assert ours(framed([data[i : i + 1] for i in range(len(data))])) == expected


@given(streams, st.lists(st.integers(min_value=0), max_size=8))
def test_timestamps_and_uuids_keep_their_types(
    stream: list[tuple[list[Header], bytes]], cuts: list[int]
) -> None:
    data = b"".join(encode(h, p) for h, p in stream)
    for (headers, _), message in zip(stream, framed(split(data, cuts)), strict=True):
        for name, kind, value in headers:
            got = message.headers[name]
            assert isinstance(got, EventStreamTimestamp) == (kind == TIMESTAMP)
            if kind == UUID:
                assert got.bytes == value  # type: ignore[union-attr]
            if kind == BYTE_ARRAY:
                assert got == value and type(got) is bytes


# ----------------------------------------------------------------------------------------
# Hostile streams: our typed errors, whatever the split; botocore refuses them too where
# it does (noted where it does not).

GOOD = bedrock_event("contentBlockDelta", b'{"delta":{"text":"hi"}}')


def botocore_refuses(data: bytes) -> bool:
    """Whether botocore raises on ``data`` (any exception: its own ``ParserError``s, or
    the ``KeyError``/``struct.error``/``UnicodeDecodeError`` that leak from it)."""
    try:
        botocore_reads([data])
    except Exception:
        return True
    return False


def hostile_cases() -> dict[str, tuple[bytes, str]]:
    header = b"\x04name\x07\x00\x05value"
    bad_prelude = bytearray(GOOD)
    bad_prelude[9] ^= 0x01
    bad_lengths = bytearray(GOOD)
    bad_lengths[3] ^= 0x01
    bad_message = bytearray(GOOD)
    bad_message[20] ^= 0x80
    bad_last_crc = bytearray(GOOD)
    bad_last_crc[-1] ^= 0x01
    return {
        "prelude CRC": (bytes(bad_prelude), "prelude_crc"),
        "a length under its prelude CRC": (bytes(bad_lengths), "prelude_crc"),
        "message CRC (body)": (bytes(bad_message), "message_crc"),
        "message CRC (itself)": (bytes(bad_last_crc), "message_crc"),
        "total length 0": (frame(b"", b"", total=0), "length_too_small"),
        "total length 15": (frame(b"", b"", total=15), "length_too_small"),
        "headers length past the message": (
            _prelude(16 + 4, 5) + b"\x00" * 8,
            "headers_past_message",
        ),
        "headers past MAX_HEADERS_BYTES": (
            _prelude(16 + MAX_HEADERS_BYTES + 1, MAX_HEADERS_BYTES + 1),
            "headers_too_large",
        ),
        "message past max_message_bytes": (_prelude(2**32 - 1, 0), "message_too_large"),
        "a string value past the headers": (frame(header[:-1], b"x"), "header_past_headers"),
        "a string length past the headers": (frame(b"\x01a\x07\x00", b""), "header_past_headers"),
        "a name past the headers": (frame(b"\x09abc", b""), "header_past_headers"),
        "a name without its type": (frame(b"\x01a", b""), "header_past_headers"),
        "a long past the headers": (frame(b"\x01a\x05\x00\x00", b""), "header_past_headers"),
        "a uuid past the headers": (frame(b"\x01a\x09" + b"\x00" * 15, b""), "header_past_headers"),
        "unknown header type 10": (frame(b"\x01a\x0a", b""), "unknown_header_type"),
        "unknown header type 255": (frame(b"\x01a\xff\x00", b""), "unknown_header_type"),
        "a name that is not UTF-8": (frame(b"\x01\xff\x00", b""), "invalid_utf8"),
        "a string that is not UTF-8": (frame(b"\x01a\x07\x00\x01\xc3", b""), "invalid_utf8"),
        "a duplicate header": (frame(header + header, b""), "duplicate_header"),
        "a stream cut inside the prelude": (GOOD[:7], "truncated"),
        "a stream cut inside the payload": (GOOD[:-9], "truncated"),
        "a stream cut inside the message CRC": (GOOD[:-1], "truncated"),
    }


def _prelude(total: int, headers: int) -> bytes:
    lengths = struct.pack(">II", total, headers)
    return lengths + struct.pack(">I", zlib.crc32(lengths))


HOSTILE = hostile_cases()

BOTOCORE_LETS_THROUGH = {
    # Its byte-array and uuid readers slice without checking the length against the
    # section: a short value ("valu"; a 15-byte uuid), and the loop ends.
    "a string value past the headers",
    "a uuid past the headers",
    # A cut stream is bytes left in its buffer, which it does not report.
    "a stream cut inside the prelude",
    "a stream cut inside the payload",
    "a stream cut inside the message CRC",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_messages_are_our_typed_errors(name: str) -> None:
    data, problem = HOSTILE[name]
    with pytest.raises(EventStreamError) as info:
        framer = EventStreamFramer()
        framer.feed(GOOD)  # a whole message first: it goes with the error
        framer.feed(data)
        framer.finish()
    exc = info.value
    assert exc.problem == problem
    assert exc.offset == len(GOOD)
    assert isinstance(exc, FramingError)
    assert exc.messages == []  # the good message was returned by its own read
    # One read of both: the good message goes with the error.
    framer = EventStreamFramer()
    returned = []
    with pytest.raises(EventStreamError) as info:
        returned = framer.feed(GOOD + data)
        framer.finish()
    # The read's own error carries it; a cut found by finish() leaves it with the read.
    carried = returned if problem == "truncated" else info.value.messages
    assert [m.payload for m in carried] == [b'{"delta":{"text":"hi"}}']
    if problem in ("prelude_crc", "message_crc"):
        assert isinstance(exc, ChecksumMismatchError) and exc.which == problem[:-4]
        assert exc.expected != exc.computed
    if problem in ("headers_too_large", "too_many_headers"):
        assert isinstance(exc, EventStreamLimitError) and exc.limit_name == "MAX_HEADERS_BYTES"
    if problem == "message_too_large":
        assert isinstance(exc, MessageTooLargeError) and exc.size == 2**32 - 1
    if problem == "truncated":
        assert isinstance(exc, IncompleteMessageError)
    # The reference: botocore refuses it too, or is listed as letting it through.
    assert botocore_refuses(data) != (name in BOTOCORE_LETS_THROUGH), name


@pytest.mark.parametrize("name", sorted(HOSTILE))
@given(cuts=st.lists(st.integers(min_value=0), max_size=10))
def test_hostile_outcomes_do_not_depend_on_the_split(name: str, cuts: list[int]) -> None:
    hostile, problem = HOSTILE[name]
    # A cut is a cut only at the end: a message after it would be read as its rest.
    data = GOOD + hostile + (b"" if problem == "truncated" else GOOD)
    assert outcome(split(data, cuts)) == outcome([data])
    assert outcome([data])[1] == problem


@given(st.binary(max_size=200), st.lists(st.integers(min_value=0), max_size=8))
@example(GOOD + b"\x00" * 12, [])
def test_arbitrary_bytes_give_messages_or_our_error_the_same_under_every_split(
    data: bytes, cuts: list[int]
) -> None:
    whole = outcome([data])
    assert outcome(split(data, cuts)) == whole
    assert outcome([data[i : i + 1] for i in range(len(data))]) == whole
    messages, problem, _ = whole
    if problem is None:
        # Then botocore reads the same, with nothing left over.
        assert botocore_reads([data]) == (ours(messages), 0)


junk_sections = st.binary(max_size=80) | st.lists(
    st.sampled_from([b"\x01a", b"\x00", b"\x07\x00\x02hi", b"\x06\x00\x00", b"\x08", b"\x09"])
    | st.binary(max_size=3),
    max_size=12,
).map(b"".join)
"""A headers section of junk, or of pieces of real headers in any order."""


@given(junk_sections, st.binary(max_size=20), st.lists(st.integers(min_value=0), max_size=6))
def test_junk_headers_with_good_crcs_read_as_botocore_reads_them_or_are_refused(
    section: bytes, payload: bytes, cuts: list[int]
) -> None:
    # Both CRCs right, so the headers parser itself meets the junk.
    data = frame(section, payload)
    messages, problem, _ = outcome([data])
    assert outcome(split(data, cuts)) == (messages, problem, _)
    try:
        reference: Any = botocore_reads([data])
    except Exception as exc:
        reference = exc
    if problem is None:
        assert reference == (ours(messages), 0)
    elif not isinstance(reference, Exception):
        # botocore's value readers slice past the section's end without a check: the
        # only junk it lets through, which we refuse.
        assert problem == "header_past_headers", (problem, reference)
    else:
        assert problem in (
            "header_past_headers",
            "unknown_header_type",
            "invalid_utf8",
            "duplicate_header",
        )


@given(streams, st.integers(min_value=0), st.integers(0, 7))
def test_a_flipped_bit_anywhere_is_a_checksum_error(
    stream: list[tuple[list[Header], bytes]], at: int, bit: int
) -> None:
    # CRC32 catches every single-bit error: in a length (the prelude CRC), in the
    # prelude CRC itself, or after it (the message CRC). botocore agrees.
    data = bytearray(b"".join(encode(h, p) for h, p in stream))
    data[at % len(data)] ^= 1 << bit
    _, problem, _ = outcome([bytes(data)])
    assert problem in ("prelude_crc", "message_crc")
    with pytest.raises(boto.ChecksumMismatch):
        botocore_reads([bytes(data)])


def test_the_largest_headers_botocore_reads_are_read() -> None:
    # MAX_HEADERS_BYTES exactly: two byte arrays of 65,540 and 65,532 bytes on the wire.
    headers: list[Header] = [
        ("a", BYTE_ARRAY, b"\x01" * 65_535),
        ("b", BYTE_ARRAY, b"\x02" * 65_527),
    ]
    data = encode(headers, b"")
    assert struct.unpack(">I", data[4:8])[0] == MAX_HEADERS_BYTES
    assert ours(framed([data])) == botocore_reads([data])[0]


def test_bedrock_exceptions_are_told_apart_as_botocore_reads_them() -> None:
    exception = encode(
        [
            (":exception-type", STRING, "throttlingException"),
            (":content-type", STRING, "application/json"),
            (":message-type", STRING, "exception"),
        ],
        b'{"message":"Too many requests"}',
    )
    error = encode(
        [
            (":error-code", STRING, "InternalFailure"),
            (":error-message", STRING, "boom"),
            (":message-type", STRING, "error"),
        ],
        b"",
    )
    got = framed([GOOD, exception, error])
    assert [m.message_type for m in got] == ["event", "exception", "error"]
    boto_buffer = boto.EventStreamBuffer()
    boto_buffer.add_data(GOOD + exception + error)
    assert [m.to_response_dict()["status_code"] for m in boto_buffer] == [200, 400, 400]
    assert got[1].exception_type == "throttlingException"
    assert json.loads(got[1].payload) == {"message": "Too many requests"}
    assert (got[2].error_code, got[2].error_message) == ("InternalFailure", "boom")


# ----------------------------------------------------------------------------------------
# The real recordings.

SMALL = 3_000
"""Files up to this many bytes are checked at every two-piece split; larger ones at a
seeded sample (every split of all 16 files is 83 k parses, half a minute here)."""
SAMPLE = 150


def bedrock_entries() -> list[dict[str, Any]]:
    """The bedrock folder's own manifest entries (it is not in the main manifest), or
    none when the outside corpus is missing."""
    if not manifest_entries() or not (BEDROCK / "MANIFEST.json").is_file():
        return []
    entries: list[dict[str, Any]] = json.loads((BEDROCK / "MANIFEST.json").read_text())
    return entries


def recordings() -> list[Any]:
    entries = bedrock_entries()
    return corpus_params(
        [e["file"] for e in entries], [Path(e["file"]).stem for e in entries], label="bedrock"
    )


@pytest.mark.parametrize("name", recordings())
def test_recordings_frame_as_botocore_frames_them_at_every_split(name: str | None) -> None:
    assert name is not None
    data = (EXTERNAL_STREAMS / name).read_bytes()
    expected, left = botocore_reads([data])
    assert left == 0 and expected
    assert ours(framed([data])) == expected
    assert ours(framed([data[i : i + 1] for i in range(len(data))])) == expected
    points: Sequence[int]
    if len(data) <= SMALL:
        points = range(len(data) + 1)
    else:
        points = sorted(random.Random(name).sample(range(len(data) + 1), SAMPLE))
    for at in points:
        chunks = [data[:at], data[at:]]
        assert ours(framed(chunks)) == expected, at
        if len(data) > SMALL:
            assert botocore_reads(chunks) == (expected, 0), at


@pytest.mark.parametrize("name", recordings())
@given(cuts=st.lists(st.integers(min_value=0), max_size=40))
def test_recordings_frame_as_botocore_frames_them_at_random_splits(
    name: str | None, cuts: list[int]
) -> None:
    assert name is not None
    data = (EXTERNAL_STREAMS / name).read_bytes()
    chunks = split(data, cuts)
    assert ours(framed(chunks)) == botocore_reads(chunks)[0]


@outside_corpus
def test_every_recording_is_checked() -> None:
    # The manifest's bedrock entries are the folder's files: none escapes the tests above.
    files = {p.name for p in BEDROCK.glob("*.eventstream")}
    listed = {Path(e["file"]).name for e in bedrock_entries()}
    assert files == listed and len(files) >= 16
    for path in BEDROCK.glob("*.eventstream"):
        for message in framed([path.read_bytes()]):
            assert message.message_type == "event"
            assert message.content_type == "application/json"
            assert message.event_type


@outside_corpus
def test_the_benchmark_checks_its_output_and_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import bench_eventstream

    assert bench_eventstream.main(["--fast"]) == 0
    out = capsys.readouterr().out
    assert "16 recordings" in out and "botocore/ours" in out
