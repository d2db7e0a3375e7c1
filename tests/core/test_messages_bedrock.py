"""The two Bedrock dialects' messages: Converse blocks field by field, held to botocore's
own service model, and the Anthropic body for InvokeModel held to the anthropic dialect's.
"""

from __future__ import annotations

import base64
import dataclasses
import itertools
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sse_toolcalls._jsonsafe import dumps_safe
from sse_toolcalls.calls import (
    DIALECTS,
    Dialect,
    Document,
    Image,
    MediaPart,
    ReasoningBlock,
    StreamFinished,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from sse_toolcalls.conversation import (
    AssistantMessage,
    Message,
    SystemPrompt,
    ToolResultsMessage,
    UserMessage,
)
from sse_toolcalls.crossing import carry_over
from sse_toolcalls.dialects.anthropic import messages as anthropic
from sse_toolcalls.dialects.bedrock_anthropic import messages as invoke
from sse_toolcalls.dialects.bedrock_converse import messages as converse
from sse_toolcalls.dialects.naming import ToolNameMap, name_rule
from sse_toolcalls.errors import UsageError
from sse_toolcalls.messages import assistant_turn, build_request, format_results
from sse_toolcalls.parser import StreamParser
from tests.bedrock_model import converse_problems, shape, wire
from tests.outside import EXTERNAL_STREAMS, corpus_params, missing_reason

CONVERSE: Dialect = "bedrock_converse"
INVOKE: Dialect = "bedrock_anthropic"

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(40))
PDF = b"%PDF-1.4 a tiny document"

TOOLS = [
    ToolSpec(
        name="weather.get",
        description="Weather for a city.",
        parameters={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    ),
    ToolSpec(name="get_time", description="", parameters={"type": "object"}),
]


def call(
    index: int,
    call_id: str | None = None,
    *,
    name: str = "get_time",
    provider: Dialect = CONVERSE,
    args: dict[str, Any] | None = None,
) -> ToolCall:
    args = {"n": index} if args is None else args
    return ToolCall(
        name=name,
        args=args,
        provider=provider,
        call_id=f"tooluse_{index}" if call_id is None else call_id,
        index=index,
        raw_arguments=dumps_safe(args).decode(),
    )


def turn_with_results(*results: ToolResult, text: str = "") -> list[Message]:
    calls = tuple(r.call for r in results)
    return [
        UserMessage(text="hi"),
        AssistantMessage(text=text, calls=calls),
        ToolResultsMessage(results=results),
    ]


def results_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        block["toolResult"]
        for message in body["messages"]
        for block in message["content"]
        if "toolResult" in block
    ]


# --------------------------------------------------------------------------------------
# Converse: results


def test_results_are_one_user_message_of_tool_result_blocks_in_call_order() -> None:
    a, b, c = call(0), call(1), call(2)
    out = format_results(
        [
            ToolResult(call=c, content=[1, 2]),
            ToolResult(call=a, content={"temp": 20}),
            ToolResult(call=b, content="no such city", is_error=True),
        ]
    )
    assert out == [
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "tooluse_0",
                        "content": [{"json": {"temp": 20}}],
                        "status": "success",
                    }
                },
                {
                    "toolResult": {
                        "toolUseId": "tooluse_1",
                        "content": [{"text": "no such city"}],
                        "status": "error",
                    }
                },
                {
                    "toolResult": {
                        "toolUseId": "tooluse_2",
                        "content": [{"text": "[1,2]"}],
                        "status": "success",
                    }
                },
            ],
        }
    ]


@pytest.mark.parametrize(
    ("content", "is_error", "expected"),
    [
        ("", True, "The tool failed without a message."),
        (" \n\t", True, "The tool failed without a message."),
        ("", False, "The tool returned no content."),
        ("\u3000", False, "The tool returned no content."),
    ],
)
def test_blank_content_gets_a_sentence_the_service_takes(
    content: str, is_error: bool, expected: str
) -> None:
    # "text content blocks must be non-empty" / "must contain non-whitespace text".
    (message,) = format_results([ToolResult(call=call(0), content=content, is_error=is_error)])
    result = message["content"][0]["toolResult"]
    assert result["content"] == [{"text": expected}]
    assert result["status"] == ("error" if is_error else "success")


def test_an_error_object_is_json_with_status_error() -> None:
    error = {"error": "bad", "path": "/city"}
    (message,) = format_results([ToolResult(call=call(0), content=error, is_error=True)])
    assert message["content"][0]["toolResult"]["content"] == [{"json": error}]
    assert message["content"][0]["toolResult"]["status"] == "error"


def test_images_and_documents_go_as_blocks_after_the_content() -> None:
    media: tuple[MediaPart, ...] = (
        Image(data=PNG),
        Image(data=b"jpeg bytes", media_type="IMAGE/JPEG; q=1"),
        Image(url="s3://bucket/chart.webp", media_type="image/webp"),
        Document(data=PDF, name="report.pdf"),
        Document(url="s3://bucket/notes.md", media_type="text/markdown"),
    )
    (message,) = format_results([ToolResult(call=call(0), content="Chart", media=media)])
    content = message["content"][0]["toolResult"]["content"]
    assert content[0] == {"text": "Chart"}
    assert content[1] == {
        "image": {"format": "png", "source": {"bytes": base64.b64encode(PNG).decode()}}
    }
    assert content[2]["image"]["format"] == "jpeg"
    assert content[3] == {
        "image": {"format": "webp", "source": {"s3Location": {"uri": "s3://bucket/chart.webp"}}}
    }
    document = content[4]["document"]
    assert document["format"] == "pdf"
    assert document["source"] == {"bytes": base64.b64encode(PDF).decode()}
    assert document["name"].startswith("report-pdf [")
    assert content[5]["document"]["source"] == {"s3Location": {"uri": "s3://bucket/notes.md"}}
    assert content[5]["document"]["format"] == "md"


@pytest.mark.parametrize(
    "part",
    [
        Image(url="https://example.com/a.png"),  # Converse fetches only from S3
        Image(url="s3://ab/short-bucket.png"),  # S3Uri: a bucket name of 3 to 63
        Image(url="s3://bucket/a\nb.png"),
        Image(data=b"BM...", media_type="image/bmp"),  # not an ImageFormat
        Image(data=b""),  # a blob of at least one byte
        Document(data=b"{}", media_type="application/json", name="data.json"),
        Document(url="https://example.com/a.pdf"),
    ],
)
def test_media_converse_cannot_take_becomes_a_line_of_text(part: MediaPart) -> None:
    (message,) = format_results([ToolResult(call=call(0), content="", media=(part,))])
    (block,) = message["content"][0]["toolResult"]["content"]
    assert block["text"].startswith("[image" if isinstance(part, Image) else "[document")
    assert part.media_type in block["text"] and "not shown" in block["text"]


