"""Every Agent.run ends with a reply: hostile streams from the real loopback simulator,
hostile arguments, hostile handler returns, and bugs anywhere (issue 9).

The property test drives the agent with what an attacker or a broken proxy sends
(random bytes, cut and mangled copies of real turns, invalid UTF-8, arguments nested
1,000 deep, huge and non-finite numbers, error events) and handlers that return what
JSON cannot hold. A run that ends in the ``internal_error`` fallback passes (the user got
a reply) but means a bug below the agent: such inputs are written to
``$SSE_TOOLCALLS_HOSTILE_FINDINGS`` (one JSON line each) when that is set.
"""

from __future__ import annotations

import base64
import json
import math
import os
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sse_toolcalls import Dialect
from sse_toolcalls.calls import DIALECTS, StreamEvent, StreamFinished, ToolCall, ToolSpec
from sse_toolcalls.conversation import (
    AssistantMessage,
    Conversation,
    Message,
    ToolResultsMessage,
    UserMessage,
)
from sse_toolcalls.errors import UsageError
from sse_toolcalls.framing.eventstream import EventStreamFramer
from sse_toolcalls.messages import build_request
from sse_toolcalls.runtime.agent import Agent, AgentReply
from sse_toolcalls.runtime.clients import AnthropicClient, client_for
from sse_toolcalls.runtime.fallback import fallback_message
from sse_toolcalls.runtime.ledgers.sqlite import SQLiteLedger
from sse_toolcalls.runtime.retry import RetryPolicy
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.tooling.simulator import (
    ErrorEvent,
    ExpectedResult,
    RawBody,
    Script,
    ScriptedCall,
    Simulator,
    Turn,
    encode_turn,
)
from sse_toolcalls.tooling.simulator.aws_eventstream import event_message

pytestmark = [
    pytest.mark.filterwarnings("ignore:Async generator 'httpx2?\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore2?\\.:ResourceWarning"),
]

FINAL = "All done."
SURROGATE_NAME = "report-\udcff.txt"  # os.listdir's spelling of the byte 0xff


async def _no_sleep(seconds: float) -> None:
    await anyio.lowlevel.checkpoint()


def _policy() -> RetryPolicy:
    return RetryPolicy(attempts=2, sleep=_no_sleep)


@pytest.fixture(scope="module")
def sim() -> Iterator[Simulator]:
    with Simulator() as running:
        yield running


# --------------------------------------------------------------------------------------
# Regressions: a handler's return and an echoed argument never break the next request.


def _files_registry(listed: list[str]) -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register(effect="write")
    def archive(folder: str) -> list[str]:
        """Archive a folder; returns the file names archived."""
        listed.append(folder)
        return [SURROGATE_NAME, "plain.txt"]

    return registry


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_file_name_that_is_not_utf8_reaches_the_model_and_the_user_gets_a_reply(
    dialect: Dialect, backend: str, sim: Simulator, tmp_path: Path
) -> None:
    listed: list[str] = []
    sim.play(
        [
            Turn(calls=(ScriptedCall(name="archive", args={"folder": "/srv"}),)),
            Turn(
                text=FINAL,
                expect_results=(ExpectedResult(call_position=0, contains="report-\\\\xff.txt"),),
            ),
        ]
    )

    async def main() -> AgentReply:
        with SQLiteLedger(tmp_path / "ledger.db") as ledger:
            async with client_for(
                dialect, model="m", api_key="k", base_url=sim.base_url_for(dialect)
            ) as client:
                agent = Agent(client, _files_registry(listed), ledger=ledger, retry=_policy())
                with anyio.fail_after(20):
                    return await agent.run("Archive /srv.")

    reply = anyio.run(main, backend=backend)
    sim.assert_no_problems()
    assert (reply.text, reply.is_fallback, listed) == (FINAL, False, ["/srv"])
    assert [r.outcome for r in reply.reports] == ["ok"]


class _EchoesInfinity(AnthropicClient):
    """The real Anthropic client, as if the stream had given the call ``inf`` and a lone
    surrogate in its arguments (what a lax core let through): the next request echoes
    those arguments in the assistant turn and must still be written."""

    async def stream_events(
        self, conversation: Conversation, tools: Sequence[ToolSpec] = (), **options: Any
    ) -> AsyncIterator[StreamEvent]:
        async for received in super().stream_events(conversation, tools, **options):
            event = received
            if isinstance(event, StreamFinished) and event.calls:
                calls = tuple(
                    ToolCall(
                        name=c.name,
                        args={**c.args, "amount": math.inf, "memo": "\ud800"},
                        provider=c.provider,
                        call_id=c.call_id,
                        index=c.index,
                        raw_arguments='{"amount": 1e400, "memo": "\\ud800"}',
                    )
                    for c in event.calls
                )
                event = StreamFinished(stop_reason=event.stop_reason, text=event.text, calls=calls)
            yield event


