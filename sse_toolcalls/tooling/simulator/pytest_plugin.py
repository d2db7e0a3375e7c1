"""A pytest plugin with a ``simulator`` fixture.

Enable it in a ``conftest.py``::

    pytest_plugins = ["sse_toolcalls.tooling.simulator.pytest_plugin"]

then, in a test::

    def test_my_agent(simulator):
        simulator.play([Turn(calls=(ScriptedCall(name="f", args={}),)), Turn(text="done")])
        run_my_agent(base_url=simulator.base_url_for("openai_chat"))
        simulator.assert_no_problems()
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .server import Simulator


@pytest.fixture
def simulator() -> Iterator[Simulator]:
    """A running :class:`Simulator` with an empty script; give it one with ``.play()``.

    The server runs in its own thread, so sync tests and async tests (asyncio or trio)
    use it alike. It is stopped after the test.
    """
    with Simulator() as sim:
        yield sim
