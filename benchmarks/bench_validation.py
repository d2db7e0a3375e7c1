"""Validations per second of one typical tool call, side by side in one run.

The call has five properties: a string, an enum, an integer with a range, a nested object
and a date (``benchmarks/weather.py``, the schema the tests share). Cases:

- ``sse_toolcalls ArgumentValidator``: our compiled validator (jsonschema Draft 2020-12,
  strict format checkers, coercion pass only when something failed);
- ``sse_toolcalls registry.check``: the whole check of a ``ToolCall`` (lookup, validation,
  decoding to the function's Python values: an enum member, a dataclass, a date);
- ``registry.check, pydantic fast path`` and ``registry.check, JSON Schema path``: the
  same call to a signature the fast path covers (``forecast_plain``), with the fast path
  and with it switched off (``SSE_TOOLCALLS_NO_PYDANTIC``);
- ``the fast path's TypeAdapter, bare``: the floor of the fast path, its own strict
  ``TypeAdapter`` (``arguments_adapter``) on the call's JSON bytes, encoded beforehand;
- ``jsonschema plain``: ``Draft202012Validator.is_valid`` with no format checker (formats
  are then not checked at all: ``2025-02-30`` passes);
- ``jsonschema + FormatChecker``: the stock format checker;
- ``pydantic TypeAdapter`` on an equivalent model (pydantic takes Python types, not a raw
  schema): lax ``validate_python`` (it takes ``"5.0"`` for an int), and strict
  ``validate_json`` from the JSON text (strict Python mode wants a ``date`` object);
- the invalid call (``unit`` outside the enum, ``days`` a word, ``lat`` missing, a bad
  date, an extra field), collecting every problem, for ours and jsonschema.

Every validator is compiled once, before timing. Before timing, each case is checked to
accept the valid call and refuse the invalid one. Each case is calibrated to about 0.2 s
per round; rounds are interleaved; the median is reported (read ratios, not absolute
numbers, on a shared machine).

Run: ``python benchmarks/bench_validation.py`` (``--fast`` for a CI smoke run).
"""

from __future__ import annotations

import argparse
import datetime
import enum
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jsonschema import Draft202012Validator
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from benchmarks.weather import INVALID, SCHEMA, VALID
from sse_toolcalls.calls import ToolCall
from sse_toolcalls.runtime.errors import InvalidArgumentsError
from sse_toolcalls.runtime.tools import ArgumentValidator, ToolRegistry
from sse_toolcalls.runtime.tools.pydantic_validation import DISABLE_ENV, arguments_adapter


class Loc(BaseModel):
    model_config = ConfigDict(extra="forbid")
    lat: float
    lon: float


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")
    city: Annotated[str, Field(min_length=1)]
    unit: Literal["celsius", "fahrenheit"]
    days: Annotated[int, Field(ge=1, le=14)]
    location: Loc
    start: datetime.date


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


@dataclass(frozen=True)
class Location:
    lat: float
    lon: float


def forecast(
    city: Annotated[str, "The city"],
    unit: Unit,
    days: int,
    location: Location,
    start: datetime.date,
) -> str:
    """A forecast (never run here: the benchmark times the check only)."""
    return city


def forecast_plain(
    city: Annotated[str, "The city"],
    unit: Unit,
    days: int,
    location: dict[str, float],
    start: str,
) -> str:
    """The same call with hints the pydantic fast path covers (no dataclass, no date:
    see sse_toolcalls/runtime/tools/pydantic_validation.py)."""
    return city


def make_call(args: dict[str, Any]) -> ToolCall:
    return ToolCall(name="forecast", args=args, provider="openai_chat", call_id="c", index=0)


