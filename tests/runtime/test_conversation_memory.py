"""Conversation memory (issue 11, item 2; issue 15, item 3): ``Agent.run(text,
conversation_id=...)`` continues the conversation from the store, in memory, in SQLite
and in PostgreSQL; the model (the simulator) receives the earlier turns. Every dialect,
asyncio and trio."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from sse_toolcalls import Dialect
from sse_toolcalls.calls import DIALECTS, ToolCall, ToolResult
from sse_toolcalls.conversation import (
    AssistantMessage,
    Message,
    SystemPrompt,
    ToolResultsMessage,
    UserMessage,
)
from sse_toolcalls.runtime.agent import Agent, AgentReply
from sse_toolcalls.runtime.approval import approval_id
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.runtime.errors import ConversationStoreError
from sse_toolcalls.runtime.retry import RetryPolicy
from sse_toolcalls.runtime.stores.base import (
    ConversationStore,
    Exchange,
    messages_from_json,
    messages_to_json,
)
from sse_toolcalls.runtime.stores.memory import InMemoryConversationStore
from sse_toolcalls.runtime.stores.postgres import PostgresConversationStore
from sse_toolcalls.runtime.stores.sqlite import SQLiteConversationStore
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.tooling.simulator import ScriptedCall, Simulator, Turn

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:Async generator 'httpx\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore\\.:ResourceWarning"),
]

SEND = ScriptedCall(name="send_money", args={"to": "bob", "amount": 10})

StoreFactory = Callable[[], Any]


async def no_sleep(seconds: float) -> None:
    await anyio.lowlevel.checkpoint()


def bank(runs: Counter[str]) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register(effect="write")
    def send_money(to: str, amount: int) -> dict[str, str]:
        """Send money to someone.

        Args:
            to: who receives it.
            amount: how much.
        """
        runs[to] += 1
        return {"receipt": f"R{sum(runs.values())}"}

    return registry


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """Makes the store a fresh worker would open (the in-memory one is the same object:
    it lives in one process)."""
    if request.param == "memory":
        shared = InMemoryConversationStore()
        return lambda: shared
    if request.param == "sqlite":
        return lambda: SQLiteConversationStore(tmp_path / "store.db")
    dsn = request.getfixturevalue("postgres_dsn")
    return lambda: PostgresConversationStore(dsn)


@asynccontextmanager
async def opened(store: Any) -> AsyncIterator[ConversationStore]:
    try:
        yield store
    finally:
        if isinstance(store, SQLiteConversationStore):
            store.close()
        elif isinstance(store, PostgresConversationStore):
            await store.aclose()


async def say(
    sim: Simulator,
    dialect: Dialect,
    store: Any,
    runs: Counter[str],
    turns: Sequence[Turn],
    text: str,
    **options: Any,
) -> AgentReply:
    """One user message, answered by a fresh agent (a fresh worker) over the store."""
    sim.play(list(turns), continuing=True)
    async with (
        opened(store) as kept,
        client_for(
            dialect,
            model="sim-model-1",
            api_key="test-key",
            base_url=sim.base_url_for(dialect),
            idle_timeout=1.0,
        ) as client,
    ):
        agent = Agent(client, bank(runs), store=kept, retry=RetryPolicy(sleep=no_sleep))
        with anyio.fail_after(30):
            reply = await agent.run(text, **options)
    sim.assert_no_problems()
    return reply


def first_body(sim: Simulator) -> str:
    return json.dumps(sim.requests[0].body, ensure_ascii=False)


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_the_model_receives_the_earlier_turns(
    dialect: Dialect, simulator: Simulator, stores: StoreFactory
) -> None:
    runs: Counter[str] = Counter()
    first = await say(
        simulator,
        dialect,
        stores(),
        runs,
        [Turn(calls=(SEND,)), Turn(text="Sent 10 to Bob.")],
        "Send Bob 10",
        conversation_id="chat-7",
        request_id="msg-1",
    )
    assert not first.is_fallback
    second = await say(
        simulator,
        dialect,
        stores(),
        runs,
        [Turn(text="You sent Bob 10 earlier.")],
        "What did I just do?",
        conversation_id="chat-7",
        request_id="msg-2",
    )
    body = first_body(simulator)
    for earlier in ("Send Bob 10", "Sent 10 to Bob.", "R1", "What did I just do?"):
        assert earlier in body, f"{earlier!r} missing from the request"
    assert body.index("Send Bob 10") < body.index("What did I just do?")
    users = [m.text for m in second.conversation if isinstance(m, UserMessage)]
    assert users == ["Send Bob 10", "What did I just do?"]
    assert runs == {"bob": 1}
    # Another conversation starts empty.
    await say(
        simulator,
        dialect,
        stores(),
        runs,
        [Turn(text="Hello.")],
        "Hi",
        conversation_id="chat-8",
        request_id="msg-3",
    )
    assert "Send Bob 10" not in first_body(simulator)


@pytest.mark.parametrize("dialect", ["openai_chat", "gemini"])
async def test_a_resubmitted_request_replaces_its_own_exchange(
    dialect: Dialect, simulator: Simulator, stores: StoreFactory
) -> None:
    runs: Counter[str] = Counter()
    options = {"conversation_id": "chat-7", "request_id": "msg-1"}
    await say(simulator, dialect, stores(), runs, [Turn(text="Hi!")], "Hello", **options)
    again = await say(simulator, dialect, stores(), runs, [Turn(text="Hi!")], "Hello", **options)
    assert first_body(simulator).count("Hello") == 1, "the user's message is not repeated"
    assert [type(m) for m in again.conversation] == [UserMessage, AssistantMessage]
    later = await say(
        simulator, dialect, stores(), runs, [Turn(text="Bye")], "Bye", conversation_id="chat-7"
    )
    assert [m.text for m in later.conversation if isinstance(m, UserMessage)] == ["Hello", "Bye"]


@pytest.mark.parametrize("dialect", ["anthropic"])
async def test_history_given_by_the_application_leaves_the_store_alone(
    dialect: Dialect, simulator: Simulator
) -> None:
    store = InMemoryConversationStore()
    runs: Counter[str] = Counter()
    history: list[Message] = [UserMessage(text="My name is Ana."), AssistantMessage(text="Hi Ana")]
    reply = await say(
        simulator,
        dialect,
        store,
        runs,
        [Turn(text="Ana.")],
        "What is my name?",
        conversation_id="chat-7",
        history=history,
    )
    assert "My name is Ana." in first_body(simulator)
    assert len(reply.conversation) == 4
    assert await store.load("chat-7") == []


class BrokenStore:
    async def load(self, conversation_id: str) -> list[Exchange]:
        raise ConversationStoreError("connection refused")

    async def save(
        self, conversation_id: str, request_id: str, messages: Sequence[Message]
    ) -> None:
        raise ConversationStoreError("connection refused")


class BuggyStore:
    """An application's store with a bug: it raises something that is not ours."""

    def __init__(self) -> None:
        self.loaded = False

    async def load(self, conversation_id: str) -> list[Exchange]:
        if self.loaded:
            raise KeyError(conversation_id)
        self.loaded = True
        return []

    async def save(
        self, conversation_id: str, request_id: str, messages: Sequence[Message]
    ) -> None:
        raise RuntimeError("the store's own bug")


