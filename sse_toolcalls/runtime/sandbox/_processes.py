"""A call's process tree as /proc shows it: finding it, enrolling it in a pids cgroup,
killing it and waiting until it is gone. Used by the cold path (``engine``) and the warm
one (``warm``) alike."""

from __future__ import annotations

import contextlib
import os
import signal
import time

from . import _cgroup

__all__ = ["descendants", "enrol", "gone", "kill_tree", "process_table", "signal_all", "wait_gone"]

KILL_WAIT = 2.0
"""Seconds to wait for a killed tree to be gone before giving up on the check."""


def process_table() -> dict[int, int]:
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


def descendants(root: int) -> set[int]:
    """``root`` and every process below it (empty once ``root`` is gone)."""
    table = process_table()
    found = {root} if root in table else set()
    grew = True
    while grew:
        more = {pid for pid, parent in table.items() if parent in found and pid not in found}
        found |= more
        grew = bool(more)
    return found


def signal_all(pids: set[int], number: int) -> None:
    """Send signal ``number`` to each of ``pids`` that is still there."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, number)


def kill_tree(root: int) -> set[int]:
    """Stop the whole tree under ``root`` (stopped processes cannot fork), until no new
    one appears, then kill it all. Returns the pids killed."""
    stopped: set[int] = set()
    while True:
        tree = descendants(root)
        new = tree - stopped
        if not new:
            break
        signal_all(new, signal.SIGSTOP)
        stopped |= new
    signal_all(stopped, signal.SIGKILL)
    # A stopped process only dies once it is continued.
    signal_all(stopped, signal.SIGCONT)
    return stopped


def enrol(group: _cgroup.PidsCgroup, root: int) -> None:
    """Move the child's whole tree into ``group`` before it is sent the request: until then
    it runs no code of the tool, and what it starts later is born in the group."""
    while True:
        outside = [pid for pid in sorted(descendants(root)) if not group.holds(pid)]
        if not outside:
            return
        for pid in outside:
            group.add(pid)


def gone(pid: int) -> bool:
    """Whether ``pid`` has ended (a zombie counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return True


def wait_gone(pids: set[int], group: _cgroup.PidsCgroup | None) -> None:
    """Wait until the killed tree is gone, and empty and remove the call's cgroup."""
    deadline = time.monotonic() + KILL_WAIT
    while any(not gone(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.005)
    if group is not None:
        # Whatever escaped the tree is still in the cgroup.
        while (left := group.members()) and time.monotonic() < deadline:
            signal_all(set(left), signal.SIGKILL)
            time.sleep(0.005)
        group.remove()
