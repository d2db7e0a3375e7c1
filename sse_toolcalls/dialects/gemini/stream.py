"""Google Gemini ``streamGenerateContent?alt=sse`` streams (AI Studio and Vertex AI).

Every event is a whole ``GenerateContentResponse``: ``candidates[0].content.parts``
hold text parts and ``functionCall`` parts. A ``functionCall`` part is a complete call
(several may share an event, the same name may come twice: each part is its own call),
with an optional ``id`` that must be echoed back and a part-level ``thoughtSignature``
that must be sent back with the call. The turn ends with the candidate's
``finishReason``.

Vertex can also stream arguments (``streamFunctionCallArguments``): a part
``{"name", "willContinue": true}`` opens a call, parts with ``partialArgs`` (a JSON path
and a typed value, strings continued across parts while ``willContinue``) fill it, and
a part without ``willContinue`` closes it.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, ClassVar

from ...calls import Dialect, StreamEvent
from ...errors import MalformedStreamError
from ...sse import ServerSentEvent
from .._common import (
    PendingCall,
    Reassembler,
    dumps,
    error_from_payload,
    event_object,
    provider_error,
)

# finishReason values after which the turn is whole. Anything else is a refusal or a
# failure of generation, reported as a ProviderError with the reason as its code.
_NORMAL = frozenset({"STOP", "FINISH_REASON_UNSPECIFIED"})
_TRUNCATING = frozenset({"MAX_TOKENS"})
# Reasons where asking again may well succeed (a malformed or unexpected call).
_RETRYABLE_REASONS = frozenset({"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "OTHER"})

_PATH_STEP = re.compile(
    r"\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\[\"((?:[^\"\\]|\\.)*)\"\]"
)


class GeminiReassembler(Reassembler):
    """Reassembles ``functionCall`` parts from a Gemini stream."""

    provider: ClassVar[Dialect] = "gemini"

    def __init__(self, *, rich: bool = True) -> None:
        super().__init__(rich=rich)
        self._streaming: PendingCall | None = None
        """The Vertex call whose arguments are being streamed, if any."""
        self._streamed_args: dict[str, Any] = {}
        self._continuing: set[str] = set()
        """JSON paths whose string value continues in the next partial argument."""

    def dispatch(self, event: ServerSentEvent) -> None:
        data = event.data
        if not data:
            return
        # Only functionCall parts carry arguments as objects, whose big integers must stay
        # exact; other events skip that check.
        payload = event_object(event, self.provider, exact="functionCall" in data)
        if payload is None:
            return
        if payload.get("error"):
            raise error_from_payload(self.provider, payload, data)
        feedback = payload.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            reason = str(feedback["blockReason"])
            raise provider_error(
                self.provider, f"the prompt was blocked ({reason})", code=reason, body=payload
            )
        usage = payload.get("usageMetadata")
        if isinstance(usage, dict):
            self.usage = usage
        for candidate in payload.get("candidates") or ():
            if candidate.get("index", 0) == 0:
                self._candidate(candidate)

    def _candidate(self, candidate: dict[str, Any]) -> None:
        content = candidate.get("content")
        if isinstance(content, dict):
            for part in content.get("parts") or ():
                self._part(part)
        reason = candidate.get("finishReason")
        if isinstance(reason, str) and reason:
            self._finish(reason, candidate)

    def _part(self, part: dict[str, Any]) -> None:
        function_call = part.get("functionCall")
        if function_call is None:
            text = part.get("text")
            if isinstance(text, str):
                if part.get("thought"):
                    self.add_reasoning(text)
                else:
                    self.add_text(text)
            return
        signature = part.get("thoughtSignature")
        streaming = self._streaming
        if streaming is not None and "name" not in function_call:
            # A continuation of the streamed call: more partial arguments, or its end.
            if streaming.thought_signature is None and isinstance(signature, str):
                streaming.thought_signature = signature
            self._partial_args(function_call.get("partialArgs") or ())
            if not function_call.get("willContinue"):
                self._close_streaming()
            return
        if streaming is not None:
            raise MalformedStreamError(
                "gemini: a new functionCall began before the streamed one ended",
                provider=self.provider,
            )
        call = self.new_call(call_id=function_call.get("id"), name=function_call.get("name") or "")
        if isinstance(signature, str):
            call.thought_signature = signature
        if function_call.get("willContinue"):
            self._streaming = call
            self._streamed_args = {}
            self._continuing = set()
            self.announce(call)
            self._partial_args(function_call.get("partialArgs") or ())
            return
        args = function_call.get("args")
        call.value = {} if args is None else args
        self.complete(call)

    def _partial_args(self, partial_args: Any) -> None:
        for partial in partial_args:
            path = partial.get("jsonPath")
            if not isinstance(path, str):
                raise ValueError("partialArgs entry without a jsonPath")
            if "stringValue" in partial:
                value: Any = partial["stringValue"]
                if path in self._continuing:
                    value = _get_path(self._streamed_args, path) + value
            elif "numberValue" in partial:
                value = partial["numberValue"]
            elif "boolValue" in partial:
                value = partial["boolValue"]
            elif "nullValue" in partial:
                value = None
            else:
                continue
            _set_path(self._streamed_args, path, value)
            if partial.get("willContinue"):
                self._continuing.add(path)
            else:
                self._continuing.discard(path)
            if self.rich and self._streaming is not None:
                self.add_arguments(
                    self._streaming, dumps({path: partial.get("stringValue", value)})
                )

    def _close_streaming(self) -> None:
        call = self._streaming
        assert call is not None
        self._streaming = None
        call.value = self._streamed_args
        call.fragments = []
        call.has_args = False
        self.complete(call)

    def _finish(self, reason: str, candidate: dict[str, Any]) -> None:
        self.ended = True
        self.stop_reason = reason
        pending = [self._streaming] if self._streaming is not None else []
        if reason in _TRUNCATING:
            raise self.truncated("max_tokens", "generation stopped at MAX_TOKENS", pending)
        if reason not in _NORMAL:
            message = candidate.get("finishMessage") or f"generation stopped: {reason}"
            error = provider_error(self.provider, str(message), code=reason, body=candidate)
            error.retryable = reason in _RETRYABLE_REASONS
            raise error
        if pending:
            raise self.truncated("eof", "the turn finished inside a streamed functionCall", pending)
        self.finished()

    def finish(self) -> list[StreamEvent]:
        if not self.ended:
            pending = [self._streaming] if self._streaming is not None else []
            raise self.truncated("eof", "the stream ended without a finishReason", pending)
        out, self.out = self.out, []
        return out


def _steps(path: str) -> list[str | int]:
    """Split a JSON path such as ``$.a.b[0]['c d']`` into keys and indexes."""
    if not path.startswith("$"):
        raise ValueError(f"unsupported jsonPath {path!r}")
    steps: list[str | int] = []
    position = 1
    while position < len(path):
        match = _PATH_STEP.match(path, position)
        if match is None:
            raise ValueError(f"unsupported jsonPath {path!r}")
        key, number, single, double = match.groups()
        if number is not None:
            steps.append(int(number))
        else:
            steps.append(key if key is not None else (single if single is not None else double))
        position = match.end()
    return steps


def _get_path(root: dict[str, Any], path: str) -> Any:
    node: Any = root
    for step in _steps(path):
        node = node[step]
    return node


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
        if step > len(node) + 10_000:
            raise ValueError("partial argument index out of range")
        while len(node) <= step:
            node.append(None)
    node[step] = value
