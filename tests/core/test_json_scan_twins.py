"""The compiled json_scan equals its pure twin on every JSON text, and the strict loader
gives the same values and errors on either (issue 16, item 3; STYLE 18).

The texts are Hypothesis JSON values written every way the stdlib writes them (ASCII
escapes or raw text, compact or indented), with strings full of brackets, quotes,
backslashes, digits and non-ASCII text in all three of CPython's string widths, and
integers long enough to need the exact path. Skipped only where the extension was not
built; CI builds it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls.dialects import _common

compiled = _common.C_JSON_SCAN
pytestmark = pytest.mark.skipif(compiled is None, reason="the C extension was not built")


def _versions() -> list[str]:
    """The versions of the compiled scan this machine can run (SSE2 or its byte loop
    always, AVX2 where the CPU has it)."""
    if compiled is None:
        return ["none"]
    from sse_toolcalls import _sse_c

    chosen = _sse_c._json_scan_version()
    out = []
    for name in ("sse2", "avx2"):
        try:
            _sse_c._json_scan_version(name)
        except ValueError:
            continue
        out.append(name)
    _sse_c._json_scan_version(chosen)
    return out


@pytest.fixture(scope="module", params=_versions(), autouse=True)
def version(request: pytest.FixtureRequest) -> Iterator[str]:
    """Every test runs on each version of the compiled scan (h38)."""
    name: str = request.param
    if compiled is None:
        yield name
        return
    from sse_toolcalls import _sse_c

    chosen = _sse_c._json_scan_version(name)
    yield name
    _sse_c._json_scan_version(chosen)


# Characters that matter to the scan, and some of each string width.
_TRICKY = st.sampled_from([*'[]{}"\\0123456789,:u \n\t', "é", "デ", "😀", "\x7f"])
strings = st.text(st.one_of(_TRICKY, st.characters(exclude_categories=["Cs"])), max_size=30)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**17, max_value=10**40),
    st.floats(allow_nan=False, allow_infinity=False),
    strings,
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(strings, inner, max_size=4)
    ),
    max_leaves=30,
)


def nested(levels: int, leaf: Any) -> Any:
    for i in range(levels):
        leaf = [leaf] if i % 2 else {"k": leaf}
    return leaf


texts = st.one_of(
    st.builds(
        json.dumps,
        values,
        ensure_ascii=st.booleans(),
        indent=st.sampled_from([None, 1]),
    ),
    st.builds(
        lambda n, leaf: json.dumps(nested(n, leaf), ensure_ascii=False),
        st.integers(min_value=90, max_value=140),
        scalars,
    ),
)


@settings(max_examples=300, deadline=None)
@given(text=texts)
def test_compiled_scan_equals_the_pure_one(text: str) -> None:
    assert compiled is not None
    assert compiled(text) == _common.json_scan_py(text)


def strict(text: str, scan: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    monkeypatch.setattr(_common, "_c_json_scan", scan)
    try:
        value, bound = _common.loads_bounded(text, depth=100)
    except ValueError as exc:
        return ("error", type(exc), str(exc))
    # Each twin's bound may differ (the pure one counts brackets), never below the depth.
    assert bound >= _common.json_depth(text)
    return ("value", repr(value))


@settings(max_examples=300, deadline=None)
@given(text=texts)
def test_the_strict_loader_is_the_same_on_both(text: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert strict(text, compiled, monkeypatch) == strict(text, None, monkeypatch)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", (0, False)),
        ("1", (0, False)),
        ('"[[[{{"', (0, False)),
        ('["\\"]]"]', (1, False)),
        ('[{"a\\\\":[]}]', (3, False)),
        ("1" * 18, (0, False)),
        ("1" * 19, (0, True)),
        ('"\\u0031' + "1" * 18 + '"', (0, True)),
        ('{"\U0001f600":[[' + "1" * 19 + "]]}", (3, True)),
        ('["\\', (1, False)),  # cut inside an escape: no read past the end
        # Lone surrogates have no UTF-8: the code points are scanned, in each width.
        ('[["\ud800[",' + "2" * 19 + "]]", (2, True)),
        ('["\ud800\\"]",{}]', (2, False)),
        ('{"\U0001f600\udfff":["\\\\",1]}', (2, False)),
    ],
)
def test_scan_edges(text: str, expected: tuple[int, bool]) -> None:
    assert compiled is not None
    assert compiled(text) == expected
    assert _common.json_scan_py(text) == expected


def test_scan_refuses_what_is_not_a_str() -> None:
    assert compiled is not None
    with pytest.raises(TypeError):
        compiled(b"[]")  # type: ignore[arg-type]


# The compiled scan reads 64-byte blocks: leading whitespace (still the same JSON) moves
# every quote, escape, bracket and digit run across every position of a block and over
# its edges. Long strings, escape runs and digit runs make those crossings likely.
_long_strings = st.lists(
    st.one_of(_TRICKY, st.sampled_from(["\\\\", '\\"', "1" * 9, "x" * 30])),
    min_size=5,
    max_size=60,
).map("".join)
_long_values = st.recursive(
    st.one_of(scalars, _long_strings, st.integers(min_value=10**15, max_value=10**22)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=6), st.dictionaries(_long_strings, inner, max_size=3)
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(value=_long_values, shift=st.integers(min_value=0, max_value=130))
def test_compiled_scan_equals_the_pure_one_at_every_block_offset(value: Any, shift: int) -> None:
    assert compiled is not None
    text = " " * shift + json.dumps(value, ensure_ascii=False)
    assert compiled(text) == _common.json_scan_py(text)


@pytest.mark.parametrize("shift", range(130))
def test_block_edges(shift: int) -> None:
    # An escape run, a string and a digit run of exactly 18 and 19 ending at each offset.
    assert compiled is not None
    pad = " " * shift
    for text in (
        pad + '["' + "\\\\" * 40 + '\\"[", [' + "1" * 18 + "]]",
        pad + '[{"' + "x" * shift + '":[' + "2" * 19 + "]}]",
        pad + '"' + "\\\\" * shift + '"',
        pad + "[" * 3 + "1" * 18 + "]" * 3,
    ):
        assert compiled(text) == _common.json_scan_py(text), text


def test_both_versions_are_here_where_the_cpu_has_avx2() -> None:
    from sse_toolcalls import _sse_c

    assert compiled is not None
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            flags = info.read()
    except OSError:
        flags = ""  # not Linux: only the refusal below
    if " avx2" in flags and " pclmulqdq" in flags and " popcnt" in flags:
        assert _versions() == ["sse2", "avx2"]
    with pytest.raises(ValueError, match="not available"):
        _sse_c._json_scan_version("neon")
