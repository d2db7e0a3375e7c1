"""Reasoning round trips (issue 12, item 1): thinking and reasoning blocks captured from
the stream, kept in the assistant turn and sent back exactly, checked by the simulator as
the real APIs check them, through the Agent, on asyncio and trio."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from sse_toolcalls import (
    AssistantMessage,
    Dialect,
    ProviderError,
    ReasoningBlock,
    ReasoningCompleted,
    StreamFinished,
    StreamParser,
    ToolCallParser,
    ToolResult,
    ToolResultsMessage,
    UserMessage,
)
from sse_toolcalls.calls import DIALECTS, StreamEvent
from sse_toolcalls.conversation import Message
from sse_toolcalls.messages import build_request
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.tooling.simulator import ScriptedCall, Simulator, Turn
from sse_toolcalls.tooling.simulator.encoders import encode_turn

OWN = Path(__file__).resolve().parents[2] / "recorded_streams"

# What each dialect needs to turn its reasoning on, as a real caller sends it.
OPTIONS: dict[str, dict[str, Any]] = {
    "anthropic": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
    "openai_responses": {"store": False, "reasoning": {"effort": "low", "summary": "auto"}},
    "gemini": {"generationConfig": {"thinkingConfig": {"includeThoughts": True}}},
    "openai_chat": {},
    # Claude on Bedrock: InvokeModel's body is Anthropic's; Converse passes it through.
    "bedrock_anthropic": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
    "bedrock_converse": {
        "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    },
}

WEATHER = ScriptedCall(name="weather", args={"city": "Rome"})
INTERLEAVED = Turn(
    thinking="Rome first.",
    redacted_thinking="EmwKAhgBEgy3va3pzix/LafPsn4a",
    calls=(WEATHER, ScriptedCall(name="weather", args={"city": "Oslo"}, thinking="Oslo next.")),
)


def _events(dialect: Dialect, data: bytes, *, whole: bool) -> list[StreamEvent]:
    parser = StreamParser(dialect)
    if whole:
        return parser.feed(data) + parser.finish()
    out: list[StreamEvent] = []
    for n in range(len(data)):
        out += parser.feed(data[n : n + 1])
    return out + parser.finish()


def _finished(events: list[StreamEvent]) -> StreamFinished:
    last = events[-1]
    assert isinstance(last, StreamFinished)
    return last


@pytest.mark.parametrize("whole", [True, False], ids=["whole", "byte-by-byte"])
def test_anthropic_thinking_block_is_captured_whole_with_its_signature(whole: bool) -> None:
    data = (OWN / "anthropic" / "thinking_then_tool_use.sse").read_bytes()
    events = _events("anthropic", data, whole=whole)
    finished = _finished(events)
    (block,) = finished.reasoning
    assert block.kind == "thinking" and block.provider == "anthropic"
    assert block.text == (
        "The person asks for Ada Lovelace's height. The get_measurement tool gives it;"
        " the metric is height. I will make the function call."
    )
    assert block.signature == "SigRS0215+handMade/Zm9vYmFy=="
    assert block.before_call == 0
    assert [e.block for e in events if isinstance(e, ReasoningCompleted)] == [block]
    # The calls-only parser keeps them too: the turn must carry them back.
    parser = ToolCallParser("anthropic")
    parser.feed(data)
    parser.finish()


def test_responses_reasoning_item_is_captured_with_its_id() -> None:
    data = (OWN / "openai_responses" / "reasoning_then_call.sse").read_bytes()
    finished = _finished(_events("openai_responses", data, whole=True))
    (block,) = finished.reasoning
    assert block.kind == "reasoning"
    assert block.item_id == "rs_RS0113reasoning"
    assert block.before_call == 0 and len(finished.calls) == 1


@pytest.mark.parametrize("dialect", ["anthropic", "openai_responses"])
def test_interleaved_blocks_keep_their_places_under_every_split(dialect: Dialect) -> None:
    chunks = encode_turn(dialect, INTERLEAVED)
    data = b"".join(chunks)
    whole = _finished(_events(dialect, data, whole=True))
    assert _finished(_events(dialect, data, whole=False)) == whole
    assert [(b.kind, b.before_call) for b in whole.reasoning] == (
        [("thinking", 0), ("redacted_thinking", 0), ("thinking", 1)]
        if dialect == "anthropic"
        else [("reasoning", 0), ("reasoning", 1)]
    )
    # Sent back: each block before the call it preceded, exactly as received.
    turn = AssistantMessage(calls=whole.calls, reasoning=whole.reasoning)
    body = build_request(dialect, [UserMessage(text="hi"), turn], model="m", **OPTIONS[dialect])
    if dialect == "anthropic":
        content = body["messages"][1]["content"]
        assert [b["type"] for b in content] == [
            "thinking",
            "redacted_thinking",
            "tool_use",
            "thinking",
            "tool_use",
        ]
        first = whole.reasoning[0]
        assert content[0] == {
            "type": "thinking",
            "thinking": first.text,
            "signature": first.signature,
        }
        assert content[1] == {"type": "redacted_thinking", "data": INTERLEAVED.redacted_thinking}
    else:
        items = body["input"][1:]
        assert [i["type"] for i in items] == [
            "reasoning",
            "function_call",
            "reasoning",
            "function_call",
        ]
        assert items[0]["id"] == whole.reasoning[0].item_id
        assert items[0]["summary"] == [{"type": "summary_text", "text": "Rome first."}]
        assert items[0]["encrypted_content"] == whole.reasoning[0].data
        assert body["include"] == ["reasoning.encrypted_content"]


def test_chat_reasoning_content_goes_back_whole_and_reasoning_is_only_shown() -> None:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n"

    call = {"index": 0, "id": "c1", "function": {"name": "weather", "arguments": "{}"}}
    for field, kept in (("reasoning_content", True), ("reasoning", False)):
        raw = (
            chunk({field: "Rome "})
            + chunk({field: "first."})
            + chunk({"tool_calls": [call]})
            + chunk({}, "tool_calls")
            + b"data: [DONE]\n\n"
        )
        for whole in (True, False):
            (finished,) = [
                e for e in _events("openai_chat", raw, whole=whole) if isinstance(e, StreamFinished)
            ]
            blocks = [(b.kind, b.text) for b in finished.reasoning]
            assert blocks == ([("reasoning_content", "Rome first.")] if kept else [])
        (message, _) = build_request(
            "openai_chat",
            [
                UserMessage(text="hi"),
                AssistantMessage(calls=finished.calls, reasoning=finished.reasoning),
                ToolResultsMessage(results=(ToolResult(call=finished.calls[0], content="sunny"),)),
            ],
            model="m",
        )["messages"][1:3]
        assert message.get("reasoning_content") == ("Rome first." if kept else None)


def test_reasoning_of_another_provider_is_left_out() -> None:
    block = ReasoningBlock(provider="anthropic", kind="thinking", text="t", signature="s")
    for dialect in DIALECTS:
        if dialect == "anthropic":
            continue
        body = build_request(
            dialect,
            [UserMessage(text="hi"), AssistantMessage(text="ok", reasoning=(block,))],
            model="m",
        )
        assert b"signature" not in repr(body).encode()


class World:
    def __init__(self) -> None:
        self.runs: list[str] = []

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()

        @registry.register
        def weather(city: str) -> str:
            """The weather in a city.

            Args:
                city: the city.
            """
            self.runs.append(city)
            return f"sunny in {city}"

        return registry


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", DIALECTS)
async def test_agent_keeps_reasoning_through_a_tool_loop(
    dialect: Dialect, simulator: Simulator
) -> None:
    simulator.play(
        [
            INTERLEAVED,
            Turn(
                thinking="Now Bern.", calls=(ScriptedCall(name="weather", args={"city": "Bern"}),)
            ),
            Turn(text="Sunny everywhere."),
        ]
    )
    world = World()
    async with client_for(
        dialect, model="m", api_key="k", base_url=simulator.base_url_for(dialect)
    ) as client:
        agent = Agent(client, world.registry(), options=OPTIONS[dialect])
        with anyio.fail_after(30):
            reply = await agent.run("What is the weather?")
    simulator.assert_no_problems()
    assert reply.text == "Sunny everywhere."
    assert sorted(world.runs) == ["Bern", "Oslo", "Rome"]  # a turn's calls run in parallel


async def _second_request(
    dialect: Dialect, simulator: Simulator, keep: bool, **options: Any
) -> list[str]:
    """Play a thinking tool turn, then send its results with or without its reasoning;
    return what the simulator refused."""
    simulator.play([INTERLEAVED, Turn(text="Done.")])
    async with client_for(
        dialect, model="m", api_key="k", base_url=simulator.base_url_for(dialect)
    ) as client:
        messages: list[Message] = [UserMessage(text="weather?")]
        finished = None
        async for event in client.stream_events(messages, **options):
            if isinstance(event, StreamFinished):
                finished = event
        assert finished is not None
        reasoning = finished.reasoning if keep else ()
        messages.append(AssistantMessage(calls=finished.calls, reasoning=reasoning))
        results = tuple(ToolResult(call=c, content="sunny") for c in finished.calls)
        messages.append(ToolResultsMessage(results=results))
        try:
            async for _ in client.stream_events(messages, **options):
                pass
        except ProviderError:
            pass
    return list(simulator.problems)


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", ["anthropic", "openai_responses", "openai_chat"])
async def test_the_simulator_refuses_a_tool_turn_without_its_reasoning(
    dialect: Dialect, simulator: Simulator
) -> None:
    assert await _second_request(dialect, simulator, True, **OPTIONS[dialect]) == []
    problems = await _second_request(dialect, simulator, False, **OPTIONS[dialect])
    expected = {
        "anthropic": "must start with a thinking block",
        "openai_responses": "required 'reasoning' item",
        # DeepSeek's thinking mode, a Chat Completions server that streams it.
        "openai_chat": "reasoning_content in the thinking mode must be passed back",
    }[dialect]
    # One refusal (Anthropic's whole message) or one per call (Responses).
    assert problems and all(expected in p for p in problems)


@pytest.mark.anyio
async def test_the_simulator_refuses_edited_thinking(simulator: Simulator) -> None:
    simulator.play([INTERLEAVED, Turn(text="Done.")])
    options = OPTIONS["anthropic"]
    async with client_for(
        "anthropic", model="m", api_key="k", base_url=simulator.base_url_for("anthropic")
    ) as client:
        messages: list[Message] = [UserMessage(text="weather?")]
        finished = None
        async for event in client.stream_events(messages, **options):
            if isinstance(event, StreamFinished):
                finished = event
        assert finished is not None
        first, *rest = finished.reasoning
        edited = ReasoningBlock(
            provider="anthropic",
            kind="thinking",
            text=first.text + " (edited)",
            signature=first.signature,
        )
        messages.append(AssistantMessage(calls=finished.calls, reasoning=(edited, *rest)))
        results = tuple(ToolResult(call=c, content="sunny") for c in finished.calls)
        messages.append(ToolResultsMessage(results=results))
        with pytest.raises(ProviderError):
            async for _ in client.stream_events(messages, **options):
                pass
    assert any("Invalid `signature`" in p for p in simulator.problems)


@pytest.mark.anyio
async def test_unstored_reasoning_needs_its_encrypted_content(simulator: Simulator) -> None:
    # store=False without the include: the items come without encrypted content, and an
    # unstored item sent by id alone is not found. build_request asks for it itself, so
    # only a caller who strips the include meets this; the simulator must still see it.
    simulator.play([INTERLEAVED, Turn(text="Done.")])
    base = simulator.base_url_for("openai_responses")
    async with client_for("openai_responses", model="m", api_key="k", base_url=base) as client:
        messages: list[Message] = [UserMessage(text="weather?")]
        finished = None
        async for event in client.stream_events(messages, store=True):
            if isinstance(event, StreamFinished):
                finished = event
        assert finished is not None
        assert all(block.data is None for block in finished.reasoning)
        messages.append(AssistantMessage(calls=finished.calls, reasoning=finished.reasoning))
        results = tuple(ToolResult(call=c, content="sunny") for c in finished.calls)
        messages.append(ToolResultsMessage(results=results))
        with pytest.raises(ProviderError):
            async for _ in client.stream_events(messages, store=False):
                pass
    assert any("not persisted when `store` is set to false" in p for p in simulator.problems)
