"""Multimodal tool results (issue 12, item 4): a tool returns images and documents; each
dialect sends them in its own shape, checked by the simulator as the API checks it; Chat
Completions gets the documented text fallback."""

from __future__ import annotations

import base64
from typing import Any

import anyio
import pytest

from sse_toolcalls import (
    Document,
    Image,
    ProviderError,
    ToolCall,
    ToolResult,
    UserMessage,
    build_request,
)
from sse_toolcalls.calls import DIALECTS, Dialect
from sse_toolcalls.conversation import AssistantMessage, Message, ToolResultsMessage
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.runtime.tools.results import ok_result
from sse_toolcalls.tooling.simulator import ExpectedResult, ScriptedCall, Simulator, Turn

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"

# What each dialect's endpoint must receive for [text, image, document].
MEDIA: dict[str, tuple[str, ...]] = {
    "anthropic": ("image/png", "application/pdf"),
    "openai_responses": ("image/png", "application/pdf"),
    "gemini": ("image/png", "application/pdf"),
    "openai_chat": (),
    "bedrock_anthropic": ("image/png", "application/pdf"),
    "bedrock_converse": ("image/png", "application/pdf"),
}


def _registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    def chart(city: str) -> list[Any]:
        """A city's weather chart and report.

        Args:
            city: the city.
        """
        return [
            f"Chart for {city}",
            Image(data=PNG, media_type="image/png"),
            Document(data=PDF, name="report.pdf"),
        ]

    return registry


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", DIALECTS)
async def test_images_and_documents_reach_the_model_in_its_dialect(
    dialect: Dialect, simulator: Simulator
) -> None:
    expect = ExpectedResult(call_position=0, contains="Chart for Rome", media=MEDIA[dialect])
    fallback = (
        ()
        if dialect != "openai_chat"
        else (
            ExpectedResult(call_position=0, contains="[image (image/png, 70 bytes)"),
            ExpectedResult(call_position=0, contains="[document 'report.pdf' (application/pdf"),
        )
    )
    simulator.play(
        [
            Turn(calls=(ScriptedCall(name="chart", args={"city": "Rome"}),)),
            Turn(text="Here it is.", expect_results=(expect, *fallback)),
        ]
    )
    async with client_for(
        dialect, model="m", api_key="k", base_url=simulator.base_url_for(dialect)
    ) as client:
        with anyio.fail_after(30):
            reply = await Agent(client, _registry()).run("Chart for Rome?")
    simulator.assert_no_problems()
    assert reply.text == "Here it is."
    (result,) = reply.results
    assert [type(part) for part in result.media] == [Image, Document]


def _call(dialect: Dialect) -> ToolCall:
    return ToolCall(name="chart", args={}, provider=dialect, call_id="call_1", index=0)


def _body(dialect: Dialect, result: ToolResult) -> dict[str, Any]:
    conversation: list[Message] = [
        UserMessage(text="hi"),
        AssistantMessage(calls=(result.call,)),
        ToolResultsMessage(results=(result,)),
    ]
    return build_request(dialect, conversation, model="m")


def test_each_wire_shape() -> None:
    media = (Image(data=PNG), Image(url="https://example.com/a.png"), Document(data=PDF))
    anthropic = _body("anthropic", ToolResult(call=_call("anthropic"), content="t", media=media))
    content = anthropic["messages"][2]["content"][0]["content"]
    assert content[0] == {"type": "text", "text": "t"}
    assert content[1]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": base64.b64encode(PNG).decode(),
    }
    assert content[2] == {
        "type": "image",
        "source": {"type": "url", "url": "https://example.com/a.png"},
    }
    assert content[3]["type"] == "document"
    responses = _body(
        "openai_responses", ToolResult(call=_call("openai_responses"), content="t", media=media)
    )
    output = responses["input"][2]["output"]
    assert [item["type"] for item in output] == [
        "input_text",
        "input_image",
        "input_image",
        "input_file",
    ]
    assert output[1]["image_url"].startswith("data:image/png;base64,")
    assert output[3]["file_data"].startswith("data:application/pdf;base64,")
    gemini = _body("gemini", ToolResult(call=_call("gemini"), content="t", media=media))
    parts = gemini["contents"][2]["parts"][0]["functionResponse"]["parts"]
    assert parts[0] == {
        "inlineData": {"mimeType": "image/png", "data": base64.b64encode(PNG).decode()}
    }
    assert parts[1] == {
        "fileData": {"mimeType": "image/png", "fileUri": "https://example.com/a.png"}
    }
    chat = _body("openai_chat", ToolResult(call=_call("openai_chat"), content="t", media=media))
    text = chat["messages"][2]["content"]
    assert isinstance(text, str) and text.startswith("t\n[image (image/png, 70 bytes)")
    assert "https://example.com/a.png" in text


def test_ok_result_takes_media_from_the_return_value() -> None:
    call = _call("anthropic")
    single = ok_result(call, Image(data=PNG))
    assert single.content == "" and single.media == (Image(data=PNG),)
    mixed = ok_result(call, ("caption", Image(data=PNG), {"k": 1}))
    assert mixed.content == ["caption", {"k": 1}] and len(mixed.media) == 1
    plain = ok_result(call, ["a", "b"])
    assert plain.content == ["a", "b"] and plain.media == ()


@pytest.mark.anyio
async def test_the_simulator_refuses_a_bad_image_shape(simulator: Simulator) -> None:
    simulator.play([Turn(calls=(ScriptedCall(name="chart", args={}),)), Turn(text="ok")])
    base = simulator.base_url_for("anthropic")
    async with client_for("anthropic", model="m", api_key="k", base_url=base) as client:
        messages: list[Message] = [UserMessage(text="hi")]
        calls = [e async for e in client.stream_tool_calls(messages)]
        # An image of a type the API does not take.
        bad = ToolResult(
            call=calls[0], content="x", media=(Image(data=PNG, media_type="image/bmp"),)
        )
        messages += [AssistantMessage(calls=tuple(calls)), ToolResultsMessage(results=(bad,))]
        with pytest.raises(ProviderError):
            async for _ in client.stream_events(messages):
                pass
    assert any("needs a base64 source" in p for p in simulator.problems)