def test_infinity_in_echoed_arguments_does_not_break_the_next_request(sim: Simulator) -> None:
    paid: list[float] = []

    def pay(amount: float, memo: object = None) -> str:
        paid.append(amount)
        return "paid"

    registry = ToolRegistry()
    registry.add_schema_tool(
        "pay",
        {"type": "object", "properties": {"amount": {"type": "number"}, "memo": {}}},
        pay,
        effect="write",
    )
    sim.play(
        [
            Turn(calls=(ScriptedCall(name="pay", args={"amount": 1}),)),
            Turn(text=FINAL, expect_results=(ExpectedResult(call_position=0, contains="paid"),)),
        ]
    )

    async def main() -> AgentReply:
        async with _EchoesInfinity(
            model="m", api_key="k", base_url=sim.base_url_for("anthropic")
        ) as client:
            with anyio.fail_after(20):
                return await Agent(client, registry, retry=_policy()).run("Pay.")

    reply = anyio.run(main)
    sim.assert_no_problems()
    assert (reply.text, reply.is_fallback) == (FINAL, False)
    assert paid == [math.inf]
    body = sim.requests[-1].body
    assert isinstance(body, dict)
    (tool_use,) = [b for b in body["messages"][1]["content"] if b["type"] == "tool_use"]
    assert tool_use["input"] == {"amount": None, "memo": "\ufffd"}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_dialect_body_with_hostile_values_encodes_strictly(dialect: Dialect) -> None:
    from sse_toolcalls._jsonsafe import dumps_safe

    hostile: dict[str, Any] = {"n": math.nan, "i": -math.inf, "s": "\udc80\ud800", "big": 2**80}
    call = ToolCall(
        name="f",
        args=hostile,
        provider=dialect,
        call_id="c1",
        index=0,
        raw_arguments='{"s": "\\udc80"}',
    )
    from sse_toolcalls.calls import ToolResult

    conversation: list[Message] = [
        UserMessage(text="hi \udcff"),
        AssistantMessage(text="ok \ud800", calls=(call,)),
        ToolResultsMessage(results=(ToolResult(call=call, content={"r": hostile}),)),
    ]
    # With its tool declared: Bedrock Converse refuses tool calls in a request without it.
    tools = [ToolSpec(name="f", description="d", parameters={"type": "object"})]
    body = build_request(dialect, conversation, tools, model="m")
    text = dumps_safe(body).decode("utf-8")
    json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in the body"))


# --------------------------------------------------------------------------------------
# The last-resort guard.


class _Broken:
    dialect = "anthropic"

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    async def stream_events(
        self, conversation: Conversation, tools: Sequence[ToolSpec] = (), **options: Any
    ) -> AsyncIterator[StreamEvent]:
        raise self.exc
        yield  # pragma: no cover - makes this an async generator


def test_an_unexpected_exception_becomes_the_fallback_with_its_diagnostics() -> None:
    class Unprintable(RuntimeError):
        def __str__(self) -> str:
            raise ValueError("no str")

    reply = anyio.run(Agent(_Broken(Unprintable()), ToolRegistry(), retry=_policy()).run, "hi")
    assert (reply.is_fallback, reply.reason) == (True, "internal_error")
    assert reply.text == fallback_message("internal_error")
    (diagnostic,) = reply.diagnostics
    assert diagnostic.kind == "internal_error"
    assert "Unprintable" in (diagnostic.exception or "")
    assert "Traceback" in str(diagnostic.body)


def test_misuse_before_any_tool_ran_still_raises() -> None:
    with pytest.raises(UsageError):
        anyio.run(Agent(_Broken(UsageError("bad conversation")), ToolRegistry()).run, "hi")


