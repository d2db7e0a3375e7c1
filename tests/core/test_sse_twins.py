"""The compiled framer equals the pure-Python one, chunk for chunk, under every split.

Both twins get the same streams (tests/core/test_sse_reference.py's, which mix the fast paths'
shapes with everything that must knock them off) at the same cuts, with limits small
enough to be crossed: every feed() must give the same events or the same error (class,
message and attributes), and the same state after it. Skipped only where the extension
was not built; CI builds it (and fails if it did not, see .ci/run).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls import EventTooLargeError, LimitExceededError, UsageError
from sse_toolcalls.framing import sse as sse_module

from .test_sse_reference import a_stream, build

compiled = sse_module._CSSEFramer
pure = sse_module._PySSEFramer
pytestmark = pytest.mark.skipif(compiled is None, reason="the C framer was not built")

Outcome = tuple[Any, ...]


def outcomes(cls: Any, chunks: list[bytes], limit: int | None) -> list[Outcome]:
    """What each feed() and then finish() gave: the events, or the error's whole state."""
    framer = cls() if limit is None else cls(max_event_bytes=limit)
    out: list[Outcome] = []
    for piece in [*chunks, None]:
        try:
            got = framer.finish() if piece is None else framer.feed(piece)
        except (EventTooLargeError, LimitExceededError, UsageError) as exc:
            out.append(("error", type(exc), str(exc), sorted(vars(exc).items())))
            break
        out.append(("events", got, framer.last_event_id, framer.retry))
    return out


def cut(raw: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(raw) + 1) for c in cuts})
    return [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]


# Small limits, crossed often: "bytes received, however split" on both sides.
limits = st.one_of(st.none(), st.integers(min_value=1, max_value=40))


@settings(max_examples=500, deadline=None)
@given(stream=a_stream, cuts=st.lists(st.integers(min_value=0), max_size=10), limit=limits)
def test_twins_agree_at_random_splits_and_limits(
    stream: tuple[list[list[str]], list[bytes], bytes, bytes], cuts: list[int], limit: int | None
) -> None:
    raw = build(*stream)
    chunks = cut(raw, cuts)
    assert outcomes(compiled, chunks, limit) == outcomes(pure, chunks, limit)
    assert outcomes(compiled, [raw], limit) == outcomes(pure, [raw], limit)


@settings(max_examples=60, deadline=None)
@given(stream=a_stream, limit=limits)
def test_twins_agree_byte_by_byte_and_at_every_single_cut(
    stream: tuple[list[list[str]], list[bytes], bytes, bytes], limit: int | None
) -> None:
    raw = build(*stream)[:300]
    singles = [raw[i : i + 1] for i in range(len(raw))]
    assert outcomes(compiled, singles, limit) == outcomes(pure, singles, limit)
    for point in range(1, len(raw)):
        chunks = [raw[:point], raw[point:]]
        assert outcomes(compiled, chunks, limit) == outcomes(pure, chunks, limit)


@settings(max_examples=300, deadline=None)
@given(
    raw=st.binary(max_size=200), cuts=st.lists(st.integers(min_value=0), max_size=6), limit=limits
)
def test_twins_agree_on_arbitrary_bytes(raw: bytes, cuts: list[int], limit: int | None) -> None:
    chunks = cut(raw, cuts)
    assert outcomes(compiled, chunks, limit) == outcomes(pure, chunks, limit)


