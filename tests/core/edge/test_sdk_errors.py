"""An SDK's status error read without the SDK: whatever its response and body look like,
the answer is one ProviderError (or ours, unchanged), never another exception."""

from __future__ import annotations

from typing import Any

import pytest

from sse_toolcalls.edge.http_errors import MAX_ERROR_BODY_BYTES
from sse_toolcalls.edge.sdk_errors import provider_error_from_sdk, translate_sdk_errors
from sse_toolcalls.errors import ProviderError, UsageError


class StatusError(Exception):
    """The shape the SDKs' APIStatusError has: ``status_code``, ``response``, ``body``."""

    def __init__(self, status_code: Any, *, response: Any = None, body: Any = None) -> None:
        super().__init__(f"status {status_code}")
        self.status_code = status_code
        self.response = response
        self.body = body


class Response:
    def __init__(self, content: Any = None, headers: Any = None) -> None:
        self._content = content
        self.headers = headers

    @property
    def content(self) -> Any:
        if isinstance(self._content, Exception):
            raise self._content  # a stream not read: touching it would fail
        return self._content


RATE_LIMITED = {"error": {"message": "slow down", "type": "rate_limit_error"}}


def test_the_body_is_read_when_the_response_has_no_bytes() -> None:
    error = provider_error_from_sdk(StatusError(429, body=RATE_LIMITED), "anthropic")
    assert (error.status, error.retryable) == (429, True)
    assert "slow down" in str(error)


def test_a_response_whose_content_raises_falls_back_to_the_body() -> None:
    response = Response(content=RuntimeError("stream not read"), headers={"retry-after": "7"})
    error = provider_error_from_sdk(StatusError(503, response=response, body=RATE_LIMITED))
    assert error.status == 503 and "slow down" in str(error)
    assert error.retry_after == 7


def test_a_body_json_cannot_hold_is_its_text_cut_to_the_limit() -> None:
    class Opaque:
        def __str__(self) -> str:
            return "opaque " * MAX_ERROR_BODY_BYTES

    error = provider_error_from_sdk(StatusError(500, body=Opaque()), "openai_chat")
    assert error.status == 500 and error.retryable
    assert "opaque" in str(error)


def test_no_body_at_all_still_gives_the_status() -> None:
    error = provider_error_from_sdk(StatusError(404, response=Response(headers=["not", "a map"])))
    assert (error.status, error.retryable) == (404, False)


def test_x_should_retry_overrides_the_status() -> None:
    response = Response(
        content=b'{"error": {"message": "try again"}}', headers={"x-should-retry": "true"}
    )
    assert provider_error_from_sdk(StatusError(400, response=response)).retryable is True


def test_a_bool_status_is_no_status_and_ours_pass_through() -> None:
    with pytest.raises(UsageError, match="not an SDK status or connection error"):
        provider_error_from_sdk(StatusError(True))
    ours = ProviderError("already ours", provider="gemini")
    assert provider_error_from_sdk(ours) is ours
    with pytest.raises(StatusError), translate_sdk_errors():
        raise StatusError(True)  # not a status error: passes through untouched


@pytest.mark.anyio
async def test_translation_works_as_an_async_context_manager_too() -> None:
    with pytest.raises(ProviderError) as caught:
        async with translate_sdk_errors("anthropic"):
            raise StatusError(429, body=RATE_LIMITED)
    assert caught.value.provider == "anthropic"
    assert isinstance(caught.value.__cause__, StatusError)
