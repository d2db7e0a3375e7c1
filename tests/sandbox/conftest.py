"""Fixtures for the sandbox's tests: both backends, and the processes a call left."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from sse_toolcalls.sandbox import available_backends, engine

CHILD = str(engine._CHILD).encode()


def sandbox_pids() -> set[int]:
    """Every live process whose command line names this checkout's sandbox child (bwrap's
    and the interpreter's: forks keep it)."""
    found = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as file:
                    cmdline = file.read()
                with open(f"/proc/{name}/stat", "rb") as file:
                    state = file.read().rsplit(b")", 1)[1].split()[0]
            except OSError:
                continue
            if CHILD in cmdline and state not in (b"Z", b"X"):
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
