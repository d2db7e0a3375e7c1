"""The Bedrock clients (issue 31, item 5) against a loopback server that answers as
Bedrock's runtime does (tests/aws_loopback.py): the endpoint and its path, a Bedrock API
key as a bearer token, AWS Signature V4 through botocore (checked by signing the request
the server received again, with botocore, at the same date), errors by
``x-amzn-ErrorType``, and no secret in an error or a repr. asyncio and trio.

The request bodies are the messages module's (issue 31, item 4); here a fixed body
stands in where a test is about the wire around it (``FixedBody``).
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx2
import pytest
from botocore.auth import SigV4Auth  # type: ignore[import-untyped]
from botocore.awsrequest import AWSRequest  # type: ignore[import-untyped]
from botocore.credentials import Credentials  # type: ignore[import-untyped]
from botocore.utils import percent_encode  # type: ignore[import-untyped]
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls import ProviderError, ToolCall, UsageError
from sse_toolcalls.conversation import Conversation, UserMessage
from sse_toolcalls.runtime.clients import (
    SIGNING_CODE,
    BedrockAnthropicClient,
    BedrockClient,
    ProviderClient,
    client_for,
)
from tests.aws_loopback import (
    Answer,
    Loopback,
    Seen,
    converse_stream,
    converse_text_stream,
    invoke_stream,
    loopback,
)

pytestmark = [
    pytest.mark.anyio,
    # As in test_chaos.py: on trio, httpx leaves the body iterators of a stream that
    # raised part way to the collector, which warns.
    pytest.mark.filterwarnings("ignore:Async generator 'httpx2?\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore2?\\.:ResourceWarning"),
]

KEY = "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlLTEyMzQ1Njc4OTA="
ACCESS = "AKIAIOSFODNN7EXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
TOKEN = "IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN0123456789"
MODEL = "us.anthropic.claude-3-5-sonnet-20240620-v1:0"
ARN = (
    "arn:aws:bedrock:us-east-1:123456789012:inference-profile/"
    "us.anthropic.claude-3-5-sonnet-20240620-v1:0"
)
BODY = {"messages": [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]}


PARIS = ("get_weather", {"city": "Paris"})


class FixedBody(BedrockClient):
    """The Converse client with a fixed request body: the wire around it is under test."""

    def body(self, conversation: Conversation, tools: Any = (), **options: Any) -> dict[str, Any]:
        return BODY


class FixedInvokeBody(BedrockAnthropicClient):
    def body(self, conversation: Conversation, tools: Any = (), **options: Any) -> dict[str, Any]:
        return {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 100, **BODY}


CONVERSATION: Conversation = [UserMessage(text="Weather in Paris?")]


async def calls_of(client: ProviderClient) -> list[ToolCall]:
    try:
        return [call async for call in client.stream_tool_calls(CONVERSATION)]
    finally:
        await client.aclose()


@pytest.fixture
def server() -> Iterator[Loopback]:
    with loopback() as state:
        yield state


@pytest.fixture
def no_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No credential, region or endpoint from the machine: botocore's chain finds only
    what a test sets, and never asks an instance's metadata service (no traffic)."""
    for name in (
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_ROLE_ARN",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))


def names(calls: list[ToolCall]) -> list[tuple[str, Any]]:
    return [(call.name, call.args) for call in calls]


# --------------------------------------------------------------------------------------
# The endpoint and a Bedrock API key.


@pytest.mark.usefixtures("no_aws_environment")
async def test_a_bearer_key_streams_the_calls_from_the_converse_endpoint(
    server: Loopback,
) -> None:
    server.answer(Answer(body=converse_stream(), chunk=7))
    client = FixedBody(model=MODEL, region="us-east-1", api_key=KEY, base_url=server.base_url)
    assert names(await calls_of(client)) == [PARIS]
    [seen] = server.seen
    assert seen.path == "/model/us.anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream"
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.headers["accept"] == "application/vnd.amazon.eventstream"
    assert seen.headers["content-type"] == "application/json"
    assert json.loads(seen.body) == BODY
    assert not any(name.startswith("x-amz-") for name in seen.headers)


@pytest.mark.usefixtures("no_aws_environment")
async def test_the_key_comes_from_aws_bearer_token_bedrock(
    server: Loopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", KEY)
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    server.answer(Answer(body=converse_stream()))
    client = FixedBody(model=MODEL, base_url=server.base_url)
    assert client.region == "eu-west-3"
    assert names(await calls_of(client)) == [PARIS]
    assert server.seen[0].headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.usefixtures("no_aws_environment")
async def test_an_arn_is_one_path_segment(server: Loopback) -> None:
    # An ARN holds ":" and "/": unencoded, its "/" would split the path and Bedrock
    # would read another model id (or none).
    server.answer(Answer(body=converse_stream()))
    client = FixedBody(model=ARN, api_key=KEY, base_url=server.base_url)
    assert names(await calls_of(client)) == [PARIS]
    path = server.seen[0].path
    segments = path.split("/")
    assert segments[:2] == ["", "model"] and segments[3:] == ["converse-stream"]
    assert unquote(segments[2]) == ARN


@pytest.mark.usefixtures("no_aws_environment")
async def test_the_anthropic_client_invokes_with_response_stream(server: Loopback) -> None:
    server.answer(Answer(body=invoke_stream(), chunk=5))
    client = FixedInvokeBody(model=MODEL, api_key=KEY, base_url=server.base_url)
    calls = await calls_of(client)
    assert names(calls) == [PARIS]
    assert calls[0].provider == "bedrock_anthropic"
    assert server.seen[0].path.endswith("-v1%3A0/invoke-with-response-stream")


def test_the_default_endpoint_is_the_regions_runtime(no_aws_environment: None) -> None:
    client = BedrockClient(model=MODEL, region="ap-southeast-2", api_key=KEY)
    assert client.url() == (
        "https://bedrock-runtime.ap-southeast-2.amazonaws.com/model/"
        "us.anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream"
    )
    assert isinstance(client_for("bedrock_converse", model="m", region="us-east-1", api_key=KEY),
                      BedrockClient)  # fmt: skip
    assert isinstance(
        client_for("bedrock_anthropic", model="m", region="us-east-1", api_key=KEY),
        BedrockAnthropicClient,
    )


@pytest.mark.parametrize(
    ("base_url", "sent"),
    [
        ("https://bedrock.example.com", True),
        ("HTTPS://bedrock.example.com", True),
        ("http://127.0.0.1:8000", True),
        ("http://127.9.9.9", True),
        ("http://localhost:8000", True),
        ("http://[::1]:8000", True),
        ("http://bedrock.example.com", False),
        ("http://10.0.0.7:8000", False),
        ("http://127.0.0.1.evil.example", False),
        ("http://localhost.evil.example", False),
    ],
)
def test_a_bearer_key_goes_over_https_or_stays_on_this_machine(
    no_aws_environment: None, base_url: str, sent: bool
) -> None:
    # botocore refuses a bearer token for an HTTP endpoint; a key for a local server
    # (the simulator) stays on this machine.
    if sent:
        BedrockClient(model=MODEL, api_key=KEY, base_url=base_url)
    else:
        with pytest.raises(UsageError, match="HTTPS"):
            BedrockClient(model=MODEL, api_key=KEY, base_url=base_url)
    # An empty key sends nothing, wherever it goes.
    BedrockClient(model=MODEL, api_key="", base_url=base_url)


def test_the_endpoint_variable_boto3_honours_moves_it(
    no_aws_environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:8/")
    assert (
        BedrockClient(model="m", api_key=KEY).url() == "http://127.0.0.1:8/model/m/converse-stream"
    )
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "http://127.0.0.1:9/")
    client = BedrockClient(model="m", api_key=KEY)
    assert client.url() == "http://127.0.0.1:9/model/m/converse-stream"


# --------------------------------------------------------------------------------------
# Signature V4.


def resign(seen: Seen, url: str, credentials: Credentials, region: str) -> str:
    """The Authorization header botocore computes for the request the server received,
    at the date the request says (X-Amz-Date), over the headers it says it signed."""
    authorization = seen.headers["authorization"]
    signed = authorization.split("SignedHeaders=", 1)[1].split(",", 1)[0].split(";")
    request = AWSRequest(
        method=seen.method,
        url=url,
        data=seen.body,
        headers={name: seen.headers[name] for name in signed},
    )
    request.context["timestamp"] = seen.headers["x-amz-date"]
    signer = SigV4Auth(credentials.get_frozen_credentials(), "bedrock", region)
    canonical = signer.canonical_request(request)
    signature = signer.signature(signer.string_to_sign(request, canonical), request)
    scope = signer.scope(request)
    return f"AWS4-HMAC-SHA256 Credential={scope}, SignedHeaders={';'.join(signed)}, Signature={signature}"


@pytest.mark.usefixtures("no_aws_environment")
@pytest.mark.parametrize("model", [MODEL, ARN])
async def test_a_signed_request_verifies_as_aws_verifies_it(server: Loopback, model: str) -> None:
    server.answer(Answer(body=converse_stream()))
    client = FixedBody(
        model=model,
        region="us-west-2",
        aws_access_key_id=ACCESS,
        aws_secret_access_key=SECRET,
        aws_session_token=TOKEN,
        base_url=server.base_url,
        headers={"x-custom": "kept"},
    )
    assert names(await calls_of(client)) == [PARIS]
    [seen] = server.seen
    url = server.base_url + seen.path
    assert seen.headers["authorization"] == resign(
        seen, url, Credentials(ACCESS, SECRET, TOKEN), "us-west-2"
    )
    signed = seen.headers["authorization"].split("SignedHeaders=", 1)[1].split(",", 1)[0]
    # What must be signed is: the host, the date, the token, the body's type.
    assert {"host", "x-amz-date", "x-amz-security-token", "content-type", "x-custom"} <= set(
        signed.split(";")
    )
    assert f"Credential={ACCESS}/" in seen.headers["authorization"]
    assert "/us-west-2/bedrock/aws4_request" in seen.headers["authorization"]
    assert seen.headers["x-amz-security-token"] == TOKEN
    # A wrong secret gives another signature: the check above can fail.
    assert seen.headers["authorization"] != resign(
        seen, url, Credentials(ACCESS, SECRET[:-1] + "X", TOKEN), "us-west-2"
    )


async def test_botocores_credential_chain_signs_when_no_key_is_given(
    server: Loopback, no_aws_environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-central-1")
    server.answer(Answer(body=converse_stream()))
    client = FixedBody(model=MODEL, base_url=server.base_url)
    assert "SigV4" in repr(client)
    assert names(await calls_of(client)) == [PARIS]
    [seen] = server.seen
    assert seen.headers["authorization"] == resign(
        seen, server.base_url + seen.path, Credentials(ACCESS, SECRET), "eu-central-1"
    )
    assert "x-amz-security-token" not in seen.headers


@pytest.mark.usefixtures("no_aws_environment")
async def test_each_request_is_signed_anew(server: Loopback) -> None:
    # A signature covers the body: a second request with another body signed with the
    # first one's headers would be refused.
    server.answer(Answer(body=converse_stream()))
    client = FixedBody(
        model=MODEL,
        region="us-east-1",
        aws_access_key_id=ACCESS,
        aws_secret_access_key=SECRET,
        base_url=server.base_url,
    )
    bodies = iter([{"messages": [{"role": "user", "content": [{"text": t}]}]} for t in "ab"])
    client.body = lambda *args, **kwargs: next(bodies)  # type: ignore[method-assign]
    for _ in range(2):
        assert [c.name async for c in client.stream_tool_calls(CONVERSATION)] == ["get_weather"]
    await client.aclose()
    first, second = server.seen
    assert first.body != second.body
    for seen in (first, second):
        assert seen.headers["authorization"] == resign(
            seen, server.base_url + seen.path, Credentials(ACCESS, SECRET), "us-east-1"
        )


class Rotating:
    """Refreshable credentials (an assumed role): botocore's interface, a new key pair
    at each read; the second read fails like a refresh that could not reach STS."""

    def __init__(self) -> None:
        self.reads = 0

    def get_frozen_credentials(self) -> Any:
        self.reads += 1
        if self.reads > 1:
            raise RuntimeError(f"refresh failed; secret was {SECRET}")
        return Credentials(ACCESS, SECRET, TOKEN).get_frozen_credentials()


@pytest.mark.usefixtures("no_aws_environment")
async def test_a_failed_signing_is_our_error_without_the_secret(server: Loopback) -> None:
    client = FixedBody(
        model=MODEL, region="us-east-1", credentials=Rotating(), base_url=server.base_url
    )
    with pytest.raises(ProviderError) as caught:
        await calls_of(client)
    assert caught.value.code == SIGNING_CODE and not caught.value.retryable
    assert SECRET not in str(caught.value) and SECRET not in repr(caught.value.args)
    assert server.seen == []


class Unreadable:
    """Refreshable credentials whose refresh fails every time (STS unreachable)."""

    def get_frozen_credentials(self) -> Any:
        raise RuntimeError("could not refresh: connection refused")


@pytest.mark.usefixtures("no_aws_environment")
async def test_credentials_that_cannot_be_read_fail_the_request_not_the_client(
    server: Loopback,
) -> None:
    client = FixedBody(
        model=MODEL, region="us-east-1", credentials=Unreadable(), base_url=server.base_url
    )
    with pytest.raises(ProviderError) as caught:
        await calls_of(client)
    assert caught.value.code == SIGNING_CODE
    assert isinstance(caught.value.__cause__, RuntimeError)
    assert server.seen == []


@pytest.mark.usefixtures("no_aws_environment")
def test_signing_without_botocore_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "botocore.auth", None)
    with pytest.raises(UsageError, match=r"sse_toolcalls\[bedrock\]"):
        BedrockClient(
            model=MODEL, region="us-east-1", aws_access_key_id=ACCESS, aws_secret_access_key=SECRET
        )


def test_a_bearer_key_never_imports_botocore(no_aws_environment: None) -> None:
    import subprocess

    code = (
        "import sys; from sse_toolcalls.runtime.clients import BedrockClient; "
        "BedrockClient(model='m', region='us-east-1', api_key='k' * 20); "
        "print('botocore' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "False"


# --------------------------------------------------------------------------------------
# Arguments refused.


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"region": "evil.example/x", "api_key": KEY}, "region"),
        ({"region": "us-east-1.evil.example", "api_key": KEY}, "region"),
        ({"region": "US-EAST-1", "api_key": KEY}, "region"),
        ({"region": "a" * 33, "api_key": KEY}, "region"),
        ({"region": "", "api_key": KEY}, "region"),
        ({"region": 1, "api_key": KEY}, "region"),
        ({"region": b"us-east-1", "api_key": KEY}, "region"),
        ({"api_key": KEY}, "region"),  # no region, no base_url: no endpoint
        ({"region": "us-east-1", "model": ".."}, "model"),
        ({"region": "us-east-1", "model": ""}, "model"),
        ({"region": "us-east-1", "aws_access_key_id": ACCESS}, "both"),
        ({"region": "us-east-1", "aws_secret_access_key": SECRET}, "both"),
        ({"region": "us-east-1", "aws_session_token": TOKEN}, "aws_session_token"),
        (
            {"region": "us-east-1", "aws_access_key_id": ACCESS, "aws_secret_access_key": b"s"},
            "aws_secret_access_key",
        ),
        (
            {"region": "us-east-1", "aws_access_key_id": "", "aws_secret_access_key": SECRET},
            "aws_access_key_id",
        ),
        (
            {"region": "us-east-1", "api_key": KEY, "aws_access_key_id": ACCESS,
             "aws_secret_access_key": SECRET},
            "not both",
        ),
        (
            {"region": "us-east-1", "credentials": object()},
            "get_frozen_credentials",
        ),
        ({"region": "us-east-1"}, "no AWS credentials"),  # the chain finds nothing
        ({"base_url": "http://127.0.0.1:9"}, "region"),  # signing needs one
    ],
)  # fmt: skip
def test_what_cannot_make_a_request_is_refused_at_once(
    no_aws_environment: None, kwargs: dict[str, Any], match: str
) -> None:
    kwargs.setdefault("model", MODEL)
    with pytest.raises(UsageError, match=match):
        BedrockClient(**kwargs)


