"""Tool context (issue 11, item 5): a ``ToolContext`` parameter, left out of the schema,
gives the conversation id, the request id, the call and the application's dependencies;
``functools.partial`` and bound methods are tools. The Agent against the simulator, every
dialect, asyncio and trio."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Annotated

import anyio
import pytest

from sse_toolcalls import Dialect
from sse_toolcalls.calls import DIALECTS
from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime import ToolContext
from sse_toolcalls.runtime.agent import Agent, AgentReply
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.tooling.simulator import ExpectedResult, ScriptedCall, Simulator, Turn

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:Async generator 'httpx\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore\\.:ResourceWarning"),
]


@dataclass
class Shop:
    """The application's own dependencies."""

    name: str
    orders: list[tuple[str, str, str, str]] = field(default_factory=list)

    def stock(self, item: str) -> str:
        """How many of an item are in stock.

        Args:
            item: the item.
        """
        return f"{self.name}: 3 {item}"


def shop_tools() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register(effect="write")
    async def order(ctx: ToolContext[Shop], item: str) -> str:
        """Order an item.

        Args:
            item: what to order.
        """
        ctx.deps.orders.append((ctx.conversation_id, ctx.request_id, ctx.call.name, item))
        return f"{ctx.deps.name} ordered {item}"

    def price(item: str, currency: str, ctx: Annotated[ToolContext[Shop], "ctx"]) -> str:
        """The price of an item.

        Args:
            item: the item.
            currency: the currency.
        """
        return f"{ctx.deps.name}: 5 {currency} for {item}"

    registry.register(functools.partial(price, currency="EUR"))
    registry.register(Shop("bound").stock)
    return registry


def test_the_context_parameter_is_not_in_the_schema() -> None:
    specs = {spec.name: spec.parameters for spec in shop_tools().specs()}
    assert specs["order"]["properties"].keys() == {"item"}
    assert specs["order"]["required"] == ["item"]
    assert specs["price"]["properties"].keys() == {"item", "currency"}
    assert specs["price"]["required"] == ["item"]  # the partial's bound one is a default
    assert specs["stock"]["properties"].keys() == {"item"}  # no self


def test_two_context_parameters_are_refused() -> None:
    def twice(a: ToolContext[None], b: ToolContext[None]) -> None:
        """Two contexts."""

    with pytest.raises(UsageError, match="one ToolContext"):
        ToolRegistry().register(twice)


async def ask(
    sim: Simulator, dialect: Dialect, agent_deps: Shop, run_deps: Shop | None
) -> AgentReply:
    sim.play(
        [
            Turn(
                calls=(
                    ScriptedCall(name="order", args={"item": "tea"}),
                    ScriptedCall(name="price", args={"item": "tea"}),
                    ScriptedCall(name="stock", args={"item": "tea"}),
                )
            ),
            Turn(
                text="Ordered.",
                expect_results=(
                    ExpectedResult(call_position=0, contains="ordered tea"),
                    ExpectedResult(call_position=1, contains="5 EUR for tea"),
                    ExpectedResult(call_position=2, contains="bound: 3 tea"),
                ),
            ),
        ]
    )
    async with client_for(
        dialect, model="sim-model-1", api_key="test-key", base_url=sim.base_url_for(dialect)
    ) as client:
        agent = Agent(client, shop_tools(), deps=agent_deps)
        with anyio.fail_after(30):
            reply = await agent.run(
                "Order tea", conversation_id="chat-7", request_id="msg-1", deps=run_deps
            )
    sim.assert_no_problems()
    return reply


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_tool_gets_its_context_and_the_applications_deps(
    dialect: Dialect, simulator: Simulator
) -> None:
    default, override = Shop("agent-shop"), Shop("run-shop")
    reply = await ask(simulator, dialect, default, None)
    assert [r.outcome for r in reply.reports] == ["ok", "ok", "ok"]
    assert default.orders == [("chat-7", "msg-1", "order", "tea")]
    reply = await ask(simulator, dialect, default, override)
    assert reply.reports[0].result.content == "run-shop ordered tea"
    assert override.orders == [("chat-7", "msg-1", "order", "tea")]
