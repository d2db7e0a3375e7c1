"""``sse-toolcalls demo``: one real turn against the built-in simulator, shown live.

The simulator listens on a loopback port and speaks the chosen dialect's exact wire
format; the demo asks "What are my height and weight?" with one tool,
``lookup_demo_value(key)``. It shows the text as it streams, each call's arguments as they
grow, each call completing, each result going back under its call's id, and the answer.
"""

from __future__ import annotations

import sys
import uuid
from dataclasses import dataclass
from typing import Literal, TextIO

import anyio

from .calls import (
    StreamFinished,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from .conversation import AssistantMessage, Message, ToolResultsMessage, UserMessage
from .errors import SSEToolCallsError
from .runtime.clients import client_for
from .runtime.dispatch import Dispatcher
from .runtime.fallback import fallback_message
from .simulator import Script, ScriptedCall, Simulator, Turn
from .tools import ToolRegistry


@dataclass(frozen=True, slots=True, kw_only=True)
class _Words:
    question: str
    first_text: str
    answer: str
    you: str
    assistant: str
    calling: str
    complete: str
    result: str
    done: str
    height: str
    weight: str
    no_id: str


_WORDS = {
    "en": _Words(
        question="What are my height and weight?",
        first_text="Let me look both up.",
        answer="You are 170 cm tall and weigh 70 kg.",
        you="You",
        assistant="Assistant",
        calling="call",
        complete="complete",
        result="result sent back for",
        done="Done: {calls} calls, each result sent back to the call it answers.",
        height="170 cm",
        weight="70 kg",
        no_id="no id: answered by name, in call order",
    ),
    "pt-BR": _Words(
        question="Qual é a minha altura e o meu peso?",
        first_text="Vou consultar os dois.",
        answer="Você tem 170 cm de altura e pesa 70 kg.",
        you="Você",
        assistant="Assistente",
        calling="chamada",
        complete="completa",
        result="resultado devolvido para",
        done="Pronto: {calls} chamadas, cada resultado devolvido à chamada que responde.",
        height="170 cm",
        weight="70 kg",
        no_id="sem id: respondida pelo nome, na ordem das chamadas",
    ),
}


def demo_script(lang: str = "en") -> Script:
    """The simulator's side of the demo, in the user's language."""
    words = _WORDS[lang]
    return Script(
        turns=(
            Turn(
                text=words.first_text,
                calls=(
                    ScriptedCall(name="lookup_demo_value", args={"key": "height"}),
                    ScriptedCall(name="lookup_demo_value", args={"key": "weight"}),
                ),
                fragment_size=4,
            ),
            Turn(text=words.answer, fragment_size=4),
        )
    )


def demo_registry(lang: str = "en") -> ToolRegistry:
    """The demo's one tool."""
    words = _WORDS[lang]
    registry = ToolRegistry()

    @registry.register(effect="read")
    def lookup_demo_value(key: Literal["height", "weight"]) -> str:
        """Look up one of the user's stored measurements.

        Args:
            key: Which measurement to read.
        """
        return words.height if key == "height" else words.weight

    return registry


async def run_demo_async(
    *, dialect: str, lang: str = "en", delay: float = 0.0, out: TextIO | None = None
) -> int:
    """Run the demo; print what happens to ``out``; return the exit status."""
    out = out or sys.stdout
    words = _WORDS[lang]
    registry = demo_registry(lang)
    # The demo streams each turn itself (to show it live) and runs the calls the way the
    # Agent does, through the one dispatcher.
    dispatcher = Dispatcher(registry)

    def show(text: str) -> None:
        out.write(text)
        out.flush()

    async with Simulator(demo_script(lang)) as simulator:
        show(f"sse-toolcalls demo · {dialect} · simulator at {simulator.base_url}\n\n")
        show(f"{words.you}: {words.question}\n")
        client = client_for(
            dialect, model="sim-model-1", api_key="", base_url=simulator.base_url_for(dialect)
        )
        messages: list[Message] = [UserMessage(text=words.question)]
        calls_made = 0
        try:
            async with client:
                request_id = uuid.uuid4().hex  # the demo's one user message
                for _ in range(4):
                    finished = None
                    show(f"{words.assistant}: ")
                    async for event in client.stream_events(messages, registry.specs()):
                        if delay:
                            await anyio.sleep(delay)
                        if isinstance(event, TextDelta):
                            show(event.text)
                        elif isinstance(event, ToolCallStarted):
                            show(f"\n  → {words.calling} #{event.index} {event.name} ")
                        elif isinstance(event, ToolCallArgumentsDelta):
                            show(event.delta)
                        elif isinstance(event, ToolCallCompleted):
                            call = event.call
                            show(
                                f"\n  ✓ #{call.index} {words.complete}: {call.name}"
                                f"({call.raw_arguments}) · {_id_text(call.call_id, words)}"
                            )
                        elif isinstance(event, StreamFinished):
                            finished = event
                    show("\n")
                    if finished is None or not finished.calls:
                        break
                    messages.append(
                        AssistantMessage(
                            text=finished.text,
                            calls=finished.calls,
                            reasoning=finished.reasoning,
                        )
                    )
                    reports = await dispatcher.dispatch(finished.calls, request_id=request_id)
                    results = [report.result for report in reports]
                    for call, result in zip(finished.calls, results, strict=True):
                        show(
                            f"  ↩ {words.result} #{call.index} "
                            f"({_id_text(call.call_id, words)}): {result.content}\n"
                        )
                    calls_made += len(results)
                    messages.append(ToolResultsMessage(results=tuple(results)))
        except SSEToolCallsError as exc:
            # The user sees the pre-written sentence; the technical detail goes to stderr.
            show(f"\n{words.assistant}: {fallback_message('provider_unavailable', lang)}\n")
            sys.stderr.write(f"diagnostics: {exc!r}\n")
            return 1
        problems = simulator.problems
        if problems:
            sys.stderr.write(f"the simulator saw problems: {problems}\n")
            return 1
        show(f"\n{words.done.format(calls=calls_made)}\n")
    return 0


def _id_text(call_id: str | None, words: _Words) -> str:
    return f"id {call_id}" if call_id is not None else words.no_id


def run_demo(*, dialect: str, lang: Literal["en", "pt-BR"] | str = "en", delay: float = 0.0) -> int:
    """Run the demo on asyncio; return the exit status."""
    return anyio.run(lambda: run_demo_async(dialect=dialect, lang=lang, delay=delay))
