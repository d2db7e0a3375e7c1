"""Google Gemini ``streamGenerateContent?alt=sse`` streams (AI Studio and Vertex AI).

Every event is a whole ``GenerateContentResponse``: ``candidates[0].content.parts``
hold text parts and ``functionCall`` parts. A ``functionCall`` part is a complete call
(several may share an event, the same name may come twice: each part is its own call),
with an optional ``id`` that must be echoed back and a part-level ``thoughtSignature``
that must be sent back with the call. The turn is whole when the stream ends after a
normal ``finishReason`` (``STOP``): the finish is held to the end of the stream, because
proxies stamp it on every chunk, and parts after it are the same turn's.

Vertex can also stream arguments (``streamFunctionCallArguments``): a part
``{"name", "willContinue": true}`` opens a call, parts with ``partialArgs`` (a JSON path
and a typed value, strings continued across parts while ``willContinue``) fill it, and
a part without ``willContinue`` closes it.

A whole ``functionCall`` part is a whole call, except the last part of the event whose
``finishReason`` is ``MAX_TOKENS`` (a whole part, or the one ending a streamed call): the
limit may have cut it, nothing proves it whole, and it is a partial call of the
truncation error. ``partialArgs`` build the arguments
in work and memory linear in the bytes received: paths and array indexes are bounded
(below), an index may skip only a few slots, and a string continued across parts is
kept in pieces and joined once.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from functools import partial as bind
from typing import Any, ClassVar

from ... import _json
from ...calls import (
    Dialect,
    StreamEvent,
    TextDelta,
    ToolCallStarted,
    _Deferred,
)
from ...errors import LimitExceededError, MalformedStreamError
from ...framing.sse import ServerSentEvent
from ...provider_errors import error_from_payload, finish_reason_error, provider_error
from .. import _common
from .._common import (
    PendingCall,
    Reassembler,
    _new_object,
    _new_tool_call,
    _set_deferred_make,
    completed_event,
    event_object,
    event_object_bounded,
    loads_bounded,
    loads_strict,
    wire_string,
)
from .._depth import MAX_EVENT_DEPTH, MAX_PARSED_ARGUMENTS_DEPTH, dumps
from .._parsed import PARSED_DATA, text_of

# finishReason values after which the turn is whole. Anything else is a refusal or a
# failure of generation, reported as a ProviderError with the reason as its code.
_NORMAL = frozenset({"STOP", "FINISH_REASON_UNSPECIFIED"})
_TRUNCATING = frozenset({"MAX_TOKENS"})

MAX_PARTIAL_PATH_STEPS = MAX_PARSED_ARGUMENTS_DEPTH
"""Bound on a ``partialArgs`` ``jsonPath``, in steps (keys and indexes after ``$``).

Each step is a level of the arguments, so the arguments' own depth limit is the natural
bound; a 2,000-step path built arguments that recursive code could not walk (issue 9)."""

MAX_PARTIAL_ARRAY_INDEX = 100_000
"""Bound on an array index in a ``partialArgs`` ``jsonPath``, in elements."""

MAX_PARTIAL_ARRAY_GAP = 16
"""How many slots past an array's end an index may land, in elements (the skipped ones
are ``null``).

