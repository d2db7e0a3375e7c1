"""The one place a tool's handler is run.

The tools layer looks tools up, checks calls and describes results, synchronously; it
never runs a handler. The dispatcher (:mod:`.dispatch`) decides *whether* and *how often*
a call runs (validation, the ledger, the breaker, retries); it runs it through
:func:`run_once`, which is the only code that starts a handler and the only place a
tool's timeout is applied.

**The seam for other backends.** *How* a handler runs is an :class:`Executor`: an async
callable from a :class:`~sse_toolcalls.runtime.tools.ValidatedCall` to the handler's return
value. :func:`run_local` (the default) runs it in this process: an ``async`` handler
awaited, a sync one in a worker thread. A sandbox backend (a child process confined to
what the tool declared) is another executor, passed as ``Dispatcher(executor=...)``;
nothing else changes. An executor must:

- return the handler's value (any value: results are made by
  :func:`~sse_toolcalls.runtime.tools.results.ok_result`, which never raises);
- raise :class:`~sse_toolcalls.runtime.errors.ToolExecutionError` (the cause chained) when the
  handler failed or could not be run, and nothing else but cancellation;
- stop its work when cancelled: the timeout is a cancellation from :func:`run_once`
  (a child process should be killed then; a worker thread cannot be, and is abandoned).

**Sandboxed tools** (``Tool.sandbox`` set) always run through :func:`run_sandboxed`,
whatever executor was passed: a declaration is a promise about where the handler runs,
and a custom executor must not be able to run it in this process by mistake. Their one
timeout is the sandbox's (the engine kills the child's whole tree at ``Sandbox.timeout``;
``Tool.timeout`` is ``None``), and a cancellation from outside kills the tree too.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.to_thread

from .._jsonsafe import safe_str
from ..errors import UsageError
from .errors import (
    SandboxDeclarationError,
    SandboxUnavailableError,
    SandboxViolationError,
    ToolExecutionError,
    ToolTimeoutError,
)

if TYPE_CHECKING:
    from .sandbox import WarmPool
    from .tools.registry import ValidatedCall

__all__ = ["Executor", "run_local", "run_once", "run_sandboxed"]


class Executor(Protocol):
    """Runs the handler of a validated call once, with no timeout of its own."""

    async def __call__(self, validated: ValidatedCall, /) -> Any:
        """Return what the handler returned.

        Raises:
            ToolExecutionError: the handler raised, or could not be run.
        """
        ...


async def run_local(validated: ValidatedCall, /) -> Any:
    """Run the handler in this process: ``async`` ones awaited, sync ones in a worker thread.

    A sync handler that returns an awaitable has it awaited too, on every backend. When
    the caller is cancelled meanwhile, the thread is abandoned (Python cannot stop it) and
    the cancellation goes on.

    Returns:
        What the handler returned.

    Raises:
        ToolExecutionError: the handler raised (the original exception is its cause),
            also a ``BaseException`` that is no cancellation, exit or interrupt of the
            event loop's thread (in a worker thread, every one).
        Whatever cancels the caller (never swallowed).
    """
    handler = validated.tool.handler
    # The handler's own lists and dicts: else a handler emptying its queue argument
    # rewrote the model's call (the assistant turn sent back, the reports, the stored
    # conversation) and the arguments a read's retry runs with.
    kwargs = {name: _own(value) for name, value in validated.kwargs.items()}
    slot = validated.tool.context_parameter
    if slot is not None:
        kwargs = {**kwargs, slot: validated.context}
    try:
        if is_async(handler):
            value = await handler(**kwargs)
        else:

            def in_thread() -> tuple[Any]:
                # Boxed: trio refuses a thread's return value that is a coroutine (it
                # takes it for an async function passed by mistake), so a sync handler
                # returning one (a decorator hiding an async function) failed on trio
                # and ran on asyncio.
                try:
                    return (handler(**kwargs),)
                except Exception:
                    raise
                except BaseException as exc:
                    # Nothing outside cancels a worker thread, so anything else that
                    # ends the handler there (SystemExit, which Python's own threads
                    # ignore; a library's BaseException) is the handler's failure. Let
                    # out of the thread, it left anyio's asyncio worker without an
                    # answer (the dispatch hung) and burst out of the task group on trio.
                    raise _Aborted(exc) from exc

            (value,) = await anyio.to_thread.run_sync(in_thread, abandon_on_cancel=True)
            if inspect.isawaitable(value):
                value = await value
    except _Aborted as aborted:
        raise _failed(validated, aborted.exc) from aborted.exc
    except Exception as exc:
        raise _failed(validated, exc) from exc
    except BaseException as exc:
        if _is_control_flow(exc) and not _stray_cancellation(exc):
            raise
        raise _failed(validated, exc) from exc
    return value


def _stray_cancellation(exc: BaseException) -> bool:
    """An asyncio ``CancelledError`` while the handler's task has no cancellation
    pending: the handler awaited a future or task someone else cancelled. Taken for
    ours, it ended the dispatch's task silently and the call lost its report. Under
    anyio's asyncio backend every cancel scope cancels by ``Task.cancel``, so a real
    cancellation always shows in ``Task.cancelling()``; trio's ``Cancelled`` is only
    ever raised by trio itself."""
    import asyncio

    if not isinstance(exc, asyncio.CancelledError):
        return False
    try:
        task = asyncio.current_task()
    except RuntimeError:  # not on an asyncio loop (trio)
        return False
    return task is not None and task.cancelling() == 0


def _own(value: Any) -> Any:
    """``value`` with each JSON list and dict copied, at every depth (arguments are at
    most ``MAX_VALIDATED_ARGUMENTS_DEPTH`` deep); anything else, decoded objects
    included, as it is."""
    if type(value) is dict:
        return {key: _own(item) for key, item in value.items()}
    if type(value) is list:
        return [_own(item) for item in value]
    return value


class _Aborted(Exception):
    """Carries a handler's BaseException out of its worker thread as an Exception."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(exc)
        self.exc = exc


