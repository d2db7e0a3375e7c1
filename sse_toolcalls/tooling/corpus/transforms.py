"""The ways real servers vary one stream, as the chunks each would send.

A proxy puts ``finish_reason`` on every Chat chunk or drops ``[DONE]``; servers frame
with CRLF, send comments and pings between events, flush one event per write, or deliver
one byte per read. A stream whose calls change under one of these is a parser defect the
user's provider may trigger tomorrow. ``sse-toolcalls check`` and the prefix property's
test (tests/core/test_prefix_property.py) both draw their variants from here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final

__all__ = ["KEEPS_END", "transforms"]

KEEPS_END: Final = frozenset(
    {
        "as recorded",
        "crlf",
        "pings between events",
        "event per chunk",
        "one byte at a time",
        "finish_reason on every chunk",
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


def _messages(raw: bytes) -> list[bytes]:
    """An AWS event stream cut into its messages by their announced lengths (the first 4
    bytes of each); what cannot be a message (a length under 16 or past the end) stays
    whole in the last piece, for the parser to refuse."""
    out: list[bytes] = []
    at = 0
    while at + 4 <= len(raw):
        total = int.from_bytes(raw[at : at + 4], "big")
        if total < 16 or at + total > len(raw):
            break
        out.append(raw[at : at + total])
        at += total
    if at < len(raw):
        out.append(raw[at:])
    return out


def transforms(raw: bytes, dialect: str | None) -> dict[str, list[bytes]]:
    """Every variant of ``raw`` that applies to ``dialect``, by name, as chunks.

    The Chat variants (``finish_reason`` on every chunk, no ``[DONE]``) apply only to
    Chat streams that end with ``[DONE]``; Anthropic's pings are its own ``ping`` events.
    An AWS event stream (Bedrock: binary, its first byte 0) varies only in how its bytes
    arrive: a message per read, or a byte per read; it has no line endings, comments or
    keep-alives to vary.
    """
    if raw[:1] == b"\x00":
        return {
            "as recorded": [raw],
            "event per chunk": _messages(raw),
            "one byte at a time": [bytes([b]) for b in raw],
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
