"""One reader of provider error objects: a stream's error event and an HTTP error body
with the same object get the same code and the same retryability (issue 10, item 1).

The objects are the providers' documented ones:

- OpenAI: platform.openai.com/docs/guides/error-codes (429 "Rate limit reached for
  requests/tokens" with ``type`` "requests"/"tokens" and ``code`` "rate_limit_exceeded";
  429 ``insufficient_quota``, whose ``code`` names the billing limit; 400
  ``invalid_request_error``; 503 "slow_down"), and the Responses stream's ``error``
  event (``{"type": "error", "code", "message", "param"}``) and ``response.failed``.
- Anthropic: docs.anthropic.com/en/api/errors (``{"type": "error", "error": {"type",
  "message"}}``: 400 invalid_request_error, 401 authentication_error, 429
  rate_limit_error, 500 api_error, 529 overloaded_error; a spend limit's 429 with
  ``details.error_code`` "enforced_spend_limit_reached"), sent in a stream as
  ``event: error``.
- Gemini: ai.google.dev/gemini-api/docs/troubleshooting (``{"error": {"code",
  "message", "status"}}``: 400 INVALID_ARGUMENT, 400 FAILED_PRECONDITION, 403
  PERMISSION_DENIED, 429 RESOURCE_EXHAUSTED, 500 INTERNAL, 503 UNAVAILABLE, 504
  DEADLINE_EXCEEDED).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sse_toolcalls import Dialect, ProviderError, ToolCallParser
from sse_toolcalls.edge.http_errors import provider_error_from_http
from sse_toolcalls.provider_errors import is_retryable, read_error_object


def _openai(message: str, kind: str, code: str | None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _anthropic(kind: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message, **extra}}


def _gemini(code: int, status: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}


# (dialect, HTTP status, error object, expected code, expected retryable)
DOCUMENTED: list[tuple[str, int, dict[str, Any], str, bool]] = [
    # The known disagreement: a stream read the type ("tokens"), HTTP the code.
    ("openai_chat", 429, _openai("Rate limit reached", "tokens", "rate_limit_exceeded"),
     "rate_limit_exceeded", True),
    ("openai_chat", 429, _openai("Rate limit reached", "requests", "rate_limit_exceeded"),
     "rate_limit_exceeded", True),
    ("openai_chat", 429, _openai("You exceeded your current quota", "insufficient_quota",
                                 "insufficient_quota"), "insufficient_quota", False),
    # A billing code under the insufficient_quota type is permanent by either name.
    ("openai_chat", 429, _openai("Spend limit", "insufficient_quota",
                                 "project_spend_limit_exceeded"),
     "project_spend_limit_exceeded", False),
    ("openai_chat", 400, _openai("maximum context length", "invalid_request_error",
                                 "context_length_exceeded"), "context_length_exceeded", False),
    ("openai_chat", 400, _openai("Invalid value", "invalid_request_error", None),
     "invalid_request_error", False),
    ("openai_chat", 401, _openai("Incorrect API key provided", "invalid_request_error",
                                 "invalid_api_key"), "invalid_api_key", False),
    ("openai_chat", 500, _openai("The server had an error", "server_error", None),
     "server_error", True),
    ("openai_chat", 503, _openai("Please slow down", "service_unavailable_error", "slow_down"),
     "slow_down", True),
    ("openai_responses", 429, _openai("Rate limit reached", "tokens", "rate_limit_exceeded"),
     "rate_limit_exceeded", True),
    ("openai_responses", 429, _openai("quota", "insufficient_quota", "insufficient_quota"),
     "insufficient_quota", False),
    ("openai_responses", 500, _openai("The server had an error", "server_error",
                                      "server_error"), "server_error", True),
    ("openai_responses", 400, _openai("Invalid input", "invalid_request_error", None),
     "invalid_request_error", False),
    ("anthropic", 400, _anthropic("invalid_request_error", "bad"), "invalid_request_error",
     False),
    ("anthropic", 401, _anthropic("authentication_error", "invalid x-api-key"),
     "authentication_error", False),
    ("anthropic", 403, _anthropic("permission_error", "no"), "permission_error", False),
    ("anthropic", 413, _anthropic("request_too_large", "too big"), "request_too_large", False),
    ("anthropic", 429, _anthropic("rate_limit_error", "slow down"), "rate_limit_error", True),
    ("anthropic", 429, _anthropic("rate_limit_error", "spend limit",
                                  details={"error_code": "enforced_spend_limit_reached"}),
     "enforced_spend_limit_reached", False),
    ("anthropic", 500, _anthropic("api_error", "Internal server error"), "api_error", True),
    ("anthropic", 529, _anthropic("overloaded_error", "Overloaded"), "overloaded_error", True),
    ("gemini", 400, _gemini(400, "INVALID_ARGUMENT", "Request contains an invalid argument."),
     "INVALID_ARGUMENT", False),
    ("gemini", 400, _gemini(400, "FAILED_PRECONDITION", "free tier not available"),
     "FAILED_PRECONDITION", False),
    ("gemini", 403, _gemini(403, "PERMISSION_DENIED", "denied"), "PERMISSION_DENIED", False),
    ("gemini", 404, _gemini(404, "NOT_FOUND", "model not found"), "NOT_FOUND", False),
    ("gemini", 429, _gemini(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted"),
     "RESOURCE_EXHAUSTED", True),
    ("gemini", 500, _gemini(500, "INTERNAL", "An internal error has occurred"), "INTERNAL",
     True),
    ("gemini", 503, _gemini(503, "UNAVAILABLE", "The model is overloaded"), "UNAVAILABLE",
     True),
    ("gemini", 504, _gemini(504, "DEADLINE_EXCEEDED", "Deadline expired"),
     "DEADLINE_EXCEEDED", True),
]  # fmt: skip


def _stream_bytes(dialect: str, body: dict[str, Any]) -> bytes:
    """The object as the dialect's stream sends it mid-turn."""
    if dialect == "openai_chat":
        chunk: dict[str, Any] = {"choices": [{"index": 0, "delta": {"role": "assistant"}}]}
        return f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(body)}\n\n".encode()
    if dialect == "openai_responses":
        # The Responses error event puts the fields beside "type": "error".
        inner = body["error"]
        event = {"type": "error", "code": inner["code"], "message": inner["message"],
                 "param": inner["param"]}  # fmt: skip
        if event["code"] is None:
            # The event has no "type" of its own for the error kind: a failed response
            # carries the whole object instead.
            failed = {"type": "response.failed", "response": {"status": "failed", **body}}
            return f"event: response.failed\ndata: {json.dumps(failed)}\n\n".encode()
        return f"event: error\ndata: {json.dumps(event)}\n\n".encode()
    if dialect == "anthropic":
        start: dict[str, Any] = {"type": "message_start", "message": {"id": "msg_1", "content": []}}
        return (
            f"event: message_start\ndata: {json.dumps(start)}\n\n"
            f"event: error\ndata: {json.dumps(body)}\n\n"
        ).encode()
    return f"data: {json.dumps(body)}\n\n".encode()


