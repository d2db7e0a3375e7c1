"""``sse-toolcalls demo``: one real turn against the built-in simulator, shown live.

The simulator listens on a loopback port and speaks the chosen dialect's exact wire
format; the demo asks "What are my height and weight?" with one tool,
``lookup_demo_value(key)``. It shows the text as it streams, each call's arguments as they
grow, each call completing, each result going back under its call's id, and the answer.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Literal, TextIO

import anyio

from ..calls import Dialect, TextDelta, ToolCallCompleted, ToolCallStarted
from ..runtime.agent import Agent
from ..runtime.clients import client_for
from ..runtime.events import (
    RequestStarted,
    RetryScheduled,
    RunFinished,
    ToolArgumentsPreview,
    ToolCallResult,
)
from ..runtime.tools import ToolRegistry
from .simulator import Script, ScriptedCall, Simulator, Turn


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
        """Look up one of the user's stored measurements. Use it when the user asks about
        their own height or weight.

        Args:
            key: Which measurement to read.
        """
        return words.height if key == "height" else words.weight

    return registry


async def run_demo_async(
    *, dialect: Dialect, lang: str = "en", delay: float = 0.0, out: TextIO | None = None
) -> int:
    """Run the demo; print what happens to ``out``; return the exit status."""
    out = out or sys.stdout
    words = _WORDS[lang]

    line_start = True

    def show(text: str) -> None:
        nonlocal line_start
        out.write(text)
        out.flush()
        if text:
            line_start = text.endswith("\n")

    async with Simulator(demo_script(lang)) as simulator:
        show(f"sse-toolcalls demo · {dialect} · simulator at {simulator.base_url}\n\n")
        show(f"{words.you}: {words.question}\n")
        client = client_for(
            dialect, model="sim-model-1", api_key="", base_url=simulator.base_url_for(dialect)
        )
        # The demo is a user of the streaming Agent: the one loop, with its safety.
        agent = Agent(client, demo_registry(lang), lang=lang)
        calls_made = 0
        reply = None
        async with client, agent.run_stream(words.question) as events:
            async for event in events:
                if delay:
                    await anyio.sleep(delay)
                if isinstance(event, RequestStarted):
                    show(f"{words.assistant}: ")
                elif isinstance(event, TextDelta):
                    show(event.text)
                elif isinstance(event, ToolCallStarted):
                    show(
                        ("" if line_start else "\n")
                        + f"  → {words.calling} #{event.index} {event.name} "
                    )
                elif isinstance(event, ToolArgumentsPreview):
                    show(event.delta)
                elif isinstance(event, ToolCallCompleted):
                    call = event.call
                    show(
                        ("" if line_start else "\n")
                        + f"  ✓ #{call.index} {words.complete}: {call.name}"
                        f"({call.raw_arguments}) · {_id_text(call.call_id, words)}\n"
                    )
                elif isinstance(event, ToolCallResult):
                    call = event.call
                    show(
                        f"  ↩ {words.result} #{call.index} "
                        f"({_id_text(call.call_id, words)}): {event.result.content}\n"
                    )
                    calls_made += 1
                elif isinstance(event, RetryScheduled):
                    show(f"\n  … {event.diagnostic.kind}: {event.delay:.1f} s\n")
                elif isinstance(event, RunFinished):
                    reply = event.reply
                    show("\n")
        if reply is None or reply.is_fallback:
            # The user saw the pre-written sentence; the technical detail goes to stderr.
            if reply is not None:
                show(f"{words.assistant}: {reply.text}\n")
                for diagnostic in reply.diagnostics:
                    sys.stderr.write(f"diagnostics: {diagnostic.kind}: {diagnostic.message}\n")
            return 1
        problems = simulator.problems
        if problems:
            sys.stderr.write(f"the simulator saw problems: {problems}\n")
            return 1
        show(f"\n{words.done.format(calls=calls_made)}\n")
    return 0


def _id_text(call_id: str | None, words: _Words) -> str:
    return f"id {call_id}" if call_id is not None else words.no_id


def run_demo(
    *, dialect: Dialect, lang: Literal["en", "pt-BR"] | str = "en", delay: float = 0.0
) -> int:
    """Run the demo on asyncio; return the exit status."""
    return anyio.run(lambda: run_demo_async(dialect=dialect, lang=lang, delay=delay))
