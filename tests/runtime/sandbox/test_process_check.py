"""The check that no sandbox process is left (conftest.sandbox_pids) sees orphans."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from .conftest import CHILD, sandbox_pids


def test_an_orphaned_sandbox_process_is_still_counted_as_ours() -> None:
    # A process naming the sandbox child whose parent has exited (a double fork, as a
    # leaked grandchild would be) is adopted by this test process, not by init, so the
    # check counts it as left behind; and it is ours to reap.
    started = subprocess.run(
        [
            "sh",
            "-c",
            f'"{sys.executable}" -c "import time; time.sleep(60)" "{CHILD.decode()}" '
            ">/dev/null 2>&1 & echo $!",
        ],
        capture_output=True,
        check=True,
        text=True,
    )
    orphan = int(started.stdout)
    try:
        assert orphan in sandbox_pids()
    finally:
        os.kill(orphan, signal.SIGKILL)
        assert os.waitpid(orphan, 0)[0] == orphan  # adopted: this process's child now
    assert orphan not in sandbox_pids()
