"""Registry names to legal wire names and back, in every dialect."""

from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sse_toolcalls.calls import DIALECTS, ToolCall
from sse_toolcalls.dialects.naming import ToolNameMap, is_legal_name
from sse_toolcalls.errors import UsageError

# The providers' documented rules, written out independently of naming.py.
DOCUMENTED = {
    "openai_chat": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "openai_responses": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "anthropic": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "gemini": re.compile(r"[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}"),
    # ToolSpecification.name: "Pattern: ^[a-zA-Z0-9_-]{1,64}$" (Bedrock API reference).
    "bedrock_converse": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    # The body is Anthropic's: its rule.
    "bedrock_anthropic": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
}

# Names built to collide once sanitised: separators, case, long shared prefixes.
name_text = st.one_of(
    st.text(min_size=0, max_size=90),
    st.text(alphabet="ab._- :/9", min_size=0, max_size=12),
    st.builds(lambda tail: "x" * 70 + tail, st.text(alphabet="ab.", max_size=3)),
)


@pytest.mark.parametrize(
    ("dialect", "name", "legal"),
    [
        ("openai_chat", "get_weather", True),
        ("openai_chat", "get-weather-2", True),
        ("openai_chat", "files.read", False),
        ("openai_chat", "search web", False),
        ("openai_chat", "a" * 64, True),
        ("openai_chat", "a" * 65, False),
        ("openai_chat", "", False),
        ("anthropic", "files.read", False),
        ("gemini", "files.read", True),
        ("gemini", "ns:tool", True),
        ("gemini", "9lives", False),
        ("gemini", "-x", False),
        ("gemini", "_x", True),
        ("gemini", "a" * 65, False),
        ("openai_chat", "café", False),
    ],
)
def test_documented_rules(dialect: str, name: str, legal: bool) -> None:
    assert is_legal_name(dialect, name) is legal


def test_legal_names_are_kept_and_illegal_ones_readably_fixed() -> None:
    names = ToolNameMap("openai_chat", ["get_weather", "files.read", "search web"])
    assert names.to_wire("get_weather") == "get_weather"
    assert names.to_wire("files.read") == "files_read"
    assert names.to_wire("search web") == "search_web"
    assert names.from_wire("files_read") == "files.read"


def test_a_fixed_name_never_takes_a_registered_legal_name() -> None:
    names = ToolNameMap("anthropic", ["a.b", "a_b"])
    assert names.to_wire("a_b") == "a_b"
    assert names.to_wire("a.b") != "a_b"
    assert names.from_wire(names.to_wire("a.b")) == "a.b"
    assert names.from_wire("a_b") == "a_b"


def test_the_map_does_not_depend_on_registration_order() -> None:
    names = ["a.b", "a b", "a/b", "x" * 80, "x" * 80 + "y"]
    one = ToolNameMap("openai_chat", names)
    other = ToolNameMap("openai_chat", list(reversed(names)))
    assert {n: one.to_wire(n) for n in names} == {n: other.to_wire(n) for n in names}


def test_gemini_names_start_with_a_letter_or_underscore() -> None:
    names = ToolNameMap("gemini", ["3d.render", ""])
    assert names.to_wire("3d.render") == "_3d_render"
    assert is_legal_name("gemini", names.to_wire(""))


def test_unknown_names_pass_through_unchanged() -> None:
    names = ToolNameMap("openai_chat", ["files.read"])
    assert names.from_wire("made_up_tool") == "made_up_tool"
    assert names.to_wire("made_up_tool") == "made_up_tool"


def test_calls_map_back_to_the_registry_and_out_again() -> None:
    names = ToolNameMap("openai_responses", ["files.read"])
    wire = ToolCall(
        name="files_read", args={"p": 1}, provider="openai_responses", call_id="c", index=0
    )
    back = names.call_from_wire(wire)
    assert back.name == "files.read"
    assert (back.args, back.call_id, back.index) == (wire.args, wire.call_id, wire.index)
    assert names.call_to_wire(back) == wire
    # Nothing to change: the same object comes back.
    legal = ToolNameMap("openai_responses", ["x"])
    assert legal.call_from_wire(wire) is wire


def test_duplicate_names_and_unknown_dialects_are_refused() -> None:
    with pytest.raises(UsageError, match="twice"):
        ToolNameMap("anthropic", ["a", "a"])
    with pytest.raises(UsageError, match="unknown dialect"):
        ToolNameMap("cohere", ["a"])
    with pytest.raises(UsageError, match="unknown dialect"):
        is_legal_name("cohere", "a")


@given(
    dialect=st.sampled_from(DIALECTS),
    names=st.lists(name_text, unique=True, max_size=12),
)
def test_wire_names_are_legal_unique_and_map_back(dialect: str, names: list[str]) -> None:
    mapping = ToolNameMap(dialect, names)
    wires = [mapping.to_wire(n) for n in names]
    for name, wire in zip(names, wires, strict=True):
        assert DOCUMENTED[dialect].fullmatch(wire), (name, wire)
        assert mapping.from_wire(wire) == name
        if is_legal_name(dialect, name):
            assert wire == name
    assert len(set(wires)) == len(wires)


def test_even_a_name_that_takes_the_hashed_form_cannot_cause_a_collision() -> None:
    digest = hashlib.sha256(b"a.b").hexdigest()
    # Registered legal names occupy both the readable and the short hashed form of "a.b".
    names = ["a.b", "a_b", f"a_b_{digest[:8]}"]
    mapping = ToolNameMap("openai_chat", names)
    wire = mapping.to_wire("a.b")
    assert wire not in names
    assert is_legal_name("openai_chat", wire)
    assert wire == f"a_b_{digest[:16]}"
    assert [mapping.from_wire(mapping.to_wire(n)) for n in names] == names


def test_the_map_lists_its_pairs_in_registration_order() -> None:
    mapping = ToolNameMap("openai_chat", ["z.z", "a"])
    assert mapping.items() == [("z.z", "z_z"), ("a", "a")]
    assert len(mapping) == 2
    assert "z.z" in mapping and "z_z" not in mapping
    assert repr(mapping) == "ToolNameMap('openai_chat', ['z.z', 'a'])"
