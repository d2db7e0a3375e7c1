"""ToolCallParser and StreamParser: each dialect's rules, quirks of real servers, the end
of stream check, detection, round trips at any split, and fuzzing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls import (
    DIALECTS,
    Dialect,
    FramingError,
    MalformedStreamError,
    ProviderError,
    SSEToolCallsError,
    StreamFinished,
    StreamParser,
    TextDelta,
    ToolCall,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallParser,
    ToolCallStarted,
    TruncatedStreamError,
    UsageError,
    as_dialect,
)

from ..wire import Call, encode
from .test_eventstream_wire import bedrock_event


def parse(raw: bytes, dialect: Dialect | None, chunk: int | None = None) -> list[ToolCall]:
    parser = ToolCallParser(dialect)
    calls: list[ToolCall] = []
    size = chunk or len(raw) or 1
    for i in range(0, len(raw), size):
        calls.extend(parser.feed(raw[i : i + size]))
    calls.extend(parser.finish())
    return calls


def parse_all_ways(raw: bytes, dialect: Dialect | None) -> list[ToolCall]:
    """Whole, byte by byte and in 7-byte chunks: the three must agree."""
    whole = parse(raw, dialect)
    assert parse(raw, dialect, 1) == whole
    assert parse(raw, dialect, 7) == whole
    return whole


def chat(*chunks: Any, done: bool = True) -> bytes:
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks)
    return (body + ("data: [DONE]\n\n" if done else "")).encode()


def tc(**entry: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"tool_calls": [entry]}}]}


def fin(reason: str = "tool_calls") -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


def brief(calls: list[ToolCall]) -> list[tuple[str, dict[str, Any], str | None]]:
    return [(c.name, c.args, c.call_id) for c in calls]


# -- OpenAI Chat Completions and compatible servers ---------------------------------------


def test_chat_parallel_calls_keep_their_own_ids() -> None:
    raw = encode(
        "openai_chat",
        [Call("lookup", {"key": "height"}, "call_h"), Call("lookup", {"key": "weight"}, "call_w")],
    )
    calls = parse_all_ways(raw, "openai_chat")
    assert brief(calls) == [
        ("lookup", {"key": "height"}, "call_h"),
        ("lookup", {"key": "weight"}, "call_w"),
    ]
    assert [c.index for c in calls] == [0, 1]
    assert all(c.provider == "openai_chat" for c in calls)


def test_chat_missing_index_on_every_fragment() -> None:
    # openai-python#2806: Gemini's compatible endpoint sends no index at all.
    raw = chat(
        tc(id="c1", type="function", function={"name": "f", "arguments": '{"a"'}),
        tc(function={"arguments": ": 1}"}),
        fin(),
    )
    assert brief(parse_all_ways(raw, "openai_chat")) == [("f", {"a": 1}, "c1")]


def test_chat_duplicate_index_inside_the_first_chunk() -> None:
    # openai-python#3201: two entries with index 0 in one delta are one call.
    first = {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {"index": 0, "id": "functions.list_files:0", "function": {"name": "ls"}},
                        {"index": 0, "function": {"arguments": ' {"'}},
                    ]
                },
            }
        ]
    }
    raw = chat(first, tc(index=0, function={"arguments": 'path": "."}'}), fin())
    assert brief(parse_all_ways(raw, "openai_chat")) == [
        ("ls", {"path": "."}, "functions.list_files:0")
    ]


def test_chat_first_index_not_zero_and_gaps() -> None:
    raw = chat(
        tc(index=1, id="a", function={"name": "f", "arguments": "{"}),
        tc(index=3, id="b", function={"name": "g", "arguments": "{}"}),
        tc(index=1, function={"arguments": "}"}),
        fin(),
    )
    assert brief(parse_all_ways(raw, "openai_chat")) == [("f", {}, "a"), ("g", {}, "b")]


def test_chat_index_reused_with_new_ids_makes_separate_calls() -> None:
    # litellm#7621 (Groq), vercel/ai#14277 (Ollama): every call at index 0.
    raw = chat(
        tc(index=0, id="call_1", function={"name": "w", "arguments": '{"city": "SF"}'}),
        tc(index=0, id="call_2", function={"name": "w", "arguments": '{"city": "Tokyo"}'}),
        tc(index=0, id="call_3", function={"name": "t", "arguments": "{}"}),
        fin(),
    )
    assert brief(parse_all_ways(raw, "openai_chat")) == [
        ("w", {"city": "SF"}, "call_1"),
        ("w", {"city": "Tokyo"}, "call_2"),
        ("t", {}, "call_3"),
    ]


def test_chat_id_only_first_then_empty_string() -> None:
    raw = chat(
        tc(index=0, id="call_x", function={"name": "f", "arguments": ""}),
        tc(index=0, id="", type="function", function={"arguments": '{"q": 1'}),
        tc(index=0, id="", function={"arguments": "}"}),
        fin(),
    )
    assert brief(parse_all_ways(raw, "openai_chat")) == [("f", {"q": 1}, "call_x")]


def test_chat_empty_string_id_is_kept_when_it_is_all_there_is() -> None:
    raw = chat(tc(id="", function={"name": "f", "arguments": "{}"}), fin("stop"))
    assert brief(parse_all_ways(raw, "openai_chat")) == [("f", {}, "")]


def test_chat_missing_id_is_none() -> None:
    raw = chat(tc(index=0, function={"name": "f", "arguments": "{}"}), fin())
    assert brief(parse_all_ways(raw, "openai_chat")) == [("f", {}, None)]


@pytest.mark.parametrize(
    "names",
    [
        ["final_result", "final_result", "final_result"],  # llama.cpp#13774 repeats it
        ["edit_ex", "isting_file", ""],  # continuedev#5849 streams it in pieces
        ["get", "", ""],  # huggingface/tau#715 sends "" later
    ],
)
def test_chat_name_repeated_split_or_empty(names: list[str]) -> None:
    first, second, third = names
    raw = chat(
        tc(index=0, id="c", function={"name": first}),
        tc(index=0, function={"name": second}),
        tc(index=0, function={"name": third, "arguments": '{"x": 1}'}),
        tc(index=0, function={"name": third, "arguments": ""}),
        fin(),
    )
    expected = {"final_result": "final_result", "edit_ex": "edit_existing_file", "get": "get"}
    assert brief(parse_all_ways(raw, "openai_chat")) == [(expected[first], {"x": 1}, "c")]


def test_chat_name_arriving_late() -> None:
    # vercel/ai#14722: arguments first, the name in a later delta.
    raw = chat(
        tc(index=0, id="c", function={"arguments": '{"command"'}),
        tc(index=0, function={"name": "run", "arguments": ': "ls"}'}),
        fin(),
    )
    assert brief(parse_all_ways(raw, "openai_chat")) == [("run", {"command": "ls"}, "c")]


def test_chat_two_complete_calls_in_one_delta_without_index() -> None:
    chunk = {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {"id": "a1", "function": {"name": "f", "arguments": '{"n": 1}'}},
                        {"id": "b2", "function": {"name": "f", "arguments": '{"n": 2}'}},
                    ]
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    raw = chat(chunk)
    assert brief(parse_all_ways(raw, "openai_chat")) == [
        ("f", {"n": 1}, "a1"),
        ("f", {"n": 2}, "b2"),
    ]


def test_chat_same_index_without_ids_new_name_or_fresh_object_is_a_new_call() -> None:
    # langchain#40392: complete calls without index or usable id, each in its own chunk.
    raw = chat(
        tc(id="", function={"name": "f", "arguments": '{"n": 1}'}),
        tc(id="", function={"name": "f", "arguments": '{"n": 2}'}),
        tc(id="", function={"name": "g", "arguments": "{}"}),
        fin("stop"),
    )
    assert brief(parse_all_ways(raw, "openai_chat")) == [
        ("f", {"n": 1}, ""),
        ("f", {"n": 2}, ""),
        ("g", {}, ""),
    ]


def test_chat_empty_choices_null_choices_comments_and_usage() -> None:
    raw = (
        b": OPENROUTER PROCESSING\n\n"
        + chat({"choices": [], "prompt_filter_results": []}, {"choices": None}, done=False)
        + chat(tc(index=0, id="c", function={"name": "f", "arguments": "{}"}), fin(), done=False)
        + chat({"choices": [], "usage": {"total_tokens": 3}})
    )
    parser = StreamParser("openai_chat")
    events = parser.feed(raw) + parser.finish()
    finished = [e for e in events if isinstance(e, StreamFinished)]
    assert finished[0].usage == {"total_tokens": 3}
    assert finished[0].stop_reason == "tool_calls"
    assert brief(list(finished[0].calls)) == [("f", {}, "c")]


def test_chat_done_inside_argument_strings_is_data() -> None:
    # litellm#31562: a substring test for [DONE] ended the stream early.
    raw = chat(
        tc(index=0, id="c", function={"name": "open", "arguments": '{"path": "[DONE].py"}'}),
        tc(index=1, id="d", function={"name": "open", "arguments": '{"path": "data: [DONE]"}'}),
        fin(),
    )
    assert brief(parse_all_ways(raw, "openai_chat")) == [
        ("open", {"path": "[DONE].py"}, "c"),
        ("open", {"path": "data: [DONE]"}, "d"),
    ]


def test_chat_finish_reason_on_every_chunk_and_twice_gives_each_call_once() -> None:
    # one-api#1408 and hass_local_openai_llm#92.
    raw = chat(
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f"}}]},
                    "finish_reason": "stop",
                }
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"a": '}}]},
                    "finish_reason": "stop",
                }
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "2}"}}]},
                    "finish_reason": "stop",
                }
            ]
        },
        fin(),
        fin(),
    )
    assert brief(parse_all_ways(raw, "openai_chat")) == [("f", {"a": 2}, "c")]


def test_chat_finish_reason_stop_with_calls_and_no_done() -> None:
    raw = chat(tc(id="c", function={"name": "f", "arguments": "{}"}), fin("stop"), done=False)
    assert brief(parse_all_ways(raw, "openai_chat")) == [("f", {}, "c")]


def test_chat_other_choices_never_mix_into_choice_zero() -> None:
    raw = chat(
        {
            "choices": [
                {"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": '{"x":'}}]}},
                {"index": 1, "delta": {"tool_calls": [{"index": 0, "id": "b", "function": {"name": "g", "arguments": '{"y":'}}]}},
            ]
        },
        {
            "choices": [
                {"index": 1, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "2}"}}]}},
                {"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}]}},
            ]
        },
        fin(),
    )  # fmt: skip
    assert brief(parse_all_ways(raw, "openai_chat")) == [("f", {"x": 1}, "a")]


def test_chat_parsable_prefix_is_not_completion() -> None:
    # vercel/ai#13137: '{"a": 1}' parses, but the turn has not ended: nothing is released.
    parser = ToolCallParser("openai_chat")
    assert (
        parser.feed(
            chat(tc(index=0, id="c", function={"name": "f", "arguments": '{"a": 1}'}), done=False)
        )
        == []
    )
    with pytest.raises(TruncatedStreamError) as info:
        parser.finish()
    assert info.value.reason == "eof"
    assert info.value.completed == ()
    assert [(p.name, p.raw_arguments, p.call_id) for p in info.value.partial] == [("f", '{"a": 1}', "c")]  # fmt: skip


def test_chat_length_is_truncation_even_when_finish_says_otherwise_later() -> None:
    raw = chat(tc(index=0, id="c", function={"name": "f", "arguments": '{"path": "/tmp/x", "content": "'}), fin("length"))  # fmt: skip
    with pytest.raises(TruncatedStreamError) as info:
        parse(raw, "openai_chat")
    assert info.value.reason == "max_tokens"
    assert info.value.partial[0].raw_arguments.endswith('"content": "')


def test_chat_tool_calls_finish_with_unterminated_arguments_is_an_invalid_call_not_a_guess() -> (
    None
):
    # vllm#53269: finish_reason "tool_calls" on a call that was cut. Parsed strictly.
    raw = chat(tc(index=0, id="c", function={"name": "write", "arguments": '{"path": "a", "content": "'}), fin())  # fmt: skip
    [call] = parse_all_ways(raw, "openai_chat")
    assert call.args == {}
    assert call.arguments_error is not None
    assert call.raw_arguments == '{"path": "a", "content": "'


def test_chat_error_object_in_chunk_and_error_event() -> None:
    raw = chat(
        {"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded"}}, done=False
    )
    with pytest.raises(ProviderError) as info:
        parse(raw, "openai_chat")
    assert info.value.code == "rate_limit_exceeded"
    assert info.value.retryable
    raw = b'event: error\ndata: {"error":{"message":"bad call","type":"invalid_request_error","code":"tool_use_failed"}}\n\n'  # fmt: skip
    with pytest.raises(ProviderError) as info:
        parse(raw, None)
    assert not info.value.retryable


def test_chat_stray_token_after_a_complete_object_is_invalid_not_emptied() -> None:
    # ironclaw#5951: a lossy parser turned '{"a": 1} x' into {}; we keep it and say why.
    raw = chat(tc(index=0, id="c", function={"name": "f", "arguments": '{"a": 1} x'}), fin())
    [call] = parse(raw, "openai_chat")
    assert call.arguments_error and call.raw_arguments == '{"a": 1} x'


# -- OpenAI Responses ---------------------------------------------------------------------


def responses(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def test_responses_result_key_is_call_id_not_item_id_and_deltas_optional() -> None:
    item = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_A",
        "name": "f",
        "arguments": "",
    }
    raw = responses(
        {"type": "response.created", "response": {}},
        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs"}},
        {"type": "response.output_item.added", "output_index": 1, "item": item},
        {"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 1, "arguments": '{"k": "v"}'},
        {"type": "response.output_item.done", "output_index": 1, "item": item | {"arguments": '{"k": "v"}'}},
        {"type": "response.completed", "response": {"status": "completed", "usage": {"total_tokens": 1}}},
    )  # fmt: skip
    [call] = parse_all_ways(raw, "openai_responses")
    assert (call.name, call.args, call.call_id, call.item_id) == ("f", {"k": "v"}, "call_A", "fc_1")


def test_responses_call_items_that_arrive_whole_are_released_once() -> None:
    # A proxy that sends each item once done (no output_item.added, no deltas), repeating
    # a done event; and a non-streamed answer re-wrapped, its call only in the completed
    # output: each call is released, none twice, in output order.
    first = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "f",
        "arguments": '{"n": 1}',
        "status": "completed",
    }
    second = first | {"id": "fc_2", "call_id": "call_2", "arguments": '{"n": 2}'}
    third = first | {"id": "fc_3", "call_id": "call_3", "arguments": '{"n": 3}'}
    raw = responses(
        {"type": "response.created", "response": {}},
        {"type": "response.output_item.done", "output_index": 0, "item": first},
        {"type": "response.output_item.done", "output_index": 0, "item": first},
        {"type": "response.output_item.done", "output_index": 1, "item": second},
        {"type": "response.completed", "response": {"status": "completed", "output": [first, second, third]}},
    )  # fmt: skip
    calls = parse_all_ways(raw, "openai_responses")
    assert [(c.call_id, c.args, c.index) for c in calls] == [
        ("call_1", {"n": 1}, 0),
        ("call_2", {"n": 2}, 1),
        ("call_3", {"n": 3}, 2),
    ]
    # A whole item with neither an item id nor an output index cannot be told from its
    # own repeat: not released (the completed output names none either), so the turn
    # looks like an answer without that call rather than one with it twice.
    anonymous = {k: v for k, v in first.items() if k != "id"}
    raw = responses(
        {"type": "response.created", "response": {}},
        {"type": "response.output_item.done", "item": anonymous},
        {"type": "response.output_item.done", "item": anonymous},
        {"type": "response.completed", "response": {"status": "completed"}},
    )
    assert parse_all_ways(raw, "openai_responses") == []


def test_responses_incomplete_failed_and_error() -> None:
    raw = responses(
        {"type": "response.output_item.added", "output_index": 0, "item": {"type": "function_call", "id": "fc", "call_id": "c", "name": "f"}},
        {"type": "response.function_call_arguments.delta", "item_id": "fc", "output_index": 0, "delta": '{"a": "b'},
        {"type": "response.incomplete", "response": {"incomplete_details": {"reason": "max_output_tokens"}}},
    )  # fmt: skip
    with pytest.raises(TruncatedStreamError) as info:
        parse(raw, "openai_responses")
    assert info.value.reason == "max_tokens"
    assert info.value.partial[0].raw_arguments == '{"a": "b'
    with pytest.raises(ProviderError) as perr:
        parse(responses({"type": "response.failed", "response": {"error": {"code": "server_error", "message": "boom"}}}), None)  # fmt: skip
    assert perr.value.retryable and perr.value.message == "boom"
    with pytest.raises(ProviderError) as perr:
        parse(responses({"type": "error", "code": "insufficient_quota", "message": "quota"}), None)
    assert not perr.value.retryable


# -- Anthropic ----------------------------------------------------------------------------


def anthropic(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


START = {"type": "message_start", "message": {"usage": {"input_tokens": 3}}}


def test_anthropic_tool_use_without_deltas_is_empty_object() -> None:
    # vercel/ai#10747: no input_json_delta (or only "") means {} and not "".
    raw = anthropic(
        START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "now", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": ""}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    )  # fmt: skip
    assert brief(parse_all_ways(raw, "anthropic")) == [("now", {}, "toolu_1")]


def test_anthropic_server_tools_are_not_client_calls() -> None:
    raw = anthropic(
        START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"q": "x"}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "m", "input": {}}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
    )  # fmt: skip
    assert parse_all_ways(raw, "anthropic") == []


def test_anthropic_malformed_json_in_one_call_does_not_abort_the_stream() -> None:
    # anthropic-sdk-python#1265: '{"city": INVALID_VALUE}' killed the whole stream.
    raw = anthropic(
        START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "w", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"city": INVALID_VALUE}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t2", "name": "w", "input": {}}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"city": "Oslo"}'}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    )  # fmt: skip
    bad, good = parse_all_ways(raw, "anthropic")
    assert bad.call_id == "t1" and bad.arguments_error and bad.args == {}
    assert (good.call_id, good.args) == ("t2", {"city": "Oslo"})


def test_anthropic_max_tokens_mid_tool_use_is_truncation() -> None:
    # pydantic-ai#3118: the partial '{"title": "example"' must never become a call.
    raw = anthropic(
        START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "create", "input": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"title": "example"'}},
        {"type": "message_delta", "delta": {"stop_reason": "max_tokens"}},
        {"type": "message_stop"},
    )  # fmt: skip
    with pytest.raises(TruncatedStreamError) as info:
        parse(raw, "anthropic")
    assert info.value.reason == "max_tokens"
    assert info.value.partial[0].raw_arguments == '{"title": "example"'


def test_anthropic_overloaded_error_event_is_retryable() -> None:
    # anthropic-sdk-python#1918 and vercel/ai#10653: an error event inside HTTP 200.
    raw = b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'  # fmt: skip
    for dialect in ("anthropic", None):
        with pytest.raises(ProviderError) as info:
            parse(raw, dialect)
        assert info.value.code == "overloaded_error"
        assert info.value.retryable
        assert info.value.message == "Overloaded"


# -- Gemini -------------------------------------------------------------------------------


def gemini(*responses_: dict[str, Any]) -> bytes:
    return "".join(f"data: {json.dumps(r)}\r\n\r\n" for r in responses_).encode()


def parts(*items: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(items)}}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate]}


def test_gemini_same_name_twice_in_separate_events_are_two_calls() -> None:
    # hermes-agent#57939: parallel calls of one function merged into one.
    raw = gemini(
        parts(
            {
                "functionCall": {"name": "lookup", "args": {"key": "height"}},
                "thoughtSignature": "sig",
            }
        ),
        parts({"functionCall": {"name": "lookup", "args": {"key": "weight"}, "id": "w1"}}),
        parts({"text": ""}, finish="STOP"),
    )
    calls = parse_all_ways(raw, "gemini")
    assert brief(calls) == [
        ("lookup", {"key": "height"}, None),
        ("lookup", {"key": "weight"}, "w1"),
    ]
    assert calls[0].thought_signature == "sig"


def test_gemini_args_as_json_string_are_tolerated_and_missing_args_are_empty() -> None:
    raw = gemini(
        parts({"functionCall": {"name": "a", "args": '{"x": 1}'}}, {"functionCall": {"name": "b"}}),
        {"candidates": [{"finishReason": "STOP"}], "usageMetadata": {"totalTokenCount": 5}},
    )
    assert brief(parse_all_ways(raw, "gemini")) == [("a", {"x": 1}, None), ("b", {}, None)]


def test_gemini_partial_args_streaming() -> None:
    raw = gemini(
        parts({"functionCall": {"name": "read", "willContinue": True}, "thoughtSignature": "s"}),
        parts({"functionCall": {"partialArgs": [{"jsonPath": "$.path", "stringValue": "/ho", "willContinue": True}], "willContinue": True}}),
        parts({"functionCall": {"partialArgs": [{"jsonPath": "$.path", "stringValue": "me"}], "willContinue": True}}),
        parts({"functionCall": {"partialArgs": [{"jsonPath": "$.opts.depth", "numberValue": 2}, {"jsonPath": "$.tags[1]", "boolValue": True}], "willContinue": True}}),
        parts({"functionCall": {}}),
        parts({"text": "done"}, finish="STOP"),
    )  # fmt: skip
    [call] = parse_all_ways(raw, "gemini")
    assert call.args == {"path": "/home", "opts": {"depth": 2}, "tags": [None, True]}
    assert call.thought_signature == "s"


def test_gemini_max_tokens_blocked_prompt_safety_and_error() -> None:
    with pytest.raises(TruncatedStreamError):
        parse(gemini(parts({"text": "hi"}, finish="MAX_TOKENS")), "gemini")
    with pytest.raises(ProviderError) as info:
        parse(gemini({"promptFeedback": {"blockReason": "SAFETY"}}), None)
    assert info.value.code == "SAFETY" and not info.value.retryable
    with pytest.raises(ProviderError) as info:
        parse(gemini(parts({"text": ""}, finish="MALFORMED_FUNCTION_CALL")), "gemini")
    assert info.value.retryable
    with pytest.raises(ProviderError) as info:
        parse(gemini({"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}), None)  # fmt: skip
    assert info.value.status == 429 and info.value.retryable


def test_gemini_without_finish_reason_is_truncated() -> None:
    raw = gemini(parts({"functionCall": {"name": "a", "args": {}}}))
    parser = ToolCallParser("gemini")
    # Gemini's call is whole in its event: the read returns it, and the truncation at
    # the end carries none again (the error carries only what no read returned).
    assert [c.name for c in parser.feed(raw)] == ["a"]
    with pytest.raises(TruncatedStreamError) as info:
        parser.finish()
    assert info.value.completed == ()
    # The same through feed-then-finish in one helper.
    with pytest.raises(TruncatedStreamError) as info:
        parse(raw, "gemini")
    assert info.value.completed == ()


# -- the end of stream, detection, misuse -------------------------------------------------


def test_final_event_without_blank_line_is_accepted_only_when_whole() -> None:
    raw = encode("anthropic", [Call("f", {"a": 1}, "t")])
    assert brief(parse(raw.rstrip(b"\n"), "anthropic")) == [("f", {"a": 1}, "t")]
    cut = raw.rstrip(b"\n")[:-3]  # message_stop's JSON cut: not whole
    with pytest.raises(TruncatedStreamError):
        parse(cut, "anthropic")


def test_empty_stream_is_truncated_and_unknown_stream_is_malformed() -> None:
    with pytest.raises(TruncatedStreamError):
        parse(b"", None)
    with pytest.raises(MalformedStreamError):
        parse(b'data: {"hello": 1}\n\n', None)
    with pytest.raises(MalformedStreamError):
        parse(b'data: {"hello": 1}\n\n' * 100, None)


def _framed(dialect: Dialect, data: bytes) -> bytes:
    """One event carrying ``data`` in the dialect's framing: an SSE ``data:`` line, or
    for Bedrock an event-stream message of the type its payloads come in."""
    if dialect == "bedrock_converse":
        return bedrock_event("contentBlockDelta", data)
    if dialect == "bedrock_anthropic":
        return bedrock_event("chunk", data)
    return b"data: " + data + b"\n\n"


def test_non_json_data_is_malformed_not_a_crash() -> None:
    for dialect in DIALECTS:
        with pytest.raises(MalformedStreamError):
            parse(_framed(dialect, b"{not json"), dialect)
        with pytest.raises(MalformedStreamError):
            parse(_framed(dialect, b"[1, 2]"), dialect)


def test_sse_bytes_to_an_event_stream_dialect_are_a_framing_error() -> None:
    # "da" read as a message's total length is 1.6 GB; its prelude CRC cannot check.
    for dialect in ("bedrock_converse", "bedrock_anthropic"):
        with pytest.raises(FramingError):
            parse(b"data: {not json\n\n", dialect)


def test_unknown_dialect_and_use_after_finish_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        ToolCallParser("openai")  # type: ignore[arg-type]  # not a Dialect: the run-time check
    parser = ToolCallParser("gemini")
    parser.feed(gemini(parts({"text": "x"}, finish="STOP")))
    parser.finish()
    with pytest.raises(UsageError):
        parser.feed(b"data: {}\n\n")


def test_a_failed_parser_refuses_more_input() -> None:
    parser = ToolCallParser("anthropic")
    with pytest.raises(ProviderError):
        parser.feed(b'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"x"}}\n\n')  # fmt: skip
    with pytest.raises(UsageError):
        parser.feed(b"\n")


def test_rich_stream_shows_progress_then_completion_then_finish() -> None:
    raw = encode("openai_chat", [Call("f", {"k": "value"}, "c")], text="Hi!", fragment=3)
    parser = StreamParser("openai_chat")
    events = []
    for byte in range(len(raw)):
        events.extend(parser.feed(raw[byte : byte + 1]))
    events.extend(parser.finish())
    kinds = [type(e) for e in events]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hi!"
    started = kinds.index(ToolCallStarted)
    assert kinds.index(ToolCallArgumentsDelta) > started
    assert (
        "".join(e.delta for e in events if isinstance(e, ToolCallArgumentsDelta))
        == '{"k": "value"}'
    )
    completed = [e for e in events if isinstance(e, ToolCallCompleted)]
    assert [c.call.args for c in completed] == [{"k": "value"}]
    assert isinstance(events[-1], StreamFinished)
    assert events[-1].text == "Hi!"


# -- properties ---------------------------------------------------------------------------

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.text(max_size=12),
    st.floats(allow_nan=False, allow_infinity=False),
)  # fmt: skip
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)  # fmt: skip
a_call = st.builds(
    Call,
    name=st.sampled_from(["lookup", "lookup", "get_weather", "a.b-c_d"]),
    args=st.dictionaries(st.text(max_size=8), json_values, max_size=4),
    call_id=st.text(alphabet="abcxyz_0123456789", min_size=1, max_size=10),
)


@settings(max_examples=60, deadline=None)
@given(
    dialect=st.sampled_from(DIALECTS),
    calls=st.lists(a_call, max_size=4),
    text=st.text(max_size=20),
    fragment=st.integers(1, 9),
    cuts=st.lists(st.integers(min_value=0), max_size=20),
    detect=st.booleans(),
    gemini_ids=st.booleans(),
)
def test_round_trip_any_calls_any_dialect_any_split(
    dialect: Dialect,
    calls: list[Call],
    text: str,
    fragment: int,
    cuts: list[int],
    detect: bool,
    gemini_ids: bool,
) -> None:
    if dialect == "gemini" and not gemini_ids:
        calls = [Call(c.name, c.args, None) for c in calls]
    raw = encode(dialect, calls, text, fragment)
    points = sorted({c % (len(raw) + 1) for c in cuts})
    parser = StreamParser(None if detect else dialect)
    events = []
    for a, b in zip([0, *points], [*points, len(raw)], strict=True):
        events.extend(parser.feed(raw[a:b]))
    events.extend(parser.finish())
    got = [e.call for e in events if isinstance(e, ToolCallCompleted)]
    assert [(c.name, c.args, c.call_id) for c in got] == [
        (c.name, c.args, c.call_id) for c in calls
    ]
    assert [c.index for c in got] == list(range(len(calls)))
    assert isinstance(events[-1], StreamFinished) and events[-1].text == text


@settings(max_examples=200, deadline=None)
@given(
    dialect=st.sampled_from([*DIALECTS, None]),
    raw=st.one_of(
        st.binary(max_size=300),
        st.lists(
            st.sampled_from([
                b"data: ", b"event: ", b"error", b"[DONE]", b"\n", b"\r\n", b"\n\n", b"{", b"}",
                b'"choices":', b'"candidates":', b'"type":', b'"message_stop"', b"[", b"]", b",",
                b'"tool_calls":', b'"functionCall":', b'"index":', b"0", b"null", b'"x"', b":",
                b'"response.completed"', b'"content_block_start"', b'"partialArgs":',
            ]),
            max_size=60,
        ).map(b"".join),
    ),
)  # fmt: skip
def test_arbitrary_bytes_raise_only_our_errors(dialect: Dialect | None, raw: bytes) -> None:
    for chunk in (None, 1, 5):
        try:
            parse(raw, dialect, chunk)
        except SSEToolCallsError:
            pass


def test_core_import_stays_sans_io() -> None:
    code = (
        "import sys, sse_toolcalls, sse_toolcalls.parser, sse_toolcalls.framing.sse;"
        "bad = [m for m in ('anyio', 'httpx', 'jsonschema', 'trio', 'asyncio', 'uvicorn')"
        " if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_responses_call_id_arriving_only_with_the_finished_item() -> None:
    added = {"type": "function_call", "id": "fc_9", "name": "f", "arguments": ""}
    raw = responses(
        {"type": "response.output_item.added", "output_index": 0, "item": added},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_9", "output_index": 0, "delta": '{"a": 1}'},
        {"type": "response.function_call_arguments.done", "item_id": "fc_9", "output_index": 0, "arguments": '{"a": 1}'},
        {"type": "response.output_item.done", "output_index": 0, "item": added | {"call_id": "call_9", "arguments": '{"a": 1}'}},
        {"type": "response.completed", "response": {"status": "completed"}},
    )  # fmt: skip
    [call] = parse_all_ways(raw, "openai_responses")
    assert (call.call_id, call.item_id, call.args) == ("call_9", "fc_9", {"a": 1})


def test_chat_legacy_function_call_deltas() -> None:
    def fc(**function: Any) -> dict[str, Any]:
        return {"choices": [{"index": 0, "delta": {"function_call": function}}]}

    raw = chat(fc(name="get_weather", arguments=""), fc(arguments='{"city":'), fc(arguments=' "Oslo"}'), fin("function_call"))  # fmt: skip
    assert brief(parse_all_ways(raw, "openai_chat")) == [("get_weather", {"city": "Oslo"}, None)]


def test_rich_and_plain_parsers_agree_on_every_recorded_stream() -> None:
    # StreamParser builds delta events; ToolCallParser skips them: the calls must match.
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent.parent / "recorded_streams"
    manifest = json.loads((root / "MANIFEST.json").read_text())
    assert len(manifest) >= 40
    for entry in manifest:
        raw = (root / entry["file"]).read_bytes()
        dialect = entry["provider"]
        outcomes: list[Any] = []
        for rich in (True, False):
            parser: Any = StreamParser(dialect) if rich else ToolCallParser(dialect)
            try:
                out = [*parser.feed(raw), *parser.finish()]
            except SSEToolCallsError as exc:
                outcomes.append(type(exc).__name__)
                continue
            calls = [e.call for e in out if isinstance(e, ToolCallCompleted)] if rich else out
            outcomes.append(brief(calls))
        assert outcomes[0] == outcomes[1], entry["file"]


@pytest.mark.parametrize("reason", ["length", "model_length", "max_tokens", "content_filter"])
def test_chat_finish_reasons_that_cut_the_turn(reason: str) -> None:
    raw = chat(tc(index=0, id="c", function={"name": "f", "arguments": '{"a": 1}'}), fin(reason))
    with pytest.raises(TruncatedStreamError) as info:
        parse(raw, "openai_chat")
    assert info.value.partial[0].call_id == "c"


# -- after the end marker -------------------------------------------------------------

_FINISHED = {
    "openai_chat": "one_call.sse",
    "openai_responses": "one_call.sse",
    "anthropic": "one_call.sse",
    "gemini": "one_call_no_id.sse",
}
# What proxies and broken servers send after the end: a second end marker, a usage chunk,
# a new call's start, an error report, a keep-alive, bytes that are not JSON.
_TRAILING = {
    "openai_chat": (
        b"data: [DONE]\n\n"
        b'data: {"choices":[],"usage":{"total_tokens":9}}\n\n'
        b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"late",'
        b'"function":{"name":"refund","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}\n\n'
        b'event: error\ndata: {"error":{"message":"late"}}\n\n'
    ),
    "openai_responses": (
        b"event: response.output_item.added\n"
        b'data: {"type":"response.output_item.added","output_index":9,"item":{"type":'
        b'"function_call","id":"fc_late","call_id":"late","name":"refund","arguments":"{}"}}\n\n'
        b'event: response.output_item.done\ndata: {"type":"response.output_item.done",'
        b'"output_index":9,"item":{"type":"function_call","id":"fc_late","call_id":"late",'
        b'"name":"refund","arguments":"{}","status":"completed"}}\n\n'
        b'event: error\ndata: {"type":"error","code":"server_error","message":"late"}\n\n'
    ),
    "anthropic": (
        b'event: content_block_start\ndata: {"type":"content_block_start","index":5,'
        b'"content_block":{"type":"tool_use","id":"late","name":"refund","input":{}}}\n\n'
        b'event: content_block_stop\ndata: {"type":"content_block_stop","index":5}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error"}}\n\n'
    ),
    # Gemini has no end marker: its finish is held to EOF (proxies stamp it on every
    # chunk), so a later part is the turn's (test_gemini_parts_after_a_finish_...); what
    # comes after it that has nothing of the turn is not read.
    "gemini": (
        b"data: [DONE]\r\n\r\n"
        b'data: {"candidates":[{"content":{"parts":[]},"finishReason":"STOP"}]}\r\n\r\n'
    ),
}


@pytest.mark.parametrize("dialect", sorted(_FINISHED))
@pytest.mark.parametrize("detect", [False, True])
def test_nothing_after_the_end_marker_is_read(dialect: Dialect, detect: bool) -> None:
    raw = (
        Path(__file__).parent.parent.parent / "recorded_streams" / dialect / _FINISHED[dialect]
    ).read_bytes()
    trailing = _TRAILING[dialect] + b": ping\n\ndata: not json\n\n"

    def rich(body: bytes) -> list[Any]:
        parser = StreamParser(None if detect else dialect)
        return parser.feed(body) + parser.finish()

    expected = rich(raw)
    assert isinstance(expected[-1], StreamFinished)
    # The end marker's event closed by its blank line, and by the trailing bytes' own.
    for body in (raw + trailing, raw.rstrip(b"\r\n") + b"\n\n" + trailing):
        events = rich(body)
        assert events == expected
        assert [e for e in events if isinstance(e, StreamFinished)] == [expected[-1]]
        assert parse(body, None if detect else dialect, chunk=7) == parse(raw, dialect)


def test_gemini_parts_after_a_finish_are_the_same_turns_and_an_error_fails_it() -> None:
    # one-api#1408, kelivo#1003: proxies stamp finishReason on every chunk, with each of
    # the parallel calls in its own chunk (hermes-agent#57939): none may be lost.
    stamped = gemini(
        parts({"functionCall": {"name": "lookup", "args": {"key": "height"}}}, finish="STOP"),
        parts({"text": "and "}, finish="STOP"),
        parts({"functionCall": {"name": "lookup", "args": {"key": "weight"}}}, finish="STOP"),
        {"candidates": [], "usageMetadata": {"totalTokenCount": 7}},
    )
    calls = parse_all_ways(stamped, "gemini")
    assert brief(calls) == [
        ("lookup", {"key": "height"}, None),
        ("lookup", {"key": "weight"}, None),
    ]
    assert [c.index for c in calls] == [0, 1]
    parser = StreamParser("gemini")
    events = parser.feed(stamped)
    assert not any(isinstance(e, StreamFinished) for e in events)  # held to the end
    (finished,) = parser.finish()
    assert isinstance(finished, StreamFinished)
    assert (finished.stop_reason, finished.usage, finished.text) == (
        "STOP",
        {"totalTokenCount": 7},
        "and ",
    )
    # An error report after a finish fails the turn, as one before it does.
    failed = stamped + b'data: {"error":{"code":500,"status":"INTERNAL","message":"late"}}\r\n\r\n'
    with pytest.raises(ProviderError):
        parse(failed, "gemini")
    # A streamed (Vertex) call still open at the end is cut, finish or not.
    opened = gemini(
        parts({"functionCall": {"name": "read", "willContinue": True}}, finish="STOP"),
    )
    with pytest.raises(TruncatedStreamError) as info:
        parse(opened, "gemini")
    assert (info.value.reason, info.value.partial[0].name) == ("eof", "read")


# -- a call's name and ids are strings ---------------------------------------------------

# One call per dialect, with its name, id (and Responses' item id) left as placeholders.
_CALL_STREAMS = {
    ("openai_chat", "name", "id"): (
        'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":%(id)s,'
        '"function":{"name":%(name)s,"arguments":"{}"}}]}}]}\n\n'
        'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'
        "data: [DONE]\n\n"
    ),
    ("openai_responses", "name", "call_id", "id"): (
        'data: {"type":"response.output_item.added","output_index":0,"item":{"type":'
        '"function_call","id":%(id)s,"call_id":%(call_id)s,"name":%(name)s,"arguments":""}}\n\n'
        'data: {"type":"response.output_item.done","output_index":0,"item":{"type":'
        '"function_call","id":%(id)s,"call_id":%(call_id)s,"name":%(name)s,'
        '"arguments":"{}","status":"completed"}}\n\n'
        'data: {"type":"response.completed","response":{"status":"completed","output":[]}}\n\n'
    ),
    ("anthropic", "name", "id"): (
        'data: {"type":"message_start","message":{}}\n\n'
        'data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
        '"id":%(id)s,"name":%(name)s,"input":{}}}\n\n'
        'data: {"type":"content_block_stop","index":0}\n\n'
        'data: {"type":"message_delta","delta":{"stop_reason":"tool_use"}}\n\n'
        'data: {"type":"message_stop"}\n\n'
    ),
    ("gemini", "name", "id"): (
        'data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":%(name)s,'
        '"id":%(id)s,"args":{}}}]}}]}\n\n'
        'data: {"candidates":[{"content":{"parts":[]},"finishReason":"STOP"}]}\n\n'
    ),
}
_GOOD = {"name": '"get_time"', "id": '"fc_1"', "call_id": '"call_1"'}
_NOT_STRINGS = [
    "5",
    "-1",
    "1.5",
    "true",
    "false",
    "0",
    "[]",
    '{"a":"b"}',
    "12345678901234567890123",
]


@pytest.mark.parametrize("key", sorted(_CALL_STREAMS), ids=lambda key: key[0])
def test_a_call_name_or_id_that_is_not_a_string_makes_the_stream_malformed(
    key: tuple[str, ...],
) -> None:
    dialect, fields = as_dialect(key[0]), key[1:]
    template = _CALL_STREAMS[key]
    [call] = parse((template % _GOOD).encode(), dialect)
    assert call.name == "get_time"
    for field in fields:
        # JSON null is an absent field, as real servers send it on continuations.
        if field != "name":
            [call] = parse((template % {**_GOOD, field: "null"}).encode(), dialect)
            assert call.name == "get_time"
        for value in _NOT_STRINGS:
            raw = (template % {**_GOOD, field: value}).encode()
            for detect in (dialect, None):
                for finish in (True, False):
                    # Whole, and cut before its end: never a call or partial of another type.
                    body = raw if finish else raw[: raw.rindex(b"data:")]
                    with pytest.raises(MalformedStreamError, match="must be a string"):
                        parse(body, detect)


# -- Chat arguments sent as a JSON object ------------------------------------------------

_BIG = 123456789012345678901234


def _chat_object_arguments(*functions: dict[str, Any], legacy: bool = False) -> bytes:
    delta: dict[str, Any]
    if legacy:
        [function] = functions
        delta = {"function_call": function}
    else:
        entries = [{"index": i, "id": f"c{i}", "function": f} for i, f in enumerate(functions)]
        delta = {"tool_calls": entries}
    # A second choice first, with its own object arguments: only choice 0 is read.
    other = {"tool_calls": [{"index": 0, "function": {"name": "other", "arguments": {"n": 1}}}]}
    chunks = [
        {"choices": [{"index": 1, "delta": other}, {"index": 0, "delta": delta}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + (
        b"data: [DONE]\n\n"
    )


@pytest.mark.parametrize("legacy", [False, True])
def test_chat_object_arguments_keep_integers_past_64_bits_exact(legacy: bool) -> None:
    args = {"acct": _BIG, "list": [-_BIG * 10 - 9, 1.5, {"deep": [_BIG]}], "s": "x"}
    body = _chat_object_arguments({"name": "pay", "arguments": args}, legacy=legacy)
    [call] = parse(body, "openai_chat")
    assert call.args == args
    assert type(call.args["acct"]) is int
    assert call.raw_arguments == json.dumps(args, separators=(",", ":"))
    # As exact as the same arguments sent as text.
    as_text = {"name": "pay", "arguments": json.dumps(args)}
    [text_call] = parse(_chat_object_arguments(as_text, legacy=legacy), "openai_chat")
    assert text_call.args == call.args


def test_chat_object_arguments_of_several_calls_in_one_event_each_exact() -> None:
    functions = [
        {
            "name": "pay",
            "arguments": {"acct": _BIG + i} if i % 2 else json.dumps({"acct": _BIG + i}),
        }
        for i in range(6)
    ]
    calls = parse(_chat_object_arguments(*functions), "openai_chat")
    assert [c.args for c in calls] == [{"acct": _BIG + i} for i in range(6)]