@pytest.mark.parametrize("broken", ["profile", "config"])
def test_a_broken_credential_chain_is_our_usage_error(
    no_aws_environment: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, broken: str
) -> None:
    if broken == "profile":
        monkeypatch.setenv("AWS_PROFILE", "no-such-profile")
    else:
        config = tmp_path / "config"
        config.write_text("[default\nregion = us-east-1\n")
        monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    with pytest.raises(UsageError, match="credential chain") as caught:
        BedrockClient(model=MODEL, region="us-east-1")
    assert caught.value.__cause__ is not None


def test_an_empty_key_sends_no_auth(no_aws_environment: None) -> None:
    client = BedrockClient(model=MODEL, api_key="", base_url="http://127.0.0.1:9")
    assert "authorization" not in client.request_headers(client.url(), b"{}")
    assert "no key" in repr(client)


# --------------------------------------------------------------------------------------
# Errors.


def aws_error_answer(status: int, error_type: str, message: str) -> Answer:
    return Answer(
        status=status,
        body=json.dumps({"message": message}).encode(),
        headers={"content-type": "application/json", "x-amzn-ErrorType": error_type},
    )


@pytest.mark.usefixtures("no_aws_environment")
@pytest.mark.parametrize(
    ("status", "error_type", "code", "retryable"),
    [
        (429, "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/",
         "ThrottlingException", True),
        (503, "ServiceUnavailableException", "ServiceUnavailableException", True),
        (424, "ModelErrorException:http://internal.amazon.com/coral/com.amazon.bedrock/",
         "ModelErrorException", False),
        (400, "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/",
         "ValidationException", False),
        (403, "AccessDeniedException", "AccessDeniedException", False),
        (404, "ResourceNotFoundException", "ResourceNotFoundException", False),
        (429, "ModelNotReadyException", "ModelNotReadyException", True),
        (408, "ModelTimeoutException", "ModelTimeoutException", True),
    ],
)  # fmt: skip
async def test_an_http_error_is_read_by_its_error_type(
    server: Loopback, status: int, error_type: str, code: str, retryable: bool
) -> None:
    server.answer(aws_error_answer(status, error_type, "Too many requests, please wait."))
    client = FixedBody(model=MODEL, api_key=KEY, base_url=server.base_url)
    with pytest.raises(ProviderError) as caught:
        await calls_of(client)
    error = caught.value
    assert (error.code, error.retryable, error.status) == (code, retryable, status)
    assert error.message == "Too many requests, please wait."
    assert error.provider == "bedrock_converse"


