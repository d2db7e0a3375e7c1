"""A typical hand-written loop: httpx-sse events, ``json.loads``, ``+=`` on argument strings.

This is what most agent code does when it skips the SDK helpers: the shape found in
tutorials and in the research notes' peer survey. It is fed exactly as httpx feeds
httpx-sse (see :mod:`.httpx_sse_peer`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..model import Call, Impl
from .httpx_sse_peer import iter_sse

__all__ = ["impls"]


def _chat(chunks: Sequence[bytes]) -> list[Call]:
    calls: dict[int, dict[str, Any]] = {}
    for sse in iter_sse(chunks):
        if sse.data == "[DONE]":
            break
        chunk = json.loads(sse.data)
        for choice in chunk["choices"]:
            for tc in choice["delta"].get("tool_calls") or []:
                slot = calls.setdefault(tc["index"], {"id": None, "name": "", "arguments": ""})
                if tc.get("id"):
                    slot["id"] = tc["id"]
                fn = tc.get("function") or {}
                if fn.get("name"):
                    slot["name"] = fn["name"]
                slot["arguments"] += fn.get("arguments") or ""
    return [(s["id"], s["name"], json.loads(s["arguments"])) for _, s in sorted(calls.items())]


def _responses(chunks: Sequence[bytes]) -> list[Call]:
    calls: dict[str, dict[str, Any]] = {}
    done: list[Call] = []
    for sse in iter_sse(chunks):
        event = json.loads(sse.data)
        kind = event["type"]
        if kind == "response.output_item.added" and event["item"]["type"] == "function_call":
            item = event["item"]
            calls[item["id"]] = {"id": item["call_id"], "name": item["name"], "arguments": ""}
        elif kind == "response.function_call_arguments.delta":
            calls[event["item_id"]]["arguments"] += event["delta"]
        elif kind == "response.output_item.done" and event["item"]["type"] == "function_call":
            slot = calls.pop(event["item"]["id"])
            done.append((slot["id"], slot["name"], json.loads(slot["arguments"])))
    return done


def _anthropic(chunks: Sequence[bytes]) -> list[Call]:
    blocks: dict[int, dict[str, Any]] = {}
    done: list[Call] = []
    for sse in iter_sse(chunks):
        if sse.event == "ping":
            continue
        event = json.loads(sse.data)
        kind = event["type"]
        if kind == "content_block_start" and event["content_block"]["type"] == "tool_use":
            block = event["content_block"]
            blocks[event["index"]] = {"id": block["id"], "name": block["name"], "json": ""}
        elif kind == "content_block_delta" and event["delta"]["type"] == "input_json_delta":
            blocks[event["index"]]["json"] += event["delta"]["partial_json"]
        elif kind == "content_block_stop" and event["index"] in blocks:
            slot = blocks.pop(event["index"])
            done.append((slot["id"], slot["name"], json.loads(slot["json"] or "{}")))
    return done


def _gemini(chunks: Sequence[bytes]) -> list[Call]:
    done: list[Call] = []
    for sse in iter_sse(chunks):
        for candidate in json.loads(sse.data)["candidates"]:
            for part in candidate["content"]["parts"]:
                if "functionCall" in part:
                    fc = part["functionCall"]
                    done.append((fc.get("id"), fc["name"], fc.get("args", {})))
    return done


_BY_DIALECT = {
    "openai_chat": _chat,
    "openai_responses": _responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
}


def impls() -> list[Impl]:
    """The hand-written loop, in every dialect."""
    list(iter_sse(()))  # raises MissingPeer now, rather than mid-run, when httpx-sse is absent

    def run(dialect: str, chunks: Sequence[bytes]) -> list[Call]:
        return _BY_DIALECT[dialect](chunks)

    def normalize(calls: list[Call]) -> list[Call]:
        return calls

    return [
        Impl(
            name="hand-written httpx-sse+json",
            kind="calls",
            role="peer",
            dialects=tuple(_BY_DIALECT),
            run=run,
            normalize=normalize,
        )
    ]
