"""What every benchmarked implementation looks like to the harness."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Call", "Impl", "MissingPeer"]

Call = tuple[str | None, str, dict[str, Any]]
"""A completed call reduced to what every implementation can report: id, name, args."""


class MissingPeer(Exception):
    """A peer package is not installed; the run says so and goes on without it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Impl:
    """One implementation of one job (framing, or bytes to complete calls)."""

    name: str
    """The label in the table."""

    kind: Literal["framer", "calls"]
    """``framer``: bytes to SSE events (W1); ``calls``: bytes to complete calls (W2, W3)."""

    role: Literal["ours", "floor", "peer"]
    """Ratios are taken against the floor and against the fastest peer."""

    dialects: tuple[str, ...]
    """The wire formats it can handle."""

    run: Callable[[str, Sequence[bytes]], Any]
    """The timed work: dialect and the chunks of one body in, native result out."""

    normalize: Callable[[Any], Any]
    """Turns the native result into comparable data (events as ``(type, data)`` pairs,
    calls as :data:`Call`); never timed."""