def test_document_names_are_legal_and_unique_in_the_whole_request() -> None:
    # "Messages can't contain duplicate document names", across turns too; and only
    # letters, digits, single spaces, hyphens, parentheses and brackets, 200 at most.
    hostile = ["report.pdf", "report.pdf", None, "a  b\t\tc", "x" * 500, "ünï_cødé/..\\", ""]
    conversation: list[Message] = [UserMessage(text="go")]
    for turn in range(2):
        calls = tuple(call(i, f"id{turn}_{i}") for i in range(len(hostile)))
        results = tuple(
            ToolResult(call=c, content="d", media=(Document(data=PDF, name=name),))
            for c, name in zip(calls, hostile, strict=True)
        )
        conversation += [AssistantMessage(calls=calls), ToolResultsMessage(results=results)]
    # Each turn's blocks as format_results writes them (the request keeps five).
    formatted = [
        format_results(m.results)[0] for m in conversation if isinstance(m, ToolResultsMessage)
    ]
    names = [
        block["document"]["name"]
        for result in results_of({"messages": formatted})
        for block in result["content"]
        if "document" in block
    ]
    assert len(names) == 2 * len(hostile)
    assert len({n.lower() for n in names}) == len(names)
    for name in names:
        assert re.fullmatch(r"[A-Za-z0-9()\[\]-]+( [A-Za-z0-9()\[\]-]+)*", name), name
        assert 1 <= len(name) <= 200
    # The same conversation gives the same names (a replay stays cacheable).
    body = build_request(CONVERSE, conversation, TOOLS, model="m")
    assert build_request(CONVERSE, conversation, TOOLS, model="m") == body
    assert converse_problems(body) == []


def test_past_five_documents_the_earliest_become_text() -> None:
    # "You can't include more than 5 documents in a request": the latest five stay.
    conversation: list[Message] = [UserMessage(text="read them")]
    for turn in range(4):
        calls = (call(0, f"t{turn}a"), call(1, f"t{turn}b"))
        results = tuple(
            ToolResult(call=c, content="doc", media=(Document(data=PDF, name=f"r{turn}{c.index}"),))
            for c in calls
        )
        conversation += [AssistantMessage(calls=calls), ToolResultsMessage(results=results)]
    body = build_request(CONVERSE, conversation, TOOLS, model="m")
    kept = [[next(iter(item)) for item in result["content"]] for result in results_of(body)]
    assert kept == [["text", "text"]] * 3 + [["text", "document"]] * 5
    assert "'r00 [" in results_of(body)[0]["content"][1]["text"]
    assert "at most 5 documents" in results_of(body)[0]["content"][1]["text"]
    assert converse_problems(body) == []
    assert len(format_results(conversation[-1].results)[0]["content"]) == 2  # type: ignore[union-attr]


def test_results_of_another_dialect_or_without_a_usable_id_are_refused() -> None:
    with pytest.raises(UsageError, match="bedrock_converse"):
        converse.format_results([ToolResult(call=call(0, provider="anthropic"), content="x")])
    with pytest.raises(UsageError, match="no id"):
        format_results([ToolResult(call=dataclasses.replace(call(0), call_id=None), content="")])
    for bad in ["", "a b", "x" * 65, "id/1", "tool\nuse", "ü"]:
        with pytest.raises(UsageError, match="Bedrock"):
            format_results([ToolResult(call=call(0, bad), content="x")])
    with pytest.raises(UsageError, match="same call"):
        format_results(
            [ToolResult(call=call(0), content="1"), ToolResult(call=call(0), content="2")]
        )


def test_a_huge_bad_id_or_name_is_shown_short() -> None:
    with pytest.raises(UsageError) as caught:
        format_results([ToolResult(call=call(0, "/" * 1_000_000), content="x")])
    assert len(str(caught.value)) < 400
    with pytest.raises(UsageError) as caught:
        converse.assistant_turn("", [call(0, name="." * 1_000_000)])
    assert len(str(caught.value)) < 400


def test_kimis_ids_with_dots_and_colons_are_kept() -> None:
    # A real ConverseStream id (kimi_k2_reasoning_then_tool_reframed.eventstream); the
    # service model's ToolUseId pattern is [a-zA-Z0-9_.:-]+.
    kimi = call(0, "functions.glob_search:0")
    (message,) = format_results([ToolResult(call=kimi, content="x")])
    assert message["content"][0]["toolResult"]["toolUseId"] == "functions.glob_search:0"
    assert shape("ToolUseId").metadata == {"min": 1, "max": 64, "pattern": "[a-zA-Z0-9_.:-]+"}


# --------------------------------------------------------------------------------------
# Converse: the assistant turn and its reasoning


SIGNATURE = "Eu0CCkgIBxABGAIqQJDccbDQkr81n7QjZ0Fi43umSvw0YvnGkMPEpaGAa2btYHyWw06KhwckvsnKzp=="


