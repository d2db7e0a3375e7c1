"""Provider error objects to :class:`ProviderError`: one reader, one table.

The stream path (an error event inside a dialect) and the HTTP path
(``runtime/http_errors.py``, which adds only what is HTTP: the status, ``Retry-After``,
``x-should-retry``, the bounded body) both come here, so an error object is classified
the same wherever it arrives (issue 10: they disagreed on OpenAI's rate-limit body).

The shapes, as each provider documents them:

- OpenAI Chat and Responses over HTTP, and Chat chunks:
  ``{"error": {"message", "type", "param", "code"}}``; the Responses ``error`` event puts
  ``code``, ``message`` and ``param`` beside ``"type": "error"``, and ``response.failed``
  carries ``response.error = {"code", "message"}``.
- Anthropic: ``{"type": "error", "error": {"type", "message"}}``, over HTTP and as the
  stream's ``error`` event; a spend limit adds ``error.details.error_code``.
- Gemini: ``{"error": {"code": <HTTP status>, "message", "status": <RPC status>}}``,
  over HTTP sometimes wrapped in a list.
- OpenAI-compatible servers: the OpenAI shape, the same fields at the top level
  (Mistral), ``{"error": "text"}`` or ``{"detail": "text"}`` (vLLM, FastAPI).
- Amazon Bedrock: the kind in a name, not in the body (``{"message"}``): over HTTP the
  ``x-amzn-ErrorType`` header (``ThrottlingException:http://internal.amazon.com/...``),
  in a stream an ``exception`` message's ``:exception-type`` (``throttlingException``);
  :func:`aws_error_code` reads either as the one code (``ThrottlingException``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import _json
from .errors import ProviderError

__all__ = [
    "ErrorObject",
    "aws_error",
    "aws_error_code",
    "error_from_payload",
    "finish_reason_error",
    "is_retryable",
    "parse_error_body",
    "provider_error",
    "read_error_object",
]

# Error types and codes that name a transient condition, across the four providers:
# Anthropic error.type (rate_limit_error 429, api_error 500, overloaded_error 529),
# OpenAI error.type and error.code (rate_limit_exceeded, slow_down,
# server_is_overloaded), Google RPC status (RESOURCE_EXHAUSTED 429, INTERNAL 500,
# UNAVAILABLE 503, DEADLINE_EXCEEDED 504; ai.google.dev/gemini-api/docs/troubleshooting).
_RETRYABLE_CODES = frozenset(
    {
        "overloaded_error",
        "rate_limit_error",
        "api_error",
        "timeout_error",
        "server_error",
        "rate_limit_exceeded",
        "slow_down",
        "server_is_overloaded",
        "service_unavailable_error",
        "internal_error",
        "internal_server_error",
        "service_unavailable",
        "overloaded",
        "timeout",
        "RESOURCE_EXHAUSTED",
        "UNAVAILABLE",
        "INTERNAL",
        "DEADLINE_EXCEEDED",
        "ABORTED",
        # Bedrock (ConverseStream's and InvokeModelWithResponseStream's documented errors:
        # "retry your request" for each of these).
        "ThrottlingException",
        "ServiceUnavailableException",
        "InternalServerException",
        "ModelStreamErrorException",
        "ModelNotReadyException",
        "ModelTimeoutException",
    }
)
# Codes that mean "retrying the same request will fail again", even under a 429 status:
# OpenAI answers an exhausted quota or a spend limit with 429 insufficient_quota (the
# code then names which limit), Anthropic a spend limit with 429 rate_limit_error and
# details.error_code enforced_spend_limit_reached.
_PERMANENT_CODES = frozenset(
    {
        "insufficient_quota",
        "credit_balance_exhausted",
        "organization_spend_limit_exceeded",
        "project_spend_limit_exceeded",
        "organization_usage_limit_exceeded",
        "enforced_spend_limit_reached",
        "invalid_request_error",
        "authentication_error",
        "permission_error",
        "not_found_error",
        "invalid_api_key",
        "billing_error",
        "request_too_large",
        "context_length_exceeded",
        "tool_use_failed",
        "INVALID_ARGUMENT",
        "PERMISSION_DENIED",
        "UNAUTHENTICATED",
        "NOT_FOUND",
        # Bedrock: the request, the account or the model is at fault.
        "ValidationException",
        "AccessDeniedException",
        "ResourceNotFoundException",
        "ServiceQuotaExceededException",
        "ModelErrorException",
        "UnrecognizedClientException",
        # AWS's authentication layer: a signature or a token the same request repeats.
        "InvalidSignatureException",
        "IncompleteSignatureException",
        "MissingAuthenticationTokenException",
        "ExpiredTokenException",
        "FAILED_PRECONDITION",
    }
)
# Gemini finish reasons that end a turn as an error. A malformed or unexpected call and
# the catch-all OTHER are a sampling accident worth one more try; SAFETY, RECITATION,
# BLOCKLIST, PROHIBITED_CONTENT, SPII... are the content's fault and come back alike.
_RETRYABLE_FINISH_REASONS = frozenset({"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "OTHER"})

_DEFAULT_MESSAGE = "the provider reported an error"
_SNIPPET_CHARS = 500
"""How much of a body that is not an error object becomes the message, in characters."""


def is_retryable(code: str | None, status: int | None, *, kind: str | None = None) -> bool:
    """Whether an error with this code (and its broader ``kind``) and status is worth
    retrying.

    A permanent code or kind wins (``insufficient_quota`` under a 429), then a transient
    one, then the status: 408, 409 (a lock or conflict on the provider's side, which
    OpenAI's and Anthropic's SDKs retry), 429, 529 and every 5xx.
    """
    if code in _PERMANENT_CODES or kind in _PERMANENT_CODES:
        return False
    if code in _RETRYABLE_CODES or kind in _RETRYABLE_CODES:
        return True
    if status is None:
        return False
    return status in (408, 409, 429, 529) or 500 <= status <= 599


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorObject:
    """What an error object says, in any provider's shape."""

    code: str | None = None
    """The most specific name of the error: OpenAI's ``code`` (``rate_limit_exceeded``),
    Anthropic's spend-limit ``details.error_code``, Google's RPC ``status``
    (``RESOURCE_EXHAUSTED``), else the ``type`` (``overloaded_error``)."""
    kind: str | None = None
    """The broader ``type`` when ``code`` came from another field (OpenAI's ``tokens``
    or ``insufficient_quota`` beside its code), else ``None``."""
    message: str | None = None
    """The human-readable message, when the object has one."""
    status: int | None = None
    """An HTTP status given inside the object (Gemini's numeric ``code``)."""

    @property
    def retryable(self) -> bool:
        """:func:`is_retryable` of this object, with the status it carries."""
        return is_retryable(self.code, self.status, kind=self.kind)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value and value != "error" else None


def _status(value: Any) -> int | None:
    return value if type(value) is int else None


def read_error_object(payload: Any) -> ErrorObject:
    """Read an error object of any of the known shapes (see the module docstring).

    One precedence for the code, most specific first: a string ``code``, a spend
    limit's ``details.error_code``, a string ``status``, then the ``type``
    (``"error"``, the envelope's own type, never counts). Anything that is not an
    error object reads as an empty :class:`ErrorObject`.
    """
    if type(payload) is list and payload:
        # Gemini's streaming endpoint wraps its HTTP error object in a list.
        payload = payload[0]
    if type(payload) is not dict:
        return ErrorObject()
    err = payload.get("error")
    if isinstance(err, str):
        return ErrorObject(message=err or None)
    if type(err) is not dict:
        err = payload
    message = err.get("message")
    if message is None and err is payload:
        message = payload.get("detail")
    details = err.get("details")
    detail_code = _text(details.get("error_code")) if type(details) is dict else None
    kind = _text(err.get("type"))
    code = _text(err.get("code")) or detail_code or _text(err.get("status")) or kind
    return ErrorObject(
        code=code,
        kind=kind if kind != code else None,
        message=message if isinstance(message, str) else None if message is None else str(message),
        status=_status(err.get("status")) or _status(err.get("code")),
    )


def provider_error(
    dialect: str | None,
    message: str,
    *,
    code: str | None = None,
    status: int | None = None,
    body: Any = None,
) -> ProviderError:
    """A :class:`ProviderError` for a code the caller already knows, classified by
    :func:`is_retryable` (Gemini's blocked prompt)."""
    return ProviderError(
        message or code or _DEFAULT_MESSAGE,
        provider=dialect,
        code=code,
        status=status,
        retryable=is_retryable(code, status),
        body=body,
    )


def error_from_payload(
    dialect: str | None,
    payload: Any,
    raw: str,
    *,
    status: int | None = None,
    retryable: bool | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    """The :class:`ProviderError` an error object (or text that is none) stands for.

    ``raw`` is the text it came as: its first 500 characters are the message when the
    object has none. ``status`` is the transport's status (HTTP), which wins over one
    inside the object; ``retryable`` overrides the classification (``x-should-retry``).
    """
    found = read_error_object(payload)
    message = found.message or found.code or raw.strip()[:_SNIPPET_CHARS]
    if not message:
        message = f"HTTP {status}" if status is not None else _DEFAULT_MESSAGE
    status = found.status if status is None else status
    return ProviderError(
        message,
        provider=dialect,
        code=found.code,
        status=status,
        retryable=(
            is_retryable(found.code, status, kind=found.kind) if retryable is None else retryable
        ),
        retry_after=retry_after,
        body=payload if payload is not None else raw,
    )


def parse_error_body(body: bytes) -> tuple[Any, str]:
    """A (bounded) error body as ``(parsed JSON or None, its text)``."""
    text = body.decode("utf-8", "replace")
    try:
        return _json.loads(body), text
    except ValueError:
        return None, text


def finish_reason_error(
    dialect: str | None, reason: str, message: str, *, body: Any = None
) -> ProviderError:
    """The :class:`ProviderError` for a turn a finish reason ended as an error (Gemini's
    SAFETY, MALFORMED_FUNCTION_CALL...), retryable by the finish-reason table."""
    return ProviderError(
        message or reason,
        provider=dialect,
        code=reason,
        retryable=reason in _RETRYABLE_FINISH_REASONS,
        body=body,
    )


def aws_error_code(name: str) -> str:
    """The one code of an AWS error name, however it came: ``x-amzn-ErrorType``'s
    ``ThrottlingException:http://internal.amazon.com/coral/...`` (the part before the
    colon) or an event stream's ``throttlingException`` (the first letter raised), both
    ``ThrottlingException``."""
    # A JSON body's __type may carry a namespace before a hash
    # (com.amazon.coral.service#ExpiredTokenException), as botocore strips it too.
    code = name.split(":", 1)[0].rsplit("#", 1)[-1].strip()
    return code[:1].upper() + code[1:]


def aws_error(
    dialect: str | None,
    name: str,
    body: Any,
    raw: str,
    *,
    status: int | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    """The :class:`ProviderError` of an AWS error: its code from ``name`` (see
    :func:`aws_error_code`), its message from the body's ``message`` (``Message`` in some
    services), else the raw text; retryable by the one table (:func:`is_retryable`)."""
    code = aws_error_code(name) or None
    message = None
    if type(body) is dict:
        found = body.get("message", body.get("Message"))
        message = found if isinstance(found, str) and found else None
    text = message or raw.strip()[:_SNIPPET_CHARS] or code or _DEFAULT_MESSAGE
    return ProviderError(
        text,
        provider=dialect,
        code=code,
        status=status,
        retryable=is_retryable(code, status),
        retry_after=retry_after,
        body=body if body is not None else raw,
    )
