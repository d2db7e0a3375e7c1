"""Sandboxed and approval-gated tools through the Agent against the simulator: real
clients on every dialect, real children, what the model is sent checked by the
simulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from sse_toolcalls import Dialect
from sse_toolcalls.calls import DIALECTS
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.approval import approval_id
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.runtime.sandbox import BACKEND_ENV, Sandbox
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.tooling.simulator import ExpectedResult, ScriptedCall, Simulator, Turn
from tests.runtime.sandbox import tools
from tests.runtime.sandbox.conftest import sandbox_pids

pytestmark = [
    pytest.mark.anyio,
    # As in tests/tooling/simulator/test_end_to_end.py: httpx's unclosed body iterators on trio.
    pytest.mark.filterwarnings("ignore:Async generator 'httpx\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore\\.:ResourceWarning"),
]


def client(sim: Simulator, dialect: Dialect) -> object:
    return client_for(
        dialect, model="sim-model-1", api_key="test-key", base_url=sim.base_url_for(dialect)
    )


# Every dialect under bwrap (the default); one Landlock case (the backend is the
# engine's, attacked under both in tests/runtime/sandbox/).
CASES = [(dialect, "bwrap") for dialect in DIALECTS] + [(DIALECTS[0], "landlock")]


@pytest.mark.parametrize(("dialect", "backend"), CASES)
async def test_a_denied_path_reaches_the_model_under_the_calls_id(
    dialect: Dialect,
    backend: str,
    simulator: Simulator,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(BACKEND_ENV, backend)
    allowed, secret = tmp_path / "notes.txt", tmp_path / "secret.txt"
    allowed.write_text("buy milk")
    secret.write_text("hunter2")
    registry = ToolRegistry()
    registry.register(tools.read_file, sandbox=Sandbox(read=[str(allowed)], timeout=10))
    simulator.play(
        [
            Turn(
                calls=(
                    ScriptedCall(name="read_file", args={"path": str(allowed)}),
                    ScriptedCall(name="read_file", args={"path": str(secret)}),
                )
            ),
            Turn(
                text="Your note says buy milk; the other file is off limits.",
                expect_results=(
                    ExpectedResult(call_position=0, contains="buy milk"),
                    ExpectedResult(call_position=1, contains="denied_path"),
                ),
            ),
        ]
    )
    async with client(simulator, dialect) as provider:  # type: ignore[attr-defined]
        reply = await Agent(provider, registry).run("read my notes")
    simulator.assert_no_problems()
    assert not reply.is_fallback, reply.diagnostics
    assert [r.outcome for r in reply.reports] == ["ok", "failed"]
    refused = reply.results[1].content
    assert isinstance(refused, dict) and refused["path"] == str(secret)
    assert "hunter2" not in str(refused)
    assert not sandbox_pids()


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_an_approved_sandboxed_write_runs_once(
    dialect: Dialect, simulator: Simulator, tmp_path: Path
) -> None:
    target = tmp_path / "out.txt"
    registry = ToolRegistry()
    registry.register(
        tools.write_file,
        effect="write",
        sandbox=Sandbox(write=[str(tmp_path)], timeout=10),
        needs_approval=True,
    )
    simulator.play(
        [
            Turn(calls=(ScriptedCall(name="write_file", args={"path": str(target), "text": "x"}),)),
            Turn(
                text="Written.",
                expect_results=(ExpectedResult(call_position=0, contains="1"),),
            ),
        ]
    )
    async with client(simulator, dialect) as provider:  # type: ignore[attr-defined]
        agent = Agent(provider, registry)
        paused = await agent.run("write it")
        assert not target.exists()
        assert paused.state is not None
        (waiting,) = paused.pending_approvals
        # Gemini sends no call ids: a pending call is named by its approval_id.
        reply = await agent.resume(paused.state, approve=[approval_id(waiting)])
    simulator.assert_no_problems()
    assert reply.text == "Written." and target.read_text() == "x"
    assert [r.outcome for r in reply.reports] == ["ok"]
