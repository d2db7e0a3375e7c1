"""The SSE writer: what it writes, our framer (and the reference reader) reads back."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sse_toolcalls import SSEFramer, UsageError
from sse_toolcalls.runtime.ui.sse_out import comment, sse_event

from ...reference_sse import reference_parse

names = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]))
ids = st.text(st.characters(blacklist_characters="\r\n\0", blacklist_categories=["Cs"]))
texts = st.text(st.characters(blacklist_categories=["Cs"]))


@given(data=texts, event=st.none() | names, id=st.none() | ids, cut=st.integers(0, 10_000))
def test_what_is_written_is_read_back_at_any_split(
    data: str, event: str | None, id: str | None, cut: int
) -> None:
    raw = comment("keep-alive") + sse_event(data, event=event, id=id)
    framer = SSEFramer()
    cut %= len(raw) + 1
    (got,) = framer.feed(raw[:cut]) + framer.feed(raw[cut:]) + framer.finish()
    assert got.data == re.sub(r"\r\n|\r", "\n", data)
    assert got.event == (event or "message")
    assert got.id == (id or "")
    assert [(e.event, e.data, e.id) for e in reference_parse(raw).events] == [
        (got.event, got.data, got.id)
    ]


@pytest.mark.parametrize(("event", "id"), [("a\nb", None), (None, "x\ry"), (None, "nul\0")])
def test_a_line_break_in_a_field_is_refused(event: str | None, id: str | None) -> None:
    with pytest.raises(UsageError):
        sse_event("x", event=event, id=id)
