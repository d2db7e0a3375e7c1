"""The edge and Amazon Bedrock (issue 31, item 5): the event stream's media type, errors
by ``x-amzn-ErrorType`` over HTTP, boto3's parsed items handed to ``parse_*``, and
botocore's exceptions as our ``ProviderError``, with one table of AWS's error names.

The real boto3 talks to a loopback server that answers as Bedrock does
(tests/aws_loopback.py): nothing is mocked in the boto3 tests but the service.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Iterator
from contextlib import aclosing
from pathlib import Path
from typing import Any

import anyio
import boto3  # type: ignore[import-untyped]
import botocore.exceptions  # type: ignore[import-untyped]
import httpx2
import pytest
from botocore.config import Config  # type: ignore[import-untyped]
from botocore.eventstream import EventStreamBuffer  # type: ignore[import-untyped]
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls import (
    MalformedStreamError,
    ProviderError,
    StreamTimeoutError,
    ToolCall,
    ToolCallParser,
    TruncatedStreamError,
    UsageError,
    aiter_tool_calls,
    aiter_tool_calls_from_sse,
    aparse_tool_calls,
    iter_tool_calls,
    parse_events,
    parse_tool_calls,
    provider_error_from_sdk,
    translate_sdk_errors,
)
from sse_toolcalls.calls import ReasoningBlock, StreamFinished
from sse_toolcalls.edge.http_errors import provider_error_from_http
from sse_toolcalls.edge.responses import MAX_BLOB_DEPTH
from sse_toolcalls.framing.eventstream import EventStreamEventFramer
from sse_toolcalls.framing.sse import ServerSentEvent
from sse_toolcalls.provider_errors import aws_error_code
from tests import wire
from tests.aws_loopback import (
    EVENT_STREAM,
    Answer,
    Loopback,
    converse_stream,
    invoke_stream,
    loopback,
)
from tests.core.test_eventstream_wire import STRING, encode
from tests.outside import EXTERNAL_STREAMS, skip_or_fail

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore:Async generator 'httpx2?\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore2?\\.:ResourceWarning"),
]

PARIS = [("get_weather", {"city": "Paris"})]
NAMESPACE = ":http://internal.amazon.com/coral/com.amazon.bedrock/"


def names(calls: Iterable[ToolCall]) -> list[tuple[str, Any]]:
    return [(call.name, call.args) for call in calls]


def exception_message(name: str, message: str = "Slow down.") -> bytes:
    return encode(
        [
            (":exception-type", STRING, name),
            (":content-type", STRING, "application/json"),
            (":message-type", STRING, "exception"),
        ],
        json.dumps({"message": message}).encode(),
    )


def mock_client(body: bytes, headers: dict[str, str], status: int = 200) -> httpx2.AsyncClient:
    def upstream(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(status, headers=headers, content=body)

    return httpx2.AsyncClient(transport=httpx2.MockTransport(upstream))


async def read_calls(
    body: bytes, dialect: Any, headers: dict[str, str] | None = None, status: int = 200
) -> list[ToolCall]:
    url = "http://bedrock.test/model/m/converse-stream"
    client = mock_client(body, headers or {"content-type": EVENT_STREAM}, status)
    async with client, client.stream("POST", url) as response:
        return [call async for call in aiter_tool_calls(response, dialect)]


# --------------------------------------------------------------------------------------
# The media type and the head of the body.


@pytest.mark.parametrize("dialect", ["bedrock_converse", None])
@pytest.mark.parametrize(
    "content_type", [EVENT_STREAM, "application/vnd.amazon.eventstream; charset=binary"]
)
async def test_an_event_stream_body_is_read_with_or_without_a_dialect(
    dialect: Any, content_type: str
) -> None:
    # Before: with no dialect named, the edge expected text/event-stream alone and
    # refused Bedrock's answer as "unexpected_content_type".
    calls = await read_calls(converse_stream(), dialect, {"content-type": content_type})
    assert names(calls) == PARIS


def test_the_sync_reader_takes_an_event_stream_too() -> None:
    def upstream(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, headers={"content-type": EVENT_STREAM}, content=invoke_stream())

    client = httpx2.Client(transport=httpx2.MockTransport(upstream))
    with client, client.stream("POST", "http://bedrock.test/") as response:
        calls = list(iter_tool_calls(response))
    assert names(calls) == PARIS and calls[0].provider == "bedrock_anthropic"


async def test_a_json_document_under_the_event_stream_type_is_no_event_stream() -> None:
    with pytest.raises(ProviderError) as caught:
        await read_calls(b'{"message": "hello"}', "bedrock_converse")
    assert caught.value.code == "not_an_event_stream"


async def test_another_media_type_is_still_refused() -> None:
    with pytest.raises(ProviderError) as caught:
        await read_calls(converse_stream(), None, {"content-type": "text/html"})
    assert caught.value.code == "unexpected_content_type"
    assert "application/vnd.amazon.eventstream" in caught.value.message


@pytest.mark.parametrize("dialect", ["bedrock_anthropic", "bedrock_converse", None])
@pytest.mark.parametrize(
    ("exception", "retryable"),
    [("throttlingException", True), ("validationException", False)],
)
async def test_an_exception_as_the_first_message_is_the_providers_error(
    dialect: Any, exception: str, retryable: bool
) -> None:
    # Before: the head check took an exception message for Converse's first event, and
    # an InvokeModel stream that opened with one was "another dialect's stream".
    with pytest.raises(ProviderError) as caught:
        await read_calls(exception_message(exception), dialect)
    assert caught.value.code == aws_error_code(exception)
    assert caught.value.retryable is retryable


async def test_a_stream_of_the_other_bedrock_dialect_is_named() -> None:
    with pytest.raises(MalformedStreamError, match="bedrock_anthropic"):
        await read_calls(invoke_stream(), "bedrock_converse")


# --------------------------------------------------------------------------------------
# HTTP errors by x-amzn-ErrorType.

AWS_TABLE = [
    ("ThrottlingException", 429, True),
    ("ServiceUnavailableException", 503, True),
    ("InternalServerException", 500, True),
    ("ModelNotReadyException", 429, True),
    ("ModelTimeoutException", 408, True),
    ("ModelStreamErrorException", 424, True),
    ("ValidationException", 400, False),
    ("AccessDeniedException", 403, False),
    ("ResourceNotFoundException", 404, False),
    ("ServiceQuotaExceededException", 400, False),
    ("ModelErrorException", 424, False),
    ("UnrecognizedClientException", 403, False),
    ("ExpiredTokenException", 403, False),
    ("InvalidSignatureException", 403, False),
]


@pytest.mark.parametrize(("name", "status", "retryable"), AWS_TABLE)
@pytest.mark.parametrize("spelling", ["namespaced", "plain", "lower camel"])
def test_the_error_type_header_names_the_code(
    name: str, status: int, retryable: bool, spelling: str
) -> None:
    value = {
        "namespaced": name + NAMESPACE,
        "plain": name,
        "lower camel": name[0].lower() + name[1:],
    }[spelling]
    error = provider_error_from_http(
        status,
        b'{"message":"Something went wrong."}',
        {"Content-Type": "application/json", "X-Amzn-ErrorType": value},
        provider="bedrock_converse",
    )
    assert (error.code, error.retryable, error.status) == (name, retryable, status)
    assert error.message == "Something went wrong."


@pytest.mark.parametrize(("name", "status", "retryable"), AWS_TABLE)
def test_the_code_decides_over_the_status(name: str, status: int, retryable: bool) -> None:
    # The same name under a status that says the opposite: AWS's table wins.
    other = 400 if retryable else 503
    error = provider_error_from_http(
        other, b"{}", {"x-amzn-errortype": name}, provider="bedrock_converse"
    )
    assert error.retryable is retryable


def test_a_body_type_with_a_namespace_is_read_as_botocore_reads_it() -> None:
    error = provider_error_from_http(
        403,
        b'{"__type":"com.amazon.coral.service#ExpiredTokenException",'
        b'"Message":"The security token included in the request is expired"}',
        {"content-type": "application/x-amz-json-1.1"},
        provider="bedrock_converse",
    )
    assert error.code == "ExpiredTokenException" and not error.retryable
    assert error.message == "The security token included in the request is expired"


@pytest.mark.parametrize(("status", "retryable"), [(502, True), (418, False)])
def test_an_unknown_name_falls_back_on_the_status(status: int, retryable: bool) -> None:
    error = provider_error_from_http(
        status, b"<html>gateway</html>", {"x-amzn-ErrorType": "SomeNewException"}, provider=None
    )
    assert error.code == "SomeNewException" and error.retryable is retryable
    assert "gateway" in error.message


def test_without_the_header_the_body_is_read_as_before() -> None:
    body = b'{"error": {"message": "slow down", "type": "rate_limit_error"}}'
    error = provider_error_from_http(429, body, {}, provider="anthropic")
    assert error.code == "rate_limit_error"


# --------------------------------------------------------------------------------------
# Items as boto3 yields them, by hand.


def items_of(body: bytes) -> list[dict[str, Any]]:
    """What boto3 yields for an event-stream body: ``{event type: payload}``, a chunk's
    bytes decoded (botocore reads a blob so)."""
    buffer = EventStreamBuffer()
    buffer.add_data(body)
    out = []
    for message in buffer:
        payload = json.loads(message.payload)
        payload.pop("p", None)
        if "bytes" in payload:
            payload["bytes"] = base64.b64decode(payload["bytes"])
        out.append({message.headers[":event-type"]: payload})
    return out


@pytest.mark.parametrize("dialect", ["bedrock_converse", None])
def test_converse_items_give_the_calls(dialect: Any) -> None:
    assert names(parse_tool_calls(items_of(converse_stream()), dialect)) == PARIS


@pytest.mark.parametrize("dialect", ["bedrock_anthropic", None])
def test_invoke_chunks_with_their_bytes_decoded_give_the_calls(dialect: Any) -> None:
    items = items_of(invoke_stream())
    assert all(isinstance(item["chunk"]["bytes"], bytes) for item in items)
    assert names(parse_tool_calls(items, dialect)) == PARIS


async def test_the_async_reader_takes_the_items_too() -> None:
    async def items() -> AsyncIterator[dict[str, Any]]:
        for item in items_of(converse_stream()):
            yield item

    assert names([call async for call in aparse_tool_calls(items(), None)]) == PARIS


@pytest.mark.parametrize("dialect", ["bedrock_converse", None])
def test_an_exception_item_is_the_providers_error(dialect: Any) -> None:
    # Not what boto3 yields (it raises EventStreamError), but what a log of its items, or
    # another SDK's union, holds: the exception member read as the stream's exception.
    items = [
        {"messageStart": {"role": "assistant"}},
        {"throttlingException": {"message": "Too many tokens."}},
    ]
    for start in (0, 1):
        with pytest.raises(ProviderError) as caught:
            list(parse_tool_calls(items[start:], dialect))
        assert (caught.value.code, caught.value.retryable) == ("ThrottlingException", True)
        assert caught.value.message == "Too many tokens."


@pytest.mark.parametrize("dialect", ["bedrock_converse", "bedrock_anthropic", None])
async def test_events_another_decoder_framed_are_read(dialect: Any) -> None:
    # Before: with a Bedrock dialect named, the events were written back as SSE text for
    # a parser that frames AWS's event stream: a checksum error.
    body = invoke_stream() if dialect == "bedrock_anthropic" else converse_stream()
    events = EventStreamEventFramer(max_event_bytes=1 << 20).feed(body)

    async def framed() -> AsyncGenerator[ServerSentEvent, None]:
        for event in events:
            yield event

    async with aclosing(framed()) as source:
        assert names([c async for c in aiter_tool_calls_from_sse(source, dialect)]) == PARIS


async def test_a_framed_event_whose_data_is_no_object_is_malformed() -> None:
    async def framed() -> AsyncGenerator[ServerSentEvent, None]:
        yield ServerSentEvent("messageStart", "[1, 2]", "", None)

    async with aclosing(framed()) as source:
        with pytest.raises(MalformedStreamError, match="not a JSON object"):
            [c async for c in aiter_tool_calls_from_sse(source, "bedrock_converse")]


def test_a_redacted_reasoning_blob_is_carried_as_the_wire_carries_it() -> None:
    # botocore decodes reasoningContent.redactedContent (a blob) to bytes; the next
    # request must carry the same value back, so it is read as the base64 sent.
    secret = bytes(range(256))
    items: list[dict[str, Any]] = [
        {"messageStart": {"role": "assistant"}},
        {
            "contentBlockDelta": {
                "contentBlockIndex": 0,
                "delta": {"reasoningContent": {"redactedContent": secret}},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {"messageStop": {"stopReason": "end_turn"}},
        {"metadata": {"usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}}},
    ]
    events = list(parse_events(items, "bedrock_converse"))
    [finished] = [e for e in events if isinstance(e, StreamFinished)]
    [block] = finished.reasoning
    assert isinstance(block, ReasoningBlock)
    assert block.data == base64.b64encode(secret).decode()


def test_bytes_past_the_blob_depth_are_refused_as_no_json() -> None:
    deep: Any = b"x"
    for _ in range(MAX_BLOB_DEPTH + 1):
        deep = {"a": deep}
    with pytest.raises(UsageError):
        list(parse_events([{"messageStart": {"role": "assistant", "x": deep}}], None))


def test_single_key_objects_of_other_dialects_are_not_unwrapped() -> None:
    # A Gemini chunk with one key is Gemini's, not an event named "candidates".
    chunk = {
        "candidates": [
            {
                "content": {"parts": [{"functionCall": {"name": "f", "args": {"a": 1}}}]},
                "finishReason": "STOP",
            }
        ]
    }
    assert names(parse_tool_calls([chunk], None)) == [("f", {"a": 1})]
    assert names(parse_tool_calls([chunk], "gemini")) == [("f", {"a": 1})]


def test_an_item_that_is_not_an_event_object_is_read_as_it_is() -> None:
    # {"messageStart": "text"}: one key, but no object under it: not boto3's item, so
    # it is no event of the stream, and the stream is never whole.
    with pytest.raises(MalformedStreamError):
        list(parse_tool_calls([{"messageStart": "assistant"}], None))


@pytest.mark.outside_corpus
def test_every_recorded_bedrock_stream_as_boto3_items() -> None:
    skip_or_fail()
    manifest = json.loads((EXTERNAL_STREAMS / "bedrock" / "MANIFEST.json").read_text())
    checked = 0
    for entry in manifest:
        expected = entry["expected"]
        if expected["outcome"] != "complete":
            continue
        body = (EXTERNAL_STREAMS / entry["file"]).read_bytes()
        calls = list(parse_tool_calls(items_of(body), None))
        want = [(c["name"], c["args"]) for c in expected["calls"]]
        assert names(calls) == want, entry["file"]
        checked += 1
    assert checked >= 10


# --------------------------------------------------------------------------------------
# The real boto3 against a loopback Bedrock.


@pytest.fixture
def server() -> Iterator[Loopback]:
    with loopback() as state:
        yield state


@pytest.fixture
def runtime(server: Loopback, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """boto3's bedrock-runtime client at the loopback server, dummy keys, no retries
    (each answer is read once), nothing from the machine's AWS configuration."""
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK", raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=server.base_url,
        aws_access_key_id="AKIAIOSFODNN7EXAMPLE",
        aws_secret_access_key="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        config=Config(retries={"total_max_attempts": 1}),
    )


