"""One call's exchange with its child, cold or warm: the child's working directory, its
command line and request, and the reading of its reply. The backend decides how the child
is launched and what it does itself (``backends/``); this module only asks it."""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from ... import _json
from ...calls import MediaPart
from .._media_json import part_from_json
from ..errors import ToolErrorReply, ToolRetry
from . import _cgroup, _child
from .backends import SandboxBackend, View
from .backends.base import SYSTEM
from .declaration import HandlerRef, Sandbox
from .results import Violation, ViolationKind

__all__ = [
    "CHILD",
    "MAX_RESULT_BYTES",
    "absolute",
    "decode",
    "interpreter_paths",
    "make_workdir",
    "prepare",
    "violation",
]

MAX_RESULT_BYTES = 16 * 1024**2
"""Largest JSON result a handler may return: a tool result goes back into a model's
context, which holds far less; past it the call is a ``bad_result``."""

CHILD = Path(_child.__file__).resolve()
"""The child's script, run by path (see its top comment)."""
_PACKAGE = Path(_json.__file__).resolve().parent
"""This package's top directory, read-only in the child (a handler imports ``ToolRetry``
from it). Found from a module at the top, not by counting parents of the child's script:
that count broke when the sandbox moved one level down (``runtime/sandbox``)."""
_NETWORK_FILES = (
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/ssl",
    "/etc/gai.conf",
)
"""Name resolution and certificates, bound read-only only for ``network=True``."""


def absolute(path: str, cwd: str) -> str:
    """``path`` as the call sees it: relative to its working directory ``cwd``."""
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))


def interpreter_paths(ref: HandlerRef) -> list[str]:
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


def make_workdir() -> str:
    """A new, empty working directory for one call (or one zygote)."""
    return tempfile.mkdtemp(prefix="sse-toolcalls-call-")


def violation(kind: ViolationKind, message: str, **fields: Any) -> Violation:
    """A :class:`Violation` (a shorthand)."""
    return Violation(kind=kind, message=message, **fields)


def prepare(
    sandbox: Sandbox,
    ref: HandlerRef,
    arguments: dict[str, Any],
    backend: SandboxBackend,
    cwd: str,
    *,
    warm: bool = False,
) -> tuple[list[str], bytes] | Violation:
    """The child's command line and request (blocking: it resolves paths), or the
    violation of arguments that are not JSON. With ``warm``, the zygote's."""
    here = os.getcwd()
    read = [absolute(os.fspath(path), cwd) for path in sandbox.read]
    write = [absolute(os.fspath(path), cwd) for path in sandbox.write]
    system = interpreter_paths(ref)
    if sandbox.network:
        system += [path for path in _NETWORK_FILES if os.path.exists(path)]
    visible = [*(p for p in SYSTEM if os.path.exists(p)), *system, *read]
    writable = [*write, cwd]
    backend.grants(visible, writable)
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
        # What the child does itself, as the backend says (the child never sees its name).
        "landlock": backend.worker_landlock,
        "namespaced": backend.own_namespaces,
        "limits": {
            "memory": sandbox.memory_bytes,
            "cpu": sandbox.cpu,
            "processes": sandbox.processes,
            "file_size": sandbox.file_size_bytes,
        },
        "max_result_bytes": MAX_RESULT_BYTES,
        # Where RLIMIT_NPROC counts only the sandbox's tasks, and for root's calls (a pids
        # cgroup), the kernel counts; elsewhere the supervisor does.
        "watch": not backend.counts_own_tasks and not (os.geteuid() == 0 and _cgroup.pids_root()),
    }
    try:
        payload = _json.dumps(request)
    except TypeError as exc:
        return violation(ViolationKind.BAD_RESULT, f"the call's arguments are not JSON: {exc}")
    python = [sys.executable, "-I", "-S", str(CHILD), *(["--zygote"] if warm else [])]
    view = View(read=read, write=write, system=system, cwd=cwd)
    return [*backend.command(sandbox, view, warm=warm), *python], payload


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


def decode(out: bytes, returncode: int | None, stderr: str) -> tuple[Any, Violation | None]:
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
            return None, violation(
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
        return None, violation(
            ViolationKind.BAD_RESULT, "the tool's error answer is malformed", stderr=stderr
        )
    if isinstance(reply, dict) and isinstance(reply.get("violation"), dict):
        raw: dict[str, Any] = reply["violation"]
        try:
            kind = ViolationKind(str(raw.get("kind")))
        except ValueError:
            kind = ViolationKind.CRASH
        return None, violation(
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
    return None, violation(
        ViolationKind.CRASH,
        f"the tool's sandbox failed to start or died (exit status {returncode})",
        signal=number,
        stderr=stderr,
    )
