"""Fixtures and settings for the whole suite."""

from __future__ import annotations

import pytest

# Our machines are shared and noisy (two cores, several suites at once): a property test
# is judged by what it finds, never by how fast an example ran. Without this profile the
# Retry-After property failed Hypothesis's "input generation is slow" health check under
# load, and any example can trip the 200 ms deadline. Tests that set their own settings
# still override these two fields. The sandbox's unprivileged rerun uses a small venv
# without Hypothesis, which must still load this file.
try:
    from hypothesis import HealthCheck, settings
except ImportError:  # pragma: no cover - only in the sandbox's unprivileged venv
    pass
else:
    settings.register_profile(
        "sse_toolcalls", deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    settings.load_profile("sse_toolcalls")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every async test runs on asyncio and on trio (anyio's pytest plugin)."""
    backend: str = request.param
    return backend