@pytest.mark.usefixtures("no_aws_environment")
async def test_an_exception_message_mid_stream_is_a_retryable_provider_error(
    server: Loopback,
) -> None:
    server.answer(Answer(body=converse_stream(exception="throttlingException"), chunk=3))
    client = FixedBody(model=MODEL, api_key=KEY, base_url=server.base_url)
    with pytest.raises(ProviderError) as caught:
        await calls_of(client)
    assert (caught.value.code, caught.value.retryable) == ("ThrottlingException", True)


@pytest.mark.usefixtures("no_aws_environment")
@pytest.mark.parametrize("auth", ["bearer", "sigv4"])
async def test_an_error_echoing_a_credential_is_redacted(server: Loopback, auth: str) -> None:
    # A proxy or a misconfigured gateway may echo what it was sent.
    echoed = f"bad key {KEY}" if auth == "bearer" else f"secret {SECRET} token {TOKEN}"
    server.answer(aws_error_answer(403, "UnrecognizedClientException", echoed))
    given: dict[str, Any] = (
        {"api_key": KEY}
        if auth == "bearer"
        else {
            "region": "us-east-1",
            "aws_access_key_id": ACCESS,
            "aws_secret_access_key": SECRET,
            "aws_session_token": TOKEN,
        }
    )
    client = FixedBody(model=MODEL, base_url=server.base_url, **given)
    text = repr(client)
    with pytest.raises(ProviderError) as caught:
        await calls_of(client)
    error = caught.value
    shown = f"{error} {error.args!r} {error.body!r} {text}"
    for secret in (KEY, SECRET, TOKEN):
        assert secret not in shown
    assert error.code == "UnrecognizedClientException" and not error.retryable


