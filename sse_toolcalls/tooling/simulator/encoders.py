"""The server side of each dialect: a scripted turn in, the exact bytes out.

Pure and deterministic (no I/O, no clock; Bedrock's random padding is seeded by the
turn): the same turn always gives the same bytes, so the simulator, the round-trip
property tests and the benchmarks can share them. Each function returns one ``bytes``
per event, framed as the provider frames it (SSE: ``event:`` lines for Responses and
Anthropic, CRLF for Gemini; Bedrock: AWS's binary event-stream messages). The shapes
follow the captured streams in ``external_streams/`` and the providers' references.

This module must stay importable without uvicorn or any async library.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from ...errors import UnknownDialectError, UsageError
from .aws_eventstream import MEDIA_TYPE, event_message, exception_message, flip_byte
from .reasoning import IssuedBlock, issued_blocks, step_signature
from .script import CorruptedCRC, Cut, ErrorEvent, Turn, resolved_call_id

_CREATED = 1_700_000_000
"""A fixed timestamp: the streams must be deterministic."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Event:
    """One encoded event and, for argument-carrying events, which call it belongs to."""

    data: bytes
    """The framed event."""

    args_of: int | None = None
    """The position of the call whose argument text this event carries, else ``None``."""


def _json(value: Any) -> bytes:
    return orjson.dumps(value)


def _fragments(text: str, size: int) -> list[str]:
    """``text`` in pieces of ``size`` characters (at least one piece, maybe empty)."""
    if size < 1:
        raise UsageError(f"fragment_size must be at least 1, got {size}")
    if not text:
        return []
    return [text[i : i + size] for i in range(0, len(text), size)]


def _arguments_text(args: dict[str, Any]) -> str:
    return orjson.dumps(args).decode()


def _usage(turn: Turn) -> tuple[int, int]:
    usage = turn.usage or {}
    return int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))


# --------------------------------------------------------------------------------------
# OpenAI Chat Completions: `data: <chunk>` lines, `data: [DONE]` at the end.


def _chat_frame(payload: Any) -> bytes:
    return b"data: " + _json(payload) + b"\n\n"


def _before(blocks: list[IssuedBlock], position: int) -> list[IssuedBlock]:
    return [block for block in blocks if block.before_call == position]


