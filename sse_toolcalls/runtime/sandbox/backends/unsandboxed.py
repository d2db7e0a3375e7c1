"""No confinement: a plain child with rlimits and the timeout only, used only where the
caller allowed it (``allow_unsandboxed=True``) and no backend works. Never chosen by name
or by ``"auto"``."""

from __future__ import annotations

from ..declaration import Sandbox
from .base import View

__all__ = ["UNSANDBOXED", "Unsandboxed"]


class Unsandboxed:
    """The :class:`~.base.SandboxBackend` of a plain child."""

    name = "unsandboxed"
    enforces = "rlimits and the timeout only: the tool sees what this process sees"
    warm = False  # a pool only keeps confined zygotes
    counts_own_tasks = False
    worker_landlock = False
    own_namespaces = False

    def unavailable(self, sandbox: Sandbox) -> str | None:
        return None

    def grants(self, visible: list[str], writable: list[str]) -> None:
        return None

    def command(self, sandbox: Sandbox, view: View, *, warm: bool) -> list[str]:
        return []

    def cgroup_overhead(self, *, warm: bool) -> int:
        return 2 if warm else 1


UNSANDBOXED = Unsandboxed()
