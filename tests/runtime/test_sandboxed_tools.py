"""Sandboxed tools through the one executor and the one loop: each violation reaches the
model as a structured error result under the call's id, and counts as a tool fault."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime import ToolContext
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.breaker import CircuitBreaker
from sse_toolcalls.runtime.errors import SandboxDeclarationError, SandboxUnavailableError
from sse_toolcalls.runtime.sandbox import Sandbox, WarmPool, backends
from sse_toolcalls.runtime.tools import ToolRegistry
from tests.runtime.sandbox import tools
from tests.runtime.sandbox.conftest import sandbox_pids
from tests.runtime.test_agent import FakeClient, answer, calling

pytestmark = pytest.mark.anyio


def content(reply_result: Any) -> dict[str, Any]:
    value = reply_result.content
    assert isinstance(value, dict), value
    return value


async def one_call(registry: ToolRegistry, name: str, args: dict[str, Any]) -> dict[str, Any]:
    agent = Agent(FakeClient([calling((name, args)), answer("done")]), registry)
    reply = await agent.run("go")
    assert reply.text == "done"
    (result,) = reply.results
    assert result.call.call_id == "toolu_0_0"
    return content(result) if result.is_error else {"ok": result.content}


def test_a_lambda_is_refused_at_registration() -> None:
    registry = ToolRegistry()
    with pytest.raises(SandboxDeclarationError, match="lambda"):
        registry.register(lambda: 1, name="f", sandbox=Sandbox())


def test_a_closure_is_refused_at_registration() -> None:
    def inner(path: str) -> str:
        return path

    with pytest.raises(SandboxDeclarationError, match="inside another"):
        ToolRegistry().register(inner, sandbox=Sandbox())


def with_context(ctx: ToolContext[None], word: str) -> str:
    """Module-level (importable by the child), but takes the run's context."""
    return f"{ctx.request_id}:{word}"


def test_a_handler_taking_a_tool_context_is_refused_when_sandboxed() -> None:
    # The child gets JSON arguments only; a context (deps, the call) cannot cross.
    with pytest.raises(SandboxDeclarationError, match="ToolContext"):
        ToolRegistry().register(with_context, sandbox=Sandbox())
    ToolRegistry().register(with_context)  # unsandboxed, it is an ordinary tool


def test_own_timeout_beside_a_sandbox_is_refused() -> None:
    with pytest.raises(UsageError, match="Sandbox\\(timeout"):
        ToolRegistry().register(tools.read_file, sandbox=Sandbox(), timeout=5)


def test_no_backend_fails_closed_unless_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backends, "unavailable", lambda backend, sandbox: "not here")
    with pytest.raises(SandboxUnavailableError, match="allow_unsandboxed"):
        ToolRegistry().register(tools.read_file, sandbox=Sandbox())
    allowed = ToolRegistry(allow_unsandboxed=True)
    allowed.register(tools.read_file, sandbox=Sandbox())
    per_tool = ToolRegistry()
    per_tool.register(tools.read_file, sandbox=Sandbox(), allow_unsandboxed=True)
    assert per_tool.get("read_file") is not None


def test_the_tool_carries_its_sandbox_and_the_sandbox_owns_the_timeout() -> None:
    registry = ToolRegistry()
    declared = Sandbox(read=["/etc/hostname"], timeout=3)
    registry.register(tools.read_file, sandbox=declared)
    tool = registry.get("read_file")
    assert tool is not None and tool.sandbox == declared and tool.timeout is None


async def test_a_declared_read_works_and_an_undeclared_one_is_refused(tmp_path: Path) -> None:
    allowed = tmp_path / "allowed.txt"
    allowed.write_text("hello")
    secret = tmp_path / "secret.txt"
    secret.write_text("key")
    registry = ToolRegistry()
    registry.register(tools.read_file, sandbox=Sandbox(read=[str(allowed)]))
    assert await one_call(registry, "read_file", {"path": str(allowed)}) == {"ok": "hello"}
    refused = await one_call(registry, "read_file", {"path": str(secret)})
    assert refused["error"] == "sandbox_violation"
    assert refused["violation"] == "denied_path"
    assert refused["path"] == str(secret)
    assert str(secret) in refused["message"]
    assert "key" not in json.dumps(refused)


async def test_network_refused_is_reported(tmp_path: Path) -> None:
    registry = ToolRegistry()
    registry.register(tools.connect, sandbox=Sandbox(network=False))
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    async with listener:
        port = listener.extra(anyio.abc.SocketAttribute.local_port)
        refused = await one_call(registry, "connect", {"port": port})
    assert refused["violation"] == "network_refused"


async def test_memory_cpu_and_timeout_each_get_their_own_result() -> None:
    registry = ToolRegistry()
    registry.register(tools.allocate, sandbox=Sandbox(memory="128 MiB"))
    registry.register(tools.spin, sandbox=Sandbox(cpu=1, timeout=20))
    registry.register(tools.sleep, sandbox=Sandbox(timeout=1))
    memory = await one_call(registry, "allocate", {"size": 256 * 1024**2})
    assert memory["violation"] == "memory_limit"
    cpu = await one_call(registry, "spin", {})
    assert cpu["violation"] == "cpu_limit"
    late = await one_call(registry, "sleep", {"seconds": 30})
    assert late["error"] == "tool_timeout"
    assert not sandbox_pids()