def _chat(turn: Turn, *, model: str, turn_number: int, encrypted: bool = True) -> list[_Event]:
    base = {
        "id": f"chatcmpl-sim{turn_number}",
        "object": "chat.completion.chunk",
        "created": _CREATED + turn_number,
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return _chat_frame({**base, "choices": [choice]})

    events = [_Event(data=chunk({"role": "assistant", "content": "" if turn.text else None}))]
    # Reasoning as DeepSeek and vLLM stream it (Chat has no place to send it back).
    for block in issued_blocks("openai_chat", turn, turn_number=turn_number):
        events += [
            _Event(data=chunk({"reasoning_content": f}))
            for f in _fragments(block.text, turn.fragment_size)
        ]
    events += [
        _Event(data=chunk({"content": f})) for f in _fragments(turn.text, turn.fragment_size)
    ]
    for i, call in enumerate(turn.calls):
        call_id = resolved_call_id(call, dialect="openai_chat", turn_number=turn_number, position=i)
        start = {
            "index": i,
            "id": call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        events.append(_Event(data=chunk({"tool_calls": [start]})))
        for frag in _fragments(_arguments_text(call.args), turn.fragment_size):
            piece = {"index": i, "function": {"arguments": frag}}
            events.append(_Event(data=chunk({"tool_calls": [piece]}), args_of=i))
    finish = turn.stop_reason or ("tool_calls" if turn.calls else "stop")
    events.append(_Event(data=chunk({}, finish)))
    if turn.usage is not None:
        prompt, completion = _usage(turn)
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        events.append(_Event(data=_chat_frame({**base, "choices": [], "usage": usage})))
    events.append(_Event(data=b"data: [DONE]\n\n"))
    return events


def _chat_error(error: ErrorEvent, *, model: str, turn_number: int, sequence: int) -> bytes:
    # OpenAI-compatible servers put an `error` object in a chunk of its own.
    body = {"error": {"message": error.message, "type": error.code, "code": error.code}}
    return _chat_frame(body)


# --------------------------------------------------------------------------------------
# OpenAI Responses: `event: <type>` + `data: <object with the same type>`, sequence_number.


def _typed_frame(payload: dict[str, Any]) -> bytes:
    return b"event: " + str(payload["type"]).encode() + b"\ndata: " + _json(payload) + b"\n\n"


def _response_object(
    *, model: str, turn_number: int, status: str, output: list[Any], usage: Any
) -> dict[str, Any]:
    return {
        "id": f"resp_sim{turn_number}",
        "object": "response",
        "created_at": _CREATED + turn_number,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "usage": usage,
    }


def _responses(turn: Turn, *, model: str, turn_number: int, encrypted: bool = True) -> list[_Event]:
    events: list[_Event] = []
    sequence = 0
    blocks = issued_blocks("openai_responses", turn, turn_number=turn_number, encrypted=encrypted)

    def emit(payload: dict[str, Any], args_of: int | None = None) -> None:
        nonlocal sequence
        payload["sequence_number"] = sequence
        sequence += 1
        events.append(_Event(data=_typed_frame(payload), args_of=args_of))

    def response(status: str, output: list[Any], usage: Any = None) -> dict[str, Any]:
        return _response_object(
            model=model, turn_number=turn_number, status=status, output=output, usage=usage
        )

    emit({"type": "response.created", "response": response("in_progress", [])})
    emit({"type": "response.in_progress", "response": response("in_progress", [])})
    output: list[dict[str, Any]] = []

    def reasoning(position: int) -> None:
        for block in _before(blocks, position):
            index = len(output)
            item: dict[str, Any] = {"id": block.item_id, "type": "reasoning", "summary": []}
            if block.encrypted is not None:
                item["encrypted_content"] = block.encrypted
            emit({"type": "response.output_item.added", "output_index": index, "item": item})
            where = {"item_id": block.item_id, "output_index": index, "summary_index": 0}
            part = {"type": "summary_text", "text": ""}
            emit({"type": "response.reasoning_summary_part.added", **where, "part": part})
            for frag in _fragments(block.text, turn.fragment_size):
                emit({"type": "response.reasoning_summary_text.delta", **where, "delta": frag})
            emit({"type": "response.reasoning_summary_text.done", **where, "text": block.text})
            part = {"type": "summary_text", "text": block.text}
            emit({"type": "response.reasoning_summary_part.done", **where, "part": part})
            done = {**item, "summary": [part]}
            emit({"type": "response.output_item.done", "output_index": index, "item": done})
            output.append(done)

    reasoning(0)
    if turn.text:
        item_id = f"msg_sim{turn_number}"
        at = len(output)
        where: dict[str, Any] = {"item_id": item_id, "output_index": at, "content_index": 0}
        message: dict[str, Any] = {
            "id": item_id,
            "type": "message",
            "status": "in_progress",
            "role": "assistant",
            "content": [],
        }
        emit({"type": "response.output_item.added", "output_index": at, "item": message})
        empty = {"type": "output_text", "annotations": [], "text": ""}
        emit({"type": "response.content_part.added", **where, "part": empty})
        for frag in _fragments(turn.text, turn.fragment_size):
            emit({"type": "response.output_text.delta", **where, "delta": frag, "logprobs": []})
        emit({"type": "response.output_text.done", **where, "text": turn.text, "logprobs": []})
        part = {**empty, "text": turn.text}
        emit({"type": "response.content_part.done", **where, "part": part})
        done = {**message, "status": "completed", "content": [part]}
        emit({"type": "response.output_item.done", "output_index": at, "item": done})
        output.append(done)
    for i, call in enumerate(turn.calls):
        if i:
            reasoning(i)
        position = len(output)
        call_id = resolved_call_id(
            call, dialect="openai_responses", turn_number=turn_number, position=i
        )
        item_id = f"fc_sim{turn_number}_{i}"
        arguments = _arguments_text(call.args)
        item = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": call_id,
            "name": call.name,
        }
        emit({"type": "response.output_item.added", "output_index": position, "item": item})
        for frag in _fragments(arguments, turn.fragment_size):
            delta = {
                "type": "response.function_call_arguments.delta",
                "item_id": item_id,
                "output_index": position,
                "delta": frag,
            }
            emit(delta, args_of=i)
        emit(
            {
                "type": "response.function_call_arguments.done",
                "item_id": item_id,
                "output_index": position,
                "arguments": arguments,
            }
        )
        done = {**item, "status": "completed", "arguments": arguments}
        emit({"type": "response.output_item.done", "output_index": position, "item": done})
        output.append(done)
    if turn.calls:
        reasoning(len(turn.calls))
    usage = None
    if turn.usage is not None:
        prompt, completion = _usage(turn)
        usage = {
            "input_tokens": prompt,
            "output_tokens": completion,
            "total_tokens": prompt + completion,
        }
    if turn.stop_reason in {"max_output_tokens", "max_tokens", "length"}:
        final = response("incomplete", output, usage)
        final["incomplete_details"] = {"reason": "max_output_tokens"}
        emit({"type": "response.incomplete", "response": final})
    else:
        emit({"type": "response.completed", "response": response("completed", output, usage)})
    return events


def _responses_error(error: ErrorEvent, *, model: str, turn_number: int, sequence: int) -> bytes:
    # As captured from api.openai.com: an `error` event, then `response.failed`.
    body = {
        "type": "error",
        "sequence_number": sequence,
        "error": {"type": error.code, "code": error.code, "message": error.message, "param": None},
    }
    failed = _response_object(
        model=model, turn_number=turn_number, status="failed", output=[], usage=None
    )
    failed["error"] = {"code": error.code, "message": error.message}
    tail = {"type": "response.failed", "sequence_number": sequence + 1, "response": failed}
    return _typed_frame(body) + _typed_frame(tail)


# --------------------------------------------------------------------------------------
# Anthropic Messages: `event: <type>` + `data: <object>`, content blocks by index.


def _anthropic_events(
    turn: Turn, *, model: str, turn_number: int, dialect: str
) -> list[tuple[dict[str, Any], int | None]]:
    """The Anthropic Messages events of ``turn``, as payloads, each with the position of
    the call whose arguments it carries: the SSE stream's and, inside ``chunk`` messages,
    Bedrock's (``dialect`` ``bedrock_anthropic``: Bedrock's ids, no ``ping``)."""
    on_bedrock = dialect == "bedrock_anthropic"
    prompt, completion = _usage(turn)
    message: dict[str, Any] = {
        "id": f"msg_bdrk_sim{turn_number}" if on_bedrock else f"msg_sim{turn_number}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": prompt, "output_tokens": 1},
    }
    events: list[tuple[dict[str, Any], int | None]] = [
        ({"type": "message_start", "message": message}, None)
    ]
    blocks = issued_blocks(dialect, turn, turn_number=turn_number)
    block = 0

    def frame(payload: dict[str, Any], args_of: int | None = None) -> None:
        events.append((payload, args_of))

    def start(content_block: dict[str, Any]) -> None:
        frame({"type": "content_block_start", "index": block, "content_block": content_block})
        if block == 0 and not on_bedrock:
            # The API pings once, after the first block opens (see the captured streams);
            # Bedrock's chunks carry no ping.
            frame({"type": "ping"})

    def thinking(position: int) -> None:
        nonlocal block
        for issued in _before(blocks, position):
            if issued.kind == "redacted_thinking":
                start({"type": "redacted_thinking", "data": issued.text})
            else:
                start({"type": "thinking", "thinking": "", "signature": ""})
                for frag in _fragments(issued.text, turn.fragment_size):
                    delta = {"type": "thinking_delta", "thinking": frag}
                    frame({"type": "content_block_delta", "index": block, "delta": delta})
                sign: dict[str, Any] = {"type": "signature_delta", "signature": issued.signature}
                frame({"type": "content_block_delta", "index": block, "delta": sign})
            frame({"type": "content_block_stop", "index": block})
            block += 1

    thinking(0)
    if turn.text:
        start({"type": "text", "text": ""})
        for frag in _fragments(turn.text, turn.fragment_size):
            delta = {"type": "text_delta", "text": frag}
            frame({"type": "content_block_delta", "index": block, "delta": delta})
        frame({"type": "content_block_stop", "index": block})
        block += 1
    for i, call in enumerate(turn.calls):
        if i:
            thinking(i)
        call_id = resolved_call_id(call, dialect=dialect, turn_number=turn_number, position=i)
        start({"type": "tool_use", "id": call_id, "name": call.name, "input": {}})
        # The API opens every tool_use block with an empty partial_json.
        pieces = ["", *_fragments(_arguments_text(call.args), turn.fragment_size)]
        for frag in pieces:
            delta = {"type": "input_json_delta", "partial_json": frag}
            frame({"type": "content_block_delta", "index": block, "delta": delta}, args_of=i)
        frame({"type": "content_block_stop", "index": block})
        block += 1
    stop = turn.stop_reason or ("tool_use" if turn.calls else "end_turn")
    frame(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": completion},
        }
    )
    if on_bedrock:
        # Bedrock adds its own count to the last event (see the captured streams).
        frame({"type": "message_stop", "amazon-bedrock-invocationMetrics": _metrics(turn)})
    else:
        frame({"type": "message_stop"})
    return events


