"""Validation and coercion attacked from a model's and an attacker's seat: each test here
failed before the fix its docstring names."""

from __future__ import annotations

from typing import Any

import pytest

from sse_toolcalls.calls import ToolCall, ToolResult
from sse_toolcalls.dialects._common import parse_arguments
from sse_toolcalls.runtime.tools import ToolRegistry, ValidatedCall

SAFE = 2**53


def checked(args: dict[str, Any]) -> ValidatedCall | ToolResult:
    registry = ToolRegistry()

    def charge(cents: int) -> str:
        """Charge an amount, in cents."""
        return f"charged {cents}"

    registry.register(charge, effect="write")
    registry.add_schema_tool(
        "charge_raw",
        {"type": "object", "properties": {"cents": {"type": "integer"}}, "required": ["cents"]},
        lambda cents: f"charged {cents}",
        description="Charge an amount, in cents.",
    )
    name = str(args.pop("_tool", "charge"))
    return registry.validate(
        ToolCall(name=name, args=args, provider="openai_chat", call_id="c", index=0)
    )


@pytest.mark.parametrize("tool", ["charge", "charge_raw"])
@pytest.mark.parametrize("text", ["1e300", "9007199254740993.0", "9007199254740992.0", "-1e17"])
def test_a_float_past_2_53_is_no_integer_the_handler_would_get_exactly(
    tool: str, text: str
) -> None:
    """A float past 2**53 is not the integer the model wrote: ``9007199254740993.0``
    parses as 2**53 and the handler was charged ...992; ``1e300`` became a 301-digit
    integer ending in float noise. Both passed as integers (fixed: an integer parameter
    takes a float only below 2**53, where every integral float is exact)."""
    args, error = parse_arguments('{"cents": ' + text + "}")
    assert error is None and isinstance(args["cents"], float)
    outcome = checked({**args, "_tool": tool})
    assert isinstance(outcome, ToolResult) and outcome.is_error
    assert isinstance(outcome.content, dict)
    problem = outcome.content["problems"][0]
    assert problem["path"] == "$.cents" and problem["problem"] == "wrong_type"
    assert "digits" in problem["message"]


@pytest.mark.parametrize("tool", ["charge", "charge_raw"])
@pytest.mark.parametrize(
    ("text", "value"),
    [("5.0", 5), ("-0.0", 0), ("9007199254740991.0", SAFE - 1), ("9007199254740993", SAFE + 1)],
)
def test_exact_integers_still_pass_however_spelled(tool: str, text: str, value: int) -> None:
    args, _ = parse_arguments('{"cents": ' + text + "}")
    outcome = checked({**args, "_tool": tool})
    assert isinstance(outcome, ValidatedCall)
    assert outcome.kwargs["cents"] == value
    if tool == "charge":
        assert type(outcome.kwargs["cents"]) is int