MESSAGES = [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]


def converse(runtime: Any) -> Any:
    return runtime.converse_stream(modelId="us.amazon.nova-micro-v1:0", messages=MESSAGES)["stream"]


@pytest.mark.parametrize("dialect", ["bedrock_converse", None])
def test_boto3s_converse_stream_gives_the_calls(
    server: Loopback, runtime: Any, dialect: Any
) -> None:
    server.answer(Answer(body=converse_stream(), chunk=11))
    assert names(parse_tool_calls(converse(runtime), dialect)) == PARIS


def test_boto3s_stream_given_to_the_bytes_reader_says_where_it_goes(
    server: Loopback, runtime: Any
) -> None:
    server.answer(Answer(body=converse_stream()))
    stream = converse(runtime)
    try:
        with pytest.raises(UsageError, match=r"parse_tool_calls\(\)"):
            list(iter_tool_calls(stream, "bedrock_converse"))
    finally:
        stream.close()


def test_boto3s_invoke_stream_gives_the_calls(server: Loopback, runtime: Any) -> None:
    server.answer(Answer(body=invoke_stream()))
    body = json.dumps({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64,
                       "messages": MESSAGES})  # fmt: skip
    stream = runtime.invoke_model_with_response_stream(modelId="anthropic.claude-v2", body=body)
    calls = list(parse_tool_calls(stream["body"], "bedrock_anthropic"))
    assert names(calls) == PARIS and calls[0].provider == "bedrock_anthropic"


