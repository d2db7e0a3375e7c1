"""Warm workers: one zygote per tool, forking a fresh supervisor and worker per call.

A cold call starts an interpreter under bubblewrap (or Landlock) and imports the handler:
about 55 ms at the median (``benchmarks/bench_sandbox.py``). A :class:`WarmPool` keeps,
per tool, a *zygote*: the same child, in the same confinement, with the handler's module
imported, that forks per call a supervisor, which forks the worker exactly as a cold call
does (limits, capabilities, Landlock, environment, all set in the worker, per call). Every
call thus starts from the same image, one that never ran a call; see docs/design.md for
what the reset guarantees and what it does not.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc
from anyio.streams.buffered import BufferedByteReceiveStream

from ... import _json
from ...errors import UsageError
from . import _cgroup, _child, _exchange, _processes
from .backends import SandboxBackend
from .declaration import HandlerRef, Sandbox
from .results import Violation, ViolationKind

__all__ = ["WarmPool"]

DEFAULT_PER_TOOL = 2
"""Zygotes a pool keeps per tool: a batch of parallel calls of one tool beyond it runs cold
(never waits), so a pool changes the price of a call, never when it runs."""

_KEPT = frozenset((None, ViolationKind.HANDLER_ERROR))
"""The outcomes after which a zygote serves again: a value, or the handler's own
exception. After any other violation (a denied path, a limit, a crash, a timeout) the
zygote that saw it is discarded, whatever it claims."""
_READY_BYTES = 64
_TAIL_BYTES = 4096


class _Gone(Exception):
    """The zygote broke the protocol or ended: it is discarded."""


@dataclass(eq=False)
class _Zygote:
    process: anyio.abc.Process
    reader: BufferedByteReceiveStream
    cwd: str
    group: _cgroup.PidsCgroup | None

    async def frame(self, limit: int) -> bytes:
        try:
            size = int.from_bytes(await self.reader.receive_exactly(_child.HEADER), "big")
            if size > limit:
                raise _Gone(f"a frame of {size} bytes (at most {limit})")
            return await self.reader.receive_exactly(size) if size else b""
        except (anyio.IncompleteRead, anyio.EndOfStream, anyio.ClosedResourceError) as exc:
            raise _Gone("the zygote ended") from exc

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        try:
            await self.process.stdin.send(len(data).to_bytes(_child.HEADER, "big") + data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise _Gone("the zygote ended") from exc

    async def discard(self) -> None:
        """Kill the zygote's whole tree and wait until it is gone; remove its directory."""
        with anyio.CancelScope(shield=True):
            pids: set[int] = set()
            if self.process.returncode is None:
                pids = await anyio.to_thread.run_sync(_processes.kill_tree, self.process.pid)
            await self.process.wait()
            await self.process.aclose()
            await anyio.to_thread.run_sync(_processes.wait_gone, pids, self.group)
            await anyio.to_thread.run_sync(functools.partial(shutil.rmtree, self.cwd, True))


@dataclass(eq=False)
class _Tool:
    fingerprint: tuple[Any, ...]
    idle: list[_Zygote] = field(default_factory=list)
    count: int = 0
    refused: str | None = None


def _fingerprint(sandbox: Sandbox, ref: HandlerRef) -> tuple[Any, ...]:
    """What the zygote's view was made of: each bound path and the file it was. A bind
    (and a Landlock rule) holds the inode it was given, so a declared file replaced since
    (a config rewritten by rename, a directory made later) needs a new zygote."""
    # Relative paths resolve against the call's directory; every call directory is a
    # sibling in the same parent, so a stand-in there gives the same paths outside it.
    here = os.path.join(tempfile.gettempdir(), "sse-toolcalls-call-")
    paths = [
        *(_exchange.absolute(os.fspath(path), here) for path in (*sandbox.read, *sandbox.write)),
        *_exchange.interpreter_paths(ref),
    ]
    marks: list[Any] = [tuple(sys.path), os.getcwd()]
    for path in paths:
        try:
            info = os.stat(path)
            marks.append((path, os.path.realpath(path), info.st_dev, info.st_ino))
        except OSError:
            marks.append((path, None))
    return tuple(marks)


