"""The official JavaScript clients of the UI protocols, run by the tests (issue 32).

``@ag-ui/client`` and the ``ai`` package are installed in ``tests/runtime/ui/js/`` from
its ``package.json`` and ``package-lock.json`` (``npm ci``, done by ``scripts/test`` and
``.ci/run``). A test hands one of the scripts beside them our stream's bytes and reads
back, as JSON on stdout, what the client assembled. Without node or the installed
packages such a test is skipped with the reason; with ``SSE_TOOLCALLS_REQUIRE_NODE=1``
(CI sets it) it fails instead.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest

JS: Final = Path(__file__).resolve().parent / "js"
"""The folder of the scripts and their packages."""

REQUIRE_ENV: Final = "SSE_TOOLCALLS_REQUIRE_NODE"

TIMEOUT_SECONDS: Final = 120.0
"""A hang guard for one script, not a measure."""


def missing_reason() -> str | None:
    """Why the clients cannot run here, or ``None``."""
    if shutil.which("node") is None:
        return "node is not installed (apt-get install nodejs npm; .ci/run installs it)"
    if not (JS / "node_modules" / "ai").is_dir() or not (JS / "node_modules" / "@ag-ui").is_dir():
        return f"the UI clients are not installed: npm ci --prefix {JS} (scripts/test does it)"
    return None


def require_clients() -> None:
    """In a test body: skip (or fail, when required) unless the clients can run."""
    reason = missing_reason()
    if reason is None:
        return
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but {reason}")
    pytest.skip(reason)


def run_script(script: str, stdin: bytes, *args: str) -> Any:
    """Run ``js/<script>`` with ``stdin``; its stdout, parsed as JSON.

    Raises:
        AssertionError: the script failed (its stderr is in the message).
    """
    require_clients()
    done = subprocess.run(
        ["node", str(JS / script), *args],
        input=stdin,
        capture_output=True,
        timeout=TIMEOUT_SECONDS,
        cwd=JS,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    return json.loads(done.stdout)
