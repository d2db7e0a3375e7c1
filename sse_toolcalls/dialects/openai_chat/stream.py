"""OpenAI Chat Completions streams, and every OpenAI-compatible server's.

A chunk is ``{"choices": [{"index", "delta": {"content", "tool_calls": [...]},
"finish_reason"}], "usage"}``; the stream ends with ``data: [DONE]``. Only choice 0 is
read: with ``n > 1`` the other choices are other answers, never parts of this one.

Calls are released at the end of the turn, when the stream proves it ended: ``[DONE]``;
or, at the end of the stream without ``[DONE]``, a closing chunk (a ``finish_reason`` on
a chunk of choice 0 that carries no text and no call fragment, and is not the first
chunk) with nothing but usage after it, and every pending call's arguments a whole JSON
object. A ``finish_reason`` alone proves nothing: proxies put one on every chunk
(one-api#1408) while arguments are still arriving, so a stream cut anywhere would look
finished; a call with its name and no arguments yet is exactly such a cut.

Fragments are matched to calls by a hierarchy, each rule from a real server:

1. a non-empty ``id`` seen before, at the same ``index`` or with none: that call (Qwen
   repeats the id on continuations);
2. a new non-empty ``id``: a new call (Groq, Ollama and Bedrock reuse ``index`` 0 for
   parallel calls with distinct ids), unless the call at that index has no id yet
   (the id arrived late);
3. otherwise the latest call at that ``index``, or the latest call when there is no
   ``index`` at all (Gemini's compatibility endpoint, Mistral);
4. but a fragment that names a different function once the matched call has arguments,
   or repeats the name with a fresh object once its arguments are complete, starts a new
   call (parallel calls at one index with no usable id, langchain#40392, OpenRouter).

Names: set when empty; an empty string or an exact repeat is ignored (llama.cpp repeats
the full name, huggingface/tau#715 sends ``""``); otherwise, before any argument text,
appended (Gemini streams a name in pieces, continuedev#5849).
"""

from __future__ import annotations

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
    is_whole_json,
    load_json,
    parse_arguments,
    wire_string,
)
from .._depth import MAX_EVENT_DEPTH, check_nesting, dumps
from .._parsed import PARSED_DATA, text_of

_DONE = "[DONE]"

# An event read again exactly for its object arguments (held to MAX_EVENT_DEPTH on their
# own) may nest 7 levels more: the chunk, choices, a choice, delta, tool_calls, an entry,
# function.
_EXACT_EVENT_DEPTH = MAX_EVENT_DEPTH + 7


def is_done_or_whole(data: str) -> bool:
    """A final event without its blank line is whole when it is ``[DONE]`` or whole JSON."""
    return data == _DONE or is_whole_json(data)


# finish_reason values that mean generation stopped before the turn was whole.
# "model_length" is Mistral's (the context ran out); "max_tokens" is passed through by
# proxies that translate Anthropic's stop reason.
_TRUNCATING = {
    "length": "max_tokens",
    "max_tokens": "max_tokens",
    "model_length": "max_tokens",
    "content_filter": "content_filter",
}


