"""``sse-toolcalls demo --scenario registry``: three calls at once, one of them malformed.

The scripted model answers "weather, money and time in Lisbon" with three calls in one
turn. ``get_forecast`` asks for ``unit: "kelvin"``, outside its enum: the registry refuses
it before anything runs, and the model gets a descriptive error under that call's own id,
while ``convert_currency`` and ``get_local_time`` run at the same time (the trace says how
many handlers were running at once). The model then sends the corrected call, and answers.
The simulator checks every request: each result under its call's id, in order, and the
refusal naming the allowed values.
"""

from __future__ import annotations

import sys
import uuid
from typing import Literal, TextIO

import anyio
import orjson

from ..calls import Dialect, StreamFinished, TextDelta, ToolCallCompleted
from ..conversation import AssistantMessage, Message, ToolResultsMessage, UserMessage
from ..errors import SSEToolCallsError
from ..runtime.clients import client_for
from ..runtime.dispatch import Dispatcher
from ..runtime.tools import ToolRegistry
from .simulator import ExpectedResult, Script, ScriptedCall, Simulator, Turn

__all__ = ["QUESTION", "registry_demo_registry", "registry_demo_script", "run_registry_demo"]

QUESTION = "I land in Lisbon tonight: the weather, 200 USD in euros, and the local time?"

_WORK_SECONDS = 0.05
"""How long each handler pretends to work: long enough that calls run one after the other
would never overlap, so the "at once" count shows that they ran in parallel."""


class _Overlap:
    """Counts the handlers running at once (the demo's evidence of parallel runs)."""

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0

    async def work(self) -> None:
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            await anyio.sleep(_WORK_SECONDS)
        finally:
            self.running -= 1


def registry_demo_registry(overlap: _Overlap | None = None) -> ToolRegistry:
    """The scenario's three tools (descriptions clean under ``sse-toolcalls catalogue``)."""
    overlap = overlap or _Overlap()
    registry = ToolRegistry()

    @registry.register(effect="read")
    async def get_forecast(city: str, unit: Literal["celsius", "fahrenheit"]) -> str:
        """Get tonight's weather forecast for a city. Use it when the user asks about the
        weather somewhere.

        Args:
            city: The city, such as "Lisbon".
            unit: The temperature unit of the answer.
        """
        await overlap.work()
        return "clear, 18 °C" if unit == "celsius" else "clear, 64 °F"

    @registry.register(effect="read")
    async def convert_currency(
        amount: float, source: Literal["USD", "EUR"], target: Literal["USD", "EUR"]
    ) -> str:
        """Convert an amount of money at today's rate. Use it when the user asks what a sum
        is worth in another currency.

        Args:
            amount: How much money, in the source currency.
            source: The currency of the amount.
            target: The currency to convert to.
        """
        await overlap.work()
        rate = 0.92 if (source, target) == ("USD", "EUR") else 1.0
        return f"{amount * rate:.2f} {target}"

    @registry.register(effect="read")
    async def get_local_time(city: str) -> str:
        """Get the current local time in a city. Use it when the user asks what time it is
        somewhere.

        Args:
            city: The city, such as "Lisbon".
        """
        await overlap.work()
        return "21:40"

    return registry


def registry_demo_script() -> Script:
    """The simulator's side: three calls (one malformed), the corrected one, the answer.

    Every call has an id, in every dialect (Gemini's too: its newer models send one), so
    that the trace shows each result going back under its own call's id."""
    return Script(
        turns=(
            Turn(
                text="Checking all three.",
                calls=(
                    ScriptedCall(
                        name="get_forecast",
                        args={"city": "Lisbon", "unit": "kelvin"},
                        call_id="call_forecast",
                    ),
                    ScriptedCall(
                        name="convert_currency",
                        args={"amount": 200, "source": "USD", "target": "EUR"},
                        call_id="call_convert",
                    ),
                    ScriptedCall(
                        name="get_local_time", args={"city": "Lisbon"}, call_id="call_time"
                    ),
                ),
                fragment_size=8,
            ),
            Turn(
                text="Celsius, then.",
                calls=(
                    ScriptedCall(
                        name="get_forecast",
                        args={"city": "Lisbon", "unit": "celsius"},
                        call_id="call_forecast_2",
                    ),
                ),
                fragment_size=8,
                # What the model was told about its three calls, each under its own id.
                expect_results=(
                    ExpectedResult(
                        call_position=0, contains="must be one of 'celsius'", is_error=True
                    ),
                    ExpectedResult(call_position=1, contains="184.00 EUR", is_error=False),
                    ExpectedResult(call_position=2, contains="21:40", is_error=False),
                ),
            ),
            Turn(
                text="Lisbon tonight: clear, 18 °C; 200 USD is 184.00 EUR; it is 21:40 there.",
                fragment_size=8,
                expect_results=(ExpectedResult(call_position=0, contains="18 °C"),),
            ),
        )
    )


