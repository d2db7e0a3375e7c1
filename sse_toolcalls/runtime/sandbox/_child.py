"""The sandbox's child process: a trusted supervisor and the worker that runs the handler.

Run as a script (``python -I -S _child.py``), never imported by the child as part of the
package: the package root would load the parser and the sandbox engine would load anyio,
and the child needs neither. Only the standard library is used here: importing orjson
costs 28 ms (``python -X importtime``: uuid, dataclasses, inspect), which is more than
the rest of a cold call's overhead; the child's JSON (one request, one result) is small.

The supervisor reads the request (JSON on stdin), forks the worker and waits. The worker
alone is confined (Landlock, when that is the backend) and limited (rlimits); it imports
the handler by module path, calls it and sends the outcome to the supervisor through a
pipe. The supervisor is a child subreaper, so every process the handler starts, even one
that left its session, stays below it; when the worker ends, the supervisor kills whatever
is left, then writes one JSON object on stdout: ``{"value": ...}`` (with ``"media"`` when
the handler returned images or documents), ``{"violation":
{...}}``, or ``{"answer": {...}}`` when the handler raised ``ToolRetry`` or
``ToolErrorReply`` (its answer for the model, not a violation). The engine imports this
module only for :func:`landlock_abi`.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import resource
import select
import signal
import sys
from typing import Any

# --------------------------------------------------------------------------------------
# Landlock, from <linux/landlock.h>; the syscall numbers are the same on every
# architecture that has them (they were added after the tables were unified).

_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_RULE_NET_PORT = 2
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_CAP_AMBIENT = 47
_PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAPABILITY_VERSION_3 = 0x20080522
HEADER = 4
"""Bytes of a frame's length, big-endian (the zygote's requests and replies)."""
_TAIL_BYTES = 4000
"""Bytes of a warm call's output kept for diagnostics (the engine keeps as much of a cold one)."""
_WATCH_SECONDS = 0.01
"""How often the supervisor counts the tool's processes: a full /proc scan costs about
1 ms with 300 processes on the machine."""

_FS_EXECUTE = 1 << 0
_FS_WRITE_FILE = 1 << 1
_FS_READ_FILE = 1 << 2
_FS_READ_DIR = 1 << 3
_FS_REFER = 1 << 13  # ABI 2
_FS_TRUNCATE = 1 << 14  # ABI 3
_FS_IOCTL_DEV = 1 << 15  # ABI 5
_NET_BIND_TCP = 1 << 0  # ABI 4
_NET_CONNECT_TCP = 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1  # ABI 6