async def test_a_sandboxed_write_that_overruns_is_not_to_be_repeated(tmp_path: Path) -> None:
    registry = ToolRegistry()
    registry.register(tools.sleep, effect="write", sandbox=Sandbox(timeout=1))
    client = FakeClient([calling(("sleep", {"seconds": 30})), answer("done")])
    reply = await Agent(client, registry).run("go")
    (report,) = reply.reports
    assert report.outcome == "timeout" and report.runs == 1
    message = content(report.result)["message"]
    assert "may still have happened" in message and "Do not repeat" in message


async def test_violations_are_tool_faults_for_the_breaker(tmp_path: Path) -> None:
    registry = ToolRegistry()
    registry.register(tools.read_file, sandbox=Sandbox())
    breaker = CircuitBreaker(threshold=2)
    secret = str(tmp_path / "s")
    client = FakeClient(
        [calling(("read_file", {"path": secret}), turn=t) for t in range(3)] + [answer("ok")]
    )
    reply = await Agent(client, registry, breaker=breaker, read_retries=0).run("go")
    outcomes = [r.outcome for r in reply.reports]
    assert outcomes == ["failed", "failed", "unavailable"]


async def test_cancelling_the_run_kills_the_child(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    registry = ToolRegistry()
    registry.register(tools.sleep, sandbox=Sandbox(write=[str(tmp_path)], timeout=60))
    agent = Agent(
        FakeClient([calling(("sleep", {"seconds": 60, "marker": str(marker)})), answer("x")]),
        registry,
    )
    before = sandbox_pids()
    with anyio.move_on_after(30) as scope:
        async with anyio.create_task_group() as group:
            group.start_soon(agent.run, "go")
            for _ in range(600):  # the child writes the marker once it runs
                if await anyio.Path(marker).exists():
                    break
                await anyio.sleep(0.05)
            running = sandbox_pids() - before
            assert running
            group.cancel_scope.cancel()
    assert not scope.cancelled_caught
    # Each pid the child had is gone (the engine waits for the tree before it returns).
    assert not (sandbox_pids() & running)


@pytest.mark.parametrize(
    ("handler", "args", "error"),
    [
        (tools.refuse, {"reason": "the date must be in the past"}, "tool_retry"),
        (tools.answer_error, {"content": "rate limited, try in a minute"}, "tool_error"),
        (tools.answer_unencodable, {}, "tool_error"),
    ],
    ids=["ToolRetry", "ToolErrorReply", "ToolErrorReply-not-JSON"],
)
async def test_a_handlers_own_answer_is_the_same_sandboxed_or_not(
    handler: Any, args: dict[str, Any], error: str
) -> None:
    here, boxed = ToolRegistry(), ToolRegistry()
    here.register(handler)
    boxed.register(handler, sandbox=Sandbox())
    name = handler.__name__
    unsandboxed = await one_call(here, name, args)
    assert unsandboxed["error"] == error
    assert await one_call(boxed, name, args) == unsandboxed


async def test_a_sandboxed_tool_retry_is_off_the_breaker() -> None:
    registry = ToolRegistry()
    registry.register(sandbox=Sandbox(), retries=5)(tools.refuse)
    breaker = CircuitBreaker(threshold=1)  # a tool fault would open it at once
    client = FakeClient(
        [calling(("refuse", {"reason": "no"}), turn=t) for t in range(2)] + [answer("ok")]
    )
    reply = await Agent(client, registry, breaker=breaker).run("go")
    assert [r.outcome for r in reply.reports] == ["retry", "retry"]


async def test_a_tool_retry_on_a_warm_worker_is_answered_the_same() -> None:
    registry = ToolRegistry()
    registry.register(tools.refuse, sandbox=Sandbox())
    unsandboxed = ToolRegistry()
    unsandboxed.register(tools.refuse)
    expected = await one_call(unsandboxed, "refuse", {"reason": "not today"})
    async with WarmPool() as pool:
        agent = Agent(
            FakeClient([calling(("refuse", {"reason": "not today"})), answer("done")]),
            registry,
            sandbox_pool=pool,
        )
        reply = await agent.run("go")
    (report,) = reply.reports
    assert report.outcome == "retry" and content(report.result) == expected


async def test_an_agent_with_a_warm_pool_reuses_one_zygote_across_runs() -> None:
    # remember() reports what a previous call left (a global, files, the directory's
    # mode): a warm worker is reset between calls, so both runs see a clean slate, and
    # the pool's one zygote served both (it is still the same process afterwards).
    registry = ToolRegistry()
    registry.register(tools.remember, sandbox=Sandbox())
    clean = {"global": [], "files": [], "mode": 0o700, "xattrs": []}
    async with WarmPool() as pool:
        agent = Agent(
            FakeClient(
                [
                    calling(("remember", {"word": "one"})),
                    answer("done"),
                    calling(("remember", {"word": "two"}), turn=1),
                    answer("done"),
                ]
            ),
            registry,
            sandbox_pool=pool,
        )
        first = await agent.run("go")
        zygotes = [z.process.pid for t in pool._tools.values() for z in t.idle]
        second = await agent.run("again")
        assert zygotes and [z.process.pid for t in pool._tools.values() for z in t.idle] == zygotes
    assert [r.content for r in (*first.results, *second.results)] == [clean, clean]
    assert not sandbox_pids()
