"""AG-UI out of :meth:`~sse_toolcalls.runtime.Agent.run_stream` (issue 32).

AG-UI (``@ag-ui/client``, protocol 1.0) is a stream of JSON events, one per SSE
``data`` field. This module maps the run's events onto them and a ``RunAgentInput``
onto a run:

- the run: ``RUN_STARTED`` first, ``RUN_FINISHED`` (with ``usage``, one entry) or
  ``RUN_ERROR`` last;
- each assistant turn is one assistant message: its text as ``TEXT_MESSAGE_*``, its
  calls as ``TOOL_CALL_START``/``ARGS``/``END`` under the turn's message
  (``parentMessageId``), the arguments streaming as the provider sends them, a
  Gemini signature as ``REASONING_ENCRYPTED_VALUE`` on its call; each result as
  ``TOOL_CALL_RESULT`` under its call's id (its media as image/document parts);
- reasoning as ``REASONING_START``, ``REASONING_MESSAGE_*``, ``REASONING_END``;
- a retried request: AG-UI cannot take back what it showed, but
  ``MESSAGES_SNAPSHOT`` replaces the client's whole message list, so the void
  attempt's open messages and calls are closed and a snapshot without them follows
  (its reasoning messages emptied rather than left out: the client keeps reasoning
  through a snapshot that holds none);
  the same snapshot corrects a call whose streamed argument text does not read as
  the arguments that ran (Gemini's ``partialArgs``, a repaired text);
- the fallback message as a text message of its own;
- approvals as AG-UI's interrupts, the protocol's documented human-in-the-loop
  mechanism (``RUN_FINISHED`` with ``outcome: {type: "interrupt"}``; the next run's
  ``RunAgentInput.resume`` answers each interrupt by id). A custom event would need
  a client-side convention of our own; an interrupt is what every AG-UI client
  already reads. One interrupt per waiting call, its ``toolCallId`` the call's.

The paused :class:`~sse_toolcalls.runtime.approval.ApprovalState` stays on the server
in a :class:`PausedRuns` (the interrupt's id names it): the state is checked on resume
anyway, but keeping it out of the browser keeps the stream small and needs no JSON
form of the state.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Final, cast

from ...calls import (
    DIALECTS,
    Dialect,
    Document,
    Image,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallCompleted,
    ToolCallStarted,
    ToolResult,
)
from ...conversation import (
    AssistantMessage,
    Message,
    SystemPrompt,
    ToolResultsMessage,
    UserMessage,
)
from ...errors import SSEToolCallsError, UsageError
from ..approval import ApprovalState, pending_ids
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
from .paused import MAX_BODY_BYTES, MAX_PAUSED_RUNS, PausedRuns
from .sse_out import SSE_HEADERS, sse_event

if TYPE_CHECKING:
    from ..agent import Agent, AgentStream

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_PAUSED_RUNS",
    "AguiInputError",
    "PausedRuns",
    "agui_events",
    "agui_response",
    "conversation_of",
    "interrupt_id",
    "parse_run_input",
]

APPROVAL_REASON: Final = "tool_approval"
"""The ``reason`` of an approval interrupt."""

RESPONSE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}},
    "required": ["approved"],
}
"""What an approval interrupt expects back: ``{"approved": true|false}``."""


class AguiInputError(UsageError):
    """A ``RunAgentInput`` that cannot become a run (answered with HTTP 400)."""


def interrupt_id(state: ApprovalState, name: str) -> str:
    """The id of the interrupt asking about the pending call ``name`` of ``state``."""
    # The token first: it finds the state; ``name`` (an approval id) may hold "#".
    return f"{state.token}/{name}"


# --------------------------------------------------------------------------------------
# Out: the run's events as AG-UI events.


def _less(total: int | None, before: int | None) -> int | None:
    return None if total is None else total - (before or 0)


def _usage(usage: Usage, model: str | None, before: Usage | None) -> list[dict[str, Any]]:
    """AG-UI's usage entry; ``before``: what a resumed run's state already counted."""
    if before is not None:
        # AG-UI: "a run that resumes an interrupted one reports only the calls it made
        # itself"; our reply's totals go on from the pause's.
        usage = Usage(
            input_tokens=_less(usage.input_tokens, before.input_tokens),
            output_tokens=_less(usage.output_tokens, before.output_tokens),
            cache_read_tokens=_less(usage.cache_read_tokens, before.cache_read_tokens),
            cache_write_tokens=_less(usage.cache_write_tokens, before.cache_write_tokens),
            reasoning_tokens=_less(usage.reasoning_tokens, before.reasoning_tokens),
        )
    entry: dict[str, Any] = {}
    if model:
        entry["model"] = model
    # Our counts already follow AG-UI's accounting: input includes cached tokens,
    # output includes reasoning (see usage.Usage).
    for ours, theirs in (
        ("input_tokens", "inputTokens"),
        ("output_tokens", "outputTokens"),
        ("reasoning_tokens", "reasoningTokens"),
        ("cache_read_tokens", "cachedInputTokens"),
        ("cache_write_tokens", "cacheWriteInputTokens"),
    ):
        value = getattr(usage, ours)
        if value is not None:
            entry[theirs] = value
    if usage.input_tokens is not None and usage.output_tokens is not None:
        entry["totalTokens"] = usage.input_tokens + usage.output_tokens
    return [entry] if entry.keys() - {"model"} else []


def _result_content(result: ToolResult) -> str | list[dict[str, Any]]:
    """A result as AG-UI content: its text, or with media, parts (text first)."""
    content = result.content
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    if not result.media:
        return text
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    for media in result.media:
        source: dict[str, Any] = (
            {"type": "url", "value": media.url, "mimeType": media.media_type}
            if media.data is None and media.url is not None
            else {
                "type": "data",
                "value": base64.b64encode(media.data or b"").decode("ascii"),
                "mimeType": media.media_type,
            }
        )
        kind = "image" if isinstance(media, Image) else "document"
        parts.append({"type": kind, "source": source})
    return parts


def _media_of(part: Mapping[str, Any], where: str) -> Image | Document:
    """An image or document part of a tool message, back as the result's media."""
    source = part.get("source")
    if not isinstance(source, dict) or not isinstance(source.get("value"), str):
        raise AguiInputError(f"{where}: a {part.get('type')} part needs a source with a value")
    image = part.get("type") == "image"
    mime = source.get("mimeType")
    if not isinstance(mime, str) or not mime:
        mime = "image/png" if image else "application/pdf"
    url: str | None = None
    data: bytes | None = None
    if source.get("type") == "url":
        url = source["value"]
    elif source.get("type") == "data":
        try:
            data = base64.b64decode(source["value"], validate=True)
        except ValueError as exc:
            raise AguiInputError(f"{where}: the data is not base64") from exc
    else:
        raise AguiInputError(f"{where}: only data and url sources are read")
    if image:
        return Image(media_type=mime, data=data, url=url)
    return Document(media_type=mime, data=data, url=url)