def _anthropic(turn: Turn, *, model: str, turn_number: int, encrypted: bool = True) -> list[_Event]:
    return [
        _Event(data=_typed_frame(payload), args_of=args_of)
        for payload, args_of in _anthropic_events(
            turn, model=model, turn_number=turn_number, dialect="anthropic"
        )
    ]


def _anthropic_error(error: ErrorEvent, *, model: str, turn_number: int, sequence: int) -> bytes:
    return _typed_frame({"type": "error", "error": {"type": error.code, "message": error.message}})


# --------------------------------------------------------------------------------------
# Gemini streamGenerateContent?alt=sse: one JSON response per event, CRLF framing.

_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def _gemini_frame(payload: Any) -> bytes:
    # Gemini separates events with CRLF CRLF (see the captured streams).
    return b"data: " + _json(payload) + b"\r\n\r\n"


def _gemini(turn: Turn, *, model: str, turn_number: int, encrypted: bool = True) -> list[_Event]:
    blocks = issued_blocks("gemini", turn, turn_number=turn_number)
    # Thought summaries come first, as parts marked "thought" (includeThoughts).
    parts: list[tuple[dict[str, Any], int | None]] = [
        ({"text": block.text, "thought": True}, None) for block in blocks
    ]
    parts += [({"text": f}, None) for f in _fragments(turn.text, turn.fragment_size)]
    signature = step_signature(model, turn, turn_number)
    for i, call in enumerate(turn.calls):
        function_call: dict[str, Any] = {"name": call.name, "args": call.args}
        call_id = resolved_call_id(call, dialect="gemini", turn_number=turn_number, position=i)
        if call_id is not None:
            function_call["id"] = call_id
        # Gemini sends each functionCall whole, in a part of its own; a thinking turn's
        # signature rides on its first call (Gemini 3's parallel calls: the first only).
        part: dict[str, Any] = {"functionCall": function_call}
        if i == 0 and signature is not None:
            part["thoughtSignature"] = signature
        parts.append((part, i))
    if not parts:
        parts.append(({"text": ""}, None))
    prompt, completion = _usage(turn)
    events: list[_Event] = []
    for n, (part, args_of) in enumerate(parts):
        candidate: dict[str, Any] = {"content": {"parts": [part], "role": "model"}, "index": 0}
        last = n == len(parts) - 1
        if last:
            candidate["finishReason"] = turn.stop_reason or "STOP"
        payload: dict[str, Any] = {"candidates": [candidate]}
        if last or turn.usage is not None:
            payload["usageMetadata"] = {
                "promptTokenCount": prompt,
                "candidatesTokenCount": completion if last else 0,
                "totalTokenCount": prompt + (completion if last else 0),
            }
        payload["modelVersion"] = model
        payload["responseId"] = f"sim{turn_number}"
        events.append(_Event(data=_gemini_frame(payload), args_of=args_of))
    return events


