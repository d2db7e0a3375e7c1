"""The library's logging (issue 17, item 4): every record structured (``event`` and its
fields as record attributes), every logger named in one list, and nothing above DEBUG
on the happy path."""

from __future__ import annotations

import functools
import logging
import re
from pathlib import Path

import anyio
import pytest

from sse_toolcalls._logging import LOGGERS
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.tools import ToolRegistry
from tests.runtime.test_agent import FakeClient, answer, calling

PACKAGE = Path(__file__).resolve().parents[2] / "sse_toolcalls"


def ours(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("sse_toolcalls")]


def registry() -> ToolRegistry:
    tools = ToolRegistry()

    @tools.register
    def forecast(city: str) -> str:
        """Weather forecast."""
        return f"sunny in {city}"

    @tools.register
    def broken(city: str) -> str:
        """Always fails."""
        raise RuntimeError(f"backend down for {city}")

    return tools


def test_the_happy_path_logs_at_debug_only_and_every_record_is_structured(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="sse_toolcalls")
    client = FakeClient([calling(("forecast", {"city": "Oslo"})), answer("Sunny.")])
    agent = Agent(client, registry(), tracing=False)
    reply = anyio.run(functools.partial(agent.run, "weather?", request_id="req-1"))
    assert reply.text == "Sunny."
    records = ours(caplog)
    assert {r.levelno for r in records} == {logging.DEBUG}
    assert [getattr(r, "event", None) for r in records] == [
        "run_started",
        "turn_received",
        "call_finished",
        "turn_received",
        "run_finished",
    ]
    started, turn, call, _, finished = records
    assert (started.request_id, started.provider) == ("req-1", "anthropic")  # type: ignore[attr-defined]
    assert (turn.attempt, turn.calls, turn.stop_reason) == (1, 1, "tool_use")  # type: ignore[attr-defined]
    assert (call.tool, call.call_id, call.outcome, call.runs) == (  # type: ignore[attr-defined]
        "forecast",
        "toolu_0_0",
        "ok",
        1,
    )
    assert (finished.steps, finished.requests, finished.fallback) == (2, 2, None)  # type: ignore[attr-defined]
    for record in records:
        assert record.getMessage().startswith(f"{record.event}: ")  # type: ignore[attr-defined]
    # Nothing is logged at INFO or above: a production log stays silent.
    caplog.clear()
    caplog.set_level(logging.INFO, logger="sse_toolcalls")
    client = FakeClient([calling(("forecast", {"city": "Oslo"})), answer("Sunny.")])
    anyio.run(Agent(client, registry(), tracing=False).run, "weather?")
    assert ours(caplog) == []


def test_a_failing_tool_is_a_structured_warning_on_each_logger(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="sse_toolcalls")
    client = FakeClient([calling(("broken", {"city": "Oslo"})), answer("Sorry.")])
    anyio.run(Agent(client, registry(), tracing=False, read_retries=0).run, "weather?")
    tools = [r for r in ours(caplog) if r.name == "sse_toolcalls.runtime.tools"]
    (failed,) = tools
    assert failed.levelno == logging.WARNING
    assert failed.event == "tool_failed"  # type: ignore[attr-defined]
    assert (failed.tool, failed.call_id) == ("broken", "toolu_0_0")  # type: ignore[attr-defined]
    assert "RuntimeError" in failed.exception  # type: ignore[attr-defined]
    assert failed.exc_info is not None  # the traceback, for the developer
    (runtime,) = [r for r in ours(caplog) if r.name == "sse_toolcalls.runtime"]
    assert runtime.event == runtime.diagnostic_kind == "tool_failed"  # type: ignore[attr-defined]
    assert runtime.tool == "broken"  # type: ignore[attr-defined]


def test_every_logger_of_the_library_is_listed() -> None:
    """Each ``getLogger`` in the package names a logger of :data:`LOGGERS` (the
    README's table), by a literal or by a constant that holds one."""
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        for argument in re.findall(r"getLogger\(([^)]*)\)", text):
            literal = re.fullmatch(r"\"([^\"]+)\"", argument.strip())
            if literal:
                found.add(literal[1])
                continue
            constant = re.search(rf"^{re.escape(argument.strip())} = \"([^\"]+)\"", text, re.M)
            assert constant, f"{path}: getLogger({argument}) names no constant here"
            found.add(constant[1])
    # The package's parent logger is only configured (`sse-toolcalls bfcl` gives it a
    # NullHandler, so its handled faults' warnings leave the progress bar alone), and
    # botocore's signer's gets a filter that redacts the secrets it would log (the
    # Bedrock client): neither is logged to.
    configured = {"sse_toolcalls", "botocore.auth"}
    assert found and found - configured <= set(LOGGERS), found - set(LOGGERS)
