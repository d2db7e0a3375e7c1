"""tests/asyncio_plugin/ runs under pytest-asyncio, never beside the anyio-plugin suite.

The project's pytest options turn pytest-asyncio off (``-p no:asyncio``): the rest of the
suite runs on anyio's plugin, on asyncio and trio. ``scripts/test_asyncio`` runs this
folder again with ``-p asyncio`` in strict mode, then in auto mode, as pytest-asyncio
users run their suites; ``test_auto_mode.py`` holds what only auto mode allows (unmarked
async tests and fixtures).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sse_toolcalls.tooling.simulator.pytest_plugin import simulator

__all__ = ["simulator"]


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if not config.pluginmanager.has_plugin("asyncio"):
        return True  # the anyio-plugin run: scripts/test_asyncio runs this folder
    if collection_path.name == "test_auto_mode.py" and config.getini("asyncio_mode") != "auto":
        return True  # strict mode would not run its unmarked tests
    return None