def _google_status(code: str) -> tuple[int, str]:
    for number, name in _GOOGLE_STATUS.items():
        if name == code:
            return number, name
    # A neutral code (overloaded_error...) maps to Google's transient status.
    return 503, "UNAVAILABLE"


def _gemini_error(error: ErrorEvent, *, model: str, turn_number: int, sequence: int) -> bytes:
    number, name = _google_status(error.code)
    return _gemini_frame({"error": {"code": number, "message": error.message, "status": name}})


# --------------------------------------------------------------------------------------
# Amazon Bedrock: AWS event-stream messages (see aws_eventstream.py) with JSON payloads,
# their keys in sorted order, each padded with a "p" field (see the captured streams).

_PAD_ALPHABET = string.ascii_lowercase + string.ascii_uppercase + string.digits


class _Pad:
    """Bedrock's padding: every payload gets ``"p"``, the first 1 to 62 characters of
    ``a-zA-Z0-9`` (a random length, so the sizes of the messages leak nothing). Seeded
    by the dialect and the turn: the same turn always gives the same bytes."""

    def __init__(self, dialect: str, turn_number: int) -> None:
        self._random = random.Random(f"{dialect}:{turn_number}")

    def __call__(self, payload: dict[str, Any]) -> bytes:
        padding = _PAD_ALPHABET[: self._random.randint(1, len(_PAD_ALPHABET))]
        return orjson.dumps({**payload, "p": padding}, option=orjson.OPT_SORT_KEYS)

    def latency(self) -> int:
        """A plausible latency in milliseconds, for the metrics Bedrock reports."""
        return self._random.randint(300, 3000)