def _from_stream(dialect: Dialect, data: bytes) -> ProviderError:
    parser = ToolCallParser(dialect)
    with pytest.raises(ProviderError) as caught:
        parser.feed(data)
        parser.finish()
    return caught.value


@pytest.mark.parametrize(
    ("dialect", "status", "body", "code", "retryable"),
    DOCUMENTED,
    ids=[f"{d}-{s}-{c}" for d, s, _, c, _ in DOCUMENTED],
)
def test_each_documented_error_object_reads_alike_in_a_stream_and_over_http(
    dialect: Dialect, status: int, body: dict[str, Any], code: str, retryable: bool
) -> None:
    streamed = _from_stream(dialect, _stream_bytes(dialect, body))
    http = provider_error_from_http(status, json.dumps(body).encode(), provider=dialect)
    assert (streamed.code, streamed.retryable) == (code, retryable)
    assert (http.code, http.retryable) == (code, retryable)
    assert streamed.message == http.message
    assert streamed.provider == http.provider == dialect
    assert http.status == status


def test_gemini_http_error_wrapped_in_a_list_reads_as_the_object() -> None:
    body = _gemini(429, "RESOURCE_EXHAUSTED", "quota")
    wrapped = provider_error_from_http(429, json.dumps([body]).encode(), provider="gemini")
    plain = provider_error_from_http(429, json.dumps(body).encode(), provider="gemini")
    assert (wrapped.code, wrapped.retryable, wrapped.message) == (
        plain.code,
        plain.retryable,
        plain.message,
    )


def test_the_more_specific_code_wins_over_the_type_and_the_type_still_counts() -> None:
    found = read_error_object(_openai("m", "tokens", "rate_limit_exceeded"))
    assert (found.code, found.kind, found.retryable) == ("rate_limit_exceeded", "tokens", True)
    # A permanent type is not overridden by a code the table does not know.
    quota = read_error_object(_openai("m", "insufficient_quota", "some_new_billing_code"))
    assert (quota.code, quota.retryable) == ("some_new_billing_code", False)
    assert not is_retryable("some_new_billing_code", 429, kind="insufficient_quota")


NOT_ERROR_OBJECTS: list[Any] = [
    None, 3, "text", [], [1], {}, {"error": None}, {"error": 7}, {"error": {"code": True}},
    {"error": {"type": ["x"]}}, {"error": {"details": "x"}},
]  # fmt: skip


@pytest.mark.parametrize("payload", NOT_ERROR_OBJECTS)
def test_shapes_that_are_no_error_object_read_as_empty(payload: Any) -> None:
    found = read_error_object(payload)
    assert (found.code, found.status) == (None, None)
    assert not found.retryable


def test_an_error_given_as_text_is_the_message() -> None:
    assert read_error_object({"error": "model overloaded"}).message == "model overloaded"
    assert read_error_object({"detail": "Not Found"}).message == "Not Found"
