"""A typical hand-written loop: httpx-sse events, ``json.loads``, ``+=`` on argument strings.

This is what most agent code does when it skips the SDK helpers: the shape found in
tutorials and in the research notes' peer survey. It is fed exactly as httpx feeds
httpx-sse (see :mod:`.httpx_sse_peer`). The loop body is one small class per dialect, fed
``(event, data)`` per event, so the in-memory workloads and the many-streams workload
(httpx-sse's ``aconnect_sse`` over a socket) run the same code.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..model import Call, Impl
from .httpx_sse_peer import iter_sse

__all__ = ["LOOPS", "impls"]


class _Chat:
    def __init__(self) -> None:
        self.slots: dict[int, dict[str, Any]] = {}

    def on(self, event: str, data: str) -> bool:
        """Take one event; ``False`` once the stream is over."""
        if data == "[DONE]":
            return False
        chunk = json.loads(data)
        for choice in chunk["choices"]:
            for tc in choice["delta"].get("tool_calls") or []:
                slot = self.slots.setdefault(tc["index"], {"id": None, "name": "", "arguments": ""})
                if tc.get("id"):
                    slot["id"] = tc["id"]
                fn = tc.get("function") or {}
                if fn.get("name"):
                    slot["name"] = fn["name"]
                slot["arguments"] += fn.get("arguments") or ""
        return True

    def calls(self) -> list[Call]:
        return [
            (s["id"], s["name"], json.loads(s["arguments"])) for _, s in sorted(self.slots.items())
        ]


class _Responses:
    def __init__(self) -> None:
        self.slots: dict[str, dict[str, Any]] = {}
        self.done: list[Call] = []

    def on(self, event: str, data: str) -> bool:
        """Take one event; ``False`` once the stream is over."""
        body = json.loads(data)
        kind = body["type"]
        if kind == "response.output_item.added" and body["item"]["type"] == "function_call":
            item = body["item"]
            self.slots[item["id"]] = {
                "id": item["call_id"],
                "name": item["name"],
                "arguments": "",
            }
        elif kind == "response.function_call_arguments.delta":
            self.slots[body["item_id"]]["arguments"] += body["delta"]
        elif kind == "response.output_item.done" and body["item"]["type"] == "function_call":
            slot = self.slots.pop(body["item"]["id"])
            self.done.append((slot["id"], slot["name"], json.loads(slot["arguments"])))
        return True

    def calls(self) -> list[Call]:
        return self.done


class _Anthropic:
    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.done: list[Call] = []

    def on(self, event: str, data: str) -> bool:
        """Take one event; ``False`` once the stream is over."""
        if event == "ping":
            return True
        body = json.loads(data)
        kind = body["type"]
        if kind == "content_block_start" and body["content_block"]["type"] == "tool_use":
            block = body["content_block"]
            self.blocks[body["index"]] = {"id": block["id"], "name": block["name"], "json": ""}
        elif kind == "content_block_delta" and body["delta"]["type"] == "input_json_delta":
            self.blocks[body["index"]]["json"] += body["delta"]["partial_json"]
        elif kind == "content_block_stop" and body["index"] in self.blocks:
            slot = self.blocks.pop(body["index"])
            self.done.append((slot["id"], slot["name"], json.loads(slot["json"] or "{}")))
        return True

    def calls(self) -> list[Call]:
        return self.done


class _Gemini:
    def __init__(self) -> None:
        self.done: list[Call] = []

    def on(self, event: str, data: str) -> bool:
        """Take one event; ``False`` once the stream is over."""
        for candidate in json.loads(data)["candidates"]:
            for part in candidate["content"]["parts"]:
                if "functionCall" in part:
                    fc = part["functionCall"]
                    self.done.append((fc.get("id"), fc["name"], fc.get("args", {})))
        return True

    def calls(self) -> list[Call]:
        return self.done


LOOPS: dict[str, type[_Chat | _Responses | _Anthropic | _Gemini]] = {
    "openai_chat": _Chat,
    "openai_responses": _Responses,
    "anthropic": _Anthropic,
    "gemini": _Gemini,
}
"""The loop body per dialect: ``on(event, data)`` per event, then ``calls()``."""


def impls() -> list[Impl]:
    """The hand-written loop, in every dialect."""
    list(iter_sse(()))  # raises MissingPeer now, rather than mid-run, when httpx-sse is absent

    def run(dialect: str, chunks: Sequence[bytes]) -> list[Call]:
        loop = LOOPS[dialect]()
        for sse in iter_sse(chunks):
            if not loop.on(sse.event, sse.data):
                break
        return loop.calls()

    def normalize(calls: list[Call]) -> list[Call]:
        return calls

    return [
        Impl(
            name="hand-written httpx-sse+json",
            kind="calls",
            role="peer",
            dialects=tuple(LOOPS),
            run=run,
            normalize=normalize,
        )
    ]
