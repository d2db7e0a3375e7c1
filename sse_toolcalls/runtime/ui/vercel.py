"""A run as the Vercel AI SDK's UI message stream (``useChat``, ``readUIMessageStream``).

The protocol (AI SDK 5 and 6, "UI message stream protocol v1") is a Server-Sent Events
stream of JSON chunks, one per ``data:`` field, ended by ``data: [DONE]``, served with
the header ``x-vercel-ai-ui-message-stream: v1``. One response is one assistant message:
``start``, then steps (``start-step`` ... ``finish-step``) holding text, reasoning and
tool parts, then ``finish``.

How our events become chunks (:func:`ui_message_chunks`):

- ``RequestStarted`` opens a step; text and reasoning open a part on their first delta
  and close it when something else starts.
- A tool call is ``tool-input-start``, its argument text as ``tool-input-delta`` as it
  streams (Gemini sends none: its call arrives whole), ``tool-input-available`` with the
  strictly parsed arguments (``tool-input-error`` when they do not parse), then its
  result under the same ``toolCallId``: ``tool-output-available``, ``tool-output-error``
  (an error result) or ``tool-output-denied`` (refused by the policy or declined by the
  person). A call without a provider id is named ``call-<step>-<index>``.
- ``ApprovalRequested`` is AI SDK 6's ``tool-approval-request`` per pending call, its
  ``approvalId`` ``<pause token>.<approval id>``; the browser answers it in the tool
  part (``state: "approval-responded"``) of the messages it posts next.
- A retry voids what its attempt showed: the protocol cannot take a part back, so the
  open parts are closed, the attempt's unfinished calls get ``tool-output-error``
  (``"void: the request was retried"``), a ``data-retry`` part ends the step and the
  next attempt opens a new one. Every part of a step that ends with a ``data-retry``
  part is void (the UI's parts of text and reasoning carry no id, so the step is the
  unit): a UI hides them. Its ``voidedToolCallIds`` name the attempt's calls; a call
  of the next attempt that reuses one of those ids is renamed ``<id>~<n>``, so that it
  never updates the voided part.
- A fallback message is a text part of its own; an exception is an ``error`` chunk.
- ``finish`` carries the message metadata: usage, steps, requests, retries, the
  fallback reason and whether the run paused.

The way in (:func:`parse_chat_request`, :func:`vercel_response`): the body ``useChat``
posts, ``{id, messages, trigger, messageId}``. The chat ``id`` is the run's
``conversation_id``; the history comes from the agent's store, never from the browser
(whose assistant turns and tool results are not to be trusted). A new user message runs
under a request id derived from the chat id and that message's id, so the same message
posted again (a resubmission, ``regenerate-message``) replays its writes instead of
running them again. An assistant message whose tool parts answer approvals resumes the
paused run; its :class:`~..approval.ApprovalState` never leaves the server (a
:class:`PausedRuns` keeps it, by its token), and the ledger takes its decision once,
so the same answer posted twice runs an approved write once.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Final, Protocol
from weakref import WeakKeyDictionary

from ...calls import ReasoningDelta, TextDelta, ToolCall, ToolCallCompleted, ToolCallStarted
from ...errors import SSEToolCallsError
from ..approval import ApprovalState, approval_ids, pending_ids
from ..events import (
    AgentEvent,
    ApprovalRequested,
    FallbackShown,
    RequestStarted,
    RetryScheduled,
    RunFinished,
    ToolArgumentsPreview,
    ToolCallRefused,
    ToolCallResult,
)
from ..usage import Usage
from .paused import MAX_BODY_BYTES, MAX_PAUSED_RUNS
from .paused import PausedRuns as BoundedPausedRuns
from .sse_out import SSE_HEADERS, sse_event

if TYPE_CHECKING:
    from ..agent import Agent

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_PAUSED_RUNS",
    "VERCEL_HEADERS",
    "VOID_TEXT",
    "ChatRequest",
    "InMemoryPausedRuns",
    "PausedRuns",
    "UIRequestError",
    "parse_chat_request",
    "request_id_for",
    "tool_call_id",
    "ui_message_chunks",
    "vercel_response",
]

VERCEL_HEADERS: Final[dict[str, str]] = {**SSE_HEADERS, "x-vercel-ai-ui-message-stream": "v1"}
"""The response headers: an event stream, marked as the UI message stream, version 1
(the AI SDK's ``UI_MESSAGE_STREAM_HEADERS``)."""

VOID_TEXT: Final = "void: the request was retried"
"""The ``errorText`` of a call shown by an attempt that a retry voided."""


class UIRequestError(SSEToolCallsError):
    """A request body is not one ``useChat`` posts, or names approvals that do not
    match a paused run (an HTTP 400)."""


# --------------------------------------------------------------------------------------
# Out: events to chunks.


def _json(value: Any) -> str:
    """Strict JSON (the browser's ``JSON.parse`` reads no ``NaN``), never a crash.

    The runtime's results are JSON already (non-finite numbers as ``null``); should a
    value still hold a non-finite number or a cycle, a chunk's fields that are not plain
    go out as their text rather than break the whole stream."""
    try:
        return json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str
        )
    except (ValueError, RecursionError):
        if not isinstance(value, dict):
            return json.dumps(str(value), ensure_ascii=False)
        plain = {
            key: item if item is None or isinstance(item, str | int | bool) else str(item)
            for key, item in value.items()
        }
        return json.dumps(plain, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _usage(usage: Usage) -> dict[str, int]:
    # camelCase, as the SDK's own LanguageModelUsage names them.
    names = {
        "input_tokens": "inputTokens",
        "output_tokens": "outputTokens",
        "cache_read_tokens": "cachedInputTokens",
        "cache_write_tokens": "cacheWriteTokens",
        "reasoning_tokens": "reasoningTokens",
        "turns": "turns",
    }
    out: dict[str, int] = {}
    for f in fields(Usage):
        value = getattr(usage, f.name)
        if value is not None:
            out[names.get(f.name, f.name)] = value
    return out


def _output_text(content: Any) -> str:
    return content if isinstance(content, str) else _json(content)


def tool_call_id(call_id: str | None, step: int, index: int) -> str:
    """The ``toolCallId`` of a call: its provider id, else ``call-<step>-<index>``."""
    return call_id if call_id else f"call-{step}-{index}"


class _Chunker:
    """The mapping's state: the open parts, the step's calls, the attempt's part ids."""

    def __init__(self, *, message_id: str | None, step: int, resumed: bool) -> None:
        self.message_id = message_id
        self.step = step
        self.resumed_step = step if resumed else None
        """The paused step a resume's first results answer: its calls were shown by the
        stream that paused."""
        self.announced: set[str] = set()
        self.in_step = False
        self.parts = 0
        self.text_part: str | None = None
        self.reasoning_part: str | None = None
        self.calls: dict[int, str] = {}
        """toolCallId by the call's index in the current step."""
        self.unfinished: dict[str, str] = {}
        """toolCallId -> tool name of calls shown whose input is not yet available."""
        self.shown: list[str] = []
        """toolCallIds the current attempt showed."""
        self.voided: set[str] = set()
        """toolCallIds shown by attempts a retry voided."""
        self.denied: set[str] = set()
        self.retries = 0

    def _part(self, kind: str) -> str:
        self.parts += 1
        return f"{kind}-{self.parts}"

    def close(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        if self.text_part is not None:
            out.append({"type": "text-end", "id": self.text_part})
            self.text_part = None
        if self.reasoning_part is not None:
            out.append({"type": "reasoning-end", "id": self.reasoning_part})
            self.reasoning_part = None
        return out

    def end_step(self) -> list[dict[str, Any]]:
        out = self.close()
        if self.in_step:
            out.append({"type": "finish-step"})
            self.in_step = False
        return out

    def open_step(self) -> list[dict[str, Any]]:
        if self.in_step:
            return []
        self.in_step = True
        return [{"type": "start-step"}]

    def call_id(self, call_id: str | None, index: int) -> str:
        known = self.calls.get(index)
        if known is not None:
            return known
        made = base = tool_call_id(call_id, self.step, index)
        renamed = 0
        while made in self.voided:
            renamed += 1
            made = f"{base}~{renamed}"
        self.calls[index] = made
        return made

    def result_id(self, call: ToolCall) -> str:
        # After a resume the step's map is empty: the call's own id names it then.
        return self.calls.get(call.index) or tool_call_id(call.call_id, self.step, call.index)

    def chunks(self, event: AgentEvent) -> list[dict[str, Any]]:
        handler = _HANDLERS.get(type(event))
        # An event kind this version does not know shows nothing (STYLE 7).
        return handler(self, event) if handler is not None else []

    def request_started(self, event: RequestStarted) -> list[dict[str, Any]]:
        out = self.end_step()
        self.step, self.calls, self.shown = event.step, {}, []
        return out + self.open_step()

    def text(self, event: TextDelta) -> list[dict[str, Any]]:
        if not event.text:
            return []
        out = self.open_step()
        if self.reasoning_part is not None:
            out.append({"type": "reasoning-end", "id": self.reasoning_part})
            self.reasoning_part = None
        if self.text_part is None:
            self.text_part = self._part("text")
            out.append({"type": "text-start", "id": self.text_part})
        out.append({"type": "text-delta", "id": self.text_part, "delta": event.text})
        return out

    def reasoning(self, event: ReasoningDelta) -> list[dict[str, Any]]:
        if not event.text:
            return []
        out = self.open_step()
        if self.text_part is not None:
            out.append({"type": "text-end", "id": self.text_part})
            self.text_part = None
        if self.reasoning_part is None:
            self.reasoning_part = self._part("reasoning")
            out.append({"type": "reasoning-start", "id": self.reasoning_part})
        out.append({"type": "reasoning-delta", "id": self.reasoning_part, "delta": event.text})
        return out

    def call_started(self, event: ToolCallStarted) -> list[dict[str, Any]]:
        out = self.open_step() + self.close()
        ident = self.call_id(event.call_id, event.index)
        self.shown.append(ident)
        self.announced.add(ident)
        self.unfinished[ident] = event.name
        out.append({"type": "tool-input-start", "toolCallId": ident, "toolName": event.name})
        return out

    def preview(self, event: ToolArgumentsPreview) -> list[dict[str, Any]]:
        ident = self.calls.get(event.index)
        if ident is None or not event.delta:
            return []
        return [{"type": "tool-input-delta", "toolCallId": ident, "inputTextDelta": event.delta}]

    def call_completed(self, event: ToolCallCompleted) -> list[dict[str, Any]]:
        out = self.open_step() + self.close()
        call = event.call
        ident = self.calls.get(call.index)
        if ident is None:
            # A dialect that sends a call whole may announce it only complete.
            ident = self.call_id(call.call_id, call.index)
            self.shown.append(ident)
            out.append({"type": "tool-input-start", "toolCallId": ident, "toolName": call.name})
        self.unfinished.pop(ident, None)
        self.announced.add(ident)
        if call.arguments_error is not None:
            out.append(
                {
                    "type": "tool-input-error",
                    "toolCallId": ident,
                    "toolName": call.name,
                    "input": call.raw_arguments,
                    "errorText": call.arguments_error,
                }
            )
        else:
            out.append(
                {
                    "type": "tool-input-available",
                    "toolCallId": ident,
                    "toolName": call.name,
                    "input": call.args,
                }
            )
        return out

    def announce(self, call: ToolCall) -> tuple[str, list[dict[str, Any]]]:
        """The call's id, and its input first if this stream never showed the call: the
        SDK refuses an output for a call it does not know (a client whose stream gives
        only the finished turn sends no call events)."""
        ident = self.result_id(call)
        if ident in self.announced or self.step == self.resumed_step:
            return ident, []
        self.announced.add(ident)
        return ident, [
            *self.open_step(),
            {
                "type": "tool-input-available",
                "toolCallId": ident,
                "toolName": call.name,
                "input": call.args,
            },
        ]

    def refused(self, event: ToolCallRefused) -> list[dict[str, Any]]:
        ident, out = self.announce(event.call)
        self.denied.add(ident)
        return [*out, {"type": "tool-output-denied", "toolCallId": ident}]

    def result(self, event: ToolCallResult) -> list[dict[str, Any]]:
        ident, out = self.announce(event.call)
        if ident in self.denied:
            return out  # its refusal was already shown
        if event.outcome == "declined":
            return [*out, {"type": "tool-output-denied", "toolCallId": ident}]
        if event.result.is_error:
            text = _output_text(event.result.content)
            return [*out, {"type": "tool-output-error", "toolCallId": ident, "errorText": text}]
        return [
            *out,
            {"type": "tool-output-available", "toolCallId": ident, "output": event.result.content},
        ]

    def retry(self, event: RetryScheduled) -> list[dict[str, Any]]:
        out = self.close()
        for ident in self.unfinished:
            out.append({"type": "tool-output-error", "toolCallId": ident, "errorText": VOID_TEXT})
        self.unfinished.clear()
        self.retries += 1
        self.voided.update(self.shown)
        data = {"attempt": event.attempt, "delay": event.delay, "voidedToolCallIds": self.shown}
        out.append({"type": "data-retry", "id": f"retry-{self.retries}", "data": data})
        out += self.end_step()
        self.shown = []
        return out

    def fallback(self, event: FallbackShown) -> list[dict[str, Any]]:
        out = self.open_step() + self.close()
        part = self._part("text")
        return [
            *out,
            {"type": "text-start", "id": part},
            {"type": "text-delta", "id": part, "delta": event.text},
            {"type": "text-end", "id": part},
        ]

    def approval(self, event: ApprovalRequested) -> list[dict[str, Any]]:
        out = self.close()
        calls = dict(zip(approval_ids(event.state.calls), event.state.calls, strict=True))
        for name in pending_ids(event.state):
            out.append(
                {
                    "type": "tool-approval-request",
                    "approvalId": f"{event.state.token}.{name}",
                    "toolCallId": self.result_id(calls[name]),
                }
            )
        return out

    def finished(self, event: RunFinished) -> list[dict[str, Any]]:
        out = self.end_step()
        reply = event.reply
        reason = (
            "tool-calls" if reply.pending_approvals else "other" if reply.is_fallback else "stop"
        )
        metadata = {
            "usage": _usage(reply.usage),
            "steps": reply.steps,
            "requests": reply.requests,
            "retries": reply.retries,
            "fallback": reply.reason,
            "pendingApprovals": len(reply.pending_approvals),
        }
        out.append({"type": "finish", "finishReason": reason, "messageMetadata": metadata})
        return out


_HANDLERS: dict[type[Any], Callable[[_Chunker, Any], list[dict[str, Any]]]] = {
    RequestStarted: _Chunker.request_started,
    TextDelta: _Chunker.text,
    ReasoningDelta: _Chunker.reasoning,
    ToolCallStarted: _Chunker.call_started,
    ToolArgumentsPreview: _Chunker.preview,
    ToolCallCompleted: _Chunker.call_completed,
    ToolCallRefused: _Chunker.refused,
    ToolCallResult: _Chunker.result,
    RetryScheduled: _Chunker.retry,
    FallbackShown: _Chunker.fallback,
    ApprovalRequested: _Chunker.approval,
    RunFinished: _Chunker.finished,
}
"""Each event kind's chunks (STYLE 3: the mapping is data)."""


async def ui_message_chunks(
    events: AsyncIterator[AgentEvent],
    *,
    message_id: str | None = None,
    step: int = 1,
    resumed: bool = False,
) -> AsyncGenerator[dict[str, Any], None]:
    """The UI message stream's chunks for a run's events, ``start`` to ``finish``.

    Args:
        events: what :meth:`~..agent.Agent.run_stream` (or ``resume_stream``) yields.
        message_id: the assistant message's id (``start``'s ``messageId``); on a resume,
            the id of the message being continued.
        step: the step a resumed run's first results belong to (the paused turn + 1).
        resumed: the events are ``resume_stream``'s, continuing the message whose
            stream paused (its calls were shown there).

    Yields:
        Chunk dicts, as :data:`UIMessageChunk` in the ``ai`` package types them. An
        exception from ``events`` ends the stream with an ``error`` chunk (ours, by its
        message) after the parts are closed, then propagates.
    """
    chunker = _Chunker(message_id=message_id, step=step, resumed=resumed)
    start: dict[str, Any] = {"type": "start"}
    if message_id is not None:
        start["messageId"] = message_id
    yield start
    try:
        async for event in events:
            for chunk in chunker.chunks(event):
                yield chunk
    except SSEToolCallsError as exc:
        for chunk in chunker.end_step():
            yield chunk
        yield {"type": "error", "errorText": str(exc)}
        raise


# --------------------------------------------------------------------------------------
# In: the body useChat posts.


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatRequest:
    """What a ``useChat`` body asks for: a new message, or answers to approvals."""

    chat_id: str
    """The chat's id: the run's ``conversation_id``."""

    text: str | None
    """The new user message's text, or ``None`` for an approval answer."""

    request_id: str
    """The run's request id (derived from the chat and the user message's ids)."""

    message_id: str | None
    """The assistant message continued (approval answers), else ``None``."""

    answers: tuple[tuple[str, bool, str | None], ...] = ()
    """``(approvalId, approved, reason)`` of each approval answered."""


def request_id_for(chat_id: str, message_id: str) -> str:
    """The request id of a user message: the same message, the same id (and writes)."""
    text = f"sse_toolcalls vercel v1\x00{chat_id}\x00{message_id}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise UIRequestError(f"{what} must be a non-empty string")
    return value


def parse_chat_request(body: bytes | Mapping[str, Any]) -> ChatRequest:
    """Read the body ``useChat`` posts.

    Raises:
        UIRequestError: not JSON, too large, or not ``{id, messages: UIMessage[]}``
            ending with a user message or an assistant message answering approvals.
    """
    if isinstance(body, bytes | bytearray):
        if len(body) > MAX_BODY_BYTES:
            raise UIRequestError(f"the body is larger than {MAX_BODY_BYTES} bytes")
        try:
            data = json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise UIRequestError(f"the body is not JSON: {exc}") from exc
    else:
        data = body
    if not isinstance(data, Mapping):
        raise UIRequestError("the body must be a JSON object")
    chat_id = _str(data.get("id"), "id")
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        raise UIRequestError("messages must be a non-empty list of UIMessage")
    last = messages[-1]
    if not isinstance(last, Mapping) or not isinstance(last.get("parts"), list):
        raise UIRequestError("the last message must be a UIMessage with parts")
    role = last.get("role")
    message_id = _str(last.get("id"), "the last message's id")
    parts = [p for p in last["parts"] if isinstance(p, Mapping)]
    if role == "user":
        text = "".join(
            p["text"] for p in parts if p.get("type") == "text" and isinstance(p.get("text"), str)
        )
        if not text:
            raise UIRequestError("the user message has no text part")
        return ChatRequest(
            chat_id=chat_id,
            text=text,
            request_id=request_id_for(chat_id, message_id),
            message_id=None,
        )
    if role == "assistant":
        answers: list[tuple[str, bool, str | None]] = []
        for part in parts:
            approval = part.get("approval")
            if part.get("state") != "approval-responded" or not isinstance(approval, Mapping):
                continue
            approved = approval.get("approved")
            if not isinstance(approved, bool):
                raise UIRequestError("an approval answer's approved must be true or false")
            reason = approval.get("reason")
            answers.append(
                (
                    _str(approval.get("id"), "an approval's id"),
                    approved,
                    reason if isinstance(reason, str) else None,
                )
            )
        if not answers:
            raise UIRequestError("the last message is an assistant's without approval answers")
        return ChatRequest(
            chat_id=chat_id,
            text=None,
            request_id="",
            message_id=message_id,
            answers=tuple(answers),
        )
    raise UIRequestError(f"the last message's role must be user or assistant, not {role!r}")


class PausedRuns(Protocol):
    """Where paused runs' states wait for their answers, by pause token, server-side:
    a state never goes to the browser, so the browser cannot edit it (the ledger still
    checks it on resume). Several workers share one (a table of their own)."""

    async def put(self, state: ApprovalState) -> None:
        """Keep ``state`` under its token."""

    async def get(self, token: str) -> ApprovalState | None:
        """The state of ``token``, or ``None``."""


class InMemoryPausedRuns:
    """A :class:`PausedRuns` in this process, at most :data:`MAX_PAUSED_RUNS` (the
    bounded keeper both protocols use, :class:`.paused.PausedRuns`, behind this
    protocol's async methods)."""

    def __init__(self, max_runs: int = MAX_PAUSED_RUNS) -> None:
        self._kept = BoundedPausedRuns(limit=max_runs)

    async def put(self, state: ApprovalState) -> None:
        """Keep ``state``; drop the oldest past the limit."""
        self._kept.put(state)

    async def get(self, token: str) -> ApprovalState | None:
        """The state of ``token``, or ``None``."""
        return self._kept.get(token)


_DEFAULT_PAUSED: WeakKeyDictionary[Any, InMemoryPausedRuns] = WeakKeyDictionary()


def _paused_for(agent: Agent) -> InMemoryPausedRuns:
    found = _DEFAULT_PAUSED.get(agent)
    if found is None:
        found = _DEFAULT_PAUSED[agent] = InMemoryPausedRuns()
    return found


async def _resume_args(
    request: ChatRequest, paused: PausedRuns
) -> tuple[ApprovalState, list[str], list[str]]:
    tokens = {answer[0].partition(".")[0] for answer in request.answers}
    if len(tokens) != 1:
        raise UIRequestError("the approval answers must all answer one paused run")
    [token] = tokens
    state = await paused.get(token)
    # A token names a pause of this chat only: an answer posted in another chat (which
    # saw the token somehow) must not decide it.
    if state is None or state.conversation_id != request.chat_id:
        raise UIRequestError("no paused run of this chat has these approvals (expired or unknown)")
    approve: list[str] = []
    deny: list[str] = []
    for approval, approved, _reason in request.answers:
        (approve if approved else deny).append(approval.partition(".")[2])
    if sorted(approve + deny) != sorted(pending_ids(state)):
        raise UIRequestError("the approval answers must answer each pending call once")
    return state, approve, deny


async def vercel_response(
    agent: Agent,
    body: bytes | Mapping[str, Any],
    *,
    paused: PausedRuns | None = None,
    deps: Any = None,
) -> tuple[int, dict[str, str], AsyncGenerator[bytes, None]]:
    """The response to a ``useChat`` POST: ``(status, headers, body chunks)``.

    The run starts when the body is iterated, and stops if the iteration is closed
    early (``aclose``, as a server does when the browser goes away). A bad body is a
    400 with a JSON ``{"error": ...}``. Served by any framework, e.g. Starlette::

        async def chat(request):
            status, headers, body = await vercel_response(agent, await request.body())
            return StreamingResponse(body, status_code=status, headers=headers)

    Args:
        agent: the agent that runs.
        body: the request body, raw or parsed.
        paused: where paused runs wait (the agent's own in-memory one by default).
        deps: dependencies for tools' contexts.
    """
    paused = paused if paused is not None else _paused_for(agent)
    try:
        request = parse_chat_request(body)
        resume = await _resume_args(request, paused) if request.text is None else None
    except UIRequestError as exc:
        return 400, {"content-type": "application/json"}, _one(_json({"error": str(exc)}))
    return 200, dict(VERCEL_HEADERS), _stream(agent, request, resume, paused, deps)


async def _one(text: str) -> AsyncGenerator[bytes, None]:
    yield text.encode("utf-8")


async def _stream(
    agent: Agent,
    request: ChatRequest,
    resume: tuple[ApprovalState, list[str], list[str]] | None,
    paused: PausedRuns,
    deps: Any,
) -> AsyncGenerator[bytes, None]:
    message_id = request.message_id or f"msg-{uuid.uuid4().hex}"
    sequence = 0

    def frame(chunk: dict[str, Any] | str) -> bytes:
        nonlocal sequence
        sequence += 1
        # Run-scoped ids: the message and the chunk's place in it (for Last-Event-ID).
        data = chunk if isinstance(chunk, str) else _json(chunk)
        return sse_event(data, id=f"{message_id}:{sequence}")

    async def kept(events: AsyncIterator[AgentEvent]) -> AsyncGenerator[AgentEvent, None]:
        async for event in events:
            if isinstance(event, ApprovalRequested):
                await paused.put(event.state)
            yield event

    try:
        if resume is None:
            assert request.text is not None
            run = agent.run_stream(
                request.text,
                conversation_id=request.chat_id,
                request_id=request.request_id,
                deps=deps,
            )
            step = 1
        else:
            state, approve, deny = resume
            run = agent.resume_stream(state, approve=approve, deny=deny, deps=deps)
            step = state.turn + 1
        async with (
            run as events,
            aclosing(kept(events)) as watched,
            aclosing(
                ui_message_chunks(
                    watched, message_id=message_id, step=step, resumed=resume is not None
                )
            ) as chunks,
        ):
            async for chunk in chunks:
                yield frame(chunk)
    except BaseExceptionGroup as group:
        # The server closed the body early (the browser went away): the run's task
        # group, left at our yield, reports the GeneratorExit inside a group. Closing
        # is what was asked; anything else in the group is not ours to hide.
        if group.split(GeneratorExit)[1] is None:
            return
        raise
    except SSEToolCallsError as exc:
        if sequence == 0:
            # Refused on entering (a decided approval, a misuse): nothing was shown.
            yield frame({"type": "start", "messageId": message_id})
            yield frame({"type": "error", "errorText": str(exc)})
        # Else ui_message_chunks already wrote the error chunk.
    # "The stream ends with data: [DONE]" (the protocol's own end marker).
    yield frame("[DONE]")
