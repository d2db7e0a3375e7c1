"""The async edge and the runtime: HTTP streaming, provider error mapping, provider
clients, dispatch of calls, policies (retry, circuit breaker, idempotency ledger),
fallback messages and diagnostics, the one executor of tool handlers
(``execute``), and the one conversation loop (``Agent``).

Depends on anyio, and on an HTTP client (httpx2 or httpx) only where a client is made;
the core (``sse``, ``parser``, ``dialects``) imports neither.
"""

from __future__ import annotations

from .. import _adopt
from .agent import DEFAULT_MAX_STEPS, Agent, AgentReply, AgentStream, StreamingClient
from .approval import (
    ApprovalContext,
    ApprovalPolicy,
    ApprovalState,
    Decision,
    Deny,
    approval_id,
    call_digest,
)
from .breaker import CircuitBreaker, CircuitStatus
from .diagnostics import Diagnostic
from .dispatch import CallOutcome, CallReport, Dispatcher
from .edge import (
    TIMEOUT_CODE,
    AsyncByteResponse,
    SSELike,
    SyncByteResponse,
    aiter_events,
    aiter_events_from_sse,
    aiter_tool_calls,
    aiter_tool_calls_from_sse,
    aparse_events,
    aparse_tool_calls,
    iter_events,
    iter_tool_calls,
    parse_events,
    parse_tool_calls,
)
from .events import (
    AgentEvent,
    ApprovalRequested,
    FallbackShown,
    RequestStarted,
    RetryScheduled,
    RunFinished,
    ToolArgumentsPreview,
    ToolCallRefused,
    ToolCallResult,
)
from .execute import Executor, run_local, run_sandboxed
from .fallback import FallbackReason, fallback_message
from .http_errors import is_retryable_status, parse_retry_after, provider_error_from_http
from .ledger import (
    IdempotencyLedger,
    InMemoryLedger,
    LedgerEntry,
    LedgerError,
    SQLiteLedger,
    SyncLedgerAdapter,
    idempotency_key,
)
from .partial_json import PartialJSON
from .postgres import PostgresConversationStore, PostgresLedger
from .retry import RetryPolicy, is_transient
from .sdk_errors import provider_error_from_sdk, translate_sdk_errors
from .store import (
    ConversationStore,
    Exchange,
    InMemoryConversationStore,
    SQLiteConversationStore,
)
from .usage import Usage, usage_of

__all__ = [
    "DEFAULT_MAX_STEPS",
    "TIMEOUT_CODE",
    "Agent",
    "AgentEvent",
    "AgentReply",
    "AgentStream",
    "ApprovalContext",
    "ApprovalPolicy",
    "ApprovalRequested",
    "ApprovalState",
    "AsyncByteResponse",
    "CallOutcome",
    "CallReport",
    "CircuitBreaker",
    "CircuitStatus",
    "ConversationStore",
    "Decision",
    "Deny",
    "Diagnostic",
    "Dispatcher",
    "Exchange",
    "Executor",
    "FallbackReason",
    "FallbackShown",
    "IdempotencyLedger",
    "InMemoryConversationStore",
    "InMemoryLedger",
    "LedgerEntry",
    "LedgerError",
    "PartialJSON",
    "PostgresConversationStore",
    "PostgresLedger",
    "RequestStarted",
    "RetryPolicy",
    "RetryScheduled",
    "RunFinished",
    "SQLiteConversationStore",
    "SQLiteLedger",
    "SSELike",
    "StreamingClient",
    "SyncByteResponse",
    "SyncLedgerAdapter",
    "ToolArgumentsPreview",
    "ToolCallRefused",
    "ToolCallResult",
    "Usage",
    "aiter_events",
    "aiter_events_from_sse",
    "aiter_tool_calls",
    "aiter_tool_calls_from_sse",
    "aparse_events",
    "aparse_tool_calls",
    "approval_id",
    "call_digest",
    "fallback_message",
    "idempotency_key",
    "is_retryable_status",
    "is_transient",
    "iter_events",
    "iter_tool_calls",
    "parse_events",
    "parse_retry_after",
    "parse_tool_calls",
    "provider_error_from_http",
    "provider_error_from_sdk",
    "run_local",
    "run_sandboxed",
    "translate_sdk_errors",
    "usage_of",
]

# Last, once the classes exist: they take the path users import them from (see the root).
_adopt(__name__)
