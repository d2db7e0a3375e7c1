"""The anyio-plugin suite runs without pytest-asyncio (issue 17, item 6): both are
installed (the test extra), and a second async plugin must not claim these tests or
change how they run; tests/asyncio_plugin/ runs under pytest-asyncio on its own
(scripts/test_asyncio, in strict and auto mode)."""

from __future__ import annotations

import pytest


def test_pytest_asyncio_is_installed_and_off_here(pytestconfig: pytest.Config) -> None:
    import pytest_asyncio  # the test extra installs it: the folder's runs need it

    assert pytest_asyncio.__name__ == "pytest_asyncio"
    assert pytestconfig.pluginmanager.has_plugin("anyio")
    assert not pytestconfig.pluginmanager.has_plugin("asyncio")


@pytest.mark.anyio
async def test_an_anyio_test_runs_on_the_backend_anyio_gave_it(anyio_backend: str) -> None:
    import sniffio

    assert sniffio.current_async_library() == anyio_backend
