"""A circuit breaker per tool: a tool that keeps failing is refused for a while.

States, per tool name:

- ``closed``: calls run. Each failure (the handler raised or timed out) adds one to a
  count of consecutive failures; a success resets it. At ``threshold`` the circuit opens.
- ``open``: calls are refused (the model gets a ``tool_unavailable`` error result) until
  ``cooldown`` seconds have passed since it opened.
- ``half_open``: after the cool-down, one call at a time is let through as a probe;
  its success closes the circuit, its failure opens it again for another cool-down.

**What counts** is evidence that the tool itself is broken, never the model's or a
user's bad input (:func:`blame`, applied by the dispatcher): refusals for invalid
arguments or unknown tools do not count, and neither does a handler rejecting its
arguments the way ordinary Python does, with ``ValueError`` or ``TypeError``; three
users' bad dates must not disable a date tool for a fourth. Timeouts, connection errors,
other ``OSError`` s (its dependency down) and any other exception (a crash) count. A tool
declares its own lines with ``faults=`` and ``transient=`` at registration.

**Scope**: the circuit's name is the dispatcher's ``breaker_scope`` of the call: the
tool name by default; a key function gives per-tool-and-tenant circuits. The clock is
injectable so tests need not wait.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .._checks import check_count, check_quantity
from .._faces import publish

if TYPE_CHECKING:
    from .tools.registry import Tool

__all__ = [
    "BAD_INPUT",
    "Blame",
    "BreakerState",
    "CircuitBreaker",
    "CircuitStatus",
    "DEFAULT_COOLDOWN",
    "DEFAULT_THRESHOLD",
    "TRANSIENT",
    "blame",
]

DEFAULT_THRESHOLD = 3
"""Consecutive failures that open a circuit: one failure is noise, three in a row mean
the tool (or what it talks to) is down, and each further call only costs the user time."""

DEFAULT_COOLDOWN = 60.0
"""Seconds a circuit stays open: long enough for a restarted dependency to come back,
short enough that one conversation can still use the tool later."""

BreakerState = Literal["closed", "open", "half_open"]
"""A circuit's state."""

Blame = Literal["input", "fault", "transient"]
"""Who a handler's exception blames: ``input`` (the arguments it was given: not counted,
not retried), ``fault`` (the tool: counted, not retried), ``transient`` (the tool, for
now: counted, and a read is retried)."""

BAD_INPUT: tuple[type[Exception], ...] = (ValueError, TypeError)
"""How ordinary Python code rejects its arguments (``date.fromisoformat("31/02")``,
``int("ten")``): by default the handler's verdict on its input, not on itself."""

TRANSIENT: tuple[type[Exception], ...] = (ConnectionError, TimeoutError)
"""Faults that may pass on their own: a dependency refusing or timing out a connection."""


def blame(tool: Tool, cause: BaseException | None, *, timed_out: bool = False) -> Blame:
    """Who the exception ``cause`` raised by ``tool``'s handler blames.

    In order: a timeout, or a type the tool declares ``transient``, or one of
    :data:`TRANSIENT`: ``transient``; a type it declares in ``faults``: ``fault``; one
    of :data:`BAD_INPUT`: ``input``; anything else (an ``OSError``, a crash, the
    executor failing): ``fault``.
    """
    if timed_out or isinstance(cause, (*tool.transient, *TRANSIENT)):
        return "transient"
    if isinstance(cause, tool.faults):
        return "fault"
    if isinstance(cause, BAD_INPUT):
        return "input"
    return "fault"


@dataclass(frozen=True, slots=True, kw_only=True)
class CircuitStatus:
    """A snapshot of one tool's circuit."""

    tool: str
    """The tool name."""

    state: BreakerState
    """``closed``, ``open`` or ``half_open``."""

    failures: int
    """Consecutive failures counted so far."""

    retry_at: float | None
    """When an open circuit lets a probe through (on the breaker's clock), else ``None``."""


@dataclass(slots=True)
class _Circuit:
    failures: int = 0
    opened_at: float | None = None
    probing: bool = False


class CircuitBreaker:
    """Circuits for every tool, created on first use.

    Use: ``allow(tool)`` before running; then ``success(tool)`` or ``failure(tool)``.
    Thread-safe (sync handlers report from worker threads in some set-ups).
    """

    def __init__(
        self,
        *,
        threshold: int = DEFAULT_THRESHOLD,
        cooldown: float = DEFAULT_COOLDOWN,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Args:
            threshold: consecutive failures that open a circuit (at least 1).
            cooldown: seconds an open circuit refuses calls (at least 0).
            clock: a monotonic clock in seconds.

        Raises:
            UsageError: a threshold that is not a whole number of at least 1, or a
                cool-down that is not a finite number of seconds of at least 0.
        """
        # A NaN cool-down would pass "< 0" and keep every opened circuit half-open at
        # once (``now - opened < nan`` is false): checked by name, as every config is.
        self.threshold = check_count("threshold", threshold, minimum=1)
        """Consecutive failures that open a circuit."""
        self.cooldown = check_quantity("cooldown", cooldown)
        """Seconds an open circuit refuses calls."""
        self._clock = clock
        self._circuits: dict[str, _Circuit] = {}
        self._lock = threading.Lock()

    def _state(self, circuit: _Circuit, now: float) -> BreakerState:
        if circuit.opened_at is None:
            return "closed"
        if now - circuit.opened_at < self.cooldown:
            return "open"
        return "half_open"

    def allow(self, tool: str) -> bool:
        """Whether a call to ``tool`` may run now. In the half-open state this takes the
        one probe slot: the caller must report ``success`` or ``failure`` (or ``release``
        if it did not run after all)."""
        with self._lock:
            circuit = self._circuits.setdefault(tool, _Circuit())
            state = self._state(circuit, self._clock())
            if state == "closed":
                return True
            if state == "open" or circuit.probing:
                return False
            circuit.probing = True
            return True

    def success(self, tool: str) -> None:
        """Report that a call to ``tool`` succeeded: its circuit closes."""
        with self._lock:
            self._circuits[tool] = _Circuit()

    def failure(self, tool: str) -> None:
        """Report that a call to ``tool`` failed: count it; open the circuit at the
        threshold, or again at once if this was the half-open probe."""
        with self._lock:
            circuit = self._circuits.setdefault(tool, _Circuit())
            now = self._clock()
            circuit.failures += 1
            if circuit.probing or circuit.failures >= self.threshold:
                circuit.opened_at = now
            circuit.probing = False

    def release(self, tool: str) -> None:
        """Give back a probe slot taken by :meth:`allow` when the call did not run."""
        with self._lock:
            circuit = self._circuits.get(tool)
            if circuit is not None:
                circuit.probing = False

    def status(self, tool: str) -> CircuitStatus:
        """The current state of ``tool``'s circuit."""
        with self._lock:
            circuit = self._circuits.get(tool) or _Circuit()
            state = self._state(circuit, self._clock())
            retry_at = (
                circuit.opened_at + self.cooldown
                if state == "open" and circuit.opened_at is not None
                else None
            )
            return CircuitStatus(
                tool=tool, state=state, failures=circuit.failures, retry_at=retry_at
            )


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
