"""The ways real servers vary one stream, as the chunks each would send.

A proxy puts ``finish_reason`` on every Chat chunk or drops ``[DONE]``; servers frame
with CRLF, send comments and pings between events, flush one event per write, or deliver
one byte per read. AWS's event stream (Amazon Bedrock) has no lines to vary: it is
delivered one message per write or one byte per read, and AWS adds event types to its
unions, which a reader must skip. A stream whose calls change under one of these is a
parser defect the user's provider may trigger tomorrow. ``sse-toolcalls check`` and the
prefix property's test (tests/core/test_prefix_property.py) both draw their variants from
here.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from typing import Any, Final

from ...framing import EVENTSTREAM, sniff_framing
from .mutators import event_stream_message, string_headers

__all__ = ["KEEPS_END", "transforms"]

KEEPS_END: Final = frozenset(
    {
        "as recorded",
        "crlf",
        "pings between events",
        "event per chunk",
        "one byte at a time",
        "finish_reason on every chunk",
        "unknown events between messages",
    }
)
"""The transforms that keep the stream's end marker: the whole stream's outcome must not
change under them (the others may turn a complete stream into a truncated one)."""


def split(raw: bytes) -> tuple[list[bytes], bytes]:
    """The stream's complete event blocks, LF-framed, without their blank lines; and
    what follows the last blank line (a cut or unterminated last event), kept as is."""
    text = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    *complete, tail = text.split(b"\n\n")
    return [block for block in complete if block.strip(b"\n")], tail


def joined(parts: list[bytes], tail: bytes = b"") -> bytes:
    """The blocks framed again with LF blank lines, then the tail."""
    return b"".join(part + b"\n\n" for part in parts) + tail


def _rewrite_chat(raw: bytes, change: Callable[[dict[str, Any]], None] | None, done: bool) -> bytes:
    out = []
    parts, tail = split(raw)
    for block in parts:
        if block == b"data: [DONE]":
            if done:
                out.append(block)
            continue
        if change is not None and block.startswith(b"data: {") and b"\n" not in block:
            try:
                payload = json.loads(block[6:])
            except (ValueError, RecursionError):
                # A user's stream may hold a broken event: a proxy would pass it on as is.
                out.append(block)
                continue
            if isinstance(payload, dict):
                change(payload)
                out.append(b"data: " + json.dumps(payload).encode())
            else:
                out.append(block)
        else:
            out.append(block)
    return joined(out, tail)


def _final_reason(raw: bytes) -> str:
    reason = "stop"
    for block in split(raw)[0]:
        if block.startswith(b"data: {") and b"\n" not in block:
            try:
                payload = json.loads(block[6:])
            except (ValueError, RecursionError):
                continue
            choices = payload.get("choices") if isinstance(payload, dict) else None
            for choice in choices if isinstance(choices, list) else ():
                if isinstance(choice, dict) and isinstance(choice.get("finish_reason"), str):
                    reason = choice["finish_reason"]
    return reason


def _on_every_chunk(reason: str) -> Callable[[dict[str, Any]], None]:
    def change(payload: dict[str, Any]) -> None:
        choices = payload.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if isinstance(choice, dict) and not choice.get("finish_reason"):
                choice["finish_reason"] = reason

    return change


def messages(raw: bytes) -> tuple[list[bytes], bytes]:
    """An event stream's whole messages, cut by the total length that opens each (no CRC
    checked: the parser's job), and the bytes of a message the body cut short."""
    out = []
    at = 0
    while len(raw) - at >= 4:
        (total,) = struct.unpack_from(">I", raw, at)
        if total < 16 or at + total > len(raw):
            break
        out.append(raw[at : at + total])
        at += total
    return out, raw[at:]


_UNKNOWN_EVENT: Final = event_stream_message(
    string_headers(
        [
            (":event-type", "futureEventTypeNotYetModeled"),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ]
    ),
    b'{"p":"abcdef"}',
)
"""An event of a type AWS may add to a stream's union: every reader must skip it."""


def transforms(raw: bytes, dialect: str | None) -> dict[str, list[bytes]]:
    """Every variant of ``raw`` that applies to ``dialect``, by name, as chunks.

    The Chat variants (``finish_reason`` on every chunk, no ``[DONE]``) apply only to
    Chat streams that end with ``[DONE]``; Anthropic's pings are its own ``ping`` events.
    An event stream (told as the parser tells it, from its first byte) gets its own.
    """
    if raw and sniff_framing(raw[:1]) == EVENTSTREAM:
        whole, cut = messages(raw)
        return {
            "as recorded": [raw],
            "unknown events between messages": [b"".join(m + _UNKNOWN_EVENT for m in whole) + cut],
            "event per chunk": whole + ([cut] if cut else []),
            "one byte at a time": [raw[i : i + 1] for i in range(len(raw))],
        }
    parts, tail = split(raw)
    chat = dialect == "openai_chat" and b"data: [DONE]" in raw
    ping = b'event: ping\ndata: {"type": "ping"}\n\n' if dialect == "anthropic" else b"\n"
    out: dict[str, list[bytes]] = {
        "as recorded": [raw],
        "crlf": [joined(parts, tail).replace(b"\n", b"\r\n")],
        "pings between events": [
            b"".join(block + b"\n\n: ping\n\n" + ping for block in parts) + tail
        ],
        "event per chunk": [block + b"\n\n" for block in parts] + ([tail] if tail else []),
        "one byte at a time": [bytes([b]) for b in joined(parts, tail)],
    }
    if chat:
        every = _on_every_chunk(_final_reason(raw))
        out["finish_reason on every chunk"] = [_rewrite_chat(raw, every, done=True)]
        out["no [DONE]"] = [_rewrite_chat(raw, None, done=False)]
        out["finish_reason on every chunk, no [DONE]"] = [_rewrite_chat(raw, every, done=False)]
    return out
