"""Run one call of a sandboxed handler in a confined child process.

One entry point, :func:`run_in_sandbox`, on asyncio and trio (anyio). The backend is
the first of ``backends.BACKENDS`` that works (bubblewrap, else Landlock; rlimits in
both), else nothing: then the call is refused (fail closed) unless the caller allows
running it unsandboxed. See ``_child.py`` for the child's side and docs/design.md for the
threat model.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.abc

from ...errors import UsageError
from ..errors import SandboxUnavailableError, ToolErrorReply, ToolRetry
from . import _cgroup, _exchange, _processes, backends
from ._exchange import MAX_RESULT_BYTES
from .backends import UNSANDBOXED, SandboxBackend
from .declaration import HandlerRef, Sandbox, handler_ref
from .results import SandboxResult, Violation, ViolationKind

if TYPE_CHECKING:
    from .warm import WarmPool

__all__ = [
    "BACKEND_ENV",
    "Backend",
    "MAX_RESULT_BYTES",
    "available_backends",
    "run_in_sandbox",
]

Backend = Literal["auto", "bwrap", "landlock", "none"]
"""A backend to ask for: ``"auto"`` takes the best that works here; ``"none"`` pretends
none works (to test the fail-closed path, or to run unsandboxed on purpose). The names
between are those of ``backends.BACKENDS`` (a test checks that they agree)."""

BACKEND_ENV = "SSE_TOOLCALLS_SANDBOX_BACKEND"
"""Environment variable read when no backend is passed (one of :data:`Backend`)."""

_STDERR_TAIL = 4000
"""Characters of the child's stderr kept for diagnostics."""


# --------------------------------------------------------------------------------------
# What works on this machine.


def available_backends(sandbox: Sandbox | None = None) -> tuple[str, ...]:
    """The backends that can enforce ``sandbox`` here, best first (may be empty)."""
    declared = sandbox or Sandbox()
    return tuple(
        backend.name
        for backend in backends.BACKENDS
        if backends.unavailable(backend, declared) is None
    )


def _choose(sandbox: Sandbox, backend: str | None, allow_unsandboxed: bool) -> SandboxBackend:
    wanted = backend if backend is not None else os.environ.get(BACKEND_ENV, "auto") or "auto"
    names = tuple(known.name for known in backends.BACKENDS)
    if wanted not in ("auto", *names, "none"):
        raise UsageError(
            f"sandbox backend {wanted!r}: expected one of {', '.join(('auto', *names, 'none'))}"
        )
    candidates: tuple[SandboxBackend, ...]
    if wanted == "auto":
        candidates = backends.BACKENDS
    elif wanted == "none":
        candidates = ()
    else:
        candidates = (backends.by_name(wanted),)
    reasons = []
    for candidate in candidates:
        reason = backends.unavailable(candidate, sandbox)
        if reason is None:
            return candidate
        reasons.append(reason)
    if allow_unsandboxed:
        return UNSANDBOXED
    why = "; ".join(reasons) or f"backend {wanted!r} was asked for"
    raise SandboxUnavailableError(
        f"no sandbox can enforce this tool's declaration here ({why}); install bubblewrap, "
        "or pass allow_unsandboxed=True to run it without one",
        reasons=tuple(reasons),
    )


# --------------------------------------------------------------------------------------
# One call.


async def _drain(stream: anyio.abc.ByteReceiveStream, into: bytearray, limit: int) -> None:
    async for chunk in stream:
        if len(into) <= limit:
            into += chunk


async def _drain_tail(stream: anyio.abc.ByteReceiveStream, into: bytearray) -> None:
    async for chunk in stream:
        into += chunk
        del into[: max(0, len(into) - _STDERR_TAIL)]


