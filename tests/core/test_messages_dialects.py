"""Results, assistant turns and tool declarations in each dialect, field by field."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sse_toolcalls._jsonsafe import dumps_safe
from sse_toolcalls.calls import DIALECTS, Dialect, ToolCall, ToolResult, ToolSpec
from sse_toolcalls.dialects.anthropic import messages as anthropic
from sse_toolcalls.dialects.gemini import messages as gemini
from sse_toolcalls.dialects.naming import ToolNameMap
from sse_toolcalls.dialects.openai_chat import messages as chat
from sse_toolcalls.dialects.openai_responses import messages as responses
from sse_toolcalls.errors import UsageError
from sse_toolcalls.messages import assistant_turn, format_results, tool_declarations


def call(
    provider: Dialect,
    index: int,
    call_id: str | None,
    name: str = "get_weather",
    args: dict[str, Any] | None = None,
    **extra: Any,
) -> ToolCall:
    args = {"city": f"city{index}"} if args is None else args
    raw = extra.pop("raw_arguments", orjson.dumps(args).decode())
    return ToolCall(
        name=name,
        args=args,
        provider=provider,
        call_id=call_id,
        index=index,
        raw_arguments=raw,
        **extra,
    )


# --------------------------------------------------------------------------------------
# Chat Completions


def test_chat_results_one_tool_message_per_call_in_call_order() -> None:
    a = call("openai_chat", 0, "call_a")
    b = call("openai_chat", 1, "call_b")
    out = format_results(
        [ToolResult(call=b, content={"temp": 20}), ToolResult(call=a, content="sunny")]
    )
    assert out == [
        {"role": "tool", "tool_call_id": "call_a", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_b", "content": '{"temp":20}'},
    ]


def test_chat_error_result_is_a_json_object_with_an_error_key() -> None:
    a = call("openai_chat", 0, "call_a")
    (message,) = format_results([ToolResult(call=a, content="city not found", is_error=True)])
    assert orjson.loads(message["content"]) == {"error": "city not found"}
    # An error that already is an object with "error" is not wrapped twice.
    (message,) = format_results(
        [ToolResult(call=a, content={"error": "bad", "path": "/city"}, is_error=True)]
    )
    assert orjson.loads(message["content"]) == {"error": "bad", "path": "/city"}


def test_chat_empty_string_id_is_kept_and_missing_id_is_left_out() -> None:
    empty = call("openai_chat", 0, "")
    missing = call("openai_chat", 1, None)
    out = format_results(
        [ToolResult(call=empty, content="x"), ToolResult(call=missing, content="y")]
    )
    assert out[0]["tool_call_id"] == ""
    assert "tool_call_id" not in out[1]


def test_chat_assistant_turn_replays_raw_arguments_and_ids() -> None:
    raw = '{"city": "Paris",  "unit": "c"}'
    a = call("openai_chat", 0, "call_a", args={"city": "Paris", "unit": "c"}, raw_arguments=raw)
    b = call("openai_chat", 1, "call_b", name="get_time", args={})
    (message,) = assistant_turn("", [b, a])
    assert message == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "get_weather", "arguments": raw},
            },
            {
                "id": "call_b",
                "type": "function",
                "function": {"name": "get_time", "arguments": "{}"},
            },
        ],
    }


def test_chat_assistant_turn_with_invalid_raw_arguments_sends_args_json() -> None:
    broken = call(
        "openai_chat",
        0,
        "call_a",
        args={},
        raw_arguments='{"city": "Par',
        arguments_error="unterminated string",
    )
    (message,) = assistant_turn("Let me check.", [broken])
    assert message["content"] == "Let me check."
    assert message["tool_calls"][0]["function"]["arguments"] == "{}"


def test_chat_text_only_turn_has_no_tool_calls_key() -> None:
    assert assistant_turn("Hello", [], dialect="openai_chat") == [
        {"role": "assistant", "content": "Hello"}
    ]


# --------------------------------------------------------------------------------------
# Responses


def test_responses_results_are_function_call_output_items() -> None:
    a = call("openai_responses", 0, "call_a", item_id="fc_1")
    b = call("openai_responses", 1, "call_b", item_id="fc_2")
    out = format_results(
        [ToolResult(call=b, content=[1, 2]), ToolResult(call=a, content="boom", is_error=True)]
    )
    assert out == [
        {"type": "function_call_output", "call_id": "call_a", "output": '{"error":"boom"}'},
        {"type": "function_call_output", "call_id": "call_b", "output": "[1,2]"},
    ]


def test_responses_assistant_turn_items_and_item_ids_on_request() -> None:
    a = call("openai_responses", 0, "call_a", item_id="fc_1")
    items = assistant_turn("Checking.", [a])
    assert items == [
        {"type": "message", "role": "assistant", "content": "Checking."},
        {
            "type": "function_call",
            "call_id": "call_a",
            "name": "get_weather",
            "arguments": a.raw_arguments,
        },
    ]
    with_ids = responses.assistant_turn("", [a], include_item_ids=True)
    assert with_ids == [
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_a",
            "name": "get_weather",
            "arguments": a.raw_arguments,
        }
    ]


def test_responses_call_without_id_is_refused() -> None:
    with pytest.raises(UsageError, match="no id"):
        format_results([ToolResult(call=call("openai_responses", 0, None), content="x")])


# --------------------------------------------------------------------------------------
# Anthropic


def test_anthropic_results_are_one_user_message_of_tool_result_blocks() -> None:
    a = call("anthropic", 0, "toolu_a")
    b = call("anthropic", 1, "toolu_b")
    c = call("anthropic", 2, "toolu_c")
    out = format_results(
        [
            ToolResult(call=c, content={"ok": True}),
            ToolResult(call=a, content="20C"),
            ToolResult(call=b, content="no such city", is_error=True),
        ]
    )
    assert out == [
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_a",
                    "content": "20C",
                    "is_error": False,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_b",
                    "content": "no such city",
                    "is_error": True,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_c",
                    "content": '{"ok":true}',
                    "is_error": False,
                },
            ],
        }
    ]


def test_anthropic_empty_error_content_gets_a_message() -> None:
    (message,) = format_results(
        [ToolResult(call=call("anthropic", 0, "toolu_a"), content="", is_error=True)]
    )
    assert message["content"][0]["content"]
    assert message["content"][0]["is_error"] is True


def test_anthropic_assistant_turn_text_then_tool_use_blocks() -> None:
    a = call("anthropic", 0, "toolu_a", args={"city": "Paris"})
    (message,) = assistant_turn("I'll look.", [a])
    assert message == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "I'll look."},
            {
                "type": "tool_use",
                "id": "toolu_a",
                "name": "get_weather",
                "input": {"city": "Paris"},
            },
        ],
    }
    assert anthropic.assistant_turn("", []) == []


# --------------------------------------------------------------------------------------
# Gemini


def test_gemini_results_one_content_one_part_per_call_ids_only_when_sent() -> None:
    with_id = call("gemini", 0, "8hd01vsf", name="add")
    without = call("gemini", 1, None, name="multiply")
    out = format_results(
        [ToolResult(call=without, content=12), ToolResult(call=with_id, content={"sum": 7})]  # type: ignore[arg-type]
    )
    assert out == [
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "add", "response": {"sum": 7}, "id": "8hd01vsf"}},
                {"functionResponse": {"name": "multiply", "response": {"output": 12}}},
            ],
        }
    ]


@pytest.mark.parametrize(
    ("content", "is_error", "expected"),
    [
        ("sunny", False, {"output": "sunny"}),
        ([1, 2], False, {"output": [1, 2]}),
        ({"temp": 20}, False, {"temp": 20}),
        # An ok object using the convention's keys is wrapped, so it is not read as an error.
        ({"error": 0.1, "temp": 20}, False, {"output": {"error": 0.1, "temp": 20}}),
        ({"output": 1}, False, {"output": {"output": 1}}),
        ("city not found", True, {"error": "city not found"}),
        ({"error": "bad", "path": "/x"}, True, {"error": "bad", "path": "/x"}),
        ({"path": "/x"}, True, {"error": {"path": "/x"}}),
    ],
)
def test_gemini_response_is_always_an_object(
    content: Any, is_error: bool, expected: dict[str, Any]
) -> None:
    result = ToolResult(call=call("gemini", 0, None), content=content, is_error=is_error)
    assert gemini.response_object(result) == expected


def test_gemini_thought_signature_round_trip_on_the_call_part() -> None:
    first = call("gemini", 0, None, name="add", thought_signature="CiQBcsjafQ==")
    second = call("gemini", 1, None, name="multiply")
    (content,) = assistant_turn("Computing.", [second, first])
    assert content == {
        "role": "model",
        "parts": [
            {"text": "Computing."},
            {
                "functionCall": {"name": "add", "args": first.args},
                "thoughtSignature": "CiQBcsjafQ==",
            },
            {"functionCall": {"name": "multiply", "args": second.args}},
        ],
    }


def test_gemini_assistant_turn_keeps_ids_it_was_given() -> None:
    a = call("gemini", 0, "abc", name="add", thought_signature="sig")
    (content,) = assistant_turn("", [a])
    assert content["parts"] == [
        {"functionCall": {"name": "add", "args": a.args, "id": "abc"}, "thoughtSignature": "sig"}
    ]
    assert gemini.assistant_turn("", []) == []


# --------------------------------------------------------------------------------------
# Dispatch rules shared by every dialect


def test_empty_results_give_no_messages() -> None:
    assert format_results([]) == []
    for module in (chat, responses, anthropic, gemini):
        assert module.format_results([]) == []


def test_mixed_dialects_are_refused() -> None:
    results = [
        ToolResult(call=call("openai_chat", 0, "call_a"), content="x"),
        ToolResult(call=call("anthropic", 1, "toolu_b"), content="y"),
    ]
    with pytest.raises(UsageError, match="several dialects"):
        format_results(results)
    with pytest.raises(UsageError, match="several dialects"):
        assistant_turn("", [r.call for r in results])


def test_a_dialect_module_refuses_results_of_another_dialect() -> None:
    result = ToolResult(call=call("gemini", 0, None), content="x")
    with pytest.raises(UsageError, match="gemini"):
        anthropic.format_results([result])


def test_two_results_for_one_call_are_refused() -> None:
    a = call("anthropic", 0, "toolu_a")
    with pytest.raises(UsageError, match="same call"):
        format_results([ToolResult(call=a, content="1"), ToolResult(call=a, content="2")])


def test_content_json_cannot_hold_is_written_as_its_nearest_json_value() -> None:
    # After a tool ran, writing its result must not fail (issue 9): a set is an array,
    # an object its text, NaN null, a lone surrogate U+FFFD.
    odd = ToolResult(
        call=call("openai_chat", 0, "c"), content={"x": {1, 2}, "n": float("nan"), "s": "\ud800"}
    )
    (message,) = format_results([odd])
    assert orjson.loads(message["content"]) == {"x": [1, 2], "n": None, "s": "\ufffd"}
    gemini_odd = ToolResult(call=call("gemini", 0, None), content={"x": object()})
    (turn,) = format_results([gemini_odd])
    assert "<object object at " in dumps_safe(turn).decode()


def test_turn_without_calls_needs_a_dialect() -> None:
    with pytest.raises(UsageError):
        assistant_turn("hi", [])
    with pytest.raises(UsageError, match="unknown dialect"):
        assistant_turn("hi", [], dialect="cohere")  # type: ignore[arg-type]  # not a Dialect: the run-time check
    with pytest.raises(UsageError, match="several dialects"):
        assistant_turn("hi", [call("openai_chat", 0, "a")], dialect="gemini")


# --------------------------------------------------------------------------------------
# Tool declarations and wire names


TOOLS = [
    ToolSpec(
        name="weather.get",
        description="Weather for a city.",
        parameters={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    ),
    ToolSpec(name="get_time", description="The time.", parameters={"type": "object"}),
]


def test_declarations_per_dialect_use_legal_wire_names() -> None:
    assert tool_declarations("openai_chat", TOOLS) == [
        {
            "type": "function",
            "function": {
                "name": "weather_get",
                "description": "Weather for a city.",
                "parameters": TOOLS[0].parameters,
            },
        },
        {
            "type": "function",
            "function": {
                "name": "get_time",
                "description": "The time.",
                "parameters": {"type": "object"},
            },
        },
    ]
    assert tool_declarations("openai_responses", TOOLS)[0] == {
        "type": "function",
        "name": "weather_get",
        "description": "Weather for a city.",
        "parameters": TOOLS[0].parameters,
        "strict": False,
    }
    assert tool_declarations("anthropic", TOOLS)[0] == {
        "name": "weather_get",
        "description": "Weather for a city.",
        "input_schema": TOOLS[0].parameters,
    }
    # Dots are legal in Gemini names; a tool without properties declares no parameters.
    assert tool_declarations("gemini", TOOLS) == [
        {
            "functionDeclarations": [
                {
                    "name": "weather.get",
                    "description": "Weather for a city.",
                    "parameters": {
                        "type": "OBJECT",
                        "properties": {"city": {"type": "STRING"}},
                        "required": ["city"],
                    },
                },
                {"name": "get_time", "description": "The time."},
            ]
        }
    ]
    assert tool_declarations("gemini", []) == []


def test_gemini_json_schema_field_sends_the_schema_unconverted() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/N"}},
        "$defs": {"N": {"type": ["integer", "null"]}},
        "additionalProperties": False,
    }
    spec = ToolSpec(name="f", description="d", parameters=schema)
    (group,) = gemini.tool_declarations([spec], schema_field="parametersJsonSchema")
    declaration = group["functionDeclarations"][0]
    assert "parameters" not in declaration
    assert declaration["parametersJsonSchema"] == {
        k: v for k, v in schema.items() if k != "$schema"
    }
    with pytest.raises(UsageError):
        gemini.tool_declarations([spec], schema_field="schema")  # type: ignore[arg-type]


def test_a_call_mapped_back_to_the_registry_goes_out_under_its_wire_name() -> None:
    names = ToolNameMap("anthropic", [t.name for t in TOOLS])
    wire_call = call("anthropic", 0, "toolu_a", name="weather_get")
    registry_call = names.call_from_wire(wire_call)
    assert registry_call.name == "weather.get"
    (message,) = assistant_turn("", [registry_call], names=names)
    assert message["content"][0]["name"] == "weather_get"
    # Gemini's functionResponse names the function: the wire name, not the registry's.
    gnames = ToolNameMap("gemini", ["search web"])
    gcall = gnames.call_from_wire(call("gemini", 0, None, name=gnames.to_wire("search web")))
    assert gcall.name == "search web"
    (content,) = format_results([ToolResult(call=gcall, content="ok")], names=gnames)
    assert content["parts"][0]["functionResponse"]["name"] == "search_web"


def test_chat_call_without_id_is_replayed_without_id() -> None:
    (message,) = assistant_turn("", [call("openai_chat", 0, None)])
    assert "id" not in message["tool_calls"][0]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
contents = (
    st.text()
    | st.lists(json_values, max_size=3)
    | st.dictionaries(st.text(), json_values, max_size=3)
)


@given(content=contents, is_error=st.booleans(), dialect=st.sampled_from(DIALECTS))
def test_the_model_gets_the_content_back_intact(
    content: Any, is_error: bool, dialect: Dialect
) -> None:
    result = ToolResult(call=call(dialect, 0, "id0"), content=content, is_error=is_error)
    (out,) = addressed_payloads(dialect, format_results([result]))
    error_object = (
        content if isinstance(content, dict) and "error" in content else {"error": content}
    )
    if dialect == "gemini":
        if is_error:
            assert out == error_object
        elif isinstance(content, dict) and not {"output", "error"} & set(content):
            assert out == content
        else:
            assert out == {"output": content}
    elif dialect == "bedrock_converse":
        # Converse has a status: an object goes as its json content, any other value as
        # its text, and blank text (which the service refuses) as a stand-in sentence.
        if isinstance(content, dict):
            assert out == {"json": content}
        elif isinstance(content, str) and not content.strip():
            expected = (
                "The tool failed without a message."
                if is_error
                else "The tool returned no content."
            )
            assert out == {"text": expected}
        elif isinstance(content, str):
            assert out == {"text": content}
        else:
            assert orjson.loads(out["text"]) == content
    elif dialect in ("anthropic", "bedrock_anthropic"):
        # Anthropic has the is_error flag: the content goes as it is.
        if isinstance(content, str):
            expected = "The tool failed without a message." if is_error and not content else content
            assert out == expected
        else:
            assert orjson.loads(out) == content
    elif is_error:
        assert orjson.loads(out) == error_object
    elif isinstance(content, str):
        assert out == content
    else:
        assert orjson.loads(out) == content


def addressed_payloads(dialect: Dialect, formatted: list[dict[str, Any]]) -> list[Any]:
    if dialect == "openai_chat":
        return [m["content"] for m in formatted]
    if dialect == "openai_responses":
        return [m["output"] for m in formatted]
    if dialect in ("anthropic", "bedrock_anthropic"):
        return [b["content"] for b in formatted[0]["content"]]
    if dialect == "bedrock_converse":
        return [b["toolResult"]["content"][0] for b in formatted[0]["content"]]
    return [p["functionResponse"]["response"] for p in formatted[0]["parts"]]


@pytest.mark.parametrize(
    ("raw", "args", "expected"),
    [
        ("", {}, "{}"),  # a zero-argument call streamed no text at all
        ("   ", {}, "{}"),
        ('{"a":1}', {"a": 1}, '{"a":1}'),
        ('{ "a" : 1 }', {"a": 1}, '{ "a" : 1 }'),  # the model's own spacing is kept
        ('{"a":', {}, "{}"),
        ("[1]", {}, "[1]"),  # valid JSON but not an object: still what the model wrote
    ],
)
def test_replayed_arguments_text(raw: str, args: dict[str, Any], expected: str) -> None:
    c = call("openai_responses", 0, "c", args=args, raw_arguments=raw)
    (item,) = assistant_turn("", [c])
    assert item["arguments"] == expected
