"""The simulator's Bedrock over real loopback HTTP: botocore's own ``bedrock-runtime``
client talks to it (the requests it builds, the responses it reads, its errors), and the
library reads its streams on asyncio and trio, faults included."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from botocore import eventstream as boto  # type: ignore[import-untyped]
from botocore.config import Config  # type: ignore[import-untyped]
from botocore.exceptions import ClientError, EventStreamError  # type: ignore[import-untyped]
from botocore.session import Session  # type: ignore[import-untyped]

from sse_toolcalls import Dialect, aiter_tool_calls
from sse_toolcalls.errors import FramingError, ProviderError, StreamError, TruncatedStreamError
from sse_toolcalls.parser import ToolCallParser
from sse_toolcalls.tooling.simulator import (
    CorruptedCRC,
    Cut,
    ErrorEvent,
    ExpectedResult,
    HTTPError,
    OneByteAtATime,
    RawBody,
    Script,
    ScriptedCall,
    Simulator,
    Turn,
)

pytestmark = [
    pytest.mark.filterwarnings("ignore:Async generator 'httpx2?\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore2?\\.:ResourceWarning"),
]

MODEL = "us.anthropic.claude-sonnet-4-20250514-v1:0"
CALLS = (
    ScriptedCall(name="lookup_demo_value", args={"key": "height"}, thinking=""),
    ScriptedCall(name="lookup_demo_value", args={"key": "weight"}),
)
TOOL_TURN = Turn(
    text="Let me look both up.",
    thinking="Both values are needed.",
    redacted_thinking="opaque-data",
    calls=CALLS,
    fragment_size=4,
    usage={"input_tokens": 20, "output_tokens": 9},
)
FINAL = Turn(
    text="You are 170 cm tall and weigh 70 kg.",
    expect_results=(
        ExpectedResult(call_position=0, contains="170 cm", is_error=False),
        ExpectedResult(call_position=1, contains="70 kg", is_error=False),
    ),
)
TOOL_CONFIG = {
    "tools": [
        {
            "toolSpec": {
                "name": "lookup_demo_value",
                "description": "Look up a demo value.",
                "inputSchema": {
                    "json": {"type": "object", "properties": {"key": {"type": "string"}}}
                },
            }
        }
    ]
}
THINKING = {"thinking": {"type": "enabled", "budget_tokens": 1024}}
VALUES = {"height": "170 cm", "weight": "70 kg"}


@pytest.fixture
def bedrock(simulator: Simulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """botocore's bedrock-runtime client pointed at the simulator: explicit credentials and
    region, no config files, no instance metadata, no retries (a 429 must reach the test)."""
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    client = Session().create_client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=simulator.base_url_for("bedrock_converse"),
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="not-a-secret",
        config=Config(retries={"total_max_attempts": 1}),
    )
    yield client
    client.close()


def converse_turn(events: Any) -> tuple[list[dict[str, Any]], str]:
    """The assistant message botocore's events make (the blocks a client sends back), and
    the stop reason."""
    blocks: dict[int, dict[str, Any]] = {}
    stop = ""
    for event in events:
        ((kind, body),) = event.items()
        if kind == "contentBlockStart":
            use = body["start"]["toolUse"]
            blocks[body["contentBlockIndex"]] = {"toolUse": {**use, "input": ""}}
        elif kind == "contentBlockDelta":
            delta = body["delta"]
            block = blocks.setdefault(body["contentBlockIndex"], {})
            if "text" in delta:
                block["text"] = block.get("text", "") + delta["text"]
            elif "toolUse" in delta:
                block["toolUse"]["input"] += delta["toolUse"]["input"]
            else:
                reasoning = delta["reasoningContent"]
                content = block.setdefault("reasoningContent", {})
                if "redactedContent" in reasoning:
                    content["redactedContent"] = reasoning["redactedContent"]
                else:
                    text = content.setdefault("reasoningText", {"text": ""})
                    text["text"] += reasoning.get("text", "")
                    if "signature" in reasoning:
                        text["signature"] = reasoning["signature"]
        elif kind == "messageStop":
            stop = body["stopReason"]
    for block in blocks.values():
        if "toolUse" in block:
            block["toolUse"]["input"] = json.loads(block["toolUse"]["input"])
    return [blocks[i] for i in sorted(blocks)], stop


def test_botocores_converse_stream_round_trip(simulator: Simulator, bedrock: Any) -> None:
    simulator.play([TOOL_TURN, FINAL])
    question = {"role": "user", "content": [{"text": "How tall and heavy am I?"}]}
    first = bedrock.converse_stream(
        modelId=MODEL,
        messages=[question],
        toolConfig=TOOL_CONFIG,
        additionalModelRequestFields=THINKING,
    )
    assert first["ResponseMetadata"]["HTTPHeaders"]["content-type"] == (
        "application/vnd.amazon.eventstream"
    )
    content, stop = converse_turn(first["stream"])
    assert stop == "tool_use"
    uses = [b["toolUse"] for b in content if "toolUse" in b]
    assert [(u["name"], u["input"]) for u in uses] == [(c.name, c.args) for c in CALLS]
    # The blob came back as bytes: botocore decoded the base64.
    assert content[1] == {"reasoningContent": {"redactedContent": b"opaque-data"}}
    results = {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": u["toolUseId"],
                    "content": [{"text": VALUES[u["input"]["key"]]}],
                    "status": "success",
                }
            }
            for u in uses
        ],
    }
    second = bedrock.converse_stream(
        modelId=MODEL,
        messages=[question, {"role": "assistant", "content": content}, results],
        toolConfig=TOOL_CONFIG,
        additionalModelRequestFields=THINKING,
    )
    final, stop = converse_turn(second["stream"])
    simulator.assert_no_problems()
    assert (final, stop) == ([{"text": FINAL.text}], "end_turn")
    assert simulator.requests[0].path == f"/model/{MODEL}/converse-stream"


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ("signature", "Invalid `signature`"),
        ("drop_reasoning", "Expected `thinking` or `redacted_thinking`"),
        ("wrong_id", "which the assistant turn before it has no call for"),
        ("no_tool_config", "The toolConfig field must be defined"),
        ("bad_document_name", "document.name"),
    ],
)
def test_botocore_hears_what_bedrock_refuses(
    simulator: Simulator, bedrock: Any, change: str, problem: str
) -> None:
    simulator.play([TOOL_TURN, FINAL])
    question = {"role": "user", "content": [{"text": "How tall?"}]}
    kwargs: dict[str, Any] = {"toolConfig": TOOL_CONFIG, "additionalModelRequestFields": THINKING}
    first = bedrock.converse_stream(modelId=MODEL, messages=[question], **kwargs)
    content, _ = converse_turn(first["stream"])
    uses = [b["toolUse"] for b in content if "toolUse" in b]
    result_blocks: list[dict[str, Any]] = [{"text": "170 cm"}]
    if change == "signature":
        content[0]["reasoningContent"]["reasoningText"]["signature"] += "x"
    elif change == "drop_reasoning":
        content = [b for b in content if "reasoningContent" not in b]
    elif change == "no_tool_config":
        del kwargs["toolConfig"]
    elif change == "bad_document_name":
        pdf = b"%PDF-1.4 hello"
        result_blocks.append(
            {"document": {"format": "pdf", "name": "report.pdf", "source": {"bytes": pdf}}}
        )
    answers = [
        {"toolResult": {"toolUseId": u["toolUseId"], "content": result_blocks}} for u in uses
    ]
    if change == "wrong_id":
        answers[1]["toolResult"]["toolUseId"] = "tooluse_bogus"
    results = {"role": "user", "content": answers}
    messages = [question, {"role": "assistant", "content": content}, results]
    with pytest.raises(ClientError) as caught:
        bedrock.converse_stream(modelId=MODEL, messages=messages, **kwargs)
    assert caught.value.response["Error"]["Code"] == "ValidationException"
    assert problem in caught.value.response["Error"]["Message"]
    assert any(problem in p for p in simulator.problems)


def test_botocores_invoke_model_round_trip(simulator: Simulator, bedrock: Any) -> None:
    simulator.play([TOOL_TURN, FINAL])
    question = {"role": "user", "content": "How tall and heavy am I?"}
    body: dict[str, Any] = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 2048,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "tools": [{"name": "lookup_demo_value", "input_schema": {"type": "object"}}],
        "messages": [question],
    }
    first = bedrock.invoke_model_with_response_stream(modelId=MODEL, body=json.dumps(body))
    events = [json.loads(e["chunk"]["bytes"]) for e in first["body"]]
    blocks: list[dict[str, Any]] = []
    for event in events:
        if event["type"] == "content_block_start":
            blocks.append(dict(event["content_block"]))
            blocks[-1].pop("input", None)
            blocks[-1]["partial"] = ""
        elif event["type"] == "content_block_delta":
            delta, block = event["delta"], blocks[event["index"]]
            if delta["type"] == "thinking_delta":
                block["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                block["signature"] = delta["signature"]
            elif delta["type"] == "text_delta":
                block["text"] += delta["text"]
            else:
                block["partial"] += delta["partial_json"]
    for block in blocks:
        partial = block.pop("partial")
        if block["type"] == "tool_use":
            block["input"] = json.loads(partial)
    assert events[-1]["amazon-bedrock-invocationMetrics"]["outputTokenCount"] == 9
    uses = [b for b in blocks if b["type"] == "tool_use"]
    assert [u["id"] for u in uses] == ["toolu_bdrk_sim_0_0", "toolu_bdrk_sim_0_1"]
    results = [
        {"type": "tool_result", "tool_use_id": u["id"], "content": VALUES[u["input"]["key"]]}
        for u in uses
    ]
    body["messages"] = [
        question,
        {"role": "assistant", "content": blocks},
        {"role": "user", "content": results},
    ]
    second = bedrock.invoke_model_with_response_stream(modelId=MODEL, body=json.dumps(body))
    assert [json.loads(e["chunk"]["bytes"])["type"] for e in second["body"]][-1] == "message_stop"
    simulator.assert_no_problems()
    assert simulator.requests[1].path == f"/model/{MODEL}/invoke-with-response-stream"


def test_invoke_refuses_the_keys_bedrock_refuses(simulator: Simulator, bedrock: Any) -> None:
    simulator.play([Turn(text="hi")])
    body = {"model": "claude", "stream": True, "max_tokens": 5, "messages": []}
    with pytest.raises(ClientError) as caught:
        bedrock.invoke_model_with_response_stream(modelId=MODEL, body=json.dumps(body))
    message = caught.value.response["Error"]["Message"]
    assert "extraneous key [model]" in message
    assert "extraneous key [stream]" in message
    assert "required key [anthropic_version] not found" in message


def test_throttling_reaches_botocore_as_its_exception(simulator: Simulator, bedrock: Any) -> None:
    simulator.play([Turn(text="hi", fault=HTTPError(status=429))])
    with pytest.raises(bedrock.exceptions.ThrottlingException) as caught:
        bedrock.converse_stream(
            modelId=MODEL, messages=[{"role": "user", "content": [{"text": "x"}]}]
        )
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 429
    assert caught.value.response["Error"]["Message"] == (
        "Too many requests, please wait before trying again."
    )


def test_an_exception_mid_stream_reaches_botocore(simulator: Simulator, bedrock: Any) -> None:
    fault = ErrorEvent(code="modelStreamErrorException", message="The model broke", after_events=3)
    simulator.play([Turn(text="hello there", fault=fault)])
    response = bedrock.converse_stream(
        modelId=MODEL, messages=[{"role": "user", "content": [{"text": "x"}]}]
    )
    seen: list[Any] = []
    with pytest.raises(EventStreamError) as caught:
        seen.extend(response["stream"])
    response["stream"].close()  # botocore leaves the connection open after an error
    assert len(seen) == 3
    assert caught.value.response["Error"] == {
        "Code": "modelStreamErrorException",
        "Message": "The model broke",
    }


def test_a_corrupted_crc_fails_botocores_stream(simulator: Simulator, bedrock: Any) -> None:
    simulator.play([Turn(text="hello there", fault=CorruptedCRC(after_events=2))])
    response = bedrock.converse_stream(
        modelId=MODEL, messages=[{"role": "user", "content": [{"text": "x"}]}]
    )
    with pytest.raises(boto.ChecksumMismatch):
        list(response["stream"])
    response["stream"].close()


# --------------------------------------------------------------------------------------
# Over httpx: the routes, and the library reading them on asyncio and trio.


def bedrock_request(dialect: Dialect) -> tuple[str, dict[str, Any]]:
    if dialect == "bedrock_converse":
        return f"/model/{MODEL}/converse-stream", {
            "messages": [{"role": "user", "content": [{"text": "hi"}]}]
        }
    body = {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
    }
    return f"/model/{MODEL}/invoke-with-response-stream", body


@pytest.mark.parametrize("dialect", ["bedrock_converse", "bedrock_anthropic"])
def test_routes_answer_with_the_event_stream_type(dialect: Dialect, simulator: Simulator) -> None:
    simulator.play(
        [Turn(text="hi"), Turn(text="again"), Turn(text="x", fault=HTTPError(status=503))]
    )
    path, body = bedrock_request(dialect)
    with httpx.Client(base_url=simulator.base_url) as http:
        answer = http.post(path, json=body)
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/vnd.amazon.eventstream"
        assert len(list(_read(answer.content))) > 3
        # An ARN in place of the model id: its slashes escaped in the path.
        arn = "arn%3Aaws%3Abedrock%3Aus-east-1%3A1%3Ainference-profile%2Fus.x"
        answer = http.post(path.replace(MODEL, arn), json=body)
        assert answer.status_code == 200
        answer = http.post(path, json=body)
        assert answer.status_code == 503
        assert answer.headers["x-amzn-errortype"].startswith("ServiceUnavailableException:")
        assert answer.json() == {"message": "Bedrock is unable to process your request."}
        answer = http.get(path)
        assert answer.status_code == 405
        assert "x-amzn-errortype" in answer.headers
    simulator.assert_no_problems()


def _read(data: bytes) -> Iterator[Any]:
    buffer = boto.EventStreamBuffer()
    buffer.add_data(data)
    return iter(buffer)


async def _calls(sim: Simulator, dialect: Dialect) -> tuple[list[Any], int]:
    path, body = bedrock_request(dialect)
    async with (
        httpx.AsyncClient(base_url=sim.base_url, timeout=10.0) as http,
        http.stream("POST", path, json=body) as response,
    ):
        reads = 0

        class Counted:
            status_code = response.status_code
            headers = response.headers

            async def aiter_bytes(self) -> Any:
                nonlocal reads
                async for chunk in response.aiter_bytes():
                    reads += 1
                    yield chunk

            async def aclose(self) -> None:
                await response.aclose()

        calls = [c async for c in aiter_tool_calls(Counted(), dialect)]
    return calls, reads


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", ["bedrock_converse", "bedrock_anthropic"])
async def test_the_library_reads_the_scripted_calls(dialect: Dialect, simulator: Simulator) -> None:
    simulator.play(
        Script(turns=(TOOL_TURN, Turn(calls=CALLS, fault=OneByteAtATime())), check_results=False)
    )
    for expected_reads in (1, 200):
        calls, reads = await _calls(simulator, dialect)
        assert [(c.name, c.args, c.provider) for c in calls] == [
            (c.name, c.args, dialect) for c in CALLS
        ]
        prefix = "tooluse_sim" if dialect == "bedrock_converse" else "toolu_bdrk_sim"
        turn = 0 if expected_reads == 1 else 1
        assert [c.call_id for c in calls] == [f"{prefix}_{turn}_0", f"{prefix}_{turn}_1"]
        assert reads >= expected_reads


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", ["bedrock_converse", "bedrock_anthropic"])
@pytest.mark.parametrize(
    ("code", "retryable"),
    [("throttlingException", True), ("validationException", False), ("overloaded_error", True)],
)
async def test_an_exception_message_is_a_provider_error(
    dialect: Dialect, code: str, retryable: bool, simulator: Simulator
) -> None:
    simulator.play([Turn(calls=CALLS, fault=ErrorEvent(code=code, message="Nope", after_events=3))])
    with pytest.raises(ProviderError) as caught:
        await _calls(simulator, dialect)
    assert caught.value.retryable is retryable
    assert "Nope" in caught.value.message


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", ["bedrock_converse", "bedrock_anthropic"])
async def test_a_corrupted_crc_is_our_framing_error(dialect: Dialect, simulator: Simulator) -> None:
    simulator.play([Turn(calls=CALLS, fault=CorruptedCRC(after_events=3))])
    with pytest.raises(FramingError):
        await _calls(simulator, dialect)


@pytest.mark.anyio
@pytest.mark.parametrize("dialect", ["bedrock_converse", "bedrock_anthropic"])
@pytest.mark.parametrize("extra", [0, 5, 11, 40])
async def test_a_cut_anywhere_is_our_error(
    dialect: Dialect, extra: int, simulator: Simulator
) -> None:
    # After the first call's arguments, inside or at a message: the call that completed is
    # carried, never a half one.
    simulator.play([Turn(calls=CALLS, fault=Cut(after_events=6, extra_bytes=extra))])
    with pytest.raises(StreamError) as caught:
        await _calls(simulator, dialect)
    if isinstance(caught.value, TruncatedStreamError):
        assert [c.args for c in caught.value.completed] in ([], [CALLS[0].args])


def test_base64_of_chunks_is_strict() -> None:
    # The chunk payload's "bytes" is standard base64 with padding (as the real service).
    from sse_toolcalls.tooling.simulator import encode_turn

    for message in _read(b"".join(encode_turn("bedrock_anthropic", TOOL_TURN))):
        data = json.loads(message.payload)["bytes"]
        assert base64.b64encode(base64.b64decode(data, validate=True)).decode() == data


# --------------------------------------------------------------------------------------
# Requests built by hand: carried-over turns, result shapes.

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n fake").decode()


def converse_continuation(
    calls: list[tuple[str, str, dict[str, Any]]], results: list[dict[str, Any]]
) -> dict[str, Any]:
    uses = [{"toolUse": {"toolUseId": i, "name": n, "input": a}} for i, n, a in calls]
    return {
        "messages": [
            {"role": "user", "content": [{"text": "How tall?"}]},
            {"role": "assistant", "content": uses},
            {"role": "user", "content": [{"toolResult": r} for r in results]},
        ],
        "toolConfig": TOOL_CONFIG,
    }


@pytest.mark.parametrize("same_args", [True, False])
def test_a_turn_carried_over_from_anthropic_pairs_up_in_converse(
    simulator: Simulator, same_args: bool
) -> None:
    simulator.play([Turn(calls=CALLS), FINAL])
    with httpx.Client(base_url=simulator.base_url) as http:
        first = http.post("/v1/messages", json={"stream": True, "messages": []})
        assert first.status_code == 200
        key = "height" if same_args else "depth"
        body = converse_continuation(
            [
                ("tooluse_a", "lookup_demo_value", {"key": key}),
                ("tooluse_b", "lookup_demo_value", {"key": "weight"}),
            ],
            [
                {"toolUseId": "tooluse_a", "content": [{"text": "170 cm"}]},
                {"toolUseId": "tooluse_b", "content": [{"json": {"value": "70 kg"}}]},
            ],
        )
        second = http.post(f"/model/{MODEL}/converse-stream", json=body)
    if same_args:
        assert second.status_code == 200
        simulator.assert_no_problems()
    else:
        assert second.status_code == 400
        assert "carried over to bedrock_converse" in second.json()["message"]


@pytest.mark.parametrize(
    ("result", "expect", "problem"),
    [
        (
            {
                "content": [
                    {"text": "170 cm"},
                    {"image": {"format": "png", "source": {"bytes": PNG}}},
                ]
            },
            ExpectedResult(call_position=0, contains="170 cm", media=("image/png",)),
            None,
        ),
        (
            {"content": [{"text": "no such key"}], "status": "error"},
            ExpectedResult(call_position=0, is_error=True),
            None,
        ),
        (
            {"content": [{"text": "170 cm"}], "status": "error"},
            ExpectedResult(call_position=0, is_error=False),
            "has is_error=True",
        ),
        ({"content": [{"text": "x"}], "status": "failed"}, None, "is not success or error"),
        ({"content": "170 cm"}, None, "must be a list of content blocks"),
        (
            {"content": [{"image": {"format": "bmp", "source": {"bytes": PNG}}}]},
            None,
            "image.format",
        ),
        (
            {"content": [{"image": {"format": "png", "source": {"bytes": "%%%"}}}]},
            None,
            "not valid base64",
        ),
        ({"content": [{"text": "a", "json": {}}]}, None, "expected exactly one of"),
    ],
)
def test_tool_results_are_checked_as_converse_checks_them(
    simulator: Simulator,
    result: dict[str, Any],
    expect: ExpectedResult | None,
    problem: str | None,
) -> None:
    one_call = (CALLS[0],)
    final = Turn(text="ok", expect_results=(expect,) if expect else ())
    simulator.play([Turn(calls=one_call), final])
    with httpx.Client(base_url=simulator.base_url) as http:
        path, body = bedrock_request("bedrock_converse")
        assert http.post(path, json=body).status_code == 200
        call = ("tooluse_sim_0_0", "lookup_demo_value", {"key": "height"})
        body = converse_continuation([call], [{"toolUseId": "tooluse_sim_0_0", **result}])
        answer = http.post(path, json=body)
    if problem is None:
        assert answer.status_code == 200
        simulator.assert_no_problems()
    else:
        assert answer.status_code == 400
        assert answer.headers["x-amzn-errortype"].startswith("ValidationException:")
        assert problem in answer.json()["message"]


@pytest.mark.parametrize("dialect", ["bedrock_converse", "bedrock_anthropic"])
def test_serve_restarts_the_script_for_each_new_bedrock_conversation(dialect: Dialect) -> None:
    script = Script(turns=(Turn(calls=(CALLS[0],)), Turn(text="done")), check_results=False)
    path, opening = bedrock_request(dialect)
    use: dict[str, Any]
    answer: dict[str, Any]
    if dialect == "bedrock_converse":
        use = {"toolUse": {"toolUseId": "tooluse_sim_0_0", "name": CALLS[0].name, "input": {}}}
        answer = {"toolResult": {"toolUseId": "tooluse_sim_0_0", "content": [{"text": "1"}]}}
        extra: dict[str, Any] = {"toolConfig": TOOL_CONFIG}
    else:
        use = {"type": "tool_use", "id": "toolu_bdrk_sim_0_0", "name": CALLS[0].name, "input": {}}
        answer = {"type": "tool_result", "tool_use_id": "toolu_bdrk_sim_0_0", "content": "1"}
        extra = {}
    continuing = {
        **opening,
        **extra,
        "messages": [
            *opening["messages"],
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [answer]},
        ],
    }
    with (
        Simulator(script, restart="conversation") as sim,
        httpx.Client(base_url=sim.base_url) as http,
    ):
        for body in (opening, continuing, opening, continuing):
            assert http.post(path, json=body).status_code == 200
        assert [r.turn_number for r in sim.requests] == [0, 1, 0, 1]
        sim.assert_no_problems()


def wire_form(value: Any) -> Any:
    """botocore's parsed event as the wire has it: its blobs (the redacted reasoning's
    ``redactedContent``) decoded to bytes go back to base64 text, as the edge must do."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    if isinstance(value, dict):
        return {k: wire_form(v) for k, v in value.items()}
    return value


