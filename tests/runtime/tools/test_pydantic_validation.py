"""The pydantic fast path against the JSON Schema path: the same verdicts, the same values.

The fast path may only accept what the JSON Schema path accepts unchanged (no coercion),
with equal decoded values (types included); everything else it leaves to the slow path. So
the differential test compares, for the same Python signature, a registry with the fast
path and one without it, over BFCL's single-turn functions turned into Python signatures,
their ground-truth calls, the systematic mutations of those calls, and the coercion cases
(``"5"`` and ``5.0`` for an int, ``5`` for a float).
"""

from __future__ import annotations

import datetime
import enum
import inspect
import json
import os
import re
import typing
from collections.abc import Callable, Iterator
from typing import Annotated, Any, Literal

import pytest

from sse_toolcalls.calls import ToolCall
from sse_toolcalls.runtime.errors import InvalidArgumentsError, UnknownToolError
from sse_toolcalls.runtime.tools import ToolRegistry, ValidatedCall
from sse_toolcalls.runtime.tools.pydantic_validation import DISABLE_ENV, fast_validator
from sse_toolcalls.tooling import bfcl

SAMPLE_EVERY = int(os.environ.get("SSE_TOOLCALLS_BFCL_EVERY", "10"))
"""One BFCL entry in ten (235 entries, about 2,900 calls, mutations and variants; 12 s of
CPU on the loaded machine, 2026-12-01): every entry is the same code path, with more
signatures. All of them (``SSE_TOOLCALLS_BFCL_EVERY=1``, 2,351 entries) take an estimated
90 to 125 s of CPU (from the samples), too much for CI's budget; the command is in README ("BFCL single-turn")."""


def _hint(schema: Any) -> Any:
    """The Python hint of a BFCL (converted) property schema, as a user would write it."""
    if not isinstance(schema, dict):
        return Any
    declared = schema.get("type")
    enum_values = schema.get("enum")
    if isinstance(enum_values, list) and enum_values and all(type(v) is str for v in enum_values):
        return Literal[tuple(enum_values)]
    if isinstance(enum_values, list) and enum_values and all(type(v) is int for v in enum_values):
        return Literal[tuple(enum_values)]  # the slow path alone (pydantic takes true for 1)
    if declared == "string":
        return str
    if declared == "integer":
        return int
    if declared == "number":
        return float
    if declared == "boolean":
        return bool
    if declared == "array":
        return list[_hint(schema.get("items"))]  # type: ignore[misc]
    if declared == "object":
        return dict[str, Any]
    return Any


def _identifier(name: str) -> str:
    return re.sub(r"\W", "_", name) if name.isidentifier() is False else name


def signature_function(function: dict[str, Any]) -> Callable[..., Any] | None:
    """A Python function with the signature a BFCL function's parameters describe (``None``
    when a parameter name is no Python identifier or a keyword)."""
    schema = bfcl.gorilla_schema(function["parameters"])
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    parameters = []
    annotations: dict[str, Any] = {}
    for name, sub in properties.items():
        if not name.isidentifier() or name in {"self", "return"}:
            return None
        hint = _hint(sub)
        description = sub.get("description") if isinstance(sub, dict) else None
        annotations[name] = Annotated[hint, description] if description else hint
        default = inspect.Parameter.empty if name in required else None
        parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default))

    def handler(**kwargs: Any) -> dict[str, Any]:
        return kwargs

    handler.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    handler.__annotations__ = annotations
    handler.__doc__ = function.get("description", "")
    return handler


def _verdict(registry: ToolRegistry, call: ToolCall) -> Any:
    try:
        checked = registry.check(call)
    except UnknownToolError:
        return ("unknown",)
    except InvalidArgumentsError as exc:
        return ("refused", exc.problems)
    # Values with their types: 5 and 5.0 are equal in Python, not to a handler.
    return ("ok", _typed(checked.kwargs), checked.arguments, checked.coercions)


