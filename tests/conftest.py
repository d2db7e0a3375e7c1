"""Fixtures and settings for the whole suite."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.pg_server import REQUIRE_ENV, PgServer, missing_reason

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


@pytest.fixture(autouse=True)
def _parser_twin_restored() -> Iterator[None]:
    """After each test, the parser frames and scans with the process's own twin again.

    The benchmarks point the parser's module globals at one twin and leave them there
    (``benchmarks/ours.py``): a test running them in-process (the profile command on the
    pure twin) left every later test of its worker on the pure framer, which made the
    planted quadratic in ``tests/tooling/corpus/test_fuzz.py`` fall under the growth bar. Only
    modules already imported are touched (some tests check what an import loads)."""
    yield
    import sys

    parser = sys.modules.get("sse_toolcalls.parser")
    sse = sys.modules.get("sse_toolcalls.framing.sse")
    common = sys.modules.get("sse_toolcalls.dialects._common")
    if parser is not None and sse is not None:
        parser.SSEFramer = sse.SSEFramer  # type: ignore[attr-defined]
    if common is not None:
        common._c_json_scan = None if common.PURE_PYTHON else common.C_JSON_SCAN  # type: ignore[attr-defined]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Every async test runs on asyncio and on trio (anyio's pytest plugin)."""
    backend: str = request.param
    return backend


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PgServer]:
    """A throwaway PostgreSQL cluster for the session (see ``tests/pg_server.py``):
    skipped where it cannot run, failed instead when ``SSE_TOOLCALLS_REQUIRE_POSTGRES=1``."""
    reason = missing_reason()
    if reason is not None:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 but {reason}")
        pytest.skip(reason)
    server = PgServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_dsn(postgres_server: PgServer) -> str:
    """The DSN of a fresh, empty database on the session's cluster."""
    return postgres_server.create_database()


# -- the outside corpus (tests/outside.py) and the counted skips ------------------------


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``outside_corpus`` is skipped without ``../shared/`` (failed instead
    with ``SSE_TOOLCALLS_REQUIRE_SHARED=1``), before its body or fixtures read it."""
    if item.get_closest_marker("outside_corpus") is not None:
        from tests.outside import skip_or_fail

        skip_or_fail()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "outside_corpus: reads ../shared/ (skipped without it; see tests/outside.py)"
    )
    config.pluginmanager.import_plugin("tests.counted_skips")
