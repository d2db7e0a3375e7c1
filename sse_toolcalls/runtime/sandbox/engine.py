"""Run one call of a sandboxed handler in a confined child process.

One entry point, :func:`run_in_sandbox`, on asyncio and trio (anyio). The backend is
bubblewrap where it works, else Landlock (with rlimits in both), else nothing: then the
call is refused (fail closed) unless the caller allows running it unsandboxed. See
``_child.py`` for the child's side and docs/design.md for the threat model.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import anyio
import anyio.abc

from ... import _json
from ...calls import MediaPart
from ...errors import UsageError
from .._media_json import part_from_json
from ..errors import SandboxUnavailableError, ToolErrorReply, ToolRetry
from . import _cgroup, _child
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
neither works (to test the fail-closed path, or to run unsandboxed on purpose)."""

BACKEND_ENV = "SSE_TOOLCALLS_SANDBOX_BACKEND"
"""Environment variable read when no backend is passed (one of :data:`Backend`)."""

MAX_RESULT_BYTES = 16 * 1024**2
"""Largest JSON result a handler may return: a tool result goes back into a model's
context, which holds far less; past it the call is a ``bad_result``."""

_STDERR_TAIL = 4000
"""Characters of the child's stderr kept for diagnostics."""
_KILL_WAIT = 2.0
"""Seconds to wait for a killed tree to be gone before giving up on the check."""
_CHILD = Path(_child.__file__).resolve()
# The whole package, bound read-only for every tool: sse_toolcalls/runtime/sandbox/_child.py
# is three levels under it.
_PACKAGE = _CHILD.parents[2]
_SYSTEM = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
"""What a dynamically linked interpreter needs: the loader, libc, libpython."""
_NETWORK_FILES = (
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/ssl",
    "/etc/gai.conf",
)
"""Name resolution and certificates, bound read-only only for ``network=True``."""


# --------------------------------------------------------------------------------------
# What works on this machine.


