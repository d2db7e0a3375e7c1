"""The hardened loop's decisions, with a scripted in-process client: when it retries,
when it falls back, and what the user and the logs each get."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from sse_toolcalls.calls import StreamEvent, StreamFinished, ToolCall, ToolSpec
from sse_toolcalls.conversation import Conversation, ToolResultsMessage, UserMessage
from sse_toolcalls.edge.http_errors import provider_error_from_http
from sse_toolcalls.errors import ProviderError, TruncatedStreamError, UsageError
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.retry import RetryPolicy
from sse_toolcalls.runtime.tools import ToolRegistry, ValidatedCall

pytestmark = pytest.mark.anyio

Step = StreamFinished | BaseException | float
"""What the fake provider does for one request: answer, fail, or hang (seconds)."""


class FakeClient:
    dialect = "anthropic"

    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = list(steps)
        self.seen: list[list[Any]] = []

    async def stream_events(
        self, conversation: Conversation, tools: Sequence[ToolSpec] = (), **options: Any
    ) -> AsyncIterator[StreamEvent]:
        self.seen.append(list(conversation))
        step = self.steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, float):
            await anyio.sleep(step)
        else:
            yield step


def answer(text: str) -> StreamFinished:
    return StreamFinished(stop_reason="end_turn", text=text)


def calling(*calls: tuple[str, dict[str, Any]], turn: int = 0) -> StreamFinished:
    return StreamFinished(
        stop_reason="tool_use",
        calls=tuple(
            ToolCall(
                name=name, args=args, provider="anthropic", call_id=f"toolu_{turn}_{i}", index=i
            )
            for i, (name, args) in enumerate(calls)
        ),
    )


def no_wait(**kwargs: Any) -> RetryPolicy:
    async def sleep(seconds: float) -> None:
        await anyio.lowlevel.checkpoint()

    return RetryPolicy(sleep=sleep, **kwargs)


def registry() -> ToolRegistry:
    tools = ToolRegistry()

    @tools.register
    def forecast(city: str, days: int) -> str:
        """Weather forecast."""
        return f"{days} sunny days in {city}"

    return tools


async def test_a_permanent_error_is_not_retried_and_stays_out_of_the_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    body = b'{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key sk-ant-SECRET"}}'
    error = provider_error_from_http(401, body, provider="anthropic")
    client = FakeClient([error, answer("never reached")])
    with caplog.at_level(logging.WARNING, logger="sse_toolcalls.runtime"):
        reply = await Agent(client, registry(), retry=no_wait()).run("hello")
    assert reply.text == "I couldn't get a response. Please try again."
    assert (reply.is_fallback, reply.reason, reply.requests) == (True, "provider_unavailable", 1)
    assert "SECRET" not in reply.text and "401" not in reply.text
    (diagnostic,) = reply.diagnostics
    assert (diagnostic.status, diagnostic.code) == (401, "authentication_error")
    (record,) = [r for r in caplog.records if r.name == "sse_toolcalls.runtime"]
    assert record.status == 401  # type: ignore[attr-defined]
    assert "sk-ant-SECRET" in str(record.body)  # type: ignore[attr-defined]
    assert "ProviderError" in record.exception  # type: ignore[attr-defined]


async def test_transient_errors_are_retried_with_growing_waits() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    overloaded = ProviderError("Overloaded", provider="anthropic", retryable=True)
    cut = TruncatedStreamError("cut", reason="eof", provider="anthropic")
    client = FakeClient([overloaded, cut, answer("Hi!")])
    policy = RetryPolicy(attempts=3, sleep=sleep, base_delay=1.0, random=lambda: 0.0)
    reply = await Agent(client, registry(), retry=policy).run("hello")
    assert (reply.text, reply.is_fallback, reply.requests) == ("Hi!", False, 3)
    assert waits == [0.5, 1.0]
    assert [d.retried for d in reply.diagnostics] == [True, True]


async def test_a_request_that_hangs_times_out_and_is_retried() -> None:
    client = FakeClient([10.0, answer("Back.")])
    reply = await Agent(client, registry(), retry=no_wait(), request_timeout=0.1).run("hello")
    assert (reply.text, reply.requests) == ("Back.", 2)
    assert reply.diagnostics[0].code == "timeout"


async def test_invalid_arguments_get_one_chance_to_be_corrected() -> None:
    client = FakeClient(
        [
            calling(("forecast", {"city": "Lima", "days": "a week"}), turn=0),
            calling(("forecast", {"city": "Lima", "days": 7}), turn=1),
            answer("Seven sunny days."),
        ]
    )
    reply = await Agent(client, registry(), retry=no_wait()).run("Weather in Lima?")
    assert reply.text == "Seven sunny days."
    assert [r.outcome for r in reply.reports] == ["refused", "ok"]
    refused = reply.reports[0].result
    assert refused.is_error and refused.call.call_id == "toolu_0_0"
    # The error result went back to the model under the same id before it corrected itself.
    sent = client.seen[1][-1]
    assert isinstance(sent, ToolResultsMessage)
    assert sent.results[0].call.call_id == "toolu_0_0"


async def test_a_failed_correction_ends_with_the_local_fallback() -> None:
    client = FakeClient(
        [
            calling(("forecast", {"city": "Lima", "days": "a week"}), turn=0),
            calling(("forecast", {"city": "Lima", "days": "seven"}), turn=1),
            answer("never reached"),
        ]
    )
    reply = await Agent(client, registry(), retry=no_wait(), lang="pt-BR").run("Tempo em Lima?")
    assert (reply.is_fallback, reply.reason) == (True, "tool_arguments")
    assert reply.text == "Não consegui concluir esse pedido. Tente novamente."
    assert len(client.steps) == 1, "no third request"
    # The conversation stays well formed: every call has its result.
    assert isinstance(reply.conversation[-1], ToolResultsMessage)


async def test_the_step_limit_and_an_empty_answer_give_a_message() -> None:
    looping = FakeClient(
        [calling(("forecast", {"city": "Lima", "days": 1}), turn=n) for n in range(3)]
    )
    reply = await Agent(looping, registry(), retry=no_wait(), max_steps=3).run("hi")
    assert (reply.is_fallback, reply.reason, reply.steps) == (True, "step_limit", 3)
    assert reply.text == "I couldn't finish that request in time. Please try again."
    silent = await Agent(FakeClient([answer("  ")]), registry(), retry=no_wait()).run("hi")
    assert (silent.is_fallback, silent.reason) == (True, "provider_unavailable")
    assert silent.text == "I couldn't get a response. Please try again."


async def test_a_conversation_can_be_continued_and_settings_are_checked() -> None:
    client = FakeClient([answer("Again, hi.")])
    reply = await Agent(client, registry()).run([UserMessage(text="hi")], lang="pt")
    assert reply.text == "Again, hi."
    assert len(reply.conversation) == 2
    with pytest.raises(UsageError):
        Agent(client, registry(), max_steps=0)


async def test_the_agent_runs_handlers_through_its_executor() -> None:
    # The seam of the one executor reaches the one loop: a sandbox backend given to the
    # agent runs every handler of the run, and nothing runs in this process.
    seen: list[dict[str, Any]] = []

    async def elsewhere(validated: ValidatedCall, /) -> Any:
        seen.append(validated.kwargs)
        return "from the backend"

    client = FakeClient([calling(("forecast", {"city": "Lima", "days": 2})), answer("Done.")])
    reply = await Agent(client, registry(), retry=no_wait(), executor=elsewhere).run("hi")
    assert reply.text == "Done."
    assert seen == [{"city": "Lima", "days": 2}]
    assert [r.content for r in reply.results] == ["from the backend"]
    assert reply.reports[0].runs == 1
