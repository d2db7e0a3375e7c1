"""The agent runtime's exceptions: refusals and failures of tools, the ledger, the
conversation store, approvals and the sandbox, under the core's tree
(:class:`~sse_toolcalls.errors.SSEToolCallsError`), and the two a handler raises to
answer its call (:class:`ToolRetry`, :class:`ToolErrorReply`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .._faces import publish
from ..errors import SSEToolCallsError, UsageError

if TYPE_CHECKING:
    from ..calls import ToolCall


# --------------------------------------------------------------------------------------
# Tools: refusals and failures, each turned into an error result for the model.


class ToolError(SSEToolCallsError):
    """A call could not be run, or failed while running."""

    def __init__(self, message: str, *, call: ToolCall | None = None) -> None:
        super().__init__(message)
        self.call = call
        """The call concerned, when there is one."""


class UnknownToolError(ToolError):
    """The model asked for a tool that is not registered."""


class InvalidArgumentsError(ToolError):
    """The arguments do not satisfy the tool's schema (or were not a JSON object)."""

    def __init__(
        self,
        message: str,
        *,
        call: ToolCall | None = None,
        problems: Sequence[Any] = (),
    ) -> None:
        super().__init__(message, call=call)
        self.problems = tuple(problems)
        """Every problem found, each with the path of the offending value."""


class ToolExecutionError(ToolError):
    """The tool's handler raised."""


class ToolTimeoutError(ToolError):
    """The tool's handler ran past its timeout."""


class CircuitOpenError(ToolError):
    """The tool failed too often recently and is refused until its cool-down ends."""


class SandboxViolationError(ToolExecutionError):
    """A sandboxed call was stopped by its sandbox (a denied path, the network, a limit,
    its timeout, a crash): ``violation`` says which, for the model's error result."""

    def __init__(self, message: str, *, call: ToolCall | None = None, violation: Any) -> None:
        super().__init__(message, call=call)
        self.violation = violation
        """The :class:`~sse_toolcalls.runtime.sandbox.Violation` that stopped the call."""


class LedgerError(SSEToolCallsError):
    """The idempotency ledger could not be read or written (a locked or corrupt database
    file...). A write whose key cannot be reserved is not run."""


class ConversationStoreError(SSEToolCallsError):
    """The conversation store could not be read or written, or held a conversation that
    does not decode (a row written by something else). A run whose history cannot be
    loaded runs nothing."""


class ApprovalStateError(UsageError):
    """A paused run's state was refused on resume, before anything of it ran: it is not
    the state this application paused (edited, forged, signed with another key), or it
    was already decided (replayed, or decided on another worker), or it is too old.

    A state that went through a browser or a client and came back is untrusted input;
    see ``docs/threat-model.md``. Retrying the same state will not help: re-submit the
    user's request to pause it afresh."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason
        """Why: ``tampered`` (the state differs from the one paused, or its signature
        does not check), ``unknown`` (no pause of that token is on record and the state
        is not signed with this application's key), ``decided`` (a decision on it is
        already on record: a denial is final, an approval is used once) or ``expired``
        (paused longer ago than ``MAX_PAUSE_AGE_S``)."""


class SandboxDeclarationError(UsageError):
    """A sandbox declaration cannot be used: a size or a path that cannot be read, or a
    handler the sandbox's child cannot import by its module path (a lambda, a closure)."""


class SandboxUnavailableError(ToolError):
    """No sandbox backend can enforce a tool's declaration on this machine, and running it
    unsandboxed was not allowed: the call is refused (fail closed)."""

    def __init__(
        self, message: str, *, call: ToolCall | None = None, reasons: Sequence[str] = ()
    ) -> None:
        super().__init__(message, call=call)
        self.reasons = tuple(reasons)
        """Why each backend tried could not be used."""


class ToolRetry(Exception):
    """Raised by a *handler* to refuse its call with a reason the model can act on.

    ``raise ToolRetry("the date must be in the past")`` sends that text to the model as
    an error result under the call's id (``{"error": "tool_retry", "message": ...}``),
    so it can correct itself. It is the tool's verdict on its input: it never counts
    against the circuit breaker and a read is not re-run for it. It says the tool did
    nothing, so a write's ledger forgets the call's key: the corrected call runs, even
    with the same arguments (after the model did what the tool asked). Each tool allows the
    model ``Tool.retries`` such answers per run (``register(..., retries=...)``); past
    that, the agent answers with the ``tool_arguments`` fallback. Any other exception
    from a handler keeps the generic ``tool_failed`` text, its detail in diagnostics.
    Not part of :class:`SSEToolCallsError`'s tree: the library never raises it.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        """What the model is told."""


class ToolErrorReply(Exception):
    """Raised by a *handler* to answer its call with an error result of its own content.

    The tool ran and its answer is a failure worded for the model: an MCP server's
    ``isError`` result, an upstream API's refusal. ``raise ToolErrorReply("rate limited,
    try in a minute")`` sends ``{"error": "tool_error", "message": ...}`` (and, for
    content other than one text, the parts under ``content``) as an error result under
    the call's id; unlike any other exception, its text reaches the model whatever
    ``show_error_details`` says, because the tool wrote it for the model. It is the
    tool's answer, not evidence that the tool is broken: it never counts against the
    circuit breaker, a read is not re-run for it, and a write's ledger records it (the
    tool ran). Not part of :class:`SSEToolCallsError`'s tree: the library never raises it.
    """

    def __init__(self, content: str | list[Any] | dict[str, Any]) -> None:
        super().__init__(content)
        self.content = content
        """What the tool answered: a text, or JSON parts (``[{"type": "text", ...}]``)."""


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