class _CallsThenBreaks:
    dialect = "anthropic"

    def __init__(self) -> None:
        self.requests = 0

    async def stream_events(
        self, conversation: Conversation, tools: Sequence[ToolSpec] = (), **options: Any
    ) -> AsyncIterator[StreamEvent]:
        self.requests += 1
        if self.requests > 1:
            raise UsageError("the next request cannot be built")
        call = ToolCall(name="ping", args={}, provider="anthropic", call_id="t1", index=0)
        yield StreamFinished(stop_reason="tool_use", calls=(call,))


def test_misuse_after_a_tool_ran_becomes_the_fallback() -> None:
    registry = ToolRegistry()
    registry.add_schema_tool("ping", {"type": "object"}, lambda: "pong")
    reply = anyio.run(Agent(_CallsThenBreaks(), registry).run, "hi")
    assert (reply.reason, [r.outcome for r in reply.reports]) == ("internal_error", ["ok"])


# --------------------------------------------------------------------------------------
# The property: whatever the stream, the arguments or the handler's return, a reply.


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no str")

    __repr__ = __str__


def _cycle() -> Any:
    items: list[Any] = []
    items.append(items)
    return {"self": items}


RETURNS: list[Callable[[], Any]] = [
    lambda: SURROGATE_NAME,
    lambda: "\ud800 lone",
    lambda: b"\xff\xfe raw",
    lambda: math.nan,
    lambda: [math.inf, -math.inf],
    lambda: 10**5000,
    lambda: {"big": 2**100},
    _cycle,
    _Unprintable,
    object,
    lambda: {1: {2, 3}, None: (4,)},
    lambda: "plain",
]

PLACEHOLDER = "@@"
HOSTILE_VALUES: list[str] = [
    "[" * 1000 + "]" * 1000,
    "{" * 3 + "}" * 3,
    "1e400",
    "-1e400",
    "1" * 5000,
    "123456789012345678901234567890",
    "NaN",
    "-0.0",
    "[" * 100_000,
]


def _body_of(dialect: Dialect, turn: Turn) -> bytes:
    return b"".join(encode_turn(dialect, turn))


def _with_value(dialect: Dialect, value: str) -> bytes:
    """A real turn whose call carries ``value`` (raw JSON text) as an argument."""
    turn = Turn(
        calls=(ScriptedCall(name="probe", args={"x": PLACEHOLDER}),),
        fragment_size=1_000_000,  # the placeholder in one piece
    )
    raw = value.encode()
    body = _body_of(dialect, turn)
    if body[:1] == b"\x00":
        # An AWS event stream: the value goes into each message's payload (inside an
        # InvokeModel chunk's base64), and the message is framed again with its lengths
        # and CRCs, or the body would fail its checksums before any value is read.
        out = []
        for message in EventStreamFramer().feed(body):
            payload = message.payload
            if message.event_type == "chunk":
                chunk = json.loads(payload)
                inner = _replaced(base64.b64decode(chunk["bytes"]), raw)
                chunk["bytes"] = base64.b64encode(inner).decode()
                payload = json.dumps(chunk).encode()
            out.append(event_message(message.event_type or "", _replaced(payload, raw)))
        return b"".join(out)
    return _replaced(body, raw)


def _replaced(data: bytes, raw: bytes) -> bytes:
    # Inside argument text (a JSON string) the placeholder is escaped; as an object
    # (Gemini args) it is not. The hostile values hold no quote or backslash.
    return data.replace(b'\\"' + PLACEHOLDER.encode() + b'\\"', raw).replace(
        b'"' + PLACEHOLDER.encode() + b'"', raw
    )


