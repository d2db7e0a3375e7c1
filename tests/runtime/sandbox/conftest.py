"""Fixtures for the sandbox's tests: both backends, and the processes a call left."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator

import pytest

from sse_toolcalls.runtime.sandbox import _exchange, available_backends

CHILD = str(_exchange.CHILD).encode()

# This test process adopts its orphaned descendants (PR_SET_CHILD_SUBREAPER), so that a
# sandbox process that outlived its parent is still this process's descendant, not
# init's: sandbox_pids() then counts this process's own, and two pytest-xdist workers
# never count each other's running children as left behind (36 failures under -n 2).
_PR_SET_CHILD_SUBREAPER = 36
if ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")


def _stat(pid: int) -> tuple[bytes, int]:
    """A process's state letter and parent pid (OSError once it is gone)."""
    with open(f"/proc/{pid}/stat", "rb") as file:
        fields = file.read().rsplit(b")", 1)[1].split()
    return fields[0], int(fields[1])


def _descends_from_us(pid: int) -> bool:
    me = os.getpid()
    for _ in range(64):  # a parent chain longer than this is not ours
        try:
            pid = _stat(pid)[1]
        except OSError:
            return False
        if pid == me:
            return True
        if pid <= 1:
            return False
    return False


def sandbox_pids() -> set[int]:
    """Every live process descended from this one whose command line names this
    checkout's sandbox child (bwrap's and the interpreter's: forks keep it)."""
    found = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as file:
                    cmdline = file.read()
                state = _stat(int(name))[0]
            except OSError:
                continue
            if CHILD in cmdline and state not in (b"Z", b"X") and _descends_from_us(int(name)):
                found.add(int(name))
    return found


@pytest.fixture(params=["bwrap", "landlock"])
def backend(request: pytest.FixtureRequest) -> str:
    """Each attack runs under each backend, forced, so both are exercised here."""
    name: str = request.param
    if name not in available_backends():
        pytest.fail(f"the {name} backend does not work on this machine (see .ci/run)")
    return name


@pytest.fixture(autouse=True)
def no_process_left() -> Iterator[None]:
    """No test of the sandbox may leave a process of it behind, by pid."""
    before = sandbox_pids()
    yield
    left = sandbox_pids() - before
    assert not left, f"processes left: {sorted(left)}"
