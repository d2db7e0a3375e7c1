"""Gemini 3 thought signatures on calls carried from another provider (issue 12): Gemini 3
refuses the current turn's function calls without a ``thoughtSignature`` on each step's
first call, and Google documents a dummy signature for a trace from another model. The
simulator, given a Gemini 3 model name, signs every step and checks as the API does."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from sse_toolcalls import (
    AssistantMessage,
    Dialect,
    ToolCall,
    ToolResult,
    ToolResultsMessage,
    UserMessage,
    build_request,
    carry_over,
)
from sse_toolcalls.conversation import Message
from sse_toolcalls.crossing import GEMINI_CARRIED_SIGNATURE
from sse_toolcalls.runtime import FallbackClient
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.ledgers.memory import InMemoryLedger
from sse_toolcalls.tooling.simulator import ExpectedResult, HTTPError, ScriptedCall, Simulator, Turn
from sse_toolcalls.tooling.simulator.reasoning import (
    GEMINI_BYPASS_SIGNATURES,
    gemini_3_problems,
    thought_signature,
)
from sse_toolcalls.tooling.simulator.script import Script

from .test_fallback_client import FAST, Bank, _client
from .test_reasoning import OPTIONS

pytestmark = [
    pytest.mark.filterwarnings("ignore:Async generator 'httpx\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore\\.:ResourceWarning"),
]

GEMINI_3 = "gemini-3-flash-preview"


def _turn(provider: Dialect) -> tuple[AssistantMessage, ToolResultsMessage]:
    calls = tuple(
        ToolCall(
            name="balance",
            args={"account": account},
            provider=provider,
            call_id=f"toolu_{n}",
            index=n,
            raw_arguments=f'{{"account": "{account}"}}',
        )
        for n, account in enumerate(["a", "b"])
    )
    results = tuple(ToolResult(call=c, content={"balance": n}) for n, c in enumerate(calls))
    return AssistantMessage(calls=calls), ToolResultsMessage(results=results)


@pytest.mark.parametrize("provider", ["openai_chat", "openai_responses", "anthropic"])
def test_carried_calls_get_the_documented_signature_on_each_steps_first_call(
    provider: Dialect,
) -> None:
    turn, results = _turn(provider)
    conversation: list[Message] = [UserMessage(text="hi"), turn, results, turn, results]
    body = build_request("gemini", carry_over(conversation, "gemini"), model=GEMINI_3)
    steps = [c for c in body["contents"] if c["role"] == "model"]
    assert len(steps) == 2
    for step in steps:
        assert [p.get("thoughtSignature") for p in step["parts"]] == [
            GEMINI_CARRIED_SIGNATURE,
            None,
        ]
    assert GEMINI_CARRIED_SIGNATURE in GEMINI_BYPASS_SIGNATURES
    assert gemini_3_problems(GEMINI_3, body, set()) == []
    # Home again, the dummy is Gemini's only: dropped like any other reasoning.
    home = carry_over(carry_over(conversation, "gemini"), provider)
    assert all(
        c.thought_signature is None
        for m in home
        if isinstance(m, AssistantMessage)
        for c in m.calls
    )


def _body(*contents: dict[str, Any]) -> dict[str, Any]:
    return {"contents": list(contents)}


USER = {"role": "user", "parts": [{"text": "hi"}]}
ANSWER = {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}


def _step(signature: str | None) -> dict[str, Any]:
    first: dict[str, Any] = {"functionCall": {"name": "f", "args": {}}}
    if signature is not None:
        first["thoughtSignature"] = signature
    return {"role": "model", "parts": [first, {"functionCall": {"name": "g", "args": {}}}]}


def test_the_simulator_checks_the_current_turn_as_gemini_3_does() -> None:
    own = thought_signature(0)
    assert gemini_3_problems(GEMINI_3, _body(USER, _step(own), ANSWER), {own}) == []
    missing = gemini_3_problems(GEMINI_3, _body(USER, _step(None), ANSWER), {own})
    assert missing == [
        "Function call `f` in the 2. content block is missing a `thought_signature`."
    ]
    forged = gemini_3_problems(GEMINI_3, _body(USER, _step("Cforged"), ANSWER), {own})
    assert forged == ["contents[1].parts[0]: Thought signature is not valid."]
    # Every step of the current turn; earlier turns (before the last user text) are free.
    two = _body(USER, _step(own), ANSWER, _step(None), ANSWER)
    assert len(gemini_3_problems(GEMINI_3, two, {own})) == 1
    earlier = _body(USER, _step(None), ANSWER, USER, _step(own), ANSWER)
    assert gemini_3_problems(GEMINI_3, earlier, {own}) == []
    # Models before Gemini 3 do not refuse.
    assert gemini_3_problems("gemini-2.5-flash", _body(USER, _step(None), ANSWER), set()) == []


@pytest.mark.anyio
@pytest.mark.parametrize("primary", ["openai_chat", "openai_responses", "anthropic"])
async def test_a_turn_moves_to_gemini_3_with_its_calls_signed(
    primary: Dialect, simulator: Simulator
) -> None:
    down = Turn(fault=HTTPError(status=503))
    script = Script(
        model=GEMINI_3,
        turns=(
            Turn(calls=(ScriptedCall(name="send_money", args={"to": "bob", "amount": 10}),)),
            down,
            down,
            # Gemini 3 reads the primary's turn as its current turn: signed or refused.
            Turn(
                calls=(ScriptedCall(name="balance", args={"account": "main"}),),
                expect_results=(ExpectedResult(call_position=0, contains="R-1001"),),
            ),
            down,
            down,
            # Gemini 3 again, with its own signed step and the carried one.
            Turn(
                text="Sent; 4242 left.",
                expect_results=(ExpectedResult(call_position=0, contains="4242"),),
            ),
        ),
    )
    simulator.play(script)
    bank = Bank()
    async with _client(simulator, primary) as first, _client(simulator, "gemini") as second:
        client = FallbackClient(
            [first, second], options=[OPTIONS[primary], OPTIONS["gemini"]], retry=FAST
        )
        agent = Agent(client, bank.registry(), ledger=InMemoryLedger(), retry=FAST)
        with anyio.fail_after(30):
            reply = await agent.run("Send Bob 10 and tell me the balance", request_id="g3")
    simulator.assert_no_problems()
    assert reply.text == "Sent; 4242 left."
    assert [r.dialect for r in simulator.requests][-1] == "gemini"
    assert bank.runs == {"send_money": 1, "balance": 1}