def test_botocores_parsed_events_feed_the_library(simulator: Simulator, bedrock: Any) -> None:
    # The parsed path of the contract: botocore's single-key dicts, each fed as its
    # payload under its key; InvokeModel's decoded bytes back to the wire's base64.
    simulator.play(Script(turns=(TOOL_TURN, TOOL_TURN), check_results=False))
    question = [{"role": "user", "content": [{"text": "How tall?"}]}]
    stream = bedrock.converse_stream(modelId=MODEL, messages=question)["stream"]
    converse = ToolCallParser("bedrock_converse")
    calls = [
        c
        for event in stream
        for kind, body in event.items()
        for c in converse.feed_event(wire_form(body), kind)
    ]
    calls += converse.finish()
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64, "messages": []}
    chunks = bedrock.invoke_model_with_response_stream(modelId=MODEL, body=json.dumps(body))["body"]
    invoke = ToolCallParser("bedrock_anthropic")
    for event in chunks:
        wire = {"bytes": base64.b64encode(event["chunk"]["bytes"]).decode()}
        calls += invoke.feed_event(wire, "chunk")
    calls += invoke.finish()
    assert [(c.provider, c.name, c.args) for c in calls] == [
        (provider, c.name, c.args)
        for provider in ("bedrock_converse", "bedrock_anthropic")
        for c in CALLS
    ]


