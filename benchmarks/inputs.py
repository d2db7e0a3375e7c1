"""Seeded, deterministic benchmark inputs: realistic response bodies for each wire format.

Every generator takes a ``seed`` and returns the same bytes for the same arguments, so the
tests and the benchmarks share one source of truth. The envelopes copy the field layout of
real captured streams (``/work/shared/external_streams``): Chat Completions chunks carry the
id, model, fingerprint and ``obfuscation`` padding of every real chunk; Responses events
carry ``item_id``, ``output_index`` and ``sequence_number``; Anthropic events come with their
``event:`` line and a ``ping``; Gemini uses CRLF line endings as Google's servers do.

A :class:`Stream` also records the calls a correct parser must produce, so each
implementation's output can be checked before it is timed.
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from sse_toolcalls import UnknownDialectError

__all__ = [
    "ExpectedCall",
    "TOOL_NAMES",
    "Stream",
    "W2_DIALECTS",
    "big_call",
    "chunked",
    "framing_stream",
    "parallel_calls",
]

W2_DIALECTS = ("openai_chat", "openai_responses", "anthropic", "gemini")

_WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "stream",
    "token",
    "chunk",
    "parser",
    "event",
    "buffer",
    "socket",
    "retry",
    "schema",
    "tool",
    "call",
    "result",
    "weather",
    "forecast",
    "city",
    "temperature",
    "invoice",
    "customer",
    "order",
    "report",
    "summary",
    "München",
    "naïve",
    "café",
    "東京",
    "データ",
    "✓",
    "émigré",
    "Zürich",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpectedCall:
    """A call a correct parser must return."""

    call_id: str | None
    """The provider's id (``None`` only for Gemini calls sent without one)."""

    name: str
    """The function name."""

    args: dict[str, Any]
    """The parsed arguments."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Stream:
    """One HTTP response body and what it means."""

    dialect: str
    """The wire format."""

    body: bytes
    """The whole response body, as the server sends it."""

    calls: tuple[ExpectedCall, ...]
    """The complete calls, in stream order."""

    n_events: int
    """How many SSE events the body holds."""

    arg_bytes: int
    """Total size of the calls' argument JSON text, in UTF-8 bytes."""


def chunked(body: bytes, size: int) -> list[bytes]:
    """Split ``body`` into pieces of ``size`` bytes (the last may be shorter).

    Splits ignore line, event and UTF-8 character boundaries, as TCP segments do.
    """
    return [body[i : i + size] for i in range(0, len(body), size)]


# --------------------------------------------------------------------------------------
# Argument payloads


def _text(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n_words))