def test_assistant_turn_reasoning_text_then_calls_with_later_reasoning_between() -> None:
    first, second = call(0, name="weather.get"), call(1)
    reasoning = (
        ReasoningBlock(provider=CONVERSE, kind="thinking", text=" Let me", signature=SIGNATURE),
        ReasoningBlock(provider=CONVERSE, kind="redacted_thinking", data="cmVkYWN0ZWQ="),
        ReasoningBlock(provider="anthropic", kind="thinking", text="not ours", signature="x"),
        ReasoningBlock(provider=CONVERSE, kind="thinking", text="Now time.", before_call=1),
    )
    names = ToolNameMap(CONVERSE, [t.name for t in TOOLS])
    (message,) = assistant_turn("I'll look.", [second, first], names=names, reasoning=reasoning)
    assert message == {
        "role": "assistant",
        "content": [
            {"reasoningContent": {"reasoningText": {"text": " Let me", "signature": SIGNATURE}}},
            {"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}},
            {"text": "I'll look."},
            {"toolUse": {"toolUseId": "tooluse_0", "name": "weather_get", "input": {"n": 0}}},
            {"reasoningContent": {"reasoningText": {"text": "Now time."}}},
            {"toolUse": {"toolUseId": "tooluse_1", "name": "get_time", "input": {"n": 1}}},
        ],
    }


def test_the_reasoning_union_holds_one_member() -> None:
    # ReasoningContentBlock is a union: a block that streamed text, its signature and a
    # redacted payload goes back as the signed text; one with the payload only, redacted.
    both = ReasoningBlock(provider=CONVERSE, kind="thinking", text="t", signature="s", data="cmVk")
    only = ReasoningBlock(provider=CONVERSE, kind="thinking", data="cmVk")
    (message,) = converse.assistant_turn("", [call(0)], reasoning=(both, only))
    assert message["content"][:2] == [
        {"reasoningContent": {"reasoningText": {"text": "t", "signature": "s"}}},
        {"reasoningContent": {"redactedContent": "cmVk"}},
    ]
    empty = ReasoningBlock(provider=CONVERSE, kind="redacted_thinking", data="")
    assert converse.assistant_turn("", [], reasoning=(empty,)) == []


def test_an_empty_turn_is_no_message_and_blank_text_no_block() -> None:
    assert converse.assistant_turn("", []) == []
    assert converse.assistant_turn(" \n", []) == []
    (message,) = converse.assistant_turn("  ", [call(0)])
    assert [list(block) for block in message["content"]] == [["toolUse"]]
    empty = ReasoningBlock(provider=CONVERSE, kind="thinking")
    assert converse.assistant_turn("", [], reasoning=(empty,)) == []


@given(
    text=st.text(st.characters(exclude_categories=["Cs"]), max_size=40),
    signature=st.text(st.characters(exclude_categories=["Cs"]), max_size=300),
    data=st.binary(min_size=1, max_size=64),
)
def test_reasoning_goes_back_byte_for_byte(text: str, signature: str, data: bytes) -> None:
    redacted = base64.b64encode(data).decode()
    reasoning = (
        ReasoningBlock(provider=CONVERSE, kind="thinking", text=text, signature=signature),
        ReasoningBlock(provider=CONVERSE, kind="redacted_thinking", data=redacted),
    )
    conversation: list[Message] = [
        UserMessage(text="hi"),
        AssistantMessage(text="ok", calls=(call(0),), reasoning=reasoning),
        ToolResultsMessage(results=(ToolResult(call=call(0), content="done"),)),
    ]
    body = wire(build_request(CONVERSE, conversation, TOOLS, model="m"))
    blocks = [
        b["reasoningContent"] for b in body["messages"][1]["content"] if "reasoningContent" in b
    ]
    assert blocks == [
        {"reasoningText": {"text": text, "signature": signature}},
        {"redactedContent": redacted},
    ]


def test_names_that_break_bedrocks_rule_are_refused() -> None:
    # The call's own name, or a map of another dialect (Gemini takes dots).
    with pytest.raises(UsageError, match=r"\[a-zA-Z0-9_-\]\{1,64\}"):
        assistant_turn("", [call(0, name="weather.get")])
    gemini = ToolNameMap("gemini", ["weather.get"])
    with pytest.raises(UsageError, match="Bedrock's rule"):
        converse.assistant_turn("", [call(0, name="weather.get")], names=gemini)
    with pytest.raises(UsageError, match="Bedrock's rule"):
        converse.tool_declarations(TOOLS, names=gemini)
    for bad in ["", "x" * 65, "a b", "naïve"]:
        with pytest.raises(UsageError):
            converse.assistant_turn("", [call(0, name=bad)])


@given(name=st.text(max_size=80))
def test_any_name_is_refused_or_sent_legal(name: str) -> None:
    try:
        (message,) = converse.assistant_turn("", [call(0, name=name)])
    except UsageError:
        return
    sent = message["content"][0]["toolUse"]["name"]
    assert sent == name and re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", sent)


def test_the_dialects_name_rule_is_the_service_models() -> None:
    tool_name = shape("ToolName").metadata
    rule = name_rule(CONVERSE)
    assert (rule.pattern.pattern, rule.max_length, rule.first_char) == (
        tool_name["pattern"],
        tool_name["max"],
        None,
    )
    assert tool_name["min"] == 1


# --------------------------------------------------------------------------------------
# Converse: declarations, tool choice, the request body


def test_declarations_are_tool_specs_under_wire_names() -> None:
    assert converse.tool_declarations(TOOLS) == [
        {
            "toolSpec": {
                "name": "weather_get",
                "description": "Weather for a city.",
                "inputSchema": {"json": TOOLS[0].parameters},
            }
        },
        # "description": NonEmptyString: an empty one is left out.
        {"toolSpec": {"name": "get_time", "inputSchema": {"json": {"type": "object"}}}},
    ]
    (strict, _) = converse.tool_declarations(TOOLS, strict=True)
    assert strict["toolSpec"]["strict"] is True
    assert strict["toolSpec"]["inputSchema"]["json"]["additionalProperties"] is False
    with pytest.raises(UsageError, match="twice"):
        converse.tool_declarations([TOOLS[0], TOOLS[0]])


def conversation_with_calls() -> list[Message]:
    first = call(0, name="weather_get", args={"city": "Paris"})
    second = call(1, name="weather_get", args={"city": "Oslo"})
    return [
        SystemPrompt(text="Be brief."),
        UserMessage(text="Weather in Paris and Oslo?"),
        AssistantMessage(text="Checking both.", calls=(first, second)),
        ToolResultsMessage(
            results=(
                ToolResult(call=second, content={"temp": 5}),
                ToolResult(call=first, content={"temp": 20}),
            )
        ),
        UserMessage(text="And tomorrow?"),
        SystemPrompt(text="Use Celsius."),
    ]


def test_request_body() -> None:
    body = build_request(
        CONVERSE,
        conversation_with_calls(),
        TOOLS,
        model="anthropic.claude-sonnet-4-20250514-v1:0",
        max_tokens=512,
        inferenceConfig={"temperature": 0.2},
        additionalModelRequestFields={"thinking": {"type": "enabled", "budget_tokens": 1024}},
    )
    assert list(body) == [
        "messages",
        "system",
        "inferenceConfig",
        "toolConfig",
        "additionalModelRequestFields",
    ]
    assert body["system"] == [{"text": "Be brief.\n\nUse Celsius."}]
    assert body["inferenceConfig"] == {"temperature": 0.2, "maxTokens": 512}
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    last = body["messages"][2]["content"]
    assert [list(b) for b in last] == [["toolResult"], ["toolResult"], ["text"]]
    assert [b["toolResult"]["toolUseId"] for b in last[:2]] == ["tooluse_0", "tooluse_1"]
    assert last[2] == {"text": "And tomorrow?"}
    assert body["toolConfig"]["tools"][0]["toolSpec"]["name"] == "weather_get"
    assert "model" not in body and "stream" not in body
    assert converse_problems(body) == []


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", {"auto": {}}),
        ("any", {"any": {}}),
        ("weather.get", {"tool": {"name": "weather_get"}}),  # the registry name
        ("weather_get", {"tool": {"name": "weather_get"}}),  # the wire name
        ({"auto": {}}, {"auto": {}}),
        ({"any": {}}, {"any": {}}),
        ({"tool": {"name": "weather.get"}}, {"tool": {"name": "weather_get"}}),
    ],
)
def test_tool_choice(choice: Any, expected: dict[str, Any]) -> None:
    body = build_request(CONVERSE, [UserMessage(text="hi")], TOOLS, model="m", tool_choice=choice)
    assert body["toolConfig"]["toolChoice"] == expected
    assert converse_problems(body) == []