def _empty(path: str) -> None:
    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            # A tool may have taken its own rights away from a directory it made.
            os.chmod(entry.path, stat.S_IRWXU)
            _empty(entry.path)
            os.rmdir(entry.path)
        else:
            os.unlink(entry.path)


def _reset(path: str) -> bool:
    """Make the zygote's working directory as a new one is: empty, mode 0700, no extended
    attributes, times now. False when that cannot be done (the zygote is discarded)."""
    try:
        info = os.lstat(path)
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            return False
        os.chmod(path, stat.S_IRWXU)
        _empty(path)
        try:
            names = os.listxattr(path)
        except OSError:
            names = []  # a filesystem without them
        for name in names:
            os.removexattr(path, name)
        os.utime(path)
        return not os.listdir(path)
    except (OSError, RecursionError):
        return False


class WarmPool:
    """Warm workers for sandboxed tools, reused across calls; an async context manager.

    Pass it to :func:`~sse_toolcalls.runtime.sandbox.run_in_sandbox` (``pool=``). Per tool (the
    handler, its declaration and the backend) it keeps up to ``per_tool`` zygotes, each
    started at the tool's first call and discarded after any call that did not end in a
    value or the handler's own exception. A call finds no idle zygote and none may be
    started (a parallel batch), or the tool cannot be kept warm (its module starts a thread
    or a process at import): it runs cold, with the same guarantees. Closing the pool kills
    every zygote and waits until its processes are gone. One event loop: make it, use it
    and close it within one ``anyio.run``.
    """

    def __init__(self, *, per_tool: int = DEFAULT_PER_TOOL) -> None:
        """Raises UsageError for a ``per_tool`` that is not a positive int."""
        if isinstance(per_tool, bool) or not isinstance(per_tool, int) or per_tool < 1:
            raise UsageError(f"per_tool: expected a positive int, got {per_tool!r}")
        self._per_tool = per_tool
        self._tools: dict[tuple[Any, ...], _Tool] = {}
        self._closed = False

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Kill every zygote and wait for its processes to be gone; later calls run cold."""
        self._closed = True
        tools, self._tools = list(self._tools.values()), {}
        with anyio.CancelScope(shield=True):
            for tool in tools:
                for zygote in tool.idle:
                    await zygote.discard()
                tool.idle.clear()

    def refusals(self) -> dict[str, str]:
        """Tools that this pool runs cold, by ``module:qualname``, with the reason."""
        return {
            f"{key[0].module}:{key[0].qualname}": tool.refused
            for key, tool in self._tools.items()
            if tool.refused is not None
        }

    async def _run(
        self,
        sandbox: Sandbox,
        ref: HandlerRef,
        arguments: dict[str, Any],
        backend: SandboxBackend,
    ) -> tuple[Any, Violation | None] | None:
        """One call on a zygote of the tool, or None: then the caller runs it cold."""
        if self._closed or not backend.warm:
            return None
        key = (ref, sandbox, backend.name)
        fingerprint = await anyio.to_thread.run_sync(_fingerprint, sandbox, ref)
        tool = self._tools.get(key)
        if tool is None or tool.fingerprint != fingerprint:
            stale = tool
            tool = self._tools[key] = _Tool(fingerprint)
            if stale is not None:
                for zygote in stale.idle:
                    await zygote.discard()
                stale.idle.clear()
        if tool.refused is not None:
            return None
        if tool.idle:
            zygote = tool.idle.pop()
        elif tool.count < self._per_tool:
            tool.count += 1
            try:
                started = await _start(sandbox, ref, backend)
            except BaseException:
                tool.count -= 1
                raise
            if isinstance(started, str):
                tool.count -= 1
                tool.refused = started
                return None
            zygote = started
        else:
            return None
        keep = False
        try:
            outcome, keep = await _call(zygote, sandbox, ref, arguments, backend)
        finally:
            if keep and not self._closed and self._tools.get(key) is tool:
                tool.idle.append(zygote)
            else:
                tool.count -= 1
                await zygote.discard()
        return outcome


async def _start(sandbox: Sandbox, ref: HandlerRef, backend: SandboxBackend) -> _Zygote | str:
    """A zygote of the tool, ready; or why the tool cannot be kept warm."""
    cwd = await anyio.to_thread.run_sync(_exchange.make_workdir)
    prepared = await anyio.to_thread.run_sync(
        functools.partial(_exchange.prepare, sandbox, ref, {}, backend, cwd, warm=True)
    )
    if isinstance(prepared, Violation):  # pragma: no cover - no arguments to refuse
        await anyio.to_thread.run_sync(functools.partial(shutil.rmtree, cwd, True))
        return prepared.message
    argv, boot = prepared
    process = await anyio.open_process(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        # Each call's output is captured by its supervisor; the zygote itself prints nothing.
        stderr=subprocess.DEVNULL,
        cwd=cwd,
        env={},
        start_new_session=True,
    )
    assert process.stdout is not None
    group = None
    zygote = _Zygote(process, BufferedByteReceiveStream(process.stdout), cwd, None)
    ready = False
    try:
        root = _cgroup.pids_root() if os.geteuid() == 0 else None
        if root is not None:
            overhead = backend.cgroup_overhead(warm=True)
            group = zygote.group = _cgroup.PidsCgroup(root, sandbox.processes + overhead)
            await anyio.to_thread.run_sync(_processes.enrol, group, process.pid)
        with anyio.move_on_after(sandbox.timeout):
            await zygote.send(boot)
            answer = _json.loads(await zygote.frame(_READY_BYTES * 4))
            if isinstance(answer, dict) and answer.get("ready") is True:
                ready = True
                return zygote
            if isinstance(answer, dict) and isinstance(answer.get("refused"), str):
                return str(answer["refused"])
        return "the warm worker did not start in time"
    except (_Gone, ValueError) as exc:
        return f"the warm worker did not start: {exc}"
    finally:
        if not ready:
            await zygote.discard()


async def _call(
    zygote: _Zygote,
    sandbox: Sandbox,
    ref: HandlerRef,
    arguments: dict[str, Any],
    backend: SandboxBackend,
) -> tuple[tuple[Any, Violation | None], bool]:
    """One call on ``zygote``: the outcome, and whether the zygote may serve again."""
    prepared = await anyio.to_thread.run_sync(
        _exchange.prepare, sandbox, ref, arguments, backend, zygote.cwd
    )
    if isinstance(prepared, Violation):
        return (None, prepared), True
    _, payload = prepared
    with anyio.move_on_after(sandbox.timeout):
        try:
            await zygote.send(payload)
            tail = await zygote.frame(_TAIL_BYTES)
            out = await zygote.frame(_exchange.MAX_RESULT_BYTES + 1024)
        except _Gone:
            return (
                None,
                _exchange.violation(ViolationKind.CRASH, "the tool's warm worker died mid-call"),
            ), False
        stderr = tail.decode("utf-8", "replace")
        value, violation = _exchange.decode(out, None, stderr)
        try:
            ready = await zygote.frame(_READY_BYTES)
        except _Gone:
            ready = b""
        keep = violation is None or violation.kind in _KEPT
        if keep and ready:
            keep = await anyio.to_thread.run_sync(_reset, zygote.cwd)
        return (value, violation), keep and bool(ready)
    return (
        None,
        _exchange.violation(
            ViolationKind.TIMEOUT,
            f"the tool did not finish within {sandbox.timeout:g} s and was stopped",
        ),
    ), False
