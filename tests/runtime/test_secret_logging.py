"""Issue 29, item 7: a provider's error that echoes the API key is never logged (nor
handed to the application) with the key in it, in any spelling."""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import quote

import httpx2
import pytest

from sse_toolcalls import ProviderError
from sse_toolcalls._secrets import remember
from sse_toolcalls.conversation import UserMessage
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.clients import AnthropicClient, OpenAIChatClient
from sse_toolcalls.runtime.tools import ToolRegistry
from tests.runtime.test_agent import FakeClient

pytestmark = pytest.mark.anyio

KEY = "sk-ant-api03-LOGLEAK-7f3a9c2b"


def registry() -> ToolRegistry:
    tools = ToolRegistry()

    @tools.register
    def forecast(city: str) -> str:
        """Weather forecast."""
        return f"sunny in {city}"

    return tools


def record_text(record: logging.LogRecord) -> str:
    """Everything a handler could print of ``record``: the message, every attribute, the
    traceback."""
    parts = [record.getMessage(), repr(vars(record))]
    if record.exc_info:
        parts.append(logging.Formatter().formatException(record.exc_info))
    return "\n".join(parts)


def key_in(text: str, key: str = KEY) -> bool:
    return key in text or quote(key, safe="") in text or key.lower() in text.lower()


def echoing(status: int, message: str) -> httpx2.AsyncClient:
    body = {"type": "error", "error": {"type": "authentication_error", "message": message}}

    def upstream(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            status, headers={"content-type": "application/json"}, content=json.dumps(body)
        )

    return httpx2.AsyncClient(transport=httpx2.MockTransport(upstream))


@pytest.mark.parametrize(
    "echo",
    [f"invalid x-api-key: {KEY}", f"key {quote(KEY, safe='').replace('-', '%2D')} rejected"],
    ids=["plain", "percent-encoded"],
)
async def test_an_error_echoing_the_key_is_logged_and_raised_redacted(
    echo: str, caplog: pytest.LogCaptureFixture
) -> None:
    # Before: the agent's provider_error diagnostic logged the message, the body and the
    # exception's repr verbatim at WARNING, key and all.
    caplog.set_level(logging.DEBUG, logger="sse_toolcalls")
    client = AnthropicClient(
        model="m", api_key=KEY, base_url="http://upstream", http_client=echoing(401, echo)
    )
    reply = await Agent(client, registry(), tracing=False).run("hi")
    assert reply.is_fallback
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings, "the failure is logged"
    for record in caplog.records:
        assert not key_in(record_text(record)), record_text(record)
    for diagnostic in reply.diagnostics:
        assert not key_in(repr(diagnostic))
    assert any("[REDACTED]" in r.getMessage() for r in warnings)


async def test_the_client_hands_the_application_a_redacted_error() -> None:
    client = OpenAIChatClient(
        model="m",
        api_key=KEY,
        base_url="http://upstream",
        http_client=echoing(401, f"Incorrect API key provided: {KEY}"),
    )
    with pytest.raises(ProviderError) as caught:
        async for _ in client.stream_events([UserMessage(text="hi")]):
            pass
    error = caught.value
    assert not key_in(str(error)) and not key_in(repr(error)) and not key_in(str(error.body))
    assert "[REDACTED]" in error.message


async def test_a_key_the_library_was_told_is_redacted_from_any_client_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A client of the application's own (an SDK adapter) does not scrub its errors: the
    # log records are redacted against every key the library knows all the same.
    other = "sk-other-provider-0099887766"
    remember(other)
    caplog.set_level(logging.WARNING, logger="sse_toolcalls")
    failing: Any = ProviderError(
        f"bad key {other}", provider="anthropic", status=401, body={"echo": other}
    )
    client = FakeClient([failing])
    await Agent(client, registry(), tracing=False).run("hi")
    assert caplog.records
    for record in caplog.records:
        assert not key_in(record_text(record), other), record_text(record)


async def test_a_traceback_that_holds_the_key_is_logged_redacted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from sse_toolcalls._logging import log

    remember(KEY)
    logger = logging.getLogger("sse_toolcalls.runtime")
    caplog.set_level(logging.WARNING, logger="sse_toolcalls")
    try:
        raise RuntimeError(f"upstream said {KEY}")
    except RuntimeError as exc:
        log(logger, logging.ERROR, "internal_error", "it broke", exc_info=exc)
    (record,) = caplog.records
    assert not key_in(record_text(record)) and "RuntimeError" in record.getMessage()


def test_an_sdk_error_echoing_the_key_is_translated_redacted() -> None:
    # An SDK sends the key itself; its status error carries the request, and so the key
    # it sent. The openai SDK's APIStatusError has this shape (status_code, response).
    import httpx

    from sse_toolcalls.edge.sdk_errors import provider_error_from_sdk

    key = "sk-sdk-only-0123456789abc"
    request = httpx.Request(
        "POST",
        "https://api.example/v1/chat/completions",
        headers={"Authorization": f"Bearer {key}"},
    )
    body = {
        "error": {"message": f"Incorrect API key provided: {key}", "type": "invalid_request_error"}
    }
    response = httpx.Response(401, json=body, request=request)

    class APIStatusError(Exception):
        def __init__(self) -> None:
            super().__init__(f"Error code: 401 - {body}")
            self.status_code = 401
            self.response = response
            self.body = body

    error = provider_error_from_sdk(APIStatusError(), "openai_chat")
    assert error.status == 401 and "[REDACTED]" in error.message
    assert not key_in(str(error), key) and not key_in(repr(error.body), key)
