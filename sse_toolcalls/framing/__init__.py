"""Framings: how the bytes of a streamed response are cut into events, one module each.

Server-sent events (``sse_toolcalls.framing.sse``) are one framing among others; AWS's
binary event stream (``sse_toolcalls.framing.eventstream``, Amazon Bedrock) is the other,
its messages read as events.
A dialect names the framing its bytes come in (``DialectSpec.framing``) and the parser
and the edge build that framing's framer, so a new framing is one module with a framer
and one entry in :data:`FRAMINGS`.

What a framer offers (:class:`Framer`, after ``SSEFramer``): ``feed(bytes)`` returns the
events the bytes complete, ``finish(unterminated=...)`` declares the end and returns what
the framing still holds (``unterminated`` is the dialect's end check: whether a last
event without its terminator is whole), and ``max_event_bytes`` bounds one pending event.
Its events are :class:`~sse_toolcalls._event.ServerSentEvent` values (the event's type in
``event``, its payload as text in ``data``): the dialects read nothing else. A framer
raises only the library's errors; past one of its limits the error
(``EventTooLargeError``, ``LimitExceededError``) carries in ``events`` the events that
read completed before the limit, which the parser still reads (issue 29).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .._event import ServerSentEvent
from ..errors import UsageError
from .sse import SSEFramer

__all__ = ["EVENTSTREAM", "FRAMINGS", "SSE", "Framer", "Framing", "framing_for", "sniff_framing"]


class Framer(Protocol):
    """Bytes in, events out: one instance per streamed response (sans-I/O)."""

    @property
    def max_event_bytes(self) -> int:
        """Bound on one pending event, in bytes."""
        ...

    def feed(self, data: bytes) -> list[ServerSentEvent]:
        """The events the next bytes complete."""
        ...

    def finish(self, *, unterminated: Callable[[str], bool] | None = None) -> list[ServerSentEvent]:
        """The end of the stream: the events still held that ``unterminated`` accepts."""
        ...


class Framing:
    """One framing, described once.

    A plain class, not a dataclass: this package loads with the framer
    (``from sse_toolcalls import SSEFramer``), and dataclasses bring inspect, ast, dis and
    tokenize with them (tests/core/test_import_cost.py holds the framer free of them)."""

    __slots__ = ("foreign", "framer", "media_type", "name")

    def __init__(
        self,
        *,
        name: str,
        framer: Callable[..., Framer],
        media_type: str,
        foreign: Callable[[bytes], bool],
    ) -> None:
        self.name = name
        """The name a dialect gives it (``DialectSpec.framing``)."""
        self.framer = framer
        """A fresh framer, called with ``max_event_bytes=``."""
        self.media_type = media_type
        """The ``Content-Type`` of a body in this framing (parameters aside): the edge
        refuses a 2xx body of another type as the provider's error, not a stream."""
        self.foreign = foreign
        """Whether a body opening with these bytes (its first non-blank ones, BOM and
        whitespace stripped) cannot be in this framing: a JSON error document or an HTML
        page a proxy sent with a 2xx status and the stream's content type."""

    def __repr__(self) -> str:
        return f"Framing(name={self.name!r}, media_type={self.media_type!r})"


def _not_sse(head: bytes) -> bool:
    # No SSE line starts with these: a field name would be "{..." or "<...", which no
    # server sends and a conforming client ignores.
    return head[:1] in (b"{", b"[", b"<")


def _event_stream_framer(*, max_event_bytes: int) -> Framer:
    # Imported on first use: a stream of SSE never loads the event-stream module (and
    # its dataclasses; tests/core/test_import_cost.py holds the SSE framer free of them).
    from .eventstream import EventStreamEventFramer

    return EventStreamEventFramer(max_event_bytes=max_event_bytes)


SSE = "sse"
"""Server-sent events: the framing of the OpenAI, Anthropic and Gemini dialects."""

EVENTSTREAM = "eventstream"
"""AWS's binary event stream: the framing of the Bedrock dialects."""

FRAMINGS: dict[str, Framing] = {
    SSE: Framing(name=SSE, framer=SSEFramer, media_type="text/event-stream", foreign=_not_sse),
    # A JSON error or a markup page is no event stream either: a message opens with its
    # total length, whose first byte is 0 below 16 MiB, and never "{", "[" or "<" below
    # 2 GiB.
    EVENTSTREAM: Framing(
        name=EVENTSTREAM,
        framer=_event_stream_framer,
        media_type="application/vnd.amazon.eventstream",
        foreign=_not_sse,
    ),
}
"""The one table of framings."""


def sniff_framing(head: bytes) -> str:
    """The framing a body opening with ``head`` (its first bytes, at least one) is in, for
    a stream whose dialect is not named: AWS's event stream opens with the first byte
    of a message's 4-byte big-endian length, 0 for every message under 16 MiB (Bedrock's
    are under 2 KB) and never a byte SSE opens with (a field name, a colon, a line end
    or a BOM); anything else is SSE."""
    return EVENTSTREAM if head[:1] == b"\x00" else SSE


def framing_for(name: str) -> Framing:
    """The framing of this name.

    Raises:
        UsageError: no framing has this name (a dialect's spec names one that is not in
            :data:`FRAMINGS`).
    """
    try:
        return FRAMINGS[name]
    except (KeyError, TypeError):
        raise UsageError(f"no framing is named {name!r}; known: {sorted(FRAMINGS)}") from None