@pytest.mark.parametrize(
    "stream",
    [
        b"retry: " + b"9" * 65 + b"\n\n",
        b"retry: " + b"9" * 64 + b"\n\n",
        b"data: x\n" * 65_537 + b"\n",
        b"data: x\n" * 65_537,
        b"data: x\n" * 65_536 + b"\n",
        b":" + b"c" * 5000 + b"\n\n",
    ],
    ids=["retry-65", "retry-64", "lines-dispatched", "lines-pending", "lines-at-limit", "long"],
)
@pytest.mark.parametrize("size", [1, 7, 4096, None])
def test_twins_agree_on_the_named_limits(stream: bytes, size: int | None) -> None:
    chunks = (
        [stream] if size is None else [stream[i : i + size] for i in range(0, len(stream), size)]
    )
    if len(chunks) > 20_000:
        chunks = [stream[: len(stream) // 2], stream[len(stream) // 2 :]]
    for limit in (None, 100, 4999, 5001):
        assert outcomes(compiled, chunks, limit) == outcomes(pure, chunks, limit)


@pytest.mark.parametrize("value", ["text", None, 1.5, memoryview(b"data: a\n\n")])
def test_the_compiled_twin_refuses_what_is_not_bytes(value: Any) -> None:
    assert compiled is not None
    framer: Any = compiled()
    if isinstance(value, memoryview):
        # Any buffer is bytes to the compiled twin.
        assert [e.data for e in framer.feed(value)] == ["a"]
        return
    with pytest.raises(UsageError, match="feed\\(\\) takes bytes"):
        framer.feed(value)
    with pytest.raises(UsageError, match="has failed"):
        framer.feed(b"")


def test_the_compiled_twin_takes_bytearrays_and_subclasses() -> None:
    assert compiled is not None

    class Sub(compiled):  # type: ignore[misc,valid-type]
        __slots__ = ()

    framer = Sub(max_event_bytes=100)
    assert [e.data for e in framer.feed(bytearray(b"data: a\n\n"))] == ["a"]
    assert framer.max_event_bytes == 100
    with pytest.raises(UsageError):
        compiled(max_event_bytes=0)


def test_the_public_class_is_the_one_the_environment_asks_for() -> None:
    import os

    forced = os.environ.get("SSE_TOOLCALLS_PURE_PYTHON", "") not in ("", "0")
    if forced:
        assert sse_module.SSEFramer is pure and sse_module.IMPLEMENTATION == "python"
    else:
        assert sse_module.SSEFramer is compiled and sse_module.IMPLEMENTATION == "c"


def test_the_fuzz_target_compares_the_twins(monkeypatch: pytest.MonkeyPatch) -> None:
    from sse_toolcalls import ServerSentEvent
    from sse_toolcalls.tooling.corpus import invariants

    class Forgetful(pure):
        __slots__ = ()

        def feed(self, data: bytes) -> list[ServerSentEvent]:
            return [e._replace(id="") for e in super().feed(data)]

    stream = invariants.encode(b"id: 7\ndata: a\n\n")
    invariants.check("framer", stream)
    monkeypatch.setattr(invariants, "_other_twin", lambda: [Forgetful])
    with pytest.raises(invariants.InvariantError, match="the other framer twin"):
        invariants.check("framer", stream)


def test_a_deep_copied_framer_goes_on_from_the_same_state() -> None:
    import copy

    raw = b"\xef\xbb\xbfid: 3\nretry: 5\nevent: e\ndata: a\ndata: b\r"
    rest = b"\ndata: c\n\ndata: d\n\n"
    twins: list[Any] = [pure, compiled]
    for twin in twins:
        framer = twin(max_event_bytes=1000)
        assert framer.feed(raw) == []
        fork = copy.deepcopy(framer)
        want = framer.feed(rest)
        assert fork.feed(rest) == want
        assert [e.data for e in want] == ["a\nb\nc", "d"]
        assert (fork.last_event_id, fork.retry) == ("3", 5)


@pytest.mark.parametrize("limit", [0, -5, 2.5, float("nan"), float("inf"), True, "10", None])
def test_both_twins_refuse_a_limit_that_is_not_a_whole_number_of_at_least_one(
    limit: object,
) -> None:
    # NaN passed the pure twin's ``< 1`` test and switched the limit off, while the
    # compiled one raised a TypeError of its own: both must say the same UsageError.
    twins: list[type[Any]] = [sse_module._PySSEFramer] + ([compiled] if compiled else [])
    messages = set()
    for twin in twins:
        with pytest.raises(UsageError) as caught:
            twin(max_event_bytes=limit)
        messages.add(str(caught.value))
    assert len(messages) == 1
    assert messages.pop().startswith("max_event_bytes: ")
