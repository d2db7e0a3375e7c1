"""Typing that helps users (issue 11, item 8) and the totals of a run (item 7): reprs that
say what an object is, errors whose text says what happened, a decorator that keeps the
signature, and usage read the same way from every dialect."""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Any

import pytest

from sse_toolcalls.calls import PartialToolCall, ToolCall
from sse_toolcalls.errors import TruncatedStreamError
from sse_toolcalls.parser import StreamParser, ToolCallParser
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.runtime.partial_json import PartialJSON
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.runtime.usage import Usage, usage_of
from sse_toolcalls.tooling.simulator import Simulator
from tests.runtime.test_agent import FakeClient, answer

CALL = ToolCall(name="get_weather", args={}, provider="anthropic", call_id="t1", index=0)


def tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register(effect="write", needs_approval=True)
    def pay(bill: str, amount: int) -> str:
        """Pay a bill."""
        return f"paid {bill}"

    @registry.register
    def lookup(key: str) -> str:
        """Look something up."""
        return key

    if TYPE_CHECKING:
        # Checked by mypy (warn_unused_ignores): the decorated functions keep their
        # signatures, so a wrong argument is an error the ignore is needed for.
        pay("B-1", "ten")  # type: ignore[arg-type]
        lookup(key=1)  # type: ignore[arg-type]
        _wrong: int = lookup("k")  # type: ignore[assignment]
    assert pay("B-1", 10) == "paid B-1"  # still the plain function
    return registry


def test_the_truncated_stream_error_says_why_and_what_arrived() -> None:
    error = TruncatedStreamError(
        "anthropic: the stream ended before message_stop",
        reason="eof",
        provider="anthropic",
        completed=[CALL],
        partial=[PartialToolCall(name="pay", call_id="t2", index=1, raw_arguments='{"bi')],
    )
    text = str(error)
    assert text.startswith("anthropic: the stream ended before message_stop")
    assert "reason eof" in text and "1 completed call(s) not yet returned (get_weather)" in text
    assert "1 partial" in text
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == text


def test_reprs_say_what_each_object_is() -> None:
    registry = tools()
    assert repr(registry) == (
        "<ToolRegistry 2 tool(s): pay (write, needs approval), lookup (read)>"
    )
    parser = StreamParser("openai_chat")
    assert repr(parser) == "<StreamParser openai_chat, open, 0 call(s) completed>"
    assert repr(ToolCallParser()) == (
        "<ToolCallParser dialect not yet recognised, open, 0 call(s) completed>"
    )
    client = client_for("anthropic", model="claude-x", api_key="sk-secret", base_url="http://h")
    assert repr(client) == "<AnthropicClient 'claude-x' at http://h, a key>"
    assert "sk-secret" not in repr(client)
    agent = Agent(FakeClient([answer("hi")]), registry, max_steps=3)
    assert "tools: pay, lookup" in repr(agent) and "max_steps=3" in repr(agent)
    assert repr(PartialJSON()) == "<PartialJSON 0 chars, depth 0, state=value>"
    assert repr(Simulator()) == "<Simulator not running, 0 request(s) received>"
    with Simulator() as sim:
        assert repr(sim) == f"<Simulator at {sim.base_url}, 0 request(s) received>"


@pytest.mark.anyio
async def test_a_reply_repr_is_one_line_with_its_counts() -> None:
    reply = await Agent(FakeClient([answer("hello " * 20)]), tools()).run("hi")
    text = repr(reply)
    assert text.startswith("<AgentReply answer: 'hello hello")
    assert "..." in text and "1 steps, 1 requests, 0 calls" in text


@pytest.mark.parametrize(
    ("dialect", "raw", "expected"),
    [
        (
            "openai_chat",
            {
                "prompt_tokens": 100,
                "completion_tokens": 30,
                "prompt_tokens_details": {"cached_tokens": 64},
                "completion_tokens_details": {"reasoning_tokens": 12},
            },
            Usage(
                input_tokens=100,
                output_tokens=30,
                cache_read_tokens=64,
                reasoning_tokens=12,
                turns=1,
            ),
        ),
        (
            "openai_responses",
            {
                "input_tokens": 100,
                "output_tokens": 30,
                "input_tokens_details": {"cached_tokens": 64},
                "output_tokens_details": {"reasoning_tokens": 12},
            },
            Usage(
                input_tokens=100,
                output_tokens=30,
                cache_read_tokens=64,
                reasoning_tokens=12,
                turns=1,
            ),
        ),
        (
            "anthropic",
            {
                "input_tokens": 10,
                "output_tokens": 30,
                "cache_read_input_tokens": 64,
                "cache_creation_input_tokens": 26,
            },
            Usage(
                input_tokens=100,
                output_tokens=30,
                cache_read_tokens=64,
                cache_write_tokens=26,
                turns=1,
            ),
        ),
        (
            "gemini",
            {
                "promptTokenCount": 100,
                "candidatesTokenCount": 18,
                "thoughtsTokenCount": 12,
                "cachedContentTokenCount": 64,
            },
            Usage(
                input_tokens=100,
                output_tokens=30,
                cache_read_tokens=64,
                reasoning_tokens=12,
                turns=1,
            ),
        ),
    ],
)
def test_usage_means_the_same_in_every_dialect(
    dialect: str, raw: dict[str, Any], expected: Usage
) -> None:
    assert usage_of(dialect, raw) == expected


def test_usage_sums_and_leaves_unreported_counts_unknown() -> None:
    one = usage_of("anthropic", {"input_tokens": 5, "output_tokens": 2})
    other = usage_of("openai_chat", {"prompt_tokens": 7, "completion_tokens": True})
    total = one + other
    assert total.input_tokens == 12 and total.output_tokens == 2  # a bool is no count
    assert total.reasoning_tokens is None and total.turns == 2
    assert usage_of("gemini", None) == Usage() and usage_of("gemini", {"x": 1}) == Usage()
    assert usage_of("openai_chat", {"prompt_tokens": -3}) == Usage()
