"""Promises of the core attacked from an attacker's seat: "never a guessed call".

Each test failed on the code before its fix.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sse_toolcalls import Dialect, Image, ToolCall, ToolCallParser, ToolResult, build_request
from sse_toolcalls.conversation import (
    AssistantMessage,
    Message,
    ToolResultsMessage,
    UserMessage,
)
from sse_toolcalls.dialects._common import parse_arguments

# An attacker's classic (JSON interoperability, CVE-2017-12635 in CouchDB): the same key
# twice. orjson and the stdlib keep the last value, other parsers the first; a proxy or
# an audit log that read the first saw "1" where the handler would pay 1000.
DUPLICATED = '{"to": "bob", "amount": 1, "amount": 1000}'
NESTED = '{"order": {"sku": "a", "sku": "b"}}'


def chat_stream(arguments: str) -> bytes:
    chunks: list[dict[str, Any]] = [
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "c1",
                                "function": {"name": "pay", "arguments": arguments},
                            }
                        ]
                    },
                    "finish_reason": None,
                }
            ]
        },
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + (
        b"data: [DONE]\n\n"
    )


def anthropic_stream(partial_json: str) -> bytes:
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "m", "content": [], "usage": {}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t1", "name": "pay", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": partial_json},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
        {"type": "message_stop"},
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def released(dialect: Dialect, raw: bytes) -> list[ToolCall]:
    parser = ToolCallParser(dialect)
    return [*parser.feed(raw), *parser.finish()]


@pytest.mark.parametrize("text", [DUPLICATED, NESTED])
def test_arguments_with_a_repeated_key_are_invalid_not_the_last_value(text: str) -> None:
    args, error = parse_arguments(text)
    assert args == {}
    assert error is not None and "repeated key" in error


@pytest.mark.parametrize(
    ("dialect", "raw"),
    [("openai_chat", chat_stream(DUPLICATED)), ("anthropic", anthropic_stream(DUPLICATED))],
)
def test_a_streamed_call_with_a_repeated_key_does_not_run(dialect: Dialect, raw: bytes) -> None:
    [call] = released(dialect, raw)
    assert call.name == "pay" and call.args == {}
    assert call.arguments_error is not None


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "b": {"a": 2}}',  # one name in two objects is no repetition
        '{"a": "\\"a\\": 1", "b": ["a", "a"]}',  # nor inside strings and arrays
        '{"k": 1, "K": 2, "\\u006b2": 3}',
    ],
)
def test_the_same_name_in_different_places_is_not_a_repeated_key(text: str) -> None:
    args, error = parse_arguments(text)
    assert error is None and args == json.loads(text)


# --------------------------------------------------------------------------------------
# Never a lost call: a call the stream delivers whole is released, not dropped in silence.


def responses_stream(*events: dict[str, Any]) -> bytes:
    created = {"type": "response.created", "response": {"id": "r", "status": "in_progress"}}
    return b"".join(
        f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in (created, *events)
    )


WHOLE_ITEM = {
    "id": "fc_0",
    "type": "function_call",
    "status": "completed",
    "arguments": '{"city": "Oslo"}',
    "call_id": "call_0",
    "name": "get_weather",
}
COMPLETED = {"type": "response.completed", "response": {"id": "r", "status": "completed"}}


def test_a_responses_call_item_that_arrives_whole_is_released() -> None:
    """A proxy that sends each item only when done (no ``output_item.added``, no
    deltas): the call vanished and the turn looked like an answer without calls."""
    raw = responses_stream(
        {"type": "response.output_item.done", "output_index": 0, "item": WHOLE_ITEM}, COMPLETED
    )
    [call] = released("openai_responses", raw)
    assert (call.name, call.args, call.call_id) == ("get_weather", {"city": "Oslo"}, "call_0")


def test_a_responses_call_only_in_the_completed_output_is_released() -> None:
    """A non-streaming answer re-wrapped as a stream: ``response.completed`` alone, its
    ``output`` holding the call."""
    completed = {
        "type": "response.completed",
        "response": {"id": "r", "status": "completed", "output": [WHOLE_ITEM]},
    }
    [call] = released("openai_responses", responses_stream(completed))
    assert (call.name, call.args, call.call_id) == ("get_weather", {"city": "Oslo"}, "call_0")


def gemini_chunk(call: dict[str, Any], finish: str | None) -> bytes:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"functionCall": call}]}}
    if finish is not None:
        candidate["finishReason"] = finish
    return b"data: " + json.dumps({"candidates": [candidate]}).encode() + b"\r\n\r\n"


def test_gemini_finish_reason_on_every_chunk_loses_no_parallel_call() -> None:
    """A proxy that stamps ``finishReason: STOP`` on every chunk (one-api#1408,
    kelivo#1003), with Gemini's parallel calls each in its own chunk
    (hermes-agent#57939): the second call was dropped in silence."""
    raw = gemini_chunk({"name": "get_weather", "args": {"city": "Oslo"}}, "STOP")
    raw += gemini_chunk({"name": "get_weather", "args": {"city": "Lima"}}, "STOP")
    calls = released("gemini", raw)
    assert [c.args["city"] for c in calls] == ["Oslo", "Lima"]
    assert [c.index for c in calls] == [0, 1]


def test_gemini_one_finish_reason_at_the_end_releases_every_call() -> None:
    raw = gemini_chunk({"name": "get_weather", "args": {"city": "Oslo"}}, None)
    raw += gemini_chunk({"name": "get_weather", "args": {"city": "Lima"}}, "STOP")
    assert [c.args["city"] for c in released("gemini", raw)] == ["Oslo", "Lima"]


# --------------------------------------------------------------------------------------
# Results go home together: peers' users hit OpenAI's 400 "tool_call_ids did not have
# response messages" (pydantic-ai#2360: user content inserted between parallel results)
# and Gemini's "number of function response parts should be equal to number of function
# call parts" (pydantic-ai#580, semantic-kernel#10597: one Content per response).

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c63f8cfc0500f0004850180848a8c21"
    "0000000049454e44ae426082"
)


@pytest.mark.parametrize("dialect", ["openai_chat", "openai_responses", "anthropic", "gemini"])
def test_parallel_results_one_with_media_come_back_together_in_call_order(
    dialect: Dialect,
) -> None:
    calls = tuple(
        ToolCall(
            name="look",
            args={"i": i},
            provider=dialect,
            call_id=None if dialect == "gemini" else f"id{i}",
            index=i,
        )
        for i in range(3)
    )
    results = (
        ToolResult(call=calls[0], content="zero"),
        ToolResult(call=calls[1], content="one", media=(Image(data=PNG),)),
        ToolResult(call=calls[2], content="two", is_error=True),
    )
    conversation: list[Message] = [
        UserMessage(text="look thrice"),
        AssistantMessage(calls=calls),
        ToolResultsMessage(results=results),
    ]
    body = build_request(dialect, conversation, model="m")
    if dialect == "openai_chat":
        after = body["messages"][2:]
        assert [(m["role"], m["tool_call_id"]) for m in after] == [
            ("tool", "id0"),
            ("tool", "id1"),
            ("tool", "id2"),
        ]
    elif dialect == "openai_responses":
        after = body["input"][4:]
        assert [(i["type"], i["call_id"]) for i in after] == [
            ("function_call_output", f"id{n}") for n in range(3)
        ]
    elif dialect == "anthropic":
        [answer] = body["messages"][2:]
        assert answer["role"] == "user"
        assert [b["tool_use_id"] for b in answer["content"]] == ["id0", "id1", "id2"]
        assert [b["type"] for b in answer["content"]] == ["tool_result"] * 3
    else:
        [answer] = body["contents"][2:]
        parts = answer["parts"]
        assert [list(p) for p in parts] == [["functionResponse"]] * 3
        assert len(parts) == len(body["contents"][1]["parts"])