def cases() -> dict[str, tuple[Callable[[], object], Callable[[], bool], Callable[[], bool]]]:
    """Each case: (the timed call, accepts VALID?, refuses INVALID?)."""
    ours = ArgumentValidator(SCHEMA)
    registry = ToolRegistry()
    registry.register(forecast)
    fast_registry = ToolRegistry()
    fast_registry.register(forecast_plain, name="forecast")
    assert "forecast" in fast_registry._fast, "pydantic fast path not built"
    os.environ[DISABLE_ENV] = "1"
    try:
        slow_registry = ToolRegistry()
        slow_registry.register(forecast_plain, name="forecast")
    finally:
        del os.environ[DISABLE_ENV]
    plain = Draft202012Validator(SCHEMA)
    with_formats = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
    lax = TypeAdapter(Args)
    valid_json = json.dumps(VALID)
    invalid_json = json.dumps(INVALID)
    valid_call, invalid_call = make_call(VALID), make_call(INVALID)
    floor = arguments_adapter(forecast_plain)
    assert floor is not None
    valid_bytes, invalid_bytes = valid_json.encode(), invalid_json.encode()

    def floor_ok(data: bytes) -> bool:
        try:
            floor.validate_json(data)
        except ValidationError:
            return False
        return True

    def pydantic_ok(value: dict[str, Any]) -> bool:
        try:
            lax.validate_python(value)
        except ValidationError:
            return False
        return True

    def pydantic_json_ok(text: str) -> bool:
        try:
            lax.validate_json(text, strict=True)
        except ValidationError:
            return False
        return True

    def registry_ok(call: ToolCall, registry: ToolRegistry = registry) -> bool:
        try:
            registry.check(call)
        except InvalidArgumentsError:
            return False
        return True

    def pydantic_errors(value: dict[str, Any]) -> list[Any]:
        try:
            lax.validate_python(value)
        except ValidationError as exc:
            return list(exc.errors())
        return []

    return {
        "sse_toolcalls ArgumentValidator": (
            lambda: ours.validate(VALID),
            lambda: ours.validate(VALID)[2] == (),
            lambda: ours.validate(INVALID)[2] != (),
        ),
        "sse_toolcalls registry.check (+ decoding)": (
            lambda: registry.check(valid_call),
            lambda: registry_ok(valid_call),
            lambda: not registry_ok(invalid_call),
        ),
        "registry.check, pydantic fast path": (
            lambda: fast_registry.check(valid_call),
            lambda: registry_ok(valid_call, fast_registry),
            lambda: not registry_ok(invalid_call, fast_registry),
        ),
        "registry.check, JSON Schema path": (
            lambda: slow_registry.check(valid_call),
            lambda: registry_ok(valid_call, slow_registry),
            lambda: not registry_ok(invalid_call, slow_registry),
        ),
        "the fast path's TypeAdapter, bare": (
            lambda: floor.validate_json(valid_bytes),
            lambda: floor_ok(valid_bytes),
            lambda: not floor_ok(invalid_bytes),
        ),
        "jsonschema plain is_valid (no formats)": (
            lambda: plain.is_valid(VALID),
            lambda: plain.is_valid(VALID),
            lambda: not plain.is_valid(INVALID),
        ),
        "jsonschema + FormatChecker is_valid": (
            lambda: with_formats.is_valid(VALID),
            lambda: with_formats.is_valid(VALID),
            lambda: not with_formats.is_valid(INVALID),
        ),
        "pydantic TypeAdapter lax validate_python": (
            lambda: lax.validate_python(VALID),
            lambda: pydantic_ok(VALID),
            lambda: not pydantic_ok(INVALID),
        ),
        # Strict mode takes a date only from JSON text (in Python mode it wants a date
        # object), so this case parses the JSON text as well.
        "pydantic TypeAdapter strict validate_json": (
            lambda: lax.validate_json(valid_json, strict=True),
            lambda: pydantic_json_ok(valid_json),
            lambda: not pydantic_json_ok(invalid_json),
        ),
        "invalid call: sse_toolcalls, all problems": (
            lambda: ours.validate(INVALID),
            lambda: True,
            lambda: len(ours.validate(INVALID)[2]) == 5,
        ),
        "invalid call: jsonschema list(iter_errors)": (
            lambda: list(with_formats.iter_errors(INVALID)),
            lambda: True,
            lambda: len(list(with_formats.iter_errors(INVALID))) == 5,
        ),
        "invalid call: pydantic .errors()": (
            lambda: pydantic_errors(INVALID),
            lambda: True,
            lambda: len(pydantic_errors(INVALID)) == 5,
        ),
    }


def calibrate(fn: Callable[[], object], target: float) -> int:
    """How many calls take about ``target`` seconds."""
    n = 1
    while True:
        started = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - started
        if elapsed >= target / 4:
            return max(1, int(n * target / elapsed))
        n *= 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--fast", action="store_true", help="3 short rounds (CI smoke run)")
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args(argv)
    rounds, target = (3, 0.02) if args.fast else (args.rounds, 0.2)

    table = cases()
    for name, (_, accepts, refuses) in table.items():
        if not accepts():
            print(f"WRONG: {name} refused the valid call", file=sys.stderr)
            return 1
        if not refuses():
            print(f"WRONG: {name} did not refuse the invalid call as expected", file=sys.stderr)
            return 1

    sizes = {name: calibrate(fn, target) for name, (fn, _, _) in table.items()}
    rates: dict[str, list[float]] = {name: [] for name in table}
    for _ in range(rounds):
        for name, (fn, _, _) in table.items():
            n = sizes[name]
            started = time.perf_counter()
            for _ in range(n):
                fn()
            rates[name].append(n / (time.perf_counter() - started))

    print(f"Python {platform.python_version()} on {platform.machine()}, {rounds} rounds, median")
    print(f"{'case':<46}{'calls/s':>12}{'us/call':>10}")
    for name, values in rates.items():
        rate = statistics.median(values)
        print(f"{name:<46}{rate:>12,.0f}{1e6 / rate:>10.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