@pytest.mark.parametrize("dialect", ["openai_chat"])
async def test_a_store_that_fails_to_save_still_answers_the_user(
    dialect: Dialect, simulator: Simulator
) -> None:
    runs: Counter[str] = Counter()
    store = BuggyStore()
    reply = await say(
        simulator, dialect, store, runs, [Turn(text="Hi!")], "Hello", conversation_id="c"
    )
    assert reply.text == "Hi!" and not reply.is_fallback
    assert [d.kind for d in reply.diagnostics] == ["store_error"]
    again = await say(
        simulator, dialect, store, runs, [Turn(text="Hi!")], "Hello", conversation_id="c"
    )
    assert again.is_fallback and [d.kind for d in again.diagnostics] == ["store_error"]


@pytest.mark.parametrize("dialect", ["openai_responses"])
async def test_a_store_that_cannot_be_read_runs_nothing(
    dialect: Dialect, simulator: Simulator
) -> None:
    runs: Counter[str] = Counter()
    reply = await say(
        simulator,
        dialect,
        BrokenStore(),
        runs,
        [Turn(calls=(SEND,)), Turn(text="Sent.")],
        "Send Bob 10",
        conversation_id="chat-7",
    )
    assert reply.is_fallback and reply.reason == "internal_error"
    assert [d.kind for d in reply.diagnostics] == ["store_error"]
    assert simulator.requests == () and runs == {}


