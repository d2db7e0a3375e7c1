"""Request-scoped idempotency end to end (issue 11, item 1): the Agent against the
simulator, every dialect, asyncio and trio.

A write's key is (request id, tool, canonical arguments, k-th identical call of its
turn). Both directions are held here: a call re-issued in the same request (a new call
id, a later turn, a resumed request) never runs twice, and a new request with identical
arguments ("Send Bob another 10") always runs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from sse_toolcalls import Dialect
from sse_toolcalls.calls import DIALECTS
from sse_toolcalls.runtime.agent import Agent, AgentReply
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.runtime.ledgers.sqlite import SQLiteLedger
from sse_toolcalls.runtime.retry import RetryPolicy
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.tooling.simulator import (
    ExpectedResult,
    HTTPError,
    ScriptedCall,
    Simulator,
    Turn,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.parametrize("dialect", DIALECTS),
    # As in test_chaos.py: httpx leaves abandoned body iterators to the collector.
    pytest.mark.filterwarnings("ignore:Async generator 'httpx\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore\\.:ResourceWarning"),
]

SEND = ScriptedCall(name="send_money", args={"to": "bob", "amount": 10})
SENT = Turn(text="Sent.")


class Bank:
    """The tools' world: counts each run of a handler itself."""

    def __init__(self, *, down: bool = False) -> None:
        self.runs: Counter[tuple[str, int]] = Counter()
        self.down = down

    def registry(self) -> ToolRegistry:
        registry = ToolRegistry()

        @registry.register(effect="write")
        def send_money(to: str, amount: int) -> dict[str, str]:
            """Send money to someone.

            Args:
                to: who receives it.
                amount: how much.
            """
            self.runs[to, amount] += 1
            if self.down:
                raise ConnectionError("payments backend refused: HTTP 503")
            return {"receipt": f"R{sum(self.runs.values())}"}

        return registry


async def no_sleep(seconds: float) -> None:
    await anyio.lowlevel.checkpoint()


async def run(
    sim: Simulator,
    dialect: Dialect,
    bank: Bank,
    ledger_path: Path,
    turns: Sequence[Turn],
    text: str,
    *,
    request_id: str | None,
) -> AgentReply:
    """One user message, answered by a fresh agent (a new process, as far as the ledger
    file can tell) in one conversation."""
    sim.play(list(turns))
    with SQLiteLedger(ledger_path) as ledger:
        async with client_for(
            dialect,
            model="sim-model-1",
            api_key="test-key",
            base_url=sim.base_url_for(dialect),
            idle_timeout=1.0,
        ) as client:
            agent = Agent(
                client,
                bank.registry(),
                ledger=ledger,
                retry=RetryPolicy(sleep=no_sleep, random=lambda: 0.5),
            )
            with anyio.fail_after(30):
                reply = await agent.run(text, conversation_id="chat-7", request_id=request_id)
    sim.assert_no_problems()
    return reply


def reissued(dialect: str, n: int) -> ScriptedCall:
    """SEND again under a new call id (Gemini has no ids; the client makes them)."""
    return ScriptedCall(
        name=SEND.name,
        args={"amount": 10, "to": "bob"},
        call_id=None if dialect == "gemini" else f"call_again_{n}",
    )


@pytest.mark.parametrize("request_ids", [(None, None), ("msg-1", "msg-2")])
async def test_a_new_request_with_identical_arguments_runs(
    dialect: Dialect,
    simulator: Simulator,
    tmp_path: Path,
    request_ids: tuple[str | None, str | None],
) -> None:
    bank = Bank()
    first, second = request_ids
    sent = [
        await run(
            simulator,
            dialect,
            bank,
            tmp_path / "ledger.db",
            [Turn(calls=(SEND,)), SENT],
            text,
            request_id=request_id,
        )
        for text, request_id in (("Send Bob 10", first), ("Send Bob another 10, please", second))
    ]
    assert bank.runs == {("bob", 10): 2}  # no lost write
    assert [[r.outcome for r in reply.reports] for reply in sent] == [["ok"], ["ok"]]
    assert sent[0].reports[0].key != sent[1].reports[0].key


async def test_a_call_reissued_in_the_same_request_replays_and_says_so(
    dialect: Dialect, simulator: Simulator, tmp_path: Path
) -> None:
    bank = Bank()
    ledger = tmp_path / "ledger.db"
    lost = Turn(fault=HTTPError(status=502))
    # The write ran; every request carrying its result failed; the user saw a fallback.
    crashed = await run(
        simulator,
        dialect,
        bank,
        ledger,
        [Turn(calls=(SEND,)), lost, lost, lost],
        "Send Bob 10",
        request_id="msg-1",
    )
    assert crashed.is_fallback
    # The application re-submits the same request: the turns restart, the provider
    # re-issues the call under a new id; later in the same request the model, unsure,
    # asks for it once more. Neither runs.
    told = Turn(
        calls=(reissued(dialect, 2),),
        expect_results=(ExpectedResult(call_position=0, contains='"replayed":true'),),
    )
    resumed = await run(
        simulator,
        dialect,
        bank,
        ledger,
        [
            Turn(calls=(reissued(dialect, 1),)),
            told,
            Turn(
                text="Sent earlier.",
                expect_results=(ExpectedResult(call_position=0, contains="already ran at"),),
            ),
        ],
        "Send Bob 10",
        request_id="msg-1",
    )
    assert bank.runs == {("bob", 10): 1}  # no duplicate
    assert [r.outcome for r in resumed.reports] == ["replayed", "replayed"]
    assert {r.key for r in resumed.reports} == {crashed.reports[0].key}
    content = resumed.reports[0].result.content
    assert isinstance(content, dict)
    assert content["result"] == {"receipt": "R1"}
    assert isinstance(content["ran_at"], str) and content["ran_at"].endswith("Z")


async def test_two_identical_calls_in_one_turn_are_two_writes(
    dialect: Dialect, simulator: Simulator, tmp_path: Path
) -> None:
    bank = Bank()
    twice = Turn(calls=(SEND, reissued(dialect, 1)))
    reply = await run(
        simulator,
        dialect,
        bank,
        tmp_path / "ledger.db",
        [twice, SENT],
        "Send Bob 10, twice",
        request_id="msg-1",
    )
    assert bank.runs == {("bob", 10): 2}
    assert [r.outcome for r in reply.reports] == ["ok", "ok"]


async def test_a_failed_write_is_not_retried_in_its_request_and_runs_in_a_new_one(
    dialect: Dialect, simulator: Simulator, tmp_path: Path
) -> None:
    bank = Bank(down=True)
    ledger = tmp_path / "ledger.db"
    failed = await run(
        simulator,
        dialect,
        bank,
        ledger,
        [Turn(calls=(SEND,)), Turn(calls=(reissued(dialect, 1),)), Turn(text="It failed.")],
        "Pay Bob 10",
        request_id="msg-1",
    )
    assert [r.outcome for r in failed.reports] == ["failed", "replayed"]
    assert failed.reports[1].result.is_error
    assert bank.runs == {("bob", 10): 1}
    bank.down = False
    again = await run(
        simulator,
        dialect,
        bank,
        ledger,
        [Turn(calls=(SEND,)), SENT],
        "Please try again",
        request_id="msg-2",
    )
    assert [r.outcome for r in again.reports] == ["ok"]
    assert bank.runs == {("bob", 10): 2}
