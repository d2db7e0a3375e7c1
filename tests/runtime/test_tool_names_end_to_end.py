"""A tool whose registry name a dialect forbids is declared under a legal name, and the
model's call under that name reaches the registry's tool, over real HTTP, every dialect."""

from __future__ import annotations

import pytest

from sse_toolcalls import DIALECTS, Dialect, ToolNameMap
from sse_toolcalls.runtime import ToolRegistry
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.tooling.simulator import Script, ScriptedCall, Simulator, Turn

pytestmark = pytest.mark.anyio

REGISTRY_NAME = "files.read all"  # a dot and a space: illegal in every dialect


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_an_illegal_tool_name_goes_out_legal_and_comes_back_home(dialect: Dialect) -> None:
    wire_name = ToolNameMap(dialect, [REGISTRY_NAME]).to_wire(REGISTRY_NAME)
    assert wire_name != REGISTRY_NAME
    reads: list[str] = []
    registry = ToolRegistry()

    def read_all(path: str) -> str:
        reads.append(path)
        return "hello"

    registry.register(read_all, name=REGISTRY_NAME, effect="read")
    script = Script(
        turns=(
            # The model only knows the declared (wire) name, so that is what it calls.
            Turn(calls=(ScriptedCall(name=wire_name, args={"path": "/tmp/a.txt"}),)),
            Turn(text="The file says hello."),
        )
    )
    async with Simulator(script) as simulator:
        client = client_for(
            dialect, model="sim-model-1", api_key="", base_url=simulator.base_url_for(dialect)
        )
        async with client:
            reply = await Agent(client, registry).run("Read /tmp/a.txt")
        declared = simulator.requests[0].body
        assert wire_name in str(declared) and REGISTRY_NAME not in str(declared)
        simulator.assert_no_problems()
    assert reads == ["/tmp/a.txt"]
    assert [c.name for c in reply.calls] == [REGISTRY_NAME]
    assert reply.text == "The file says hello." and not reply.is_fallback
