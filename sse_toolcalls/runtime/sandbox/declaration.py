"""What a sandboxed tool declares it may touch, and how its handler is found in the child.

Both are plain frozen values checked when they are made, so a registry can refuse a bad
declaration at registration time, long before a model asks for the tool.
"""

from __future__ import annotations

import importlib
import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..._checks import check_quantity
from ..._faces import publish
from ..errors import SandboxDeclarationError

__all__ = ["HandlerRef", "Sandbox", "handler_ref", "parse_size"]

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "m": 1000**2,
    "mb": 1000**2,
    "g": 1000**3,
    "gb": 1000**3,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# Defaults for what a tool did not declare: enough for a small handler that reads a file
# or calls an API, small enough that a runaway one is stopped within seconds.
DEFAULT_TIMEOUT = 30.0
"""Seconds of wall time per call."""
DEFAULT_MEMORY = 256 * 1024**2
"""Bytes of address space (RLIMIT_AS): the interpreter alone maps about 30 MiB."""
DEFAULT_CPU = 10.0
"""Seconds of CPU time (RLIMIT_CPU)."""
DEFAULT_PROCESSES = 16
"""Processes and threads the tool may have at once, itself included (RLIMIT_NPROC)."""
DEFAULT_FILE_SIZE = 64 * 1024**2
"""Largest file the tool may write, in bytes (RLIMIT_FSIZE)."""


def parse_size(value: int | str, *, what: str = "size") -> int:
    """Bytes from an int or a string such as ``"256 MiB"``, ``"1.5 GiB"``, ``"64MB"``.

    Binary units (KiB, MiB, GiB) are powers of 1024, decimal ones (kB, MB, GB, or K, M, G)
    powers of 1000. Raises :class:`~sse_toolcalls.SandboxDeclarationError` for anything
    else, or for a size that is not positive.
    """
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise SandboxDeclarationError(f"{what}: expected bytes or a string like '256 MiB'")
    if isinstance(value, int):
        size = value
    else:
        match = _SIZE.fullmatch(value)
        unit = _UNITS.get(match.group(2).lower()) if match else None
        if match is None or unit is None:
            raise SandboxDeclarationError(
                f"{what}: cannot read {value!r} (write e.g. '256 MiB', '1 GiB', '64 MB')"
            )
        scaled = float(match.group(1)) * unit
        if not math.isfinite(scaled):  # hundreds of digits: floor(inf) raised OverflowError
            raise SandboxDeclarationError(f"{what}: {value!r} is past any size")
        size = math.floor(scaled)
    if size <= 0:
        raise SandboxDeclarationError(f"{what}: must be positive, got {value!r}")
    return size