@pytest.mark.parametrize(
    ("tools", "problem"),
    [
        ({"tools": []}, "'toolConfig.tools' failed to satisfy constraint"),
        (
            {"tools": [{"toolSpec": {"name": "fs.read", "inputSchema": {"json": {}}}}]},
            "toolSpec.name' failed to satisfy constraint",
        ),
        (
            {"tools": [{"toolSpec": {"name": "x" * 65, "inputSchema": {"json": {}}}}]},
            "toolSpec.name' failed to satisfy constraint",
        ),
        ({"tools": [{"toolSpec": {"name": "f"}}]}, "expected a toolSpec with a name"),
        (
            {
                "tools": [
                    {"toolSpec": {"name": "f", "description": "", "inputSchema": {"json": {}}}}
                ]
            },
            "toolSpec.description' failed to satisfy constraint",
        ),
        ({"tools": [{"toolSpec": {"name": "f", "inputSchema": {}}}]}, "expected a json schema"),
    ],
)
def test_tool_declarations_are_checked_as_converse_checks_them(
    simulator: Simulator, tools: dict[str, Any], problem: str
) -> None:
    simulator.play([Turn(text="hi")])
    path, body = bedrock_request("bedrock_converse")
    with httpx.Client(base_url=simulator.base_url) as http:
        answer = http.post(path, json={**body, "toolConfig": tools})
    assert answer.status_code == 400
    assert problem in answer.json()["message"]


@pytest.mark.parametrize("dialect", ["bedrock_converse", "bedrock_anthropic"])
def test_a_raw_body_goes_out_as_an_event_stream(dialect: Dialect, simulator: Simulator) -> None:
    chunks = (b"\x00\x00\x00\x10", b"\x00\x00\x00\x00junk")
    simulator.play(Script(turns=(Turn(fault=RawBody(chunks=chunks)),), check_results=False))
    path, body = bedrock_request(dialect)
    with httpx.Client(base_url=simulator.base_url) as http:
        answer = http.post(path, json=body)
    assert answer.headers["content-type"] == "application/vnd.amazon.eventstream"
    assert answer.content == b"".join(chunks)
