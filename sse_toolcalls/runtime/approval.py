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

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

# At run time, not under TYPE_CHECKING: the root adopts these classes, and
# typing.get_type_hints must resolve their fields.
from ..calls import ToolCall
from ..conversation import Message
from ..tools.registry import Tool
from .diagnostics import Diagnostic
from .dispatch import CallReport
from .usage import Usage

__all__ = [
    "ApprovalContext",
    "ApprovalPolicy",
    "ApprovalState",
    "Decision",
    "Deny",
    "approval_id",
    "approval_ids",
    "pending_ids",
]


def approval_id(call: ToolCall) -> str:
    """How :meth:`~.agent.Agent.resume` names a pending call: its ``call_id``, or
    ``"#<index>"`` for a provider that sent none. Where two calls of one turn share
    it, each is named by :func:`approval_ids` instead."""
    return call.call_id if call.call_id else f"#{call.index}"


def approval_ids(calls: Sequence[ToolCall]) -> list[str]:
    """The approval id of each call of one turn, unique within the turn.

    A call keeps :func:`approval_id` when no other call of the turn has it. Calls that
    share one (a proxy that reuses an id for parallel calls) are named
    ``"<approval_id>#<position in the turn>"``: a person's answer about one of them
    must never reach the other, so the bare shared id names neither. Should that
    spelling meet another call's own id, every call is named with its position.
    """
    bases = [approval_id(call) for call in calls]
    counts = Counter(bases)
    ids = [base if counts[base] == 1 else f"{base}#{n}" for n, base in enumerate(bases)]
    if len(set(ids)) != len(ids):
        # Each id now ends in "#" and its own position, which holds no "#": all differ.
        ids = [f"{base}#{n}" for n, base in enumerate(bases)]
    return ids


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
    """``(approval id, reason)`` of the calls the policy denied (ids of
    :func:`approval_ids`)."""
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
    usage: Usage = field(default_factory=Usage)
    """Token usage summed over the turns so far (the reply's totals go on from it)."""
    provider_retries: int = 0
    """Requests re-sent after a failure so far."""
    elapsed: float = 0.0
    """Seconds the run took before it paused (the person's time is not counted)."""


def pending_ids(state: ApprovalState) -> list[str]:
    """The approval ids of ``state.pending``, in order: the names
    :meth:`~.agent.Agent.resume` takes (each call's :func:`approval_id` unless two calls
    of the paused turn share it; see :func:`approval_ids`)."""
    ids = approval_ids(state.calls)
    out: list[str] = []
    waiting = iter(state.pending)
    current = next(waiting, None)
    for call, name in zip(state.calls, ids, strict=True):
        # The pending calls are the turn's calls in order, less the allowed and denied.
        if current is not None and call == current:
            out.append(name)
            current = next(waiting, None)
    return out
