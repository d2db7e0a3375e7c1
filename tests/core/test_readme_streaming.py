"""The README's streaming example runs as written, against the simulator."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from sse_toolcalls.runtime import Agent, ToolRegistry, client_for
from sse_toolcalls.tooling.simulator import ScriptedCall, Simulator, Turn

README = Path(__file__).resolve().parent.parent.parent / "README.md"

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:Async generator 'httpx\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore\\.:ResourceWarning"),
]


def _snippet() -> str:
    section = README.read_text(encoding="utf-8").split("### Streaming the run", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None
    return found.group(1)


async def test_the_streaming_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    drawn: list[tuple[int, Any]] = []
    namespace: dict[str, Any] = {
        "draw": lambda index, arguments: drawn.append((index, arguments)),
        "ask_the_user": lambda calls, state: None,
    }
    exec(compile(_snippet(), str(README), "exec"), namespace)
    registry = ToolRegistry()

    @registry.register
    def get_weather(city: str) -> str:
        """Current weather for a city."""
        return f"sunny in {city}"

    turns = [
        Turn(text="Checking. ", calls=(ScriptedCall(name="get_weather", args={"city": "Oslo"}),)),
        Turn(text="It is sunny in Oslo.", usage={"input_tokens": 9, "output_tokens": 4}),
    ]
    with Simulator(turns) as sim:
        async with client_for(
            "openai_chat", model="m", api_key="k", base_url=sim.base_url_for("openai_chat")
        ) as client:
            with anyio.fail_after(30):
                await namespace["chat"](Agent(client, registry), "Weather in Oslo?")
        sim.assert_no_problems()
    out = capsys.readouterr().out
    assert "Checking. " in out and "[get_weather: ok]" in out and "It is sunny in Oslo." in out
    assert "steps" in out and "requests" in out
    assert drawn and drawn[-1] == (0, {"city": "Oslo"})