def _typed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def _coercion_variants(call: ToolCall, schema: dict[str, Any]) -> Iterator[ToolCall]:
    for name, sub in schema.get("properties", {}).items():
        if name not in call.args or not isinstance(sub, dict):
            continue
        value = call.args[name]
        variants: list[Any] = []
        members = sub.get("enum")
        if isinstance(members, list) and type(value) is int and value in members:
            variants = [float(value)]  # the member itself must reach the handler (an int)
        elif sub.get("type") == "integer" and type(value) is int:
            variants = [str(value), float(value), True]
        elif sub.get("type") == "number" and type(value) in (int, float):
            variants = [int(value), str(value), None]
        elif sub.get("type") == "boolean":
            variants = [json.dumps(value), 1]
        for variant in variants:
            args = {**call.args, name: variant}
            yield ToolCall(
                name=call.name,
                args=args,
                provider=call.provider,
                call_id=call.call_id,
                index=call.index,
                raw_arguments=json.dumps(args),
            )


def _registries(entry: bfcl.Entry) -> tuple[ToolRegistry, ToolRegistry, int] | None:
    fast, slow = ToolRegistry(), ToolRegistry()
    covered = 0
    for function in entry.functions:
        handler = signature_function(function)
        if handler is None:
            return None
        fast.register(handler, name=function["name"])
        covered += fast_validator(handler) is not None
        os.environ[DISABLE_ENV] = "1"
        try:
            slow.register(handler, name=function["name"])
        finally:
            del os.environ[DISABLE_ENV]
    return fast, slow, covered


def test_both_validators_agree_over_bfcl() -> None:
    source = bfcl.find_source()
    if source is None:
        message = f"no BFCL data: set {bfcl.DATA_ENV} (pip download --no-deps bfcl-eval)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    disagreements: list[str] = []
    counts = dict.fromkeys(
        (
            "entries",
            "covered_tools",
            "ground_truths",
            "mutations",
            "coercion_variants",
            "calls",
            "agreements",
            "refused",
            "fast_accepted",
        ),
        0,
    )
    for category in bfcl.CATEGORIES:
        for entry in source.entries(category)[::SAMPLE_EVERY]:
            built = _registries(entry)
            if built is None:
                continue
            fast, slow, covered = built
            counts["entries"] += 1
            counts["covered_tools"] += covered
            for call in bfcl.ground_truth_calls(entry):
                tool = slow.get(call.name)
                schema = tool.parameters if tool is not None else {}
                mutated = [m.call for m in bfcl.mutations(call, schema)]
                variants = list(_coercion_variants(call, schema))
                counts["ground_truths"] += 1
                counts["mutations"] += len(mutated)
                counts["coercion_variants"] += len(variants)
                for probe in [call, *mutated, *variants]:
                    counts["calls"] += 1
                    got, want = _verdict(fast, probe), _verdict(slow, probe)
                    if got != want:
                        disagreements.append(f"{entry.id} {probe.args}: {got} != {want}")
                    else:
                        counts["agreements"] += 1
                    counts["refused"] += want[0] != "ok"
                    checker = fast._fast.get(probe.name)
                    if checker is not None and checker(probe.args) is not None:
                        counts["fast_accepted"] += 1
    # The figures, for the full run's command (pytest -rP shows them).
    print(  # noqa: T201 - the command's report, shown by -rP only
        f"BFCL differential, one entry in {SAMPLE_EVERY}: {counts}"
    )
    assert disagreements == []
    # Not vacuous: most tools have a fast path, and it decided many calls itself.
    scale = 20 / SAMPLE_EVERY
    assert counts["covered_tools"] > 100 * scale, counts
    assert counts["fast_accepted"] > 100 * scale, counts
    assert counts["refused"] > 300 * scale, counts


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1


@pytest.mark.parametrize(
    ("hint", "covered"),
    [
        (str, True),
        (typing.Optional[int], True),  # noqa: UP045 (the spelling users write too)
        (list[float], True),
        (dict[str, bool], True),
        (Literal["a", "b"], True),
        (Color, True),
        (Annotated[int, "text"], True),
        (Any, True),
        (Literal[1, 2], False),  # pydantic takes true for 1
        (Level, False),
        (int | str, False),  # pydantic picks by exact type, the decoder the first member
        (tuple[int, int], False),  # a JSON array is a tuple in lax mode only
        (set[str], False),
        (dict[int, str], False),
    ],
)
def test_the_fast_path_covers_only_kinds_where_both_agree(hint: Any, covered: bool) -> None:
    def tool(**kwargs: Any) -> None:
        return None

    tool.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("x", inspect.Parameter.KEYWORD_ONLY)]
    )
    tool.__annotations__ = {"x": hint}
    assert (fast_validator(tool) is not None) is covered


