"""Landlock: the child's worker confines itself (only the declared paths, no TCP unless
declared, no signals or abstract sockets outside); rlimits as under bubblewrap."""

from __future__ import annotations

import functools

from .. import _child
from ..declaration import Sandbox
from .base import View

__all__ = ["LANDLOCK", "Landlock", "abi"]


@functools.cache
def abi() -> int:
    """The kernel's Landlock ABI version, 0 where it is missing (asked once)."""
    return _child.landlock_abi()


class Landlock:
    """The :class:`~.base.SandboxBackend` of Landlock (no helper binary, no namespaces)."""

    name = "landlock"
    enforces = (
        "only the declared paths can be opened (read or write as declared), no TCP bind or "
        "connect unless declared (ABI 4), no signals or abstract sockets outside (ABI 6)"
    )
    warm = True
    counts_own_tasks = False
    worker_landlock = True
    own_namespaces = False

    def unavailable(self, sandbox: Sandbox) -> str | None:
        version = abi()
        if version < 1:
            return "Landlock is not available in this kernel"
        if not sandbox.network and version < 4:
            return f"Landlock ABI {version} cannot refuse TCP (ABI 4 can)"
        return None

    def grants(self, visible: list[str], writable: list[str]) -> None:
        # What an interpreter opens that is no one's secret.
        visible += ["/dev/urandom", "/dev/zero"]
        writable.append("/dev/null")

    def command(self, sandbox: Sandbox, view: View, *, warm: bool) -> list[str]:
        return []  # the worker confines itself, see _child.apply_landlock

    def cgroup_overhead(self, *, warm: bool) -> int:
        return 2 if warm else 1  # the supervisor (and the zygote)


LANDLOCK = Landlock()
