"""What a sandboxed call gives back: the handler's JSON value, or one structured violation."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from ..._faces import publish
from ..errors import ToolErrorReply, ToolRetry

__all__ = ["SandboxResult", "Violation", "ViolationKind"]


class ViolationKind(enum.StrEnum):
    """Why a sandboxed call gave no value. Every kind is a tool fault for the breaker."""

    DENIED_PATH = "denied_path"
    """The handler touched a path it did not declare (``Violation.path`` says which)."""
    NETWORK_REFUSED = "network_refused"
    """The handler tried the network without ``network=True``."""
    MEMORY_LIMIT = "memory_limit"
    """The handler went past its ``memory`` cap."""
    CPU_LIMIT = "cpu_limit"
    """The handler used more than its ``cpu`` seconds."""
    PROCESS_LIMIT = "process_limit"
    """The handler tried to start more than its ``processes``."""
    FILE_SIZE_LIMIT = "file_size_limit"
    """The handler wrote a file past its ``file_size``."""
    TIMEOUT = "timeout"
    """The call ran past its ``timeout``; its whole process tree was killed."""
    CRASH = "crash"
    """The child died without a result (a signal, an exit, an interpreter failure)."""
    HANDLER_ERROR = "handler_error"
    """The handler raised an exception that is none of the above."""
    BAD_RESULT = "bad_result"
    """The handler returned something that is not JSON, or too large a result."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Violation:
    """One reason a call gave no value, with what a model (and a person) can act on."""

    kind: ViolationKind
    """The kind of violation."""
    message: str
    """One sentence for the model: what was refused or went wrong."""
    path: str | None = None
    """The denied path, absolute as the handler saw it (``DENIED_PATH``)."""
    address: str | None = None
    """The refused ``host:port``, when known (``NETWORK_REFUSED``)."""
    exception: str | None = None
    """The exception's type name, when the handler raised."""
    signal: int | None = None
    """The signal that ended the child, when one did."""
    stderr: str = ""
    """The end of the child's standard error (at most 4,000 characters), for diagnostics
    only: never show it to the model."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxResult:
    """The outcome of one sandboxed call: ``value``, or exactly one of ``violation`` and
    ``answer``."""

    value: Any = None
    """The handler's return value, as JSON decoded it (``None`` when there is a violation)."""
    violation: Violation | None = None
    """Why there is no value, or ``None`` when the handler returned."""
    answer: ToolRetry | ToolErrorReply | None = None
    """The handler's own answer for the model, when it raised
    :class:`~sse_toolcalls.runtime.errors.ToolRetry` or
    :class:`~sse_toolcalls.runtime.errors.ToolErrorReply`:
    the same exception (its text or content), rebuilt in this process; not a violation
    (``value`` is ``None`` then)."""
    backend: str
    """What enforced the call: the name of one of ``backends.BACKENDS`` (``"bwrap"``,
    ``"landlock"``), or ``"unsandboxed"``."""
    seconds: float
    """Wall-clock time of the call, the child's start and end included."""
    warm: bool = False
    """Whether a warm worker of a :class:`~sse_toolcalls.runtime.sandbox.WarmPool` ran the call
    (else a cold child did)."""


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