class ChatReassembler(Reassembler):
    """Reassembles tool calls from a Chat Completions stream."""

    dialect: ClassVar[Dialect] = "openai_chat"

    def __init__(self, *, rich: bool = True) -> None:
        super().__init__(rich=rich)
        self._calls: list[PendingCall] = []
        self._by_id: dict[str, PendingCall] = {}
        self._by_index: dict[int, PendingCall] = {}
        self._released = 0
        """How many of ``_calls`` were released."""
        self._finish_reason: str | None = None
        self._choice_chunks = 0
        """How many chunks of choice 0 arrived."""
        self._closed = False
        """True while the last chunk of choice 0 was a closing chunk (see the docstring)."""
        self._reasoning_content: list[str] = []
        """The turn's ``reasoning_content`` deltas (one block at the end of the turn)."""
        self._event: ServerSentEvent | None = None
        self._payload: dict[str, Any] = {}
        """The event being read, and its JSON (for arguments sent as objects)."""
        self._twins_of: ServerSentEvent | None = None
        self._twins: dict[int, Any] = {}
        """Object arguments of ``_twins_of`` read exactly, by the id() of their
        ``function`` object in ``_payload``."""

    def on_event(self, event: ServerSentEvent) -> None:
        data = event.data
        if event.event == "error":
            # OpenAI-compatible servers (Groq, vLLM) abort with an SSE error event.
            try:
                payload: Any = load_json(event, self.dialect)
            except MalformedStreamError:
                payload = None
            raise error_from_payload(self.dialect, payload, text_of(event))
        if data == _DONE:
            # Exact match only: "[DONE]" inside an argument string is data (litellm#31562).
            self._end_of_turn()
            return
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
        if payload.get("error"):
            raise error_from_payload(self.dialect, payload, text_of(event))
        self._event = event
        self._payload = payload
        usage = payload.get("usage")
        if isinstance(usage, dict):
            self.usage = usage
        # choices may be [] (Azure's prompt_filter_results, usage chunks) or null.
        for choice in payload.get("choices") or ():
            if choice.get("index", 0) == 0:
                self._choice(choice)

    def _choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta")
        carries = False
        if type(delta) is dict and len(delta) == 1 and (tool_calls := delta.get("tool_calls")):
            # The hot path: a delta of only tool_calls (nearly every chunk of a tool-calling
            # turn) skips the five text and legacy lookups below, which find nothing there.
            carries = True
            for entry in tool_calls:
                self._tool_delta(entry)
        elif isinstance(delta, dict):
            content = delta.get("content")
            if isinstance(content, str) and content:
                carries = True
                self.add_text(content)
            refusal = delta.get("refusal")
            if isinstance(refusal, str) and refusal:
                carries = True
                self.add_text(refusal)
            reasoning = delta.get("reasoning_content")
            if isinstance(reasoning, str) and reasoning:
                carries = True
                self.add_reasoning(reasoning)
                # Sent back with the turn (DeepSeek's thinking mode refuses a tool turn
                # without it); another server's "reasoning" field is only shown.
                self._reasoning_content.append(reasoning)
            else:
                reasoning = delta.get("reasoning")
                if isinstance(reasoning, str) and reasoning:
                    carries = True
                    self.add_reasoning(reasoning)
            tool_calls = delta.get("tool_calls")
            if tool_calls:
                carries = True
                for entry in tool_calls:
                    self._tool_delta(entry)
            legacy = delta.get("function_call")
            if isinstance(legacy, dict):
                carries = True
                # The deprecated functions API: one call, no id (finish_reason "function_call").
                self._tool_delta({"index": -1, "function": legacy})
        reason = choice.get("finish_reason")
        self._choice_chunks += 1
        if isinstance(reason, str) and reason:
            self._finish_reason = reason
            # A first chunk may carry only the role, and a proxy's finish_reason with it.
            self._closed = not carries and self._choice_chunks > 1
        elif carries:
            self._closed = False

    def _tool_delta(self, entry: dict[str, Any]) -> None:
        if len(entry) == 2:
            # The hot path: a continuation fragment {"index", "function": {"arguments"}}
            # (nearly every chunk of a tool-calling turn, W2 in benchmarks/) goes straight
            # to the open call at its index; anything else takes the general rules below.
            index = entry.get("index")
            function = entry.get("function")
            if type(index) is int and type(function) is dict and len(function) == 1:
                call = self._by_index.get(index)
                arguments = function.get("arguments")
                if call is not None and call.index >= self._released and type(arguments) is str:
                    self.add_arguments(call, arguments)
                    return
        call_id = wire_string(entry.get("id"), "id", self.dialect)
        index = entry.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            index = None
        function = entry.get("function") or {}
        name = wire_string(function.get("name"), "name", self.dialect) or ""
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            # A few servers send the arguments as an object; keep them as JSON text.
            arguments = self._object_arguments(function, arguments)
        call = self._match(call_id, index, name, arguments)
        if call_id is not None and (call.call_id is None or (call_id and not call.call_id)):
            call.call_id = call_id
            self._by_id[call_id] = call
        elif call_id:
            self._by_id[call_id] = call
        if index is not None:
            self._by_index[index] = call
            if call.key is None:
                call.key = index
        if name and name != call.name:
            call.name += name
        if arguments:
            self.add_arguments(call, arguments)

    def _object_arguments(self, function: dict[str, Any], arguments: Any) -> str:
        """JSON text of arguments sent as an object, as exact as arguments sent as text."""
        # Held to the depth bound of every dialect's object arguments first.
        check_nesting(arguments, self.dialect)
        event = self._event
        if self._twins_of is not event:
            # orjson turned the event's integers past 64 bits into floats: an event with
            # a long number is read again exactly, once, and each object taken from that
            # reading (the rule of arguments sent as text, issue 9). The arguments are
            # bounded above; the reading leaves room for the envelope around them.
            self._twins_of = event
            self._twins = {}
            if event is not None and has_long_number(event.data):
                exact = load_json(event, self.dialect, exact=True, depth=_EXACT_EVENT_DEPTH)
                self._twins = self._exact_twins(exact)
        return dumps(self._twins.get(id(function), arguments))

    def _exact_twins(self, exact: Any) -> dict[int, Any]:
        """Map each ``function`` object of choice 0 in ``_payload`` to its arguments in
        ``exact``, the same event read exactly (the same shape, but for its numbers)."""
        twins: dict[int, Any] = {}
        for choice, twin in zip(self._payload.get("choices") or (), exact["choices"], strict=True):
            delta = choice.get("delta")
            if choice.get("index", 0) != 0 or not isinstance(delta, dict):
                continue
            twin_delta = twin["delta"]
            legacy = delta.get("function_call")
            if isinstance(legacy, dict):
                twins[id(legacy)] = twin_delta["function_call"].get("arguments")
            entries = delta.get("tool_calls") or ()
            for entry, twin_entry in zip(entries, twin_delta.get("tool_calls") or (), strict=True):
                function = entry.get("function") if isinstance(entry, dict) else None
                if isinstance(function, dict):
                    twins[id(function)] = twin_entry["function"].get("arguments")
        return twins

    def _match(
        self, call_id: str | None, index: int | None, name: str, arguments: str | None
    ) -> PendingCall:
        """Find the call a fragment belongs to, or open a new one (rules in the docstring)."""
        if call_id:
            known = self._by_id.get(call_id)
            if (
                known is not None
                and self._is_open(known)
                and (index is None or known.key is None or known.key == index)
            ):
                if self._starts_new_call(known, name, arguments):
                    return self._open()
                return known
            candidate = self._candidate(index)
            if candidate is not None and candidate.call_id is None:
                return candidate
            return self._open()
        candidate = self._candidate(index)
        if candidate is None or self._starts_new_call(candidate, name, arguments):
            return self._open()
        return candidate

    def _candidate(self, index: int | None) -> PendingCall | None:
        if index is None:
            call = self._calls[-1] if self._calls else None
        else:
            call = self._by_index.get(index)
        return call if call is not None and self._is_open(call) else None

    def _is_open(self, call: PendingCall) -> bool:
        return call.index >= self._released

    @staticmethod
    def _starts_new_call(call: PendingCall, name: str, arguments: str | None) -> bool:
        if not name or not call.name or not call.has_args:
            return False
        if name != call.name:
            return True
        # The same name again with a fresh object after a complete one: a second call.
        if arguments is None or not arguments.lstrip().startswith("{"):
            return False
        text = call.text().rstrip()
        if not text.endswith("}"):
            return False
        _, error = parse_arguments(text)
        return error is None

    def _open(self) -> PendingCall:
        call = self.new_call()
        self._calls.append(call)
        return call

    def _end_of_turn(self) -> None:
        """Release the open calls; the dialect's end marker has arrived."""
        if self.ended:
            return
        self.ended = True
        reason = self._finish_reason
        self.stop_reason = reason
        pending = [call for call in self._calls[self._released :] if self._is_real(call)]
        if reason in _TRUNCATING:
            raise self.truncated(
                _TRUNCATING[reason],
                f"generation stopped early (finish_reason {reason!r})",
                pending,
            )
        self._released = len(self._calls)
        if self._reasoning_content:
            # Streamed before the content and the calls, it goes back before them.
            self.add_block(
                ReasoningBlock(
                    provider=self.dialect,
                    kind="reasoning_content",
                    text="".join(self._reasoning_content),
                )
            )
        for call in pending:
            self.complete(call)
        self.finished()

    @staticmethod
    def _whole(call: PendingCall) -> bool:
        # Without [DONE], "" is no proof of a call without parameters: it is also what a
        # call cut right after its name holds.
        return call.has_args and parse_arguments(call.text())[1] is None

    @staticmethod
    def _is_real(call: PendingCall) -> bool:
        # An entry that carried nothing at all (no id, name or arguments) is not a call.
        return bool(call.call_id is not None or call.name or call.fragments)

    def finish(self) -> list[StreamEvent]:
        if not self.ended:
            pending = [c for c in self._calls[self._released :] if self._is_real(c)]
            if self._finish_reason is None:
                raise self.truncated(
                    "eof", "the stream ended without finish_reason or [DONE]", pending
                )
            if self._finish_reason not in _TRUNCATING:
                # Many compatible servers end after the finish_reason chunk with no [DONE];
                # without it, only a closing chunk and whole arguments prove the end.
                if not self._closed:
                    raise self.truncated(
                        "eof", "the stream ended without [DONE] or a closing chunk", pending
                    )
                if not all(self._whole(call) for call in pending):
                    raise self.truncated(
                        "eof", "the stream ended without [DONE] inside a call's arguments", pending
                    )
            self._end_of_turn()
        out, self.out = self.out, []
        return out
