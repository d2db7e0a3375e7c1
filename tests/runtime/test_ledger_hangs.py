"""A ledger or a conversation store that stops answering (issue 29, item 18): every call
to one has a deadline, past which the call has failed and the user still gets a reply.
Ledgers that never return, async and sync (a thread blocked for good), for each method;
stores whose ``load`` or ``save`` never returns. The one-minute ``fail_after`` is only a
hang guard: the deadlines under test are a fraction of a second."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

import anyio
import pytest

from sse_toolcalls.conversation import Message
from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.dispatch import Dispatcher
from sse_toolcalls.runtime.ledgers.base import LedgerEntry, SyncLedgerAdapter
from sse_toolcalls.runtime.ledgers.memory import InMemoryLedger
from sse_toolcalls.runtime.stores.base import Exchange
from sse_toolcalls.runtime.stores.memory import InMemoryConversationStore
from tests.runtime.test_ledger_failures import _Client, _pay, _pay_registry

pytestmark = pytest.mark.anyio

DEADLINE = 0.3
"""The deadline given to the ledger and the store in these tests, in seconds."""

GUARD = 60.0
"""Seconds after which a test counts as hung (the bug): far above any deadline here."""


class StuckLedger(InMemoryLedger):
    """An in-memory ledger whose ``stuck`` method never returns."""

    def __init__(self, stuck: str) -> None:
        super().__init__()
        self.stuck = stuck

    async def _maybe_hang(self, method: str) -> None:
        if method == self.stuck:
            await anyio.sleep_forever()

    async def get(self, key: str) -> LedgerEntry | None:
        await self._maybe_hang("get")
        return await super().get(key)

    async def reserve(self, key: str, *, tool: str) -> LedgerEntry | None:
        await self._maybe_hang("reserve")
        return await super().reserve(key, tool=tool)

    async def record(self, key: str, content: Any, *, is_error: bool = False) -> None:
        await self._maybe_hang("record")
        await super().record(key, content, is_error=is_error)


class StuckSyncLedger:
    """A synchronous ledger (the old protocol) whose ``stuck`` method blocks its thread
    until ``release`` is set: a driver waiting on a server that never answers."""

    def __init__(self, stuck: str, release: threading.Event) -> None:
        self.stuck = stuck
        self.release = release
        self.entries: dict[str, LedgerEntry] = {}

    def _maybe_block(self, method: str) -> None:
        if method == self.stuck:
            self.release.wait()

    def get(self, key: str) -> LedgerEntry | None:
        self._maybe_block("get")
        return self.entries.get(key)

    def reserve(self, key: str, *, tool: str) -> LedgerEntry | None:
        self._maybe_block("reserve")
        if key in self.entries:
            return self.entries[key]
        self.entries[key] = LedgerEntry(key=key, state="in_flight", tool=tool)
        return None

    def record(self, key: str, content: Any, *, is_error: bool = False) -> None:
        self._maybe_block("record")
        self.entries[key] = LedgerEntry(key=key, state="done", tool="", content=content)

    def forget(self, key: str) -> None:
        self.entries.pop(key, None)


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown, so that an abandoned thread ends with the test."""
    event = threading.Event()
    yield event
    event.set()


def _ledger(kind: str, stuck: str, release: threading.Event) -> Any:
    if kind == "async":
        return StuckLedger(stuck)
    return SyncLedgerAdapter(StuckSyncLedger(stuck, release))


@pytest.mark.parametrize("kind", ["async", "sync"])
@pytest.mark.parametrize("stuck", ["get", "reserve"])
async def test_a_ledger_that_never_answers_before_the_write_refuses_it(
    kind: str, stuck: str, release: threading.Event
) -> None:
    executed: list[str] = []
    dispatcher = Dispatcher(
        _pay_registry(executed), ledger=_ledger(kind, stuck, release), ledger_timeout=DEADLINE
    )
    with anyio.fail_after(GUARD):
        (report,) = await dispatcher.dispatch([_pay()])
    assert executed == []
    assert (report.outcome, report.runs) == ("ledger_error", 0)
    (problem,) = [d for d in report.diagnostics if d.kind == "ledger_error"]
    assert f"the ledger's {stuck} did not answer within {DEADLINE} s" in problem.message