@pytest.mark.parametrize(
    "choice",
    [
        "none",  # Converse has no "none": leave the tools out
        "search",
        {"tool": {"name": "search"}},
        {"tool": "weather.get"},
        {"tool": {"name": "weather.get", "extra": 1}},
        {"auto": {}, "any": {}},
        {"auto": {"x": 1}},
        {"type": "auto"},  # Anthropic's form
        ["auto"],
        3,
        {"tool": {"name": None}},
    ],
)
def test_tool_choice_that_names_nothing_declared_is_refused(choice: Any) -> None:
    with pytest.raises(UsageError, match="tool_choice"):
        build_request(CONVERSE, [UserMessage(text="hi")], TOOLS, model="m", tool_choice=choice)


def test_a_tool_named_like_a_mode_is_forced_by_the_object_form() -> None:
    auto = ToolSpec(name="auto", description="d", parameters={"type": "object"})
    forced = {"tool": {"name": "auto"}}
    body = build_request(CONVERSE, [UserMessage(text="hi")], [auto], model="m", tool_choice=forced)
    assert body["toolConfig"]["toolChoice"] == forced
    mode = build_request(CONVERSE, [UserMessage(text="hi")], [auto], model="m", tool_choice="auto")
    assert mode["toolConfig"]["toolChoice"] == {"auto": {}}


def test_tool_choice_without_tools_is_refused() -> None:
    with pytest.raises(UsageError, match="tool_choice needs tools"):
        build_request(CONVERSE, [UserMessage(text="hi")], model="m", tool_choice="auto")


def test_tool_blocks_without_tools_are_refused_unless_the_caller_configures_them() -> None:
    # "The toolConfig field must be defined when using toolUse and toolResult content
    # blocks", and toolConfig.tools has at least one tool.
    with pytest.raises(UsageError, match="toolConfig"):
        build_request(CONVERSE, conversation_with_calls(), model="m")
    config = {"tools": converse.tool_declarations(TOOLS[:1])}
    body = build_request(CONVERSE, conversation_with_calls(), model="m", toolConfig=config)
    assert body["toolConfig"] == config
    assert converse_problems(body) == []
    with pytest.raises(UsageError, match="clash"):
        build_request(CONVERSE, [UserMessage(text="hi")], TOOLS, model="m", toolConfig=config)


def test_roles_alternate_and_blank_text_is_left_out() -> None:
    conversation: list[Message] = [
        UserMessage(text="one"),
        UserMessage(text="  "),
        UserMessage(text="two"),
        AssistantMessage(text="a"),
        AssistantMessage(text=" "),
        AssistantMessage(text="b"),
        SystemPrompt(text="   "),
    ]
    body = build_request(CONVERSE, conversation, model="m")
    assert body == {
        "messages": [
            {"role": "user", "content": [{"text": "one"}, {"text": "two"}]},
            {"role": "assistant", "content": [{"text": "a"}, {"text": "b"}]},
        ]
    }