def _converse(turn: Turn, *, model: str, turn_number: int, encrypted: bool = True) -> list[_Event]:
    pad = _Pad("bedrock_converse", turn_number)
    nova = "amazon.nova" in model  # the script's model: "us.amazon.nova-lite-v1:0"...
    events: list[_Event] = []
    blocks = issued_blocks("bedrock_converse", turn, turn_number=turn_number)
    index = 0

    def emit(event_type: str, payload: dict[str, Any], args_of: int | None = None) -> None:
        events.append(_Event(data=event_message(event_type, pad(payload)), args_of=args_of))

    def delta(body: dict[str, Any], args_of: int | None = None) -> None:
        emit("contentBlockDelta", {"contentBlockIndex": index, "delta": body}, args_of)

    def stop() -> None:
        nonlocal index
        emit("contentBlockStop", {"contentBlockIndex": index})
        index += 1

    def reasoning(position: int) -> None:
        # Reasoning blocks, like text, open with their first delta: no contentBlockStart.
        for issued in _before(blocks, position):
            if issued.kind == "redacted_thinking":
                delta({"reasoningContent": {"redactedContent": issued.text}})
            else:
                for frag in _fragments(issued.text, turn.fragment_size):
                    delta({"reasoningContent": {"text": frag}})
                delta({"reasoningContent": {"signature": issued.signature}})
            stop()

    emit("messageStart", {"role": "assistant"})
    reasoning(0)
    if turn.text:
        for frag in _fragments(turn.text, turn.fragment_size):
            delta({"text": frag})
        stop()
    for i, call in enumerate(turn.calls):
        if i:
            reasoning(i)
        call_id = resolved_call_id(
            call, dialect="bedrock_converse", turn_number=turn_number, position=i
        )
        tool_use = {"toolUse": {"toolUseId": call_id, "name": call.name}}
        emit("contentBlockStart", {"contentBlockIndex": index, "start": tool_use})
        # Claude opens every toolUse block with an empty input fragment, then streams the
        # input in pieces; Amazon Nova sends it whole, in one (see the captured streams).
        arguments = _arguments_text(call.args)
        pieces = [arguments] if nova else ["", *_fragments(arguments, turn.fragment_size)]
        for frag in pieces:
            delta({"toolUse": {"input": frag}}, args_of=i)
        stop()
    emit(
        "messageStop",
        {"stopReason": turn.stop_reason or ("tool_use" if turn.calls else "end_turn")},
    )
    prompt, completion = _usage(turn)
    usage = {"inputTokens": prompt, "outputTokens": completion, "totalTokens": prompt + completion}
    emit("metadata", {"usage": usage, "metrics": {"latencyMs": pad.latency()}})
    return events


def _bedrock_anthropic(
    turn: Turn, *, model: str, turn_number: int, encrypted: bool = True
) -> list[_Event]:
    # InvokeModelWithResponseStream: each Anthropic event, compact JSON, base64 in the
    # "bytes" of a chunk message.
    pad = _Pad("bedrock_anthropic", turn_number)
    return [
        _Event(
            data=event_message("chunk", pad({"bytes": base64.b64encode(_json(payload)).decode()})),
            args_of=args_of,
        )
        for payload, args_of in _anthropic_events(
            turn, model=model, turn_number=turn_number, dialect="bedrock_anthropic"
        )
    ]