# "Only these rights can be given to a rule on a file (not a directory)."
_FILE_ONLY = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV
_READ = _FS_EXECUTE | _FS_READ_FILE | _FS_READ_DIR


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is __attribute__((packed))
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class _NetPortAttr(ctypes.Structure):
    _fields_ = (("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64))


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, or 0 where Landlock is missing or disabled."""
    try:
        version = int(_libc().syscall(_SYS_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(version, 0)


def _fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1  # ABI 1: execute .. make_sym
    if abi >= 2:
        rights |= _FS_REFER
    if abi >= 3:
        rights |= _FS_TRUNCATE
    if abi >= 5:
        rights |= _FS_IOCTL_DEV
    return rights


def _check(result: int, what: str) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"landlock {what}: {os.strerror(code)}")
    return result


def apply_landlock(read: list[str], write: list[str], *, network: bool) -> None:
    """Confine this process and its future children: only ``read`` (read and execute) and
    ``write`` (everything) are reachable; with ``network`` false, no TCP bind or connect,
    and no new socket at all (:func:`deny_sockets`); no signals to, nor abstract sockets
    of, processes outside the domain.

    Raises OSError when the kernel refuses (the worker then reports a crash, fail closed).
    """
    libc = _libc()
    abi = landlock_abi()
    if abi < 1:
        raise OSError(errno.ENOSYS, "Landlock is not available")
    everything = _fs_rights(abi)
    attr = _RulesetAttr(handled_access_fs=everything, handled_access_net=0, scoped=0)
    if not network:
        if abi < 4:
            raise OSError(errno.ENOSYS, "Landlock before ABI 4 cannot refuse TCP")
        attr.handled_access_net = _NET_BIND_TCP | _NET_CONNECT_TCP
    size = ctypes.sizeof(_RulesetAttr)
    if abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL
    else:
        size = 16  # the struct before "scoped" existed
    ruleset = _check(libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), size, 0), "ruleset")
    try:
        for paths, rights in ((read, _READ), (write, everything)):
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except OSError:
                    continue  # a declared path that does not exist gives no access
                try:
                    allowed = rights if os.path.isdir(path) else rights & _FILE_ONLY
                    rule = _PathBeneathAttr(allowed_access=allowed, parent_fd=fd)
                    _check(
                        libc.syscall(
                            _SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0
                        ),
                        f"rule for {path}",
                    )
                finally:
                    os.close(fd)
        _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0), "restrict_self")
    finally:
        os.close(ruleset)
    if not network:
        deny_sockets()


# --------------------------------------------------------------------------------------
# Seccomp, from <linux/seccomp.h>, <linux/filter.h> and <linux/audit.h>. Landlock (up to
# ABI 6) guards TCP ports only: UDP, pathname UNIX sockets, netlink and raw packets pass.
# With ``network`` false the worker therefore also gets a filter that refuses to make any
# socket; a pair of connected UNIX sockets (``socketpair``, which reaches nothing outside
# the process: asyncio's self-pipe is one) stays allowed.

_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_BPF_LD_W_ABS = 0x20
_BPF_JEQ_K = 0x15
_BPF_JGE_K = 0x35
_BPF_RET_K = 0x06
_X32_SYSCALL_BIT = 0x40000000
_AF_UNIX = 1
# seccomp_data: int nr at 0, __u32 arch at 4, __u64 args[6] from 16 (little-endian: the
# low half of args[0], the address family, is at 16).
_DATA_NR, _DATA_ARCH, _DATA_ARG0 = 0, 4, 16
# (audit arch, socket, socketpair, io_uring_setup) per machine; io_uring can open sockets
# (IORING_OP_SOCKET) without the socket syscall, so it is refused too.
_SOCKET_SYSCALLS = {
    "x86_64": (0xC000003E, 41, 53, 425),
    "aarch64": (0xC00000B7, 198, 199, 425),
}


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter)))


def socket_filter(machine: str) -> list[tuple[int, int, int, int]]:
    """The classic BPF program of :func:`deny_sockets` for ``machine`` (``os.uname``'s),
    as (code, jt, jf, k) instructions.

    Raises:
        OSError: ``ENOSYS`` on a machine whose syscall numbers are not known here (the
            worker then reports a crash: fail closed).
    """
    numbers = _SOCKET_SYSCALLS.get(machine)
    if numbers is None:
        raise OSError(errno.ENOSYS, f"no socket filter for {machine}")
    arch, socket_nr, socketpair_nr, io_uring_nr = numbers
    deny = _SECCOMP_RET_ERRNO | errno.EACCES
    # Jumps count instructions from the next one: the last two are ALLOW (9), DENY (10).
    return [
        (_BPF_LD_W_ABS, 0, 0, _DATA_ARCH),  # 0
        # Another ABI (i386 through int 0x80 has socketcall) is refused whole.
        (_BPF_JEQ_K, 0, 8, arch),  # 1
        (_BPF_LD_W_ABS, 0, 0, _DATA_NR),  # 2
        (_BPF_JGE_K, 6, 0, _X32_SYSCALL_BIT),  # 3: x32 numbers
        (_BPF_JEQ_K, 5, 0, socket_nr),  # 4
        (_BPF_JEQ_K, 4, 0, io_uring_nr),  # 5
        (_BPF_JEQ_K, 0, 2, socketpair_nr),  # 6
        (_BPF_LD_W_ABS, 0, 0, _DATA_ARG0),  # 7
        (_BPF_JEQ_K, 0, 1, _AF_UNIX),  # 8
        (_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW),  # 9
        (_BPF_RET_K, 0, 0, deny),  # 10
    ]


def deny_sockets() -> None:
    """Refuse, in this process and its future children, every new socket (any family:
    IP, pathname and abstract UNIX, netlink, packet) and io_uring with ``EACCES``;
    ``socketpair(AF_UNIX)`` stays allowed. Needs ``no_new_privs`` (set by Landlock).

    Raises OSError when the kernel refuses (the worker then reports a crash, fail closed).
    """
    program = socket_filter(os.uname().machine)
    instructions = (_SockFilter * len(program))(*(_SockFilter(*i) for i in program))
    fprog = _SockFprog(len=len(program), filter=instructions)
    libc = _libc()
    _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    result = libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0)
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"seccomp filter: {os.strerror(code)}")


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def drop_capabilities() -> None:
    """Give up every capability, for good: a root tool keeps uid 0 (its interpreter may
    live where only root can read) but not root's powers (raw sockets, modules, ptrace).

    Raises OSError when the kernel refuses (the worker then reports a crash, fail closed).
    """
    libc = _libc()
    number = 0
    while libc.prctl(_PR_CAPBSET_DROP, number, 0, 0, 0) == 0:
        number += 1
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(version=_CAPABILITY_VERSION_3, pid=0)
    data = (_CapData * 2)()
    _check(libc.capset(ctypes.byref(header), data), "capset")


# --------------------------------------------------------------------------------------
# The worker.


_CLONE_NEWUSER = 0x10000000
_WARM_NAMESPACE_TASKS: list[int] = []
"""In a warm zygote that made a user namespace of its own, one count: the tasks of that
namespace that are not a call's (the zygote and the call's supervisor)."""


def own_user_namespace() -> bool:
    """Move this process into a user namespace of its own, the same uid and gid mapped, so
    that RLIMIT_NPROC counts only the tasks started in it (Linux >= 5.14 charges the limit
    per user namespace, and every ancestor's limit still holds). Under Landlock the limit
    otherwise counts every task of the uid on the machine, so a call failed when other
    work of the same user started processes at the wrong moment (two suites at once gave
    a false PROCESS_LIMIT). False where the kernel allows no unprivileged user namespace:
    the limit is then approximate, and the supervisor's own count is the verdict.

    The capabilities the new namespace grants are dropped at once; a failure after the
    unshare raises (the worker reports a crash: fail closed)."""
    uid, gid = os.getuid(), os.getgid()
    if _libc().unshare(_CLONE_NEWUSER) != 0:
        return False
    for name, text in (
        ("setgroups", "deny"),
        ("uid_map", f"{uid} {uid} 1"),
        ("gid_map", f"{gid} {gid} 1"),
    ):
        with open(f"/proc/self/{name}", "w") as file:
            file.write(text)
    drop_capabilities()
    return True


def _tasks_of_my_uid() -> int:
    """Threads of this real uid that /proc shows (RLIMIT_NPROC counts threads)."""
    uid = os.getuid()
    count = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", "rb") as status:
                fields = dict(
                    line.split(b":", 1) for line in status.read().splitlines() if b":" in line
                )
        except OSError:
            continue
        if int(fields[b"Uid"].split()[0]) == uid:
            count += int(fields[b"Threads"])
    return count


def _set_limits(limits: dict[str, Any], others: int) -> None:
    """Set the rlimits; ``others`` is the count of tasks of this uid that are not the tool's
    (RLIMIT_NPROC counts them all: under bubblewrap only the sandbox's own, under Landlock
    every process of the uid on the machine, so there the limit is approximate)."""
    nproc = others + int(limits["processes"])
    cpu = max(1, round(limits["cpu"]))
    for name, soft, hard in (
        (resource.RLIMIT_AS, limits["memory"], limits["memory"]),
        # SIGXCPU at the soft limit, SIGKILL one second later if it is caught.
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_NPROC, nproc, nproc),
        (resource.RLIMIT_FSIZE, limits["file_size"], limits["file_size"]),
        (resource.RLIMIT_CORE, 0, 0),
    ):
        resource.setrlimit(name, (soft, hard))
    # A write past RLIMIT_FSIZE then fails with EFBIG instead of killing the worker.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _violation(kind: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"violation": {"kind": kind, "message": message, **extra}}


def _answer(exc: BaseException) -> dict[str, Any] | None:
    """The handler's own answer for the model, when it raised ``ToolRetry`` or
    ``ToolErrorReply``: sent as data, for the parent to raise the same exception again.

    The classes are looked up where the handler got them, not imported: a handler that
    raised one has loaded ``sse_toolcalls`` (bound read-only for every tool), and this
    script must not load the package for the calls that do not (see the top). The text
    and content are rendered by the package's own ``_jsonsafe``, as they are unsandboxed,
    so the model is told the same."""
    errors = sys.modules.get("sse_toolcalls.runtime.errors")
    if errors is None or not isinstance(exc, errors.ToolRetry | errors.ToolErrorReply):
        return None
    import importlib

    jsonsafe = importlib.import_module("sse_toolcalls._jsonsafe")
    if isinstance(exc, errors.ToolRetry):
        return {"answer": {"kind": "tool_retry", "message": jsonsafe.safe_str(exc)}}
    return {"answer": {"kind": "tool_error", "content": jsonsafe.json_value(exc.content)}}


def _portable(payload: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    """A reply plain JSON cannot hold, made as the tool's result would be unsandboxed
    (``tools.results.ok_result``): its images and documents split out as ``media`` (the
    parent rebuilds them after the other items), everything else through the package's
    ``_jsonsafe``, as there. Only a value that needs it pays for loading the package here;
    a value of a handler that never loaded it (no images, then) that the package cannot
    render either is a ``bad_result``."""
    not_json = _violation(
        "bad_result", f"the tool's result is not JSON: {exc}", exception=type(exc).__name__
    )
    if "value" not in payload:
        return not_json
    value = payload["value"]
    calls = sys.modules.get("sse_toolcalls.calls")
    kinds: tuple[type, ...] = (calls.Image, calls.Document) if calls is not None else ()
    items: list[Any] | None
    media: list[Any]
    if kinds and isinstance(value, kinds):
        items, media = [], [value]
    elif kinds and isinstance(value, list | tuple) and any(isinstance(v, kinds) for v in value):
        items = [v for v in value if not isinstance(v, kinds)]
        media = [v for v in value if isinstance(v, kinds)]
    else:
        items, media = None, []
    try:
        import importlib

        json_value = importlib.import_module("sse_toolcalls._jsonsafe").json_value
        part_json = importlib.import_module("sse_toolcalls.runtime._media_json").part_json
    except ImportError:
        return not_json
    if items is None:
        return {"value": json_value(value)}
    return {"value": json_value(items), "media": [part_json(part) for part in media]}


def _classify(exc: BaseException, request: dict[str, Any], attempts: list[str]) -> dict[str, Any]:
    """The violation an exception of the handler stands for, or its answer for the model."""
    answer = _answer(exc)
    if answer is not None:
        return answer
    name = type(exc).__name__
    addresses = [attempt for attempt in attempts if attempt != "spawn"]
    if isinstance(exc, MemoryError):
        return _violation("memory_limit", "the tool went past its memory limit", exception=name)
    if isinstance(exc, OSError):
        code = exc.errno
        if code == errno.EAGAIN and exc.filename is None and "spawn" in attempts:
            return _violation(
                "process_limit",
                "the tool tried to start more processes than allowed",
                exception=name,
            )
        if code == errno.EFBIG:
            return _violation(
                "file_size_limit", "the tool wrote a file past its size limit", exception=name
            )
        if code == errno.ENOMEM:
            return _violation("memory_limit", "the tool went past its memory limit", exception=name)
        if exc.filename is not None and code in (
            errno.EACCES,
            errno.EPERM,
            errno.ENOENT,
            errno.EROFS,
            errno.ENOTDIR,
            errno.EXDEV,
        ):
            # Under bubblewrap an undeclared path does not exist at all (ENOENT); a path is
            # denied when it resolves outside everything the tool may see, or when it is
            # written outside what the tool may write.
            for raw in (exc.filename, exc.filename2):
                if not isinstance(raw, str):
                    continue
                path = os.path.realpath(os.path.join(request["cwd"], raw))
                writable = request["write"]
                visible = request["read"] + writable
                if not _inside(path, visible) or (
                    code in (errno.EACCES, errno.EPERM, errno.EROFS) and not _inside(path, writable)
                ):
                    return _violation(
                        "denied_path",
                        f"the tool may not access {path}",
                        path=path,
                        exception=name,
                    )
        if (
            not request["network"]
            and (
                isinstance(exc, ConnectionRefusedError | ConnectionResetError)
                or code in (errno.EACCES, errno.EPERM, errno.ENETUNREACH, errno.EHOSTUNREACH)
                or name == "gaierror"
            )
            and exc.filename is None
            and addresses
        ):
            return _violation(
                "network_refused",
                f"the tool may not use the network ({addresses[-1]})",
                address=addresses[-1],
                exception=name,
            )
    # CPython's words when pthread_create fails (EAGAIN under RLIMIT_NPROC or pids.max);
    # starting a thread raises no audit event to tell it by.
    if isinstance(exc, RuntimeError) and str(exc) == "can't start new thread":
        return _violation(
            "process_limit", "the tool tried to start more threads than allowed", exception=name
        )
    return _violation("handler_error", f"the tool failed: {name}: {exc}", exception=name)


_SPAWNS = frozenset(("os.fork", "os.forkpty", "os.posix_spawn", "subprocess.Popen"))


def _audit(attempts: list[str]) -> Any:
    # Only for the report: the kernel refuses, this hook only remembers which address was
    # tried (so the model is told what was refused) and that a process or thread was
    # being started (so an EAGAIN then is the process limit).
    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in _SPAWNS:
            if "spawn" not in attempts:
                attempts.append("spawn")
        elif event == "socket.connect" and len(args) > 1:
            address = args[1]
            if isinstance(address, tuple) and len(address) >= 2:
                attempts.append(f"{address[0]}:{address[1]}")
            else:
                attempts.append(str(address))
        elif event == "socket.getaddrinfo" and args:
            attempts.append(f"{args[0]}:{args[1] if len(args) > 1 else ''}")
        elif event == "socket.__new__" and len(args) > 1 and attempts in ([], ["spawn"]):
            # A bare socket (no name resolved first): its family is all there is to tell.
            attempts.append(f"a socket of family {args[1]}")

    return hook


def _work(request: dict[str, Any], out: int) -> None:
    """Run the handler in this (worker) process and write the outcome to ``out``."""
    attempts: list[str] = []
    me = os.getpid()
    payload: dict[str, Any]
    try:
        # Counted before Landlock hides /proc; the worker itself is one of "processes".
        # (Root is not bound by RLIMIT_NPROC: its calls run in a pids cgroup instead.)
        # Under Landlock, a user namespace of the call's own (or of its warm zygote's)
        # makes the count exact: only the tasks of that namespace are charged.
        if os.geteuid() == 0:
            others = 0
        elif _WARM_NAMESPACE_TASKS:
            others = _WARM_NAMESPACE_TASKS[0]
        elif request["landlock"] and own_user_namespace():
            others = 0
        else:
            others = max(_tasks_of_my_uid() - 1, 0)
        if os.geteuid() == 0:
            drop_capabilities()
        if request["landlock"]:
            apply_landlock(request["read"], request["write"], network=request["network"])
        elif not request["network"]:
            # bubblewrap's own network namespace does not hold UNIX sockets of a declared
            # folder (they cross namespaces): the same filter as under Landlock.
            deny_sockets()
        os.environ.clear()
        os.environ.update(request["env"])
        sys.addaudithook(_audit(attempts))
        _set_limits(request["limits"], others)
        found: Any = _import(request)
        for part in request["qualname"].split("."):
            found = getattr(found, part)
        value = found(**request["arguments"])
        if hasattr(value, "__await__"):
            import asyncio

            value = asyncio.run(_await(value))
        payload = {"value": value}
    except BaseException as exc:  # everything the handler does ends in one result
        if os.getpid() != me:
            os._exit(0)  # a process the handler forked: only the worker reports
        payload = _classify(exc, request, attempts)
    if os.getpid() != me:
        os._exit(0)
    try:
        data = _dumps(payload)
    except (TypeError, ValueError, RecursionError) as exc:
        data = _dumps(_portable(payload, exc))
    view = memoryview(data)
    while view:
        view = view[os.write(out, view) :]


def _import(request: dict[str, Any]) -> Any:
    """The handler's module. Its top-level package, and this package (which a handler
    imports for ``ToolRetry`` and ``ToolErrorReply``), are loaded from where the parent
    found them: finding them through sys.path would list the directory that holds them,
    which the tool may not read (Landlock) or which holds nothing else (bubblewrap)."""
    import importlib

    sys.meta_path.insert(0, _Located([entry for entry in request["located"] if entry]))
    return importlib.import_module(request["module"])


class _Located:
    """A meta path finder for top-level packages at known places, each found only when
    first imported (a handler that never imports this package does not pay for it)."""

    def __init__(self, entries: list[dict[str, Any]]) -> None:
        self.entries = {entry["name"]: entry for entry in entries}

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        entry = self.entries.get(name)
        if entry is None:
            return None
        import importlib.util

        return importlib.util.spec_from_file_location(
            name, entry["origin"], submodule_search_locations=entry["locations"]
        )


async def _await(value: Any) -> Any:
    return await value


# --------------------------------------------------------------------------------------
# The supervisor.


def _process_table() -> dict[int, tuple[int, int]]:
    """pid -> (parent pid, threads), for every process /proc shows."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
            table[int(name)] = (int(fields[1]), int(fields[17]))
        except (OSError, IndexError, ValueError):
            continue
    return table


def _tree(root: int, table: dict[int, tuple[int, int]]) -> set[int]:
    found = {root} if root in table else set()
    grew = True
    while grew:
        more = {pid for pid, (parent, _) in table.items() if parent in found and pid not in found}
        found |= more
        grew = bool(more)
    return found


def _kill_below_me() -> None:
    """Stop, then kill, every process below this subreaper, until none is left (a stopped
    process cannot fork, so a fork bomb cannot outrun the loop)."""
    me = os.getpid()
    while True:
        below = _tree(me, _process_table()) - {me}
        for pid in below:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        for pid in below:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                os.kill(pid, signal.SIGCONT)
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                break
        if not below:
            return


def _from_status(
    status: int, cpu_used: float, limits: dict[str, Any], stderr: str
) -> dict[str, Any]:
    """The violation for a worker that ended without writing a result."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number == signal.SIGXCPU or (
            number == signal.SIGKILL and cpu_used >= max(1, round(limits["cpu"])) - 0.05
        ):
            return _violation(
                "cpu_limit", "the tool used more CPU time than allowed", signal=number
            )
        if number == signal.SIGXFSZ:
            return _violation(
                "file_size_limit", "the tool wrote a file past its size limit", signal=number
            )
        return _violation(
            "crash", f"the tool's process died of signal {number}", signal=number, stderr=stderr
        )
    return _violation(
        "crash",
        f"the tool's process exited with status {os.waitstatus_to_exitcode(status)}",
        stderr=stderr,
    )


def _dumps(value: Any) -> bytes:
    # Strict JSON: NaN and infinities are refused, as the parent's orjson would not read
    # them back as numbers.
    return json.dumps(value, allow_nan=False, separators=(",", ":")).encode()


def _setup(request: dict[str, Any]) -> Any:
    """What the supervisor (cold) or the zygote (warm) does first: the handler's path, a
    subreaper, not dumpable. Returns libc."""
    # -I -S left only the standard library: the handler's imports need the parent's path.
    sys.path[:0] = request["sys_path"]
    libc = _libc()
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    # Not dumpable: the worker (same uid, under bubblewrap the same namespaces) cannot
    # ptrace the supervisor to shed its rlimits, nor read its memory; the worker makes
    # itself dumpable again, so that it may read its own /proc entries.
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    return libc


def _supervise(request: dict[str, Any], libc: Any, result: int, *, warm: bool) -> None:
    """Fork the worker for ``request``, wait for it, kill what it left, write the reply to
    ``result``: one JSON object (cold), or two frames, the worker's output tail and the
    reply (warm: the worker's output is captured here, the zygote's stderr goes nowhere)."""
    os.chdir(request["cwd"])
    read_end, write_end = os.pipe()
    output = os.pipe() if warm else None
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(read_end)
            os.close(result)
            if output is not None:
                # Only what this call needs: no fd of the zygote's survives into the tool.
                os.close(output[0])
                os.dup2(output[1], 1)
                os.dup2(output[1], 2)
                os.close(output[1])
            # The worker dies with the supervisor, whatever killed it.
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
            _work(request, write_end)
        except BaseException:
            code = 70
        finally:
            os._exit(code)
    os.close(write_end)
    tail = bytearray()
    if output is not None:
        os.close(output[1])
        os.set_blocking(output[0], False)
    # Readable when the worker has exited, even while a process it left holds the pipe.
    exited = os.pidfd_open(pid)
    limit = int(request["max_result_bytes"])
    processes = int(request["limits"]["processes"])
    watch = bool(request["watch"])
    chunks: list[bytes] = []
    size = 0
    over = False
    reaped: tuple[int, Any] | None = None
    watched = [read_end, exited] if output is None else [read_end, exited, output[0]]
    while True:
        # Data, the end of the pipe, or (with "watch") the next count of the worker's
        # tree: where neither a pids cgroup nor a user namespace makes the limit exact
        # (Landlock: RLIMIT_NPROC counts the whole uid), the supervisor counts the tool's
        # own processes and threads itself.
        ready, _, _ = select.select(watched, [], [], _WATCH_SECONDS if watch else None)
        if output is not None and output[0] in ready:
            if not _read_tail(output[0], tail):
                watched.remove(output[0])
            continue
        if read_end in ready:
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            if size <= limit:
                chunks.append(chunk)
            size += len(chunk)
            continue
        if watch and exited not in ready:
            table = _process_table()
            if sum(table[pid][1] for pid in _tree(pid, table)) > processes:
                over = True
                break
            continue
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            reaped = (status, usage)
            # A process the handler left may hold the pipe open: the worker's end is the
            # end; what it wrote is read without waiting.
            os.set_blocking(read_end, False)
            with contextlib.suppress(BlockingIOError):
                while size <= limit and (chunk := os.read(read_end, 65536)):
                    chunks.append(chunk)
                    size += len(chunk)
            break
    os.close(read_end)
    os.close(exited)
    if over:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if reaped is None:
        _, status, usage = os.wait4(pid, 0)
    else:
        status, usage = reaped
    _kill_below_me()
    if output is not None:
        _read_tail(output[0], tail)  # all its writers are dead now: the rest, at once
        os.close(output[0])
    data = b"".join(chunks)
    if over:
        out = _dumps(
            _violation(
                "process_limit",
                f"the tool started more than {processes} processes or threads and was stopped",
            )
        )
    elif size > limit:
        out = _dumps(_violation("bad_result", f"the tool's result is larger than {limit} bytes"))
    elif data:
        out = data
    else:
        out = _dumps(_from_status(status, usage.ru_utime + usage.ru_stime, request["limits"], ""))
    if output is None:
        _write_all(result, out)
    else:
        _write_all(result, _frame(bytes(tail)) + _frame(out))


def _read_tail(fd: int, tail: bytearray) -> bool:
    """Read what is there into ``tail`` (its last _TAIL_BYTES kept); False at the end."""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        tail += chunk
        del tail[: max(0, len(tail) - _TAIL_BYTES)]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _frame(data: bytes) -> bytes:
    return len(data).to_bytes(HEADER, "big") + data


def _read_exactly(fd: int, size: int) -> bytes | None:
    """``size`` bytes from ``fd``, or None at its end."""
    parts: list[bytes] = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        size -= len(chunk)
    return b"".join(parts)


def main() -> None:
    if sys.argv[1:] == ["--zygote"]:
        _zygote()
        return
    raw = sys.stdin.buffer.read()
    request: dict[str, Any] = json.loads(raw)
    libc = _setup(request)
    # The result goes out on the original stdout; what the handler prints goes to stderr.
    result = os.dup(1)
    os.dup2(2, 1)
    _supervise(request, libc, result, warm=False)


# --------------------------------------------------------------------------------------
# The zygote (the warm worker): one per tool, forking a fresh supervisor per call.


def _residue() -> list[Any]:
    """What a call could leave in the zygote's namespaces that outlives its processes, to
    compare with the zygote's start: SysV IPC objects, POSIX message queues, files under
    /dev (a tmpfs, writable), keys. Under bubblewrap only (its namespaces are the zygote's
    own); under Landlock these are the machine's, shared by the cold path alike."""
    found: list[Any] = []
    for name in ("/proc/sysvipc/shm", "/proc/sysvipc/msg", "/proc/sysvipc/sem"):
        with contextlib.suppress(OSError), open(name, "rb") as file:
            found.append(file.read().splitlines()[1:])
    for top in ("/dev", "/dev/mqueue"):
        for folder, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "pts")  # ptys go with their processes
            for entry in sorted(files + dirs):
                with contextlib.suppress(OSError):
                    info = os.lstat(os.path.join(folder, entry))
                    found.append((folder, entry, info.st_mode, info.st_size, info.st_mtime_ns))
    with contextlib.suppress(OSError), open("/proc/keys", "rb") as file:
        # The key's id, type, description and summary, not its usage count.
        found.append(sorted(tuple(line.split()[:1] + line.split()[7:]) for line in file))
    return found


def _zygote() -> None:
    """Serve calls of one tool: read a boot request (the tool's static request), confine
    this process as the worker will be (Landlock: the same rules plus /proc, for the
    supervisor's sweep), import the handler, answer ``ready``; then per call, read a frame
    header, fork a supervisor that reads the request itself (so no call's arguments or
    result ever pass through this process's memory, which every later call inherits),
    wait for it, check that nothing of the call is left, and answer ``ready`` again.
    Anything unexpected ends the zygote: the engine then discards it."""
    boot = _read_exactly(0, int.from_bytes(_read_exactly(0, HEADER) or b"", "big"))
    if boot is None:
        return
    request: dict[str, Any] = json.loads(boot)
    if request["landlock"] and os.geteuid() != 0 and own_user_namespace():
        # Before Landlock, which would refuse the writes to /proc/self/*_map, and while
        # this process may still write its own /proc entries (not yet undumpable). Each
        # call's tasks then share the namespace with the zygote and its supervisor.
        _WARM_NAMESPACE_TASKS.append(2)
    libc = _setup(request)
    result = os.dup(1)
    os.dup2(2, 1)
    if request["landlock"]:
        if os.geteuid() == 0:
            drop_capabilities()
        apply_landlock([*request["read"], "/proc"], request["write"], network=request["network"])
    os.chdir(request["cwd"])
    # A failed import is left for each call's worker to report, as in a cold call.
    with contextlib.suppress(BaseException):
        _import(request)
    refusal = None
    if len(os.listdir("/proc/self/task")) > 1:
        refusal = "the handler's module starts a thread at import"
    elif _tree(os.getpid(), _process_table()) != {os.getpid()}:
        refusal = "the handler's module starts a process at import"
    if refusal is not None:
        _write_all(result, _frame(_dumps({"refused": refusal})))
        return
    baseline = _residue() if request["namespaced"] else None
    ready = _frame(_dumps({"ready": True}))
    _write_all(result, ready)
    while True:
        header = _read_exactly(0, HEADER)
        if header is None:
            return
        size = int.from_bytes(header, "big")
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                # Not inherited through fork: this call's orphans must come to its
                # supervisor; and it dies with the zygote.
                libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
                libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
                call = _read_exactly(0, size)
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.close(null)
                if call is None:
                    code = 3
                else:
                    _supervise(json.loads(call), libc, result, warm=True)
            except BaseException:
                code = 70
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        _kill_below_me()
        if status != 0 or (baseline is not None and _residue() != baseline):
            return
        _write_all(result, ready)


if __name__ == "__main__":
    main()