Elements stream in order, so a real stream skips none; a bound keeps what one entry
costs proportional to its bytes ($.a[10000] padded 10,000 slots per 20 bytes, issue 9)."""

_PATH_STEP = re.compile(
    r"\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\[\"((?:[^\"\\]|\\.)*)\"\]"
)


class GeminiReassembler(Reassembler):
    """Reassembles ``functionCall`` parts from a Gemini stream."""

    dialect: ClassVar[Dialect] = "gemini"

    def __init__(self, *, rich: bool = True) -> None:
        super().__init__(rich=rich)
        self._streaming: PendingCall | None = None
        """The Vertex call whose arguments are being streamed, if any."""
        self._streamed_args: dict[str, Any] = {}
        self._continuing: dict[str, list[str]] = {}
        """JSON paths whose string value continues in the next partial argument, with
        the pieces so far (joined once, when the string ends)."""
        self._data = ""
        """The event being read (whole calls' raw text is made from it when asked)."""
        self._bound = 0
        """A bound on its nesting (``loads_bounded``)."""

    def on_event(self, event: ServerSentEvent) -> None:
        data = event.data
        if not data:
            return
        # Only functionCall parts carry arguments as objects, whose big integers must stay
        # exact; other events skip that check.
        try:
            if data is PARSED_DATA:
                # An SDK's event, already checked (dialects._parsed): no text to read a
                # call's raw arguments from again, so they are written from the object.
                payload = event_object(event, self.dialect)
                self._data, self._bound = "", MAX_EVENT_DEPTH
            elif "functionCall" in data:
                # Read here, not through event_object_bounded: its two frames per event
                # (callgrind, issue 16). What is not a JSON object within the limits
                # (too deep, null, not JSON, a run of 19 digits) gets that function's
                # answer or error. With the compiled scan, loads_bounded's own work is
                # done here too: one frame less per event (h38).
                scan = _common._c_json_scan
                try:
                    if scan is not None:
                        payload = _json.loads(data)
                        bound, long_run = scan(data)
                        if long_run or bound > MAX_EVENT_DEPTH:
                            payload = None
                    else:
                        payload, bound = loads_bounded(data)
                except ValueError:
                    payload = None
                if type(payload) is not dict:
                    payload, bound = event_object_bounded(event, self.dialect)
                self._data, self._bound = data, bound
            else:
                try:
                    payload = _json.loads(data)
                except ValueError:
                    payload = None
                if type(payload) is not dict:
                    payload = event_object(event, self.dialect)
        except MalformedStreamError:
            if self.stop_reason in _NORMAL:
                # After a normal finish (held to EOF, see _finish): what an OpenAI-style
                # proxy appends (``[DONE]``, junk) has nothing of the turn.
                return
            raise
        if payload is None:
            return
        if payload.get("error") or payload.get("type") == "error":
            # The second: an error in the Responses shape (code and message beside the
            # type) from a proxy; a GenerateContentResponse has no "type" (issue 29).
            raise error_from_payload(self.dialect, payload, text_of(event))
        feedback = payload.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            reason = str(feedback["blockReason"])
            raise provider_error(
                self.dialect, f"the prompt was blocked ({reason})", code=reason, body=payload
            )
        usage = payload.get("usageMetadata")
        if isinstance(usage, dict):
            self.usage = usage
        for where, candidate in enumerate(payload.get("candidates") or ()):
            if candidate.get("index", 0) == 0:
                self._candidate(candidate, where)

    def _candidate(self, candidate: dict[str, Any], where: int = 0) -> None:
        content = candidate.get("content")
        reason = candidate.get("finishReason")
        cut: list[PendingCall] = []
        if isinstance(content, dict):
            parts = content.get("parts") or ()
            last = len(parts) - 1
            limited = reason in _TRUNCATING
            for position, part in enumerate(parts):
                # The two parts nearly every event holds, read here (h38): visible text,
                # and a whole functionCall part released as a call with its raw text
                # made when read. Anything else (a thought, a streamed call, a part the
                # MAX_TOKENS limit may have cut, a name or id that is not a string,
                # args that are not an object or nest past the arguments' limit, an
                # SDK's parsed event) goes to _part, which says every rule.
                if type(part) is dict:
                    function_call = part.get("functionCall")
                    if function_call is None:
                        text = part.get("text")
                        if type(text) is str and text and not part.get("thought"):
                            self.text_parts.append(text)
                            if self.rich:
                                self.out.append(TextDelta(text=text))
                            continue
                    elif (
                        type(function_call) is dict
                        and self._streaming is None
                        and not function_call.get("willContinue")
                        and "partialArgs" not in function_call
                        and type(name := function_call.get("name")) is str
                        and ((call_id := function_call.get("id")) is None or type(call_id) is str)
                        and ((args := function_call.get("args")) is None or type(args) is dict)
                        and self._data
                        and self._bound <= MAX_PARSED_ARGUMENTS_DEPTH
                        and not (limited and position == last)
                    ):
                        # As _part and complete_object would release it, in this frame
                        # and completed_event's where those were seven a call (new_call,
                        # PendingCall, complete_object, _emit_call, the raw maker and its
                        # deferral, ToolCallCompleted: callgrind, h38).
                        index = self.next_index
                        self.next_index = index + 1
                        make = bind(_raw_text, self._data, where, position)
                        if _set_deferred_make is not None:
                            raw: Any = _new_object(_Deferred)
                            _set_deferred_make(raw, make)
                        else:
                            raw = _Deferred(make)
                        signature = part.get("thoughtSignature")
                        if self.rich:
                            self.out.append(
                                ToolCallStarted(index=index, call_id=call_id, name=name)
                            )
                        done = _new_tool_call(
                            name,
                            {} if args is None else args,
                            "gemini",
                            call_id,
                            index,
                            raw,
                            None,
                            signature if type(signature) is str else None,
                            None,
                        )
                        self.completed.append(done)
                        self.out.append(completed_event(done))
                        continue
                call = self._part(
                    part, release=not (limited and position == last), where=(where, position)
                )
                if call is not None:
                    cut.append(call)
        if isinstance(reason, str) and reason:
            self._finish(reason, candidate, cut)

    def _part(
        self, part: dict[str, Any], *, release: bool = True, where: tuple[int, int] = (0, 0)
    ) -> PendingCall | None:
        """Handle one part (``where``: its candidate's and its own position in the
        event); with ``release=False`` a whole call is returned, not released."""
        function_call = part.get("functionCall")
        if function_call is None:
            text = part.get("text")
            if isinstance(text, str):
                if part.get("thought"):
                    self.add_reasoning(text)
                else:
                    self.add_text(text)
            return None
        signature = part.get("thoughtSignature")
        streaming = self._streaming
        if (
            streaming is None
            and function_call.get("partialArgs")
            and not function_call.get("willContinue")
        ):
            # Streamed arguments belong to a streamed call: opened by a part with
            # ``willContinue``, continued by parts without a name. Arguments that come
            # outside one have no call to fill; releasing the part as a call with {}
            # (or naming a call "") would be a guess (issue 29).
            raise MalformedStreamError(
                "gemini: a functionCall part has partialArgs but neither opens a streamed "
                "call (willContinue) nor continues one",
                provider=self.dialect,
                data=dumps(function_call)[:200],
            )
        if streaming is not None and "name" not in function_call:
            # A continuation of the streamed call: more partial arguments, or its end.
            if streaming.thought_signature is None and isinstance(signature, str):
                streaming.thought_signature = signature
            self._partial_args(function_call.get("partialArgs") or ())
            if not function_call.get("willContinue"):
                if release:
                    self._close_streaming()
                else:
                    # Its end came in the MAX_TOKENS event's last part: it stays the
                    # streamed call, a partial call of the truncation, with what it has.
                    streaming.fragments = [dumps(self._streamed_args)]
            return None
        if streaming is not None:
            raise MalformedStreamError(
                "gemini: a new functionCall began before the streamed one ended",
                provider=self.dialect,
            )
        call_id = function_call.get("id")
        name = function_call.get("name")
        # wire_string's rule, its call skipped for the strings nearly every part has.
        call = self.new_call(
            call_id=call_id
            if call_id is None or type(call_id) is str
            else wire_string(call_id, "id", self.dialect),
            name=name if type(name) is str else wire_string(name, "name", self.dialect) or "",
        )
        if isinstance(signature, str):
            call.thought_signature = signature
        if function_call.get("willContinue"):
            self._streaming = call
            self._streamed_args = {}
            self._continuing = {}
            self.announce(call)
            self._partial_args(function_call.get("partialArgs") or ())
            return None
        args = function_call.get("args")
        call.value = {} if args is None else args
        if not release:
            call.fragments = [dumps(call.value)]
            return call
        if type(call.value) is dict:
            self.complete_object(
                call, call.value, self._bound, _raw_maker(self._data, where, call.value)
            )
        else:
            self.complete(call)
        return None

    def _partial_args(self, partial_args: Any) -> None:
        for partial in partial_args:
            path = partial.get("jsonPath")
            if not isinstance(path, str):
                raise ValueError("partialArgs entry without a jsonPath")
            if "stringValue" in partial:
                value: Any = partial["stringValue"]
                if not isinstance(value, str):
                    raise ValueError("partialArgs stringValue is not a string")
                pieces = self._continuing.get(path)
                if pieces is not None:
                    pieces.append(value)
                    if partial.get("willContinue"):
                        continue
                    del self._continuing[path]
                    value = "".join(pieces)
                elif partial.get("willContinue"):
                    self._continuing[path] = [value]
            elif "numberValue" in partial:
                value = partial["numberValue"]
            elif "boolValue" in partial:
                value = partial["boolValue"]
            elif "nullValue" in partial:
                value = None
            else:
                continue
            if type(value) is not str:
                self._continuing.pop(path, None)
            _set_path(self._streamed_args, path, value)
            if self.rich and self._streaming is not None:
                self.add_arguments(
                    self._streaming, dumps({path: partial.get("stringValue", value)})
                )

    def _close_streaming(self) -> None:
        call = self._streaming
        assert call is not None
        self._streaming = None
        if self._continuing:
            # A string value announced more pieces (willContinue) and its call closed
            # without them: what arrived is a cut value, and releasing it would pass a
            # guess off as the model's call (issue 29).
            paths = ", ".join(sorted(self._continuing))
            raise MalformedStreamError(
                f"gemini: the streamed call {call.name!r} closed with string values still "
                f"continuing ({paths[:200]})",
                provider=self.dialect,
            )
        call.value = self._streamed_args
        call.fragments = []
        call.has_args = False
        self.complete(call)

    def _finish(self, reason: str, candidate: dict[str, Any], cut: list[PendingCall]) -> None:
        self.stop_reason = reason
        pending = [self._streaming] if self._streaming is not None else []
        pending += cut
        if reason in _TRUNCATING:
            self.ended = True
            raise self.truncated("max_tokens", "generation stopped at MAX_TOKENS", pending)
        if reason not in _NORMAL:
            self.ended = True
            message = candidate.get("finishMessage") or f"generation stopped: {reason}"
            raise finish_reason_error(self.dialect, reason, str(message), body=candidate)
        # A normal finish is held until the end of the stream, where a Gemini turn ends (it
        # has no end marker of its own): proxies stamp ``finishReason: STOP`` on every
        # chunk (one-api#1408), and the parallel calls after the first were dropped.
        # Read to EOF, the later parts are the same turn's; a Vertex call still streaming
        # then is cut (finish() says so).

    def finish(self) -> list[StreamEvent]:
        if not self.ended:
            if self._streaming is not None:
                why = (
                    "the turn finished inside a streamed functionCall"
                    if self.stop_reason is not None
                    else "the stream ended inside a streamed functionCall"
                )
                raise self.truncated("eof", why, [self._streaming])
            if self.stop_reason is None:
                raise self.truncated("eof", "the stream ended without a finishReason")
            self.ended = True
            self.finished()
        out, self.out = self.out, []
        return out


def _raw_maker(data: str, where: tuple[int, int], args: Any) -> Callable[[], str]:
    """What makes a whole call's raw text when it is read: the encoding of its args as
    they arrived, read again from the event (``where``: the positions of its candidate
    and part), so a caller's changes to ``ToolCall.args`` never show in it. An event that
    came parsed (no ``data``) has its ``args`` written now, for the same reason."""
    if not data:
        raw = dumps({} if args is None else args)
        return lambda: raw
    return bind(_raw_text, data, where[0], where[1])


def _raw_text(data: str, candidate: int, part: int) -> str:
    """The encoding of the args of part ``part`` of candidate ``candidate`` of the event
    ``data``, as they arrived (a ``partial`` of this is a whole call's raw maker: no
    closure and its cells per call)."""
    args = loads_strict(data)["candidates"][candidate]["content"]["parts"][part][
        "functionCall"
    ].get("args")
    return dumps({} if args is None else args)


def _limit(name: str, limit: int, size: int, unit: str, path: str) -> LimitExceededError:
    return LimitExceededError(
        f"gemini: a partialArgs jsonPath crossed {name}: {size}{unit}, over {limit}",
        limit_name=name,
        limit=limit,
        size=size,
        provider="gemini",
        data=path,
    )


def _steps(path: str) -> list[str | int]:
    """Split a JSON path such as ``$.a.b[0]['c d']`` into keys and indexes.

    Raises:
        LimitExceededError: more than ``MAX_PARTIAL_PATH_STEPS`` steps, or an index past
            ``MAX_PARTIAL_ARRAY_INDEX``.
        ValueError: not a path this reader knows.
    """
    if not path.startswith("$"):
        raise ValueError(f"unsupported jsonPath {path[:100]!r}")
    steps: list[str | int] = []
    position = 1
    while position < len(path):
        if len(steps) == MAX_PARTIAL_PATH_STEPS:
            raise _limit(
                "MAX_PARTIAL_PATH_STEPS", MAX_PARTIAL_PATH_STEPS, len(steps) + 1, " steps", path
            )
        match = _PATH_STEP.match(path, position)
        if match is None:
            raise ValueError(f"unsupported jsonPath {path[:100]!r}")
        key, number, single, double = match.groups()
        if number is not None:
            # Compared as text first: int() of a 5,000-digit index would itself raise.
            if len(number) > 18 or int(number) > MAX_PARTIAL_ARRAY_INDEX:
                size = int(number) if len(number) <= 18 else 10**18
                raise _limit("MAX_PARTIAL_ARRAY_INDEX", MAX_PARTIAL_ARRAY_INDEX, size, "", path)
            steps.append(int(number))
        else:
            steps.append(key if key is not None else (single if single is not None else double))
        position = match.end()
    return steps


def _set_path(root: dict[str, Any], path: str, value: Any) -> None:
    steps = _steps(path)
    if not steps:
        raise ValueError("a partial argument cannot replace the whole arguments object")
    node: Any = root
    for step, following in itertools.pairwise(steps):
        child = _child(node, step)
        if child is None:
            child = [] if isinstance(following, int) else {}
            _assign(node, step, child)
        node = child
    _assign(node, steps[-1], value)


def _child(node: Any, step: str | int) -> Any:
    if isinstance(step, int):
        return node[step] if step < len(node) else None
    return node.get(step)


def _assign(node: Any, step: str | int, value: Any) -> None:
    if isinstance(step, int):
        if step > len(node) + MAX_PARTIAL_ARRAY_GAP:
            raise LimitExceededError(
                f"gemini: a partialArgs index skips {step - len(node)} elements, over "
                f"MAX_PARTIAL_ARRAY_GAP={MAX_PARTIAL_ARRAY_GAP}",
                limit_name="MAX_PARTIAL_ARRAY_GAP",
                limit=MAX_PARTIAL_ARRAY_GAP,
                size=step - len(node),
                provider="gemini",
            )
        if step >= len(node):
            node.extend([None] * (step + 1 - len(node)))
    node[step] = value
