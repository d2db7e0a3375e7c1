"""HTTP error answers to :class:`ProviderError`: what is HTTP about them.

Pure functions (the clock is a parameter), so the edge, the clients and the tests share
them. This module reads the status, ``Retry-After``, ``retry-after-ms``,
``x-should-retry`` and bounds the body; the error object inside the body is read by the
core's one reader (:mod:`sse_toolcalls.provider_errors`), which streams use too.
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Mapping

from ..errors import ProviderError
from ..provider_errors import error_from_payload, is_retryable, parse_error_body

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


def parse_retry_after(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """Seconds the server asked us to wait, or ``None`` when it did not say (validly).

    ``retry-after-ms`` (OpenAI, Anthropic) wins over ``Retry-After``, which is either
    delta-seconds or an HTTP-date (RFC 9110 section 10.2.3). A date in the past gives 0.
    ``now`` is the current time in seconds since the epoch (default: the system clock).
    """
    millis = header(headers, "retry-after-ms")
    if millis is not None:
        try:
            value = float(millis)
        except ValueError:
            value = -1.0
        if math.isfinite(value) and value >= 0:
            return value / 1000.0
    raw = header(headers, "retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        seconds = float(raw)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


def is_retryable_status(status: int) -> bool:
    """True for statuses worth retrying after a wait (408, 409, 429, every 5xx incl. 529).

    The rule is the core's own (:func:`sse_toolcalls.provider_errors.is_retryable`),
    so an error event in a stream and an HTTP error status are classified alike.
    """
    return is_retryable(None, status)


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
    (OpenAI, Anthropic) overrides the status-based classification.
    """
    parsed, text = parse_error_body(body[:MAX_ERROR_BODY_BYTES])
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
    "header",
    "is_retryable_status",
    "parse_retry_after",
    "provider_error_from_http",
]