def test_no_fast_path_with_kwargs_or_when_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    def extra(a: int, **rest: Any) -> None:
        return None

    def plain(a: int) -> None:
        return None

    assert fast_validator(extra) is None
    assert fast_validator(plain) is not None
    monkeypatch.setenv(DISABLE_ENV, "1")
    assert fast_validator(plain) is None


def _call(args: dict[str, Any], name: str = "f") -> ToolCall:
    return ToolCall(
        name=name,
        args=args,
        provider="openai_chat",
        call_id="c1",
        index=0,
        raw_arguments=json.dumps(args),
    )


def test_the_fast_path_decodes_as_the_slow_path() -> None:
    registry = ToolRegistry()

    @registry.register
    def f(color: Color, ratio: float, tags: list[str] | None = None) -> None:
        """Paint."""

    assert f.__name__ in registry._fast
    checked = registry.check(_call({"color": "red", "ratio": 2}))
    assert isinstance(checked, ValidatedCall)
    assert checked.kwargs == {"color": Color.RED, "ratio": 2.0}
    assert type(checked.kwargs["ratio"]) is float
    assert checked.coercions == ()


def test_refusals_and_coercions_are_the_slow_paths() -> None:
    registry = ToolRegistry()

    @registry.register
    def f(days: int, unit: Literal["c", "f"] = "c") -> None:
        """Forecast."""

    coerced = registry.check(_call({"days": "5"}))
    assert coerced.kwargs == {"days": 5}
    assert [(c.path, c.original, c.value) for c in coerced.coercions] == [("$.days", "5", 5)]
    with pytest.raises(InvalidArgumentsError) as refused:
        registry.check(_call({"days": 5, "unit": "kelvin"}))
    assert [p.message for p in refused.value.problems] == ["must be one of 'c', 'f'; got 'kelvin'"]


def test_what_json_cannot_carry_goes_to_the_slow_path() -> None:
    registry = ToolRegistry()

    @registry.register
    def f(x: float | None = None, deep: Any = None) -> None:
        """Take a number."""

    fast = registry._fast["f"]
    # A NaN would go out as JSON null and come back as None: the slow path decides.
    assert fast({"x": float("nan")}) is None
    assert registry.check(_call({"x": 1.5})).kwargs == {"x": 1.5}
    nested: Any = 1
    for _ in range(100):
        nested = [nested]
    assert fast({"deep": nested}) is None
    with pytest.raises(InvalidArgumentsError) as refused:
        registry.check(_call({"deep": nested}))
    assert refused.value.problems[0].kind == "too_deep"
    assert fast({"x": 10**30}) is None  # past orjson's 64-bit integers


def test_values_json_cannot_carry_as_they_are_get_the_slow_paths_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A hand-made ToolCall may hold what orjson would write as other JSON: a tuple as an
    # array, a date or an Enum member as a string. The JSON Schema path refuses all
    # three; the fast path took them (and gave the handler a list, a str, the member).
    def f(tags: list[str], when: str, color: Color | None = None) -> None:
        """Tag."""

    fast = ToolRegistry()
    fast.register(f)
    monkeypatch.setenv(DISABLE_ENV, "1")
    slow = ToolRegistry()
    slow.register(f)
    assert "f" in fast._fast and "f" not in slow._fast
    for args in (
        {"tags": ("a",), "when": "x"},
        {"tags": ["a"], "when": datetime.date(2025, 1, 1)},
        {"tags": ["a"], "when": "x", "color": Color.RED},
        {"tags": ["a"], "when": _Text("x")},
        {"tags": ["a"], _Text("when"): "x"},
    ):
        probe = ToolCall(name="f", args=args, provider="openai_chat", call_id="c", index=0)
        assert _verdict(fast, probe) == _verdict(slow, probe), args
        assert fast._fast["f"](args) is None
    assert fast._fast["f"]({"tags": ["a"], "when": "x", "color": "red"}) == {
        "tags": ["a"],
        "when": "x",
        "color": Color.RED,
    }


class _Text(str):
    """A str subclass: no value the parser makes."""
