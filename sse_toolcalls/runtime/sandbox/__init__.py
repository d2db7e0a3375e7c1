"""The sandbox engine: a tool's declared surface, enforced by the kernel, one call per child.

``Sandbox`` declares what a tool may touch; :func:`run_in_sandbox` runs one call of its
handler in a fresh child process under bubblewrap (else Landlock), with rlimits, and gives
back the handler's JSON value or a structured :class:`Violation`.
"""

from .declaration import HandlerRef, Sandbox, handler_ref, parse_size
from .engine import (
    BACKEND_ENV,
    MAX_RESULT_BYTES,
    Backend,
    available_backends,
    run_in_sandbox,
)
from .results import SandboxResult, Violation, ViolationKind
from .warm import WarmPool

__all__ = [
    "BACKEND_ENV",
    "Backend",
    "HandlerRef",
    "MAX_RESULT_BYTES",
    "Sandbox",
    "SandboxResult",
    "Violation",
    "ViolationKind",
    "WarmPool",
    "available_backends",
    "handler_ref",
    "parse_size",
    "run_in_sandbox",
]
