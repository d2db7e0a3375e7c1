"""Tools talk back (issue 11, item 4): ``ToolRetry`` sends the handler's reason to the
model, within a per-tool budget, never against the breaker. The Agent against the
simulator, every dialect, asyncio and trio."""

from __future__ import annotations

import datetime

import anyio
import anyio.lowlevel
import pytest

from sse_toolcalls import Dialect
from sse_toolcalls.calls import DIALECTS
from sse_toolcalls.runtime import ToolRetry
from sse_toolcalls.runtime.agent import Agent, AgentReply
from sse_toolcalls.runtime.breaker import CircuitBreaker
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.runtime.retry import RetryPolicy
from sse_toolcalls.runtime.tools import ToolRegistry
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


def diary(*, retries: int = 2) -> tuple[ToolRegistry, list[str]]:
    registry = ToolRegistry()
    seen: list[str] = []

    @registry.register(retries=retries)
    def log_visit(day: str) -> str:
        """Log a past visit.

        Args:
            day: the day of the visit, YYYY-MM-DD.
        """
        seen.append(day)
        if datetime.date.fromisoformat(day) >= TODAY:
            raise ToolRetry("the date must be in the past")
        return f"logged {day}"

    return registry, seen


async def converse(
    sim: Simulator,
    dialect: Dialect,
    registry: ToolRegistry,
    breaker: CircuitBreaker,
    turns: list[Turn],
) -> AgentReply:
    sim.play(turns)
    async with client_for(
        dialect, model="sim-model-1", api_key="test-key", base_url=sim.base_url_for(dialect)
    ) as client:
        agent = Agent(client, registry, breaker=breaker, retry=RetryPolicy(sleep=no_sleep))
        with anyio.fail_after(30):
            reply = await agent.run("I visited on the 3rd", conversation_id="u/chat")
    sim.assert_no_problems()
    return reply


def visit(day: str) -> ScriptedCall:
    return ScriptedCall(name="log_visit", args={"day": day})


TOLD = ExpectedResult(call_position=0, contains="the date must be in the past", is_error=True)


async def test_the_model_hears_the_tools_reason_and_corrects_itself(
    dialect: Dialect, simulator: Simulator
) -> None:
    registry, seen = diary()
    breaker = CircuitBreaker(threshold=1)
    reply = await converse(
        simulator,
        dialect,
        registry,
        breaker,
        [
            Turn(calls=(visit("2026-07-03"),)),
            Turn(calls=(visit("2026-05-03"),), expect_results=(TOLD,)),
            Turn(
                text="Logged.",
                expect_results=(ExpectedResult(call_position=0, contains="logged 2026-05-03"),),
            ),
        ],
    )
    assert (reply.text, reply.is_fallback) == ("Logged.", False)
    assert [(r.outcome, r.runs) for r in reply.reports] == [("retry", 1), ("ok", 1)]
    content = reply.reports[0].result.content
    assert isinstance(content, dict) and content["error"] == "tool_retry"
    assert seen == ["2026-07-03", "2026-05-03"]
    # Its refusal was no evidence against the tool, even at a threshold of one.
    assert breaker.status("log_visit").state == "closed"


async def test_past_its_budget_the_user_gets_the_fallback(
    dialect: Dialect, simulator: Simulator
) -> None:
    registry, seen = diary(retries=1)
    reply = await converse(
        simulator,
        dialect,
        registry,
        CircuitBreaker(),
        [
            Turn(calls=(visit("2026-07-03"),)),
            Turn(calls=(visit("2026-08-03"),), expect_results=(TOLD,)),
        ],
    )
    assert (reply.is_fallback, reply.reason) == (True, "tool_arguments")
    assert [r.outcome for r in reply.reports] == ["retry", "retry"]
    assert len(seen) == 2
