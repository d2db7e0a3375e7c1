"""A custom ledger that fails with an exception of its own (not ``LedgerError``) is a
ledger failure like any other: the write does not run unrecorded, the model gets the
ledger's refusal, the developer a ``ledger_error`` diagnostic, and the run goes on (it
ended in the ``internal_error`` fallback). Asyncio and trio (the ``anyio_backend`` fixture).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from sse_toolcalls.calls import StreamEvent, StreamFinished, ToolCall, ToolSpec
from sse_toolcalls.conversation import Conversation
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.dispatch import Dispatcher
from sse_toolcalls.runtime.errors import LedgerError, ToolRetry
from sse_toolcalls.runtime.ledgers.base import LedgerEntry, call_ledger
from sse_toolcalls.runtime.ledgers.memory import InMemoryLedger
from sse_toolcalls.runtime.tools import ToolRegistry

pytestmark = pytest.mark.anyio

FOREIGN: list[BaseException] = [
    RuntimeError("connection pool exhausted"),
    KeyError("missing"),
    sqlite3.OperationalError("database is locked"),
]


class FailingLedger(InMemoryLedger):
    """An in-memory ledger whose ``failing`` method raises ``error``."""

    def __init__(self, failing: str, error: BaseException) -> None:
        super().__init__()
        self.failing = failing
        self.error = error

    def _maybe_fail(self, method: str) -> None:
        if method == self.failing:
            raise self.error

    async def get(self, key: str) -> LedgerEntry | None:
        self._maybe_fail("get")
        return await super().get(key)

    async def reserve(self, key: str, *, tool: str) -> LedgerEntry | None:
        self._maybe_fail("reserve")
        return await super().reserve(key, tool=tool)

    async def record(self, key: str, content: Any, *, is_error: bool = False) -> None:
        self._maybe_fail("record")
        await super().record(key, content, is_error=is_error)

    async def forget(self, key: str) -> None:
        self._maybe_fail("forget")
        await super().forget(key)


def _pay_registry(executed: list[str], *, retry: bool = False) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register(effect="write")
    def pay(to: str) -> str:
        """Pay someone."""
        executed.append(to)
        if retry:
            raise ToolRetry("say who, by full name")
        return "paid"

    return registry


def _pay(call_id: str = "c0") -> ToolCall:
    return ToolCall(name="pay", args={"to": "bob"}, provider="anthropic", call_id=call_id, index=0)


def _ledger_diagnostic(diagnostics: Sequence[Any]) -> Any:
    (found,) = [d for d in diagnostics if d.kind == "ledger_error"]
    return found


@pytest.mark.parametrize("error", FOREIGN, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("failing", ["get", "reserve"])
async def test_a_foreign_failure_before_the_write_refuses_it(
    failing: str, error: BaseException, caplog: pytest.LogCaptureFixture
) -> None:
    executed: list[str] = []
    ledger = FailingLedger(failing, error)
    with caplog.at_level(logging.ERROR, logger="sse_toolcalls.runtime"):
        (report,) = await Dispatcher(_pay_registry(executed), ledger=ledger).dispatch([_pay()])
    assert executed == []
    assert (report.outcome, report.runs) == ("ledger_error", 0)
    assert report.result.is_error
    diagnostic = _ledger_diagnostic(report.diagnostics)
    assert f"the ledger's {failing} raised {type(error).__name__}" in diagnostic.message
    assert (diagnostic.exception or "").startswith("LedgerError(")
    assert [r for r in caplog.records if getattr(r, "event", "") == "ledger_error"]


@pytest.mark.parametrize("error", FOREIGN, ids=lambda e: type(e).__name__)
async def test_the_typed_error_is_chained_to_the_ledgers_own(error: BaseException) -> None:
    async def fails() -> None:
        raise error

    with pytest.raises(LedgerError) as caught:
        await call_ledger("record", fails)
    assert caught.value.__cause__ is error


@pytest.mark.parametrize("method", ["get", "reserve"])
async def test_an_entry_of_the_wrong_type_is_the_ledgers_failure(method: str) -> None:
    async def odd() -> dict[str, str]:
        return {"state": "done"}

    with pytest.raises(LedgerError, match="returned dict, not a LedgerEntry"):
        await call_ledger(method, odd)


@pytest.mark.parametrize("error", FOREIGN, ids=lambda e: type(e).__name__)
async def test_a_foreign_failure_recording_the_result_keeps_the_result(
    error: BaseException,
) -> None:
    executed: list[str] = []
    ledger = FailingLedger("record", error)
    (report,) = await Dispatcher(_pay_registry(executed), ledger=ledger).dispatch([_pay()])
    assert executed == ["bob"]  # it ran once, and is never run again for this key
    assert (report.outcome, report.runs) == ("ok", 1)
    assert report.result.content == "paid"
    diagnostic = _ledger_diagnostic(report.diagnostics)
    assert "could not be recorded" in diagnostic.message
    assert type(error).__name__ in diagnostic.message


async def test_a_foreign_failure_forgetting_a_refused_write_is_reported() -> None:
    executed: list[str] = []
    ledger = FailingLedger("forget", RuntimeError("gone"))
    registry = _pay_registry(executed, retry=True)
    (report,) = await Dispatcher(registry, ledger=ledger).dispatch([_pay()])
    assert executed == ["bob"]
    assert report.outcome == "retry"
    assert "RuntimeError" in _ledger_diagnostic(report.diagnostics).message


class _Client:
    dialect = "anthropic"

    def __init__(self) -> None:
        self.turns = [
            StreamFinished(stop_reason="tool_use", calls=(_pay("toolu_0"),)),
            StreamFinished(stop_reason="end_turn", text="I could not pay bob."),
        ]

    async def stream_events(
        self, conversation: Conversation, tools: Sequence[ToolSpec] = (), **options: Any
    ) -> AsyncIterator[StreamEvent]:
        yield self.turns.pop(0)


@pytest.mark.parametrize("failing", ["get", "reserve", "record"])
async def test_the_agent_run_goes_on_after_a_foreign_ledger_failure(failing: str) -> None:
    executed: list[str] = []
    ledger = FailingLedger(failing, RuntimeError("pool exhausted"))
    agent = Agent(_Client(), _pay_registry(executed), ledger=ledger)
    reply = await agent.run("pay bob")
    assert not reply.is_fallback, reply.diagnostics
    assert reply.text == "I could not pay bob."
    assert executed == ([] if failing != "record" else ["bob"])
    assert any(d.kind == "ledger_error" for d in reply.diagnostics)