async def test_boto3s_stream_read_asynchronously(server: Loopback, runtime: Any) -> None:
    server.answer(Answer(body=converse_stream()))
    stream = iter(converse(runtime))
    done = object()

    async def items() -> AsyncIterator[Any]:
        # boto3 is synchronous: each item is read in a worker thread.
        while (item := await anyio.to_thread.run_sync(next, stream, done)) is not done:
            yield item

    assert names([call async for call in aparse_tool_calls(items(), None)]) == PARIS


@pytest.mark.parametrize(("name", "status", "retryable"), AWS_TABLE[:9])
def test_boto3s_client_error_is_our_provider_error(
    server: Loopback, runtime: Any, name: str, status: int, retryable: bool
) -> None:
    server.answer(
        Answer(
            status=status,
            body=b'{"message":"Too many requests, please wait before trying again."}',
            headers={
                "content-type": "application/json",
                "x-amzn-ErrorType": name + NAMESPACE,
                "retry-after": "3",
            },
        )
    )
    with pytest.raises(botocore.exceptions.ClientError) as raised:
        converse(runtime)
    error = provider_error_from_sdk(raised.value, "bedrock_converse")
    assert (error.code, error.retryable, error.status) == (name, retryable, status)
    assert error.message == "Too many requests, please wait before trying again."
    assert error.retry_after == 3.0
    with pytest.raises(ProviderError) as translated, translate_sdk_errors("bedrock_converse"):
        converse(runtime)
    assert translated.value.code == name
    assert isinstance(translated.value.__cause__, botocore.exceptions.ClientError)


