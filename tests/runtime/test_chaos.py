"""Chaos end to end: the hardened agent against the simulator, every dialect, asyncio and
trio, with faults injected in the stream, the HTTP answer and the tools.

For every scenario: no tool runs half-way (only complete calls with their whole
arguments ever run), no write runs twice (counted by the tool itself), the user always
gets a message, and every result goes back under its own call's id (the simulator checks
each request). The counts are summed into the chaos summary (see conftest.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from sse_toolcalls import Dialect
from sse_toolcalls.calls import DIALECTS
from sse_toolcalls.parser import ToolCallParser
from sse_toolcalls.runtime.agent import Agent, AgentReply
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.runtime.fallback import fallback_message
from sse_toolcalls.runtime.ledgers.sqlite import SQLiteLedger
from sse_toolcalls.runtime.retry import RetryPolicy
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.tooling.simulator import (
    CutInArguments,
    ErrorEvent,
    ExpectedResult,
    HTTPError,
    ScriptedCall,
    Simulator,
    Stall,
    Turn,
    encode_turn,
)

from .conftest import ChaosCounts

pytestmark = [
    pytest.mark.anyio,
    # httpx 0.28 leaves its body iterators to the garbage collector when a stream is
    # abandoned early (an error event, a timeout), and trio warns when it finalises them
    # (encode/httpx#3686). Ours are closed explicitly.
    pytest.mark.filterwarnings("ignore:Async generator 'httpx2?\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore2?\\.:ResourceWarning"),
]

USER = "Pay bob 500 cents, please."
PAY = ScriptedCall(name="record_payment", args={"to": "bob", "cents": 500})
BALANCE = ScriptedCall(name="lookup_balance", args={"account": "main"})
PAY_TURN = Turn(text="Paying now.", calls=(PAY, BALANCE), fragment_size=6)
FINAL = Turn(
    text="Done: bob got 500 cents.",
    expect_results=(
        ExpectedResult(call_position=0, contains="R-bob-500"),
        ExpectedResult(call_position=1, contains="1000"),
    ),
)
IDLE_TIMEOUT = 0.25
"""Seconds of silence before the client gives up on a stream: short, to keep the suite
fast; the stall faults last four times as long."""

WRITES = frozenset({"record_payment", "refund"})


class Bank:
    """The fake tools' world, counting every execution itself."""

    def __init__(self) -> None:
        self.executions: Counter[tuple[str, str, int]] = Counter()

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()

        @registry.register(effect="write")
        def record_payment(to: str, cents: int) -> dict[str, str]:
            """Pay someone.

            Args:
                to: who receives it.
                cents: how much.
            """
            self.executions["record_payment", to, cents] += 1
            return {"receipt": f"R-{to}-{cents}"}

        @registry.register(effect="write")
        def refund(to: str, cents: int) -> str:
            """Refund someone (its backend is down)."""
            self.executions["refund", to, cents] += 1
            raise ConnectionError("payments backend refused: HTTP 503 from 10.0.0.7")

        @registry.register
        def lookup_balance(account: str) -> str:
            """Read a balance."""
            return "1000"

        @registry.register(timeout=0.2)
        async def audit_log(account: str) -> str:
            """Read the audit log (it hangs)."""
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

        return registry


def first_call_completed_after(dialect: Dialect, turn: Turn) -> int:
    """How many events of ``turn`` go out before its first call is complete (never the
    whole stream: the error must come before the end marker)."""
    events = encode_turn(dialect, turn)
    parser = ToolCallParser(dialect)
    for n, chunk in enumerate(events, 1):
        if parser.feed(chunk):
            return min(n, len(events) - 1)
    raise AssertionError(f"{dialect}: no call completes in the turn")


@dataclass
class Scenario:
    """One or more runs of the agent (a later run is the user trying again after a
    fallback, in a new process: a new agent on the same ledger file)."""

    plays: list[list[Turn]]
    expected: list[str]
    """Per play: the text the user must see."""
    writes_executed: int = 1
    tool_faults: int = 0
    """Faults injected in the tools themselves (a handler that raises or hangs)."""
    lang: str = "en"
    outcomes: list[list[str]] = field(default_factory=list)
    """Per play, optionally: the dispatch outcomes of its calls, in order."""


