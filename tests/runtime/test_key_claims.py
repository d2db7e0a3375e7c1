"""The runtime's own key path (issue 29, "idempotency keys are checked against what they
name"): with an application's :data:`KeyFunction` that does not make its key of the
arguments, a key reused for other arguments or another tool is refused, never answered
with the first call's recorded result; the same call again replays; a call that ran
nothing gives its key back. The default key is made of the arguments and needs no claim."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sse_toolcalls.calls import ToolCall
from sse_toolcalls.runtime import Dispatcher, InMemoryLedger, SQLiteLedger
from sse_toolcalls.runtime.errors import ToolRetry
from sse_toolcalls.runtime.tools import ToolRegistry, ValidatedCall

pytestmark = [pytest.mark.anyio]


def per_request(validated: ValidatedCall, request_id: str, occurrence: int) -> str:
    """An application's key: one per request and tool, the arguments left out."""
    return f"{request_id}:{validated.tool.name}:{occurrence}"


def bank() -> tuple[ToolRegistry, list[tuple[str, int]]]:
    registry = ToolRegistry()
    paid: list[tuple[str, int]] = []

    @registry.register(effect="write")
    def pay(to: str, amount: int) -> str:
        """Pay someone."""
        if amount < 0:
            raise ToolRetry("the amount must be positive")
        paid.append((to, amount))
        return f"paid {amount} to {to}"

    @registry.register(effect="write")
    def refund(to: str, amount: int) -> str:
        """Refund someone."""
        paid.append((to, -amount))
        return f"refunded {amount} to {to}"

    return registry, paid


def call(name: str, n: int = 0, **args: Any) -> ToolCall:
    return ToolCall(name=name, args=args, provider="openai_chat", call_id=f"c{n}", index=0)


async def test_a_reused_key_with_other_arguments_is_refused_not_replayed(
    anyio_backend: str,
) -> None:
    registry, paid = bank()
    dispatcher = Dispatcher(registry, key=per_request)
    (first,) = await dispatcher.dispatch([call("pay", 1, to="bob", amount=10)], request_id="r1")
    assert (first.outcome, first.result.content) == ("ok", "paid 10 to bob")
    # Before: "replayed", telling the model that 99 was paid when 10 was.
    (other,) = await dispatcher.dispatch([call("pay", 2, to="bob", amount=99)], request_id="r1")
    assert other.outcome == "refused" and other.runs == 0
    assert isinstance(other.result.content, dict)
    assert other.result.content["error"] == "idempotency_key_conflict"
    # The same call, its keys in another order: a replay of the first.
    (again,) = await dispatcher.dispatch([call("pay", 3, amount=10, to="bob")], request_id="r1")
    assert again.outcome == "replayed"
    assert paid == [("bob", 10)]


async def test_a_key_shared_by_two_tools_is_refused(anyio_backend: str) -> None:
    registry, paid = bank()
    dispatcher = Dispatcher(registry, key=lambda validated, request_id, occurrence: request_id)
    reports = await dispatcher.dispatch([call("pay", 1, to="a", amount=1)], request_id="r")
    assert reports[0].outcome == "ok"
    (refund,) = await dispatcher.dispatch([call("refund", 2, to="a", amount=1)], request_id="r")
    assert refund.outcome == "refused"
    assert paid == [("a", 1)]


async def test_a_call_that_ran_nothing_gives_its_key_back(anyio_backend: str) -> None:
    registry, paid = bank()
    dispatcher = Dispatcher(registry, key=per_request)
    (retry,) = await dispatcher.dispatch([call("pay", 1, to="bob", amount=-5)], request_id="r2")
    assert retry.outcome == "retry"
    (fixed,) = await dispatcher.dispatch([call("pay", 2, to="bob", amount=5)], request_id="r2")
    assert fixed.outcome == "ok"
    assert paid == [("bob", 5)]


async def test_workers_sharing_a_ledger_agree(tmp_path: Path, anyio_backend: str) -> None:
    registry, paid = bank()
    with SQLiteLedger(tmp_path / "ledger.db") as ledger:
        one = Dispatcher(registry, ledger=ledger, key=per_request)
        two = Dispatcher(registry, ledger=ledger, key=per_request)
        (ok,) = await one.dispatch([call("pay", 1, to="bob", amount=10)], request_id="r3")
        (other,) = await two.dispatch([call("pay", 2, to="bob", amount=99)], request_id="r3")
    assert (ok.outcome, other.outcome) == ("ok", "refused")
    assert paid == [("bob", 10)]


async def test_the_default_key_makes_no_claim(anyio_backend: str) -> None:
    registry, paid = bank()
    ledger = InMemoryLedger()
    dispatcher = Dispatcher(registry, ledger=ledger)
    await dispatcher.dispatch([call("pay", 1, to="bob", amount=10)], request_id="r4")
    (other,) = await dispatcher.dispatch([call("pay", 2, to="bob", amount=99)], request_id="r4")
    # A new message of one request may pay another amount: its key is another key.
    assert other.outcome == "ok" and paid == [("bob", 10), ("bob", 99)]
    assert len(ledger.entries()) == 2
