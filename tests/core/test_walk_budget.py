"""The parsed-event walk's work is bounded by ``max_event_bytes``, counted in work units
(issue 29, item 12): an object whose lists share sub-lists (small in memory, huge as
JSON) is refused after about ``limit`` values looked at, on both twins (the compiled one
leaves a refused object to the pure walk, which says why: its work counts too), and one
non-ASCII string referenced many times is scanned once by the compiled walk.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from sse_toolcalls import EventTooLargeError
from sse_toolcalls.dialects import _parsed
from sse_toolcalls.dialects._parsed import parsed_event

compiled = _parsed.C_MEASURE


@contextmanager
def twin(which: str) -> Iterator[None]:
    saved = _parsed._c_measure
    _parsed._c_measure = compiled if which == "c" else None
    try:
        yield
    finally:
        _parsed._c_measure = saved


TWINS = [
    "python",
    pytest.param(
        "c", marks=pytest.mark.skipif(compiled is None, reason="the C walk was not built")
    ),
]


@pytest.fixture
def looked_at(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the pure walk's calls of ``type``: one per value it looks at (and per
    container it enters), the walk's unit of work."""
    count = [0]

    def counting_type(value: Any) -> type:
        count[0] += 1
        return type(value)

    monkeypatch.setattr(_parsed, "type", counting_type, raising=False)
    return count


def _dag(width: int, levels: int, leaf: Any = "x") -> dict[str, Any]:
    """Lists of ``width`` references to the one list below: ``width ** levels`` leaves
    as JSON, ``width * levels`` references in memory."""
    node: Any = [leaf] * width
    for _ in range(levels - 1):
        node = [node] * width
    return {"a": node}


@pytest.mark.parametrize("which", TWINS)
def test_a_dag_that_ends_a_level_just_under_the_limit_stops_at_it(
    which: str, looked_at: list[int]
) -> None:
    # Level 3 ends at about 9,000 bytes, under the limit; level 4 holds 9,000 lists of
    # 1,000 strings. A check at the end of each level looked at all 9,000,000 of them
    # (the 73x of the issue); now the walk stops within the limit's worth.
    limit = 10_000
    payload: dict[str, Any] = {"a": [[["x"] * 1_000] * 1_000] * 9}
    with twin(which), pytest.raises(EventTooLargeError) as caught:
        parsed_event(payload, max_event_bytes=limit)
    assert caught.value.size > limit
    assert looked_at[0] <= 2 * limit, looked_at[0]


@pytest.mark.parametrize("which", TWINS)
@pytest.mark.parametrize("leaf", ["x", "é" * 50, 7, None, {"k": 1}])
def test_dags_of_every_shape_stop_within_the_limit(
    which: str, leaf: Any, looked_at: list[int]
) -> None:
    # 200**5 leaves as JSON; the third level ends under the limit (40,000 references),
    # the fourth holds 8,000,000: a walk checked at the end of a level looked at them all.
    limit = 50_000
    with twin(which), pytest.raises(EventTooLargeError):
        parsed_event(_dag(200, 5, leaf), max_event_bytes=limit)
    assert looked_at[0] <= 2 * limit, looked_at[0]


@pytest.mark.parametrize("which", TWINS)
def test_one_long_string_past_the_limit_is_not_encoded(
    which: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its characters alone cross the limit: no UTF-8 encoding of 8 million of them.
    encoded: list[int] = []
    real = _parsed._utf8

    def spy(text: str, dialect: str | None) -> int:
        encoded.append(len(text))
        return real(text, dialect)

    monkeypatch.setattr(_parsed, "_utf8", spy)
    with twin(which), pytest.raises(EventTooLargeError):
        parsed_event({"a": "é" * 8_000_000}, max_event_bytes=1_000)
    assert encoded == []


@pytest.mark.skipif(compiled is None, reason="the C walk was not built")
def test_one_non_ascii_string_referenced_many_times_is_scanned_once() -> None:
    from sse_toolcalls import _walk_c

    text = "ü" * 1_000
    payload = {"a": [text] * 20_000, "b": {"k": text}}
    before = _walk_c._chars_scanned()
    answer = compiled(payload, 1 << 40) if compiled is not None else None
    scanned = _walk_c._chars_scanned() - before
    # Once (a second time at most if another address shares its slot), not 20,001 times.
    assert scanned <= 2 * len(text), scanned
    assert answer == _parsed._measure_py(payload, None)
