"""A breaker that blames the tool, not the user (issue 11, item 3): the Agent against the
simulator, every dialect, asyncio and trio, one agent serving several users."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from sse_toolcalls import Dialect
from sse_toolcalls.calls import DIALECTS
from sse_toolcalls.runtime.agent import Agent, AgentReply
from sse_toolcalls.runtime.breaker import CircuitBreaker
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.runtime.retry import RetryPolicy
from sse_toolcalls.runtime.tools import ToolRegistry, ValidatedCall
from sse_toolcalls.tooling.simulator import ExpectedResult, ScriptedCall, Simulator, Turn

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.parametrize("dialect", DIALECTS),
    pytest.mark.filterwarnings("ignore:Async generator 'httpx\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore\\.:ResourceWarning"),
]

TODAY = datetime.date(2026, 6, 1)


async def no_sleep(seconds: float) -> None:
    await anyio.lowlevel.checkpoint()


async def ask(
    sim: Simulator,
    dialect: Dialect,
    registry: ToolRegistry,
    breaker: CircuitBreaker,
    call: ScriptedCall,
    *,
    user: str,
    expect: str,
    breaker_scope: Callable[[ValidatedCall, str], str] | None = None,
) -> AgentReply:
    """One user's message: the model calls ``call``, then answers; the result it was
    sent must contain ``expect``."""
    sim.play(
        [
            Turn(calls=(call,)),
            Turn(text="Done.", expect_results=(ExpectedResult(call_position=0, contains=expect),)),
        ]
    )
    options: dict[str, Any] = {} if breaker_scope is None else {"breaker_scope": breaker_scope}
    async with client_for(
        dialect, model="sim-model-1", api_key="test-key", base_url=sim.base_url_for(dialect)
    ) as client:
        agent = Agent(
            client, registry, breaker=breaker, retry=RetryPolicy(sleep=no_sleep), **options
        )
        with anyio.fail_after(30):
            reply = await agent.run("Please do it", conversation_id=f"{user}/chat")
    sim.assert_no_problems()
    return reply


def booking() -> tuple[ToolRegistry, list[str]]:
    registry = ToolRegistry()
    seen: list[str] = []

    @registry.register
    def book_day(day: str) -> str:
        """Book a day.

        Args:
            day: the day, YYYY-MM-DD, today or later.
        """
        seen.append(day)
        when = datetime.date.fromisoformat(day)  # ValueError for "31/02/2026"
        if when < TODAY:
            raise ValueError(f"{day} is in the past")
        return f"booked {day}"

    return registry, seen


async def test_three_users_bad_dates_leave_the_tool_working_for_a_fourth(
    dialect: Dialect, simulator: Simulator
) -> None:
    registry, seen = booking()
    breaker = CircuitBreaker(threshold=3)
    for user, day in (("ana", "31/02/2026"), ("bo", "2020-01-01"), ("cy", "tomorrow")):
        bad = await ask(
            simulator,
            dialect,
            registry,
            breaker,
            ScriptedCall(name="book_day", args={"day": day}),
            user=user,
            expect="tool_failed",
        )
        assert [(r.outcome, r.runs) for r in bad.reports] == [("failed", 1)]  # not re-run
    assert len(seen) == 3
    good = await ask(
        simulator,
        dialect,
        registry,
        breaker,
        ScriptedCall(name="book_day", args={"day": "2026-07-01"}),
        user="dee",
        expect="booked 2026-07-01",
    )
    assert [r.outcome for r in good.reports] == ["ok"]
    status = breaker.status("book_day")
    assert (status.state, status.failures) == ("closed", 0)


def weather(error: Exception) -> tuple[ToolRegistry, list[str]]:
    registry = ToolRegistry()
    seen: list[str] = []

    class UpstreamError(ValueError):
        """What a client library might raise for its server's 5xx."""

    @registry.register(faults=(UpstreamError,))
    def forecast(city: str) -> str:
        """Weather forecast (its upstream service is down)."""
        seen.append(city)
        raise error if not isinstance(error, ValueError) else UpstreamError(str(error))

    return registry, seen


@pytest.mark.parametrize(
    ("error", "runs_per_call"),
    [
        (ConnectionError("weather upstream refused: 503"), 2),  # transient: retried once
        (OSError("no route to host"), 1),  # the dependency down, not known to pass
        (ValueError("upstream said 500"), 1),  # a declared fault
    ],
)
async def test_a_tool_whose_dependency_is_down_opens_its_breaker(
    dialect: Dialect, simulator: Simulator, error: Exception, runs_per_call: int
) -> None:
    registry, seen = weather(error)
    breaker = CircuitBreaker(threshold=2)
    first = await ask(
        simulator,
        dialect,
        registry,
        breaker,
        ScriptedCall(name="forecast", args={"city": "Lima"}),
        user="ana",
        expect="tool_failed",
    )
    assert [(r.outcome, r.runs) for r in first.reports] == [("failed", runs_per_call)]
    if runs_per_call == 1:
        await ask(
            simulator,
            dialect,
            registry,
            breaker,
            ScriptedCall(name="forecast", args={"city": "Lima"}),
            user="bo",
            expect="tool_failed",
        )
    assert breaker.status("forecast").state == "open"
    refused = await ask(
        simulator,
        dialect,
        registry,
        breaker,
        ScriptedCall(name="forecast", args={"city": "Quito"}),
        user="cy",
        expect="tool_unavailable",
    )
    assert [r.outcome for r in refused.reports] == ["unavailable"]
    assert len(seen) == 2


async def test_a_breaker_per_tool_and_tenant_keeps_one_tenants_outage_its_own(
    dialect: Dialect, simulator: Simulator
) -> None:
    registry = ToolRegistry()

    @registry.register
    def crm_lookup(customer: str) -> str:
        """Look a customer up in the tenant's own CRM (tenant "acme"'s is down)."""
        if customer.startswith("acme:"):
            raise OSError("acme's CRM is down")
        return f"found {customer}"

    def per_tenant(validated: ValidatedCall, conversation_id: str) -> str:
        return f"{validated.tool.name}@{conversation_id.split('/', maxsplit=1)[0]}"

    breaker = CircuitBreaker(threshold=1)
    down = await ask(
        simulator,
        dialect,
        registry,
        breaker,
        ScriptedCall(name="crm_lookup", args={"customer": "acme:1"}),
        user="acme",
        expect="tool_failed",
        breaker_scope=per_tenant,
    )
    assert [r.outcome for r in down.reports] == ["failed"]
    assert breaker.status("crm_lookup@acme").state == "open"
    other = await ask(
        simulator,
        dialect,
        registry,
        breaker,
        ScriptedCall(name="crm_lookup", args={"customer": "globex:1"}),
        user="globex",
        expect="found globex:1",
        breaker_scope=per_tenant,
    )
    assert [r.outcome for r in other.reports] == ["ok"]