async def run_in_sandbox(
    sandbox: Sandbox,
    handler: Callable[..., Any] | HandlerRef,
    arguments: Mapping[str, Any],
    *,
    allow_unsandboxed: bool = False,
    backend: Backend | None = None,
    pool: WarmPool | None = None,
) -> SandboxResult:
    """Run ``handler(**arguments)`` in a fresh child confined to ``sandbox``.

    The child gets an empty working directory of its own (removed after), only the
    declared environment variables, and a view of the filesystem with only the declared
    paths (plus, read-only, what its interpreter needs to start). A violation is returned,
    not raised, so that it can go back to the model as the call's error result.

    Args:
        sandbox: The tool's declaration.
        handler: A module-level function, or a :class:`HandlerRef` to one.
        arguments: The call's arguments (JSON values).
        allow_unsandboxed: Run in a plain child (rlimits and the timeout only) where no
            backend can enforce the declaration, instead of refusing.
        backend: Which backend to use; ``None`` reads :data:`BACKEND_ENV`, else ``"auto"``.
        pool: Run the call on a warm worker of this pool (a fork of a zygote that has the
            handler imported, in the same confinement) where it can; else, and without a
            pool, in a cold child. Unsandboxed calls always run cold.

    Returns:
        The handler's value, the violation that stopped it, or its answer for the model
        (``SandboxResult.answer``: the ``ToolRetry`` or ``ToolErrorReply`` it raised).

    Raises:
        SandboxUnavailableError: No backend can enforce the declaration here (fail closed).
        SandboxDeclarationError: The handler cannot be imported by its module path.
        UsageError: An unknown backend name, or arguments that are not a mapping of names.
    """
    if not isinstance(sandbox, Sandbox):
        raise UsageError(f"expected a Sandbox declaration, got {type(sandbox).__name__}")
    if not isinstance(arguments, Mapping) or not all(isinstance(key, str) for key in arguments):
        raise UsageError("a sandboxed call's arguments must be a mapping of names to values")
    ref = handler_ref(handler)
    chosen = _choose(sandbox, backend, allow_unsandboxed)
    started = time.monotonic()
    if pool is not None:
        warm = await pool._run(sandbox, ref, dict(arguments), chosen)
        if warm is not None:
            return _result(*warm, backend=chosen.name, started=started, warm=True)
    cwd = await anyio.to_thread.run_sync(_exchange.make_workdir)
    try:
        value, violation = await _run(sandbox, ref, dict(arguments), chosen, cwd)
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(functools.partial(shutil.rmtree, cwd, True))
    return _result(value, violation, backend=chosen.name, started=started, warm=False)


def _result(
    value: Any, violation: Violation | None, *, backend: str, started: float, warm: bool
) -> SandboxResult:
    answer = value if isinstance(value, ToolRetry | ToolErrorReply) else None
    return SandboxResult(
        value=None if answer is not None else value,
        violation=violation,
        answer=answer,
        backend=backend,
        seconds=time.monotonic() - started,
        warm=warm,
    )


async def _run(
    sandbox: Sandbox,
    ref: HandlerRef,
    arguments: dict[str, Any],
    backend: SandboxBackend,
    cwd: str,
) -> tuple[Any, Violation | None]:
    prepared = await anyio.to_thread.run_sync(
        _exchange.prepare, sandbox, ref, arguments, backend, cwd
    )
    if isinstance(prepared, Violation):
        return None, prepared
    argv, payload = prepared
    out = bytearray()
    err = bytearray()
    process = await anyio.open_process(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        # Nothing of ours: the worker sets exactly the declared variables (bwrap adds
        # PWD and Python LC_CTYPE on their way, which the worker takes out again).
        env={},
        start_new_session=True,
    )
    timed_out = True
    group = None
    try:
        root = _cgroup.pids_root() if os.geteuid() == 0 else None
        if root is not None:
            overhead = backend.cgroup_overhead(warm=False)
            group = _cgroup.PidsCgroup(root, sandbox.processes + overhead)
            await anyio.to_thread.run_sync(_processes.enrol, group, process.pid)
        with anyio.move_on_after(sandbox.timeout):
            async with anyio.create_task_group() as tasks:
                assert process.stdout is not None and process.stderr is not None
                tasks.start_soon(_drain, process.stdout, out, MAX_RESULT_BYTES + 1024)
                tasks.start_soon(_drain_tail, process.stderr, err)
                assert process.stdin is not None
                try:
                    await process.stdin.send(payload)
                    await process.stdin.aclose()
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass  # the child died before reading: its status says why
                await process.wait()
            timed_out = False
    finally:
        with anyio.CancelScope(shield=True):
            pids: set[int] = set()
            if process.returncode is None:
                pids = await anyio.to_thread.run_sync(_processes.kill_tree, process.pid)
                await process.wait()
            await process.aclose()
            await anyio.to_thread.run_sync(_processes.wait_gone, pids, group)
    stderr = err.decode("utf-8", "replace")
    if timed_out:
        return None, _exchange.violation(
            ViolationKind.TIMEOUT,
            f"the tool did not finish within {sandbox.timeout:g} s and was stopped",
            stderr=stderr,
        )
    return _exchange.decode(bytes(out), process.returncode, stderr)