@pytest.mark.parametrize("kind", ["async", "sync"])
async def test_a_record_that_never_returns_keeps_the_result(
    kind: str, release: threading.Event
) -> None:
    executed: list[str] = []
    dispatcher = Dispatcher(
        _pay_registry(executed), ledger=_ledger(kind, "record", release), ledger_timeout=DEADLINE
    )
    with anyio.fail_after(GUARD):
        (report,) = await dispatcher.dispatch([_pay()])
    assert executed == ["bob"]
    assert (report.outcome, report.result.content) == ("ok", "paid")
    (problem,) = [d for d in report.diagnostics if d.kind == "ledger_error"]
    assert "did not answer within" in problem.message


@pytest.mark.parametrize("kind", ["async", "sync"])
@pytest.mark.parametrize("stuck", ["get", "reserve", "record"])
async def test_the_agent_replies_when_its_ledger_never_answers(
    kind: str, stuck: str, release: threading.Event
) -> None:
    executed: list[str] = []
    agent = Agent(
        _Client(),
        _pay_registry(executed),
        ledger=_ledger(kind, stuck, release),
        ledger_timeout=DEADLINE,
    )
    with anyio.fail_after(GUARD):
        reply = await agent.run("pay bob")
    assert not reply.is_fallback, reply.diagnostics
    assert reply.text == "I could not pay bob."
    assert executed == ([] if stuck != "record" else ["bob"])
    assert any(d.kind == "ledger_error" for d in reply.diagnostics)


class StuckStore(InMemoryConversationStore):
    def __init__(self, stuck: str) -> None:
        super().__init__()
        self.stuck = stuck

    async def load(self, conversation_id: str) -> list[Exchange]:
        if self.stuck == "load":
            await anyio.sleep_forever()
        return await super().load(conversation_id)

    async def save(
        self, conversation_id: str, request_id: str, messages: Sequence[Message]
    ) -> None:
        if self.stuck == "save":
            await anyio.sleep_forever()
        await super().save(conversation_id, request_id, messages)


@pytest.mark.parametrize("stuck", ["load", "save"])
async def test_the_agent_replies_when_its_store_never_answers(stuck: str) -> None:
    executed: list[str] = []
    agent = Agent(
        _Client(), _pay_registry(executed), store=StuckStore(stuck), store_timeout=DEADLINE
    )
    with anyio.fail_after(GUARD):
        reply = await agent.run("pay bob", conversation_id="chat-1")
    (problem,) = [d for d in reply.diagnostics if d.kind == "store_error"]
    assert f"store's {stuck} did not answer within {DEADLINE} s" in problem.message
    if stuck == "load":
        # Without its history the run runs nothing: the fallback, no write.
        assert reply.is_fallback and reply.reason == "internal_error"
        assert executed == []
    else:
        assert not reply.is_fallback and reply.text == "I could not pay bob."
        assert executed == ["bob"]


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf")])
def test_a_deadline_must_be_a_positive_number_of_seconds(bad: float) -> None:
    with pytest.raises(UsageError):
        Dispatcher(_pay_registry([]), ledger_timeout=bad)
    with pytest.raises(UsageError):
        Agent(_Client(), _pay_registry([]), store_timeout=bad)


@pytest.mark.parametrize("kind", ["async", "sync"])
@pytest.mark.parametrize("stuck", ["get", "reserve", "record"])
async def test_a_key_claim_that_never_answers_refuses_the_write(
    kind: str, stuck: str, release: threading.Event
) -> None:
    """An application's own key is claimed for its call first (runtime/keyclaim.py):
    that claim is bounded like every other ledger call."""
    executed: list[str] = []
    dispatcher = Dispatcher(
        _pay_registry(executed),
        ledger=_ledger(kind, stuck, release),
        ledger_timeout=DEADLINE,
        key=lambda validated, request_id, occurrence: f"app-{request_id}",
    )
    with anyio.fail_after(GUARD):
        (report,) = await dispatcher.dispatch([_pay()], request_id="r1")
    assert executed == []
    assert (report.outcome, report.runs) == ("ledger_error", 0)
