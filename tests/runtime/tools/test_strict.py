"""Strict schemas (issue 12, item 5): OpenAI's strict form (every property required, the
optional ones nullable, no additional properties) and the null mapped back to "absent"
before validation; Anthropic's strict flag; Gemini's VALIDATED mode; off by default."""

from __future__ import annotations

from typing import Any, Literal

import jsonschema
import pytest

from sse_toolcalls import Dialect
from sse_toolcalls.calls import ToolCall, ToolSpec
from sse_toolcalls.conversation import Conversation, UserMessage
from sse_toolcalls.errors import UsageError
from sse_toolcalls.messages import build_request, tool_declarations
from sse_toolcalls.runtime import Dispatcher
from sse_toolcalls.runtime.errors import InvalidArgumentsError
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.strict import MAX_STRICT_DEPTH, strict_schema, unnullify

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["c", "f"]},
        "days": {"type": ["integer", "null"]},
        "where": {
            "type": "object",
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
            "required": ["lat"],
        },
        "tags": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"k": {"type": "string"}, "v": {"type": "string"}},
                "required": ["k"],
            },
        },
        "ref": {"$ref": "#/$defs/Ref"},
    },
    "required": ["city"],
    "$defs": {"Ref": {"type": "object", "properties": {"id": {"type": "string"}}}},
}
SPEC = ToolSpec(name="weather", description="The weather.", parameters=SCHEMA)
CONVERSATION: Conversation = [UserMessage(text="hi")]


def test_the_openai_strict_form() -> None:
    strict = strict_schema(SCHEMA)
    assert strict["required"] == list(SCHEMA["properties"])
    assert strict["additionalProperties"] is False
    props = strict["properties"]
    assert props["city"] == {"type": "string"}  # required already: unchanged
    assert props["unit"] == {"type": ["string", "null"], "enum": ["c", "f", None]}
    assert props["days"] == {"type": ["integer", "null"]}
    assert props["where"]["type"] == ["object", "null"]
    assert props["where"]["required"] == ["lat", "lon"]
    assert props["where"]["properties"]["lon"] == {"type": ["number", "null"]}
    assert props["where"]["additionalProperties"] is False
    item = props["tags"]["items"]
    assert (item["required"], item["additionalProperties"]) == (["k", "v"], False)
    assert props["ref"] == {"anyOf": [{"$ref": "#/$defs/Ref"}, {"type": "null"}]}
    assert strict["$defs"]["Ref"]["required"] == ["id"]
    assert SCHEMA["required"] == ["city"]  # the input is left alone
    jsonschema.Draft202012Validator.check_schema(strict)


def test_what_strict_sends_maps_back_to_what_the_tool_accepts() -> None:
    validator = jsonschema.Draft202012Validator(strict_schema(SCHEMA))
    original = jsonschema.Draft202012Validator(SCHEMA)
    sent: dict[str, Any] = {
        "city": "Paris",
        "unit": None,
        "days": None,
        "where": {"lat": 1.5, "lon": None},
        "tags": [{"k": "a", "v": None}],
        "ref": None,
    }
    assert validator.is_valid(sent)
    assert not original.is_valid(sent)
    back = unnullify(sent, SCHEMA)
    # "days" already accepted null in the tool's own schema: the model may mean it.
    assert back == {"city": "Paris", "days": None, "where": {"lat": 1.5}, "tags": [{"k": "a"}]}
    assert original.is_valid(back)
    assert sent["unit"] is None  # the input is left alone


def test_anthropic_keeps_optional_properties_optional() -> None:
    strict = strict_schema(SCHEMA, all_required=False)
    assert strict["required"] == ["city"]
    assert strict["properties"]["unit"] == SCHEMA["properties"]["unit"]
    assert strict["properties"]["where"]["additionalProperties"] is False


@pytest.mark.parametrize("extra", [True, {"type": "string"}])
def test_an_open_object_cannot_be_strict(extra: Any) -> None:
    schema = {
        "type": "object",
        "properties": {"m": {"type": "object", "additionalProperties": extra}},
    }
    with pytest.raises(UsageError, match=r"\$\.m allows properties beyond"):
        strict_schema(schema)


def test_depth_is_bounded() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(MAX_STRICT_DEPTH + 2):
        schema = {"type": "array", "items": schema}
    with pytest.raises(UsageError, match="deeper"):
        strict_schema(schema)
    deep: Any = None
    for _ in range(MAX_STRICT_DEPTH + 5):
        deep = [deep]
    assert unnullify(deep, schema) == deep