@functools.cache
def _bwrap() -> str | None:
    """The bwrap binary, when it can actually make a sandbox here (as this user)."""
    path = shutil.which("bwrap")
    if path is None:
        return None
    probe = [path, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    for root in _SYSTEM:
        if os.path.exists(root):
            probe += ["--ro-bind", root, root]
    try:
        done = subprocess.run(
            [*probe, "--", "true"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return path if done.returncode == 0 else None


@functools.cache
def _landlock_abi() -> int:
    return _child.landlock_abi()


def _works(backend: str, sandbox: Sandbox) -> str | None:
    """Why ``backend`` cannot enforce ``sandbox`` here, or ``None`` when it can."""
    if os.geteuid() == 0 and _cgroup.pids_root() is None:
        return "as root, processes can only be limited by a pids cgroup, and none is writable"
    if backend == "bwrap":
        return None if _bwrap() is not None else "bubblewrap is missing or cannot run here"
    abi = _landlock_abi()
    if abi < 1:
        return "Landlock is not available in this kernel"
    if not sandbox.network and abi < 4:
        return f"Landlock ABI {abi} cannot refuse TCP (ABI 4 can)"
    return None


def available_backends(sandbox: Sandbox | None = None) -> tuple[str, ...]:
    """The backends that can enforce ``sandbox`` here, best first (may be empty)."""
    declared = sandbox or Sandbox()
    return tuple(name for name in ("bwrap", "landlock") if _works(name, declared) is None)


def _choose(sandbox: Sandbox, backend: str | None, allow_unsandboxed: bool) -> str:
    wanted = backend if backend is not None else os.environ.get(BACKEND_ENV, "auto") or "auto"
    if wanted not in get_args(Backend):
        raise UsageError(
            f"sandbox backend {wanted!r}: expected one of {', '.join(get_args(Backend))}"
        )
    candidates = {"auto": ("bwrap", "landlock"), "none": ()}.get(wanted, (wanted,))
    reasons = []
    for name in candidates:
        reason = _works(name, sandbox)
        if reason is None:
            return name
        reasons.append(reason)
    if allow_unsandboxed:
        return "unsandboxed"
    why = "; ".join(reasons) or f"backend {wanted!r} was asked for"
    raise SandboxUnavailableError(
        f"no sandbox can enforce this tool's declaration here ({why}); install bubblewrap, "
        "or pass allow_unsandboxed=True to run it without one",
        reasons=tuple(reasons),
    )


# --------------------------------------------------------------------------------------
# The filesystem view.


def _absolute(path: str, cwd: str) -> str:
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def _interpreter_paths(ref: HandlerRef) -> list[str]:
    """What the child's interpreter must read: the installation, the environment, this
    package, and the handler's top-level package (or module), all read-only."""
    paths = {sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix, str(_PACKAGE)}
    paths.add(os.path.dirname(os.path.realpath(sys.executable)))
    for entry in sys.path:
        # site-packages outside the prefixes (a user site, a --target install).
        if entry and os.path.basename(entry) in ("site-packages", "dist-packages"):
            paths.add(entry)
    top = ref.module.partition(".")[0]
    spec = importlib.util.find_spec(top)
    if spec is not None:
        if spec.submodule_search_locations:
            paths.update(spec.submodule_search_locations)
        elif spec.origin:
            paths.add(spec.origin)
    return sorted(os.path.realpath(path) for path in paths if path and os.path.exists(path))


def _top_level(module: str) -> dict[str, Any] | None:
    """Where the top-level package (or module) of ``module`` is, for the child to load it."""
    name = module.partition(".")[0]
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        return None  # a namespace package or a built-in: found through sys.path instead
    locations = spec.submodule_search_locations
    return {
        "name": name,
        "origin": spec.origin,
        "locations": list(locations) if locations is not None else None,
    }


def _bwrap_argv(
    sandbox: Sandbox, *, read: list[str], write: list[str], system: list[str], cwd: str
) -> list[str]:
    binary = _bwrap()
    assert binary is not None  # checked by _choose
    argv = [binary, "--unshare-all"]
    if sandbox.network:
        argv.append("--share-net")
    argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    # No tmpfs on /tmp: a write there would "succeed" into a throwaway copy; the
    # working directory is the only scratch space.
    argv += ["--proc", "/proc", "--dev", "/dev"]
    for root in _SYSTEM:
        if os.path.islink(root):
            argv += ["--symlink", os.readlink(root), root]
        elif os.path.isdir(root):
            argv += ["--ro-bind", root, root]
    # Each declared path is bound where the handler names it; its source is resolved, so
    # a declared symlink gives what it points to, and nothing else.
    for path in system + read:
        argv += ["--ro-bind-try", os.path.realpath(path), path]
    for path in write:
        argv += ["--bind-try", os.path.realpath(path), path]
    # bwrap's /dev is a writable tmpfs (its /dev/shm a plain directory on it) with no size
    # limit: a tool could fill it past its memory cap, since tmpfs pages are not its
    # address space. Read-only, as the root; the device nodes (/dev/null, urandom) still
    # work.
    argv += ["--bind", cwd, cwd, "--remount-ro", "/", "--remount-ro", "/dev", "--chdir", cwd]
    return argv


# --------------------------------------------------------------------------------------
# Killing what is left.


def _process_table() -> dict[int, int]:
    """pid -> parent pid, for every process /proc shows."""
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as stat:
                    table[int(name)] = int(stat.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return table


def _descendants(root: int) -> set[int]:
    table = _process_table()
    found = {root} if root in table else set()
    grew = True
    while grew:
        more = {pid for pid, parent in table.items() if parent in found and pid not in found}
        found |= more
        grew = bool(more)
    return found


def _signal(pids: set[int], number: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, number)


def _kill_tree(root: int) -> set[int]:
    """Stop the whole tree under ``root`` (stopped processes cannot fork), until no new
    one appears, then kill it all. Returns the pids killed."""
    stopped: set[int] = set()
    while True:
        tree = _descendants(root)
        new = tree - stopped
        if not new:
            break
        _signal(new, signal.SIGSTOP)
        stopped |= new
    _signal(stopped, signal.SIGKILL)
    # A stopped process only dies once it is continued.
    _signal(stopped, signal.SIGCONT)
    return stopped


def _enrol(group: _cgroup.PidsCgroup, root: int) -> None:
    """Move the child's whole tree into ``group`` before it is sent the request: until then
    it runs no code of the tool, and what it starts later is born in the group."""
    while True:
        outside = [pid for pid in sorted(_descendants(root)) if not group.holds(pid)]
        if not outside:
            return
        for pid in outside:
            group.add(pid)


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return True


# --------------------------------------------------------------------------------------
# One call.


def _make_workdir() -> str:
    return tempfile.mkdtemp(prefix="sse-toolcalls-call-")


async def _drain(stream: anyio.abc.ByteReceiveStream, into: bytearray, limit: int) -> None:
    async for chunk in stream:
        if len(into) <= limit:
            into += chunk


async def _drain_tail(stream: anyio.abc.ByteReceiveStream, into: bytearray) -> None:
    async for chunk in stream:
        into += chunk
        del into[: max(0, len(into) - _STDERR_TAIL)]


def _violation(kind: ViolationKind, message: str, **fields: Any) -> Violation:
    return Violation(kind=kind, message=message, **fields)


def _answer(raw: Any) -> ToolRetry | ToolErrorReply | None:
    """The exception a child's ``{"answer": ...}`` stands for, or ``None`` if malformed."""
    if not isinstance(raw, dict):
        return None
    kind = raw.get("kind")
    if kind == "tool_retry" and isinstance(raw.get("message"), str):
        return ToolRetry(raw["message"])
    if kind == "tool_error" and "content" in raw:
        return ToolErrorReply(raw["content"])
    return None


def _media(raw: Any) -> list[MediaPart] | None:
    """The images and documents of a child's ``{"value": ..., "media": [...]}``, or
    ``None`` if any is malformed."""
    if not isinstance(raw, list):
        return None
    parts = [part_from_json(item) for item in raw]
    return None if None in parts else [p for p in parts if p is not None]


def _decode(out: bytes, returncode: int | None, stderr: str) -> tuple[Any, Violation | None]:
    """The child's reply as ``(value, violation)``; a ``ToolRetry`` or ``ToolErrorReply``
    of the handler's comes back as the value (see :func:`_answer`)."""
    try:
        reply = _json.loads(out) if out else None
    except ValueError:
        reply = None
    if isinstance(reply, dict) and "value" in reply:
        if "media" not in reply:
            return reply["value"], None
        media = _media(reply["media"])
        if media is None or not isinstance(reply["value"], list):
            return None, _violation(
                ViolationKind.BAD_RESULT,
                "the tool's images or documents are malformed",
                stderr=stderr,
            )
        # The other items, then the media: ok_result splits them again as it does a local
        # handler's list (the items' order is kept; media travel apart from them anyway).
        return [*reply["value"], *media], None
    if isinstance(reply, dict) and "answer" in reply:
        # The handler's ToolRetry or ToolErrorReply, raised again here (in the value's
        # place: no JSON value is an exception, and run_in_sandbox takes it out).
        answer = _answer(reply["answer"])
        if answer is not None:
            return answer, None
        return None, _violation(
            ViolationKind.BAD_RESULT, "the tool's error answer is malformed", stderr=stderr
        )
    if isinstance(reply, dict) and isinstance(reply.get("violation"), dict):
        raw: dict[str, Any] = reply["violation"]
        try:
            kind = ViolationKind(str(raw.get("kind")))
        except ValueError:
            kind = ViolationKind.CRASH
        return None, _violation(
            kind,
            str(raw.get("message", kind.value)),
            path=raw.get("path"),
            address=raw.get("address"),
            exception=raw.get("exception"),
            signal=raw.get("signal"),
            stderr=stderr,
        )
    number: int | None = None
    if returncode is not None and returncode < 0:
        number = -returncode
    elif returncode is not None and returncode > 128:
        number = returncode - 128  # bwrap reports a signal as 128 + its number
    return None, _violation(
        ViolationKind.CRASH,
        f"the tool's sandbox failed to start or died (exit status {returncode})",
        signal=number,
        stderr=stderr,
    )


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
            return _result(*warm, backend=chosen, started=started, warm=True)
    cwd = await anyio.to_thread.run_sync(_make_workdir)
    try:
        value, violation = await _run(sandbox, ref, dict(arguments), chosen, cwd)
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(functools.partial(shutil.rmtree, cwd, True))
    return _result(value, violation, backend=chosen, started=started, warm=False)


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


def _prepare(
    sandbox: Sandbox,
    ref: HandlerRef,
    arguments: dict[str, Any],
    backend: str,
    cwd: str,
    *,
    warm: bool = False,
) -> tuple[list[str], bytes] | Violation:
    """The child's command line and request (blocking: it resolves paths), or the
    violation of arguments that are not JSON. With ``warm``, the zygote's."""
    here = os.getcwd()
    read = [_absolute(os.fspath(path), cwd) for path in sandbox.read]
    write = [_absolute(os.fspath(path), cwd) for path in sandbox.write]
    system = _interpreter_paths(ref)
    if sandbox.network:
        system += [path for path in _NETWORK_FILES if os.path.exists(path)]
    visible = [*(p for p in _SYSTEM if os.path.exists(p)), *system, *read]
    writable = [*write, cwd]
    if backend == "landlock":
        # What an interpreter opens that is no one's secret.
        visible += ["/dev/urandom", "/dev/zero"]
        writable.append("/dev/null")
    request = {
        "module": ref.module,
        "qualname": ref.qualname,
        # The handler's top-level package and this one, found where they are here.
        "located": [_top_level(ref.module), _top_level(__name__)],
        "arguments": arguments,
        "sys_path": [os.path.join(here, entry) if entry else here for entry in sys.path],
        "cwd": cwd,
        "read": [os.path.realpath(path) for path in visible],
        "write": [os.path.realpath(path) for path in writable],
        "env": {name: os.environ[name] for name in sandbox.env if name in os.environ},
        "network": sandbox.network,
        "landlock": backend == "landlock",
        "limits": {
            "memory": sandbox.memory_bytes,
            "cpu": sandbox.cpu,
            "processes": sandbox.processes,
            "file_size": sandbox.file_size_bytes,
        },
        "max_result_bytes": MAX_RESULT_BYTES,
        # bwrap's user namespace makes RLIMIT_NPROC count the sandbox's tasks only, and
        # root's calls run in a pids cgroup; elsewhere the supervisor counts.
        "watch": backend != "bwrap" and not (os.geteuid() == 0 and _cgroup.pids_root()),
    }
    try:
        payload = _json.dumps(request)
    except TypeError as exc:
        return _violation(ViolationKind.BAD_RESULT, f"the call's arguments are not JSON: {exc}")
    python = [sys.executable, "-I", "-S", str(_CHILD), *(["--zygote"] if warm else [])]
    if backend == "bwrap":
        argv = _bwrap_argv(sandbox, read=read, write=write, system=system, cwd=cwd)
        if warm:
            # The IPC namespace outlives a call: its message queues must be visible for the
            # zygote to see that a call left none. Mounted before /dev is made read-only.
            at = argv.index("--dev") + 2
            argv[at:at] = ["--mqueue", "/dev/mqueue"]
        return [*argv, *python], payload
    return python, payload


def _wait_gone(pids: set[int], group: _cgroup.PidsCgroup | None) -> None:
    """Wait until the killed tree is gone, and empty and remove the call's cgroup."""
    deadline = time.monotonic() + _KILL_WAIT
    while any(not _gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.005)
    if group is not None:
        # Whatever escaped the tree is still in the cgroup.
        while (left := group.members()) and time.monotonic() < deadline:
            _signal(set(left), signal.SIGKILL)
            time.sleep(0.005)
        group.remove()


async def _run(
    sandbox: Sandbox, ref: HandlerRef, arguments: dict[str, Any], backend: str, cwd: str
) -> tuple[Any, Violation | None]:
    prepared = await anyio.to_thread.run_sync(_prepare, sandbox, ref, arguments, backend, cwd)
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
            # bwrap outside, bwrap as the namespace's init, the supervisor: 3 tasks.
            overhead = 3 if backend == "bwrap" else 1
            group = _cgroup.PidsCgroup(root, sandbox.processes + overhead)
            await anyio.to_thread.run_sync(_enrol, group, process.pid)
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
                pids = await anyio.to_thread.run_sync(_kill_tree, process.pid)
                await process.wait()
            await process.aclose()
            await anyio.to_thread.run_sync(_wait_gone, pids, group)
    stderr = err.decode("utf-8", "replace")
    if timed_out:
        return None, _violation(
            ViolationKind.TIMEOUT,
            f"the tool did not finish within {sandbox.timeout:g} s and was stopped",
            stderr=stderr,
        )
    return _decode(bytes(out), process.returncode, stderr)