def _is_control_flow(exc: BaseException) -> bool:
    """Exceptions that are not a handler's to fail with: cancellation (ours or an outer
    scope's), Ctrl-C and exit on the event loop's thread, a generator closing, and any
    group (which may hold one of those)."""
    control = (KeyboardInterrupt, SystemExit, GeneratorExit, BaseExceptionGroup)
    return isinstance(exc, (*control, anyio.get_cancelled_exc_class()))


def _failed(validated: ValidatedCall, exc: BaseException) -> ToolExecutionError:
    return ToolExecutionError(
        f"{validated.tool.name} raised {type(exc).__name__}: {safe_str(exc)}",
        call=validated.call,
    )


async def run_sandboxed(validated: ValidatedCall, /, *, pool: WarmPool | None = None) -> Any:
    """Run a sandboxed tool's handler in a child confined to its ``Tool.sandbox``.

    With a ``pool``, on a warm worker of the tool where it can (the same confinement, a
    fork of a zygote that has the handler imported); else in a cold child.

    Returns:
        What the handler returned, as JSON decoded it.

    Raises:
        ToolTimeoutError: it overran ``Sandbox.timeout`` (the tree was killed; the
            violation is the cause), answered as any timeout (a write's own text).
        SandboxViolationError: the sandbox stopped the call otherwise (its
            ``violation`` says why: a denied path, the network, a limit, a crash, the
            handler's own exception).
        ToolExecutionError: the sandbox could not be started (no backend any more, a
            handler no longer importable), the cause chained; or the handler raised
            ``ToolRetry`` or ``ToolErrorReply`` (that exception the cause, as unsandboxed).
        UsageError: the tool has no sandbox.
    """
    from .sandbox import run_in_sandbox  # lazy: the engine is only needed when used

    tool = validated.tool
    if tool.sandbox is None:
        raise UsageError(f"{tool.name} has no sandbox declaration")
    try:
        outcome = await run_in_sandbox(
            tool.sandbox,
            tool.handler,
            validated.arguments,
            allow_unsandboxed=tool.allow_unsandboxed,
            pool=pool,
        )
    except (SandboxUnavailableError, SandboxDeclarationError) as exc:
        # Checked at registration; the machine changed since (bwrap removed, a module
        # edited): the call is refused, never run unconfined.
        raise ToolExecutionError(
            f"{tool.name} could not be sandboxed: {safe_str(exc)}", call=validated.call
        ) from exc
    violation = outcome.violation
    if violation is not None and violation.kind == "timeout":
        # The same overrun as an in-process timeout, answered the same way: a read "may
        # be retried", a write "may still have happened, do not repeat it".
        stopped = SandboxViolationError(violation.message, call=validated.call, violation=violation)
        raise ToolTimeoutError(
            f"{tool.name} did not finish within {tool.sandbox.timeout:g} s (its sandbox's "
            "timeout); its process tree was killed",
            call=validated.call,
        ) from stopped
    if violation is not None:
        raise SandboxViolationError(
            f"{tool.name} was stopped by its sandbox ({violation.kind}): {violation.message}",
            call=validated.call,
            violation=violation,
        )
    if outcome.answer is not None:
        # The handler's ToolRetry or ToolErrorReply, chained as run_local chains it, so
        # the dispatcher answers the model exactly as it would unsandboxed.
        answer = outcome.answer
        raise ToolExecutionError(
            f"{tool.name} raised {type(answer).__name__}: {safe_str(answer)}",
            call=validated.call,
        ) from answer
    return outcome.value


async def run_once(
    validated: ValidatedCall, executor: Executor = run_local, *, pool: WarmPool | None = None
) -> Any:
    """Run a validated call once through ``executor``, within its tool's timeout; a
    sandboxed tool through :func:`run_sandboxed` (on ``pool``'s warm workers if given).

    Returns:
        What the handler returned.

    Raises:
        ToolTimeoutError: it overran ``Tool.timeout`` (it was cancelled).
        ToolExecutionError: the handler raised, or the executor could not run it
            (:class:`~sse_toolcalls.runtime.errors.SandboxViolationError` when a sandbox
            stopped it).
        Whatever cancels the caller (never swallowed).
    """
    if validated.tool.sandbox is not None:
        return await run_sandboxed(validated, pool=pool)
    timeout = validated.tool.timeout
    deadline = anyio.CancelScope()  # replaced by the tool's own deadline below
    try:
        with anyio.fail_after(timeout) as deadline:
            return await executor(validated)
    except TimeoutError as exc:
        # Ours only when our deadline fired; else the executor's own wait timed out
        # (there may be no tool timeout at all): the call timed out all the same.
        name = validated.tool.name
        detail = (
            f"{name} did not finish within {timeout:g} s"
            if timeout is not None and deadline.cancelled_caught
            else f"{name} timed out in its executor: {safe_str(exc) or type(exc).__name__}"
        )
        raise ToolTimeoutError(detail, call=validated.call) from exc


def is_async(handler: Callable[..., Any]) -> bool:
    """Whether calling ``handler`` gives a coroutine: an ``async def`` function, or an
    object whose ``__call__`` is one."""
    if inspect.iscoroutinefunction(handler):
        return True
    call = getattr(handler, "__call__", None)  # noqa: B004 - async __call__ of an object
    return call is not None and inspect.iscoroutinefunction(call)
