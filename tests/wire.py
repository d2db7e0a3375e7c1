"""A test-only encoder: neutral calls in, each dialect's stream bytes out.

It is the oracle of the round-trip properties, written from the documented wire formats
independently of the simulator's encoders, so that the two check each other.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Call:
    name: str
    args: dict[str, Any]
    call_id: str | None


def _sse(payload: Any, event: str | None = None, crlf: bool = False) -> str:
    nl = "\r\n" if crlf else "\n"
    head = f"event: {event}{nl}" if event else ""
    return f"{head}data: {json.dumps(payload, ensure_ascii=False)}{nl}{nl}"


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def aws_message(event_type: str, payload: Any, *, message_type: str = "event") -> bytes:
    """One AWS event-stream message (AWS "Event stream encoding"): the prelude (total
    length, headers length, their CRC32), string headers (name length, name, type 7,
    2-byte value length, value), the JSON payload (bytes as they are), the CRC32 of all
    before it. An
    ``exception`` message names its kind in ``:exception-type``."""
    kind = ":event-type" if message_type == "event" else ":exception-type"
    headers = b""
    for name, value in (
        (kind, event_type),
        (":content-type", "application/json"),
        (":message-type", message_type),
    ):
        raw = value.encode()
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw
    body = (
        payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode()
    )
    prelude = struct.pack(">II", 16 + len(headers) + len(body), len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + body
    return message + struct.pack(">I", zlib.crc32(message))


def _bedrock_converse(calls: Sequence[Call], text: str, fragment: int) -> bytes:
    out = [aws_message("messageStart", {"role": "assistant"})]
    block = 0
    if text:
        # As the service sends it: a text block has no contentBlockStart.
        for piece in _pieces(text, fragment):
            out.append(
                aws_message("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": piece}})
            )
        out.append(aws_message("contentBlockStop", {"contentBlockIndex": 0}))
        block = 1
    for call in calls:
        start = {"toolUse": {"toolUseId": call.call_id, "name": call.name}}
        out.append(aws_message("contentBlockStart", {"contentBlockIndex": block, "start": start}))
        # Claude's empty first fragment, then the input in pieces.
        pieces = ["", *_pieces(json.dumps(call.args, ensure_ascii=False), fragment)]
        for piece in pieces:
            delta = {"toolUse": {"input": piece}}
            out.append(
                aws_message("contentBlockDelta", {"contentBlockIndex": block, "delta": delta})
            )
        out.append(aws_message("contentBlockStop", {"contentBlockIndex": block}))
        block += 1
    reason = "tool_use" if calls else "end_turn"
    out.append(aws_message("messageStop", {"stopReason": reason}))
    usage = {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}
    out.append(aws_message("metadata", {"usage": usage, "metrics": {"latencyMs": 100}}))
    return b"".join(out)


def _bedrock_anthropic(calls: Sequence[Call], text: str, fragment: int) -> bytes:
    """The Anthropic stream, each event base64 in a ``chunk`` (InvokeModelWithResponseStream)."""
    inner = encode("anthropic", calls, text, fragment).decode()
    out = []
    for block in inner.split("\n\n"):
        for line in block.split("\n"):
            if line.startswith("data: "):
                raw = line[len("data: ") :].encode()
                out.append(aws_message("chunk", {"bytes": base64.b64encode(raw).decode()}))
    return b"".join(out)


def encode(dialect: str, calls: Sequence[Call], text: str = "", fragment: int = 5) -> bytes:
    """The stream a provider would send for one turn with this text and these calls."""
    if dialect == "bedrock_converse":
        return _bedrock_converse(calls, text, fragment)
    if dialect == "bedrock_anthropic":
        return _bedrock_anthropic(calls, text, fragment)
    out: list[str] = []
    if dialect == "openai_chat":
        out.append(_sse({"choices": [{"index": 0, "delta": {"role": "assistant"}}]}))
        for piece in _pieces(text, fragment) if text else []:
            out.append(_sse({"choices": [{"index": 0, "delta": {"content": piece}}]}))
        for i, call in enumerate(calls):
            args = json.dumps(call.args, ensure_ascii=False)
            head: dict[str, Any] = {"index": i, "id": call.call_id, "type": "function"}
            head["function"] = {"name": call.name, "arguments": ""}
            out.append(_sse({"choices": [{"index": 0, "delta": {"tool_calls": [head]}}]}))
            for piece in _pieces(args, fragment):
                entry = {"index": i, "function": {"arguments": piece}}
                out.append(_sse({"choices": [{"index": 0, "delta": {"tool_calls": [entry]}}]}))
        reason = "tool_calls" if calls else "stop"
        out.append(_sse({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}))
        out.append("data: [DONE]\n\n")
    elif dialect == "openai_responses":
        out.append(_sse({"type": "response.created", "response": {}}, "response.created"))
        if text:
            for piece in _pieces(text, fragment):
                ev: dict[str, Any] = {"type": "response.output_text.delta", "delta": piece}
                out.append(_sse(ev, "response.output_text.delta"))
        for i, call in enumerate(calls):
            args = json.dumps(call.args, ensure_ascii=False)
            item = {"type": "function_call", "id": f"fc_{i}", "call_id": call.call_id}
            item |= {"name": call.name, "arguments": ""}
            added = {"type": "response.output_item.added", "output_index": i, "item": item}
            out.append(_sse(added, "response.output_item.added"))
            for piece in _pieces(args, fragment):
                ev = {"type": "response.function_call_arguments.delta", "item_id": f"fc_{i}"}
                ev |= {"output_index": i, "delta": piece}
                out.append(_sse(ev, ev["type"]))
            done: dict[str, Any] = {
                "type": "response.function_call_arguments.done",
                "item_id": f"fc_{i}",
            }
            done |= {"output_index": i, "arguments": args}
            out.append(_sse(done, done["type"]))
            item_done: dict[str, Any] = {"type": "response.output_item.done", "output_index": i}
            item_done["item"] = item | {"arguments": args, "status": "completed"}
            out.append(_sse(item_done, item_done["type"]))
        completed = {"type": "response.completed", "response": {"status": "completed"}}
        out.append(_sse(completed, "response.completed"))
    elif dialect == "anthropic":
        out.append(_sse({"type": "message_start", "message": {"usage": {}}}, "message_start"))
        block = 0
        if text:
            start = {"type": "content_block_start", "index": 0}
            start["content_block"] = {"type": "text", "text": ""}
            out.append(_sse(start, "content_block_start"))
            for piece in _pieces(text, fragment):
                delta = {"type": "content_block_delta", "index": 0}
                delta["delta"] = {"type": "text_delta", "text": piece}
                out.append(_sse(delta, "content_block_delta"))
            out.append(_sse({"type": "content_block_stop", "index": 0}, "content_block_stop"))
            block = 1
        out.append(_sse({"type": "ping"}, "ping"))
        for call in calls:
            start = {"type": "content_block_start", "index": block}
            start["content_block"] = {
                "type": "tool_use",
                "id": call.call_id,
                "name": call.name,
                "input": {},
            }
            out.append(_sse(start, "content_block_start"))
            for piece in _pieces(json.dumps(call.args, ensure_ascii=False), fragment):
                delta = {"type": "content_block_delta", "index": block}
                delta["delta"] = {"type": "input_json_delta", "partial_json": piece}
                out.append(_sse(delta, "content_block_delta"))
            out.append(_sse({"type": "content_block_stop", "index": block}, "content_block_stop"))
            block += 1
        reason = "tool_use" if calls else "end_turn"
        out.append(
            _sse({"type": "message_delta", "delta": {"stop_reason": reason}}, "message_delta")
        )
        out.append(_sse({"type": "message_stop"}, "message_stop"))
    elif dialect == "gemini":
        if text:
            parts = [{"text": piece} for piece in _pieces(text, fragment)]
            for part in parts:
                content = {"role": "model", "parts": [part]}
                out.append(_sse({"candidates": [{"content": content}]}, crlf=True))
        for call in calls:
            fc: dict[str, Any] = {"name": call.name, "args": call.args}
            if call.call_id is not None:
                fc["id"] = call.call_id
            content = {"role": "model", "parts": [{"functionCall": fc}]}
            out.append(_sse({"candidates": [{"content": content}]}, crlf=True))
        last = {"candidates": [{"content": {"parts": [{"text": ""}]}, "finishReason": "STOP"}]}
        out.append(_sse(last, crlf=True))
    else:
        raise ValueError(dialect)
    return "".join(out).encode()
