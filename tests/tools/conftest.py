"""Fixtures for the tools layer's tests: every async test runs on asyncio and on trio."""

import pytest


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)
