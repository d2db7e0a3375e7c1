"""sse_toolcalls: streamed LLM tool calls, reassembled exactly, run safely.

The sans-I/O core (framer, parser, dialects) is imported here; result formatting, the
tools layer (jsonschema), the async edge (httpx, anyio) and the simulator (uvicorn) are
re-exported lazily, so ``import sse_toolcalls`` stays fast and light.
"""

from typing import TYPE_CHECKING, Any

from .calls import (
    DIALECTS,
    Dialect,
    PartialToolCall,
    ReasoningDelta,
    StreamEvent,
    StreamFinished,
    TextDelta,
    ToolCall,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolResult,
    ToolSpec,
)
from .errors import (
    CircuitOpenError,
    EventTooLargeError,
    FramingError,
    InvalidArgumentsError,
    LedgerError,
    LimitExceededError,
    MalformedStreamError,
    ProviderError,
    SSEToolCallsError,
    StreamError,
    StreamTimeoutError,
    ToolError,
    ToolExecutionError,
    ToolTimeoutError,
    TruncatedStreamError,
    UnknownToolError,
    UsageError,
)
from .parser import StreamParser, ToolCallParser
from .sse import ServerSentEvent, SSEFramer

if TYPE_CHECKING:
    from .conversation import (
        AssistantMessage,
        Conversation,
        Message,
        SystemPrompt,
        ToolResultsMessage,
        UserMessage,
    )
    from .messages import assistant_turn, build_request, format_results, tool_declarations
    from .naming import ToolNameMap, is_legal_name
    from .runtime import (
        Agent,
        AgentReply,
        CallReport,
        CircuitBreaker,
        Diagnostic,
        Dispatcher,
        IdempotencyLedger,
        InMemoryLedger,
        RetryPolicy,
        SQLiteLedger,
        aiter_events,
        aiter_events_from_sse,
        aiter_tool_calls,
        aiter_tool_calls_from_sse,
        fallback_message,
        iter_events,
        iter_tool_calls,
        provider_error_from_http,
    )
    from .runtime.clients import (
        AnthropicClient,
        GeminiClient,
        OpenAIChatClient,
        OpenAIResponsesClient,
        ProviderClient,
        client_for,
    )
    from .runtime.loop import LoopOutcome, run_conversation
    from .simulator import Script, ScriptedCall, Simulator, Turn
    from .tools import Coercion, Effect, Problem, Tool, ToolRegistry, ValidatedCall

_LAZY = {
    "Agent": "runtime",
    "AgentReply": "runtime",
    "Dispatcher": "runtime",
    "CallReport": "runtime",
    "CircuitBreaker": "runtime",
    "RetryPolicy": "runtime",
    "SQLiteLedger": "runtime",
    "InMemoryLedger": "runtime",
    "IdempotencyLedger": "runtime",
    "Diagnostic": "runtime",
    "fallback_message": "runtime",
    "AssistantMessage": "conversation",
    "Conversation": "conversation",
    "Message": "conversation",
    "SystemPrompt": "conversation",
    "ToolResultsMessage": "conversation",
    "UserMessage": "conversation",
    "assistant_turn": "messages",
    "build_request": "messages",
    "format_results": "messages",
    "tool_declarations": "messages",
    "ToolNameMap": "naming",
    "is_legal_name": "naming",
    "aiter_events": "runtime",
    "aiter_events_from_sse": "runtime",
    "aiter_tool_calls": "runtime",
    "aiter_tool_calls_from_sse": "runtime",
    "iter_events": "runtime",
    "iter_tool_calls": "runtime",
    "provider_error_from_http": "runtime",
    "AnthropicClient": "runtime.clients",
    "GeminiClient": "runtime.clients",
    "OpenAIChatClient": "runtime.clients",
    "OpenAIResponsesClient": "runtime.clients",
    "ProviderClient": "runtime.clients",
    "client_for": "runtime.clients",
    "LoopOutcome": "runtime.loop",
    "run_conversation": "runtime.loop",
    "Script": "simulator",
    "ScriptedCall": "simulator",
    "Simulator": "simulator",
    "Turn": "simulator",
    "Coercion": "tools",
    "Effect": "tools",
    "Problem": "tools",
    "Tool": "tools",
    "ToolRegistry": "tools",
    "ValidatedCall": "tools",
}
"""Names re-exported on first use, with the submodule that defines them."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'sse_toolcalls' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "Agent",
    "AgentReply",
    "AnthropicClient",
    "AssistantMessage",
    "CallReport",
    "CircuitBreaker",
    "CircuitOpenError",
    "Coercion",
    "Conversation",
    "DIALECTS",
    "Diagnostic",
    "Dialect",
    "Dispatcher",
    "Effect",
    "EventTooLargeError",
    "FramingError",
    "GeminiClient",
    "IdempotencyLedger",
    "InMemoryLedger",
    "InvalidArgumentsError",
    "LedgerError",
    "LimitExceededError",
    "LoopOutcome",
    "MalformedStreamError",
    "Message",
    "OpenAIChatClient",
    "OpenAIResponsesClient",
    "PartialToolCall",
    "Problem",
    "ProviderClient",
    "ProviderError",
    "ReasoningDelta",
    "RetryPolicy",
    "SQLiteLedger",
    "SSEFramer",
    "SSEToolCallsError",
    "Script",
    "ScriptedCall",
    "ServerSentEvent",
    "Simulator",
    "StreamError",
    "StreamEvent",
    "StreamFinished",
    "StreamParser",
    "StreamTimeoutError",
    "SystemPrompt",
    "TextDelta",
    "Tool",
    "ToolCall",
    "ToolCallArgumentsDelta",
    "ToolCallCompleted",
    "ToolCallParser",
    "ToolCallStarted",
    "ToolError",
    "ToolExecutionError",
    "ToolNameMap",
    "ToolRegistry",
    "ToolResult",
    "ToolResultsMessage",
    "ToolSpec",
    "ToolTimeoutError",
    "TruncatedStreamError",
    "Turn",
    "UnknownToolError",
    "UsageError",
    "UserMessage",
    "ValidatedCall",
    "aiter_events",
    "aiter_events_from_sse",
    "aiter_tool_calls",
    "aiter_tool_calls_from_sse",
    "assistant_turn",
    "build_request",
    "client_for",
    "fallback_message",
    "format_results",
    "is_legal_name",
    "iter_events",
    "iter_tool_calls",
    "provider_error_from_http",
    "run_conversation",
    "tool_declarations",
]
