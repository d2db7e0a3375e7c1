"""Anthropic Messages streams.

``message_start``, then content blocks (``content_block_start`` / ``_delta`` / ``_stop``,
by block ``index``), then ``message_delta`` with the ``stop_reason`` and
``message_stop``. A client call is a ``tool_use`` block: its input streams as
``input_json_delta.partial_json`` and closes at ``content_block_stop``; it is released once
the stream proves the limit did not cut it: another block starts after it, or the
``message_delta`` stop reason is not a token limit (Anthropic closes a block cut by
``max_tokens`` before it sends the stop reason, even one with empty input). Blocks run
by Anthropic itself (``server_tool_use``, ``mcp_tool_use`` and their results) are not
client calls. ``thinking`` blocks (their text in ``thinking_delta``, then one
``signature_delta``) and ``redacted_thinking`` blocks (``data`` whole at the start) are
kept whole, each with its place among the calls, because the next request must carry
them back unchanged ("Preserving thinking blocks"). ``ping`` keeps the connection
alive; ``error`` is a provider error (an overload arrives this way inside an HTTP 200).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ... import _json
from ...calls import Dialect, ReasoningBlock, StreamEvent
from ...errors import MalformedStreamError
from ...framing.sse import ServerSentEvent
from ...provider_errors import error_from_payload
from .._common import (
    PendingCall,
    Reassembler,
    event_object,
    has_long_number,
    load_json,
    wire_string,
)
from .._depth import MAX_EVENT_DEPTH, dumps
from .._parsed import PARSED_DATA

# stop_reason values that mean the turn was cut before it was whole.
_TRUNCATING = {"max_tokens": "max_tokens", "model_context_window_exceeded": "max_tokens"}


class _Thinking:
    """A thinking or redacted_thinking block being streamed."""

    __slots__ = ("before_call", "data", "kind", "parts", "signature")

    def __init__(self, kind: str, before_call: int) -> None:
        self.kind = kind
        self.before_call = before_call
        self.parts: list[str] = []
        self.signature: list[str] = []
        self.data: str | None = None


class AnthropicReassembler(Reassembler):
    """Reassembles ``tool_use`` blocks from a Messages stream."""

    dialect: ClassVar[Dialect] = "anthropic"

    def __init__(self, *, rich: bool = True) -> None:
        super().__init__(rich=rich)
        self._blocks: dict[int, PendingCall] = {}
        """Open tool_use blocks by content-block index."""
        self._kinds: dict[int, str] = {}
        """The type of every open content block by index."""
        self._held: list[PendingCall] = []
        """Closed tool_use blocks not yet proven whole (see ``_block_stop``), in order."""
        self._thinking: dict[int, _Thinking] = {}
        """Open thinking and redacted_thinking blocks by content-block index."""

    def on_event(self, event: ServerSentEvent) -> None:
        data = event.data
        if not data:
            return
        # The JSON read here, not through event_object: its two frames were a sixth of a
        # W4 feed's instructions (callgrind, issue 16). Whatever is not a JSON object
        # (blank data, null, an SDK's parsed event, not JSON) gets event_object's answer.
        try:
            payload = _json.loads(data) if data is not PARSED_DATA else None
        except ValueError:
            payload = None
        if type(payload) is not dict:
            payload = event_object(event, self.dialect)
            if payload is None:
                return
        kind = payload.get("type")
        if kind == "content_block_delta":
            # The hot path, handled here without the table's extra call: nearly every
            # event of a tool-calling turn is an input_json_delta (W2 in benchmarks/).
            delta = payload["delta"]
            if delta.get("type") == "input_json_delta":
                call = self._blocks.get(payload["index"])
                fragment = delta.get("partial_json")
                if call is not None and type(fragment) is str:
                    self.add_arguments(call, fragment)
                    return
                # Anything else (a server tool's input, a block not open) is the
                # table's handler's to check.
        if not isinstance(kind, str):
            kind = event.event
        if kind == "content_block_start" and (
            has_long_number(data) or len(data) > 2 * MAX_EVENT_DEPTH
        ):
            # The only event that carries arguments as an object: keep big integers exact,
            # and its depth within MAX_EVENT_DEPTH whatever its digits (read exact).
            payload = load_json(event, self.dialect, exact=True)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, payload)
        elif payload.get("error"):
            # An error object in another vendor's shape (a proxy's {"error": {...}} with no
            # type): this stream's error, never an unknown event to skip, which left the
            # stream to end as "truncated" (issue 29). Read off the hot path: only
            # events without a handler get here.
            raise error_from_payload(self.dialect, payload, dumps(payload))
        # Unknown event types are ignored, as the API documents for new ones.

    def _message_start(self, payload: dict[str, Any]) -> None:
        usage = (payload.get("message") or {}).get("usage")
        if isinstance(usage, dict):
            self.usage = dict(usage)

    def _block_start(self, payload: dict[str, Any]) -> None:
        index = payload["index"]
        block = payload["content_block"]
        kind = block.get("type")
        if index in self._kinds:
            # A second block over an open one would silently drop the first call.
            raise MalformedStreamError(
                f"anthropic: content block {index} started while it was still open",
                provider=self.dialect,
            )
        # Generation went on past the closed blocks: the limit did not cut them.
        self._release_held()
        self._kinds[index] = kind
        if kind == "tool_use":
            call = self.new_call(
                call_id=wire_string(block.get("id"), "id", self.dialect),
                name=wire_string(block.get("name"), "name", self.dialect) or "",
            )
            # The input given with the start is the whole input when no delta follows
            # (a call without parameters, or a translator that sends it whole).
            call.value = block.get("input")
            self._blocks[index] = call
            self.announce(call)
        elif kind == "text":
            self.add_text(block.get("text") or "")
        elif kind in {"thinking", "redacted_thinking"}:
            thinking = _Thinking(kind, self.next_index)
            text = block.get("thinking")
            if type(text) is str and text:
                thinking.parts.append(text)
                self.add_reasoning(text)
            signature = wire_string(block.get("signature"), "signature", self.dialect)
            if signature:
                thinking.signature.append(signature)
            thinking.data = wire_string(block.get("data"), "data", self.dialect)
            self._thinking[index] = thinking

    def _not_open(self, payload: dict[str, Any]) -> MalformedStreamError:
        # The API never sends a delta or a stop for a block it did not start
        # (anthropic-sdk-python#1273); a proxy that does has lost track of its blocks, and
        # the arguments it sends there belong to no call we could name: releasing the
        # call with what it has would be a guess.
        return MalformedStreamError(
            f"anthropic: {payload.get('type')} for content block {payload['index']!r}, "
            "which is not open",
            provider=self.dialect,
            data=dumps(payload),
        )

    def _block_delta(self, payload: dict[str, Any]) -> None:
        if payload["index"] not in self._kinds:
            raise self._not_open(payload)
        delta = payload["delta"]
        kind = delta.get("type")
        if kind == "input_json_delta":
            call = self._blocks.get(payload["index"])
            if call is not None:
                fragment = delta.get("partial_json")
                if not isinstance(fragment, str):
                    raise MalformedStreamError(
                        "anthropic: an input_json_delta without a partial_json string",
                        provider=self.dialect,
                        data=dumps(payload),
                    )
                self.add_arguments(call, fragment)
        elif kind == "text_delta":
            self.add_text(delta.get("text") or "")
        elif kind == "thinking_delta":
            text = delta.get("thinking")
            thinking = self._thinking.get(payload["index"])
            if type(text) is str and text:
                if thinking is not None:
                    thinking.parts.append(text)
                self.add_reasoning(text)
        elif kind == "signature_delta":
            thinking = self._thinking.get(payload["index"])
            signature = wire_string(delta.get("signature"), "signature", self.dialect)
            if thinking is not None and signature:
                thinking.signature.append(signature)

    def _block_stop(self, payload: dict[str, Any]) -> None:
        index = payload["index"]
        if index not in self._kinds:
            raise self._not_open(payload)
        del self._kinds[index]
        thinking = self._thinking.pop(index, None)
        if thinking is not None:
            self.add_block(
                ReasoningBlock(
                    provider=self.dialect,
                    kind="thinking" if thinking.kind == "thinking" else "redacted_thinking",
                    text="".join(thinking.parts),
                    signature="".join(thinking.signature) or None,
                    data=thinking.data,
                    before_call=thinking.before_call,
                )
            )
            return
        call = self._blocks.pop(index, None)
        if call is None:
            return
        # Anthropic closes a tool_use block cut by max_tokens before it sends the stop
        # reason, whatever its input (empty input too, issue 9): the block waits until the
        # next block starts or the stop reason comes.
        self._held.append(call)

    def _release_held(self) -> None:
        held, self._held = self._held, []
        for call in held:
            # Without input_json_delta the start's input is the whole input (vercel/ai#10747).
            self.complete(call)

    def _message_delta(self, payload: dict[str, Any]) -> None:
        reason = (payload.get("delta") or {}).get("stop_reason")
        if isinstance(reason, str):
            self.stop_reason = reason
            if reason not in _TRUNCATING:
                self._release_held()
        usage = payload.get("usage")
        if isinstance(usage, dict):
            self.usage = {**(self.usage or {}), **usage}

    def _message_stop(self, payload: dict[str, Any]) -> None:
        self.ended = True
        pending = list(self._blocks.values())
        if self.stop_reason in _TRUNCATING:
            # Only the last block can have been cut by the limit, even when its input
            # parses ("{}" is where a cut right after the start leaves it).
            held, self._held = self._held, []
            cut = [held.pop()] if held and not pending else []
            for call in held:
                self.complete(call)
            pending = cut + pending
            raise self.truncated(
                _TRUNCATING[self.stop_reason],
                f"generation stopped early (stop_reason {self.stop_reason!r})",
                pending,
            )
        if pending:
            raise self.truncated("eof", "message_stop arrived with a tool_use block open", pending)
        # A normal stop (or none given): held input is whole; invalid input goes out as
        # an invalid call.
        self._release_held()
        self.finished()

    def _error(self, payload: dict[str, Any]) -> None:
        raise error_from_payload(self.dialect, payload, dumps(payload))

    def finish(self) -> list[StreamEvent]:
        if not self.ended:
            raise self.truncated(
                "eof",
                "the stream ended before message_stop",
                self._held + list(self._blocks.values()),
            )
        out, self.out = self.out, []
        return out


_HANDLERS: dict[str, Callable[[AnthropicReassembler, dict[str, Any]], None]] = {
    "message_start": AnthropicReassembler._message_start,
    "content_block_start": AnthropicReassembler._block_start,
    "content_block_delta": AnthropicReassembler._block_delta,
    "content_block_stop": AnthropicReassembler._block_stop,
    "message_delta": AnthropicReassembler._message_delta,
    "message_stop": AnthropicReassembler._message_stop,
    "error": AnthropicReassembler._error,
    # "ping" needs nothing.
}
"""The state machine as a table: event type -> handler."""
