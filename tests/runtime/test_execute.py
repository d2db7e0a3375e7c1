"""The one executor (runtime/execute.py): handlers run there and nowhere else, within
their timeout, through the dispatcher's executor (the seam for a sandbox backend).
On asyncio and trio."""

from __future__ import annotations

import ast
import importlib.util
import json
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

import sse_toolcalls
from sse_toolcalls.calls import ToolResult
from sse_toolcalls.runtime import Dispatcher
from sse_toolcalls.runtime.breaker import CircuitBreaker
from sse_toolcalls.runtime.errors import ToolExecutionError
from sse_toolcalls.runtime.execute import Executor, is_async, run_local, run_once
from sse_toolcalls.runtime.tools import ToolRegistry, ValidatedCall
from sse_toolcalls.runtime.tools.results import ok_result
from tests.runtime.tools.test_tools_registry import (
    Counter,
    Location,
    Unit,
    call,
    run,
    weather_registry,
)

pytestmark = pytest.mark.anyio

PACKAGE = Path(sse_toolcalls.__file__).parent


# --------------------------------------------------------------------------------------
# One owner


def test_the_tools_layer_does_not_run_handlers() -> None:
    # Regression (issue 10): ToolRegistry.run/invoke were a second executor beside the
    # dispatcher's, and the two disagreed (a write that overran was "may be retried
    # later" there, "do not repeat it" here).
    for name in ("run", "invoke", "result"):
        assert not hasattr(ToolRegistry, name), name


def test_there_is_one_loop() -> None:
    # Regression (issue 10): run_conversation was a second loop with its own
    # DEFAULT_MAX_STEPS and its own error (UsageError) for a stream without its end.
    assert "run_conversation" not in dir(sse_toolcalls)
    assert not hasattr(sse_toolcalls, "run_conversation")
    assert importlib.util.find_spec("sse_toolcalls.runtime.loop") is None


