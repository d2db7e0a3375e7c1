"""The sandbox's tests again, as an unprivileged user (uid and gid 65534, ``nobody``).

Run as root, this test switches to that user with ``setpriv`` and runs every other test
of this folder there. The interpreter must be one that user can read: this project's own
when it can, else the system's ``python3`` with a virtualenv of the few packages these
tests need, made once under ``.cache/`` (root's pyenv lives under ``/root``, mode 0700).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
UID = 65534
NEEDED = ("pytest", "pytest-timeout", "anyio", "trio", "orjson")
"""What these tests import, and the plugin the project's pytest settings name."""


def _as_user(argv: list[str], *, timeout: float) -> subprocess.CompletedProcess[str]:
    setpriv = shutil.which("setpriv")
    assert setpriv is not None, "setpriv (util-linux) is needed to switch user"
    command = [setpriv, f"--reuid={UID}", f"--regid={UID}", "--clear-groups", "--", *argv]
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
    return subprocess.run(
        command, capture_output=True, text=True, check=False, cwd=ROOT, env=env, timeout=timeout
    )


def _reachable(python: str) -> bool:
    # The interpreter must also start itself again (the sandbox's child), and read its
    # installation (bubblewrap binds it): checked from inside, as the user.
    probe = (
        "import os, sys; real = os.path.realpath(sys.executable);"
        "sys.exit(sys.version_info < (3, 11) or not os.access(real, os.X_OK)"
        " or not os.access(sys.base_prefix, os.R_OK | os.X_OK))"
    )
    return _as_user([python, "-c", probe], timeout=60).returncode == 0


def _interpreter() -> str:
    if _reachable(sys.executable):
        return sys.executable
    system = shutil.which("python3", path="/usr/bin:/bin")
    assert system is not None and _reachable(system), "no python3.11+ readable by uid 65534"
    venv = ROOT / ".cache" / "sandbox-unprivileged"
    python = venv / "bin" / "python"
    pins = subprocess.run(
        [sys.executable, "-m", "pip", "freeze"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    wanted = [line for line in pins if line.split("==")[0].lower() in NEEDED]
    stamp = venv / ("installed-" + str(abs(hash(tuple(wanted)))))
    if not stamp.exists():
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([system, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", *wanted], check=True, timeout=600
        )
        stamp.touch()
    return str(python)


@pytest.mark.timeout(900)
@pytest.mark.skipif(
    os.geteuid() != 0, reason="only root can switch to another user; this run is unprivileged"
)
def test_every_sandbox_test_passes_as_an_unprivileged_user() -> None:
    python = _interpreter()
    here = Path(__file__).relative_to(ROOT)
    done = _as_user(
        [
            python,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(here.parent),
            "--deselect",
            str(here),
        ],
        timeout=850,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout, done.stdout[-2000:]
