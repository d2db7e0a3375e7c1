"""What happened to one call of a turn: :class:`CallReport` and its :data:`CallOutcome`.

A module of its own because the dispatcher makes reports, and the approvals, the events,
the reply and tracing read them: each of those imports this, none of them the
dispatcher.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .._faces import publish

# At run time, not under TYPE_CHECKING: the face adopts this class, and
# typing.get_type_hints must resolve its fields.
from ..calls import ToolCall, ToolResult
from .diagnostics import Diagnostic

__all__ = ["CallOutcome", "CallReport"]

CallOutcome = Literal[
    "ok",
    "refused",
    "failed",
    "timeout",
    "unavailable",
    "replayed",
    "unconfirmed",
    "ledger_error",
    "over_limit",
    "retry",
    "declined",
]
"""How a call ended: ``ok``; ``refused`` (unknown tool or invalid arguments, nothing
ran); ``failed`` / ``timeout`` (the handler raised or overran); ``unavailable`` (open
circuit, nothing ran); ``replayed`` (a write already done: its recorded result, nothing
ran); ``unconfirmed`` (a write that started earlier and was never confirmed: not
repeated); ``ledger_error`` (a write whose key could not be reserved: not run);
``over_limit`` (its turn asked for more than ``max_calls_per_turn`` calls: nothing of the
turn ran); ``retry`` (the handler raised :class:`~sse_toolcalls.runtime.errors.ToolRetry`: its
reason went to the model); ``declined`` (the approval policy denied it, or a person did:
nothing ran; set by the :class:`~.agent.Agent`, which decides before dispatch, and by the
dispatcher for a ``needs_approval`` tool's call handed in without its approval)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CallReport:
    """What happened to one call of the turn."""

    call: ToolCall
    """The call, as the provider sent it."""

    result: ToolResult
    """Its result (ok or error), addressed to ``call``."""

    outcome: CallOutcome
    """How it ended."""

    runs: int
    """How many times its handler was started (0 when nothing ran)."""

    key: str | None = None
    """The idempotency key, for writes that passed validation."""

    diagnostics: tuple[Diagnostic, ...] = ()
    """What went wrong, for developers."""


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