# --------------------------------------------------------------------------------------
# boto3 as the oracle of the request line: the same model id gives the same path.


@pytest.mark.parametrize("model", [MODEL, ARN, "amazon.nova-micro-v1:0", "a b+c%d"])
@pytest.mark.parametrize("operation", ["converse", "invoke"])
async def test_the_request_is_the_one_boto3_sends(
    server: Loopback, no_aws_environment: None, model: str, operation: str
) -> None:
    import anyio
    import boto3  # type: ignore[import-untyped]
    from botocore.config import Config  # type: ignore[import-untyped]

    body = converse_stream() if operation == "converse" else invoke_stream()
    server.answer(Answer(body=body))
    runtime = boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        endpoint_url=server.base_url,
        # Signed: botocore sends a bearer token over HTTPS only.
        aws_access_key_id=ACCESS,
        aws_secret_access_key=SECRET,
        config=Config(retries={"total_max_attempts": 1}),
    )

    def boto3_request() -> None:
        if operation == "converse":
            list(runtime.converse_stream(modelId=model, messages=BODY["messages"])["stream"])
        else:
            answer = runtime.invoke_model_with_response_stream(modelId=model, body=json.dumps(BODY))
            list(answer["body"])

    await anyio.to_thread.run_sync(boto3_request)
    ours = (FixedBody if operation == "converse" else FixedInvokeBody)(
        model=model, base_url=server.base_url, api_key=KEY
    )
    assert names(await calls_of(ours)) == [PARIS]
    theirs, mine = server.seen
    assert mine.path == theirs.path


