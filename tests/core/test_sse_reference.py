"""Differential framing: the framer equals the simple WHATWG reference, under every split.

The framer's fast paths (single-line data blocks from one split, event + data batches,
the two-line shortcut, the block begun in an earlier chunk) are each a place where it can
differ from the spec; the reference (tests/reference_sse.py) has none of them. The
streams mix the fast paths' own shapes with everything that must knock them off.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls.framing import sse as sse_module

from ..reference_sse import ReferenceResult, reference_parse

# Lines that are not valid UTF-8, or hold a BOM away from the start (a field name then).
RAW_LINES = {"<ff>": b"data: \xff\xfe", "<cut>": b"data: \xe2\x82", "<bom>": b"\xef\xbb\xbfdata: b"}

# Lines chosen to hit the fast paths and the edges around them.
LINES = [
    "",
    "",
    "",
    "data: x",
    "data: y",
    "data:z",
    "data:  two",
    "data",
    "data:",
    "data: é",
    "data: [DONE]",
    'data: {"a": 1}',
    "event: a",
    "event: response.output_item.added",
    "event:",
    "event",
    "event: ",
    "id: 7",
    "id",
    "id: a\x00b",
    "retry: 1500",
    "retry: 0042",
    "retry: 12a",
    "retry:",
    "retry: -1",
    ": comment",
    ":",
    *RAW_LINES,
    "foo: bar",
    "data : spaced name",
    " data: leading space",
    "Data: case",
]

a_line = st.one_of(
    st.sampled_from(LINES),
    st.text(alphabet="ab: \x00é", max_size=6),
    st.sampled_from(["data: ", "event: ", "id: ", "retry: "]).flatmap(
        lambda name: st.text(alphabet="0123456789 x:", max_size=5).map(lambda v: name + v)
    ),
)
# The fast paths' own shapes, as whole blocks, so long runs of them occur.
a_block = st.sampled_from(
    [
        ["data: p"],
        ["data: q"],
        ["event: e", "data: d"],
        ["event: f", "data: g"],
        ["event: e", "data: d", "data: d2"],
        ["event: z"],
    ]
)
a_stream = st.tuples(
    st.lists(st.one_of(a_line.map(lambda line: [line]), a_block.map(lambda b: [*b, ""]))),
    st.lists(st.sampled_from([b"\n", b"\r", b"\r\n"]), min_size=1, max_size=3),
    st.sampled_from([b"", b"\xef\xbb\xbf", b"\xef\xbb\xbf\xef\xbb\xbf"]),
    st.sampled_from([b"", b"data: tail", b"\xff\xfe", b"\r"]),
)


def build(groups: list[list[str]], endings: list[bytes], bom: bytes, tail: bytes) -> bytes:
    out = [bom]
    k = 0
    for group in groups:
        for line in group:
            out.append(RAW_LINES.get(line, line.encode()) + endings[k % len(endings)])
            k += 1
    out.append(tail)
    return b"".join(out)


# Both twins, whichever SSEFramer is: the compiled one must equal the reference too.
TWINS = [
    pytest.param(sse_module._PySSEFramer, id="python"),
    pytest.param(
        sse_module._CSSEFramer,
        id="c",
        marks=pytest.mark.skipif(sse_module._CSSEFramer is None, reason="C framer not built"),
    ),
]


def framed(chunks: list[bytes], twin: Any) -> ReferenceResult:
    framer = twin()
    result = ReferenceResult()
    for piece in chunks:
        result.events.extend(framer.feed(piece))
    result.events.extend(framer.finish())
    result.last_event_id = framer.last_event_id
    result.retry = framer.retry
    return result


@pytest.mark.parametrize("twin", TWINS)
@settings(max_examples=300, deadline=None)
@given(stream=a_stream, cuts=st.lists(st.integers(min_value=0), max_size=10))
def test_framer_equals_the_reference_at_random_splits(
    twin: Any, stream: tuple[list[list[str]], list[bytes], bytes, bytes], cuts: list[int]
) -> None:
    raw = build(*stream)
    want = reference_parse(raw)
    # A list, not a set: a repeated cut (or one at either end) is an empty read, which
    # must change nothing, also between a CR and its LF.
    points = sorted(c % (len(raw) + 1) for c in cuts)
    chunks = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    assert framed(chunks, twin) == want
    assert framed([raw], twin) == want


@pytest.mark.parametrize("twin", TWINS)
@settings(max_examples=60, deadline=None)
@given(stream=a_stream)
def test_framer_equals_the_reference_at_every_single_cut_and_byte_by_byte(
    twin: Any,
    stream: tuple[list[list[str]], list[bytes], bytes, bytes],
) -> None:
    raw = build(*stream)[:400]
    want = reference_parse(raw)
    assert framed([raw[i : i + 1] for i in range(len(raw))], twin) == want
    for cut in range(1, len(raw)):
        assert framed([raw[:cut], raw[cut:]], twin) == want


def test_the_reference_itself_on_the_spec_examples() -> None:
    # The spec's own examples (9.2.6), so the oracle is checked too.
    got = reference_parse(b"data: YHOO\ndata: +2\ndata: 10\n\n")
    assert [e.data for e in got.events] == ["YHOO\n+2\n10"]
    got = reference_parse(b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n")  # fmt: skip
    assert [(e.data, e.id) for e in got.events] == [("first event", "1"), ("second event", "")]
    got = reference_parse(b"data\n\ndata\ndata\n\ndata:")
    assert [e.data for e in got.events] == ["", "\n"]
    got = reference_parse(b"data:test\n\ndata: test\n\n")
    assert [e.data for e in got.events] == ["test", "test"]
