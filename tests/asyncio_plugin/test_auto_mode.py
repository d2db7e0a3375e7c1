"""What only pytest-asyncio's auto mode allows: unmarked async tests and async fixtures
declared with plain ``pytest.fixture``, with the simulator fixture (collected in auto
mode only: see conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sse_toolcalls.runtime import Agent, ProviderClient, ToolRegistry, client_for
from sse_toolcalls.tooling.simulator import ScriptedCall, Simulator, Turn


@pytest.fixture
async def client(simulator: Simulator) -> AsyncIterator[ProviderClient]:
    async with client_for(
        "gemini",
        model="sim-model-1",
        api_key="test-key",
        base_url=simulator.base_url_for("gemini"),
        idle_timeout=5.0,
    ) as made:
        yield made


async def test_an_unmarked_test_and_fixture_run_an_agent(
    simulator: Simulator, client: ProviderClient
) -> None:
    tools = ToolRegistry()

    @tools.register
    def double(n: int) -> int:
        """Twice n."""
        return 2 * n

    simulator.play([Turn(calls=(ScriptedCall(name="double", args={"n": 21}),)), Turn(text="42")])
    reply = await Agent(client, tools).run("double 21")
    assert reply.text == "42" and reply.results[0].content == "42"
    simulator.assert_no_problems()
