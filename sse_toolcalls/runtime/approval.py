"""Permissions and approval: a policy decides, before a call runs, whether it may.

An :data:`ApprovalPolicy` is called once per call of a turn, before anything of the
turn runs, with an :class:`ApprovalContext` and the call; it answers:

- ``"allow"``: the call runs as usual (validation, ledger, breaker, sandbox);
- :class:`Deny` ``(reason)``: it does not run; the model reads the reason as the call's
  result (``declined``, :func:`~sse_toolcalls.tools.results.declined_result`);
- ``"ask"``: a person decides. The run pauses: :meth:`~.agent.Agent.run` returns a
  reply whose ``pending_approvals`` lists the calls waiting and whose ``state`` is an
  :class:`ApprovalState`; :meth:`~.agent.Agent.resume` goes on with the person's
  answer. ``Tool.needs_approval=True`` is the short form: such a tool's calls ask
  even when the policy allows them (a denial still wins).

Nothing of a paused turn runs before it is resumed, so a barrier or a write after the
call that waits never runs ahead of it. The state is a plain frozen value, so that a
streaming loop can hand the same object out as its approval event.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

# At run time, not under TYPE_CHECKING: the root adopts these classes, and
# typing.get_type_hints must resolve their fields.
from ..calls import ToolCall
from ..conversation import Message
from ..tools.registry import Tool
from .diagnostics import Diagnostic
from .dispatch import CallReport

__all__ = [
    "ApprovalContext",
    "ApprovalPolicy",
    "ApprovalState",
    "Decision",
    "Deny",
    "approval_id",
]


def approval_id(call: ToolCall) -> str:
    """How :meth:`~.agent.Agent.resume` names a pending call: its ``call_id``, or
    ``"#<index>"`` for a provider that sent none."""
    return call.call_id if call.call_id else f"#{call.index}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Deny:
    """The policy's refusal of one call, with the reason the model is told."""

    reason: str
    """Why the call may not run, in a sentence the model can act on."""


Decision = Literal["allow", "ask"] | Deny
"""What a policy answers for one call."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalContext:
    """What a policy knows about a call besides the call itself."""

    conversation_id: str
    """The conversation's id (the one write keys are made of)."""
    turn: int
    """The assistant turn that made the call, from 0."""
    tool: Tool | None
    """The tool called, or ``None`` when the name is unknown (the call will be refused)."""


ApprovalPolicy = Callable[[ApprovalContext, ToolCall], Decision | Awaitable[Decision]]
"""``(context, call) -> "allow" | Deny(reason) | "ask"``, sync or ``async``. A policy that
raises denies the call (fail closed); the exception goes to the diagnostics."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalState:
    """A run paused for approval: everything :meth:`~.agent.Agent.resume` needs.

    Resume it once: the agent refuses a state it has already resumed, and a write it ran
    is recorded under its idempotency key (the request id, the tool, the canonical
    arguments and the call's place in its turn), so a second resume elsewhere with the
    same ledger replays the write's recorded result instead of running it again.
    """

    token: str
    """This pause's own id (a second resume of it is refused)."""
    conversation_id: str
    """The run's conversation id (for diagnostics and tools' contexts)."""
    request_id: str
    """The id of the user request the paused turn serves: its writes' keys are made of it."""
    lang: str
    """The language of fallback messages."""
    turn: int
    """The paused turn, from 0."""
    messages: tuple[Message, ...]
    """The conversation up to and including the paused assistant turn."""
    calls: tuple[ToolCall, ...]
    """Every call of the paused turn, in call order."""
    denied: tuple[tuple[str, str], ...]
    """``(approval_id, reason)`` of the calls the policy denied."""
    pending: tuple[ToolCall, ...]
    """The calls waiting for a person's answer."""
    reports: tuple[CallReport, ...]
    """The reports of the turns before, so the final reply holds the whole run."""
    diagnostics: tuple[Diagnostic, ...]
    """The diagnostics so far."""
    refused_before: tuple[str, ...]
    """Tools whose call was refused in the turn before (the corrected-once rule)."""
    steps: int
    """Assistant turns received so far."""
    requests: int
    """Requests sent so far."""
    retries: tuple[tuple[str, int], ...] = ()
    """``(tool, count)`` of the ToolRetry answers spent so far (the per-run budget)."""
    history_length: int | None = None
    """How many of ``messages`` came from the conversation store (the rest are this
    request's exchange, saved again when the run goes on), or ``None`` when the run
    did not use the store."""
