"""Arguments with a key repeated in one object are invalid (parsers disagree on which
value wins), held to a reference over generated texts: repeats at any depth, keys spelled
with escapes, colons inside strings (which send the text to the exact reading)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls.dialects._common import parse_arguments

KEYS = ["a", "b", "a:b", "http://x", "ü", ""]


def spelled(key: str, escape: bool) -> str:
    text = json.dumps(key)
    if escape and key[:1] == "a":
        return '"\\u0061' + text[2:]  # the same key, written another way
    return text


@st.composite
def json_text(draw: st.DrawFn, depth: int = 0) -> str:
    kind = draw(st.sampled_from(["scalar", "list", "object"] if depth < 3 else ["scalar"]))
    if kind == "scalar":
        return draw(st.sampled_from(["1", '"v"', '"12:30"', "null", "true", '"\\":"']))
    if kind == "list":
        items = draw(st.lists(json_text(depth + 1), max_size=3))
        return "[" + ", ".join(items) + "]"
    return draw(json_object(depth + 1))


@st.composite
def json_object(draw: st.DrawFn, depth: int = 0) -> str:
    pairs = draw(
        st.lists(st.tuples(st.sampled_from(KEYS), st.booleans(), json_text(depth)), max_size=4)
    )
    return "{" + ", ".join(f"{spelled(k, e)} : {v}" for k, e, v in pairs) + "}"


def repeats(text: str) -> bool:
    """The reference: every object's pairs, as the stdlib reads them before a dict."""
    found: list[bool] = []

    def hook(items: list[tuple[str, Any]]) -> dict[str, Any]:
        found.append(len({k for k, _ in items}) < len(items))
        return dict(items)

    json.loads(text, object_pairs_hook=hook)
    return any(found)


@settings(max_examples=200, deadline=None)
@given(json_object())
def test_a_repeated_key_anywhere_makes_the_arguments_invalid(text: str) -> None:
    args, error = parse_arguments(text)
    if repeats(text):
        assert args == {} and error is not None and "repeated key" in error, text
    else:
        assert (args, error) == (json.loads(text), None), text
