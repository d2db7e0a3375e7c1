"""OpenAI Responses API streams.

Each event's JSON carries its ``type`` (the same as the SSE ``event:`` line, which some
servers omit). A function call is an output item: ``response.output_item.added`` opens
it, ``response.function_call_arguments.delta`` streams its arguments,
``response.function_call_arguments.done`` (or ``response.output_item.done``) completes
it. The result goes back under the item's ``call_id``, not its item ``id``. The turn
ends with ``response.completed``; ``response.incomplete`` means it was cut,
``response.failed`` and ``error`` are provider errors.

A ``reasoning`` item (its ``id``, ``summary`` parts, ``reasoning_text`` content and, when
the request asked for it, ``encrypted_content``) is kept whole from its
``response.output_item.done`` (or the completed response's output), with its place
among the calls: a caller that does not store responses must send it back before its
calls.

A call is released when the stream proves it whole: ``response.output_item.done`` with
the item's ``status`` ``"completed"`` (or none given), or ``response.completed``. The
``arguments.done`` text is final but not proof: a call cut by ``max_output_tokens`` gets
one too, and then an item of status ``"incomplete"``, which is a partial call of the
``response.incomplete`` that follows.
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
    wire_string,
)
from .._depth import dumps
from .._parsed import PARSED_DATA

_FUNCTION_CALL = "function_call"

_MAX_LOGGED_TEXT = 2000
"""Characters of each argument text a replacement record carries (as a malformed
stream's ``data``): enough to see the difference, bounded for the logs."""


def _replaced(dialect: str, call: PendingCall, final: str) -> None:
    """Say that ``call``'s streamed deltas differ from its final text, which replaces them.

    The protocol makes the done events' text authoritative, and Responses-compatible
    servers do send corrected final JSON after their deltas (kimi-code#1455), so the call
    is the final text's, not refused; but a caller that showed the deltas, or compares
    logs, must be able to see that they were not the call (a WARNING of the
    ``sse_toolcalls.dialects`` logger). Imported here: the parser loads no logging
    otherwise, and this is the rare path.
    """
    import logging

    from ..._logging import log

    log(
        logging.getLogger("sse_toolcalls.dialects"),
        logging.WARNING,
        "arguments_replaced",
        f"{dialect}: the streamed arguments of call {call.call_id or call.item_id!r} differ "
        "from its final text, which replaces them",
        provider=dialect,
        call_id=call.call_id,
        item_id=call.item_id,
        streamed=call.text()[:_MAX_LOGGED_TEXT],
        final=final[:_MAX_LOGGED_TEXT],
    )


_REASONING = "reasoning"


def _part_texts(parts: Any, kind: str) -> list[str]:
    """The ``text`` of each part of type ``kind`` in a reasoning item's list."""
    if not isinstance(parts, list):
        return []
    return [
        part["text"]
        for part in parts
        if isinstance(part, dict) and part.get("type") == kind and type(part.get("text")) is str
    ]


class ResponsesReassembler(Reassembler):
    """Reassembles function calls from a Responses API stream."""

    dialect: ClassVar[Dialect] = "openai_responses"

    def __init__(self, *, rich: bool = True) -> None:
        super().__init__(rich=rich)
        self._by_item: dict[str, PendingCall] = {}
        self._by_output: dict[int, PendingCall] = {}
        self._open: dict[PendingCall, None] = {}
        """The open calls, in order: a dict, so the membership test of every delta is O(1)
        (a list made many open calls quadratic)."""
        self._reasoning_ids: set[str] = set()
        """The ids of the reasoning items kept so far (the completed output lists them
        again)."""

    def on_event(self, event: ServerSentEvent) -> None:
        data = event.data
        if not data or data == "[DONE]":
            # OpenRouter appends Chat's [DONE]; it is not part of this protocol.
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
        if kind == "response.function_call_arguments.delta":
            # The hot path, handled here without the table's extra calls: nearly every
            # event of a function-calling turn is an argument delta (W2 in benchmarks/).
            call = self._by_item.get(payload.get("item_id"))  # type: ignore[arg-type]
            if call is None:
                call = self._find(payload)
            delta = payload.get("delta")
            if call is not None and type(delta) is str and call in self._open:
                self.add_arguments(call, delta)
            return
        if not isinstance(kind, str):
            kind = event.event
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, payload)
        elif payload.get("error"):
            # An error object in another vendor's shape (a proxy's {"error": {...}} with no
            # type): this stream's error, never an unknown event to skip, which left the
            # stream to end as "truncated" (issue 29). Read off the hot path: only
            # events without a handler get here.
            raise error_from_payload(self.dialect, payload, dumps(payload))
        # Unknown event types are ignored: the API adds new ones over time.

    # -- handlers ------------------------------------------------------------------------

    def _item_added(self, payload: dict[str, Any]) -> None:
        item = payload["item"]
        if item.get("type") != _FUNCTION_CALL:
            return
        call = self._open_item(item, payload.get("output_index"))
        arguments = item.get("arguments")
        if isinstance(arguments, str):
            self.add_arguments(call, arguments)

    def _open_item(self, item: dict[str, Any], output_index: Any) -> PendingCall:
        call = self.new_call(
            call_id=wire_string(item.get("call_id"), "call_id", self.dialect),
            name=wire_string(item.get("name"), "name", self.dialect) or "",
        )
        call.item_id = wire_string(item.get("id"), "item id", self.dialect)
        if call.item_id is not None:
            self._by_item[call.item_id] = call
        if isinstance(output_index, int):
            self._by_output[output_index] = call
        self._open[call] = None
        self.announce(call)
        return call

    def _unseen_item(self, item: dict[str, Any], output_index: Any) -> PendingCall | None:
        """A call item that arrives whole, never announced by ``output_item.added`` (a
        proxy that sends each item once done; a non-streamed answer re-wrapped as a stream,
        whose ``response.completed`` alone lists it): opened now, or ``None`` when it was
        seen before (a repeated done event must not make a second call) or carries neither
        an item id nor an output index (a repeat of it could not be told apart)."""
        item_id = item.get("id")
        known_id = isinstance(item_id, str) and item_id in self._by_item
        known_index = isinstance(output_index, int) and output_index in self._by_output
        if (
            known_id
            or known_index
            or (not isinstance(item_id, str) and not isinstance(output_index, int))
        ):
            return None
        return self._open_item(item, output_index)

    def _find(self, payload: dict[str, Any]) -> PendingCall | None:
        item_id = payload.get("item_id")
        if item_id is None and isinstance(payload.get("item"), dict):
            item_id = payload["item"].get("id")
        call = self._by_item.get(item_id) if isinstance(item_id, str) else None
        if call is None:
            output_index = payload.get("output_index")
            if isinstance(output_index, int):
                call = self._by_output.get(output_index)
        return call if call is not None and call in self._open else None

    def _arguments_delta(self, payload: dict[str, Any]) -> None:
        call = self._find(payload)
        if call is not None:
            delta = payload.get("delta")
            if isinstance(delta, str):
                self.add_arguments(call, delta)

    def _arguments_done(self, payload: dict[str, Any]) -> None:
        call = self._find(payload)
        if call is None:
            return
        name = wire_string(payload.get("name"), "name", self.dialect)
        if name and not call.name:
            call.name = name
        arguments = payload.get("arguments")
        if isinstance(arguments, str):
            # Final text, released with the finished item (or the completed response).
            self._check_final(call, arguments)
            call.final = arguments

    def _reasoning_item(self, item: dict[str, Any], before_call: int) -> None:
        item_id = wire_string(item.get("id"), "item id", self.dialect)
        if item_id is not None:
            if item_id in self._reasoning_ids:
                return
            self._reasoning_ids.add(item_id)
        self.add_block(
            ReasoningBlock(
                provider=self.dialect,
                kind="reasoning",
                text="".join(_part_texts(item.get("content"), "reasoning_text")),
                summary=tuple(_part_texts(item.get("summary"), "summary_text")),
                data=wire_string(item.get("encrypted_content"), "encrypted_content", self.dialect),
                item_id=item_id,
                before_call=before_call,
            )
        )

    def _item_done(self, payload: dict[str, Any]) -> None:
        item = payload["item"]
        if item.get("type") == _REASONING:
            self._reasoning_item(item, self.next_index)
            return
        if item.get("type") != _FUNCTION_CALL:
            return
        call = self._find(payload) or self._unseen_item(item, payload.get("output_index"))
        if call is None:
            return
        self._fill_from_item(call, item)
        if self._whole(call, item):
            self._release(call, item.get("arguments"))

    def _whole(self, call: PendingCall, item: dict[str, Any]) -> bool:
        status = item.get("status")
        if status is None or status == "completed":
            return True
        # "incomplete" (a token limit cut it) or "in_progress": a partial call, kept open
        # with what it has for the truncation error.
        arguments = item.get("arguments")
        if isinstance(arguments, str):
            call.fragments = [arguments]
        call.key = status
        return False

    def _fill_from_item(self, call: PendingCall, item: dict[str, Any]) -> None:
        call_id = wire_string(item.get("call_id"), "call_id", self.dialect)
        if call.call_id is None and call_id is not None:
            call.call_id = call_id
        name = wire_string(item.get("name"), "name", self.dialect)
        if not call.name and name is not None:
            call.name = name

    def _release(self, call: PendingCall, arguments: Any) -> None:
        del self._open[call]
        # The final text in a .done event is authoritative; the deltas are a preview.
        if isinstance(arguments, str):
            self._check_final(call, arguments)
        else:
            arguments = call.final
        if arguments is not None and call.fragments and call.text() != arguments:
            _replaced(self.dialect, call, arguments)
        self.complete(call, arguments)

    def _check_final(self, call: PendingCall, arguments: str) -> None:
        """Refuse a second final text of ``call`` that differs from its first: both are
        the provider's last word, and running either would be a guess."""
        if call.final is not None and call.final != arguments:
            raise MalformedStreamError(
                f"openai_responses: call {call.call_id or call.item_id!r} has two final "
                f"argument texts that differ ({call.final[:200]!r}, then {arguments[:200]!r})",
                provider=self.dialect,
            )

    def _text_delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        if isinstance(delta, str):
            self.add_text(delta)

    def _reasoning_delta(self, payload: dict[str, Any]) -> None:
        delta = payload.get("delta")
        if isinstance(delta, str):
            self.add_reasoning(delta)

    def _completed(self, payload: dict[str, Any]) -> None:
        response = payload.get("response") or {}
        self._read_usage(response)
        # A call the stream never closed is finished from the final output, if listed;
        # so is a reasoning item whose done event never came.
        calls_before = 0
        for item in response.get("output") or ():
            if isinstance(item, dict) and item.get("type") == _REASONING:
                self._reasoning_item(item, min(calls_before, self.next_index))
            if isinstance(item, dict) and item.get("type") == _FUNCTION_CALL:
                calls_before += 1
                call = self._by_item.get(item.get("id"))  # type: ignore[arg-type]
                if call is None:
                    # Listed only here (no output_item events); its place in the output
                    # is no output index of the stream's, so only its id can mark it.
                    call = self._unseen_item(item, None)
                if call is not None and call in self._open and call.key is None:
                    self._fill_from_item(call, item)
                    if self._whole(call, item):
                        self._release(call, item.get("arguments"))
        for call in list(self._open):
            # The completed response proves the turn whole: a call whose final text came
            # (arguments.done) and whose item was never said to be cut is whole too.
            if call.final is not None and call.key is None:
                self._release(call, None)
        if self._open:
            raise self.truncated(
                "eof", "response.completed arrived with function calls still open", list(self._open)
            )
        self.ended = True
        self.stop_reason = response.get("status") or "completed"
        self.finished()

    def _incomplete(self, payload: dict[str, Any]) -> None:
        response = payload.get("response") or {}
        self._read_usage(response)
        details = response.get("incomplete_details") or {}
        reason = details.get("reason") if isinstance(details, dict) else None
        self.ended = True
        raise self.truncated(
            "max_tokens" if reason == "max_output_tokens" else str(reason or "incomplete"),
            f"the response is incomplete ({reason or 'no reason given'})",
            list(self._open),
        )

    def _failed(self, payload: dict[str, Any]) -> None:
        response = payload.get("response") or {}
        error = response.get("error") if isinstance(response, dict) else None
        raise error_from_payload(self.dialect, {"error": error or {}}, dumps(payload))

    def _error(self, payload: dict[str, Any]) -> None:
        raise error_from_payload(self.dialect, payload, dumps(payload))

    def _read_usage(self, response: dict[str, Any]) -> None:
        usage = response.get("usage")
        if isinstance(usage, dict):
            self.usage = usage

    def finish(self) -> list[StreamEvent]:
        if not self.ended:
            raise self.truncated(
                "eof", "the stream ended before response.completed", list(self._open)
            )
        out, self.out = self.out, []
        return out


_HANDLERS: dict[str, Callable[[ResponsesReassembler, dict[str, Any]], None]] = {
    "response.output_item.added": ResponsesReassembler._item_added,
    "response.function_call_arguments.delta": ResponsesReassembler._arguments_delta,
    "response.function_call_arguments.done": ResponsesReassembler._arguments_done,
    "response.output_item.done": ResponsesReassembler._item_done,
    "response.output_text.delta": ResponsesReassembler._text_delta,
    "response.refusal.delta": ResponsesReassembler._text_delta,
    "response.reasoning_text.delta": ResponsesReassembler._reasoning_delta,
    "response.reasoning_summary_text.delta": ResponsesReassembler._reasoning_delta,
    "response.completed": ResponsesReassembler._completed,
    "response.incomplete": ResponsesReassembler._incomplete,
    "response.failed": ResponsesReassembler._failed,
    "error": ResponsesReassembler._error,
}
"""The state machine as a table: event type -> handler."""