def _metrics(turn: Turn) -> dict[str, int]:
    prompt, completion = _usage(turn)
    # Fixed latencies: the bytes of a turn must not change from run to run.
    return {
        "inputTokenCount": prompt,
        "outputTokenCount": completion,
        "invocationLatency": 1234,
        "firstByteLatency": 321,
    }


_STREAM_EXCEPTIONS = frozenset(
    {
        "internalServerException",
        "modelStreamErrorException",
        "serviceUnavailableException",
        "throttlingException",
        "validationException",
    }
)
BEDROCK_EXCEPTIONS: dict[str, frozenset[str]] = {
    "bedrock_converse": _STREAM_EXCEPTIONS,
    # InvokeModel's stream also declares the model's timeout (the service model's
    # ResponseStream); ConverseStream's does not.
    "bedrock_anthropic": _STREAM_EXCEPTIONS | {"modelTimeoutException"},
}
"""Per dialect, the exceptions its stream declares (its ``:exception-type`` values)."""

# The other providers' error codes, as the Bedrock exception that means the same.
_BEDROCK_EXCEPTION_OF = {
    "overloaded_error": "serviceUnavailableException",
    "UNAVAILABLE": "serviceUnavailableException",
    "rate_limit_error": "throttlingException",
    "rate_limit_exceeded": "throttlingException",
    "RESOURCE_EXHAUSTED": "throttlingException",
    "api_error": "internalServerException",
    "server_error": "internalServerException",
    "INTERNAL": "internalServerException",
    "invalid_request_error": "validationException",
    "INVALID_ARGUMENT": "validationException",
    "DEADLINE_EXCEEDED": "modelTimeoutException",
}


def bedrock_exception_type(dialect: str, code: str) -> str:
    """The ``:exception-type`` an :class:`ErrorEvent` of ``code`` is sent as in a Bedrock
    ``dialect``: the code itself when its stream declares it (:data:`BEDROCK_EXCEPTIONS`),
    else the declared exception that means the same (``overloaded_error``:
    ``serviceUnavailableException``), else ``modelStreamErrorException`` (the model
    failed mid-stream)."""
    declared = BEDROCK_EXCEPTIONS[dialect]
    kind = code if code in declared else _BEDROCK_EXCEPTION_OF.get(code, "")
    return kind if kind in declared else "modelStreamErrorException"


def _exception(dialect: str) -> _ErrorEncoder:
    def encode(error: ErrorEvent, *, model: str, turn_number: int, sequence: int) -> bytes:
        payload = _json({"message": error.message})
        return exception_message(bedrock_exception_type(dialect, error.code), payload)

    return encode


# --------------------------------------------------------------------------------------
# Public entry points.

_Encoder = Callable[..., list[_Event]]
_ErrorEncoder = Callable[..., bytes]

_ENCODERS: dict[str, tuple[_Encoder, _ErrorEncoder]] = {
    "openai_chat": (_chat, _chat_error),
    "openai_responses": (_responses, _responses_error),
    "anthropic": (_anthropic, _anthropic_error),
    "gemini": (_gemini, _gemini_error),
    "bedrock_converse": (_converse, _exception("bedrock_converse")),
    "bedrock_anthropic": (_bedrock_anthropic, _exception("bedrock_anthropic")),
}

_EVENT_STREAM_DIALECTS = frozenset({"bedrock_converse", "bedrock_anthropic"})

# Dialects whose every call opens with an empty argument fragment (no text arrived yet).
_EMPTY_FIRST_FRAGMENT = frozenset({"anthropic", "bedrock_converse", "bedrock_anthropic"})


def media_type(dialect: str) -> str:
    """The content type of a streamed answer in ``dialect``.

    Raises:
        UnknownDialectError: an unknown dialect.
    """
    _encoders(dialect)
    if dialect in _EVENT_STREAM_DIALECTS:
        return MEDIA_TYPE
    return "text/event-stream; charset=utf-8"


def _encoders(dialect: str) -> tuple[_Encoder, _ErrorEncoder]:
    try:
        return _ENCODERS[dialect]
    except KeyError:
        raise UnknownDialectError(dialect) from None