def _error_dicts(path: Path) -> list[int]:
    """Lines of ``{"error": ...}`` displays: the shape of a result the model reads."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        and any(isinstance(k, ast.Constant) and k.value == "error" for k in node.keys)
    ]


def test_every_result_text_the_model_reads_is_written_in_one_module() -> None:
    owner = PACKAGE / "runtime" / "tools" / "results.py"
    assert _error_dicts(owner)
    # The UI streams answer a bad request body with an HTTP 400 whose JSON is for the
    # browser ({"error": ...}, as web APIs say it), never a result the model reads.
    browser = PACKAGE / "runtime" / "ui"
    elsewhere = {
        str(path.relative_to(PACKAGE)): lines
        for path in sorted((PACKAGE / "runtime").rglob("*.py"))
        if path != owner and browser not in path.parents and (lines := _error_dicts(path))
    }
    assert elsewhere == {}


# --------------------------------------------------------------------------------------
# The executor seam


class Recording:
    """An executor that runs nothing itself: what a sandbox backend looks like."""

    def __init__(self, answer: Any = "from the other side", *, delay: float = 0.0) -> None:
        self.answer = answer
        self.delay = delay
        self.seen: list[ValidatedCall] = []

    async def __call__(self, validated: ValidatedCall, /) -> Any:
        self.seen.append(validated)
        await anyio.sleep(self.delay)
        if isinstance(self.answer, Exception):
            raise ToolExecutionError("the backend failed", call=validated.call) from self.answer
        return self.answer


def test_the_default_executor_is_an_executor() -> None:
    executor: Executor = run_local
    assert Dispatcher(ToolRegistry()).executor is executor


async def test_a_dispatcher_runs_every_handler_through_its_executor() -> None:
    counter = Counter()
    registry = weather_registry(counter)
    backend = Recording({"answer": 42})
    dispatcher = Dispatcher(registry, executor=backend)
    reports = await dispatcher.dispatch(
        [call("book_table", {"restaurant": "X", "guests": "3"}), call("get_weathers", {})]
    )
    assert counter.runs == []  # nothing ran in this process
    assert [v.kwargs for v in backend.seen] == [{"restaurant": "X", "guests": 3}]
    assert [r.outcome for r in reports] == ["ok", "refused"]
    assert reports[0].result.content == {"answer": 42}


async def test_the_timeout_holds_whatever_the_executor() -> None:
    registry = ToolRegistry()
    registry.add_schema_tool("look", {"type": "object"}, lambda: "x", timeout=0.05)
    registry.add_schema_tool("act", {"type": "object"}, lambda: "x", timeout=0.05, effect="write")
    dispatcher = Dispatcher(registry, executor=Recording(delay=10), read_retries=0)
    with anyio.fail_after(5):
        look, act = await dispatcher.dispatch([call("look"), call("act")])
    assert (look.outcome, act.outcome) == ("timeout", "timeout")
    assert isinstance(look.result.content, dict) and isinstance(act.result.content, dict)
    assert "may be retried later" in look.result.content["message"]
    assert "Do not repeat it" in act.result.content["message"]


async def test_an_executor_failure_is_the_calls_failure_and_a_fault_of_the_tool() -> None:
    registry = ToolRegistry()
    registry.add_schema_tool("look", {"type": "object"}, lambda: "x")
    backend = Recording(OSError("child died"))
    breaker = CircuitBreaker()
    dispatcher = Dispatcher(registry, executor=backend, breaker=breaker)
    (report,) = await dispatcher.dispatch([call("look")])
    assert report.outcome == "failed"
    # A fault (counted), not a transient one: not re-run (issue 11, item 3).
    assert breaker.status("look").failures == 1
    assert report.runs == len(backend.seen) == 1
    assert isinstance(report.result.content, dict)
    assert report.result.content["error"] == "tool_failed"
    assert "OSError" in report.result.content["message"]


def test_async_detection() -> None:
    class Handler:
        async def __call__(self) -> None: ...

    async def coroutine_function() -> None: ...

    assert is_async(coroutine_function)
    assert is_async(Handler())
    assert not is_async(lambda: None)
    assert not is_async(len)


# --------------------------------------------------------------------------------------
# Running in this process


async def test_sync_handler_runs_in_a_worker_thread() -> None:
    registry = ToolRegistry()
    seen: list[int] = []

    @registry.register
    def where() -> str:
        seen.append(threading.get_ident())
        return "ok"

    result = await run(registry, call("where"))
    assert result.content == "ok"
    assert seen != [threading.get_ident()]


async def test_async_handler_is_awaited() -> None:
    counter = Counter()
    registry = weather_registry(counter)
    result = await run(registry, call("book_table", {"restaurant": "Chez Marie"}))
    assert result == ToolResult(
        call=call("book_table", {"restaurant": "Chez Marie"}), content="booked Chez Marie for 2"
    )
    assert counter.runs == [{"restaurant": "Chez Marie", "guests": 2}]


# --------------------------------------------------------------------------------------
# Failures while running


async def test_handler_exception_becomes_error_result_without_internals() -> None:
    registry = ToolRegistry()

    @registry.register
    def fail(x: int) -> int:
        raise RuntimeError("database password is hunter2")

    result = await run(registry, call("fail", {"x": 1}))
    assert result.is_error
    assert isinstance(result.content, dict)
    assert result.content["error"] == "tool_failed"
    assert "RuntimeError" in result.content["message"]
    assert "hunter2" not in json.dumps(result.content)

    detailed = ToolRegistry(show_error_details=True)
    detailed.register(fail)
    shown = await run(detailed, call("fail", {"x": 1}))
    assert isinstance(shown.content, dict)
    assert "hunter2" in shown.content["message"]


async def test_async_handler_exception_becomes_error_result() -> None:
    registry = ToolRegistry()

    @registry.register
    async def fail() -> None:
        await anyio.lowlevel.checkpoint()
        raise KeyError("k")

    result = await run(registry, call("fail"))
    assert result.is_error
    assert isinstance(result.content, dict)
    assert result.content["error"] == "tool_failed"


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def _cycle() -> list[Any]:
    items: list[Any] = [1]
    items.append(items)
    return items


@pytest.mark.parametrize(
    ("value", "content"),
    [
        # os.listdir of a file name that is not UTF-8 (surrogateescape): the byte is shown.
        ("report-\udcff.txt", "report-\\xff.txt"),
        ("lone \ud800 surrogate", "lone \ufffd surrogate"),
        ("\ud83d\ude00", "\U0001f600"),  # a pair spelled as two code points is joined
        ({"name": "a\udc80"}, {"name": "a\\x80"}),
        (b"caf\xc3\xa9 \xff", "caf\u00e9 \\xff"),
        (float("nan"), "null"),
        ([float("inf"), -float("inf")], [None, None]),
        (10**5000, "<integer of 16610 bits>"),
        (2**70, str(2**70)),
        ({"big": 2**70}, {"big": 2**70}),
        (_cycle(), [1, "<cycle>"]),
        ({1: "a", None: "b"}, {"1": "a", "null": "b"}),
        ({"x": {1, 2}}, {"x": [1, 2]}),
        (_Unprintable(), "<_Unprintable object>"),
        ([_Unprintable()], ["<_Unprintable object>"]),
    ],
    ids=[
        "surrogateescape",
        "lone-surrogate",
        "split-pair",
        "nested-surrogate",
        "bytes",
        "nan",
        "infinities",
        "huge-int",
        "big-int",
        "nested-big-int",
        "cycle",
        "non-str-keys",
        "set",
        "unprintable",
        "nested-unprintable",
    ],
)
async def test_whatever_a_handler_returns_becomes_content_that_encodes(
    value: Any, content: Any
) -> None:
    registry = ToolRegistry()
    registry.add_schema_tool("give", {"type": "object"}, lambda: value)
    result = await run(registry, call("give"))
    assert not result.is_error
    assert result.content == content
    # The content goes into the next request: strict encoders must take it.
    json.dumps(result.content, allow_nan=False).encode("utf-8")


async def test_an_arbitrary_object_is_sent_as_its_text() -> None:
    registry = ToolRegistry()

    @registry.register
    def weird() -> object:
        return object()

    result = await run(registry, call("weird"))
    assert not result.is_error
    assert isinstance(result.content, str)
    assert result.content.startswith("<object object at ")


async def test_a_handler_whose_exception_cannot_be_printed_gives_a_failure_result() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no str")

    registry = ToolRegistry(show_error_details=True)

    @registry.register
    def fail() -> None:
        raise Unprintable

    result = await run(registry, call("fail"))
    assert result.is_error
    assert isinstance(result.content, dict)
    assert result.content["error"] == "tool_failed"


@pytest.mark.parametrize(
    ("value", "content"),
    [
        ("text", "text"),
        (None, "null"),
        (3, "3"),
        (True, "true"),
        ({"a": (1, 2)}, {"a": [1, 2]}),
        ([Unit.CELSIUS], ["celsius"]),
        (Location(lat=1, lon=2), {"lat": 1, "lon": 2}),
    ],
)
async def test_return_values_become_json_content(value: Any, content: Any) -> None:
    registry = ToolRegistry()
    registry.add_schema_tool("give", {"type": "object"}, lambda: value)
    result = await run(registry, call("give"))
    assert not result.is_error
    assert result.content == content


async def test_async_handler_past_its_timeout_becomes_timeout_result() -> None:
    registry = ToolRegistry()

    @registry.register(timeout=0.05)
    async def slow() -> str:
        await anyio.sleep(10)
        return "late"

    with anyio.fail_after(5):
        result = await run(registry, call("slow"))
    assert result.is_error
    assert isinstance(result.content, dict)
    assert result.content["error"] == "tool_timeout"


async def test_sync_handler_past_its_timeout_does_not_hold_the_caller() -> None:
    registry = ToolRegistry()
    release = threading.Event()

    @registry.register(timeout=0.05)
    def stuck() -> str:
        release.wait(5)
        return "late"

    started = time.monotonic()
    result = await run(registry, call("stuck"))
    release.set()
    assert time.monotonic() - started < 2
    assert isinstance(result.content, dict)
    assert result.content["error"] == "tool_timeout"


async def test_cancellation_from_outside_is_not_swallowed() -> None:
    registry = ToolRegistry()

    @registry.register(timeout=None)
    async def forever() -> None:
        await anyio.sleep(10)

    with anyio.move_on_after(0.05) as scope:
        await run(registry, call("forever"))
    assert scope.cancelled_caught


async def test_check_and_run_are_separable() -> None:
    counter = Counter()
    registry = weather_registry(counter)
    validated = registry.check(call("book_table", {"restaurant": "Y"}))
    assert counter.runs == []
    value = await run_once(validated)
    assert value == "booked Y for 2"
    assert ok_result(validated.call, value).content == "booked Y for 2"


async def test_a_sync_handler_returning_an_awaitable_has_it_awaited() -> None:
    # A decorator that hides the coroutine function: sync to inspect, but what it
    # returns must still be awaited. Regression: on trio this was a tool_failed result
    # (TypeError: trio refused the coroutine coming back from the worker thread).
    async def later() -> str:
        await anyio.lowlevel.checkpoint()
        return "awaited"

    def hidden() -> Any:
        return later()

    registry = ToolRegistry()
    registry.add_schema_tool("wrapped", {"type": "object"}, hidden)
    result = await run(registry, call("wrapped"))
    assert result.content == "awaited"
