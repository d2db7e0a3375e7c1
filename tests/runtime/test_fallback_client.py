"""Cross-provider conversations and fallback (issue 12, item 2): the neutral conversation
carried over to any dialect, and FallbackClient moving a turn to the next provider when
the primary's transient failures are used up, on every ordered pair of dialects and both
backends, against the simulator."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from sse_toolcalls import (
    AssistantMessage,
    Dialect,
    ProviderError,
    ReasoningBlock,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    UsageError,
    UserMessage,
    build_request,
    carry_over,
)
from sse_toolcalls.calls import DIALECTS
from sse_toolcalls.conversation import Message
from sse_toolcalls.runtime import FallbackClient
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.clients import ProviderClient, client_for
from sse_toolcalls.runtime.ledgers.memory import InMemoryLedger
from sse_toolcalls.runtime.retry import RetryPolicy
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.tooling.simulator import ExpectedResult, HTTPError, ScriptedCall, Simulator, Turn

from .test_reasoning import OPTIONS

PAIRS = list(itertools.permutations(DIALECTS, 2))

pytestmark = [
    # As in test_chaos.py: httpx leaves abandoned body iterators to the collector.
    pytest.mark.filterwarnings("ignore:Async generator 'httpx\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore\\.:ResourceWarning"),
]


async def no_sleep(seconds: float) -> None:
    await anyio.lowlevel.checkpoint()


FAST = RetryPolicy(attempts=2, sleep=no_sleep, random=lambda: 0.5)


class Bank:
    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()

        @registry.register(effect="write")
        def send_money(to: str, amount: int) -> dict[str, str]:
            """Send money.

            Args:
                to: who receives it.
                amount: how much.
            """
            self.runs["send_money"] += 1
            return {"receipt": "R-1001"}

        @registry.register
        def balance(account: str) -> dict[str, int]:
            """An account's balance.

            Args:
                account: the account.
            """
            self.runs["balance"] += 1
            return {"balance": 4242}

        return registry


def _client(simulator: Simulator, dialect: Dialect) -> ProviderClient:
    return client_for(
        dialect, model="m", api_key="k", base_url=simulator.base_url_for(dialect), idle_timeout=5
    )


@pytest.mark.anyio
@pytest.mark.parametrize(("primary", "secondary"), PAIRS, ids=[f"{p}->{s}" for p, s in PAIRS])
async def test_a_turn_moves_to_the_secondary_and_back(
    primary: Dialect, secondary: Dialect, simulator: Simulator
) -> None:
    down = Turn(fault=HTTPError(status=503))
    simulator.play(
        [
            # The primary makes a write (thinking first), then goes down for one turn.
            Turn(
                thinking="Send it.",
                calls=(ScriptedCall(name="send_money", args={"to": "bob", "amount": 10}),),
            ),
            down,
            down,
            # The secondary gets the whole conversation in its own dialect.
            Turn(
                thinking="Now check.",
                calls=(ScriptedCall(name="balance", args={"account": "main"}),),
                expect_results=(ExpectedResult(call_position=0, contains="R-1001"),),
            ),
            # The primary is back and reads the secondary's turn in its own dialect.
            Turn(
                text="Sent; 4242 left.",
                expect_results=(ExpectedResult(call_position=0, contains="4242"),),
            ),
        ]
    )
    bank = Bank()
    async with _client(simulator, primary) as first, _client(simulator, secondary) as second:
        client = FallbackClient(
            [first, second], options=[OPTIONS[primary], OPTIONS[secondary]], retry=FAST
        )
        agent = Agent(client, bank.registry(), ledger=InMemoryLedger(), retry=FAST)
        with anyio.fail_after(30):
            reply = await agent.run("Send Bob 10 and tell me the balance", request_id="m-1")
    simulator.assert_no_problems()
    assert reply.text == "Sent; 4242 left." and not reply.is_fallback
    assert [r.dialect for r in simulator.requests] == [
        primary,
        primary,
        primary,
        secondary,
        primary,
    ]
    assert bank.runs == {"send_money": 1, "balance": 1}  # nothing ran twice
    assert client.served_by == 0


@pytest.mark.anyio
async def test_every_provider_down_is_one_fallback_reply(simulator: Simulator) -> None:
    down = Turn(fault=HTTPError(status=503))
    simulator.play(
        [Turn(calls=(ScriptedCall(name="balance", args={"account": "a"}),)), *[down] * 4]
    )
    bank = Bank()
    async with _client(simulator, "anthropic") as first, _client(simulator, "gemini") as second:
        client = FallbackClient([first, second], retry=FAST)
        agent = Agent(client, bank.registry(), retry=FAST)
        with anyio.fail_after(30):
            reply = await agent.run("balance?")
    assert reply.is_fallback and reply.reason == "provider_unavailable"
    assert bank.runs == {"balance": 1}
    # Each provider's retries were spent once; the Agent does not start the chain again.
    assert len(simulator.requests) == 5
    assert any("all_providers_failed" in (d.code or "") for d in reply.diagnostics)


def test_fallback_client_refuses_what_it_cannot_carry() -> None:
    with pytest.raises(UsageError):
        FallbackClient([])

    class NoDialect:
        def stream_events(self, conversation: Any, tools: Any = (), **options: Any) -> Any:
            raise AssertionError

    with pytest.raises(UsageError, match="no dialect"):
        FallbackClient([NoDialect()])


# --------------------------------------------------------------------------------------
# carry_over, the rule.


def _gemini_turn() -> tuple[AssistantMessage, ToolResultsMessage]:
    calls = tuple(
        ToolCall(
            name="balance",
            args={"account": account},
            provider="gemini",
            call_id=None,
            index=n,
            raw_arguments=f'{{"account": "{account}"}}',
            thought_signature="sig-g" if n == 0 else None,
        )
        for n, account in enumerate(["a", "b"])
    )
    results = tuple(ToolResult(call=c, content={"balance": n}) for n, c in enumerate(calls))
    return AssistantMessage(calls=calls), ToolResultsMessage(results=results)


@pytest.mark.parametrize("dialect", ["openai_chat", "openai_responses", "anthropic"])
def test_gemini_calls_without_ids_get_stable_ids(dialect: Dialect) -> None:
    turn, results = _gemini_turn()
    conversation: list[Message] = [UserMessage(text="hi"), turn, results]
    carried = carry_over(conversation, dialect)
    again = carry_over(conversation, dialect)
    assert carried == again  # stable: the same conversation, the same ids
    moved = carried[1]
    assert isinstance(moved, AssistantMessage)
    ids = [c.call_id for c in moved.calls]
    assert len(set(ids)) == 2 and all(i is not None and i.startswith("call_") for i in ids)
    assert all(c.provider == dialect and c.thought_signature is None for c in moved.calls)
    answered = carried[2]
    assert isinstance(answered, ToolResultsMessage)
    assert [r.call.call_id for r in answered.results] == ids
    build_request(dialect, carried, model="m")  # and it encodes


def test_ids_a_dialect_cannot_take_are_remapped_and_reasoning_dropped() -> None:
    call = ToolCall(
        name="balance", args={}, provider="openai_chat", call_id="call:weird/id", index=0
    )
    thinking = ReasoningBlock(provider="openai_responses", kind="reasoning", item_id="rs_1")
    conversation: list[Message] = [
        UserMessage(text="hi"),
        AssistantMessage(calls=(call,), reasoning=(thinking,)),
        ToolResultsMessage(results=(ToolResult(call=call, content="ok"),)),
    ]
    body = build_request("anthropic", carry_over(conversation, "anthropic"), model="m")
    tool_use = body["messages"][1]["content"][0]
    tool_result = body["messages"][2]["content"][0]
    assert tool_use["id"] == tool_result["tool_use_id"]
    assert tool_use["id"].startswith("call_") and "/" not in tool_use["id"]
    # Responses keeps its own reasoning when the conversation comes home.
    home = carry_over(conversation, "openai_responses")
    assert isinstance(home[1], AssistantMessage) and home[1].reasoning == (thinking,)
    # To Gemini: no ids (Gemini pairs by order and name).
    gemini = build_request("gemini", carry_over(conversation, "gemini"), model="m")
    assert "id" not in gemini["contents"][1]["parts"][0]["functionCall"]


def test_a_conversation_of_the_same_dialect_is_unchanged() -> None:
    turn, results = _gemini_turn()
    conversation: list[Message] = [UserMessage(text="hi"), turn, results]
    carried = carry_over(conversation, "gemini")
    assert all(a is b for a, b in zip(carried, conversation, strict=True))


def test_exhausted_error_is_not_retryable() -> None:
    error = ProviderError("x", provider=None, code="all_providers_failed")
    assert not error.retryable