@pytest.mark.parametrize(
    "options",
    [
        {"max_tokens": 0},
        {"max_tokens": True},
        {"max_tokens": "10"},
        {"max_tokens": 10, "inferenceConfig": {"maxTokens": 20}},
        {"max_tokens": 10, "inferenceConfig": [1]},
        {"messages": []},
    ],
)
def test_options_that_cannot_be_honoured_are_refused(options: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        build_request(CONVERSE, [UserMessage(text="hi")], model="m", **options)


def test_model_is_checked_and_nothing_but_usage_errors_leave() -> None:
    for model in ["", None, 3]:
        with pytest.raises(UsageError, match="model"):
            build_request(CONVERSE, [], model=model)  # type: ignore[arg-type]  # the run-time check
    with pytest.raises(UsageError, match="not a conversation message"):
        build_request(CONVERSE, ["hello"], model="m")  # type: ignore[list-item]


# --------------------------------------------------------------------------------------
# Converse: every conversation, held to the service model


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats()  # NaN and infinities: JSON cannot hold them
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
contents: st.SearchStrategy[str | dict[str, Any] | list[Any]] = (
    st.text(max_size=10)
    | st.lists(json_values, max_size=3)
    | st.dictionaries(st.text(max_size=5), json_values, max_size=3)
)
tool_names = st.sampled_from(["weather.get", "get_time", "search web", "x" * 70])
media_parts = st.one_of(
    st.builds(
        Image,
        data=st.binary(max_size=8),
        media_type=st.sampled_from(["image/png", "image/jpeg", "image/bmp", "image/gif"]),
    ),
    st.builds(
        Image,
        data=st.none(),
        url=st.sampled_from(["s3://bucket/k.png", "s3://b/k.png", "https://e.x/a", "s3://B/x"]),
    ),
    st.builds(
        Document,
        data=st.binary(min_size=1, max_size=8),
        name=st.none() | st.text(max_size=250),
        media_type=st.sampled_from(["application/pdf", "text/csv", "application/zip"]),
    ),
)
reasoning_blocks = st.one_of(
    st.builds(
        ReasoningBlock,
        provider=st.sampled_from([CONVERSE, "anthropic"]),
        kind=st.just("thinking"),
        text=st.text(max_size=20),
        signature=st.none() | st.text(max_size=20),
        before_call=st.integers(0, 3),
    ),
    st.builds(
        ReasoningBlock,
        provider=st.just(CONVERSE),
        kind=st.just("redacted_thinking"),
        data=st.binary(min_size=1, max_size=16).map(lambda b: base64.b64encode(b).decode()),
    ),
)


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    registry = ToolNameMap(CONVERSE, [t.name for t in TOOLS] + ["search web", "x" * 70])
    out: list[Message] = []
    if draw(st.booleans()):
        out.append(SystemPrompt(text=draw(st.text(max_size=10))))
    out.append(UserMessage(text=draw(st.text(max_size=10))))
    for turn in range(draw(st.integers(0, 3))):
        count = draw(st.integers(0, 3))
        calls = tuple(
            ToolCall(
                name=draw(tool_names),
                args=draw(st.dictionaries(st.text(max_size=5), json_values, max_size=3)),
                provider=CONVERSE,
                call_id=draw(st.from_regex(r"[a-zA-Z0-9_.:-]{1,64}", fullmatch=True))
                + f"-{turn}-{i}",
                index=i,
            )
            for i in range(count)
        )
        # Calls named in the registry's terms, as the Agent keeps them.
        calls = tuple(registry.call_from_wire(registry.call_to_wire(c)) for c in calls)
        reasoning = tuple(draw(st.lists(reasoning_blocks, max_size=3)))
        out.append(
            AssistantMessage(text=draw(st.text(max_size=10)), calls=calls, reasoning=reasoning)
        )
        if calls:
            results = tuple(
                ToolResult(
                    call=c,
                    content=draw(contents),
                    is_error=draw(st.booleans()),
                    media=tuple(draw(st.lists(media_parts, max_size=2))),
                )
                for c in calls
            )
            out.append(ToolResultsMessage(results=tuple(draw(st.permutations(results)))))
        if draw(st.booleans()):
            out.append(UserMessage(text=draw(st.text(max_size=10))))
    return out


def _tools() -> list[ToolSpec]:
    extra = [
        ToolSpec(name=n, description="d", parameters={"type": "object"})
        for n in ("search web", "x" * 70)
    ]
    return TOOLS + extra


@given(
    conversation=conversations(), choice=st.none() | st.sampled_from(["auto", "any", "search web"])
)
def test_every_conversation_is_a_valid_converse_stream_input(
    conversation: list[Message], choice: str | None
) -> None:
    body = build_request(CONVERSE, conversation, _tools(), model="m", tool_choice=choice)
    assert converse_problems(body) == []
    messages = wire(body)["messages"]
    roles = [m["role"] for m in messages]
    assert all(a != b for a, b in itertools.pairwise(roles))
    for message in messages:
        assert message["content"]
        for block in message["content"]:
            texts = [block.get("text")] + [
                c.get("text") for c in block.get("toolResult", {}).get("content", [])
            ]
            assert all(t is None or t.strip() for t in texts)
    documents = [
        c for r in results_of({"messages": messages}) for c in r["content"] if "document" in c
    ]
    assert len(documents) <= converse.MAX_DOCUMENTS
    # Each toolUse is answered in the next message, under its own id, in call order.
    for position, message in enumerate(messages):
        uses = [b["toolUse"]["toolUseId"] for b in message["content"] if "toolUse" in b]
        if uses:
            answered = [
                b["toolResult"]["toolUseId"]
                for b in messages[position + 1]["content"]
                if "toolResult" in b
            ]
            assert answered == uses


# --------------------------------------------------------------------------------------
# bedrock_anthropic: the anthropic dialect's body, as InvokeModel wants it


def anthropic_twin(conversation: list[Message]) -> list[Message]:
    """The same conversation as the anthropic dialect's (this dialect's reasoning too)."""

    def move(c: ToolCall) -> ToolCall:
        return dataclasses.replace(c, provider="anthropic")

    out: list[Message] = []
    for message in conversation:
        if isinstance(message, AssistantMessage):
            out.append(
                AssistantMessage(
                    text=message.text,
                    calls=tuple(move(c) for c in message.calls),
                    reasoning=tuple(
                        dataclasses.replace(b, provider="anthropic")
                        for b in message.reasoning
                        if b.provider == INVOKE
                    ),
                )
            )
        elif isinstance(message, ToolResultsMessage):
            out.append(
                ToolResultsMessage(
                    results=tuple(
                        dataclasses.replace(r, call=move(r.call)) for r in message.results
                    )
                )
            )
        else:
            out.append(message)
    return out


def invoke_conversation() -> list[Message]:
    calls = (call(0, "toolu_a", provider=INVOKE), call(1, "toolu_b", provider=INVOKE))
    thinking = (
        ReasoningBlock(provider=INVOKE, kind="thinking", text="Two calls.", signature=SIGNATURE),
        ReasoningBlock(provider=INVOKE, kind="redacted_thinking", data="opaque", before_call=1),
        ReasoningBlock(provider="anthropic", kind="thinking", text="direct API", signature="s"),
    )
    return [
        SystemPrompt(text="Be brief."),
        UserMessage(text="time twice?"),
        AssistantMessage(text="Sure.", calls=calls, reasoning=thinking),
        ToolResultsMessage(
            results=(
                ToolResult(call=calls[1], content="", is_error=True),
                ToolResult(call=calls[0], content={"t": 1}, media=(Image(data=PNG),)),
            )
        ),
        UserMessage(text="thanks"),
    ]


def test_invoke_body_is_the_anthropic_body_without_model_and_stream() -> None:
    conversation = invoke_conversation()
    body = build_request(INVOKE, conversation, TOOLS, model="anthropic.claude-3", temperature=0)
    twin = build_request("anthropic", anthropic_twin(conversation), TOOLS, model="x", temperature=0)
    assert next(iter(body)) == "anthropic_version"
    assert body["anthropic_version"] == "bedrock-2023-05-31"
    assert {k: v for k, v in body.items() if k != "anthropic_version"} == {
        k: v for k, v in twin.items() if k not in ("model", "stream")
    }
    assert "model" not in body and "stream" not in body
    # Thinking blocks of this dialect go back exactly; the direct API's do not.
    thinking = body["messages"][1]["content"]
    assert thinking[0] == {"type": "thinking", "thinking": "Two calls.", "signature": SIGNATURE}
    assert [b["type"] for b in thinking] == [
        "thinking",
        "text",
        "tool_use",
        "redacted_thinking",
        "tool_use",
    ]
    assert build_request(INVOKE, [], model="m", stream=False, max_tokens=9) == {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 9,
        "messages": [],
    }


def test_invoke_functions_are_the_anthropic_dialects() -> None:
    conversation = invoke_conversation()
    turn = conversation[2]
    results = conversation[3]
    assert isinstance(turn, AssistantMessage) and isinstance(results, ToolResultsMessage)
    twin_turn, twin_results = anthropic_twin([turn, results])
    assert isinstance(twin_turn, AssistantMessage)
    assert isinstance(twin_results, ToolResultsMessage)
    assert assistant_turn(turn.text, turn.calls, reasoning=turn.reasoning) == (
        anthropic.assistant_turn(twin_turn.text, twin_turn.calls, reasoning=twin_turn.reasoning)
    )
    assert format_results(results.results) == anthropic.format_results(twin_results.results)
    assert invoke.tool_declarations(TOOLS, strict=True) == anthropic.tool_declarations(
        TOOLS, strict=True
    )
    # The wire names are this dialect's own map's (the same rule as Anthropic's).
    assert [d["name"] for d in invoke.tool_declarations(TOOLS)] == [
        ToolNameMap(INVOKE, [t.name for t in TOOLS]).to_wire(t.name) for t in TOOLS
    ]


def test_invoke_refuses_what_it_cannot_send() -> None:
    foreign = ToolResult(call=call(0, "toolu_a", provider="anthropic"), content="x")
    with pytest.raises(UsageError, match="bedrock_anthropic"):
        invoke.format_results([foreign])
    with pytest.raises(UsageError, match="bedrock_anthropic"):
        build_request(INVOKE, [ToolResultsMessage(results=(foreign,))], model="m")
    with pytest.raises(UsageError, match="anthropic_version"):
        build_request(INVOKE, [], model="m", anthropic_version="2023-06-01")
    with pytest.raises(UsageError, match="clash"):
        build_request(INVOKE, [], model="m", messages=[])
    with pytest.raises(UsageError, match="model"):
        build_request(INVOKE, [], model="")
    missing = dataclasses.replace(call(0, provider=INVOKE), call_id=None)
    with pytest.raises(UsageError, match="no id; bedrock_anthropic"):
        format_results([ToolResult(call=missing, content="x")])
    with pytest.raises(UsageError, match="no id; bedrock_anthropic"):
        assistant_turn("", [missing])


def test_invoke_thinking_refused_reads_this_dialects_blocks() -> None:
    conversation = invoke_conversation()
    assert invoke.thinking_refused(conversation) is False
    turn = conversation[2]
    assert isinstance(turn, AssistantMessage)
    without = dataclasses.replace(
        turn, reasoning=tuple(b for b in turn.reasoning if b.provider != INVOKE)
    )
    assert invoke.thinking_refused([*conversation[:2], without]) is True
    assert invoke.thinking_refused([UserMessage(text="hi")]) is False


# --------------------------------------------------------------------------------------
# Odd values in content and arguments: written as their nearest JSON value, never refused


def test_values_json_cannot_hold_are_sent_as_their_nearest_json_value() -> None:
    odd: dict[str, Any] = {"set": {1, 2}, "nan": float("nan"), "s": "\ud800", "big": 2**80}
    c = call(0, args=dict(odd))
    conversation = turn_with_results(ToolResult(call=c, content=dict(odd)))
    for dialect in (CONVERSE, INVOKE):
        moved = [
            m
            if not isinstance(m, AssistantMessage | ToolResultsMessage)
            else _readdress(m, dialect)
            for m in conversation
        ]
        body = build_request(dialect, moved, TOOLS, model="m")
        sent = orjson.loads(dumps_safe(body))
        assert sent["messages"][1]["content"][-1] is not None
    body = build_request(CONVERSE, conversation, TOOLS, model="m")
    assert converse_problems(body) == []
    result = results_of(wire(body))[0]["content"][0]["json"]
    assert result["set"] == [1, 2] and result["nan"] is None and result["s"] == "\ufffd"


def _readdress(message: AssistantMessage | ToolResultsMessage, dialect: Dialect) -> Message:
    if isinstance(message, AssistantMessage):
        return dataclasses.replace(
            message,
            calls=tuple(dataclasses.replace(c, provider=dialect) for c in message.calls),
        )
    return ToolResultsMessage(
        results=tuple(
            dataclasses.replace(r, call=dataclasses.replace(r.call, provider=dialect))
            for r in message.results
        )
    )


# --------------------------------------------------------------------------------------
# Carried over: a conversation another provider started, continued on Bedrock, and back

ORIGIN_IDS: dict[str, str | None] = {
    "openai_chat": "call_Xy12",
    "openai_responses": "call_abc",
    "anthropic": "toolu_01A",
    "gemini": None,  # Gemini may send no id
    "bedrock_converse": "functions.glob_search:0",  # Kimi's, legal on Converse only
    "bedrock_anthropic": "toolu_bdrk_01",
}


def started_in(dialect: Dialect) -> list[Message]:
    """Two calls of one turn with the origin's ids and reasoning, their results, a
    follow-up: calls under registry names, as the Agent keeps them."""
    origin = ORIGIN_IDS.get(dialect, "id_0")
    calls = tuple(
        ToolCall(
            name="weather.get",
            args={"city": city},
            provider=dialect,
            call_id=None if origin is None else f"{origin}{i}",
            index=i,
            raw_arguments=orjson.dumps({"city": city}).decode(),
            thought_signature="sig" if dialect == "gemini" else None,
        )
        for i, city in enumerate(["Paris", "Oslo"])
    )
    thinking = ReasoningBlock(provider=dialect, kind="thinking", text="t", signature="s")
    return [
        UserMessage(text="Weather?"),
        AssistantMessage(text="Both.", calls=calls, reasoning=(thinking,)),
        ToolResultsMessage(
            results=tuple(ToolResult(call=c, content={"temp": c.index}) for c in calls)
        ),
        UserMessage(text="Thanks."),
    ]


def sent_pairs(dialect: Dialect, body: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    """The call ids of the assistant turn and the ids the results are sent under."""
    if dialect == CONVERSE:
        assistant, results = body["messages"][1]["content"], body["messages"][2]["content"]
        return (
            [b["toolUse"]["toolUseId"] for b in assistant if "toolUse" in b],
            [b["toolResult"]["toolUseId"] for b in results if "toolResult" in b],
        )
    assistant, results = body["messages"][1]["content"], body["messages"][2]["content"]
    return (
        [b["id"] for b in assistant if b["type"] == "tool_use"],
        [b["tool_use_id"] for b in results if b["type"] == "tool_result"],
    )


@pytest.mark.parametrize("target", [CONVERSE, INVOKE])
@pytest.mark.parametrize("origin", DIALECTS)
def test_a_conversation_from_any_dialect_continues_on_bedrock(
    origin: Dialect, target: Dialect
) -> None:
    carried = carry_over(started_in(origin), target)
    body = build_request(target, carried, TOOLS, model="m")
    uses, answers = sent_pairs(target, body)
    assert len(uses) == 2 and uses == answers
    if origin == target:
        assert uses == [f"{ORIGIN_IDS[origin]}0", f"{ORIGIN_IDS[origin]}1"]
    for call_id in uses:
        # Both targets take this much (Anthropic's tool_use.id: ^[a-zA-Z0-9_-]+$).
        pattern = r"[a-zA-Z0-9_.:-]{1,64}" if target == CONVERSE else r"[a-zA-Z0-9_-]+"
        assert re.fullmatch(pattern, call_id)
    if target == CONVERSE:
        assert converse_problems(body) == []
        reasoning = [b for b in body["messages"][1]["content"] if "reasoningContent" in b]
    else:
        reasoning = [b for b in body["messages"][1]["content"] if b["type"] == "thinking"]
    # Reasoning goes back only to the dialect that made it.
    assert len(reasoning) == (1 if origin == target else 0)


@pytest.mark.parametrize("target", DIALECTS)
@pytest.mark.parametrize("origin", [CONVERSE, INVOKE])
def test_a_conversation_from_bedrock_continues_anywhere(origin: Dialect, target: Dialect) -> None:
    carried = carry_over(started_in(origin), target)
    body = build_request(target, carried, TOOLS, model="m")
    assert orjson.loads(dumps_safe(body))
    # And back home: the ids the target was given pair up on Bedrock again.
    home = carry_over(carried, origin)
    uses, answers = sent_pairs(origin, build_request(origin, home, TOOLS, model="m"))
    assert len(uses) == 2 and uses == answers


def _to_invoke(conversation: list[Message]) -> list[Message]:
    """A Converse conversation re-addressed to bedrock_anthropic, reasoning included."""

    def move(c: ToolCall) -> ToolCall:
        return dataclasses.replace(
            c, provider=INVOKE, call_id=re.sub(r"[.:]", "_", c.call_id or "")
        )

    out: list[Message] = []
    for message in conversation:
        if isinstance(message, AssistantMessage):
            out.append(
                AssistantMessage(
                    text=message.text,
                    calls=tuple(move(c) for c in message.calls),
                    reasoning=tuple(
                        dataclasses.replace(b, provider=INVOKE) if b.provider == CONVERSE else b
                        for b in message.reasoning
                    ),
                )
            )
        elif isinstance(message, ToolResultsMessage):
            out.append(
                ToolResultsMessage(
                    results=tuple(
                        dataclasses.replace(r, call=move(r.call)) for r in message.results
                    )
                )
            )
        else:
            out.append(message)
    return out


@given(conversation=conversations(), max_tokens=st.integers(1, 10_000))
def test_every_invoke_body_is_the_anthropic_body(
    conversation: list[Message], max_tokens: int
) -> None:
    moved = _to_invoke(conversation)
    body = build_request(INVOKE, moved, _tools(), model="m", max_tokens=max_tokens, top_k=5)
    twin = build_request(
        "anthropic", anthropic_twin(moved), _tools(), model="m", max_tokens=max_tokens, top_k=5
    )
    del twin["model"], twin["stream"]
    assert body == {"anthropic_version": "bedrock-2023-05-31", **twin}


# --------------------------------------------------------------------------------------
# Real recordings: what the stream gave goes back as the service takes it

BEDROCK_STREAMS = EXTERNAL_STREAMS / "bedrock"
AS_DIALECT: dict[str, Dialect] = {
    "bedrock_converse": CONVERSE,
    "bedrock_invoke_anthropic": INVOKE,
}


def _finished_recordings() -> list[Any]:
    """The bedrock folder's streams that end normally (its own manifest)."""
    if missing_reason() is not None or not (BEDROCK_STREAMS / "MANIFEST.json").is_file():
        return corpus_params([], [], label="bedrock")
    entries = [
        e
        for e in orjson.loads((BEDROCK_STREAMS / "MANIFEST.json").read_bytes())
        if e["expected"]["outcome"] in ("complete", "no_calls")
    ]
    return corpus_params(entries, [Path(e["file"]).stem for e in entries], label="bedrock")


@pytest.mark.parametrize("entry", _finished_recordings())
def test_recorded_turns_go_back_as_the_service_takes_them(entry: dict[str, Any] | None) -> None:
    assert entry is not None
    dialect = AS_DIALECT[entry["provider"]]
    parser = StreamParser(dialect)
    events = parser.feed((EXTERNAL_STREAMS / entry["file"]).read_bytes()) + parser.finish()
    (finished,) = [e for e in events if isinstance(e, StreamFinished)]
    assert [c.call_id for c in finished.calls] == [c["call_id"] for c in entry["expected"]["calls"]]
    tools = [
        ToolSpec(name=name, description="d", parameters={"type": "object"})
        for name in dict.fromkeys(c.name for c in finished.calls)
    ] or TOOLS
    conversation: list[Message] = [
        UserMessage(text="hi"),
        AssistantMessage(text=finished.text, calls=finished.calls, reasoning=finished.reasoning),
    ]
    if finished.calls:
        results = tuple(ToolResult(call=c, content={"ok": c.index}) for c in finished.calls)
        conversation.append(ToolResultsMessage(results=results))
    conversation.append(UserMessage(text="thanks"))
    body = wire(build_request(dialect, conversation, tools, model="m"))
    sent = dumps_safe(body).decode()
    for block in finished.reasoning:
        # Signatures and redacted payloads go back exactly as streamed.
        for value in (block.signature, block.data):
            if value:
                assert orjson.dumps(value).decode() in sent
    if dialect == CONVERSE:
        assert converse_problems(body) == []
        uses, answers = sent_pairs(CONVERSE, body) if finished.calls else ([], [])
    else:
        uses, answers = sent_pairs(INVOKE, body) if finished.calls else ([], [])
    assert uses == answers == [c.call_id for c in finished.calls]


def test_converse_thinking_refused_reads_this_dialects_blocks() -> None:
    own = ReasoningBlock(provider=CONVERSE, kind="thinking", text="t", signature="s")
    turn = AssistantMessage(calls=(call(0),), reasoning=(own,))
    assert converse.thinking_refused([UserMessage(text="hi"), turn]) is False
    carried = carry_over(
        [UserMessage(text="hi"), dataclasses.replace(turn, reasoning=())], CONVERSE
    )
    assert converse.thinking_refused(carried) is True
    assert converse.thinking_refused([UserMessage(text="hi"), AssistantMessage(text="x")]) is False


@st.composite
def hostile_conversations(draw: st.DrawFn) -> list[Message]:
    """Anything a caller can put in the neutral types: ids, names, media types, URLs,
    document names and texts of any characters."""
    out: list[Message] = [UserMessage(text=draw(st.text(max_size=5)))]
    for turn in range(draw(st.integers(1, 2))):
        # Mostly what a provider sends, now and then anything: a run that refused every
        # conversation would prove nothing about the ones it sends.
        legal_id = st.from_regex(r"[a-zA-Z0-9_.:-]{1,64}", fullmatch=True)
        calls = tuple(
            ToolCall(
                name=draw(tool_names if draw(st.integers(0, 9)) else st.text(max_size=70)),
                args=draw(st.dictionaries(st.text(max_size=3), json_values, max_size=2)),
                provider=CONVERSE,
                call_id=draw(legal_id if draw(st.integers(0, 9)) else st.none() | st.text()),
                index=i,
            )
            for i in range(draw(st.integers(0, 2)))
        )
        if len({c.call_id for c in calls}) < len(calls):
            calls = calls[:1]
        out.append(AssistantMessage(text=draw(st.text(max_size=5)), calls=calls))
        parts = st.builds(
            Image,
            data=st.none() | st.binary(max_size=4),
            url=st.none() | st.text(max_size=20).map(lambda t: "s3://" + t),
            media_type=st.text(max_size=12) | st.sampled_from(["image/png", "image/webp"]),
        ) | st.builds(
            Document,
            data=st.binary(max_size=4),
            name=st.none() | st.text(max_size=30),
            media_type=st.text(max_size=12) | st.just("application/pdf"),
        )
        results = tuple(
            ToolResult(
                call=c,
                content=draw(contents),
                is_error=draw(st.booleans()),
                media=tuple(draw(st.lists(parts, max_size=2))),
            )
            for c in calls
        )
        out.append(ToolResultsMessage(results=results))
        del turn
    return out


@given(
    conversation=hostile_conversations(),
    choice=st.none() | st.text(max_size=8) | st.sampled_from(["auto", "any"]),
)
def test_a_hostile_conversation_is_refused_or_sent_valid(
    conversation: list[Message], choice: str | None
) -> None:
    try:
        body = build_request(CONVERSE, conversation, _tools(), model="m", tool_choice=choice)
    except UsageError:
        return
    assert converse_problems(body) == []


def test_invoke_body_is_what_anthropics_own_bedrock_client_sends() -> None:
    # The outside check of the InvokeModel body: the anthropic SDK's AnthropicBedrock
    # client, given the anthropic dialect's body, sends the same fields to Bedrock
    # (in process, through a mock transport: nothing leaves the machine). Only
    # anthropic_version differs: AWS's guide says "bedrock-runtime: Set
    # "anthropic_version": "bedrock-2023-05-31" in the request body"; the installed SDK
    # sends its own API version there.
    import anthropic as sdk
    import httpx2

    sent: list[tuple[str, dict[str, Any]]] = []

    def answer(request: httpx2.Request) -> httpx2.Response:
        sent.append((request.url.path, orjson.loads(request.content)))
        message = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "text", "text": "ok"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        return httpx2.Response(200, json=message)

    conversation = invoke_conversation()
    model = "anthropic.claude-sonnet-4-20250514-v1:0"
    options: dict[str, Any] = {"tool_choice": {"type": "auto"}, "stop_sequences": ["END"]}
    ours = build_request(INVOKE, conversation, TOOLS, model=model, stream=False, **options)
    theirs = build_request(
        "anthropic", anthropic_twin(conversation), TOOLS, model=model, stream=False, **options
    )
    del theirs["stream"]
    with httpx2.Client(transport=httpx2.MockTransport(answer)) as http:
        client = sdk.AnthropicBedrock(
            api_key="k", aws_region="us-east-1", base_url="http://127.0.0.1:9", http_client=http
        )
        client.messages.create(**theirs)
    ((path, body),) = sent
    assert path == f"/model/{model}/invoke"
    assert {k: v for k, v in body.items() if k != "anthropic_version"} == {
        k: v for k, v in wire(ours).items() if k != "anthropic_version"
    }


@given(
    conversation=conversations(),
    origin=st.sampled_from([d for d in DIALECTS if d != CONVERSE]),
    ids=st.lists(st.none() | st.text(max_size=80), min_size=12, max_size=12, unique=True),
)
def test_any_conversation_from_another_dialect_is_sent_valid_on_converse(
    conversation: list[Message], origin: Dialect, ids: list[str | None]
) -> None:
    # The same turns as another provider made them: its ids (any text, or none), its
    # reasoning; carried over, Converse takes them all.
    moved: dict[tuple[int, int], ToolCall] = {}
    pool = iter(ids * 4)
    foreign: list[Message] = []
    for place, message in enumerate(conversation):
        if isinstance(message, AssistantMessage):
            calls = []
            for c in message.calls:
                new = dataclasses.replace(c, provider=origin, call_id=next(pool))
                moved[(place, c.index)] = new
                calls.append(new)
            reasoning = tuple(dataclasses.replace(b, provider=origin) for b in message.reasoning)
            foreign.append(
                AssistantMessage(text=message.text, calls=tuple(calls), reasoning=reasoning)
            )
            turn = place
        elif isinstance(message, ToolResultsMessage):
            foreign.append(
                ToolResultsMessage(
                    results=tuple(
                        dataclasses.replace(r, call=moved[(turn, r.call.index)])
                        for r in message.results
                    )
                )
            )
        else:
            foreign.append(message)
    body = build_request(CONVERSE, carry_over(foreign, CONVERSE), _tools(), model="m")
    assert converse_problems(body) == []
    messages = wire(body)["messages"]
    assert not any("reasoningContent" in b for m in messages for b in m["content"])
    for position, message in enumerate(messages):
        uses = [b["toolUse"]["toolUseId"] for b in message["content"] if "toolUse" in b]
        if uses:
            answered = [
                b["toolResult"]["toolUseId"]
                for b in messages[position + 1]["content"]
                if "toolResult" in b
            ]
            assert answered == uses