@pytest.mark.parametrize("dialect", ["openai_chat", "openai_responses", "anthropic"])
def test_off_by_default_and_on_when_asked(dialect: Dialect) -> None:
    def tool(body: dict[str, Any]) -> dict[str, Any]:
        declared: dict[str, Any] = body["tools"][0]
        inner: dict[str, Any] = declared.get("function", declared)
        return inner

    def schema(declared: dict[str, Any]) -> Any:
        return declared.get("parameters", declared.get("input_schema"))

    plain = tool(build_request(dialect, CONVERSATION, [SPEC], model="m"))
    assert plain.get("strict", False) is False
    assert schema(plain) == SCHEMA
    strict = tool(build_request(dialect, CONVERSATION, [SPEC], model="m", strict=True))
    assert strict["strict"] is True
    assert schema(strict) == strict_schema(SCHEMA, all_required=dialect != "anthropic")
    assert "strict" not in build_request(dialect, CONVERSATION, [SPEC], model="m", strict=True)
    assert tool_declarations(dialect, [SPEC], strict=True)[0] == body_tool(dialect, strict)


def body_tool(dialect: Dialect, declared: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": declared} if dialect == "openai_chat" else declared


def test_gemini_strict_is_the_validated_function_calling_mode() -> None:
    # Gemini's declarations have no strict flag; its documented schema-adherence control
    # is the request's function calling mode, VALIDATED.
    body = build_request("gemini", CONVERSATION, [SPEC], model="m", strict=True)
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "VALIDATED"}}
    assert body["tools"] == build_request("gemini", CONVERSATION, [SPEC], model="m")["tools"]
    assert "toolConfig" not in build_request("gemini", CONVERSATION, [SPEC], model="m")
    assert "toolConfig" not in build_request("gemini", CONVERSATION, [], model="m", strict=True)
    # The caller's other fields are kept; another mode beside strict is a clash.
    narrowed = build_request(
        "gemini",
        CONVERSATION,
        [SPEC],
        model="m",
        strict=True,
        toolConfig={"functionCallingConfig": {"allowedFunctionNames": ["weather"]}},
    )
    assert narrowed["toolConfig"] == {
        "functionCallingConfig": {"allowedFunctionNames": ["weather"], "mode": "VALIDATED"}
    }
    with pytest.raises(UsageError, match="pass one or the other"):
        build_request(
            "gemini",
            CONVERSATION,
            [SPEC],
            model="m",
            strict=True,
            toolConfig={"functionCallingConfig": {"mode": "ANY"}},
        )
    with pytest.raises(UsageError, match="build_request"):
        tool_declarations("gemini", [SPEC], strict=True)


def registry(*, strict: bool) -> ToolRegistry:
    tools = ToolRegistry(strict=strict)

    @tools.register
    def forecast(city: str, unit: Literal["c", "f"] = "c", days: int = 3) -> str:
        """The forecast.

        Args:
            city: where.
            unit: degrees.
            days: how many.
        """
        return f"{city} {unit} {days}"

    return tools


@pytest.mark.anyio
async def test_a_strict_registry_reads_null_as_absent() -> None:
    call = ToolCall(
        call_id="c",
        index=0,
        provider="openai_chat",
        name="forecast",
        args={"city": "Oslo", "unit": None, "days": None},
    )
    checked = registry(strict=True).check(call)
    assert checked.kwargs == {"city": "Oslo"}
    (report,) = await Dispatcher(registry(strict=True)).dispatch([call])
    result = report.result
    assert not result.is_error
    assert result.content == "Oslo c 3"  # the handler's defaults, not None


def test_without_strict_a_null_is_refused() -> None:
    call = ToolCall(
        call_id="c",
        index=0,
        provider="openai_chat",
        name="forecast",
        args={"city": "Oslo", "unit": None},
    )
    with pytest.raises(InvalidArgumentsError):
        registry(strict=False).check(call)


def test_a_strict_registry_still_refuses_a_missing_required_property() -> None:
    call = ToolCall(
        call_id="c", index=0, provider="openai_chat", name="forecast", args={"city": None}
    )
    with pytest.raises(InvalidArgumentsError):
        registry(strict=True).check(call)
