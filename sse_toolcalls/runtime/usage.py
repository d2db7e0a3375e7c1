"""Token usage in one shape for every dialect, and its sum over a run's turns.

Each dialect reports usage under its own names (kept raw in
:attr:`~sse_toolcalls.calls.StreamFinished.usage`); its folder says where each count is
(``DialectSpec.usage``, ``dialects/<dialect>/__init__.py``) and :func:`usage_of` reads
them into :class:`Usage`, whose counts mean the same thing whatever the provider:
``input_tokens``, ``output_tokens``, ``cache_read_tokens``, ``cache_write_tokens``
(Anthropic alone reports it) and ``reasoning_tokens``.

Input counts every prompt token, cached ones included (Anthropic reports the three
parts apart; they are added), and output counts every generated token, reasoning
included (Gemini reports thoughts apart; they are added), so that a sum over dialects
means one thing. This is what each provider bills as input and output, and what the
OpenTelemetry GenAI conventions ask of ``gen_ai.usage.input_tokens`` (all input tokens,
cached ones included) and ``gen_ai.usage.output_tokens``. A count the provider did not
report is ``None``, never a made-up 0.

This module is the one reader of a provider's counts (the dialects hold their names):
:class:`~.agent.AgentReply`'s ``usage``, the run's span and every request's span
(:mod:`.tracing`) all read them here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from .._faces import publish
from ..dialects import spec_for
from ..errors import UnknownDialectError

__all__ = ["Usage", "usage_of"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token counts (of one turn, or summed over a run's turns)."""

    input_tokens: int | None = None
    """Prompt tokens, cached ones included."""

    output_tokens: int | None = None
    """Generated tokens, reasoning included."""

    cache_read_tokens: int | None = None
    """Prompt tokens read from the provider's cache."""

    cache_write_tokens: int | None = None
    """Prompt tokens written to the provider's cache (Anthropic)."""

    reasoning_tokens: int | None = None
    """Generated tokens spent on reasoning or thinking."""

    turns: int = 0
    """Turns whose usage was reported and counted."""

    def __add__(self, other: Usage) -> Usage:
        """The sum; a count reported by neither stays ``None``."""
        if not isinstance(other, Usage):
            return NotImplemented
        values: dict[str, Any] = {}
        for f in fields(Usage):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            values[f.name] = theirs if mine is None else mine if theirs is None else mine + theirs
        return Usage(**values)


def _count(payload: Any, *path: str) -> int | None:
    for key in path:
        if not isinstance(payload, Mapping):
            return None
        payload = payload.get(key)
    # bool is an int to Python, never a token count on the wire.
    if isinstance(payload, int) and not isinstance(payload, bool) and payload >= 0:
        return payload
    return None


def _plus(*counts: int | None) -> int | None:
    known = [c for c in counts if c is not None]
    return sum(known) if known else None


def usage_of(dialect: str | None, usage: Mapping[str, Any] | None) -> Usage:
    """One turn's raw usage, as its dialect reported it, as :class:`Usage`.

    Unknown shapes and values that are not counts are left out (``None``): usage is
    reported, not trusted for anything but totals.
    """
    if not isinstance(usage, Mapping) or dialect is None:
        return Usage()
    try:
        where = spec_for(dialect).usage
    except UnknownDialectError:
        return Usage()

    def read(count: str) -> int | None:
        # A count reported in parts is their sum (Anthropic's input, Gemini's output).
        return _plus(*(_count(usage, *path) for path in where.get(count, ())))

    found = Usage(
        input_tokens=read("input_tokens"),
        output_tokens=read("output_tokens"),
        cache_read_tokens=read("cache_read_tokens"),
        cache_write_tokens=read("cache_write_tokens"),
        reasoning_tokens=read("reasoning_tokens"),
    )
    counted = any(getattr(found, f.name) is not None for f in fields(Usage) if f.name != "turns")
    return Usage(
        input_tokens=found.input_tokens,
        output_tokens=found.output_tokens,
        cache_read_tokens=found.cache_read_tokens,
        cache_write_tokens=found.cache_write_tokens,
        reasoning_tokens=found.reasoning_tokens,
        turns=1 if counted else 0,
    )


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