@pytest.mark.parametrize(
    ("exception", "code", "retryable"),
    [
        ("throttlingException", "ThrottlingException", True),
        ("modelStreamErrorException", "ModelStreamErrorException", True),
        ("internalServerException", "InternalServerException", True),
        ("serviceUnavailableException", "ServiceUnavailableException", True),
        ("validationException", "ValidationException", False),
    ],
)
def test_an_exception_mid_stream_through_boto3_is_the_same_error_as_ours(
    server: Loopback, runtime: Any, exception: str, code: str, retryable: bool
) -> None:
    body = converse_stream(exception=exception)
    server.answer(Answer(body=body))
    with pytest.raises(ProviderError) as translated, translate_sdk_errors("bedrock_converse"):
        list(parse_tool_calls(converse(runtime), "bedrock_converse"))
    cause = translated.value.__cause__
    assert isinstance(cause, botocore.exceptions.EventStreamError)
    # The same bytes read by our own framer and dialect: one table, one answer.
    with pytest.raises(ProviderError) as ours:
        list(our_calls(body))
    for error in (translated.value, ours.value):
        assert (error.code, error.retryable) == (code, retryable)
        assert error.message == "Too many tokens, please wait before trying again."


def our_calls(body: bytes) -> Iterator[ToolCall]:
    """The calls of ``body`` read by our framer and dialect, without boto3."""
    parser = ToolCallParser("bedrock_converse")
    yield from parser.feed(body)
    yield from parser.finish()


