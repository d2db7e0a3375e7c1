"""The sandbox's backends: one module each behind :class:`~.base.SandboxBackend`, and
this registry, the one list of them (best first). Adding a backend is a module here, a
line in :data:`BACKENDS` and its name in ``engine.Backend`` (a ``Literal`` for typing;
a test checks the two agree)."""

from __future__ import annotations

import os

from .. import _cgroup
from ..declaration import Sandbox
from .base import SandboxBackend, View
from .bubblewrap import BUBBLEWRAP
from .landlock import LANDLOCK
from .unsandboxed import UNSANDBOXED

__all__ = ["BACKENDS", "UNSANDBOXED", "SandboxBackend", "View", "by_name", "unavailable"]

BACKENDS: tuple[SandboxBackend, ...] = (BUBBLEWRAP, LANDLOCK)
"""Every backend, best first: ``"auto"`` takes the first that works."""

_BY_NAME = {backend.name: backend for backend in (*BACKENDS, UNSANDBOXED)}


def by_name(name: str) -> SandboxBackend:
    """The backend called ``name`` (as :attr:`SandboxResult.backend` gives it).

    Raises KeyError for a name no backend has."""
    return _BY_NAME[name]


def unavailable(backend: SandboxBackend, sandbox: Sandbox) -> str | None:
    """Why ``backend`` cannot enforce ``sandbox`` here, or ``None`` when it can."""
    if os.geteuid() == 0 and _cgroup.pids_root() is None:
        return "as root, processes can only be limited by a pids cgroup, and none is writable"
    return backend.unavailable(sandbox)
