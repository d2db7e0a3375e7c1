"""Amazon Bedrock ``ConverseStream`` streams, over AWS's event stream.

Each message of the event stream is one event, named by its ``:event-type``
(``framing.eventstream.message_event``): ``messageStart``, then content blocks by
``contentBlockIndex`` (``contentBlockStart`` / ``contentBlockDelta`` /
``contentBlockStop``), ``messageStop`` with the ``stopReason``, and ``metadata`` with the
usage, the last event: the end marker (a body without it was cut). A client call is a
block whose ``contentBlockStart`` has ``start.toolUse {toolUseId, name}``: its input
streams as ``delta.toolUse.input`` string fragments (Claude sends an empty first one, Nova
the whole input in one) and closes at ``contentBlockStop``. As with Anthropic's own API, a
closed call is released once the stream proves the token limit did not cut it: another
block starts, or ``messageStop`` gives a stop reason that is not a limit. Text blocks
usually have no
``contentBlockStart`` (their first delta opens them); ``reasoningContent`` deltas carry
reasoning text, its ``signature`` or ``redactedContent``, kept whole as a block, since
the next request must carry them back unchanged. A block Bedrock runs itself
(``start.toolUse.type: "server_tool_use"``, Nova's code interpreter) is not a client call.
Every payload carries a ``"p"`` field of random padding, read by nothing.

An ``exception`` message (``throttlingException``, ``modelStreamErrorException``,
``internalServerException``, ``serviceUnavailableException``, ``validationException``)
is the provider's error, retryable by its name (``provider_errors.aws_error``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ... import _json
from ...calls import Dialect, ReasoningBlock, StreamEvent
from ...errors import MalformedStreamError
from ...framing.sse import ServerSentEvent
from .._aws import exception_error, is_exception
from .._common import PendingCall, Reassembler, event_object, wire_string
from .._depth import dumps
from .._parsed import PARSED_DATA

# stopReason values that mean the turn was cut before it was whole.
_TRUNCATING = {"max_tokens": "max_tokens", "model_context_window_exceeded": "max_tokens"}


class _Reasoning:
    """A reasoningContent block being streamed."""

    __slots__ = ("before_call", "parts", "redacted", "signature")

    def __init__(self, before_call: int) -> None:
        self.before_call = before_call
        self.parts: list[str] = []
        self.signature: list[str] = []
        self.redacted: list[str] = []


class BedrockConverseReassembler(Reassembler):
    """Reassembles ``toolUse`` blocks from a ConverseStream response."""

    dialect: ClassVar[Dialect] = "bedrock_converse"

    def __init__(self, *, rich: bool = True) -> None:
        super().__init__(rich=rich)
        self._calls: dict[int, PendingCall] = {}
        """Open client toolUse blocks by contentBlockIndex."""
        self._open: set[int] = set()
        """Every open block's index (text blocks open at their first delta)."""
        self._server: set[int] = set()
        """Open blocks Bedrock runs itself (server_tool_use, tool results)."""
        self._held: list[PendingCall] = []
        """Closed calls not yet proven whole (see the module docstring), in order."""
        self._reasoning: dict[int, _Reasoning] = {}
        """Open reasoningContent blocks by index."""
        self._stopped = False
        """messageStop arrived (its calls released); the turn ends at metadata."""

    def on_event(self, event: ServerSentEvent) -> None:
        name = event.event
        data = event.data
        if name == "contentBlockDelta" and data is not PARSED_DATA:
            # The hot path, without the table: nearly every event of a tool-calling turn
            # is an input fragment.
            try:
                payload = _json.loads(data)
            except ValueError:
                payload = None
            if type(payload) is dict:
                delta = payload.get("delta")
                if type(delta) is dict:
                    tool = delta.get("toolUse")
                    if type(tool) is dict:
                        call = self._calls.get(payload.get("contentBlockIndex"))  # type: ignore[arg-type]
                        fragment = tool.get("input")
                        if call is not None and type(fragment) is str:
                            self.add_arguments(call, fragment)
                            return
                self._block_delta(payload)
                return
        handler = _HANDLERS.get(name)
        if handler is None:
            if is_exception(name):
                raise exception_error(self.dialect, event)
            # Event types not known yet are skipped, as AWS adds members to the union.
            return
        if self._stopped and handler is not BedrockConverseReassembler._metadata:
            # After messageStop the turn is decided: only its usage is still read.
            return
        payload = event_object(event, self.dialect)
        if payload is not None:
            handler(self, payload)

    def _index(self, payload: dict[str, Any]) -> int:
        index = payload.get("contentBlockIndex")
        if type(index) is not int:
            raise MalformedStreamError(
                f"{self.dialect}: a content block event without an integer contentBlockIndex",
                provider=self.dialect,
                data=dumps(payload),
            )
        return index

    def _message_start(self, payload: dict[str, Any]) -> None:
        del payload  # {"role": "assistant"}: nothing to keep

    def _block_start(self, payload: dict[str, Any]) -> None:
        index = self._index(payload)
        if index in self._open:
            # A second block over an open one would silently drop the first call.
            raise MalformedStreamError(
                f"{self.dialect}: content block {index} started while it was still open",
                provider=self.dialect,
                data=dumps(payload),
            )
        start = payload.get("start")
        tool = start.get("toolUse") if type(start) is dict else None
        # Generation went on past the closed blocks: the limit did not cut them.
        self._release_held()
        self._open.add(index)
        if type(tool) is not dict:
            # A tool result Bedrock ran itself, or a block type not known yet: no call.
            self._server.add(index)
            return
        if tool.get("type") == "server_tool_use":
            self._server.add(index)
            return
        call = self.new_call(
            call_id=wire_string(tool.get("toolUseId"), "toolUseId", self.dialect),
            name=wire_string(tool.get("name"), "name", self.dialect) or "",
        )
        self._calls[index] = call
        self.announce(call)

    def _block_delta(self, payload: dict[str, Any]) -> None:
        if self._stopped:
            return
        index = self._index(payload)
        delta = payload.get("delta")
        if type(delta) is not dict:
            raise MalformedStreamError(
                f"{self.dialect}: a contentBlockDelta without a delta object",
                provider=self.dialect,
                data=dumps(payload),
            )
        if index in self._server:
            return
        if "toolUse" in delta:
            call = self._calls.get(index)
            fragment = (delta["toolUse"] or {}).get("input")
            if call is None or type(fragment) is not str:
                # Input for a block that never named its call (no contentBlockStart):
                # releasing it would answer a call nobody can name.
                raise MalformedStreamError(
                    f"{self.dialect}: toolUse input for content block {index}, which is "
                    "not an open tool call"
                    if call is None
                    else f"{self.dialect}: a toolUse delta without an input string",
                    provider=self.dialect,
                    data=dumps(payload),
                )
            self.add_arguments(call, fragment)
            return
        if index not in self._open:
            # Text and reasoning blocks open with their first delta.
            self._release_held()
            self._open.add(index)
        text = delta.get("text")
        if text is not None:
            self.add_text(text)
            return
        reasoning = delta.get("reasoningContent")
        if type(reasoning) is dict:
            block = self._reasoning.get(index)
            if block is None:
                block = self._reasoning[index] = _Reasoning(self.next_index)
            piece = reasoning.get("text")
            if type(piece) is str and piece:
                block.parts.append(piece)
                self.add_reasoning(piece)
            signature = wire_string(reasoning.get("signature"), "signature", self.dialect)
            if signature:
                block.signature.append(signature)
            redacted = wire_string(
                reasoning.get("redactedContent"), "redactedContent", self.dialect
            )
            if redacted:
                block.redacted.append(redacted)
        # citation, toolResult (a server tool's), image...: nothing a call needs.

    def _block_stop(self, payload: dict[str, Any]) -> None:
        index = self._index(payload)
        self._open.discard(index)
        self._server.discard(index)
        reasoning = self._reasoning.pop(index, None)
        if reasoning is not None:
            redacted = "".join(reasoning.redacted) or None
            self.add_block(
                ReasoningBlock(
                    provider=self.dialect,
                    kind="redacted_thinking" if redacted and not reasoning.parts else "thinking",
                    text="".join(reasoning.parts),
                    signature="".join(reasoning.signature) or None,
                    data=redacted,
                    before_call=reasoning.before_call,
                )
            )
            return
        call = self._calls.pop(index, None)
        if call is not None:
            # Held until a later block or the stop reason proves the limit did not cut it.
            self._held.append(call)

    def _release_held(self) -> None:
        held, self._held = self._held, []
        for call in held:
            self.complete(call)

    def _message_stop(self, payload: dict[str, Any]) -> None:
        reason = payload.get("stopReason")
        self.stop_reason = reason if isinstance(reason, str) else None
        pending = list(self._calls.values())
        if self.stop_reason in _TRUNCATING:
            # Only the last closed call can have been cut by the limit, even when its
            # input parses.
            held, self._held = self._held, []
            cut = [held.pop()] if held and not pending else []
            for call in held:
                self.complete(call)
            raise self.truncated(
                _TRUNCATING[self.stop_reason],
                f"generation stopped early (stopReason {self.stop_reason!r})",
                cut + pending,
            )
        if pending:
            raise self.truncated("eof", "messageStop arrived with a toolUse block open", pending)
        self._release_held()
        self._stopped = True

    def _metadata(self, payload: dict[str, Any]) -> None:
        usage = payload.get("usage")
        if isinstance(usage, dict):
            self.usage = dict(usage)
        if self._stopped:
            # The last event of the stream: the turn is whole, with its usage.
            self.ended = True
            self.finished()

    def finish(self) -> list[StreamEvent]:
        if not self.ended:
            # The metadata event is the last of every ConverseStream body (AWS's stream
            # reference): a body that ends before it was cut, even after messageStop,
            # as every other dialect's body is cut before its last event. The calls
            # messageStop released went out already (or ride on this error).
            where = "metadata" if self._stopped else "messageStop"
            raise self.truncated(
                "eof",
                f"the stream ended before {where}",
                self._held + list(self._calls.values()),
            )
        out, self.out = self.out, []
        return out


_HANDLERS: dict[str, Callable[[BedrockConverseReassembler, dict[str, Any]], None]] = {
    "messageStart": BedrockConverseReassembler._message_start,
    "contentBlockStart": BedrockConverseReassembler._block_start,
    "contentBlockDelta": BedrockConverseReassembler._block_delta,
    "contentBlockStop": BedrockConverseReassembler._block_stop,
    "messageStop": BedrockConverseReassembler._message_stop,
    "metadata": BedrockConverseReassembler._metadata,
}
"""The state machine as a table: event type -> handler."""
