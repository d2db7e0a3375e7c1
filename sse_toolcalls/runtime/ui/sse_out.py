"""Writing Server-Sent Events: the one writer every UI stream's bytes go through.

The WHATWG "event stream" format, written so that our own framer (and every conforming
reader) reads back exactly what was written: each line of ``data`` its own ``data:``
field (a CR, an LF or a CRLF inside the text ends a line, so the text is split on all
three and read back joined with LF), a field's value after ``": "`` only when it is not
empty, ``event`` and ``id`` refused when they hold a line break (an id also refuses
NUL, which a reader ignores the id for), and the block closed by a blank line.
"""

from __future__ import annotations

import re

from ...errors import UsageError

__all__ = ["SSE_HEADERS", "comment", "sse_event"]

SSE_HEADERS: dict[str, str] = {
    "content-type": "text/event-stream; charset=utf-8",
    # A proxy must not hold the stream back (nginx buffers otherwise) or cache it.
    "cache-control": "no-cache, no-transform",
    "x-accel-buffering": "no",
}
"""The response headers of an event stream."""

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _field(name: str, value: str) -> str:
    return f"{name}: {value}\n" if value else f"{name}\n"


def sse_event(data: str, *, event: str | None = None, id: str | None = None) -> bytes:
    """One event block, UTF-8.

    Raises:
        UsageError: ``event`` or ``id`` holds a line break, or ``id`` a NUL.
    """
    out = []
    if event is not None:
        if _LINE_BREAK.search(event):
            raise UsageError(f"an SSE event type cannot hold a line break: {event!r}")
        out.append(_field("event", event))
    if id is not None:
        if _LINE_BREAK.search(id) or "\0" in id:
            raise UsageError(f"an SSE id cannot hold a line break or NUL: {id!r}")
        out.append(_field("id", id))
    for line in _LINE_BREAK.split(data):
        out.append(_field("data", line))
    out.append("\n")
    return "".join(out).encode("utf-8")


def comment(text: str = "") -> bytes:
    """A comment line (a keep-alive: readers skip it), one per line of ``text``."""
    return (
        "".join(f":{(' ' + line) if line else ''}\n" for line in _LINE_BREAK.split(text)).encode(
            "utf-8"
        )
        + b"\n"
    )