@pytest.mark.usefixtures("no_aws_environment")
async def test_botocores_signing_logs_never_carry_the_token(
    server: Loopback, caplog: pytest.LogCaptureFixture
) -> None:
    # botocore logs the canonical request at DEBUG, X-Amz-Security-Token and all.
    caplog.set_level(logging.DEBUG)
    server.answer(Answer(body=converse_stream()))
    client = FixedBody(
        model=MODEL,
        region="us-east-1",
        aws_access_key_id=ACCESS,
        aws_secret_access_key=SECRET,
        aws_session_token=TOKEN,
        base_url=server.base_url,
    )
    assert names(await calls_of(client)) == [PARIS]
    signing = [r for r in caplog.records if r.name == "botocore.auth"]
    assert any("CanonicalRequest" in r.getMessage() for r in signing)
    for record in caplog.records:
        for secret in (TOKEN, SECRET):
            assert secret not in record.getMessage()


# --------------------------------------------------------------------------------------
# Properties: any model id is one path segment, spelled as botocore spells it; any
# region is refused or names a host under amazonaws.com.

# One HTTP client for every example: making one loads the CA bundle (tens of ms).
_HTTP = httpx2.AsyncClient()


@settings(max_examples=300)
@given(model=st.text(max_size=40) | st.sampled_from([".", "..", "...", "./x", "a/../b"]))
def test_any_model_id_is_one_segment_spelled_as_botocore_spells_it(model: str) -> None:
    try:
        client = BedrockClient(model=model, region="us-east-1", api_key=KEY, http_client=_HTTP)
    except UsageError:
        assert model.strip(".") == ""
        return
    path = urlsplit(client.url()).path
    segments = path.split("/")
    assert segments[:2] == ["", "model"] and segments[3:] == ["converse-stream"]
    assert segments[2] == percent_encode(model) and unquote(segments[2]) == model