def _ident(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def make_args(rng: random.Random, target_bytes: int) -> dict[str, Any]:
    """A realistic arguments object of about ``target_bytes`` of JSON.

    Mixes what real tools receive: a path, code-like text with newlines, quotes and
    backslashes (escaped on the wire), non-ASCII text, numbers, booleans, nulls, a nested
    list of records.
    """
    args: dict[str, Any] = {
        "path": f"/srv/app/{_ident(rng, 8)}/{rng.choice(_WORDS)}.py",
        "overwrite": rng.random() < 0.5,
        "mode": None,
        "line": rng.randint(1, 5000),
        "ratio": round(rng.random() * 100, 3),
    }
    records: list[dict[str, Any]] = []
    args["records"] = records
    code_lines: list[str] = []
    size = len(orjson.dumps(args))
    while size < target_bytes:
        if rng.random() < 0.5:
            line = (
                f'    {_ident(rng, 5)} = "{_text(rng, 3)}"  # {_text(rng, 2)}\\ "q"\t'
                if rng.random() < 0.5
                else f"def {_ident(rng, 6)}(x):\n        return x * {rng.randint(0, 99)}"
            )
            code_lines.append(line)
            size += len(line.encode()) + 8
        else:
            record = {
                "id": rng.randint(0, 10**9),
                "label": _text(rng, rng.randint(1, 5)),
                "ok": rng.random() < 0.7,
                "score": round(rng.uniform(-1000, 1000), 4),
            }
            records.append(record)
            size += len(orjson.dumps(record)) + 1
    args["content"] = "\n".join(code_lines)
    return args


def _fragments(rng: random.Random, text: str, low: int, high: int) -> Iterator[str]:
    """Cut ``text`` into pieces of ``low`` to ``high`` characters, as model tokens are."""
    i = 0
    while i < len(text):
        n = rng.randint(low, high)
        yield text[i : i + n]
        i += n


def _fixed_fragments(text: str, n: int) -> Iterator[str]:
    for i in range(0, len(text), n):
        yield text[i : i + n]


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


TOOL_NAMES = (
    "write_file",
    "search_docs",
    "create_invoice",
    "get_weather",
    "run_query",
    "send_email",
    "update_ticket",
    "fetch_url",
)


# --------------------------------------------------------------------------------------
# Chat Completions


class _Chat:
    """Chat Completions chunk writer with the envelope of a real gpt-4o-mini stream."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.head = (
            '{"id":"chatcmpl-' + _ident(rng, 29) + '","object":"chat.completion.chunk",'
            '"created":1782321910,"model":"gpt-4o-mini-2024-07-18","service_tier":"default",'
            '"system_fingerprint":"fp_59e007eafa","usage":null,"choices":[{"index":0,"delta":'
        )
        self.parts: list[str] = []
        self.n_events = 0
        # Real chunks carry 0 to 16 characters of random ``obfuscation`` padding; a cycle of
        # 61 precomputed pads keeps generation of the 10 MB inputs fast.
        self.pads = [_ident(rng, rng.randint(0, 16)) for _ in range(61)]

    def chunk(self, delta: str, finish: str = "null") -> None:
        pad = self.pads[self.n_events % 61]
        self.parts.append(
            f'data: {self.head}{delta},"logprobs":null,"finish_reason":{finish}}}],'
            f'"obfuscation":"{pad}"}}\n\n'
        )
        self.n_events += 1

    def end(self) -> None:
        self.parts.append(
            'data: {"id":"chatcmpl-x","object":"chat.completion.chunk","created":1782321910,'
            '"model":"gpt-4o-mini-2024-07-18","choices":[],"usage":{"prompt_tokens":106,'
            '"completion_tokens":50,"total_tokens":156}}\n\ndata: [DONE]\n\n'
        )
        self.n_events += 2

    def body(self) -> bytes:
        return "".join(self.parts).encode()


def _chat_turn(
    rng: random.Random, calls: list[tuple[str, str, str]], text: str, frag: tuple[int, int] | int
) -> tuple[bytes, int]:
    w = _Chat(rng)
    w.chunk('{"role":"assistant","content":"","refusal":null}')
    for piece in _fragments(rng, text, 3, 8) if text else ():
        w.chunk('{"content":' + _dumps(piece) + "}")
    for index, (call_id, name, arguments) in enumerate(calls):
        w.chunk(
            f'{{"tool_calls":[{{"index":{index},"id":"{call_id}","type":"function",'
            f'"function":{{"name":"{name}","arguments":""}}}}]}}'
        )
        pieces = (
            _fixed_fragments(arguments, frag)
            if isinstance(frag, int)
            else _fragments(rng, arguments, *frag)
        )
        prefix = f'{{"tool_calls":[{{"index":{index},"function":{{"arguments":'
        for piece in pieces:
            w.chunk(prefix + _dumps(piece) + "}}]}")
    w.chunk("{}", '"tool_calls"' if calls else '"stop"')
    w.end()
    return w.body(), w.n_events


# --------------------------------------------------------------------------------------
# Responses


def _responses_turn(
    rng: random.Random, calls: list[tuple[str, str, str]], frag: tuple[int, int] | int
) -> tuple[bytes, int]:
    resp_id = "resp_" + _ident(rng, 50)
    seq = 0
    out: list[str] = []

    def event(payload: dict[str, Any]) -> None:
        nonlocal seq
        payload["sequence_number"] = seq
        seq += 1
        out.append(f"event: {payload['type']}\ndata: {_dumps(payload)}\n\n")

    def response(status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": resp_id,
            "object": "response",
            "created_at": 1782321684,
            "status": status,
            "background": False,
            "error": None,
            "incomplete_details": None,
            "instructions": None,
            "max_output_tokens": 4000,
            "model": "gpt-4o-mini-2024-07-18",
            "output": output,
            "parallel_tool_calls": True,
            "previous_response_id": None,
            "reasoning": {"effort": None, "summary": None},
            "store": False,
            "temperature": 1.0,
            "text": {"format": {"type": "text"}, "verbosity": "medium"},
            "tool_choice": "auto",
            "tools": [],
            "top_p": 1.0,
            "truncation": "disabled",
            "usage": None,
            "metadata": {},
        }

    event({"type": "response.created", "response": response("in_progress", [])})
    event({"type": "response.in_progress", "response": response("in_progress", [])})
    done_items: list[dict[str, Any]] = []
    for index, (call_id, name, arguments) in enumerate(calls):
        item_id = "fc_" + _ident(rng, 50)
        item = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": call_id,
            "name": name,
        }
        event({"type": "response.output_item.added", "item": item, "output_index": index})
        pieces = (
            _fixed_fragments(arguments, frag)
            if isinstance(frag, int)
            else _fragments(rng, arguments, *frag)
        )
        for piece in pieces:
            event(
                {
                    "type": "response.function_call_arguments.delta",
                    "delta": piece,
                    "item_id": item_id,
                    "obfuscation": _ident(rng, rng.randint(0, 12)),
                    "output_index": index,
                }
            )
        event(
            {
                "type": "response.function_call_arguments.done",
                "arguments": arguments,
                "item_id": item_id,
                "output_index": index,
            }
        )
        done = {**item, "status": "completed", "arguments": arguments}
        done_items.append(done)
        event({"type": "response.output_item.done", "item": done, "output_index": index})
    event({"type": "response.completed", "response": response("completed", done_items)})
    return "".join(out).encode(), seq


# --------------------------------------------------------------------------------------
# Anthropic Messages


def _anthropic_turn(
    rng: random.Random, calls: list[tuple[str, str, str]], text: str, frag: tuple[int, int] | int
) -> tuple[bytes, int]:
    out: list[str] = []

    def event(kind: str, data: str) -> None:
        out.append(f"event: {kind}\ndata: {data}\n\n")

    event(
        "message_start",
        '{"type":"message_start","message":{"model":"claude-sonnet-4-20250514","id":"msg_'
        + _ident(rng, 24)
        + '","type":"message","role":"assistant","content":[],"stop_reason":null,'
        '"stop_sequence":null,"usage":{"input_tokens":502,"cache_creation_input_tokens":0,'
        '"cache_read_input_tokens":0,"output_tokens":1}}}',
    )
    block = 0
    if text:
        event(
            "content_block_start",
            '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
        )
        event("ping", '{"type": "ping"}')
        for piece in _fragments(rng, text, 3, 8):
            event(
                "content_block_delta",
                '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":'
                + _dumps(piece)
                + "}}",
            )
        event("content_block_stop", '{"type":"content_block_stop","index":0}')
        block = 1
    for call_id, name, arguments in calls:
        event(
            "content_block_start",
            f'{{"type":"content_block_start","index":{block},"content_block":'
            f'{{"type":"tool_use","id":"{call_id}","name":"{name}","input":{{}}}}}}',
        )
        head = (
            f'{{"type":"content_block_delta","index":{block},"delta":'
            '{"type":"input_json_delta","partial_json":'
        )
        event("content_block_delta", head + '""}}')
        pieces = (
            _fixed_fragments(arguments, frag)
            if isinstance(frag, int)
            else _fragments(rng, arguments, *frag)
        )
        for piece in pieces:
            event("content_block_delta", head + _dumps(piece) + "}}")
        event("content_block_stop", f'{{"type":"content_block_stop","index":{block}}}')
        block += 1
    stop = "tool_use" if calls else "end_turn"
    event(
        "message_delta",
        f'{{"type":"message_delta","delta":{{"stop_reason":"{stop}","stop_sequence":null}},'
        f'"usage":{{"output_tokens":{50 + len(out)}}}}}',
    )
    event("message_stop", '{"type":"message_stop"}')
    return "".join(out).encode(), len(out)


# --------------------------------------------------------------------------------------
# Gemini (streamGenerateContent?alt=sse): whole functionCall parts, CRLF line endings.


def _gemini_turn(
    rng: random.Random, calls: list[tuple[str, dict[str, Any]]], text: str
) -> tuple[bytes, int]:
    tail = (
        ',"usageMetadata":{"promptTokenCount":157,"candidatesTokenCount":32,'
        '"totalTokenCount":627},"modelVersion":"gemini-2.5-flash","responseId":"'
        + _ident(rng, 23)
        + '"}'
    )
    out: list[str] = []

    def event(parts: list[dict[str, Any]], finish: str | None = None) -> None:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        out.append('data: {"candidates":[' + _dumps(candidate) + "]" + tail + "\r\n\r\n")

    for piece in _fragments(rng, text, 20, 60) if text else ():
        event([{"text": piece}])
    for i in range(0, len(calls), 2):
        # Gemini often packs several parallel calls into one event's parts.
        event(
            [
                {"functionCall": {"name": name, "args": args, "id": _ident(rng, 8).lower()}}
                for name, args in calls[i : i + 2]
            ]
        )
    event([{"text": ""}], "STOP")
    return "".join(out).encode(), len(out)


def _gemini_expected(body: bytes) -> tuple[ExpectedCall, ...]:
    # The ids above are random per part; read them back rather than threading them through.
    calls: list[ExpectedCall] = []
    for block in body.split(b"\r\n\r\n"):
        if not block:
            continue
        payload = orjson.loads(block[len(b"data: ") :])
        for part in payload["candidates"][0]["content"]["parts"]:
            if "functionCall" in part:
                fc = part["functionCall"]
                calls.append(ExpectedCall(call_id=fc.get("id"), name=fc["name"], args=fc["args"]))
    return tuple(calls)


# --------------------------------------------------------------------------------------
# Public generators


def _call_id(rng: random.Random, dialect: str) -> str:
    if dialect == "anthropic":
        return "toolu_01" + _ident(rng, 22)
    return "call_" + _ident(rng, 24)


def _build(
    dialect: str,
    rng: random.Random,
    args_list: list[dict[str, Any]],
    text: str,
    frag: tuple[int, int] | int,
) -> Stream:
    names = [TOOL_NAMES[i % len(TOOL_NAMES)] for i in range(len(args_list))]
    arg_texts = [_dumps(a) for a in args_list]
    arg_bytes = sum(len(t.encode()) for t in arg_texts)
    if dialect == "gemini":
        body, n = _gemini_turn(rng, list(zip(names, args_list, strict=True)), text)
        return Stream(
            dialect=dialect,
            body=body,
            calls=_gemini_expected(body),
            n_events=n,
            arg_bytes=arg_bytes,
        )
    ids = [_call_id(rng, dialect) for _ in args_list]
    triples = list(zip(ids, names, arg_texts, strict=True))
    if dialect == "openai_chat":
        body, n = _chat_turn(rng, triples, text, frag)
    elif dialect == "openai_responses":
        body, n = _responses_turn(rng, triples, frag)
    elif dialect == "anthropic":
        body, n = _anthropic_turn(rng, triples, text, frag)
    else:
        raise UnknownDialectError(dialect)
    calls = tuple(
        ExpectedCall(call_id=i, name=nm, args=a)
        for i, nm, a in zip(ids, names, args_list, strict=True)
    )
    return Stream(dialect=dialect, body=body, calls=calls, n_events=n, arg_bytes=arg_bytes)


def parallel_calls(
    dialect: str,
    *,
    seed: int = 0xC0FFEE,
    n_calls: int = 8,
    arg_bytes: int = 2000,
    text_chars: int = 200,
) -> Stream:
    """W2: one assistant turn with ``n_calls`` calls of about ``arg_bytes`` each.

    Arguments stream in fragments of 3 to 8 characters (Gemini sends whole parts), after
    ``text_chars`` of visible text (not for Responses, whose text items the floor skips).
    """
    rng = random.Random(f"{seed}:{dialect}:{n_calls}:{arg_bytes}")
    args_list = [make_args(rng, arg_bytes) for _ in range(n_calls)]
    text = _text(rng, max(1, text_chars // 6))[:text_chars] if text_chars else ""
    return _build(dialect, rng, args_list, text, (3, 8))


def big_call(dialect: str, size: int, *, mode: str, seed: int = 0xC0FFEE) -> Stream:
    """W3: one call whose arguments are about ``size`` bytes of JSON.

    ``mode="event"`` sends the whole arguments in one delta event; ``mode="deltas"`` sends
    them as 4-character deltas.
    """
    rng = random.Random(f"{seed}:{dialect}:{size}")
    args = make_args(rng, size)
    if mode == "event":
        frag = 1 << 62
    elif mode == "deltas":
        frag = 4
    else:
        raise ValueError(f"unknown mode {mode!r}")
    return _build(dialect, rng, [args], "", frag)


def framing_stream(*, seed: int = 0xC0FFEE, n_events: int = 20_000) -> Stream:
    """W1: a Chat Completions body of about ``n_events`` events.

    A quarter of the events are text deltas, the rest tool-call deltas of 8 calls, as in an
    agent turn that explains and then calls tools.
    """
    rng = random.Random(f"{seed}:w1:{n_events}")
    # About 5.5 characters per fragment: solve for the argument size that yields n_events.
    n_calls = 8
    per_call = max(40, int(n_events * 0.75 * 5.5 / n_calls))
    args_list = [make_args(rng, per_call) for _ in range(n_calls)]
    text = _text(rng, n_events)[: int(n_events * 0.25 * 5.5)]
    return _build("openai_chat", rng, args_list, text, (3, 8))
