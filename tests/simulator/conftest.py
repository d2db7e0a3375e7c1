"""Async tests in this folder run on asyncio and on trio; the plugin's fixture is used as
users get it."""

from __future__ import annotations

import pytest

from sse_toolcalls.simulator.pytest_plugin import simulator

__all__ = ["simulator"]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend
