"""HTTP error answers to :class:`ProviderError`: what is HTTP about them.

Pure functions (the clock is a parameter), so the edge, the clients and the tests share
them. This module reads the status, ``Retry-After``, ``retry-after-ms``,
``x-should-retry``, AWS's ``x-amzn-ErrorType``, and bounds the body; the error object
inside the body is read by the core's one reader (:mod:`sse_toolcalls.provider_errors`),
which streams use too.
"""

from __future__ import annotations

import email.utils
import math
import re
import time
from collections.abc import Mapping

from ..errors import ProviderError
from ..provider_errors import aws_error, error_from_payload, is_retryable, parse_error_body

MAX_ERROR_BODY_BYTES = 64 * 1024
"""How much of an error body is read, in bytes: real error bodies are well under 2 KiB;
anything longer is not an error object, and we never buffer an unbounded body to report
a failure."""


def header(headers: Mapping[str, str] | None, name: str) -> str | None:
    """The value of header ``name``, looked up case-insensitively, or ``None``."""
    if headers is None:
        return None
    value = headers.get(name)
    if value is not None:
        return value
    lowered = name.lower()
    for key, candidate in headers.items():
        if key.lower() == lowered:
            return candidate
    return None


MAX_RETRY_AFTER = 86_400.0
"""Largest wait a ``Retry-After`` / ``retry-after-ms`` header can ask for, in seconds (one
day): longer than any provider's real hint (rate-limit windows are seconds to minutes;
a daily quota resets within a day), so a hostile or broken header (``1e308``, a date in
the year 9999) still reads as "wait long", but as a finite, usable number. What the
retry loop actually waits is capped again by ``RetryPolicy.max_retry_after``."""

# RFC 9110 section 10.2.3: delta-seconds = 1*DIGIT. A fraction is accepted as well, as
# the SDKs do for retry-after-ms ("1500.5"); signs, exponents, "_" and "inf" are not.
_DELTA = re.compile(r"[0-9]+(?:\.[0-9]+)?", re.ASCII)


def _delta(text: str, unit: float) -> float | None:
    """Seconds of a delta in ``unit`` seconds, clamped to ``MAX_RETRY_AFTER``; ``None``
    when the text is not a delta."""
    text = text.strip()
    if not _DELTA.fullmatch(text):
        return None
    # float() of a digit string is linear and turns 5,000 digits into inf, never an
    # error; the clamp keeps it finite.
    return min(float(text) * unit, MAX_RETRY_AFTER)


def parse_retry_after(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """Seconds the server asked us to wait, or ``None`` when it did not say (validly).

    ``retry-after-ms`` (OpenAI, Anthropic) wins over ``Retry-After``, which is either
    delta-seconds or an HTTP-date (RFC 9110 section 10.2.3). A date in the past gives 0.
    ``now`` is the current time in seconds since the epoch (default: the system clock).

    Returns:
        ``None``, or a finite number of seconds from 0 to :data:`MAX_RETRY_AFTER`
        (a longer wait asked for reads as the maximum).
    """
    millis = header(headers, "retry-after-ms")
    if millis is not None:
        value = _delta(millis, 0.001)
        if value is not None:
            return value
    raw = header(headers, "retry-after")
    if raw is None:
        return None
    seconds = _delta(raw, 1.0)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(raw.strip())
        if when.tzinfo is None:
            return None
        stamp = when.timestamp()
    except (TypeError, ValueError, OverflowError, IndexError):
        return None
    current = time.time() if now is None else now
    wait = stamp - current
    if not math.isfinite(wait):  # pragma: no cover - timestamps of valid dates are finite
        return None
    return min(max(0.0, wait), MAX_RETRY_AFTER)


def is_retryable_status(status: int) -> bool:
    """True for statuses worth retrying after a wait (408, 409, 429, every 5xx incl. 529).

    The rule is the core's own (:func:`sse_toolcalls.provider_errors.is_retryable`),
    so an error event in a stream and an HTTP error status are classified alike.
    """
    return is_retryable(None, status)


def _aws_code(headers: Mapping[str, str] | None, parsed: object) -> str | None:
    """The AWS error name of an answer, or ``None`` when it is no AWS error."""
    named = header(headers, "x-amzn-errortype")
    if named is not None and named.strip():
        return named
    if type(parsed) is dict:
        kind = parsed.get("__type")
        if isinstance(kind, str) and kind.strip():
            return kind
    return None


def provider_error_from_http(
    status: int,
    body: bytes,
    headers: Mapping[str, str] | None = None,
    *,
    provider: str | None,
    now: float | None = None,
) -> ProviderError:
    """The :class:`ProviderError` for an HTTP error answer.

    ``body`` is the (possibly truncated) response body; it is parsed as JSON when it can
    be, else its text (at most 500 characters) becomes the message. ``x-should-retry``
    (OpenAI, Anthropic) overrides the status-based classification. An AWS error
    (``x-amzn-ErrorType``, or a body's ``__type``) is read by
    :func:`~sse_toolcalls.provider_errors.aws_error`: its code is the error's name
    (``ThrottlingException``), retryable by AWS's table.
    """
    parsed, text = parse_error_body(body[:MAX_ERROR_BODY_BYTES])
    aws_code = _aws_code(headers, parsed)
    if aws_code is not None:
        # AWS names the error beside the object, not in it (restJson: the header, else
        # the body's __type, which botocore reads too); the object is {"message": ...}.
        return aws_error(
            provider,
            aws_code,
            parsed,
            text,
            status=status,
            retry_after=parse_retry_after(headers, now=now),
        )
    # One reader for in-stream and HTTP errors (sse_toolcalls.provider_errors): the code
    # decides when it is known (insufficient_quota under a 429 is permanent), the status
    # otherwise; x-should-retry, an HTTP fact, overrides both.
    retryable = None
    should_retry = header(headers, "x-should-retry")
    if should_retry is not None and should_retry.strip().lower() in {"true", "false"}:
        retryable = should_retry.strip().lower() == "true"
    return error_from_payload(
        provider,
        parsed,
        text,
        status=status,
        retryable=retryable,
        retry_after=parse_retry_after(headers, now=now),
    )


__all__ = [
    "MAX_ERROR_BODY_BYTES",
    "MAX_RETRY_AFTER",
    "header",
    "is_retryable_status",
    "parse_retry_after",
    "provider_error_from_http",
]
