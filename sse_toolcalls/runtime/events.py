"""What :meth:`~.agent.Agent.run_stream` yields: the run as it happens, for a live UI.

One pipeline makes these events and :meth:`~.agent.Agent.run` consumes the same one (it
keeps only the last, :class:`RunFinished`), so the streamed run and the plain run are one
code path with one set of safety rules. The text and call events of a turn are the
core's own (:class:`~sse_toolcalls.calls.TextDelta`, :class:`~sse_toolcalls.calls.
ToolCallStarted`...); the others are the runtime's, defined here. Each is small and
frozen (STYLE 2).

Order within a run: ``RequestStarted``, then the turn's text, reasoning and call
events; if the request fails and is retried, ``RetryScheduled`` says that what that
attempt showed is void, and a new ``RequestStarted`` follows. After a turn with calls:
``ToolCallRefused`` for each call the policy denied, ``ApprovalRequested`` when some
call waits for a person (the run then ends, paused), else one ``ToolCallResult`` per
call, in call order, once the turn's dispatch is over. ``FallbackShown`` precedes the
final ``RunFinished`` of a run that ends on a fallback. ``RunFinished`` is always last.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._faces import publish

# At run time, not under TYPE_CHECKING: the root adopts these classes, and
# typing.get_type_hints must resolve their fields.
from ..calls import (
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallCompleted,
    ToolCallStarted,
    ToolResult,
)
from .approval import ApprovalState
from .diagnostics import Diagnostic
from .fallback import FallbackReason
from .reply import AgentReply
from .report import CallOutcome, CallReport

__all__ = [
    "AgentEvent",
    "ApprovalRequested",
    "FallbackShown",
    "RequestStarted",
    "RetryScheduled",
    "RunFinished",
    "ToolArgumentsPreview",
    "ToolCallRefused",
    "ToolCallResult",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestStarted:
    """A request goes to the provider."""

    step: int
    """The assistant turn it asks for, from 1."""

    attempt: int
    """The attempt at that turn, from 1 (above 1: a retry)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolArgumentsPreview:
    """A fragment of a call's argument text, with the arguments parsed so far.

    For display only, never for execution: the call runs on the arguments its dialect
    parsed strictly, in :class:`~sse_toolcalls.calls.ToolCallCompleted`.
    """

    index: int
    """Position of the call in its turn."""

    name: str
    """The function name, as far as it is known."""

    delta: str
    """The new argument text."""

    arguments: Any
    """The arguments parsed so far (:class:`~.partial_json.PartialJSON`, best effort):
    the *live* value, grown in place by later fragments (copy it to keep a snapshot);
    ``None`` before the first ``{`` or when the fragments are not a JSON text (Gemini's
    ``partialArgs`` paths)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallRefused:
    """The approval policy denied a call before anything ran; the model reads why."""

    call: ToolCall
    """The call."""

    reason: str
    """The policy's reason."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallResult:
    """A call's result, going back to the model under the call's id."""

    call: ToolCall
    """The call answered."""

    result: ToolResult
    """The result sent back."""

    outcome: CallOutcome
    """How the call ended (``ok``, ``refused``, ``replayed``...)."""

    report: CallReport
    """The whole report (runs, idempotency key, diagnostics)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryScheduled:
    """A request failed and will be sent again: what its attempt showed is void."""

    attempt: int
    """The attempt that failed, from 1."""

    delay: float
    """Seconds waited before the next attempt."""

    diagnostic: Diagnostic
    """What failed, for developers."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FallbackShown:
    """The run ends on a pre-written message instead of the model's answer."""

    reason: FallbackReason
    """Why."""

    text: str
    """The message for the user, in the run's language."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequested:
    """Calls wait for a person's approval: the run is paused; nothing of the turn ran.

    Go on with :meth:`~.agent.Agent.resume` (or ``resume_stream``) and ``state``.
    """

    calls: tuple[ToolCall, ...]
    """The calls waiting."""

    state: ApprovalState
    """What resuming needs."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished:
    """The run is over: the reply, exactly as :meth:`~.agent.Agent.run` returns it."""

    reply: AgentReply
    """The reply."""


AgentEvent = (
    RequestStarted
    | TextDelta
    | ReasoningDelta
    | ToolCallStarted
    | ToolArgumentsPreview
    | ToolCallCompleted
    | ToolCallRefused
    | ToolCallResult
    | RetryScheduled
    | FallbackShown
    | ApprovalRequested
    | RunFinished
)
"""Anything :meth:`~.agent.Agent.run_stream` yields."""

# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