@st.composite
def hostile_bodies(draw: st.DrawFn, dialect: Dialect) -> tuple[str, tuple[bytes, ...]]:
    kind = draw(
        st.sampled_from(["random", "cut", "mangled", "bad_utf8", "value", "error", "valid"])
    )
    valid = _body_of(
        dialect,
        Turn(
            text="Checking.",
            calls=(ScriptedCall(name="probe", args={"x": "a"}),),
            fragment_size=draw(st.integers(1, 12)),
        ),
    )
    if kind == "random":
        body = draw(st.binary(max_size=2000))
    elif kind == "cut":
        body = valid[: draw(st.integers(0, len(valid)))]
    elif kind == "mangled":
        at = draw(st.integers(0, len(valid)))
        body = valid[:at] + draw(st.binary(min_size=1, max_size=40)) + valid[at:]
    elif kind == "bad_utf8":
        at = draw(st.integers(0, max(0, len(valid) - 1)))
        body = valid[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80"])) + valid[at:]
    elif kind == "value":
        body = _with_value(dialect, draw(st.sampled_from(HOSTILE_VALUES)))
    elif kind == "error":
        error = ErrorEvent(code=draw(st.sampled_from(["overloaded_error", "x" * 300, ""])))
        from sse_toolcalls.tooling.simulator import encode_error_event

        turn = Turn(calls=(ScriptedCall(name="probe", args={"x": "a"}),))
        body = b"".join(encode_error_event(dialect, turn, error))
    else:
        body = valid
    # At most about 200 writes: one byte per write of a 100 KB body is 100,000 writes.
    size = max(draw(st.integers(1, 64)), len(body) // 200)
    chunks = tuple(body[i : i + size] for i in range(0, len(body), size)) or (b"",)
    return kind, chunks


def _run_hostile(
    sim: Simulator,
    dialect: Dialect,
    chunks: tuple[bytes, ...],
    returned: Callable[[], Any],
    *,
    effect: str = "write",
    again: bool = False,
    backend: str = "asyncio",
) -> AgentReply:
    """One agent run whose first turn (and second, with ``again``) is ``chunks``."""
    turns = [Turn(fault=RawBody(chunks=chunks))]
    if again:
        turns.append(Turn(fault=RawBody(chunks=chunks)))
    turns += [Turn(text=FINAL)] * 4
    sim.play(Script(turns=tuple(turns), check_results=False))
    registry = ToolRegistry()
    registry.add_schema_tool(
        "probe",
        {"type": "object", "properties": {"x": {}}},
        lambda **kwargs: returned(),
        effect=effect,  # type: ignore[arg-type]
    )

    async def main() -> AgentReply:
        async with client_for(
            dialect, model="m", api_key="k", base_url=sim.base_url_for(dialect), idle_timeout=5
        ) as client:
            agent = Agent(client, registry, retry=_policy(), max_steps=4)
            with anyio.fail_after(30):
                return await agent.run("Probe it.")

    reply = anyio.run(main, backend=backend)
    assert isinstance(reply.text, str) and reply.text.strip()
    assert reply.is_fallback == (reply.reason is not None)
    if reply.is_fallback:
        assert reply.text == fallback_message(reply.reason)  # type: ignore[arg-type]
    # Whatever came back from the handler went to the provider as valid JSON.
    for request in sim.requests:
        assert request.body is not None, "the agent sent a body that is not JSON"
    if reply.reason == "internal_error":
        _record_finding(dialect, chunks, reply)
    return reply


def _record_finding(dialect: Dialect, chunks: tuple[bytes, ...], reply: AgentReply) -> None:
    target = _findings_file()
    if target is None:
        return
    finding = {
        "dialect": dialect,
        "body": b"".join(chunks).decode("latin-1")[:3000],
        "chunk_size": len(chunks[0]),
        "exception": [d.exception for d in reply.diagnostics if d.kind == "internal_error"],
    }
    with target.open("a") as out:
        out.write(json.dumps(finding) + "\n")


@pytest.mark.parametrize("value", HOSTILE_VALUES, ids=lambda v: v[:12])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_hostile_argument_values_end_with_a_reply_and_run_nothing_wrong(
    dialect: Dialect, value: str, sim: Simulator
) -> None:
    ran: list[Any] = []

    def record() -> str:
        ran.append(1)
        return "ran"

    body = _with_value(dialect, value)
    reply = _run_hostile(sim, dialect, (body,), record)
    if ran:
        # Only a value that is a valid, exact JSON argument may reach the handler.
        assert value in {"-0.0", "123456789012345678901234567890"}, reply.reports


def _findings_file() -> Path | None:
    path = os.environ.get("SSE_TOOLCALLS_HOSTILE_FINDINGS")
    return Path(path) if path else None


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    data=st.data(),
    dialect=st.sampled_from(DIALECTS),
    returned=st.sampled_from(RETURNS),
    effect=st.sampled_from(["read", "write"]),
    backend=st.sampled_from(["asyncio", "trio"]),
)
def test_every_run_ends_with_a_reply(
    data: st.DataObject,
    dialect: Dialect,
    returned: Callable[[], Any],
    effect: str,
    backend: str,
    sim: Simulator,
) -> None:
    _, chunks = data.draw(hostile_bodies(dialect))
    again = data.draw(st.booleans())
    _run_hostile(sim, dialect, chunks, returned, effect=effect, again=again, backend=backend)