def encode_turn(
    dialect: str,
    turn: Turn,
    *,
    model: str = "sim-model-1",
    turn_number: int = 0,
    encrypted_reasoning: bool = True,
) -> list[bytes]:
    """The SSE events a provider of ``dialect`` sends for ``turn``, one framed event each.

    Text comes first, then the calls in order; text and argument JSON are split into
    ``turn.fragment_size``-character deltas (Gemini sends each call whole). The turn's
    thinking comes first and before the calls it precedes (:mod:`.reasoning`);
    ``encrypted_reasoning`` says whether Responses reasoning items carry their
    ``encrypted_content`` (the request's ``include`` asked for it). ``turn.fault`` is
    ignored here: see :func:`encode_cut_in_arguments` and :func:`encode_error_event`.

    Raises:
        UnknownDialectError: an unknown dialect.
        UsageError: a fragment size below 1.
    """
    encoder, _ = _encoders(dialect)
    events = encoder(turn, model=model, turn_number=turn_number, encrypted=encrypted_reasoning)
    return [event.data for event in events]


def encode_cut_in_arguments(
    dialect: str, turn: Turn, *, model: str = "sim-model-1", turn_number: int = 0
) -> list[bytes]:
    """The first events of ``turn``, ending in the middle of the first call's arguments.

    The last chunk is the first half of an argument event (so it never dispatches); where
    the call's arguments span several events, the first of them is sent whole before it.
    On Bedrock's binary event stream, whose half message is no event at all (a framing
    error, which :func:`encode_cut` gives), the stream ends after the first message that
    carries argument text, whole. No end marker follows: a client must report a
    truncated stream.

    Raises:
        UnknownDialectError: an unknown dialect.
        UsageError: the turn has no call to cut.
    """
    encoder, _ = _encoders(dialect)
    events = encoder(turn, model=model, turn_number=turn_number)
    positions = [n for n, event in enumerate(events) if event.args_of == 0]
    # A leading empty fragment (Anthropic, Bedrock) carries no text: cut where text has
    # arrived.
    if dialect in _EMPTY_FIRST_FRAGMENT:
        positions = positions[1:] or positions
    if not positions:
        raise UsageError("cut_in_arguments needs a turn with at least one call")
    if dialect in _EVENT_STREAM_DIALECTS:
        return [event.data for event in events[: positions[0] + 1]]
    cut = positions[1] if len(positions) > 1 else positions[0]
    head = [event.data for event in events[:cut]]
    half = events[cut].data[: max(1, len(events[cut].data) // 2)]
    return [*head, half]


def encode_error_event(
    dialect: str,
    turn: Turn,
    error: ErrorEvent,
    *,
    model: str = "sim-model-1",
    turn_number: int = 0,
) -> list[bytes]:
    """The first ``error.after_events`` events of ``turn``, then the dialect's in-stream
    error event (Responses adds ``response.failed``, as the API does).

    Raises:
        UnknownDialectError: an unknown dialect.
    """
    encoder, error_encoder = _encoders(dialect)
    head = [e.data for e in encoder(turn, model=model, turn_number=turn_number)]
    head = head[: max(0, error.after_events)]
    tail = error_encoder(error, model=model, turn_number=turn_number, sequence=len(head))
    return [*head, tail]


def encode_cut(
    dialect: str, turn: Turn, cut: Cut, *, model: str = "sim-model-1", turn_number: int = 0
) -> list[bytes]:
    """The events of ``turn`` up to ``cut``: its first ``after_events`` events, then the
    first ``extra_bytes`` bytes of the next; never the whole turn (see :class:`Cut`).

    Raises:
        UnknownDialectError: an unknown dialect.
    """
    encoder, _ = _encoders(dialect)
    events = [e.data for e in encoder(turn, model=model, turn_number=turn_number)]
    whole = min(cut.after_events, len(events) - 1)
    last = events[whole]
    return [*events[:whole], last[: min(cut.extra_bytes, len(last) - 1)]]


def encode_corrupted(
    dialect: str,
    turn: Turn,
    fault: CorruptedCRC,
    *,
    model: str = "sim-model-1",
    turn_number: int = 0,
) -> list[bytes]:
    """The events of ``turn``, one of them with a byte inverted (see :class:`CorruptedCRC`).

    Raises:
        UnknownDialectError: an unknown dialect.
        UsageError: the offset is outside the event.
    """
    encoder, _ = _encoders(dialect)
    events = [e.data for e in encoder(turn, model=model, turn_number=turn_number)]
    at = min(fault.after_events, len(events) - 1)
    events[at] = flip_byte(events[at], fault.offset)
    return events


# --------------------------------------------------------------------------------------
# HTTP error bodies, in each provider's shape.

_OPENAI_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
    500: ("server_error", None),
    503: ("server_error", None),
    529: ("server_error", "overloaded"),
}
_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_DEFAULT_MESSAGES = {
    400: "Invalid request.",
    401: "Invalid API key.",
    404: "Not found.",
    429: "Rate limit reached. Please try again later.",
    500: "The server had an error while processing your request.",
    503: "The service is unavailable.",
    529: "Overloaded",
}


# Bedrock's error types by HTTP status (the Bedrock Runtime API reference, "Errors"), sent
# in the x-amzn-ErrorType header with the service's namespace.
_BEDROCK_ERRORS = {
    400: "ValidationException",
    401: "UnrecognizedClientException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
_BEDROCK_NAMESPACE = "http://internal.amazon.com/coral/com.amazon.bedrock/"
_BEDROCK_MESSAGES = {
    429: "Too many requests, please wait before trying again.",
    503: "Bedrock is unable to process your request.",
}


def bedrock_error_type(status: int) -> str:
    """The error type Bedrock names an HTTP error ``status`` with (``ThrottlingException``
    for 429...); the server's transient type for the other 5xx, ``ValidationException``
    for the other 4xx."""
    if status in _BEDROCK_ERRORS:
        return _BEDROCK_ERRORS[status]
    return "ServiceUnavailableException" if status >= 500 else "ValidationException"


def error_headers(dialect: str, status: int) -> list[tuple[bytes, bytes]]:
    """The headers a provider of ``dialect`` adds to an HTTP error ``status``: Bedrock's
    ``x-amzn-ErrorType`` (``ThrottlingException:http://internal.amazon.com/coral/...``),
    which its SDKs read the error's type from; none for the others.

    Raises:
        UnknownDialectError: an unknown dialect.
    """
    _encoders(dialect)
    if dialect not in _EVENT_STREAM_DIALECTS:
        return []
    kind = bedrock_error_type(status) + ":" + _BEDROCK_NAMESPACE
    return [(b"x-amzn-errortype", kind.encode())]


def error_body(dialect: str, status: int, message: str = "") -> bytes:
    """The JSON body a provider of ``dialect`` answers an HTTP error ``status`` with.

    OpenAI ``{"error": {"message", "type", "param", "code"}}``; Anthropic
    ``{"type": "error", "error": {"type", "message"}}``; Gemini
    ``{"error": {"code", "message", "status"}}``; Bedrock ``{"message"}`` (its type in
    a header: :func:`error_headers`).

    Raises:
        UnknownDialectError: an unknown dialect.
    """
    _encoders(dialect)
    if dialect in _EVENT_STREAM_DIALECTS:
        default = _BEDROCK_MESSAGES.get(status) or _DEFAULT_MESSAGES.get(status, f"HTTP {status}")
        return _json({"message": message or default})
    text = message or _DEFAULT_MESSAGES.get(status, f"HTTP {status}")
    if dialect == "anthropic":
        kind = _ANTHROPIC_TYPES.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        return _json({"type": "error", "error": {"type": kind, "message": text}})
    if dialect == "gemini":
        name = _GOOGLE_STATUS.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")
        return _json({"error": {"code": status, "message": text, "status": name}})
    kind, code = _OPENAI_TYPES.get(
        status, ("server_error", None) if status >= 500 else ("invalid_request_error", None)
    )
    return _json({"error": {"message": text, "type": kind, "param": None, "code": code}})


__all__ = [
    "BEDROCK_EXCEPTIONS",
    "bedrock_error_type",
    "bedrock_exception_type",
    "encode_corrupted",
    "encode_cut",
    "encode_cut_in_arguments",
    "encode_error_event",
    "encode_turn",
    "error_body",
    "error_headers",
    "media_type",
]