def _reads_as(text: str, args: Any) -> bool:
    try:
        return bool(json.loads(text) == args)
    except ValueError:
        return False


class _Mapper:
    """The state of one run's mapping: which message, reasoning and calls are open."""

    def __init__(
        self,
        *,
        thread_id: str,
        run_id: str,
        messages: Sequence[Mapping[str, Any]],
        step: int,
        model: str | None,
        paused: PausedRuns | None,
        usage_before: Usage | None,
    ) -> None:
        self.thread_id, self.run_id, self.model, self.paused = thread_id, run_id, model, paused
        self.usage_before = usage_before
        self.step = step
        self.attempt = 0
        self.kept: list[dict[str, Any]] = [dict(m) for m in messages]
        """The client's messages as they should stand: the input, then what this run
        produced in attempts that were not voided."""
        self.turn: list[dict[str, Any]] = []
        """The messages of the current attempt (voided by a retry)."""
        self.message_id: str | None = None
        self.message: dict[str, Any] | None = None
        self.text_open = False
        self.reasoning_id: str | None = None
        self.open_calls: dict[int, str] = {}
        self.streamed: dict[int, list[str]] = {}
        self.stale = False
        self.serial = 0
        self.assigned: dict[tuple[str | None, int], str] = {}
        """The AG-UI id given to each call of the turn, by (call id, index)."""

    def _new_id(self, kind: str) -> str:
        self.serial += 1
        return f"{self.run_id}:{kind}{self.serial}"

    def call_id(self, call_id: str | None, index: int) -> str:
        """The AG-UI id of a call of the current turn (the same for its result)."""
        known = self.assigned.get((call_id, index))
        if known is not None:
            return known
        # Gemini may send no id: the call's place names it. The run id would not do,
        # as a resumed run (another run id) answers the calls; the turn's step does.
        tool_id = call_id if call_id else f"{self.thread_id}:step{self.step}#{index}"
        if tool_id in self.assigned.values():
            # A proxy reusing one id for two calls: AG-UI needs them apart.
            tool_id = f"{tool_id}#{index}"
        self.assigned[(call_id, index)] = tool_id
        return tool_id

    def _assistant(self) -> dict[str, Any]:
        """The turn's assistant message, opened on first use."""
        if self.message is None or self.message_id is None:
            self.message_id = self._new_id("m")
            self.message = {"id": self.message_id, "role": "assistant"}
            self.turn.append(self.message)
        return self.message

    def close_reasoning(self) -> list[dict[str, Any]]:
        if self.reasoning_id is None:
            return []
        rid, self.reasoning_id = self.reasoning_id, None
        return [
            {"type": "REASONING_MESSAGE_END", "messageId": rid},
            {"type": "REASONING_END", "messageId": rid},
        ]

    def close_text(self) -> list[dict[str, Any]]:
        if not self.text_open:
            return []
        self.text_open = False
        return [{"type": "TEXT_MESSAGE_END", "messageId": self.message_id}]

    def close_turn(self) -> list[dict[str, Any]]:
        out = [*self.close_reasoning(), *self.close_text()]
        for tool_id in self.open_calls.values():
            out.append({"type": "TOOL_CALL_END", "toolCallId": tool_id})
        self.open_calls.clear()
        self.streamed.clear()
        self.message_id, self.message = None, None
        return out

    def settle(self) -> list[dict[str, Any]]:
        """Close the turn; keep its messages; a snapshot when the client's differ."""
        out = self.close_turn()
        self.kept.extend(self.turn)
        self.turn = []
        if self.stale:
            self.stale = False
            out.append({"type": "MESSAGES_SNAPSHOT", "messages": list(self.kept)})
        return out

    def map(self, event: AgentEvent) -> list[dict[str, Any]]:
        handler = _HANDLERS.get(type(event))
        return handler(self, event) if handler is not None else []

    # -- the handlers, one per event type --------------------------------------------

    def on_request(self, event: RequestStarted) -> list[dict[str, Any]]:
        out = self.settle()
        self.step, self.attempt = event.step, event.attempt
        self.assigned = {}
        return out

    def on_text(self, event: TextDelta) -> list[dict[str, Any]]:
        if not event.text:
            return []
        out = self.close_reasoning()
        # Text after a call of the same turn reopens the turn's message (AG-UI lets a
        # message's text and its calls stream side by side, and reopen by id).
        message = self._assistant()
        if not self.text_open:
            self.text_open = True
            out.append(
                {"type": "TEXT_MESSAGE_START", "messageId": self.message_id, "role": "assistant"}
            )
        message["content"] = message.get("content", "") + event.text
        out.append(
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": self.message_id, "delta": event.text}
        )
        return out

    def on_reasoning(self, event: ReasoningDelta) -> list[dict[str, Any]]:
        if not event.text:
            return []
        out: list[dict[str, Any]] = []
        if self.reasoning_id is None:
            out += self.close_text()
            rid = self.reasoning_id = self._new_id("r")
            self.turn.append({"id": rid, "role": "reasoning", "content": ""})
            out += [
                {"type": "REASONING_START", "messageId": rid},
                {"type": "REASONING_MESSAGE_START", "messageId": rid, "role": "reasoning"},
            ]
        rid = self.reasoning_id
        message = next(m for m in self.turn if m["id"] == rid)
        message["content"] += event.text
        out.append({"type": "REASONING_MESSAGE_CONTENT", "messageId": rid, "delta": event.text})
        return out

    def on_call_started(self, event: ToolCallStarted) -> list[dict[str, Any]]:
        out = [*self.close_reasoning(), *self.close_text()]
        tool_id = self.call_id(event.call_id, event.index)
        message = self._assistant()
        message.setdefault("toolCalls", []).append(
            {"id": tool_id, "type": "function", "function": {"name": event.name, "arguments": ""}}
        )
        self.open_calls[event.index] = tool_id
        self.streamed[event.index] = []
        out.append(
            {
                "type": "TOOL_CALL_START",
                "toolCallId": tool_id,
                "toolCallName": event.name,
                "parentMessageId": self.message_id,
            }
        )
        return out

    def on_preview(self, event: ToolArgumentsPreview) -> list[dict[str, Any]]:
        tool_id = self.open_calls.get(event.index)
        if tool_id is None or not event.delta:
            return []
        self.streamed[event.index].append(event.delta)
        return [{"type": "TOOL_CALL_ARGS", "toolCallId": tool_id, "delta": event.delta}]

    def on_call_completed(self, event: ToolCallCompleted) -> list[dict[str, Any]]:
        call = event.call
        tool_id = self.open_calls.pop(call.index, None)
        out: list[dict[str, Any]] = []
        if tool_id is None:
            # A call that arrived whole, with no start: shown whole.
            out += [*self.close_reasoning(), *self.close_text()]
            tool_id = self.call_id(call.call_id, call.index)
            self._assistant().setdefault("toolCalls", []).append(
                {"id": tool_id, "type": "function", "function": {"name": call.name}}
            )
            out.append(
                {
                    "type": "TOOL_CALL_START",
                    "toolCallId": tool_id,
                    "toolCallName": call.name,
                    "parentMessageId": self.message_id,
                }
            )
            streamed = ""
        else:
            streamed = "".join(self.streamed.pop(call.index, ()))
        text = call.raw_arguments if _reads_as(call.raw_arguments, call.args) else None
        if text is None:
            text = json.dumps(call.args, ensure_ascii=False)
        if not streamed:
            out.append({"type": "TOOL_CALL_ARGS", "toolCallId": tool_id, "delta": text})
        elif not _reads_as(streamed, call.args):
            # What streamed is not what runs: the snapshot at the turn's end corrects it.
            self.stale = True
        for message in self.turn:
            for shown in message.get("toolCalls", ()):
                if shown["id"] == tool_id:
                    shown["function"] = {"name": call.name, "arguments": text}
                    if call.thought_signature:
                        shown["encryptedValue"] = call.thought_signature
        out.append({"type": "TOOL_CALL_END", "toolCallId": tool_id})
        if call.thought_signature:
            # Gemini's signature goes back with the call: AG-UI stores such an opaque
            # value on the tool call, and the next input returns it there.
            out.append(
                {
                    "type": "REASONING_ENCRYPTED_VALUE",
                    "subtype": "tool-call",
                    "entityId": tool_id,
                    "encryptedValue": call.thought_signature,
                }
            )
        return out

    def _result(self, call: ToolCall, content: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = self.settle()
        tool_id = self.call_id(call.call_id, call.index)
        message_id = self._new_id("t")
        self.kept.append(
            {"id": message_id, "role": "tool", "toolCallId": tool_id, "content": content}
        )
        out.append(
            {
                "type": "TOOL_CALL_RESULT",
                "messageId": message_id,
                "toolCallId": tool_id,
                "content": content,
                "role": "tool",
            }
        )
        return out

    def on_result(self, event: ToolCallResult) -> list[dict[str, Any]]:
        return self._result(event.call, _result_content(event.result))

    def on_refused(self, event: ToolCallRefused) -> list[dict[str, Any]]:
        # The refusal is the call's result (the model reads it); it comes once more as
        # a ToolCallResult after the dispatch, so here it only closes the turn.
        return self.settle()

    def on_retry(self, event: RetryScheduled) -> list[dict[str, Any]]:
        out = self.close_turn()
        if self.turn:
            # @ag-ui/client keeps its reasoning messages through a snapshot that holds
            # none: a voided one stays in the snapshot, emptied, to take its text back.
            self.kept += [{**m, "content": ""} for m in self.turn if m["role"] == "reasoning"]
            self.turn = []
            out.append({"type": "MESSAGES_SNAPSHOT", "messages": list(self.kept)})
        self.stale = False
        out.append(
            {
                "type": "CUSTOM",
                "name": "sse_toolcalls.retry",
                "value": {"attempt": event.attempt, "delay": event.delay},
            }
        )
        return out

    def on_fallback(self, event: FallbackShown) -> list[dict[str, Any]]:
        out = self.settle()
        message_id = self._new_id("f")
        self.kept.append({"id": message_id, "role": "assistant", "content": event.text})
        out += [
            {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": event.text},
            {"type": "TEXT_MESSAGE_END", "messageId": message_id},
        ]
        return out

    def on_approval(self, event: ApprovalRequested) -> list[dict[str, Any]]:
        if self.paused is not None:
            self.paused.put(event.state)
        return self.settle()

    def on_finished(self, event: RunFinished) -> list[dict[str, Any]]:
        out = self.settle()
        reply = event.reply
        finished: dict[str, Any] = {
            "type": "RUN_FINISHED",
            "threadId": self.thread_id,
            "runId": self.run_id,
        }
        state = reply.state
        if state is not None and reply.pending_approvals:
            names = pending_ids(state)
            finished["outcome"] = {
                "type": "interrupt",
                "interrupts": [
                    {
                        "id": interrupt_id(state, name),
                        "reason": APPROVAL_REASON,
                        "message": f"Allow {call.name}?",
                        "toolCallId": self.call_id(call.call_id, call.index),
                        "responseSchema": RESPONSE_SCHEMA,
                    }
                    for name, call in zip(names, state.pending, strict=True)
                ],
            }
        else:
            finished["outcome"] = {"type": "success"}
        usage = _usage(reply.usage, self.model, self.usage_before)
        if usage:
            finished["usage"] = usage
        out.append(finished)
        return out


_HANDLERS: Final[dict[type[Any], Any]] = {
    RequestStarted: _Mapper.on_request,
    TextDelta: _Mapper.on_text,
    ReasoningDelta: _Mapper.on_reasoning,
    ToolCallStarted: _Mapper.on_call_started,
    ToolArgumentsPreview: _Mapper.on_preview,
    ToolCallCompleted: _Mapper.on_call_completed,
    ToolCallRefused: _Mapper.on_refused,
    ToolCallResult: _Mapper.on_result,
    RetryScheduled: _Mapper.on_retry,
    FallbackShown: _Mapper.on_fallback,
    ApprovalRequested: _Mapper.on_approval,
    RunFinished: _Mapper.on_finished,
}
"""Each run event's handler (STYLE 3); an event type not here shows nothing."""


def _run_error(error: BaseException, code: str | None = None) -> dict[str, Any]:
    return {
        "type": "RUN_ERROR",
        "message": str(error) or type(error).__name__,
        "code": code or type(error).__name__,
    }


async def agui_events(
    events: AsyncIterator[AgentEvent],
    *,
    thread_id: str,
    run_id: str,
    messages: Sequence[Mapping[str, Any]] = (),
    model: str | None = None,
    paused: PausedRuns | None = None,
    resumed: ApprovalState | None = None,
) -> AsyncIterator[dict[str, Any]]:
    """The AG-UI events of a run, from its :data:`~..events.AgentEvent` s.

    ``messages``: the client's messages before the run (AG-UI form), so that a
    ``MESSAGES_SNAPSHOT`` after a voided attempt keeps them. ``paused``: where an
    approval pause is kept for the answer. ``resumed``: the state a resumed run goes
    on from (its turn names id-less calls; its usage is not this run's). An error of
    ours from ``events`` ends the stream with ``RUN_ERROR``; cancellation and foreign
    exceptions pass.
    """
    mapper = _Mapper(
        thread_id=thread_id,
        run_id=run_id,
        messages=messages,
        step=resumed.steps if resumed is not None else 0,
        model=model,
        paused=paused,
        usage_before=resumed.usage if resumed is not None else None,
    )
    yield {"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id}
    try:
        async for event in events:
            for out in mapper.map(event):
                yield out
    except SSEToolCallsError as exc:
        for out in mapper.close_turn():
            yield out
        yield _run_error(exc)


# --------------------------------------------------------------------------------------
# In: a RunAgentInput as a run.


def _text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text":
                raise AguiInputError(f"{where}: only text content is read, not {part!r:.80}")
            text = part.get("text")
            if not isinstance(text, str):
                raise AguiInputError(f"{where}: a text part without text")
            parts.append(text)
        return "".join(parts)
    if content is None:
        return ""
    raise AguiInputError(f"{where}: content must be text or parts")


def _str_field(obj: Mapping[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        raise AguiInputError(f"{where}: {key!r} must be a non-empty string")
    return value


def conversation_of(messages: Sequence[Any], dialect: Dialect) -> list[Message]:
    """The conversation of AG-UI ``messages`` (system, developer, user, assistant with
    its tool calls, tool results; reasoning and activity messages are display only).

    Raises:
        AguiInputError: a message is malformed, or a result names no earlier call.
    """
    out: list[Message] = []
    calls: dict[str, ToolCall] = {}
    results: list[ToolResult] = []

    def flush() -> None:
        if results:
            out.append(ToolResultsMessage(results=tuple(results)))
            results.clear()

    for n, message in enumerate(messages):
        where = f"messages[{n}]"
        if not isinstance(message, dict):
            raise AguiInputError(f"{where} is not an object")
        role = message.get("role")
        if role == "tool":
            call_id = _str_field(message, "toolCallId", where)
            call = calls.get(call_id)
            if call is None:
                raise AguiInputError(f"{where} answers no earlier tool call: {call_id!r}")
            error = message.get("error")
            content = message.get("content")
            media: list[Image | Document] = []
            if isinstance(content, list):
                # A result's media come back as the parts we sent them as.
                media = [
                    _media_of(part, f"{where}.content[{i}]")
                    for i, part in enumerate(content)
                    if isinstance(part, dict) and part.get("type") in ("image", "document")
                ]
                content = [
                    part
                    for part in content
                    if not (isinstance(part, dict) and part.get("type") in ("image", "document"))
                ]
            results.append(
                ToolResult(
                    call=call,
                    content=_text(content, where) or (error if isinstance(error, str) else ""),
                    is_error=bool(error),
                    media=tuple(media),
                )
            )
            continue
        if role in ("reasoning", "activity"):
            continue
        flush()
        if role in ("system", "developer"):
            out.append(SystemPrompt(text=_text(message.get("content"), where)))
        elif role == "user":
            out.append(UserMessage(text=_text(message.get("content"), where)))
        elif role == "assistant":
            turn: list[ToolCall] = []
            shown_calls = message.get("toolCalls")
            if shown_calls is not None and not isinstance(shown_calls, list):
                raise AguiInputError(f"{where}: 'toolCalls' must be a list")
            for i, shown in enumerate(shown_calls or ()):
                spot = f"{where}.toolCalls[{i}]"
                if not isinstance(shown, dict) or not isinstance(shown.get("function"), dict):
                    raise AguiInputError(f"{spot} is not a tool call")
                raw = shown["function"].get("arguments") or "{}"
                try:
                    args = json.loads(raw) if isinstance(raw, str) else None
                except ValueError:
                    args = None
                if not isinstance(args, dict):
                    raise AguiInputError(f"{spot}: arguments must be a JSON object text")
                signature = shown.get("encryptedValue")
                call = ToolCall(
                    name=_str_field(shown["function"], "name", spot),
                    args=args,
                    provider=dialect,
                    call_id=_str_field(shown, "id", spot),
                    index=i,
                    raw_arguments=raw,
                    thought_signature=signature if isinstance(signature, str) else None,
                )
                calls[call.call_id or ""] = call
                turn.append(call)
            out.append(
                AssistantMessage(text=_text(message.get("content"), where), calls=tuple(turn))
            )
        else:
            raise AguiInputError(f"{where}: unknown role {role!r}")
    flush()
    return out


def parse_run_input(body: bytes | Mapping[str, Any]) -> dict[str, Any]:
    """A ``RunAgentInput`` read and checked (``threadId``, ``runId``, ``messages``).

    Raises:
        AguiInputError: not JSON, too large, or missing what a run needs.
    """
    if isinstance(body, bytes | bytearray):
        if len(body) > MAX_BODY_BYTES:
            raise AguiInputError(f"the body is over {MAX_BODY_BYTES} bytes")
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise AguiInputError(f"the body is not JSON: {exc}") from exc
    else:
        data = body
    if not isinstance(data, Mapping):
        raise AguiInputError("a RunAgentInput is a JSON object")
    out = dict(data)
    _str_field(out, "threadId", "RunAgentInput")
    run_id = _str_field(out, "runId", "RunAgentInput")
    if any(c in run_id for c in "\r\n\0"):
        # The run id is in every event's SSE id, which holds no line break or NUL.
        raise AguiInputError("RunAgentInput: 'runId' holds a line break or NUL")
    if not isinstance(out.get("messages"), list):
        raise AguiInputError("RunAgentInput: 'messages' must be a list")
    resume = out.get("resume")
    if resume is not None and not isinstance(resume, list):
        raise AguiInputError("RunAgentInput: 'resume' must be a list")
    return out


def _answers(
    resume: Sequence[Any], paused: PausedRuns, thread_id: str
) -> tuple[ApprovalState, list[str], list[str]]:
    state: ApprovalState | None = None
    approve: list[str] = []
    deny: list[str] = []
    for n, entry in enumerate(resume):
        where = f"resume[{n}]"
        if not isinstance(entry, dict):
            raise AguiInputError(f"{where} is not an object")
        token, _, name = _str_field(entry, "interruptId", where).partition("/")
        found = paused.get(token)
        # An interrupt is answered from its own thread only: a token seen elsewhere
        # (a shared link, another user's page) answers nothing.
        if found is None or found.conversation_id != thread_id:
            raise AguiInputError(f"{where}: no paused run of this thread has that interrupt")
        if state is not None and found is not state:
            raise AguiInputError(f"{where}: the answers are for two paused runs")
        state = found
        payload = entry.get("payload")
        approved = (
            entry.get("status") == "resolved"
            and isinstance(payload, dict)
            and payload.get("approved") is True
        )
        (approve if approved else deny).append(name)
    if state is None:
        raise AguiInputError("RunAgentInput: 'resume' answers nothing")
    return state, approve, deny


async def _bytes(
    agent: Agent,
    run: dict[str, Any],
    paused: PausedRuns,
    stream: AbstractAsyncContextManager[AgentStream],
    resumed: ApprovalState | None,
) -> AsyncIterator[bytes]:
    thread_id, run_id = run["threadId"], run["runId"]
    sequence = 0

    def frame(event: dict[str, Any]) -> bytes:
        nonlocal sequence
        sequence += 1
        # A run-scoped sequence: Last-Event-ID names a place in this run's stream.
        return sse_event(
            json.dumps(event, ensure_ascii=False, separators=(",", ":")),
            id=f"{run_id}:{sequence}",
        )

    model = getattr(agent.client, "model", None)
    try:
        async with stream as events:
            async for event in agui_events(
                events,
                thread_id=thread_id,
                run_id=run_id,
                messages=run["messages"],
                model=model if isinstance(model, str) else None,
                paused=paused,
                resumed=resumed,
            ):
                yield frame(event)
    except SSEToolCallsError as exc:
        # Refused on entering (a state already answered, a conversation the dialect
        # cannot encode): the stream is already 200, so the error is the run's.
        if sequence == 0:
            yield frame({"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id})
        yield frame(_run_error(exc))


def _dialect_of(agent: Agent) -> Dialect:
    dialect = getattr(agent.client, "dialect", None)
    if dialect not in DIALECTS:
        # The input's tool calls are sent back in the client's dialect: it must be known.
        raise UsageError(f"the agent's client names no known dialect: {dialect!r}")
    return cast("Dialect", dialect)


_DEFAULT_PAUSED: Final = PausedRuns()


def agui_response(
    agent: Agent,
    body: bytes | Mapping[str, Any],
    *,
    paused: PausedRuns | None = None,
) -> tuple[int, dict[str, str], AsyncIterator[bytes]]:
    """A ``RunAgentInput`` answered: ``(status, headers, body chunks)``.

    A good input gives 200 and the run's event stream: the conversation is the
    input's ``messages``, ``conversation_id`` its ``threadId`` and ``request_id`` its
    ``runId``, so the same input posted again runs no write twice (their ledger keys
    are made of the request id: the second run replays them). An input with
    ``resume`` answers the interrupts of a pause kept in ``paused`` (this process's
    by default): ``{"status": "resolved", "payload": {"approved": true}}`` approves
    a call, anything else denies it. The input's ``tools`` (frontend tools) are not
    offered to the model, and ``state``/``forwardedProps`` are not read: the agent
    runs its own tools. A bad input (not a ``RunAgentInput``, messages that are no
    conversation, answers to no interrupt of this thread) gives 400 and one
    ``RUN_ERROR`` event; a run refused on entering (an answer already given) is a 200
    stream ending in ``RUN_ERROR``.

    Raises:
        UsageError: the agent's client names no known dialect.
    """
    keeper = paused if paused is not None else _DEFAULT_PAUSED
    stream: AbstractAsyncContextManager[AgentStream]
    resumed: ApprovalState | None = None
    try:
        # Everything the input alone decides is checked here, before the 200.
        run = parse_run_input(body)
        if run.get("resume"):
            resumed, approve, deny = _answers(run["resume"], keeper, run["threadId"])
            stream = agent.resume_stream(resumed, approve=approve, deny=deny)
        else:
            conversation = conversation_of(run["messages"], _dialect_of(agent))
            stream = agent.run_stream(
                conversation, conversation_id=run["threadId"], request_id=run["runId"]
            )
    except AguiInputError as exc:
        error = sse_event(json.dumps(_run_error(exc, "bad_request")), id=f"{uuid.uuid4().hex}:1")
        return 400, dict(SSE_HEADERS), _one(error)
    return 200, dict(SSE_HEADERS), _bytes(agent, run, keeper, stream, resumed)


async def _one(chunk: bytes) -> AsyncIterator[bytes]:
    yield chunk
