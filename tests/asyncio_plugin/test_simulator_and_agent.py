"""The simulator fixture and the async API under pytest-asyncio, in strict and auto mode
alike (issue 17, item 6): marked tests, ``pytest_asyncio.fixture`` async fixtures, and
the sync fixture used from async and sync tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx2
import pytest
import pytest_asyncio
import sniffio

from sse_toolcalls import DIALECTS, aiter_tool_calls, iter_tool_calls
from sse_toolcalls.runtime import Agent, ProviderClient, ToolRegistry, client_for
from sse_toolcalls.tooling.simulator import ExpectedResult, ScriptedCall, Simulator, Turn

# Strict mode runs only marked tests; in auto mode the mark changes nothing.
pytestmark = pytest.mark.asyncio

LOOKUP = ScriptedCall(name="lookup", args={"key": "height"})


def registry() -> ToolRegistry:
    tools = ToolRegistry()

    @tools.register
    async def lookup(key: str) -> str:
        """Look a value up."""
        await asyncio.sleep(0)
        return {"height": "170 cm"}[key]

    return tools


@pytest_asyncio.fixture(params=DIALECTS)
async def client(
    request: pytest.FixtureRequest, simulator: Simulator
) -> AsyncIterator[ProviderClient]:
    async with client_for(
        request.param,
        model="sim-model-1",
        api_key="test-key",
        base_url=simulator.base_url_for(request.param),
        idle_timeout=5.0,
    ) as made:
        yield made


async def test_an_agent_runs_against_the_simulator(
    simulator: Simulator, client: ProviderClient
) -> None:
    assert sniffio.current_async_library() == "asyncio"
    simulator.play(
        [
            Turn(calls=(LOOKUP,)),
            Turn(
                text="You are 170 cm.",
                expect_results=(ExpectedResult(call_position=0, contains="170"),),
            ),
        ]
    )
    reply = await asyncio.wait_for(Agent(client, registry()).run("How tall am I?"), 30)
    assert reply.text == "You are 170 cm." and not reply.is_fallback
    assert [r.outcome for r in reply.reports] == ["ok"]
    simulator.assert_no_problems()


async def test_the_edge_reads_a_stream_on_this_loop(simulator: Simulator) -> None:
    simulator.play([Turn(calls=(LOOKUP,))])
    async with httpx2.AsyncClient() as http:
        url = simulator.base_url_for("openai_chat") + "/chat/completions"
        async with http.stream("POST", url, json={"stream": True, "messages": []}) as response:
            calls = [call async for call in aiter_tool_calls(response, "openai_chat")]
    assert [(c.name, c.args) for c in calls] == [("lookup", {"key": "height"})]


async def test_the_simulator_is_an_async_context_manager_too() -> None:
    async with Simulator([Turn(text="hi")]) as sim:
        async with httpx2.AsyncClient() as http:
            url = sim.base_url_for("anthropic") + "/v1/messages"
            async with http.stream("POST", url, json={"stream": True, "messages": []}) as response:
                assert response.status_code == 200
                assert [c async for c in aiter_tool_calls(response, "anthropic")] == []
        sim.assert_no_problems()


@pytest.mark.filterwarnings("ignore::pytest.PytestWarning")  # a sync test under the module mark
def test_the_fixture_serves_sync_tests_as_well(simulator: Simulator) -> None:
    simulator.play([Turn(calls=(LOOKUP,))])
    with httpx2.Client() as http:
        url = simulator.base_url_for("openai_chat") + "/chat/completions"
        with http.stream("POST", url, json={"stream": True, "messages": []}) as response:
            assert [c.call_id for c in iter_tool_calls(response, "openai_chat")] != []