async def test_messages_round_trip_through_the_codec() -> None:
    call = ToolCall(
        name="pay",
        args={"to": "bob", "n": 2**70},
        provider="gemini",
        call_id=None,
        index=1,
        raw_arguments='{"to":"bob"}',
        thought_signature="sig",
    )
    messages: list[Message] = [
        SystemPrompt(text="Be brief."),
        UserMessage(text="Pay bob \u00e9"),
        AssistantMessage(text="", calls=(call,)),
        ToolResultsMessage(results=(ToolResult(call=call, content={"ok": True}, is_error=True),)),
    ]
    assert messages_from_json(messages_to_json(messages)) == tuple(messages)


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"type": "user"}',
        '[{"type": "user", "text": 5}]',
        '[{"type": "robot"}]',
        '[{"type": "assistant", "text": "", "calls": [{"provider": "nope"}]}]',
        '[{"type": "results", "results": [1]}]',
        "[" * 100_000,
    ],
)
async def test_a_stored_value_that_does_not_decode_is_our_error(text: str) -> None:
    with pytest.raises(ConversationStoreError):
        messages_from_json(text)


async def test_the_in_memory_store_keeps_the_most_recent_conversations() -> None:
    store = InMemoryConversationStore(max_conversations=2)
    for name in ("a", "b", "c"):
        await store.save(name, "r", [UserMessage(text=name)])
    assert await store.load("a") == []
    assert [e.messages for e in await store.load("c")] == [(UserMessage(text="c"),)]


@pytest.mark.parametrize("dialect", ["anthropic"])
async def test_a_paused_run_is_saved_and_its_resumption_saved_again(
    dialect: Dialect, simulator: Simulator
) -> None:
    store = InMemoryConversationStore()
    runs: Counter[str] = Counter()
    registry = ToolRegistry()

    def send_money(to: str, amount: int) -> str:
        """Send money to someone.

        Args:
            to: who receives it.
            amount: how much.
        """
        runs[to] += 1
        return "sent"

    registry.register(send_money, effect="write", needs_approval=True)
    simulator.play([Turn(calls=(SEND,)), Turn(text="Sent.")])
    async with client_for(
        dialect, model="sim-model-1", api_key="k", base_url=simulator.base_url_for(dialect)
    ) as client:
        agent = Agent(client, registry, store=store, retry=RetryPolicy(sleep=no_sleep))
        paused = await agent.run("Send Bob 10", conversation_id="chat-7", request_id="msg-1")
        assert paused.state is not None and runs == {}
        (kept,) = await store.load("chat-7")
        assert [type(m) for m in kept.messages] == [UserMessage, AssistantMessage]
        done = await agent.resume(paused.state, approve=[approval_id(paused.pending_approvals[0])])
    assert done.text == "Sent." and runs == {"bob": 1}
    (kept,) = await store.load("chat-7")
    assert [type(m) for m in kept.messages] == [
        UserMessage,
        AssistantMessage,
        ToolResultsMessage,
        AssistantMessage,
    ]
