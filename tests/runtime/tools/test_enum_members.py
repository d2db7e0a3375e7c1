"""An integral float accepted by an ``enum`` or ``const`` of integers reaches the handler as
the member's own value: ``Literal[1, 2]`` given ``1.0`` is called with ``1``, as
``int`` given ``125.0`` is called with ``125``. JSON has one number type, so the model
meant the member; a handler comparing ``value is 1`` or formatting ``f"{value}"``
(``"1.0"``) must not see the float."""

from __future__ import annotations

import enum
import json
from typing import Any, Literal

import pytest

from sse_toolcalls.calls import ToolCall
from sse_toolcalls.runtime.errors import InvalidArgumentsError
from sse_toolcalls.runtime.ledgers.base import idempotency_key
from sse_toolcalls.runtime.tools import Tool, ToolRegistry, ValidatedCall
from sse_toolcalls.runtime.tools.pydantic_validation import DISABLE_ENV


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def _call(args: dict[str, Any], name: str = "f") -> ToolCall:
    return ToolCall(
        name=name,
        args=args,
        provider="openai_chat",
        call_id="c",
        index=0,
        raw_arguments=json.dumps(args),
    )


def _checked(registry: ToolRegistry, args: dict[str, Any], name: str = "f") -> ValidatedCall:
    checked = registry.check(_call(args, name))
    assert isinstance(checked, ValidatedCall)
    return checked


def _literal_registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register
    def f(
        size: Literal[1, 2],
        maybe: Literal[1, 2] | None = None,
        mixed: Literal["a", 3] = "a",
        sizes: list[Literal[1, 2]] | None = None,
    ) -> None:
        """Sizes."""

    return registry


@pytest.mark.parametrize("pydantic", [True, False], ids=["with-pydantic", "json-schema-only"])
def test_a_literal_of_ints_given_an_integral_float_gets_the_member(
    pydantic: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not pydantic:
        monkeypatch.setenv(DISABLE_ENV, "1")
    registry = _literal_registry()
    checked = _checked(registry, {"size": 1.0, "maybe": 2.0, "mixed": 3.0, "sizes": [2.0, 1]})
    kwargs = checked.kwargs
    assert kwargs == {"size": 1, "maybe": 2, "mixed": 3, "sizes": [2, 1]}
    assert [type(v) for v in (kwargs["size"], kwargs["maybe"], kwargs["mixed"])] == [int] * 3
    assert [type(v) for v in kwargs["sizes"]] == [int, int]
    # The validated JSON arguments too: what the ledger and a replay see.
    assert type(checked.arguments["size"]) is int
    with pytest.raises(InvalidArgumentsError):
        registry.check(_call({"size": 1.5}))
    with pytest.raises(InvalidArgumentsError):
        registry.check(_call({"size": True}))


def test_an_int_enum_given_an_integral_float_gets_the_member() -> None:
    registry = ToolRegistry()

    @registry.register
    def f(level: Level) -> None:
        """Level."""

    kwargs = _checked(registry, {"level": 2.0}).kwargs
    assert kwargs["level"] is Level.HIGH


def _schema_registry(schema: dict[str, Any]) -> tuple[ToolRegistry, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []

    def handler(**kwargs: Any) -> None:
        seen.append(kwargs)

    registry = ToolRegistry()
    registry.add(Tool(name="f", description="", parameters=schema, handler=handler))
    return registry, seen


@pytest.mark.parametrize(
    ("schema", "sent", "want"),
    [
        ({"enum": [1, 2]}, 1.0, 1),
        ({"type": "integer", "enum": [1, 2]}, 2.0, 2),
        ({"const": 7}, 7.0, 7),
        ({"anyOf": [{"enum": [1, 2]}, {"type": "null"}]}, 1.0, 1),
        ({"type": "array", "items": {"enum": [1, 2]}}, [1.0, 2.0], [1, 2]),
        ({"enum": ["1", 1]}, 1.0, 1),
        # Not narrowed: no int member equals it, or the place wants any number.
        ({"enum": [1.5, 2]}, 1.5, 1.5),
        ({"type": "number"}, 2.0, 2.0),
        ({"enum": [1.0, 2.0]}, 1.0, 1.0),
    ],
)
def test_a_json_schema_enum_or_const_of_ints_hands_over_the_member(
    schema: dict[str, Any], sent: Any, want: Any
) -> None:
    registry, _ = _schema_registry({"type": "object", "properties": {"x": schema}})
    got = _checked(registry, {"x": sent}).arguments["x"]
    assert got == want
    assert json.dumps(got) == json.dumps(want)  # 1 and 1.0 differ in their types only


def test_narrowing_keeps_the_callers_object_and_the_idempotency_key() -> None:
    registry, _ = _schema_registry({"type": "object", "properties": {"x": {"enum": [1, 2]}}})
    sent = {"x": 1.0}
    as_float = _checked(registry, sent)
    as_int = _checked(registry, {"x": 1})
    assert sent == {"x": 1.0} and type(sent["x"]) is float  # the model's args untouched
    keys = [
        idempotency_key(
            tool="f",
            arguments=checked.kwargs,
            json_arguments=checked.arguments,
            request_id="r",
            occurrence=0,
        )
        for checked in (as_float, as_int)
    ]
    assert keys[0] == keys[1]
