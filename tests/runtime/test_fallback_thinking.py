"""FallbackClient's thinking quirk on every dialect that runs Claude: the ``thinking``
option goes only where the provider would refuse the carried conversation with it on,
each dialect reading its own thinking blocks, and the caller's options stay untouched."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from sse_toolcalls.calls import (
    Dialect,
    ReasoningBlock,
    StreamEvent,
    StreamFinished,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from sse_toolcalls.conversation import (
    AssistantMessage,
    Conversation,
    Message,
    ToolResultsMessage,
    UserMessage,
)
from sse_toolcalls.runtime import FallbackClient

THINKING = {"type": "enabled", "budget_tokens": 1024}


class Recorder:
    """A client that answers every turn at once and keeps the options it was given."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.options: list[dict[str, Any]] = []

    async def stream_events(
        self, conversation: Conversation, tools: Sequence[ToolSpec] = (), **options: Any
    ) -> AsyncIterator[StreamEvent]:
        self.options.append(options)
        yield StreamFinished(stop_reason="end_turn", text="ok")


def made_by(dialect: Dialect, *, thinking: bool) -> list[Message]:
    """A tool turn of ``dialect`` (with its own thinking block or none) and its result."""
    call = ToolCall(name="f", args={}, provider=dialect, call_id="toolu_1", index=0)
    reasoning = (
        (ReasoningBlock(provider=dialect, kind="thinking", text="t", signature="s"),)
        if thinking
        else ()
    )
    return [
        UserMessage(text="hi"),
        AssistantMessage(calls=(call,), reasoning=reasoning),
        ToolResultsMessage(results=(ToolResult(call=call, content="ok"),)),
    ]


async def sent_options(
    dialect: Dialect, conversation: list[Message], options: dict[str, Any]
) -> dict[str, Any]:
    recorder = Recorder(dialect)
    client = FallbackClient([recorder], options=[options])
    async for _ in client.stream_events(conversation):
        pass
    (sent,) = recorder.options
    return sent


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", ["anthropic", "bedrock_anthropic"])
async def test_a_turn_with_its_own_thinking_keeps_the_option(dialect: Dialect) -> None:
    # bedrock_anthropic's blocks are its own (provider "bedrock_anthropic"): read with
    # the anthropic dialect's rule, they looked absent and thinking was dropped.
    sent = await sent_options(dialect, made_by(dialect, thinking=True), {"thinking": THINKING})
    assert sent == {"thinking": THINKING}


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", ["anthropic", "bedrock_anthropic"])
async def test_a_carried_turn_drops_the_option(dialect: Dialect) -> None:
    carried = made_by("openai_chat", thinking=False)
    options = {"thinking": THINKING, "temperature": 1}
    sent = await sent_options(dialect, carried, options)
    assert sent == {"temperature": 1}


@pytest.mark.anyio
async def test_converse_drops_only_the_thinking_it_passes_to_claude() -> None:
    # Claude on Converse takes thinking in additionalModelRequestFields.
    fields = {"thinking": THINKING, "top_k": 5}
    options = {"additionalModelRequestFields": fields, "inferenceConfig": {"maxTokens": 9}}
    before = copy.deepcopy(options)
    carried = made_by("gemini", thinking=False)
    sent = await sent_options("bedrock_converse", carried, options)
    assert sent == {
        "additionalModelRequestFields": {"top_k": 5},
        "inferenceConfig": {"maxTokens": 9},
    }
    assert options == before  # the caller's objects are not edited
    only = {"additionalModelRequestFields": {"thinking": THINKING}}
    assert await sent_options("bedrock_converse", carried, only) == {}
    home = made_by("bedrock_converse", thinking=True)
    assert await sent_options("bedrock_converse", home, options) == options


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", ["openai_chat", "openai_responses", "gemini"])
async def test_other_dialects_options_go_as_they_are(dialect: Dialect) -> None:
    options = {"thinking": THINKING}
    assert await sent_options(dialect, made_by("anthropic", thinking=False), options) == options