def build(name: str, dialect: Dialect) -> Scenario:
    done = FINAL.text
    if name == "baseline":
        return Scenario(plays=[[PAY_TURN, FINAL]], expected=[done], outcomes=[["ok", "ok"]])
    if name == "cut_mid_arguments":
        cut = Turn(text=PAY_TURN.text, calls=PAY_TURN.calls, fault=CutInArguments())
        return Scenario(plays=[[cut, PAY_TURN, FINAL]], expected=[done])
    if name == "error_event_before_call":
        early = Turn(text=PAY_TURN.text, calls=PAY_TURN.calls, fault=ErrorEvent(after_events=1))
        return Scenario(plays=[[early, PAY_TURN, FINAL]], expected=[done])
    if name == "error_event_after_call_completed":
        late = Turn(
            text=PAY_TURN.text,
            calls=PAY_TURN.calls,
            fragment_size=PAY_TURN.fragment_size,
            fault=ErrorEvent(after_events=first_call_completed_after(dialect, PAY_TURN)),
        )
        return Scenario(plays=[[late, PAY_TURN, FINAL]], expected=[done])
    if name == "rate_limited_then_success":
        limited = Turn(fault=HTTPError(status=429, retry_after="1"))
        return Scenario(plays=[[limited, PAY_TURN, FINAL]], expected=[done])
    if name == "server_error_three_times":
        error = Turn(fault=HTTPError(status=500, message="upstream exploded: trace 7f3a"))
        return Scenario(
            plays=[[error, error, error]],
            expected=[fallback_message("provider_unavailable", "pt-BR")],
            writes_executed=0,
            lang="pt-BR",
        )
    if name == "stall_past_the_timeout":
        stalled = Turn(
            text=PAY_TURN.text,
            calls=PAY_TURN.calls,
            fault=Stall(seconds=IDLE_TIMEOUT * 4, after_events=2),
        )
        return Scenario(plays=[[stalled, PAY_TURN, FINAL]], expected=[done])
    if name == "handler_raises":
        refund = ScriptedCall(name="refund", args={"to": "bob", "cents": 500})
        answer = Turn(
            text="The refund failed; please try later.",
            expect_results=(
                ExpectedResult(call_position=0, contains="tool_failed", is_error=True),
                ExpectedResult(call_position=1, contains="1000", is_error=False),
            ),
        )
        return Scenario(
            plays=[[Turn(text="Refunding.", calls=(refund, BALANCE)), answer]],
            expected=[answer.text],
            outcomes=[["failed", "ok"]],
            tool_faults=1,
        )
    if name == "handler_hangs":
        audit = ScriptedCall(name="audit_log", args={"account": "main"})
        answer = Turn(
            text="Paid; the audit log is slow.",
            expect_results=(
                ExpectedResult(call_position=0, contains="tool_timeout", is_error=True),
                ExpectedResult(call_position=1, contains="R-bob-500"),
            ),
        )
        return Scenario(
            plays=[[Turn(text="Checking.", calls=(audit, PAY)), answer]],
            expected=[answer.text],
            outcomes=[["timeout", "ok"]],
            tool_faults=1,
        )
    if name == "confirmation_lost_request_retried":
        # The write ran; the request carrying its result failed once; the retry re-sends
        # the same conversation, and nothing runs again.
        failed = Turn(fault=HTTPError(status=503))
        return Scenario(plays=[[PAY_TURN, failed, FINAL]], expected=[done])
    if name == "confirmation_lost_turn_retried":
        # The write ran and was recorded; every request carrying its result failed, so
        # the user saw the fallback. They try again (a new process, the same ledger file
        # and conversation id): the provider re-issues the call under a new id, and the
        # ledger answers it with the recorded result instead of paying twice.
        error = Turn(fault=HTTPError(status=502))
        reissued = Turn(
            text=PAY_TURN.text,
            calls=(
                ScriptedCall(
                    name=PAY.name,
                    args={"cents": 500, "to": "bob"},
                    call_id=None if dialect == "gemini" else "call_reissued_1",
                ),
                BALANCE,
            ),
        )
        return Scenario(
            plays=[[PAY_TURN, error, error, error], [reissued, FINAL]],
            expected=[fallback_message("provider_unavailable", "en"), done],
            outcomes=[["ok", "ok"], ["replayed", "ok"]],
        )
    raise AssertionError(name)


SCENARIOS = [
    "baseline",
    "cut_mid_arguments",
    "error_event_before_call",
    "error_event_after_call_completed",
    "rate_limited_then_success",
    "server_error_three_times",
    "stall_past_the_timeout",
    "handler_raises",
    "handler_hangs",
    "confirmation_lost_request_retried",
    "confirmation_lost_turn_retried",
]


