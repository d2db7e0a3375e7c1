"""Every public configuration with a number refuses NaN, infinities, out-of-range values
and a bool given for a number, at construction, with a ``UsageError`` naming the field.

The oracle is written here from the documented ranges, not taken from the library: a
value the oracle calls valid must be accepted, any other must be refused by name.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.breaker import CircuitBreaker
from sse_toolcalls.runtime.clients import AnthropicClient
from sse_toolcalls.runtime.dispatch import Dispatcher
from sse_toolcalls.runtime.retry import RetryPolicy
from sse_toolcalls.runtime.sandbox import Sandbox, WarmPool
from sse_toolcalls.runtime.stores.memory import InMemoryConversationStore
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.tooling.simulator.script import (
    ErrorEvent,
    ExpectedResult,
    HTTPError,
    Stall,
    Turn,
)


def _handler(x: int) -> int:
    """Echo."""
    return x


def _register(**kwargs: Any) -> None:
    ToolRegistry().register(_handler, **kwargs)


def _agent(**kwargs: Any) -> None:
    Agent(AnthropicClient(model="m", api_key="", http_client=_no_http()), ToolRegistry(), **kwargs)


class _NoHTTP:
    """Never used: the clients are only constructed."""

    async def aclose(self) -> None:
        return None


def _no_http() -> Any:
    return _NoHTTP()


@dataclass(frozen=True)
class Field:
    name: str
    build: Callable[[Any], object]
    kind: str  # "count" or "quantity"
    minimum: float = 0
    positive: bool = False
    maximum: float = math.inf
    optional: bool = False  # None is a valid value (no limit)
    numbers_only: bool = False  # another type is passed on (an httpx Timeout object)


FIELDS = [
    Field("attempts", lambda v: RetryPolicy(attempts=v), "count", 1),
    Field("base_delay", lambda v: RetryPolicy(base_delay=v), "quantity"),
    Field("max_delay", lambda v: RetryPolicy(max_delay=v), "quantity"),
    Field("max_retry_after", lambda v: RetryPolicy(max_retry_after=v), "quantity"),
    Field("multiplier", lambda v: RetryPolicy(multiplier=v), "quantity", 1),
    Field("threshold", lambda v: CircuitBreaker(threshold=v), "count", 1),
    Field("cooldown", lambda v: CircuitBreaker(cooldown=v), "quantity"),
    Field("max_concurrency", lambda v: Dispatcher(ToolRegistry(), max_concurrency=v), "count", 1),
    Field("read_retries", lambda v: Dispatcher(ToolRegistry(), read_retries=v), "count", 0),
    Field(
        "max_calls_per_turn",
        lambda v: Dispatcher(ToolRegistry(), max_calls_per_turn=v),
        "count",
        1,
    ),
    Field("max_steps", lambda v: _agent(max_steps=v), "count", 1),
    Field("max_concurrency", lambda v: _agent(max_concurrency=v), "count", 1),
    Field(
        "request_timeout",
        lambda v: _agent(request_timeout=v),
        "quantity",
        positive=True,
        optional=True,
    ),
    Field(
        "_handler: timeout",
        lambda v: _register(timeout=v),
        "quantity",
        positive=True,
        optional=True,
    ),
    Field("_handler: retries", lambda v: _register(retries=v), "count", 0),
    Field("timeout", lambda v: Sandbox(timeout=v), "quantity", positive=True),
    Field("cpu", lambda v: Sandbox(cpu=v), "quantity", positive=True),
    Field("processes", lambda v: Sandbox(processes=v), "count", 1),
    Field("per_tool", lambda v: WarmPool(per_tool=v), "count", 1),
    Field(
        "max_conversations", lambda v: InMemoryConversationStore(max_conversations=v), "count", 1
    ),
    Field(
        "idle_timeout",
        lambda v: AnthropicClient(model="m", api_key="", http_client=_no_http(), idle_timeout=v),
        "quantity",
        positive=True,
        optional=True,
    ),
    Field(
        "timeout",
        lambda v: AnthropicClient(model="m", api_key="", http_client=_no_http(), timeout=v),
        "quantity",
        positive=True,
        numbers_only=True,
    ),
    Field("after_events", lambda v: ErrorEvent(after_events=v), "count", 0),
    Field("after_events", lambda v: Stall(seconds=1, after_events=v), "count", 0),
    Field("seconds", lambda v: Stall(seconds=v), "quantity"),
    Field("status", lambda v: HTTPError(status=v), "count", 100, maximum=599),
    Field(
        "retry_after_ms",
        lambda v: HTTPError(status=429, retry_after_ms=v),
        "count",
        0,
        optional=True,
    ),
    Field("fragment_size", lambda v: Turn(fragment_size=v), "count", 1),
    Field("call_position", lambda v: ExpectedResult(call_position=v), "count", 0),
]


def _valid(field: Field, value: object) -> bool:
    if value is None:
        return field.optional
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if field.kind == "count":
        return isinstance(value, int) and field.minimum <= value <= field.maximum
    try:
        as_float = float(value)
    except OverflowError:
        return False
    if not math.isfinite(as_float) or as_float > field.maximum:
        return False
    return as_float > field.minimum if field.positive else as_float >= field.minimum


ODD = st.one_of(
    st.sampled_from(
        [math.nan, math.inf, -math.inf, -0.0, 0.0, 0, 1, -1, -1e-300, 1e308, 10**400, True, False]
    ),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.sampled_from(["1", b"1", None, [1]]),
)


@pytest.mark.parametrize("field", FIELDS, ids=[f"{n}-{f.name}" for n, f in enumerate(FIELDS)])
@settings(max_examples=40, deadline=None)
@given(value=ODD)
def test_a_config_number_is_refused_by_name_unless_in_range(field: Field, value: object) -> None:
    other = not isinstance(value, int | float)
    if _valid(field, value) or (field.numbers_only and other):
        field.build(value)
        return
    with pytest.raises(UsageError) as caught:
        field.build(value)
    assert str(caught.value).startswith(field.name), str(caught.value)


@given(
    base=st.floats(min_value=0, max_value=1e308),
    multiplier=st.floats(min_value=1, max_value=1e308),
    cap=st.floats(min_value=0, max_value=1e308),
    retry=st.integers(min_value=1, max_value=10_000),
)
def test_a_valid_policy_always_computes_a_finite_wait(
    base: float, multiplier: float, cap: float, retry: int
) -> None:
    # A large multiplier after many retries overflowed float ** int (OverflowError).
    policy = RetryPolicy(base_delay=base, multiplier=multiplier, max_delay=cap, jitter=False)
    wait = policy.delay(retry)
    assert 0 <= wait <= cap
    assert math.isfinite(wait)


@pytest.mark.parametrize("field", ["memory", "file_size"])
def test_a_size_string_past_the_float_range_is_refused_by_name(field: str) -> None:
    with pytest.raises(UsageError, match=f"^{field}: "):
        Sandbox(**{field: "1" + "0" * 400 + " MiB"})  # type: ignore[arg-type]
