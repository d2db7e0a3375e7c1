"""The async edge: HTTP streaming, provider error mapping, provider clients, the loop.

Depends on httpx and anyio; the core (``sse``, ``parser``, ``dialects``) never imports it.
"""

from __future__ import annotations

from .edge import (
    TIMEOUT_CODE,
    AsyncByteResponse,
    SSELike,
    SyncByteResponse,
    aiter_events,
    aiter_events_from_sse,
    aiter_tool_calls,
    aiter_tool_calls_from_sse,
    iter_events,
    iter_tool_calls,
)
from .http_errors import is_retryable_status, parse_retry_after, provider_error_from_http

__all__ = [
    "TIMEOUT_CODE",
    "AsyncByteResponse",
    "SSELike",
    "SyncByteResponse",
    "aiter_events",
    "aiter_events_from_sse",
    "aiter_tool_calls",
    "aiter_tool_calls_from_sse",
    "is_retryable_status",
    "iter_events",
    "iter_tool_calls",
    "parse_retry_after",
    "provider_error_from_http",
]