class Sleeps:
    """The retry policy's sleep: records the waits and yields without waiting."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await anyio.lowlevel.checkpoint()


async def play(
    sim: Simulator,
    dialect: Dialect,
    bank: Bank,
    ledger_path: Path,
    turns: list[Turn],
    *,
    lang: str,
    sleeps: Sleeps,
) -> tuple[AgentReply, int]:
    """One run of a fresh agent (a new process, as far as the ledger file can tell)."""
    sim.play(turns)
    with SQLiteLedger(ledger_path) as ledger:
        async with client_for(
            dialect,
            model="sim-model-1",
            api_key="test-key",
            base_url=sim.base_url_for(dialect),
            idle_timeout=IDLE_TIMEOUT,
        ) as client:
            agent = Agent(
                client,
                bank.registry(),
                ledger=ledger,
                retry=RetryPolicy(sleep=sleeps, random=lambda: 0.5),
                lang=lang,
            )
            with anyio.fail_after(30):
                reply = await agent.run(
                    USER, conversation_id="chaos-conversation-1", request_id="chaos-request-1"
                )
    sim.assert_no_problems()
    faults = sum(
        1 for r in sim.requests if r.turn_number >= 0 and turns[r.turn_number].fault is not None
    )
    return reply, faults


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("name", SCENARIOS)
async def test_chaos(
    name: str,
    dialect: Dialect,
    simulator: Simulator,
    tmp_path: Path,
    chaos_counts: ChaosCounts,
    caplog: pytest.LogCaptureFixture,
) -> None:
    scenario = build(name, dialect)
    bank = Bank()
    sleeps = Sleeps()
    replies: list[AgentReply] = []
    faults = 0
    for turns in scenario.plays:
        reply, injected = await play(
            simulator,
            dialect,
            bank,
            tmp_path / "ledger.db",
            turns,
            lang=scenario.lang,
            sleeps=sleeps,
        )
        replies.append(reply)
        faults += injected

    # The user always gets a message: the expected one.
    assert [r.text for r in replies] == scenario.expected
    # No write ran twice; only complete calls ran, with their whole arguments.
    assert all(n == 1 for n in bank.executions.values()), bank.executions
    assert sum(bank.executions.values()) == scenario.writes_executed
    scripted = {
        (c.name, c.args["to"], c.args["cents"])
        for turns in scenario.plays
        for turn in turns
        for c in turn.calls
        if c.name in WRITES
    }
    assert set(bank.executions) <= scripted
    # Every result is addressed to its own call (the simulator checked the wire side).
    for reply in replies:
        assert [r.call for r in reply.results] == list(reply.calls)
        assert [r.result.call for r in reply.reports] == list(reply.calls)
    for reply, outcomes in zip(replies, scenario.outcomes, strict=False):
        assert [r.outcome for r in reply.reports] == outcomes
    # Technical detail goes to diagnostics and logs, never to the user.
    for reply in replies:
        for d in reply.diagnostics:
            if d.status is not None:
                assert str(d.status) not in reply.text
            if d.body:
                assert str(d.body) not in reply.text
    if name == "rate_limited_then_success":
        assert sleeps.waits == [1.0], "the provider's Retry-After of 1 s was honoured"
    if name == "server_error_three_times":
        (reply,) = replies
        assert (reply.is_fallback, reply.reason, reply.requests) == (
            True,
            "provider_unavailable",
            3,
        )
        assert [d.status for d in reply.diagnostics] == [500, 500, 500]
        assert len(sleeps.waits) == 2
        assert "trace 7f3a" not in reply.text
        logged = [r for r in caplog.records if r.name == "sse_toolcalls.runtime"]
        assert [getattr(r, "status", None) for r in logged] == [500, 500, 500]
        assert all("trace 7f3a" in str(getattr(r, "body", "")) for r in logged)

    chaos_counts.add(
        name,
        faults_injected=faults + scenario.tool_faults * len(scenario.plays),
        requests=sum(r.requests for r in replies),
        writes_attempted=sum(1 for r in replies for c in r.calls if c.name in WRITES),
        writes_executed=sum(bank.executions.values()),
        writes_executed_twice=sum(1 for n in bank.executions.values() if n > 1),
        tools_run_half_way=len(set(bank.executions) - scripted),
        user_messages_shown=sum(1 for r in replies if r.text.strip()),
        fallback_messages=sum(1 for r in replies if r.is_fallback),
        ids_mismatched=len(simulator.problems),
    )