def _paths(values: Sequence[str | os.PathLike[str]], what: str) -> tuple[str, ...]:
    if isinstance(values, str | os.PathLike):
        raise SandboxDeclarationError(f"{what}: expected a list of paths, got one path")
    out: list[str] = []
    for value in values:
        path = os.fspath(value)
        if not path or "\0" in path:
            raise SandboxDeclarationError(f"{what}: {path!r} is not a path")
        out.append(path)
    return tuple(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class Sandbox:
    """A tool's declared surface; everything not declared is denied.

    Relative paths are resolved in the call's own working directory, which the engine
    creates empty for each call (it is always readable and writable) and removes after.
    """

    read: Sequence[str | os.PathLike[str]] = ()
    """Files and directories the tool may read (directories with everything below them)."""
    write: Sequence[str | os.PathLike[str]] = ()
    """Files and directories the tool may read, create, change and delete."""
    network: bool = False
    """Whether the tool may open network connections (TCP, and under bubblewrap any)."""
    timeout: float = DEFAULT_TIMEOUT
    """Wall-clock seconds per call; past it the whole process tree is killed."""
    memory: int | str = DEFAULT_MEMORY
    """Address-space cap, bytes or a string such as ``"256 MiB"`` (read as bytes)."""
    cpu: float = DEFAULT_CPU
    """CPU seconds per call."""
    processes: int = DEFAULT_PROCESSES
    """Processes (and threads) at once, the handler's own included."""
    file_size: int | str = DEFAULT_FILE_SIZE
    """Largest file the tool may write, bytes or a string such as ``"64 MiB"``."""
    env: Sequence[str] = ()
    """Names of the environment variables passed on; no other variable reaches the tool."""
    memory_bytes: int = field(init=False, default=0)
    """``memory`` in bytes (computed)."""
    file_size_bytes: int = field(init=False, default=0)
    """``file_size`` in bytes (computed)."""

    def __post_init__(self) -> None:
        # Lists are accepted and frozen, so the declaration is hashable and cannot change
        # under the engine after it was checked.
        object.__setattr__(self, "read", _paths(self.read, "read"))
        object.__setattr__(self, "write", _paths(self.write, "write"))
        if isinstance(self.env, str):
            raise SandboxDeclarationError("env: expected a list of variable names")
        env = tuple(self.env)
        for name in env:
            if not isinstance(name, str) or not _ENV_NAME.fullmatch(name):
                raise SandboxDeclarationError(f"env: {name!r} is not a variable name")
        object.__setattr__(self, "env", env)
        if not isinstance(self.network, bool):
            raise SandboxDeclarationError("network: expected True or False")
        for what, number in (("timeout", self.timeout), ("cpu", self.cpu)):
            # One owner of number checks: math.isfinite alone raised OverflowError for
            # an int past the float range.
            check_quantity(what, number, positive=True, error=SandboxDeclarationError)
        if isinstance(self.processes, bool) or not isinstance(self.processes, int):
            raise SandboxDeclarationError("processes: expected a whole number")
        if self.processes < 1:
            raise SandboxDeclarationError("processes: at least 1 (the handler itself)")
        object.__setattr__(self, "memory_bytes", parse_size(self.memory, what="memory"))
        object.__setattr__(self, "file_size_bytes", parse_size(self.file_size, what="file_size"))


@dataclass(frozen=True, slots=True, kw_only=True)
class HandlerRef:
    """Where the child finds a handler: a module path and a qualified name in it."""

    module: str
    """The module's dotted import path."""
    qualname: str
    """The handler's qualified name in the module (``fn`` or ``Class.method``)."""


def handler_ref(handler: Callable[..., Any] | HandlerRef) -> HandlerRef:
    """The :class:`HandlerRef` of a module-level function, checked importable now.

    A sandboxed handler runs in a fresh interpreter that imports it by module path, so it
    must be reachable from its module: lambdas, closures, functions defined inside other
    functions and functions of the ``__main__`` script are refused.

    Raises:
        SandboxDeclarationError: the handler cannot be imported by its module path.
    """
    if isinstance(handler, HandlerRef):
        ref = handler
        target: object = None
    else:
        module = getattr(handler, "__module__", None)
        qualname = getattr(handler, "__qualname__", None)
        if not isinstance(module, str) or not isinstance(qualname, str):
            raise SandboxDeclarationError(
                f"{handler!r}: a sandboxed handler must be a module-level function"
            )
        if "<lambda>" in qualname or "<locals>" in qualname:
            raise SandboxDeclarationError(
                f"{module}.{qualname}: a lambda or a function defined inside another "
                "function cannot be imported by the sandbox's child process; define it at "
                "module level"
            )
        if module == "__main__":
            raise SandboxDeclarationError(
                f"{qualname}: defined in the __main__ script, which the child cannot import; "
                "move it to a module"
            )
        ref = HandlerRef(module=module, qualname=qualname)
        target = handler
    try:
        found: object = importlib.import_module(ref.module)
        for part in ref.qualname.split("."):
            found = getattr(found, part)
    except Exception as exc:  # any import-time failure is the declaration's problem
        raise SandboxDeclarationError(
            f"{ref.module}.{ref.qualname}: cannot be imported by module path ({exc})"
        ) from exc
    if target is not None and found is not target:
        raise SandboxDeclarationError(
            f"{ref.module}.{ref.qualname}: the name in the module is another object than the "
            "handler given (replaced by a decorator?); register the module-level function"
        )
    if not callable(found):
        raise SandboxDeclarationError(f"{ref.module}.{ref.qualname}: not callable")
    return ref


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
