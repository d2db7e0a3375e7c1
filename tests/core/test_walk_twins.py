"""The compiled parsed-event walk equals its pure twin on hostile objects (STYLE 18).

``_walk_c.measure`` answers the pure walk's ``(depth, size)`` for every object that walk
takes, and ``None`` for every object it refuses (then the pure walk runs to raise its own
error). Held here on Hypothesis objects built to break it: nesting deep enough to leave
the compiled walk's inline frames, integers on both sides of 64 bits and of a double's
range, NaN and the infinities, lone surrogates in keys and values in all three of
CPython's string widths, non-string keys, subclasses of str, dict, list, int and float,
and values no JSON can carry (sets, bytes, tuples, objects). Through ``parsed_event`` the
two twins must give the same event, or the same error with the same message, size and
cause; and through a parser both twins must read the hostile objects of
``test_parsed_events`` as the text path reads their text. Skipped only where the
extension was not built; CI builds it.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sse_toolcalls import Dialect, SSEToolCallsError, UsageError
from sse_toolcalls.dialects import _parsed
from sse_toolcalls.dialects._parsed import ParsedEvent, parsed_event
from sse_toolcalls.framing import sse
from sse_toolcalls.framing.sse import DEFAULT_MAX_EVENT_BYTES

from .test_parsed_events import HOSTILE_VALUES, SHAPES, via_objects, via_text

compiled = _parsed.C_MEASURE
pytestmark = pytest.mark.skipif(compiled is None, reason="the C extension was not built")


class Text(str):
    pass


class Table(dict[Any, Any]):
    pass


class Row(list[Any]):
    pass


class Real(float):
    pass


class Level(enum.IntEnum):
    LOW = 1


class Opaque:
    pass


_SURROGATES = ["\ud800", "a\udfffb", "é\ud83d", "デ\udc00", "😀\ud800", "\udbff"]
# Each of CPython's three string widths, with and without characters past ASCII.
_WIDE = ["", "a", "é", "\x80\xff", "デ", "\u07ff\u0800", "\uffff", "😀", "a\U0010ffff"]
strings = st.one_of(
    st.text(max_size=12),
    st.sampled_from(_WIDE),
    st.sampled_from(_SURROGATES),
    st.text(st.characters(categories=["Cs", "Lo", "So"]), max_size=6),
)
_BIG = [
    2**63 - 1,
    2**63,
    -(2**63),
    -(2**63) - 1,
    2**64,
    10**30,
    2**1023 - 1,
    2**1023,
    -(2**1023),
    # The largest integer a double rounds to a finite value, and the first that is not.
    2**1024 - 2**970 - 1,
    2**1024 - 2**970,
    -(2**1024 - 2**970),
    2**1024,
    10**400,
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(_BIG),
    st.floats(),  # NaN and the infinities included
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 5e-324]),
    strings,
)
# What the pure walk refuses by type: no JSON text carries these.
refused = st.one_of(
    st.builds(Text, strings),
    st.builds(Real, st.floats(allow_nan=False)),
    st.just(Level.LOW),
    st.sampled_from([b"bytes", bytearray(b"x"), (1, 2), 1j, frozenset([1])]),
    st.builds(Opaque),
    st.builds(set, st.lists(st.integers(), max_size=2)),
)
keys = st.one_of(
    strings,
    st.builds(Text, strings),  # a str subclass is a key the pure walk takes (str.join)
    st.sampled_from([1, None, 2.5, True, (1,), b"k", Level.LOW]),
)


def _deep(levels: int, leaf: Any) -> Any:
    for level in range(levels):
        leaf = [leaf] if level % 2 else {"k": leaf}
    return leaf


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(strings, inner, max_size=4),
        st.dictionaries(keys, inner, max_size=3),
        st.builds(Row, st.lists(inner, max_size=2)),
        st.builds(Table, st.dictionaries(strings, inner, max_size=2)),
        # Past the compiled walk's 64 inline frames, and past MAX_EVENT_DEPTH.
        st.builds(_deep, st.integers(min_value=1, max_value=300), inner),
    )


values = st.recursive(st.one_of(scalars, scalars, scalars, refused), _containers, max_leaves=30)
payloads = st.dictionaries(keys, values, max_size=5) | st.dictionaries(strings, values, max_size=5)


NO_LIMIT = 2**62
limits = st.integers(min_value=0, max_value=600) | st.just(DEFAULT_MAX_EVENT_BYTES)


def pure_outcome(payload: dict[Any, Any], limit: int = NO_LIMIT) -> tuple[Any, ...]:
    try:
        return ("ok", _parsed._measure_py(payload, "anthropic", limit))
    except SSEToolCallsError as exc:
        return ("error", type(exc), str(exc))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=payloads, limit=limits)
def test_the_compiled_walk_answers_what_the_pure_walk_answers(
    payload: dict[Any, Any], limit: int
) -> None:
    assert compiled is not None
    pure = pure_outcome(payload, limit)
    if pure[0] == "ok" and pure[1][1] <= limit:
        assert compiled(payload, limit) == pure[1]
    else:
        # Refused, or too large: the pure walk says what, and how large.
        assert compiled(payload, limit) is None, pure


@contextmanager
def twin(which: str) -> Iterator[None]:
    """``_parsed`` on one twin of the walk, whichever the environment chose."""
    saved = _parsed._c_measure
    _parsed._c_measure = compiled if which == "c" else None
    try:
        yield
    finally:
        _parsed._c_measure = saved


def event_outcome(payload: Any, limit: int) -> tuple[Any, ...]:
    try:
        event = parsed_event(payload, max_event_bytes=limit, dialect="gemini")
    except SSEToolCallsError as exc:
        cause = exc.__cause__
        return (
            type(exc),
            str(exc),
            getattr(exc, "size", None),
            type(cause),
            str(cause) if cause is not None else None,
        )
    if isinstance(event, ParsedEvent):
        return ("parsed", event.event, event.payload is payload)
    return ("text", event.event, event.data)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    payload=payloads | st.builds(Table, payloads),
    limit=limits,
)
def test_both_twins_give_the_same_event_or_the_same_error(
    payload: dict[Any, Any], limit: int
) -> None:
    with twin("python"):
        pure = event_outcome(payload, limit)
    with twin("c"):
        assert event_outcome(payload, limit) == pure


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dialect=st.sampled_from(sorted(SHAPES)), value=HOSTILE_VALUES, detect=st.booleans())
def test_both_twins_read_hostile_objects_as_the_text_path_reads_their_text(
    dialect: Dialect, value: Any, detect: bool
) -> None:
    events = SHAPES[dialect](value)
    given_dialect = None if detect else dialect
    text = via_text(given_dialect, events, DEFAULT_MAX_EVENT_BYTES)
    for which in ("python", "c"):
        with twin(which):
            assert via_objects(given_dialect, events, DEFAULT_MAX_EVENT_BYTES) == text, which


# -- which error wins, and the edges of the compiled walk ---------------------------------


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        # The walk refuses a value no JSON carries before the strings are encoded: the
        # set wins over the lone surrogate, wherever each one is.
        ({"a": "\ud800", "b": [{1}]}, "UsageError"),
        ({"a": [[{1}]], "\ud800": 1}, "UsageError"),
        # Level by level: the shallower problem wins, then the first in its level.
        ({"a": [[math.nan]], "b": Text("x")}, "UsageError"),
        ({"a": [[Text("x")]], "b": math.inf}, "MalformedStreamError"),
        ({"a": 2**1024, "b": math.nan}, "MalformedStreamError"),
        # The size wins over the surrogate when the string alone crosses the limit: it
        # is counted as the walk goes, as the framer refuses the event's text for its
        # size before any of it is decoded (issue 29); within the limit, the surrogate.
        ({"a": "\ud800" + "x" * 100}, "EventTooLargeError"),
        ({"a": "\ud800" + "x" * 10}, "MalformedStreamError"),
        ({"a": "x" * 100}, "EventTooLargeError"),
    ],
    ids=["set-surrogate", "set-deep-surrogate-key", "subclass-nan", "inf-subclass",
         "double-nan", "size-surrogate", "surrogate", "size"],
)  # fmt: skip
def test_two_problems_give_the_pure_walks_error_on_both_twins(
    payload: dict[str, Any], error: str
) -> None:
    outcomes = []
    for which in ("python", "c"):
        with twin(which):
            outcomes.append(event_outcome(payload, 50))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][0].__name__ == error


def test_a_str_subclass_key_is_measured_and_a_value_refused_on_both_twins() -> None:
    assert compiled is not None
    taken: dict[str, Any] = {Text("é"): [1, None, True, 2.5]}
    assert (
        compiled(taken, NO_LIMIT) == _parsed._measure_py(taken, None) == (2, 2 + 4 + 2 + 2 + 4 + 4)
    )
    for value in (Text("x"), Level.LOW, Real(1.0), Row(), Table(), True):
        payload = {"v": value}
        expected = pure_outcome(payload)
        assert (compiled(payload, NO_LIMIT) is None) == (expected[0] == "error"), value
    assert compiled({"v": True}, NO_LIMIT) == (1, 8)


def test_nesting_far_past_the_inline_frames_is_walked_without_recursion() -> None:
    assert compiled is not None
    for levels in (62, 63, 64, 65, 129, 5_000, 60_000):
        payload = {"k": _deep(levels, "é")}
        assert compiled(payload, NO_LIMIT) == _parsed._measure_py(payload, None), levels


def test_the_compiled_walk_leaves_what_it_cannot_hold_to_the_pure_walk() -> None:
    assert compiled is not None
    # Up to 65,536 levels (1 MiB of frames) the compiled walk answers; past them it says
    # None, even for an object the pure walk takes, and the pure walk decides.
    held = {"k": _deep(2**16 - 1, 1)}
    answer = compiled(held, NO_LIMIT)
    assert answer is not None and answer[0] == 2**16
    assert answer == _parsed._measure_py(held, None)
    deeper = {"k": _deep(2**16, 1)}
    assert compiled(deeper, NO_LIMIT) is None
    assert _parsed._measure_py(deeper, None)[0] == 2**16 + 1
    with pytest.raises(TypeError):
        compiled([], NO_LIMIT)  # type: ignore[arg-type]


@pytest.mark.parametrize("shape", ["dict", "list", "far"])
def test_an_object_that_holds_itself_is_a_usage_error_on_both_twins(shape: str) -> None:
    # Before, the pure walk never finished (a level of one object, forever).
    inner: list[Any] = []
    payload: dict[str, Any] = {"a": 1, "b": inner}
    if shape == "dict":
        payload["self"] = payload
    elif shape == "list":
        inner.append({"x": [inner]})
    else:
        inner.append(_deep(100, {"back": payload}))
    for which in ("python", "c"):
        with twin(which), pytest.raises(UsageError, match="holds itself"):
            parsed_event(payload, max_event_bytes=DEFAULT_MAX_EVENT_BYTES)


def test_the_walk_in_use_is_the_one_the_environment_asks_for() -> None:
    if sse.PURE_PYTHON:
        assert _parsed._c_measure is None
    else:
        assert _parsed._c_measure is compiled


def test_one_string_repeated_by_reference_is_not_copied_to_be_measured() -> None:
    import tracemalloc

    assert compiled is not None

    # 200 references to one string of a million characters: the pure walk joined them
    # all (200 MB) to count their bytes; its twin never copies.
    text = "x" * 1_000_000
    payload = {"a": [text] * 200, "b": ["é" * 1_000_000] * 20}
    tracemalloc.start()
    try:
        answer = _parsed._measure_py(payload, None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10_000_000
    # Braces and two members (10), the keys (2), the lists (202, 22), the strings.
    assert (
        answer
        == compiled(payload, NO_LIMIT)
        == (2, 12 + 202 + 200 * 1_000_002 + 22 + 20 * 2_000_002)
    )
    for which in ("python", "c"):
        with twin(which), pytest.raises(SSEToolCallsError, match="max_event_bytes"):
            parsed_event(payload, max_event_bytes=DEFAULT_MAX_EVENT_BYTES)


def test_containers_shared_many_times_over_stop_at_the_limit() -> None:
    # Forty lists, each holding the one before twice: 2**40 paths, about 3 KB of memory.
    # Both walks went down every path (the pure one 1.7 s at twenty); now each stops at
    # the first level past max_event_bytes (linear in it), as the text would be refused
    # for its size.
    shared: list[Any] = []
    for _ in range(40):
        shared = [shared, shared]
    for which in ("python", "c"):
        with twin(which), pytest.raises(SSEToolCallsError, match="max_event_bytes"):
            parsed_event({"a": shared}, max_event_bytes=1_048_576)
    assert compiled is not None
    assert compiled({"a": shared}, 1_048_576) is None
