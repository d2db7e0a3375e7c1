"""Issue 9's holes in the core, each reproduced as an attacker sent it, and its fix.

Every test here failed on the code before the fix (checked by running this file against
it); the general defences are in test_limits.py, test_prefix_property.py and
test_sse_reference.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sse_toolcalls import (
    Dialect,
    LimitExceededError,
    MalformedStreamError,
    SSEFramer,
    StreamParser,
    ToolCall,
    ToolCallParser,
    TruncatedStreamError,
)
from sse_toolcalls.dialects._common import parse_arguments


def sse(*payloads: dict[str, Any], names: bool = False) -> bytes:
    out = b""
    for payload in payloads:
        if names:
            out += f"event: {payload['type']}\n".encode()
        out += b"data: " + json.dumps(payload).encode() + b"\n\n"
    return out


def feed_each_event(dialect: Dialect, raw: bytes) -> tuple[list[ToolCall], ToolCallParser]:
    """Feed one event at a time; return what feed() released, and the parser."""
    parser = ToolCallParser(dialect)
    released: list[ToolCall] = []
    for block in raw.split(b"\n\n")[:-1]:
        released += parser.feed(block + b"\n\n")
    return released, parser


# -- 1. Chat: a finish_reason on every chunk proves nothing ------------------------------


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


HEADER = {
    "tool_calls": [
        {"index": 0, "id": "c1", "function": {"name": "cancel_subscription", "arguments": ""}}
    ]
}


def test_chat_cut_after_a_call_name_with_a_finish_reason_is_truncated() -> None:
    parser = ToolCallParser("openai_chat")
    assert parser.feed(sse(chunk(HEADER, "tool_calls"))) == []
    with pytest.raises(TruncatedStreamError) as info:
        parser.finish()
    assert info.value.completed == ()
    assert [p.name for p in info.value.partial] == ["cancel_subscription"]


def test_chat_proxy_finish_reason_on_every_chunk_cut_anywhere_is_truncated() -> None:
    args = {"tool_calls": [{"index": 0, "function": {"arguments": '{"id": 7}'}}]}
    role = {"role": "assistant", "content": ""}
    for chunks in (
        [chunk(role, "stop")],
        [chunk(role, "stop"), chunk(HEADER, "stop")],
        [chunk(role, "stop"), chunk(HEADER, "stop"), chunk(args, "stop")],
    ):
        parser = ToolCallParser("openai_chat")
        parser.feed(sse(*chunks))
        with pytest.raises(TruncatedStreamError):
            parser.finish()


def test_chat_closing_chunk_without_done_releases_whole_arguments() -> None:
    args = {"tool_calls": [{"index": 0, "function": {"arguments": '{"id": 7}'}}]}
    raw = sse(
        chunk(HEADER, "stop"),
        chunk(args, "stop"),
        chunk({}, "tool_calls"),
        {"choices": [], "usage": {"total_tokens": 3}},
    )
    parser = ToolCallParser("openai_chat")
    calls = parser.feed(raw) + parser.finish()
    assert [(c.name, c.args) for c in calls] == [("cancel_subscription", {"id": 7})]


def test_chat_closing_chunk_without_done_but_unparsable_or_empty_arguments_is_truncated() -> None:
    for text in ("", '{"id": '):
        parts = [chunk(HEADER)]
        if text:
            parts.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": text}}]}))
        parts.append(chunk({}, "tool_calls"))
        parser = ToolCallParser("openai_chat")
        parser.feed(sse(*parts))
        with pytest.raises(TruncatedStreamError):
            parser.finish()


# -- 2. Token limits: a closed block or a done item is not a whole call -------------------


def anthropic_tool(input_: dict[str, Any], *deltas: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"usage": {"input_tokens": 1}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "tool_use",
                "id": "t1",
                "name": "delete_all",
                "input": input_,
            },
        },
    ]
    events += [
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": d},
        }
        for d in deltas
    ]
    events.append({"type": "content_block_stop", "index": 0})
    return events


@pytest.mark.parametrize("deltas", [(), ("{}",), ('{"a": 1}',)])
def test_anthropic_block_closed_then_max_tokens_is_a_partial_call(deltas: tuple[str, ...]) -> None:
    raw = sse(
        *anthropic_tool({}, *deltas),
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}},
        {"type": "message_stop"},
        names=True,
    )
    parser = ToolCallParser("anthropic")
    released: list[ToolCall] = []
    with pytest.raises(TruncatedStreamError) as info:
        for block in raw.split(b"\n\n")[:-1]:
            released += parser.feed(block + b"\n\n")
    assert released == []
    assert info.value.reason == "max_tokens"
    assert info.value.completed == ()
    assert [p.call_id for p in info.value.partial] == ["t1"]


def test_anthropic_block_is_released_by_the_next_block_or_a_normal_stop_reason() -> None:
    events = anthropic_tool({}, '{"a": 1}')
    released, parser = feed_each_event("anthropic", sse(*events, names=True))
    assert released == []  # the stop reason may still be max_tokens
    released = parser.feed(
        sse(
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "text", "text": ""},
            },
            names=True,
        )
    )
    assert [c.args for c in released] == [{"a": 1}]

    released, parser = feed_each_event("anthropic", sse(*events, names=True))
    released = parser.feed(
        sse({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}, names=True)
    )
    assert [c.args for c in released] == [{"a": 1}]


def responses_call(status: str) -> list[dict[str, Any]]:
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "write",
        "arguments": "",
    }
    return [
        {"type": "response.created", "response": {"status": "in_progress"}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**item, "status": "in_progress"},
        },
        {
            "type": "response.function_call_arguments.delta",
            "item_id": "fc_1",
            "output_index": 0,
            "delta": '{"path": "/etc',
        },
        {
            "type": "response.function_call_arguments.done",
            "item_id": "fc_1",
            "output_index": 0,
            "arguments": '{"path": "/etc',
        },
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {**item, "arguments": '{"path": "/etc', "status": status},
        },
    ]


def test_responses_incomplete_item_is_a_partial_call_of_the_incomplete_response() -> None:
    released, parser = feed_each_event(
        "openai_responses", sse(*responses_call("incomplete"), names=True)
    )
    assert released == []
    with pytest.raises(TruncatedStreamError) as info:
        parser.feed(
            sse(
                {
                    "type": "response.incomplete",
                    "response": {"incomplete_details": {"reason": "max_output_tokens"}},
                },
                names=True,
            )
        )
    assert info.value.reason == "max_tokens"
    assert info.value.completed == ()
    assert [(p.call_id, p.raw_arguments) for p in info.value.partial] == [
        ("call_1", '{"path": "/etc')
    ]


def test_responses_incomplete_item_is_never_released_even_by_a_completed_response() -> None:
    released, parser = feed_each_event(
        "openai_responses", sse(*responses_call("incomplete"), names=True)
    )
    with pytest.raises(TruncatedStreamError):
        parser.feed(
            sse(
                {"type": "response.completed", "response": {"status": "completed", "output": []}},
                names=True,
            )
        )
    assert released == []


def test_responses_arguments_done_alone_waits_for_the_item_or_the_response() -> None:
    events = responses_call("completed")
    released, parser = feed_each_event("openai_responses", sse(*events[:-1], names=True))
    assert released == []
    with pytest.raises(TruncatedStreamError) as info:
        parser.finish()
    assert info.value.completed == ()
    # The completed response proves the call whole, also without output_item.done.
    released, parser = feed_each_event("openai_responses", sse(*events[:-1], names=True))
    done = parser.feed(
        sse(
            {"type": "response.completed", "response": {"status": "completed", "output": []}},
            names=True,
        )
    )
    assert [c.raw_arguments for c in done] == ['{"path": "/etc']


def gemini(*parts: dict[str, Any], finish: str) -> bytes:
    return sse(
        {
            "candidates": [
                {
                    "index": 0,
                    "content": {"role": "model", "parts": list(parts)},
                    "finishReason": finish,
                }
            ]
        }
    )


def test_gemini_last_call_of_a_max_tokens_event_is_partial() -> None:
    first = {"functionCall": {"name": "a", "args": {"x": 1}}}
    last = {"functionCall": {"name": "b", "args": {"path": "/"}}}
    with pytest.raises(TruncatedStreamError) as info:
        ToolCallParser("gemini").feed(gemini(first, last, finish="MAX_TOKENS"))
    assert [c.name for c in info.value.completed] == ["a"]
    assert [(p.name, p.raw_arguments) for p in info.value.partial] == [("b", '{"path":"/"}')]
    # Text after the call proves generation went past it.
    with pytest.raises(TruncatedStreamError) as info:
        ToolCallParser("gemini").feed(gemini(first, {"text": "and"}, finish="MAX_TOKENS"))
    assert [c.name for c in info.value.completed] == ["a"]
    assert info.value.partial == ()


# -- 3. Strict arguments, wherever the digits are -----------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"v":1e400}',
        '{"v":1e400,"acct":12345678901234567890}',
        '{"v":-1e400,"acct":12345678901234567890}',
        '{"v":"\\ud800"}',
        '{"v":"\\ud800","acct":12345678901234567890}',
        '{"v":"\\udc00x","acct":12345678901234567890}',
        '{"v":NaN,"acct":12345678901234567890}',
        '{"v":-Infinity,"acct":12345678901234567890}',
        '{"v":1' + "0" * 400 + "}",
    ],
)
def test_arguments_strictness_does_not_depend_on_a_long_number(text: str) -> None:
    args, error = parse_arguments(text)
    assert args == {}
    assert error is not None


def test_long_numbers_stay_exact_and_surrogate_pairs_are_text() -> None:
    args, error = parse_arguments(
        '{"acct": 12345678901234567890123, "e": "\\ud83d\\ude00", "f": 1.5}'
    )
    assert error is None
    assert args == {"acct": 12345678901234567890123, "e": "\U0001f600", "f": 1.5}


def test_anthropic_start_input_is_strict_with_a_long_number_too() -> None:
    for value in ("1e400", '"\\ud800"'):
        data = (
            '{"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
            '"id":"t","name":"f","input":{"v":' + value + ',"n":12345678901234567890}}}'
        )
        with pytest.raises(MalformedStreamError):
            ToolCallParser("anthropic").feed(
                b"event: content_block_start\ndata: " + data.encode() + b"\n\n"
            )


# -- 4. Only our exceptions leave the core -------------------------------------------------


def deep_object(depth: int) -> str:
    """JSON text of an object nested ``depth`` levels (the outer object is level 1)."""
    return '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1)


def test_deep_arguments_objects_raise_our_error_in_every_dialect() -> None:
    deep = deep_object(1000)
    streams: dict[Dialect, bytes] = {
        "openai_chat": b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":%s}}]}}]}\n\n'
        % deep.encode(),
        "anthropic": b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":%s}}\n\n'
        % deep.encode(),
        "gemini": b'data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":%s}}]},"finishReason":"STOP"}]}\n\n'
        % deep.encode(),
    }
    for dialect, raw in streams.items():
        for parser in (ToolCallParser(dialect), ToolCallParser(None)):
            with pytest.raises(LimitExceededError) as info:
                parser.feed(raw)
            assert info.value.limit_name == "MAX_EVENT_DEPTH"


def test_gemini_partial_args_path_of_2000_steps_raises_our_error() -> None:
    raw = partial_args_stream({"jsonPath": "$" + ".a" * 2000, "numberValue": 1})
    with pytest.raises(LimitExceededError) as info:
        ToolCallParser("gemini").feed(raw)
    assert info.value.limit_name == "MAX_PARTIAL_PATH_STEPS"


def test_huge_retry_field_raises_our_error() -> None:
    with pytest.raises(LimitExceededError) as info:
        SSEFramer().feed(b"retry: " + b"9" * 5000 + b"\n\n")
    assert info.value.limit_name == "MAX_RETRY_DIGITS"


def test_anthropic_text_that_is_not_a_string_is_not_text() -> None:
    raw = sse(
        {"type": "message_start", "message": {}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": 5}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": ["x"]}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
        names=True,
    )
    parser = StreamParser("anthropic")
    events = parser.feed(raw) + parser.finish()
    assert events[-1].text == ""  # type: ignore[union-attr]


def test_finish_has_the_same_guard_as_feed(monkeypatch: pytest.MonkeyPatch) -> None:
    from sse_toolcalls.dialects.openai_chat.stream import ChatReassembler

    def broken(self: ChatReassembler) -> list[Any]:
        raise RuntimeError("a bug of ours")

    monkeypatch.setattr(ChatReassembler, "finish", broken)
    parser = ToolCallParser("openai_chat")
    parser.feed(b"data: [DONE]\n\n")
    with pytest.raises(MalformedStreamError) as info:
        parser.finish()
    assert isinstance(info.value.__cause__, RuntimeError)


def test_any_exception_in_a_handler_becomes_ours_with_its_cause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from sse_toolcalls.dialects.openai_chat.stream import ChatReassembler

    def broken(self: ChatReassembler, choice: dict[str, Any]) -> None:
        raise RecursionError("deep")

    monkeypatch.setattr(ChatReassembler, "_choice", broken)
    with pytest.raises(MalformedStreamError) as info:
        ToolCallParser("openai_chat").feed(sse(chunk({"content": "hi"})))
    assert isinstance(info.value.__cause__, RecursionError)


# -- 6. The framer's event + data batch path is exact ------------------------------------


def test_event_data_batch_with_two_data_lines_and_an_event_only_block() -> None:
    raw = b"event: a\ndata: x\ndata: y\n\nevent: z\n\n"
    whole = SSEFramer().feed(raw)
    framer = SSEFramer()
    single = [e for i in range(len(raw)) for e in framer.feed(raw[i : i + 1])]
    assert [(e.event, e.data) for e in whole] == [("a", "x\ny")]
    assert single == whole


# -- 7. Gemini partialArgs: memory and work bounded by bytes received ---------------------


def _function_call(call: dict[str, Any], **candidate: Any) -> dict[str, Any]:
    return {"candidates": [{"content": {"parts": [{"functionCall": call}]}, **candidate}]}


def partial_args_stream(
    *entries: dict[str, Any], last: list[dict[str, Any]] | None = None
) -> bytes:
    """A Gemini call streamed as ``partialArgs``: one event per entry, then the closing
    event (with ``last`` as its own ``partialArgs``, when given)."""
    closing = {} if last is None else {"partialArgs": last}
    return sse(
        _function_call({"name": "f", "willContinue": True}),
        *[_function_call({"partialArgs": [entry], "willContinue": True}) for entry in entries],
        _function_call(closing, finishReason="STOP"),
    )


def null_at(*paths: str) -> list[dict[str, Any]]:
    return [{"jsonPath": path, "nullValue": None} for path in paths]


def test_gemini_partial_args_far_index_is_refused_not_padded() -> None:
    with pytest.raises(LimitExceededError) as info:
        ToolCallParser("gemini").feed(partial_args_stream(*null_at("$.a[10000]", "$.a[20000]")))
    assert info.value.limit_name == "MAX_PARTIAL_ARRAY_GAP"


def test_gemini_long_string_in_many_pieces_is_joined_once() -> None:
    pieces = ["x" * 10] * 5000
    raw = partial_args_stream(
        *[{"jsonPath": "$.s", "stringValue": p, "willContinue": True} for p in pieces],
        last=[{"jsonPath": "$.s", "stringValue": "!"}],
    )
    [call] = ToolCallParser("gemini").feed(raw)
    assert call.args == {"s": "x" * 50000 + "!"}


def test_gemini_streamed_call_closed_by_the_max_tokens_event_is_partial() -> None:
    raw = sse(
        {
            "candidates": [
                {"content": {"parts": [{"functionCall": {"name": "write", "willContinue": True}}]}}
            ]
        },
        {
            "candidates": [
                {
                    "content": {
                        "parts": [
                            {
                                "functionCall": {
                                    "partialArgs": [
                                        {
                                            "jsonPath": "$.path",
                                            "stringValue": "/et",
                                            "willContinue": True,
                                        }
                                    ],
                                    "willContinue": True,
                                }
                            }
                        ]
                    }
                }
            ]
        },
        {
            "candidates": [
                {
                    "content": {
                        "parts": [
                            {
                                "functionCall": {
                                    "partialArgs": [{"jsonPath": "$.path", "stringValue": "c"}]
                                }
                            }
                        ]
                    },
                    "finishReason": "MAX_TOKENS",
                }
            ]
        },
    )
    with pytest.raises(TruncatedStreamError) as info:
        ToolCallParser("gemini").feed(raw)
    assert info.value.completed == ()
    assert [(p.name, p.raw_arguments) for p in info.value.partial] == [("write", '{"path":"/etc"}')]


def test_anthropic_block_started_over_an_open_one_is_malformed_not_a_lost_call() -> None:
    events = anthropic_tool({})[:2]  # message_start, tool_use block 0 open
    second = {
        "type": "content_block_start",
        "index": 0,
        "content_block": {"type": "tool_use", "id": "t2", "name": "g", "input": {}},
    }
    with pytest.raises(MalformedStreamError):
        ToolCallParser("anthropic").feed(sse(*events, second, names=True))
