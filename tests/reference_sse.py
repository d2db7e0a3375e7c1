"""A deliberately simple reference of the WHATWG event-stream algorithm, the test oracle.

"9.2.5 Parsing an event stream" and "9.2.6 Interpreting an event stream" of the HTML
Living Standard, done the obvious way: decode the whole stream, cut it into lines one
character at a time, and interpret each line in order. No fast paths, no chunks, no
limits: :class:`sse_toolcalls.SSEFramer` must give exactly what this gives, under every
split (tests/core/test_sse_reference.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sse_toolcalls import ServerSentEvent


@dataclass
class ReferenceResult:
    events: list[ServerSentEvent] = field(default_factory=list)
    last_event_id: str = ""
    retry: int | None = None


def reference_parse(raw: bytes) -> ReferenceResult:
    """Every event the whole stream ``raw`` dispatches, then the end of the stream."""
    # "Streams must be decoded using the UTF-8 decode algorithm", which strips one
    # leading BOM and replaces invalid sequences with U+FFFD.
    text = raw.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]

    # "Lines must be separated by either a CRLF pair, a single LF, or a single CR."
    # What follows the last line ending is an unfinished line: at the end of the file
    # "any pending data must be discarded".
    lines: list[str] = []
    current: list[str] = []
    position = 0
    while position < len(text):
        char = text[position]
        if char == "\r":
            lines.append("".join(current))
            current = []
            if position + 1 < len(text) and text[position + 1] == "\n":
                position += 1
        elif char == "\n":
            lines.append("".join(current))
            current = []
        else:
            current.append(char)
        position += 1

    result = ReferenceResult()
    data_buffer = ""
    event_type = ""
    id_buffer = ""
    block_retry: int | None = None
    for line in lines:
        if line == "":
            # "If the line is empty (a blank line): Dispatch the event."
            result.last_event_id = id_buffer
            if data_buffer == "":
                event_type = ""
                block_retry = None
                continue
            if data_buffer.endswith("\n"):
                data_buffer = data_buffer[:-1]
            result.events.append(
                ServerSentEvent(event_type or "message", data_buffer, id_buffer, block_retry)
            )
            data_buffer = ""
            event_type = ""
            block_retry = None
            continue
        if line.startswith(":"):
            # "If the line starts with a U+003A COLON character (:): Ignore the line."
            continue
        if ":" in line:
            name, value = line.split(":", 1)
            if value.startswith(" "):
                value = value[1:]
        else:
            name, value = line, ""
        if name == "event":
            event_type = value
        elif name == "data":
            data_buffer += value + "\n"
        elif name == "id":
            if "\x00" not in value:
                id_buffer = value
        elif name == "retry":
            if value != "" and all(c in "0123456789" for c in value):
                result.retry = block_retry = int(value)
    return result
