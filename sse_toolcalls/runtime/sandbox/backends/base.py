"""The one interface every sandbox backend implements, and what they share.

A backend is one module of this package holding one object that satisfies
:class:`SandboxBackend`; the registry (``backends/__init__.py``) lists them best first.
The engine, the warm pool and the child's request ask the backend, never its name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..declaration import Sandbox

__all__ = ["SYSTEM", "SandboxBackend", "View"]

SYSTEM = ("/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")
"""What a dynamically linked interpreter needs: the loader, libc, libpython."""


@dataclass(frozen=True, slots=True, kw_only=True)
class View:
    """The filesystem a call may see, resolved for one call (absolute paths)."""

    read: list[str]
    """The declared readable paths."""
    write: list[str]
    """The declared writable paths."""
    system: list[str]
    """What the interpreter and (with ``network``) name resolution need, read-only."""
    cwd: str
    """The call's own working directory (readable and writable)."""


class SandboxBackend(Protocol):
    """One way to confine a call's child process.

    Everything the rest of the sandbox needs to know about a backend is here: whether it
    works on this machine for a declaration (and why not), how its child is launched, and
    what the child must do itself.
    """

    @property
    def name(self) -> str:
        """Its name: asked for by ``backend=`` and ``SSE_TOOLCALLS_SANDBOX_BACKEND``, and
        reported in :attr:`SandboxResult.backend`."""
        ...

    @property
    def enforces(self) -> str:
        """What it enforces, in one sentence (for docs and error messages)."""
        ...

    @property
    def warm(self) -> bool:
        """Whether a :class:`WarmPool` may keep zygotes confined by it."""
        ...

    @property
    def counts_own_tasks(self) -> bool:
        """Whether RLIMIT_NPROC counts only the sandbox's tasks (its own user namespace);
        else the child's supervisor counts the tool's processes itself."""
        ...

    @property
    def worker_landlock(self) -> bool:
        """Whether the child's worker confines itself with Landlock (``_child.py``)."""
        ...

    @property
    def own_namespaces(self) -> bool:
        """Whether the child runs in namespaces of its own (a warm zygote then checks that
        a call left nothing in them)."""
        ...

    def unavailable(self, sandbox: Sandbox) -> str | None:
        """Why it cannot enforce ``sandbox`` here, or ``None`` when it can."""
        ...

    def grants(self, visible: list[str], writable: list[str]) -> None:
        """Add to the child's view what its interpreter opens under this backend (in
        place); ``visible`` and ``writable`` are the paths the child is told about."""
        ...

    def command(self, sandbox: Sandbox, view: View, *, warm: bool) -> list[str]:
        """The command line that runs the child's interpreter under it (empty: directly)."""
        ...

    def cgroup_overhead(self, *, warm: bool) -> int:
        """Tasks of ours in a call's pids cgroup besides the tool's (root only)."""
        ...
