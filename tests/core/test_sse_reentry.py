"""A framer called again from inside its own feed() or finish() refuses with a
UsageError, on both twins (issue 29, item 13).

The compiled twin read freed memory when a finalizer that the garbage collector ran
inside ``feed()`` fed or finished the same framer (AddressSanitizer: heap
use-after-free); the pure twin silently changed the buffer it was reading. Re-entry
comes two ways: a finalizer (the collector runs during any allocation in ``feed``) and
``finish``'s own ``unterminated`` callback. The outer call must go on as if nothing had
happened. ``scripts/sanitize`` runs this file under AddressSanitizer.
"""

from __future__ import annotations

import copy
import gc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from sse_toolcalls import UsageError
from sse_toolcalls.framing import sse as sse_module

TWINS = [
    pytest.param(sse_module._PySSEFramer, id="pure"),
    pytest.param(
        sse_module._CSSEFramer,
        id="compiled",
        marks=pytest.mark.skipif(
            sse_module._CSSEFramer is None, reason="the C framer was not built"
        ),
    ),
]

# Many events in one read: many allocations inside feed(), each a chance for the
# collector; a pending tail, so that the buffer is in use when it runs.
STREAM = b"".join(b'event: e\ndata: {"n": %d}\n\n' % n for n in range(200)) + b"data: tail"

Action = Callable[[Any], object]

ACTIONS: dict[str, Action] = {
    "feed": lambda framer: framer.feed(b'data: {"x": 1}\n\ndata: more'),
    "finish": lambda framer: framer.finish(),
    "finish unterminated": lambda framer: framer.finish(unterminated=lambda data: True),
    "re-init": lambda framer: framer.__init__(max_event_bytes=4),
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
}


def _expected(cls: Any) -> list[Any]:
    return list(cls().feed(STREAM))


@pytest.fixture
def collector_often() -> Iterator[None]:
    """The collector runs at nearly every allocation of a tracked object, on the two
    young generations only: that is where the fresh garbage is, and a full collection
    at every allocation made this file cost four minutes of CPU in the whole suite's
    process (every test's objects walked each time)."""
    threshold = gc.get_threshold()
    enabled = gc.isenabled()
    gc.enable()
    gc.collect()
    gc.set_threshold(1, 1, 1_000_000)
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        if not enabled:
            gc.disable()


class _Grenade:
    """Cyclic garbage whose finalizer calls the framer: it runs when the collector does."""

    def __init__(self, framer: Any, action: Action, seen: list[object]) -> None:
        self.framer, self.action, self.seen = framer, action, seen
        self.cycle = self

    def __del__(self) -> None:
        try:
            self.action(self.framer)
        except UsageError as exc:
            self.seen.append(exc)
        except BaseException as exc:  # any other outcome is recorded, to fail the test
            self.seen.append(("other", type(exc).__name__, str(exc)))
        else:
            self.seen.append("ran")


@pytest.mark.parametrize("cls", TWINS)
@pytest.mark.parametrize("action", list(ACTIONS))
def test_a_finalizer_inside_feed_is_refused(cls: Any, action: str, collector_often: None) -> None:
    refused = 0
    # Each trial's events are kept: the compiled twin reuses freed events without an
    # allocation (its free list), and only allocations give the collector its chance.
    kept: list[object] = []
    for _ in range(40):
        framer = cls()
        seen: list[object] = []
        _Grenade(framer, ACTIONS[action], seen)  # garbage at once: a cycle
        events = framer.feed(STREAM)
        kept.append(events)
        # A finalizer that did not run inside feed runs now, outside: the grenade is in
        # one of the two young generations, unless collections while it was being built
        # (more of them under coverage's tracer) moved it to the oldest.
        gc.collect(1)
        if not seen:
            gc.collect()
        assert len(seen) == 1, seen
        if isinstance(seen[0], UsageError):
            refused += 1
            assert "not re-entrant" in str(seen[0])
            # The outer feed went on untouched: its events, then the framer still works.
            assert events == _expected(cls)
            assert framer.feed(b"\n\n")[0].data == "tail"
        else:
            # It ran between two calls: allowed, and it did what it was asked.
            assert seen[0] == "ran", seen
    # Without this the test would prove nothing: the collector did run inside feed().
    assert refused, "no finalizer ran inside feed()"


@pytest.mark.parametrize("cls", TWINS)
@pytest.mark.parametrize("action", list(ACTIONS))
def test_finish_callback_calling_the_framer_is_refused(cls: Any, action: str) -> None:
    framer = cls()
    seen: list[str] = []

    def whole(data: str) -> bool:
        try:
            ACTIONS[action](framer)
        except UsageError as exc:
            seen.append(str(exc))
        return True

    framer.feed(b"data: one\n\ndata: two")
    events = framer.finish(unterminated=whole)
    assert [e.data for e in events] == ["two"]
    assert len(seen) == 1 and "not re-entrant" in seen[0]
    with pytest.raises(UsageError, match="finished"):
        framer.feed(b"data: x\n\n")


@pytest.mark.parametrize("cls", TWINS)
def test_a_framer_is_usable_after_a_refused_reentry_and_a_failing_callback(cls: Any) -> None:
    framer = cls()
    framer.feed(b"data: one")

    def boom(data: str) -> bool:
        raise ValueError("the caller's bug")

    with pytest.raises(ValueError, match="the caller's bug"):
        framer.finish(unterminated=boom)
    # Not left busy: the caller's error leaves the framer as the twins always left it.
    assert copy.copy(framer).feed(b"\n\n") == []
