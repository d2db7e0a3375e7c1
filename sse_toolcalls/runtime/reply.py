"""What a run of the :class:`~.agent.Agent` produces: :class:`AgentReply`.

A module of its own so that the run's events (:mod:`.events`) can name it at run time
(``typing.get_type_hints`` resolves their fields) without importing the loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .._faces import publish

# At run time, not under TYPE_CHECKING: the root adopts this class, and
# typing.get_type_hints must resolve its fields.
from ..calls import ToolCall, ToolResult
from ..conversation import Message
from .approval import ApprovalState
from .diagnostics import Diagnostic
from .fallback import FallbackReason
from .report import CallReport
from .usage import Usage

__all__ = ["AgentReply"]


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentReply:
    """What one run produced: always a message for the user."""

    text: str
    """What to show the user: the model's final answer, or a fallback message."""

    is_fallback: bool
    """True when ``text`` is a pre-written fallback message, not the model's."""

    reason: FallbackReason | None
    """Why the fallback was shown, or ``None``."""

    diagnostics: tuple[Diagnostic, ...]
    """Every failure handled on the way, for developers (never for the user)."""

    calls: tuple[ToolCall, ...]
    """Every call the model made that was dispatched, in order."""

    results: tuple[ToolResult, ...]
    """Their results, in the same order, each addressed to its call."""

    reports: tuple[CallReport, ...]
    """How each call went (ran, replayed, refused...), in the same order."""

    conversation: tuple[Message, ...]
    """The whole conversation, the new assistant turns and results included."""

    steps: int
    """Assistant turns received."""

    requests: int
    """Requests sent to the provider, retries included."""

    pending_approvals: tuple[ToolCall, ...] = ()
    """The calls waiting for a person's approval; when there are any, the run is paused,
    ``text`` is what the model said with them, and nothing of their turn has run."""

    state: ApprovalState | None = None
    """What :meth:`Agent.resume` needs to go on, when the run is paused."""

    usage: Usage = field(default_factory=Usage)
    """Token usage summed over the turns (of a resumed run: since its start), as far as
    the dialect reports it (:mod:`.usage`)."""

    retries: int = 0
    """Requests re-sent after a failed one (included in ``requests``)."""

    elapsed: float = 0.0
    """Seconds the run took (of a resumed run: before the pause and since, not the
    person's time in between)."""

    def __repr__(self) -> str:
        kind = f"fallback {self.reason}" if self.is_fallback else "answer"
        if self.pending_approvals:
            kind = f"paused, {len(self.pending_approvals)} call(s) waiting for approval"
        text = self.text if len(self.text) <= 60 else self.text[:57] + "..."
        return (
            f"<AgentReply {kind}: {text!r} · {self.steps} steps, {self.requests} requests, "
            f"{len(self.calls)} calls, {len(self.diagnostics)} diagnostics>"
        )


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
