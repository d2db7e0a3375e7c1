"""The compiled framer's events are freed by its own deallocator and reused (issue 16).

``ServerSentEvent`` is a NamedTuple, a Python class on ``tuple``; when the compiled twin is
set up its instances are freed by the extension's deallocator instead of CPython's generic
one, and the events the framer made go to a bounded free list for its next dispatch. Every
other instance (built in Python, a subclass's, one of another length, one nested deep)
must be freed exactly as before: no reference to the class lost or leaked, no event
changed while someone holds it, a ``__del__`` given to the class still run.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

import pytest

from sse_toolcalls.framing import sse as sse_module
from sse_toolcalls.framing.sse import ServerSentEvent

compiled = sse_module._CSSEFramer
pytestmark = pytest.mark.skipif(compiled is None, reason="the C framer was not built")

BODY = b"event: e\nid: 3\ndata: a\ndata: b\n\ndata: c\n\nretry: 7\ndata: d\n\n"
EXPECTED = [("e", "a\nb", "3", None), ("message", "c", "3", None), ("message", "d", "3", 7)]


def framer() -> Any:
    assert compiled is not None
    return compiled()


def class_references() -> int:
    gc.collect()
    return sys.getrefcount(ServerSentEvent)


def test_the_class_is_referenced_once_per_live_event_however_events_are_freed() -> None:
    before = class_references()
    f = framer()
    for _ in range(3000):  # one at a time: each freed event is the next one's object
        assert f.feed(BODY) == EXPECTED
    held = [f.feed(BODY) for _ in range(1500)]  # 4,500 at once: past the free list's bound
    assert class_references() == before + 4500
    del held
    assert class_references() == before


def test_a_held_event_never_changes_when_later_events_reuse_freed_ones() -> None:
    f = framer()
    kept = f.feed(b"data: kept\nid: k\n\n")[0]
    for n in range(2000):
        (event,) = f.feed(b"data: %d\n\n" % n)
        assert event.data == str(n) and event.id == "k"
    assert kept == ("message", "kept", "k", None)
    assert not gc.is_tracked(kept)


def test_events_built_in_python_are_freed_as_before() -> None:
    before = class_references()
    made = [ServerSentEvent("e", "d" * n, "i", n) for n in range(500)]
    made += [ServerSentEvent._make(("e", "x", "", None)) for _ in range(500)]
    longer = tuple.__new__(ServerSentEvent, ("e", "d", "i", None, "a fifth item"))
    shorter = tuple.__new__(ServerSentEvent, ("e",))
    assert len(longer) == 5 and len(shorter) == 1
    # A tracked event holding a cycle through a list: the collector must still free it.
    cyclic: list[Any] = []
    cyclic.append(ServerSentEvent("e", cyclic, "", None))
    assert gc.is_tracked(cyclic[0])
    del made, longer, shorter, cyclic
    assert class_references() == before


def test_a_subclass_instance_is_freed_through_the_class_deallocator() -> None:
    class Tagged(ServerSentEvent):
        __slots__ = ()

    before = class_references()
    sub_before = sys.getrefcount(Tagged)
    items = [Tagged("e", "d", "i", None) for _ in range(300)]
    assert sys.getrefcount(Tagged) == sub_before + 300
    del items
    gc.collect()
    assert sys.getrefcount(Tagged) == sub_before
    assert class_references() == before


def test_deeply_nested_events_are_freed_without_exhausting_the_c_stack() -> None:
    # The trashcan, as for tuples: a chain this deep would overflow a recursive free.
    chain: Any = None
    for _ in range(200_000):
        chain = ServerSentEvent("e", chain, "", None)
    del chain
    assert framer().feed(b"data: still well\n\n")[0].data == "still well"


def test_a_del_given_to_the_class_later_is_still_run() -> None:
    seen: list[str] = []

    def note(self: ServerSentEvent) -> None:
        seen.append(self.data)

    ServerSentEvent.__del__ = note  # type: ignore[attr-defined]
    try:
        event = ServerSentEvent("e", "python-made", "", None)
        del event
        (framed,) = framer().feed(b"data: framed\n\n")
        del framed
    finally:
        del ServerSentEvent.__del__  # type: ignore[attr-defined]
    assert seen == ["python-made", "framed"]
    before = class_references()
    for _ in range(100):
        framer().feed(BODY)
    assert class_references() == before


@pytest.mark.parametrize("length", range(1, 41))
def test_an_event_type_is_reused_only_for_the_same_bytes(length: int) -> None:
    # The framer keeps the last event type's str and reuses it when the next event line
    # has the same bytes (compared eight at a time, the last eight overlapping): a type
    # that differs in any one byte, or is one byte shorter or longer, is its own.
    base = "".join(chr(97 + i % 26) for i in range(length))
    variants = [base[:i] + "Z" + base[i + 1 :] for i in range(length)]
    variants += [base[:-1], base + "q", base]
    expected = [t or "message" for v in variants for t in (v, base)]
    events = [f"event: {t}\ndata: 1\n\nevent: {base}\ndata: 2\n\n".encode() for t in variants]
    whole = framer()  # one read, the stream's first
    assert [e.event for e in whole.feed(b"".join(events))] == expected
    reads = framer()  # a read an event after the first (the whole-line path)
    assert reads.feed(b": open\n\n") == []
    assert [e.event for read in events for e in reads.feed(read)] == expected