@settings(max_examples=300)
@given(region=st.text(max_size=40) | st.from_regex(r"[a-z]{2}-[a-z]+-[0-9]", fullmatch=True))
def test_any_region_is_refused_or_names_a_bedrock_host(region: str) -> None:
    try:
        client = BedrockClient(model="m", region=region, api_key=KEY, http_client=_HTTP)
    except UsageError:
        return
    parts = urlsplit(client.url())
    assert parts.scheme == "https" and parts.port is None
    assert parts.hostname == f"bedrock-runtime.{region}.amazonaws.com"
    assert "." not in region and "/" not in region


@pytest.mark.usefixtures("no_aws_environment")
async def test_the_agent_runs_a_turn_over_a_signed_bedrock_stream(server: Loopback) -> None:
    # The whole loop: the call streamed, the tool run, a second signed request, the
    # answer's text and usage.
    from sse_toolcalls.runtime import Agent, ToolRegistry

    tools = ToolRegistry()
    cities: list[str] = []

    @tools.register
    def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: its name.
        """
        cities.append(city)
        return "sunny"

    server.answer(Answer(body=converse_stream()), Answer(body=converse_text_stream("Sunny.")))
    client = FixedBody(
        model=MODEL,
        region="us-east-1",
        aws_access_key_id=ACCESS,
        aws_secret_access_key=SECRET,
        base_url=server.base_url,
    )
    try:
        reply = await Agent(client, tools, tracing=False).run("Weather in Paris?")
    finally:
        await client.aclose()
    assert cities == ["Paris"]
    assert reply.text == "Sunny." and not reply.is_fallback
    assert [r.outcome for r in reply.reports] == ["ok"]
    assert reply.usage.output_tokens == 9 and reply.requests == 2
    for seen in server.seen:
        assert seen.headers["authorization"] == resign(
            seen, server.base_url + seen.path, Credentials(ACCESS, SECRET), "us-east-1"
        )


class Rotated:
    """Refreshable credentials that rotate after the first request's signature (an
    assumed role's new session): botocore's interface."""

    def __init__(self) -> None:
        self.pairs = [
            Credentials(ACCESS, SECRET, TOKEN),
            Credentials(
                "AKIAROTATEDEXAMPLE00", "rotated/secret/EXAMPLEKEY0000000000000", "T2" * 20
            ),
        ]
        self.reads = 0

    def get_frozen_credentials(self) -> Any:
        # Read once when the client is made, once per request.
        self.reads += 1
        return self.pairs[0 if self.reads <= 2 else 1].get_frozen_credentials()


@pytest.mark.usefixtures("no_aws_environment")
async def test_rotated_credentials_sign_each_request_and_are_redacted(server: Loopback) -> None:
    rotated = Rotated()
    server.answer(Answer(body=converse_stream()))
    client = FixedBody(
        model=MODEL, region="us-east-1", credentials=rotated, base_url=server.base_url
    )
    for _ in range(2):
        assert names([c async for c in client.stream_tool_calls(CONVERSATION)]) == [PARIS]
    first, second = server.seen
    for seen, pair in zip((first, second), rotated.pairs, strict=True):
        assert seen.headers["authorization"] == resign(
            seen, server.base_url + seen.path, pair, "us-east-1"
        )
    # The new secret, learned at the second signature, is redacted from then on.
    new = rotated.pairs[1].get_frozen_credentials()
    server.answer(aws_error_answer(403, "ExpiredTokenException", f"bad {new.secret_key}"))
    with pytest.raises(ProviderError) as caught:
        await calls_of(client)
    assert new.secret_key not in str(caught.value) and caught.value.code == "ExpiredTokenException"
