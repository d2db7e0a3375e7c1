"""Whole request bodies from the neutral conversation, per dialect."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from sse_toolcalls.calls import DIALECTS, Dialect, ToolCall, ToolResult, ToolSpec
from sse_toolcalls.conversation import (
    AssistantMessage,
    Message,
    SystemPrompt,
    ToolResultsMessage,
    UserMessage,
)
from sse_toolcalls.dialects.naming import ToolNameMap
from sse_toolcalls.errors import UsageError
from sse_toolcalls.messages import build_request

TOOLS = [
    ToolSpec(
        name="weather.get",
        description="Weather for a city.",
        parameters={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    )
]


def conversation(dialect: Dialect) -> list[Message]:
    """System, user, an assistant turn with two calls (wire names, as parsed), results
    in the wrong order, and a follow-up question."""
    wire = ToolNameMap(dialect, [t.name for t in TOOLS]).to_wire("weather.get")
    calls = tuple(
        ToolCall(
            name=wire,
            args={"city": city},
            provider=dialect,
            call_id=None if dialect == "gemini" else f"id_{i}",
            index=i,
            raw_arguments=orjson.dumps({"city": city}).decode(),
            thought_signature="sig0" if dialect == "gemini" and i == 0 else None,
        )
        for i, city in enumerate(["Paris", "Oslo"])
    )
    results = tuple(
        ToolResult(call=c, content={"temp": 20 - 15 * c.index}) for c in reversed(calls)
    )
    return [
        SystemPrompt(text="Be brief."),
        UserMessage(text="Weather in Paris and Oslo?"),
        AssistantMessage(text="Checking both.", calls=calls),
        ToolResultsMessage(results=results),
        UserMessage(text="And tomorrow?"),
    ]


def test_chat_request_body() -> None:
    body = build_request("openai_chat", conversation("openai_chat"), TOOLS, model="gpt-4o")
    assert list(body) == ["model", "messages", "tools", "stream", "stream_options"]
    assert body["model"] == "gpt-4o"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user"]
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert [c["function"]["name"] for c in body["messages"][2]["tool_calls"]] == [
        "weather_get",
        "weather_get",
    ]
    assert [m["tool_call_id"] for m in body["messages"][3:5]] == ["id_0", "id_1"]
    assert body["tools"][0]["function"]["name"] == "weather_get"
    no_stream = build_request("openai_chat", [UserMessage(text="hi")], model="m", stream=False)
    assert no_stream == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": False,
    }


def test_responses_request_body() -> None:
    body = build_request(
        "openai_responses", conversation("openai_responses"), TOOLS, model="gpt-5", store=False
    )
    assert body["instructions"] == "Be brief."
    assert body["store"] is False
    assert body["stream"] is True
    kinds = [(i["type"], i.get("role")) for i in body["input"]]
    assert kinds == [
        ("message", "user"),
        ("message", "assistant"),
        ("function_call", None),
        ("function_call", None),
        ("function_call_output", None),
        ("function_call_output", None),
        ("message", "user"),
    ]
    assert [i["call_id"] for i in body["input"][4:6]] == ["id_0", "id_1"]
    assert body["tools"][0]["name"] == "weather_get"


def test_anthropic_request_body_puts_follow_up_text_after_the_tool_results() -> None:
    body = build_request("anthropic", conversation("anthropic"), TOOLS, model="claude")
    assert body["max_tokens"] == 4096
    assert body["system"] == "Be brief."
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    last = body["messages"][2]["content"]
    assert [b["type"] for b in last] == ["tool_result", "tool_result", "text"]
    assert [b["tool_use_id"] for b in last[:2]] == ["id_0", "id_1"]
    assert last[2] == {"type": "text", "text": "And tomorrow?"}
    assert body["tools"][0]["input_schema"] == TOOLS[0].parameters
    assert build_request("anthropic", [], model="c", max_tokens=10)["max_tokens"] == 10


def test_gemini_request_body() -> None:
    body = build_request("gemini", conversation("gemini"), TOOLS, model="gemini-2.5-flash")
    assert "model" not in body and "stream" not in body
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user", "user"]
    model_turn = body["contents"][1]["parts"]
    assert model_turn[0] == {"text": "Checking both."}
    assert model_turn[1]["thoughtSignature"] == "sig0"
    assert "thoughtSignature" not in model_turn[2]
    responses = body["contents"][2]["parts"]
    assert [p["functionResponse"] for p in responses] == [
        {"name": "weather.get", "response": {"temp": 20}},
        {"name": "weather.get", "response": {"temp": 5}},
    ]
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["parameters"]["type"] == "OBJECT"
    with pytest.raises(UsageError, match="model"):
        build_request("gemini", [], model="")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_calls_given_with_registry_names_go_out_under_wire_names(dialect: Dialect) -> None:
    messages = conversation(dialect)
    names = ToolNameMap(dialect, ["weather.get"])
    turn = messages[2]
    assert isinstance(turn, AssistantMessage)
    mapped = AssistantMessage(
        text=turn.text, calls=tuple(names.call_from_wire(c) for c in turn.calls)
    )
    assert {c.name for c in mapped.calls} == {"weather.get"}
    original = build_request(dialect, messages, TOOLS, model="m")
    again = build_request(dialect, [*messages[:2], mapped, *messages[3:]], TOOLS, model="m")
    assert again == original


@pytest.mark.parametrize("dialect", DIALECTS)
def test_options_cannot_replace_the_built_fields(dialect: Dialect) -> None:
    field = {"gemini": "contents", "openai_responses": "input"}.get(dialect, "messages")
    with pytest.raises(UsageError, match="clash"):
        clash: dict[str, Any] = {field: []}
        build_request(dialect, [UserMessage(text="hi")], model="m", **clash)
    body: dict[str, Any] = build_request(
        dialect, [UserMessage(text="hi")], model="m", temperature=0.5
    )
    assert body["temperature"] == 0.5


def test_unknown_dialect_and_unknown_message_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="unknown dialect"):
        build_request("cohere", [], model="m")  # type: ignore[arg-type]  # not a Dialect: the run-time check
    for dialect in DIALECTS:
        with pytest.raises(UsageError, match="not a conversation message"):
            build_request(dialect, ["hello"], model="m")  # type: ignore[list-item]


def test_the_message_modules_stay_sans_io() -> None:
    # The result formatters belong to the core: no async or HTTP library may come in.
    root = Path(__file__).resolve().parents[2]

    code = (
        "import sys, sse_toolcalls.messages, sse_toolcalls.conversation, sse_toolcalls.dialects.naming;"
        "bad = [m for m in ('anyio', 'httpx', 'trio', 'jsonschema') if m in sys.modules];"
        "print(','.join(bad))"
    )
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, cwd=root
    ).stdout.strip()
    assert out == ""