async def run_registry_demo_async(
    *, dialect: Dialect, delay: float = 0.0, out: TextIO | None = None
) -> int:
    """Run the scenario; print the trace to ``out``; return the exit status."""
    out = out or sys.stdout
    overlap = _Overlap()
    registry = registry_demo_registry(overlap)
    dispatcher = Dispatcher(registry)

    def show(text: str) -> None:
        out.write(text)
        out.flush()

    async with Simulator(registry_demo_script()) as simulator:
        show(f"sse-toolcalls demo · registry · {dialect} · simulator at {simulator.base_url}\n\n")
        show(f"You: {QUESTION}\n")
        client = client_for(
            dialect, model="sim-model-1", api_key="", base_url=simulator.base_url_for(dialect)
        )
        messages: list[Message] = [UserMessage(text=QUESTION)]
        try:
            async with client:
                request_id = uuid.uuid4().hex
                for _ in range(4):
                    finished = None
                    show("Assistant: ")
                    async for event in client.stream_events(messages, registry.specs()):
                        if delay:
                            await anyio.sleep(delay)
                        if isinstance(event, TextDelta):
                            show(event.text)
                        elif isinstance(event, ToolCallCompleted):
                            call = event.call
                            show(
                                f"\n  → call #{call.index} {call.name}({call.raw_arguments})"
                                f" · id {call.call_id}"
                            )
                        elif isinstance(event, StreamFinished):
                            finished = event
                    show("\n")
                    if finished is None or not finished.calls:
                        break
                    messages.append(AssistantMessage(text=finished.text, calls=finished.calls))
                    overlap.peak = 0
                    reports = await dispatcher.dispatch(finished.calls, request_id=request_id)
                    ran = [r.call.name for r in reports if r.runs]
                    for report in reports:
                        result = report.result
                        mark = "✗ refused" if report.outcome == "refused" else "✓ ran"
                        show(f"  {mark} #{report.call.index} {report.call.name}")
                        show(f" · id {report.call.call_id}: {_content_text(result.content)}\n")
                    if len(ran) > 1:
                        show(f"  ({', '.join(ran)} ran in parallel: {overlap.peak} at once)\n")
                    messages.append(ToolResultsMessage(results=tuple(r.result for r in reports)))
        except SSEToolCallsError as exc:
            sys.stderr.write(f"diagnostics: {exc!r}\n")
            return 1
        if simulator.problems:
            sys.stderr.write(f"the simulator saw problems: {simulator.problems}\n")
            return 1
        show("\nDone: the malformed call was refused under its own id, corrected, and run.\n")
    return 0


def _content_text(content: object) -> str:
    """A result's content as one line: the error's problems, or the value."""
    if isinstance(content, dict) and isinstance(content.get("problems"), list):
        return "; ".join(
            f"{p.get('path')} {p.get('message')}"
            for p in content["problems"]
            if isinstance(p, dict)
        )
    if isinstance(content, str):
        return content
    return orjson.dumps(content).decode()


def run_registry_demo(*, dialect: Dialect, delay: float = 0.0) -> int:
    """Run the scenario on asyncio; return the exit status."""
    return anyio.run(lambda: run_registry_demo_async(dialect=dialect, delay=delay))