def test_a_refused_connection_through_boto3_is_a_retryable_connection_error(
    runtime: Any, server: Loopback
) -> None:
    closed = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url="http://127.0.0.1:9",  # discard: nothing listens
        aws_access_key_id="AKIAIOSFODNN7EXAMPLE",
        aws_secret_access_key="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=5),
    )
    with pytest.raises(botocore.exceptions.EndpointConnectionError) as raised:
        converse(closed)
    error = provider_error_from_sdk(raised.value, "bedrock_converse")
    assert (error.code, error.retryable) == ("connection_error", True)


def test_a_connection_dropped_mid_stream_through_boto3_is_never_a_half_call(
    server: Loopback, runtime: Any
) -> None:
    # boto3 ends its iteration quietly when the body is cut short of its length: the
    # stream's own end marker is what says it was cut.
    body = converse_stream()
    server.answer(Answer(body=body, cut=len(body) // 2))
    with pytest.raises(TruncatedStreamError) as cut, translate_sdk_errors("bedrock_converse"):
        list(parse_tool_calls(converse(runtime), "bedrock_converse"))
    assert [p.name for p in cut.value.partial] == ["get_weather"]


def test_botocores_timeouts_are_our_timeout() -> None:
    for exc in (
        botocore.exceptions.ReadTimeoutError(endpoint_url="http://127.0.0.1:9"),
        botocore.exceptions.ConnectTimeoutError(endpoint_url="http://127.0.0.1:9"),
    ):
        assert isinstance(provider_error_from_sdk(exc, "bedrock_converse"), StreamTimeoutError)
    dropped = botocore.exceptions.ResponseStreamingError(error="connection reset")
    assert provider_error_from_sdk(dropped, None).code == "connection_error"


def test_botocores_other_errors_are_not_a_providers() -> None:
    # A local mistake (a parameter the model refuses) is a bug, not the provider's error.
    with pytest.raises(UsageError):
        provider_error_from_sdk(botocore.exceptions.ParamValidationError(report="bad"), None)
    with (
        pytest.raises(botocore.exceptions.ParamValidationError),
        translate_sdk_errors("bedrock_converse"),
    ):
        raise botocore.exceptions.ParamValidationError(report="bad")


# --------------------------------------------------------------------------------------
# Properties: every input, never a foreign exception; boto3's items read as the bytes.

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)


@settings(max_examples=60)
@given(
    dialect=st.sampled_from(["bedrock_converse", "bedrock_anthropic"]),
    calls=st.lists(
        st.tuples(_NAMES, st.dictionaries(st.text(max_size=6), _JSON, max_size=3)),
        max_size=3,
    ),
    text=st.text(max_size=20),
    fragment=st.integers(1, 9),
)
def test_boto3s_items_read_as_the_bytes_they_came_as(
    dialect: Any, calls: list[tuple[str, dict[str, Any]]], text: str, fragment: int
) -> None:
    neutral = [wire.Call(name, args, f"id{i}") for i, (name, args) in enumerate(calls)]
    body = wire.encode(dialect, neutral, text, fragment)
    parser = ToolCallParser(dialect)
    from_bytes = [*parser.feed(body), *parser.finish()]
    for given_dialect in (dialect, None):
        from_items = list(parse_tool_calls(items_of(body), given_dialect))
        assert from_items == from_bytes
    assert names(from_bytes) == [(name, args) for name, args in calls]


@settings(max_examples=200)
@given(
    value=st.text(max_size=80),
    status=st.integers(100, 599),
    body=st.binary(max_size=64) | _JSON.map(lambda v: json.dumps({"message": v}).encode()),
)
def test_any_error_type_header_is_one_provider_error(value: str, status: int, body: bytes) -> None:
    error = provider_error_from_http(
        status, body, {"x-amzn-ErrorType": value}, provider="bedrock_converse"
    )
    assert isinstance(error, ProviderError) and error.status == status
    if value.strip():
        assert error.code == (aws_error_code(value) or None)
    assert isinstance(error.message, str) and error.message


class _FakeClientError(Exception):
    """botocore's ClientError shape, with anything in its response."""

    def __init__(self, response: Any) -> None:
        super().__init__("client error")
        self.response = response


@settings(max_examples=200)
@given(
    response=st.dictionaries(
        st.sampled_from(["Error", "ResponseMetadata", "message", "x"]),
        _JSON
        | st.fixed_dictionaries({"Code": st.text(max_size=30)}, optional={"Message": _JSON})
        | st.fixed_dictionaries(
            {},
            optional={
                "HTTPStatusCode": st.integers(0, 999) | _JSON,
                "HTTPHeaders": st.dictionaries(
                    st.sampled_from(["retry-after", "x-amzn-errortype"]), st.text(max_size=9)
                )
                | _JSON,
            },
        ),
        max_size=4,
    )
)
def test_any_client_error_shape_is_ours_or_a_usage_error(response: dict[str, Any]) -> None:
    try:
        error = provider_error_from_sdk(_FakeClientError(response), "bedrock_converse")
    except UsageError:
        # Not a status, connection or AWS error: a bug of the caller's, said as ours.
        error_shape = response.get("Error")
        assert not (isinstance(error_shape, dict) and isinstance(error_shape.get("Code"), str))
        return
    assert isinstance(error, ProviderError)
    assert error.code == (aws_error_code(response["Error"]["Code"]) or None)


class _Chunks:
    """A sync response look-alike: a status, headers and a body in given chunks."""

    def __init__(self, chunks: list[bytes], content_type: str | None) -> None:
        self.status_code = 200
        self.headers = {} if content_type is None else {"content-type": content_type}
        self.chunks = chunks

    def iter_bytes(self) -> Iterator[bytes]:
        yield from self.chunks

    def close(self) -> None:
        pass


@settings(max_examples=80)
@given(
    data=st.data(),
    dialect=st.sampled_from(["bedrock_converse", "bedrock_anthropic"]),
    calls=st.lists(
        st.tuples(_NAMES, st.dictionaries(st.text(max_size=6), _JSON, max_size=3)), max_size=3
    ),
    text=st.text(max_size=20),
    content_type=st.sampled_from([EVENT_STREAM, "text/event-stream", None]),
)
def test_the_edge_reads_any_event_stream_at_any_split_as_the_parser_does(
    data: st.DataObject,
    dialect: Any,
    calls: list[tuple[str, dict[str, Any]]],
    text: str,
    content_type: str | None,
) -> None:
    # Never "not an event stream", never a content type refused, whatever the split:
    # the edge gives what the parser gives for the whole body.
    neutral = [wire.Call(name, args, f"id{i}") for i, (name, args) in enumerate(calls)]
    body = wire.encode(dialect, neutral, text, 4)
    cuts = sorted(data.draw(st.sets(st.integers(1, len(body) - 1), max_size=6)))
    chunks = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    parser = ToolCallParser(dialect)
    expected = [*parser.feed(body), *parser.finish()]
    for given_dialect in (dialect, None):
        assert list(iter_tool_calls(_Chunks(chunks, content_type), given_dialect)) == expected


def test_a_stream_in_another_framing_that_never_tells_is_released_bounded() -> None:
    # An event stream of events no dialect knows, given to an SSE dialect: the head
    # holds the bytes from the parser while it looks (up to MAX_HEAD_BYTES), then lets
    # the parser read them, which ends in our error, never another exception.
    from sse_toolcalls.edge.responses import MAX_HEAD_BYTES, _BodyStep
    from sse_toolcalls.errors import SSEToolCallsError

    message = wire.aws_message("unknownEvent", {"x": "y" * 100})
    body = message * (MAX_HEAD_BYTES // len(message) + 3)
    step = _BodyStep(_Chunks([], EVENT_STREAM), ToolCallParser("openai_chat"), "openai_chat", None)
    held = 0
    with pytest.raises(SSEToolCallsError):
        for start in range(0, len(body), 1000):
            step.chunk(body[start : start + 1000])
            held = max(held, sum(map(len, step._held)))
        step.end()
    assert 0 < held <= MAX_HEAD_BYTES + 1000
    assert step._held == []
