"""HTTP error answers become ProviderError with the provider's code, the right retry
classification, and the wait the provider asked for."""

from __future__ import annotations

import email.utils
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls.edge.http_errors import (
    MAX_RETRY_AFTER,
    is_retryable_status,
    parse_retry_after,
    provider_error_from_http,
)

NOW = 1_750_000_000.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"Retry-After": email.utils.formatdate(NOW + 30, usegmt=True)}, 30.0),
        ({"Retry-After": email.utils.formatdate(NOW - 30, usegmt=True)}, 0.0),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),
        ({"Retry-After": "-3"}, None),
        ({"Retry-After": "nan"}, None),
        ({"Retry-After": "tomorrow"}, None),
        ({}, None),
        # Hostile hints: bounded where they are read (issue 9).
        ({"Retry-After": "9" * 5000}, MAX_RETRY_AFTER),
        ({"Retry-After": "99999999999"}, MAX_RETRY_AFTER),
        ({"retry-after-ms": "9" * 400}, MAX_RETRY_AFTER),
        ({"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"}, MAX_RETRY_AFTER),
        ({"Retry-After": "1e308"}, None),
        ({"Retry-After": "inf"}, None),
        ({"Retry-After": "1_000"}, None),
        ({"retry-after-ms": "nan", "Retry-After": "-inf"}, None),
        ({"retry-after-ms": "-5", "Retry-After": "2"}, 2.0),
        ({"Retry-After": "Fri, 31 Dec 9999 23:59:59 +9999"}, None),
    ],
)
def test_retry_after(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers, now=NOW) == expected


@settings(max_examples=300)
@given(
    st.dictionaries(
        st.sampled_from(["Retry-After", "retry-after-ms", "retry-after"]),
        st.text() | st.from_regex(r"\A[0-9.e+-]{0,40}\Z") | st.integers().map(str),
    ),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12),
)
def test_any_retry_after_header_reads_as_nothing_or_a_bounded_wait(
    headers: dict[str, str], now: float
) -> None:
    wait = parse_retry_after(headers, now=now)
    assert wait is None or (math.isfinite(wait) and 0.0 <= wait <= MAX_RETRY_AFTER)


def test_the_provider_error_carries_the_bounded_wait() -> None:
    error = provider_error_from_http(
        429, b"{}", {"retry-after": "9" * 5000}, provider="openai_chat"
    )
    assert error.retry_after == MAX_RETRY_AFTER


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        (400, False),
        (401, False),
        (404, False),
        (408, True),
        (409, True),
        (429, True),
        (500, True),
        (502, True),
        (503, True),
        (529, True),
    ],
)
def test_retryable_statuses(status: int, retryable: bool) -> None:
    assert is_retryable_status(status) is retryable


def test_openai_rate_limit() -> None:
    body = b'{"error":{"message":"Slow down","type":"requests","param":null,"code":"rate_limit_exceeded"}}'
    error = provider_error_from_http(429, body, {"retry-after": "2"}, provider="openai_chat")
    assert (error.status, error.code, error.message) == (429, "rate_limit_exceeded", "Slow down")
    assert error.retryable
    assert error.retry_after == 2.0
    assert error.provider == "openai_chat"


def test_an_exhausted_quota_is_not_retryable_even_under_429() -> None:
    body = b'{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}'
    error = provider_error_from_http(429, body, provider="openai_responses")
    assert error.code == "insufficient_quota"
    assert not error.retryable


def test_anthropic_overloaded_529() -> None:
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    error = provider_error_from_http(529, body, provider="anthropic")
    assert (error.code, error.message, error.retryable) == ("overloaded_error", "Overloaded", True)


def test_gemini_error_wrapped_in_a_list() -> None:
    body = b'[{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}]'
    error = provider_error_from_http(429, body, provider="gemini")
    assert (error.code, error.message, error.retryable) == (
        "RESOURCE_EXHAUSTED",
        "Quota exceeded",
        True,
    )


def test_a_non_json_body_becomes_the_message() -> None:
    error = provider_error_from_http(502, b"<html>Bad Gateway</html>", provider=None)
    assert error.code is None
    assert "Bad Gateway" in error.message
    assert error.retryable


def test_x_should_retry_overrides_the_status() -> None:
    no = provider_error_from_http(500, b"{}", {"x-should-retry": "false"}, provider="anthropic")
    yes = provider_error_from_http(400, b"{}", {"X-Should-Retry": "true"}, provider="anthropic")
    assert (no.retryable, yes.retryable) == (False, True)
