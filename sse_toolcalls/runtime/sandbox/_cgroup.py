"""A pids cgroup per call, for root: RLIMIT_NPROC does not bind uid 0, a cgroup's
``pids.max`` binds everyone. Cgroup v1's pids hierarchy, or v2 where the pids controller
is enabled for our group's children."""

from __future__ import annotations

import contextlib
import functools
import os
import uuid


@functools.cache
def pids_root() -> str | None:
    """The directory under which this process may make a pids cgroup, or ``None``."""
    try:
        with open("/proc/self/mounts", encoding="utf-8") as file:
            mounts = [line.split() for line in file]
        with open("/proc/self/cgroup", encoding="utf-8") as file:
            groups = [line.rstrip("\n").split(":", 2) for line in file]
    except OSError:
        return None
    for _, controllers, path in groups:
        if "pids" in controllers.split(","):
            for fields in mounts:
                if fields[2] == "cgroup" and "pids" in fields[3].split(","):
                    return _usable(fields[1] + path)
    for hierarchy, _, path in groups:
        if hierarchy == "0":
            for fields in mounts:
                if fields[2] == "cgroup2":
                    root = fields[1] + path
                    try:
                        with open(os.path.join(root, "cgroup.subtree_control")) as file:
                            enabled = file.read().split()
                    except OSError:
                        return None
                    return _usable(root) if "pids" in enabled else None
    return None


def _usable(path: str) -> str | None:
    return path if os.access(path, os.W_OK) else None


class PidsCgroup:
    """One call's cgroup: made with a limit, given the call's processes, removed after."""

    def __init__(self, root: str, limit: int) -> None:
        self.path = os.path.join(root, f"sse-toolcalls-{uuid.uuid4().hex}")
        os.mkdir(self.path)
        with open(os.path.join(self.path, "pids.max"), "w", encoding="ascii") as file:
            file.write(str(limit))

    def add(self, pid: int) -> None:
        with (
            contextlib.suppress(ProcessLookupError, OSError),
            open(os.path.join(self.path, "cgroup.procs"), "w", encoding="ascii") as file,
        ):
            file.write(str(pid))

    def holds(self, pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/cgroup", encoding="utf-8") as file:
                return any(line.rstrip("\n").endswith(os.path.basename(self.path)) for line in file)
        except OSError:
            return True  # gone: nothing left to move

    def members(self) -> list[int]:
        try:
            with open(os.path.join(self.path, "cgroup.procs"), encoding="ascii") as file:
                return [int(line) for line in file if line.strip()]
        except OSError:
            return []

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            os.rmdir(self.path)
