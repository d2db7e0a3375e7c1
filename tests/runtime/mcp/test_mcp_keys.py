"""``mcp serve``: an idempotency key names one call (issue 29, example 8). Reused with
other arguments or for another tool it is refused and nothing runs; the same call again
is a replay whatever the order of its arguments' keys; an empty, blank, non-string or
over-long key is refused, not ignored; a call refused by validation gives its key back.
Driven by the SDK's own client through its in-memory transport, and by two servers
(two workers) sharing one SQLite ledger."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client
from mcp_types import CallToolResult, RequestParamsMeta, TextContent

from sse_toolcalls.runtime import Dispatcher, SQLiteLedger
from sse_toolcalls.runtime.keyclaim import claim_text
from sse_toolcalls.runtime.ledgers.base import key_arguments
from sse_toolcalls.runtime.mcp import IDEMPOTENCY_KEY_META, build_server
from sse_toolcalls.runtime.mcp.server import MAX_IDEMPOTENCY_KEY_CHARS
from sse_toolcalls.runtime.tools import ToolRegistry

pytestmark = [pytest.mark.anyio]


def bank() -> tuple[ToolRegistry, list[tuple[str, int]]]:
    registry = ToolRegistry()
    paid: list[tuple[str, int]] = []

    @registry.register(effect="write")
    def pay(to: str, amount: int) -> str:
        """Pay someone."""
        paid.append((to, amount))
        return f"paid {amount} to {to}"

    @registry.register(effect="write")
    def refund(to: str, amount: int) -> str:
        """Refund someone."""
        paid.append((to, -amount))
        return f"refunded {amount} to {to}"

    return registry, paid


def meta(key: Any) -> RequestParamsMeta:
    # RequestParamsMeta is an open TypedDict (PEP 728), which mypy cannot build yet.
    return cast(RequestParamsMeta, {IDEMPOTENCY_KEY_META: key})


def body(result: CallToolResult) -> Any:
    (block,) = result.content
    assert isinstance(block, TextContent)
    try:
        return json.loads(block.text)
    except json.JSONDecodeError:
        return block.text


async def test_a_key_reused_with_other_arguments_is_refused_and_runs_nothing(
    anyio_backend: str,
) -> None:
    registry, paid = bank()
    async with Client(build_server(registry)) as client:
        first = await client.call_tool("pay", {"to": "bob", "amount": 10}, meta=meta("k1"))
        assert (first.is_error, body(first)) == (False, "paid 10 to bob")
        other = await client.call_tool("pay", {"to": "bob", "amount": 99}, meta=meta("k1"))
        refused = body(other)
        assert other.is_error and refused["error"] == "idempotency_key_conflict", refused
        assert "already used for another call" in refused["message"]
        # Another tool under the same key: refused too.
        refund = await client.call_tool("refund", {"to": "bob", "amount": 10}, meta=meta("k1"))
        assert refund.is_error and body(refund)["error"] == "idempotency_key_conflict"
        # The same call again, its keys in another order: a replay, not a conflict.
        again = await client.call_tool("pay", {"amount": 10, "to": "bob"}, meta=meta("k1"))
        replay = body(again)
        assert (again.is_error, replay["replayed"], replay["result"]) == (
            False,
            True,
            "paid 10 to bob",
        )
    assert paid == [("bob", 10)]


@pytest.mark.parametrize("key", ["", "   ", "\t\n", 123, ["k"]])
async def test_an_empty_blank_or_non_string_key_is_refused_not_ignored(
    key: Any, anyio_backend: str
) -> None:
    registry, paid = bank()
    async with Client(build_server(registry)) as client:
        for _ in range(2):
            result = await client.call_tool("pay", {"to": "bob", "amount": 10}, meta=meta(key))
            refused = body(result)
            assert result.is_error and refused["error"] == "idempotency_key_conflict"
            assert "non-empty string" in refused["message"]
    assert paid == []


async def test_an_over_long_key_is_refused(anyio_backend: str) -> None:
    registry, paid = bank()
    async with Client(build_server(registry)) as client:
        fits = await client.call_tool(
            "pay", {"to": "a", "amount": 1}, meta=meta("k" * MAX_IDEMPOTENCY_KEY_CHARS)
        )
        assert not fits.is_error
        long = await client.call_tool(
            "pay", {"to": "a", "amount": 1}, meta=meta("k" * (MAX_IDEMPOTENCY_KEY_CHARS + 1))
        )
        assert long.is_error and "over the limit" in body(long)["message"]
    assert paid == [("a", 1)]


async def test_a_call_refused_by_validation_gives_its_key_back(anyio_backend: str) -> None:
    registry, paid = bank()
    async with Client(build_server(registry)) as client:
        wrong = await client.call_tool("pay", {"to": "bob", "amount": "lots"}, meta=meta("k2"))
        assert body(wrong)["error"] == "invalid_arguments"
        fixed = await client.call_tool("pay", {"to": "bob", "amount": 5}, meta=meta("k2"))
        assert (fixed.is_error, body(fixed)) == (False, "paid 5 to bob")
    assert paid == [("bob", 5)]


async def test_two_workers_sharing_a_ledger_agree_on_what_a_key_names(
    tmp_path: Path, anyio_backend: str
) -> None:
    registry, paid = bank()
    with SQLiteLedger(tmp_path / "ledger.db") as ledger:
        one = build_server(registry, dispatcher=Dispatcher(registry, ledger=ledger))
        two = build_server(registry, dispatcher=Dispatcher(registry, ledger=ledger))
        async with Client(one) as first, Client(two) as second:
            ok = await first.call_tool("pay", {"to": "bob", "amount": 10}, meta=meta("k3"))
            assert not ok.is_error
            other = await second.call_tool("pay", {"to": "bob", "amount": 99}, meta=meta("k3"))
            assert body(other)["error"] == "idempotency_key_conflict"
            same = await second.call_tool("pay", {"to": "bob", "amount": 10}, meta=meta("k3"))
            assert body(same)["replayed"] is True
    assert paid == [("bob", 10)]


async def test_racing_calls_under_one_key_run_one_write(anyio_backend: str) -> None:
    registry, paid = bank()
    results: dict[int, CallToolResult] = {}
    async with Client(build_server(registry)) as client:

        async def pay(amount: int) -> None:
            args = {"to": "bob", "amount": amount}
            results[amount] = await client.call_tool("pay", args, meta=meta("race"))

        async with anyio.create_task_group() as group:
            for amount in (10, 99, 7):
                group.start_soon(pay, amount)
    assert len(paid) == 1
    ((_, winner),) = paid
    for amount, result in results.items():
        if amount == winner:
            assert not result.is_error
        else:
            assert body(result)["error"] == "idempotency_key_conflict"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(st.dictionaries(st.text(max_size=4), _JSON, max_size=5), st.randoms())
def test_the_claim_ignores_key_order_and_sees_every_change(
    arguments: dict[str, Any], rng: Any
) -> None:
    items = list(arguments.items())
    rng.shuffle(items)

    def claim(tool: str, args: dict[str, Any]) -> str:
        return claim_text(tool, key_arguments(args))

    assert claim("pay", dict(items)) == claim("pay", arguments)
    assert claim("refund", arguments) != claim("pay", arguments)
    changed = {**arguments, "\x00extra": 1}
    assert claim("pay", changed) != claim("pay", arguments)
