"""bubblewrap: new namespaces (mount, network, PID, IPC, user), a read-only view of only
the declared paths, capabilities dropped; the child's worker adds rlimits."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

from ..declaration import Sandbox
from .base import SYSTEM, View

__all__ = ["BUBBLEWRAP", "Bubblewrap", "binary"]


@functools.cache
def binary() -> str | None:
    """The bwrap binary, when it can actually make a sandbox here (as this user)."""
    path = shutil.which("bwrap")
    if path is None:
        return None
    probe = [path, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    for root in SYSTEM:
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


class Bubblewrap:
    """The :class:`~.base.SandboxBackend` of bubblewrap (``bwrap``)."""

    name = "bwrap"
    enforces = (
        "only the declared paths exist (read-only unless declared writable), no network "
        "unless declared, own PID/IPC/user namespaces, no capabilities"
    )
    warm = True
    # bwrap's user namespace makes RLIMIT_NPROC count the sandbox's tasks only.
    counts_own_tasks = True
    worker_landlock = False
    own_namespaces = True

    def unavailable(self, sandbox: Sandbox) -> str | None:
        return None if binary() is not None else "bubblewrap is missing or cannot run here"

    def grants(self, visible: list[str], writable: list[str]) -> None:
        return None  # bwrap's own /dev holds the device nodes an interpreter opens

    def command(self, sandbox: Sandbox, view: View, *, warm: bool) -> list[str]:
        found = binary()
        assert found is not None  # checked by the engine's choice
        argv = [found, "--unshare-all"]
        if sandbox.network:
            argv.append("--share-net")
        argv += ["--die-with-parent", "--new-session", "--cap-drop", "ALL"]
        # No tmpfs on /tmp: a write there would "succeed" into a throwaway copy; the
        # working directory is the only scratch space.
        argv += ["--proc", "/proc", "--dev", "/dev"]
        if warm:
            # The IPC namespace outlives a call: its message queues must be visible for the
            # zygote to see that a call left none. Mounted before /dev is made read-only.
            argv += ["--mqueue", "/dev/mqueue"]
        for root in SYSTEM:
            if os.path.islink(root):
                argv += ["--symlink", os.readlink(root), root]
            elif os.path.isdir(root):
                argv += ["--ro-bind", root, root]
        # Each declared path is bound where the handler names it; its source is resolved,
        # so a declared symlink gives what it points to, and nothing else.
        for path in view.system + view.read:
            argv += ["--ro-bind-try", os.path.realpath(path), path]
        for path in view.write:
            argv += ["--bind-try", os.path.realpath(path), path]
        # bwrap's /dev is a writable tmpfs (its /dev/shm a plain directory on it) with no
        # size limit: a tool could fill it past its memory cap, since tmpfs pages are not
        # its address space. Read-only, as the root; the device nodes (/dev/null, urandom)
        # still work.
        cwd = view.cwd
        argv += ["--bind", cwd, cwd, "--remount-ro", "/", "--remount-ro", "/dev", "--chdir", cwd]
        return argv

    def cgroup_overhead(self, *, warm: bool) -> int:
        # bwrap outside, bwrap as the namespace's init, the supervisor (and the zygote).
        return 4 if warm else 3


BUBBLEWRAP = Bubblewrap()
