"""Agent's OpenTelemetry spans (issue 17, item 3), read back through the SDK's in-memory
exporter: names, attributes and parent links, against the simulator in every dialect,
on asyncio and trio; content only when the application opts in; and without the
package, nothing imported at all."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from sse_toolcalls import Dialect
from sse_toolcalls.calls import DIALECTS, StreamFinished
from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime import tracing as tracing_module
from sse_toolcalls.runtime.agent import Agent, AgentReply
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.runtime.retry import RetryPolicy
from sse_toolcalls.runtime.sandbox import Sandbox
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.runtime.tracing import CAPTURE_CONTENT_ENV, Tracing
from sse_toolcalls.tooling.simulator import HTTPError, ScriptedCall, Simulator, Turn
from tests.runtime.sandbox import tools as sandbox_tools
from tests.runtime.test_agent import FakeClient, answer, calling

pytestmark = [
    pytest.mark.anyio,
    # As in test_chaos.py: httpx leaves abandoned body iterators to the collector.
    pytest.mark.filterwarnings("ignore:Async generator 'httpx\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore\\.:ResourceWarning"),
]

SECRET_CITY = "Ouagadougou-7f3a"
"""An argument value that must appear on no span unless content is opted in."""


def exporter_and_tracing(**options: Any) -> tuple[InMemorySpanExporter, Tracing]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter, Tracing(tracer_provider=provider, **options)


def bank() -> tuple[ToolRegistry, list[str]]:
    registry = ToolRegistry()
    sent: list[str] = []

    @registry.register
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"sunny in {city}"

    @registry.register(effect="write")
    def send_money(to: str, amount: int) -> dict[str, str]:
        """Send money to someone."""
        sent.append(to)
        return {"receipt": f"R{len(sent)}"}

    return registry, sent


async def no_sleep(seconds: float) -> None:
    await anyio.lowlevel.checkpoint()


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def by_name(spans: Sequence[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    return sorted((s for s in spans if s.name.startswith(prefix)), key=lambda s: s.start_time or 0)


PROVIDER = {
    "openai_chat": "openai",
    "openai_responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gcp.gemini",
    "bedrock_converse": "aws.bedrock",
    "bedrock_anthropic": "aws.bedrock",
}


async def run_scripted(
    simulator: Simulator, dialect: Dialect, traced: Tracing
) -> tuple[AgentReply, list[str]]:
    """A run with two tools in its first turn, a failed request retried, and the write
    asked for again (under a new id) in the same request: replayed by the ledger."""
    registry, sent = bank()
    again = ScriptedCall(
        name="send_money",
        args={"to": "bob", "amount": 10},
        call_id=None if dialect == "gemini" else "call_again",
    )
    simulator.play(
        [
            Turn(
                calls=(
                    ScriptedCall(name="weather", args={"city": SECRET_CITY}),
                    ScriptedCall(name="send_money", args={"to": "bob", "amount": 10}),
                ),
                usage={"input_tokens": 11, "output_tokens": 7},
            ),
            Turn(fault=HTTPError(status=502)),
            Turn(calls=(again,), usage={"input_tokens": 13, "output_tokens": 5}),
            Turn(text="Sent, and it is sunny.", usage={"input_tokens": 17, "output_tokens": 3}),
        ]
    )
    async with client_for(
        dialect,
        model="sim-model-1",
        api_key="test-key",
        base_url=simulator.base_url_for(dialect),
        idle_timeout=1.0,
    ) as client:
        agent = Agent(
            client,
            registry,
            retry=RetryPolicy(sleep=no_sleep, random=lambda: 0.5),
            tracing=traced,
        )
        with anyio.fail_after(30):
            reply = await agent.run("Pay Bob 10; weather?", conversation_id="chat-9")
    simulator.assert_no_problems()
    return reply, sent


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_run_with_a_retry_two_tools_and_a_replayed_write(
    dialect: Dialect, simulator: Simulator
) -> None:
    exporter, traced = exporter_and_tracing(agent_name="banker")
    reply, sent = await run_scripted(simulator, dialect, traced)
    assert reply.text == "Sent, and it is sunny." and sent == ["bob"]
    spans = exporter.get_finished_spans()

    (run,) = by_name(spans, "invoke_agent")
    chats = by_name(spans, "chat ")
    tools = by_name(spans, "execute_tool ")
    assert len(spans) == 1 + len(chats) + len(tools)
    assert run.name == "invoke_agent banker"
    assert run.kind == SpanKind.INTERNAL and run.parent is None
    assert attributes(run) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "banker",
        "gen_ai.provider.name": PROVIDER[dialect],
        "gen_ai.system": PROVIDER[dialect],
        "gen_ai.request.model": "sim-model-1",
        "gen_ai.conversation.id": "chat-9",
        "gen_ai.usage.input_tokens": 11 + 13 + 17,
        "gen_ai.usage.output_tokens": 7 + 5 + 3,
        "sse_toolcalls.dialect": dialect,
        "sse_toolcalls.request.id": attributes(run)["sse_toolcalls.request.id"],
        "sse_toolcalls.agent.steps": 3,
        "sse_toolcalls.agent.requests": 4,
        "sse_toolcalls.agent.calls": 3,
    }
    assert run.status.status_code == StatusCode.UNSET

    # Four requests: the first turn, the failed one and its retry, the last turn.
    assert [c.name for c in chats] == ["chat sim-model-1"] * 4
    assert [attributes(c)["sse_toolcalls.request.attempt"] for c in chats] == [1, 1, 2, 1]
    for chat in chats:
        assert chat.kind == SpanKind.CLIENT
        assert chat.parent is not None and chat.parent.span_id == run.context.span_id
        found = attributes(chat)
        assert found["gen_ai.operation.name"] == "chat"
        assert found["gen_ai.provider.name"] == PROVIDER[dialect]
        assert found["gen_ai.request.model"] == "sim-model-1"
        assert found["server.address"] == "127.0.0.1"
        assert isinstance(found["server.port"], int)
    failed = attributes(chats[1])
    assert chats[1].status.status_code == StatusCode.ERROR
    assert "gen_ai.usage.input_tokens" not in failed
    # The provider error's own code, as the simulator spells it in each dialect's body.
    assert failed["error.type"] == reply.diagnostics[0].code
    assert failed["http.response.status_code"] == 502
    done = [attributes(c) for c in (chats[0], chats[2], chats[3])]
    assert [(d["gen_ai.usage.input_tokens"], d["gen_ai.usage.output_tokens"]) for d in done] == [
        (11, 7),
        (13, 5),
        (17, 3),
    ]
    for d, chat in zip(done, (chats[0], chats[2], chats[3]), strict=True):
        assert len(d["gen_ai.response.finish_reasons"]) == 1
        assert chat.status.status_code == StatusCode.UNSET

    # The tools: each a child of the run, never of a request.
    # The first turn's two calls run at once (in either order); the replay comes after.
    tools = sorted(tools[:2], key=lambda t: t.name != "execute_tool weather") + tools[2:]
    assert [t.name for t in tools] == [
        "execute_tool weather",
        "execute_tool send_money",
        "execute_tool send_money",
    ]
    for tool in tools:
        assert tool.kind == SpanKind.INTERNAL
        assert tool.parent is not None and tool.parent.span_id == run.context.span_id
    ids = [r.call.call_id for r in reply.reports]
    weather, first, replayed = (attributes(t) for t in tools)
    assert weather["gen_ai.tool.name"] == "weather"
    assert weather["gen_ai.tool.type"] == "function"
    assert weather["sse_toolcalls.tool.outcome"] == "ok"
    assert weather["sse_toolcalls.tool.effect"] == "read"
    assert weather["sse_toolcalls.ledger.replayed"] is False
    assert first["sse_toolcalls.tool.outcome"] == "ok" and first["sse_toolcalls.tool.runs"] == 1
    assert first["sse_toolcalls.tool.effect"] == "write"
    assert replayed["sse_toolcalls.tool.outcome"] == "replayed"
    assert replayed["sse_toolcalls.tool.runs"] == 0
    assert replayed["sse_toolcalls.ledger.replayed"] is True
    assert tools[2].status.status_code == StatusCode.UNSET
    # Gemini sends no call ids: then there is none on the span either.
    assert [a.get("gen_ai.tool.call.id") for a in (weather, first, replayed)] == ids
    assert "sse_toolcalls.runtime.sandbox.verdict" not in weather  # not a sandboxed tool

    # No content by default: neither the arguments nor the results nor the text.
    dumped = json.dumps([attributes(s) for s in spans], default=str)
    assert SECRET_CITY not in dumped and "sunny" not in dumped and "receipt" not in dumped


@pytest.mark.parametrize("dialect", ["openai_chat"])
async def test_content_is_recorded_only_when_the_application_opts_in(
    dialect: Dialect, simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    exporter, traced = exporter_and_tracing(capture_content=True)
    await run_scripted(simulator, dialect, traced)
    spans = exporter.get_finished_spans()
    weather = attributes(by_name(spans, "execute_tool weather")[0])
    assert json.loads(weather["gen_ai.tool.call.arguments"]) == {"city": SECRET_CITY}
    assert SECRET_CITY in weather["gen_ai.tool.call.result"]
    (run,) = by_name(spans, "invoke_agent")
    assert run.name == "invoke_agent"  # no agent name given
    last = attributes(by_name(spans, "chat ")[-1])
    (message,) = json.loads(last["gen_ai.output.messages"])
    assert message["role"] == "assistant"
    assert message["parts"] == [{"type": "text", "content": "Sent, and it is sunny."}]
    # The conversation as sent with the last request: the user, the two calls, their
    # results, the replayed write and its result.
    sent = json.loads(last["gen_ai.input.messages"])
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "assistant", "tool"]
    assert sent[0]["parts"] == [{"type": "text", "content": "Pay Bob 10; weather?"}]
    calls = [p for p in sent[1]["parts"] if p["type"] == "tool_call"]
    assert [c["name"] for c in calls] == ["weather", "send_money"]
    assert calls[0]["arguments"] == {"city": SECRET_CITY}
    assert [p["type"] for p in sent[2]["parts"]] == ["tool_call_response"] * 2
    assert "gen_ai.system_instructions" not in last
    # The GenAI instrumentations' variable opts in too; an explicit False wins over it.
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, "true")
    assert Tracing().capture_content is True
    assert Tracing(capture_content=False).capture_content is False
    monkeypatch.setenv(CAPTURE_CONTENT_ENV, "false")
    assert Tracing().capture_content is False


async def test_system_instructions_are_content_too() -> None:
    from sse_toolcalls.conversation import Message, SystemPrompt, UserMessage

    conversation: list[Message] = [SystemPrompt(text="Be brief."), UserMessage(text="hi")]
    for capture in (True, False):
        exporter, traced = exporter_and_tracing(capture_content=capture)
        await Agent(FakeClient([answer("Hi.")]), ToolRegistry(), tracing=traced).run(conversation)
        (chat,) = by_name(exporter.get_finished_spans(), "chat")
        found = attributes(chat)
        if capture:
            assert json.loads(found["gen_ai.system_instructions"]) == [
                {"type": "text", "content": "Be brief."}
            ]
            assert json.loads(found["gen_ai.input.messages"])[0]["role"] == "user"
        else:
            assert "gen_ai.system_instructions" not in found
            assert "Be brief." not in json.dumps(found)


async def test_a_fallback_and_a_failing_tool_are_errors_on_their_spans() -> None:
    exporter, traced = exporter_and_tracing()
    registry = ToolRegistry()

    @registry.register
    def lookup(key: str) -> str:
        """Look a key up."""
        raise KeyError(key)

    client = FakeClient(
        [calling(("lookup", {"key": "k"})), calling(("nope", {}), turn=1), answer("")]
    )
    reply = await Agent(client, registry, tracing=traced, read_retries=0).run("go")
    assert reply.reason == "provider_unavailable"  # the empty answer
    spans = exporter.get_finished_spans()
    (run,) = by_name(spans, "invoke_agent")
    assert run.status.status_code == StatusCode.ERROR
    assert attributes(run)["error.type"] == "provider_unavailable"
    assert attributes(run)["sse_toolcalls.agent.fallback"] == "provider_unavailable"
    failed, unknown = (attributes(t) for t in by_name(spans, "execute_tool "))
    assert failed["sse_toolcalls.tool.outcome"] == "failed"
    assert failed["error.type"] == "KeyError"
    assert unknown["sse_toolcalls.tool.outcome"] == "refused"
    assert unknown["error.type"] == "refused"
    assert "sse_toolcalls.tool.effect" not in unknown  # no such tool
    # A FakeClient has no model and no base URL: no attribute is made up for them.
    chat = attributes(by_name(spans, "chat")[0])
    assert "gen_ai.request.model" not in chat and "server.address" not in chat
    assert by_name(spans, "chat")[0].name == "chat"


async def test_the_sandbox_verdict_is_on_the_tool_span(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed.txt"
    allowed.write_text("hello")
    exporter, traced = exporter_and_tracing()
    registry = ToolRegistry()
    registry.register(sandbox_tools.read_file, sandbox=Sandbox(read=[str(allowed)]))
    client = FakeClient(
        [
            calling(
                ("read_file", {"path": str(allowed)}),
                ("read_file", {"path": str(tmp_path / "secret")}),
            ),
            answer("done"),
        ]
    )
    reply = await Agent(client, registry, tracing=traced, read_retries=0).run("go")
    assert [r.outcome for r in reply.reports] == ["ok", "failed"]
    found = [attributes(t) for t in by_name(exporter.get_finished_spans(), "execute_")]
    # The two calls ran at once: told apart by their outcome, not their order.
    denied, passed = sorted(found, key=lambda a: a["sse_toolcalls.tool.outcome"])
    assert passed["sse_toolcalls.runtime.sandbox.verdict"] == "passed"
    assert denied["sse_toolcalls.runtime.sandbox.verdict"] == "denied_path"
    assert denied["error.type"] == "SandboxViolationError"


async def test_a_cancelled_run_ends_its_spans() -> None:
    exporter, traced = exporter_and_tracing()
    client = FakeClient([30.0])
    with anyio.move_on_after(0.2):
        await Agent(client, ToolRegistry(), tracing=traced).run("go")
    run, chat = sorted(exporter.get_finished_spans(), key=lambda s: s.name != "invoke_agent")
    assert chat.name == "chat" and chat.status.status_code == StatusCode.ERROR
    assert run.status.status_code == StatusCode.ERROR


# One turn's usage as each provider reports it: 130 prompt tokens of which 100 read from
# the cache (Anthropic: 10 new + 100 read + 20 written), 55 generated of which 50 reasoning
# (Gemini reports its thoughts beside the 5 candidate tokens).
RAW_USAGE: dict[str, dict[str, Any]] = {
    "openai_chat": {
        "prompt_tokens": 130,
        "completion_tokens": 55,
        "prompt_tokens_details": {"cached_tokens": 100},
        "completion_tokens_details": {"reasoning_tokens": 50},
    },
    "openai_responses": {
        "input_tokens": 130,
        "output_tokens": 55,
        "input_tokens_details": {"cached_tokens": 100},
        "output_tokens_details": {"reasoning_tokens": 50},
    },
    "anthropic": {
        "input_tokens": 10,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 20,
        "output_tokens": 55,
    },
    "gemini": {
        "promptTokenCount": 130,
        "cachedContentTokenCount": 100,
        "candidatesTokenCount": 5,
        "thoughtsTokenCount": 50,
    },
    # Converse's TokenUsage: the cache's tokens apart from inputTokens, as Anthropic's.
    "bedrock_converse": {
        "inputTokens": 10,
        "cacheReadInputTokens": 100,
        "cacheWriteInputTokens": 20,
        "outputTokens": 55,
        "totalTokens": 185,
    },
    "bedrock_anthropic": {
        "input_tokens": 10,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 20,
        "output_tokens": 55,
    },
}


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_every_reader_of_usage_agrees(dialect: str) -> None:
    """The reply, the run's span and the request's span give one turn's tokens alike:
    input with cached tokens, output with reasoning (issue 29, item 16)."""
    exporter, traced = exporter_and_tracing()
    client = FakeClient(
        [StreamFinished(stop_reason="end_turn", text="hi", usage=RAW_USAGE[dialect])]
    )
    client.dialect = dialect
    reply = await Agent(client, ToolRegistry(), tracing=traced).run("go")
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (130, 55)
    spans = exporter.get_finished_spans()
    for span in (*by_name(spans, "invoke_agent"), *by_name(spans, "chat")):
        found = attributes(span)
        assert found["gen_ai.usage.input_tokens"] == 130, (span.name, found)
        assert found["gen_ai.usage.output_tokens"] == 55, (span.name, found)
        assert found["gen_ai.usage.cache_read.input_tokens"] == 100, (span.name, found)
    assert len(spans) == 2


def test_settings() -> None:
    assert tracing_module.resolve(False) is tracing_module.OFF
    # Off, every hook is the one shared no-op: no span and no attribute is built.
    off = Agent(FakeClient([]), ToolRegistry(), tracing=False).tracing
    assert off is tracing_module.OFF
    run = off.run(object(), conversation_id="c", request_id="r")
    assert run is off.request(object(), attempt=1) is tracing_module._NO_SPAN
    assert isinstance(tracing_module.resolve(None), Tracing)  # the package is installed
    with pytest.raises(UsageError, match="tracing must be"):
        tracing_module.resolve("yes")  # type: ignore[arg-type]


def test_without_opentelemetry_nothing_is_imported_and_the_agent_runs() -> None:
    """In a fresh interpreter where ``opentelemetry`` cannot be imported: the package
    and an Agent run never import it, and asking for tracing says how to get it."""
    script = textwrap.dedent(
        """
        import sys

        class Blocked:
            def find_spec(self, name, path=None, target=None):
                if name == "opentelemetry" or name.startswith("opentelemetry."):
                    raise ImportError("blocked by the test")
                return None

        sys.meta_path.insert(0, Blocked())
        import anyio
        import sse_toolcalls
        from sse_toolcalls import Agent, ToolRegistry, Tracing, UsageError
        from tests.runtime.test_agent import FakeClient, answer, calling

        registry = ToolRegistry()

        @registry.register
        def forecast(city: str) -> str:
            "Weather."
            return "sunny"

        client = FakeClient([calling(("forecast", {"city": "Oslo"})), answer("Sunny.")])
        agent = Agent(client, registry)
        from sse_toolcalls.runtime import tracing
        assert agent.tracing is tracing.OFF
        reply = anyio.run(agent.run, "weather?")
        assert reply.text == "Sunny.", reply
        assert [r.outcome for r in reply.reports] == ["ok"]
        try:
            Tracing()
        except UsageError as exc:
            assert "sse_toolcalls[otel]" in str(exc)
        else:
            raise AssertionError("Tracing() without the package")
        leaked = sorted(m for m in sys.modules if m.startswith("opentelemetry"))
        assert not leaked, leaked
        print("ok")
        """
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
