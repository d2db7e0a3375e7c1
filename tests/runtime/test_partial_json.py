"""The arguments parsed so far: equal, at every cut and however the text is split, to a
deliberately simple reference that reads the whole prefix again (STYLE 16)."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sse_toolcalls.runtime.partial_json import (
    EXACT_STRING_CHARS,
    MAX_PREVIEW_DEPTH,
    MAX_SCALAR_CHARS,
    PartialJSON,
)

_MISSING = object()


class _Prefix:
    """The reference: a recursive reader of one whole prefix, with the preview's rules."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0

    def space(self) -> None:
        while self.i < len(self.text) and self.text[self.i] in " \t\r\n":
            self.i += 1

    def at_end(self) -> bool:
        return self.i >= len(self.text)

    def value(self) -> tuple[Any, bool]:
        """(value or _MISSING, complete)."""
        self.space()
        if self.at_end():
            return _MISSING, False
        char = self.text[self.i]
        if char == "{":
            return self.object()
        if char == "[":
            return self.array()
        if char == '"':
            return self.string()
        start = self.i
        while not self.at_end() and self.text[self.i] not in ",]} \t\r\n":
            self.i += 1
        if self.at_end():
            return _MISSING, False  # a number or literal that may go on
        return json.loads(self.text[start : self.i]), True

    def string(self) -> tuple[Any, bool]:
        start = self.i
        self.i += 1
        while not self.at_end():
            char = self.text[self.i]
            if char == '"':
                self.i += 1
                return json.loads(self.text[start : self.i]), True
            self.i += 2 if char == "\\" else 1
        # Cut: decode what is whole; a cut escape, and a high surrogate alone at the end,
        # wait for the rest.
        body = self.text[start + 1 :]
        for cut in range(len(body), -1, -1):
            try:
                decoded: str = json.loads('"' + body[:cut] + '"')
            except ValueError:
                continue
            if (
                decoded
                and "\ud800" <= decoded[-1] <= "\udbff"
                and body[:cut].endswith(tuple(f"{d}" for d in "0123456789abcdefABCDEF"))
            ):
                decoded = decoded[:-1]
            return decoded, False
        raise AssertionError("unreachable")  # pragma: no cover

    def array(self) -> tuple[Any, bool]:
        self.i += 1
        out: list[Any] = []
        while True:
            self.space()
            if self.at_end():
                return out, False
            if self.text[self.i] == "]":
                self.i += 1
                return out, True
            if self.text[self.i] == ",":
                self.i += 1
            item, done = self.value()
            if item is not _MISSING:
                out.append(item)
            if not done:
                return out, False

    def object(self) -> tuple[Any, bool]:
        self.i += 1
        out: dict[str, Any] = {}
        while True:
            self.space()
            if self.at_end():
                return out, False
            if self.text[self.i] == "}":
                self.i += 1
                return out, True
            if self.text[self.i] == ",":
                self.i += 1
                self.space()
            key, done = self.string() if not self.at_end() else (None, False)
            if not done:
                return out, False
            self.space()
            if self.at_end():
                return out, False
            self.i += 1  # the colon
            item, done = self.value()
            if item is not _MISSING:
                assert isinstance(key, str)
                out[key] = item
            if not done:
                return out, False


def reference(prefix: str) -> Any:
    found, _ = _Prefix(prefix).value()
    return None if found is _MISSING else found


_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(max_size=12)
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


@given(
    value=st.dictionaries(st.text(max_size=6), _values, max_size=5),
    ascii_only=st.booleans(),
    indent=st.sampled_from([None, 1]),
    cuts=st.lists(st.integers(0, 10**6), max_size=30),
)
def test_at_every_cut_the_preview_equals_the_reference(
    value: dict[str, Any], ascii_only: bool, indent: int | None, cuts: list[int]
) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
    reader = PartialJSON()
    seen = 0
    for piece in _split(text, cuts):
        shown = copy.deepcopy(reader.feed(piece))
        seen += len(piece)
        assert shown == reference(text[:seen]), text[:seen]
    assert reader.stopped is None
    assert reader.value == json.loads(text)


def test_every_character_a_fragment() -> None:
    text = json.dumps({"a": ['x\\"y\u00e9\U0001f95a', 1.5e3, {"b": None}], "c": False})
    reader = PartialJSON()
    for n, char in enumerate(text, 1):
        assert copy.deepcopy(reader.feed(char)) == reference(text[:n])
    assert reader.value == json.loads(text)


def test_a_long_string_is_refreshed_linearly_and_exact_when_it_closes() -> None:
    reader = PartialJSON()
    reader.feed('{"body": "')
    body = "x" * (EXACT_STRING_CHARS * 40)
    shown_lengths = []
    for start in range(0, len(body), 7):
        shown_lengths.append(len(reader.feed(body[start : start + 7])["body"]))
    # Never more than a fifth behind (the unshown part stays under a quarter of the shown).
    assert all(s * 5 >= 4 * min(len(body), (i + 1) * 7) for i, s in enumerate(shown_lengths))
    # ...and refreshed only O(log n) times past the exact threshold.
    assert len(set(shown_lengths)) < EXACT_STRING_CHARS // 7 + 40
    reader.feed('"}')
    assert reader.value == {"body": body}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('{"a" 1}', "expected ':'"),
        ('{"a": tru}', "not a JSON value"),
        ('{"a": "\\x"}', "bad escape"),
        ('{"a": 1} x', "text after the value"),
        ("[" * (MAX_PREVIEW_DEPTH + 1), "nested deeper"),
        ('{"a": ' + "1" * (MAX_SCALAR_CHARS + 1), "longer than"),
    ],
)
def test_text_that_is_not_json_stops_the_preview_and_never_raises(text: str, why: str) -> None:
    reader = PartialJSON()
    reader.feed(text)
    reader.feed("]}")
    assert reader.stopped is not None and why in reader.stopped
    assert "stopped" in repr(reader)


@given(st.text(max_size=60), st.lists(st.integers(0, 100), max_size=8))
def test_arbitrary_text_never_raises(text: str, cuts: list[int]) -> None:
    reader = PartialJSON()
    for piece in _split(text, cuts):
        reader.feed(piece)
