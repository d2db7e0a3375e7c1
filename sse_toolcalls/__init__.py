"""sse_toolcalls: streamed LLM tool calls, reassembled exactly, run safely.

``import sse_toolcalls`` loads no submodule: each public name is looked up on first use
(PEP 562), so a program pays for the framer, the parser, the tools layer (jsonschema), the
async edge (httpx, anyio) or the simulator (uvicorn) only when it uses them, and
``from sse_toolcalls import SSEFramer`` loads the framer and its errors and nothing else.

``_EXPORTS`` below is the one list of public names: ``__all__``, ``__dir__`` and the lazy
lookup are derived from it. Type checkers cannot run it, so the ``TYPE_CHECKING`` block
repeats it as imports (``X as X`` marks a re-export under mypy's and pyright's strict
rules); ``tests/test_public_api.py`` holds the two equal, name for name.
"""

import sys as _sys

# Not typing.TYPE_CHECKING: typing (with re, enum, functools, contextlib) is 41 M of the
# interpreter's instructions to import (callgrind, issue 16), more than the whole of the
# package's own import; mypy and pyright read any name TYPE_CHECKING as true.
TYPE_CHECKING = False

# Each public name once, under the module that defines it; only these modules may hold
# classes whose ``__module__`` says "sse_toolcalls".
_EXPORTS: dict[str, tuple[str, ...]] = {
    "calls": (
        "DIALECTS",
        "Dialect",
        "Document",
        "Image",
        "MediaPart",
        "PartialToolCall",
        "ReasoningBlock",
        "ReasoningCompleted",
        "ReasoningDelta",
        "StreamEvent",
        "StreamFinished",
        "TextDelta",
        "ToolCall",
        "ToolCallArgumentsDelta",
        "ToolCallCompleted",
        "ToolCallStarted",
        "ToolResult",
        "ToolSpec",
        "as_dialect",
    ),
    "errors": (
        "ApprovalStateError",
        "CircuitOpenError",
        "ConversationStoreError",
        "EventTooLargeError",
        "FramingError",
        "InvalidArgumentsError",
        "LedgerError",
        "LimitExceededError",
        "MalformedStreamError",
        "ProviderError",
        "SSEToolCallsError",
        "SandboxDeclarationError",
        "SandboxUnavailableError",
        "SandboxViolationError",
        "StreamError",
        "StreamTimeoutError",
        "ToolError",
        "ToolErrorReply",
        "ToolExecutionError",
        "ToolRetry",
        "ToolTimeoutError",
        "TruncatedStreamError",
        "UnknownDialectError",
        "UnknownToolError",
        "UsageError",
    ),
    "parser": ("StreamParser", "ToolCallParser"),
    "sse": ("SSEFramer", "ServerSentEvent"),
    "conversation": (
        "AssistantMessage",
        "Conversation",
        "Message",
        "SystemPrompt",
        "ToolResultsMessage",
        "UserMessage",
    ),
    "messages": ("assistant_turn", "build_request", "format_results", "tool_declarations"),
    "crossing": ("carry_over",),
    "naming": ("ToolNameMap", "is_legal_name"),
    "runtime": (
        "Agent",
        "AgentEvent",
        "AgentReply",
        "AgentStream",
        "ApprovalContext",
        "ApprovalRequested",
        "ApprovalState",
        "CallReport",
        "CircuitBreaker",
        "ConversationStore",
        "Deny",
        "Diagnostic",
        "Dispatcher",
        "FallbackShown",
        "IdempotencyLedger",
        "InMemoryConversationStore",
        "InMemoryLedger",
        "PostgresConversationStore",
        "PostgresLedger",
        "RequestStarted",
        "RetryPolicy",
        "RetryScheduled",
        "RunFinished",
        "SQLiteConversationStore",
        "SQLiteLedger",
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
        "fallback_message",
        "iter_events",
        "iter_tool_calls",
        "parse_events",
        "parse_tool_calls",
        "provider_error_from_http",
        "provider_error_from_sdk",
        "translate_sdk_errors",
    ),
    "runtime.failover": ("FallbackClient",),
    "runtime.clients": (
        "AnthropicClient",
        "GeminiClient",
        "OpenAIChatClient",
        "OpenAIResponsesClient",
        "ProviderClient",
        "client_for",
    ),
    "runtime.tracing": ("Tracing",),
    "sandbox": (
        "HandlerRef",
        "Sandbox",
        "SandboxResult",
        "Violation",
        "ViolationKind",
        "run_in_sandbox",
    ),
    "simulator": ("Script", "ScriptedCall", "Simulator", "Turn"),
    "tools": (
        "Coercion",
        "Effect",
        "Problem",
        "Tool",
        "ToolContext",
        "ToolRegistry",
        "ValidatedCall",
    ),
}

_HOME = {name: module for module, names in _EXPORTS.items() for name in names}
"""Each public name's defining module, for the lookup on first use."""

if not TYPE_CHECKING:
    # Hidden from type checkers: mypy gives "from sse_toolcalls import *" nothing for an
    # __all__ it cannot read, and without one it takes the "X as X" names, the same list.
    __all__ = sorted(_HOME)  # noqa: PLE0605


def _adopt(module: str) -> None:
    """Load the public names of ``module`` (its full dotted name) into the package, and give
    each of its public classes the import path users write, so that reprs, tracebacks and
    pickles say ``sse_toolcalls.ToolCall``.

    Called on first use of a name, and by each defining module itself as its last line,
    so the path does not depend on what was imported first.
    """
    # __import__ and sys.modules, not importlib.import_module: importlib (with warnings) was
    # 1.6 M instructions of the 2.6 M that "import sse_toolcalls" took (callgrind).
    __import__(module)
    source = _sys.modules[module]
    namespace = globals()
    for name in _EXPORTS[module.removeprefix(f"{__name__}.")]:
        value = getattr(source, name)
        if isinstance(value, type) and value.__module__ != __name__:
            _resolve_annotations(value)
            value.__module__ = __name__
        namespace[name] = value


def _resolve_annotations(cls: type) -> None:
    # typing.get_type_hints (and pydantic, cattrs...) evaluate a class's string annotations
    # in the module named by its __module__, where "Any" or "CallOutcome" are not defined:
    # so they are evaluated here, in the defining module, before __module__ changes.
    # A name only imported under TYPE_CHECKING cannot be evaluated: such a class keeps its
    # strings (tests/test_public_api.py checks that no public class is left so).
    # The class's own dict, not inspect.get_annotations: inspect (with ast, dis and
    # tokenize) is 66 M instructions to import (callgrind, issue 16), for a dict lookup.
    own = vars(cls).get("__annotations__")
    if own and any(isinstance(value, str) for value in own.values()):
        import typing  # every module with string annotations has imported it already

        try:
            hints = typing.get_type_hints(cls, include_extras=True)
        except NameError:
            return
        cls.__annotations__ = {name: hints[name] for name in own}


if not TYPE_CHECKING:
    # Hidden from type checkers, which see the names in the TYPE_CHECKING block below: a
    # visible module __getattr__ would make them accept any misspelt name.
    def __getattr__(name: str) -> object:
        module = _HOME.get(name)
        if module is None:
            # name= without obj=: the interpreter then adds no suggestion of its own
            # (3.11 prints one only at the top level, never in traceback.format_*).
            raise AttributeError(_no_such_name(name), name=name)
        _adopt(f"{__name__}.{module}")
        return globals()[name]


def _no_such_name(name: str) -> str:
    message = f"module {__name__!r} has no attribute {name!r}"
    if name.startswith("_") or _is_submodule(name):
        # The import system asks for every submodule ("from sse_toolcalls import sse",
        # "from . import _sse_c") before it loads it, and copy, pickle and doctest probe
        # dunders: no user misspelt those, and difflib would load for nothing.
        return message
    import difflib  # only on this error path

    close = difflib.get_close_matches(name, _HOME, n=1)
    return f"{message}. Did you mean: {close[0]!r}?" if close else message


def _is_submodule(name: str) -> bool:
    import os  # loaded with the interpreter already

    return any(
        os.path.exists(os.path.join(folder, name + ending))
        for folder in __path__
        for ending in ("", ".py")
    )


def __dir__() -> list[str]:
    # The lazy names are listed before they are loaded, so completion and help() see them.
    return sorted({*globals(), *_HOME})


if TYPE_CHECKING:
    from .calls import DIALECTS as DIALECTS
    from .calls import Dialect as Dialect
    from .calls import Document as Document
    from .calls import Image as Image
    from .calls import MediaPart as MediaPart
    from .calls import PartialToolCall as PartialToolCall
    from .calls import ReasoningBlock as ReasoningBlock
    from .calls import ReasoningCompleted as ReasoningCompleted
    from .calls import ReasoningDelta as ReasoningDelta
    from .calls import StreamEvent as StreamEvent
    from .calls import StreamFinished as StreamFinished
    from .calls import TextDelta as TextDelta
    from .calls import ToolCall as ToolCall
    from .calls import ToolCallArgumentsDelta as ToolCallArgumentsDelta
    from .calls import ToolCallCompleted as ToolCallCompleted
    from .calls import ToolCallStarted as ToolCallStarted
    from .calls import ToolResult as ToolResult
    from .calls import ToolSpec as ToolSpec
    from .calls import as_dialect as as_dialect
    from .conversation import AssistantMessage as AssistantMessage
    from .conversation import Conversation as Conversation
    from .conversation import Message as Message
    from .conversation import SystemPrompt as SystemPrompt
    from .conversation import ToolResultsMessage as ToolResultsMessage
    from .conversation import UserMessage as UserMessage
    from .crossing import carry_over as carry_over
    from .errors import ApprovalStateError as ApprovalStateError
    from .errors import CircuitOpenError as CircuitOpenError
    from .errors import ConversationStoreError as ConversationStoreError
    from .errors import EventTooLargeError as EventTooLargeError
    from .errors import FramingError as FramingError
    from .errors import InvalidArgumentsError as InvalidArgumentsError
    from .errors import LedgerError as LedgerError
    from .errors import LimitExceededError as LimitExceededError
    from .errors import MalformedStreamError as MalformedStreamError
    from .errors import ProviderError as ProviderError
    from .errors import SandboxDeclarationError as SandboxDeclarationError
    from .errors import SandboxUnavailableError as SandboxUnavailableError
    from .errors import SandboxViolationError as SandboxViolationError
    from .errors import SSEToolCallsError as SSEToolCallsError
    from .errors import StreamError as StreamError
    from .errors import StreamTimeoutError as StreamTimeoutError
    from .errors import ToolError as ToolError
    from .errors import ToolErrorReply as ToolErrorReply
    from .errors import ToolExecutionError as ToolExecutionError
    from .errors import ToolRetry as ToolRetry
    from .errors import ToolTimeoutError as ToolTimeoutError
    from .errors import TruncatedStreamError as TruncatedStreamError
    from .errors import UnknownDialectError as UnknownDialectError
    from .errors import UnknownToolError as UnknownToolError
    from .errors import UsageError as UsageError
    from .messages import assistant_turn as assistant_turn
    from .messages import build_request as build_request
    from .messages import format_results as format_results
    from .messages import tool_declarations as tool_declarations
    from .naming import ToolNameMap as ToolNameMap
    from .naming import is_legal_name as is_legal_name
    from .parser import StreamParser as StreamParser
    from .parser import ToolCallParser as ToolCallParser
    from .runtime import Agent as Agent
    from .runtime import AgentEvent as AgentEvent
    from .runtime import AgentReply as AgentReply
    from .runtime import AgentStream as AgentStream
    from .runtime import ApprovalContext as ApprovalContext
    from .runtime import ApprovalRequested as ApprovalRequested
    from .runtime import ApprovalState as ApprovalState
    from .runtime import CallReport as CallReport
    from .runtime import CircuitBreaker as CircuitBreaker
    from .runtime import ConversationStore as ConversationStore
    from .runtime import Deny as Deny
    from .runtime import Diagnostic as Diagnostic
    from .runtime import Dispatcher as Dispatcher
    from .runtime import FallbackShown as FallbackShown
    from .runtime import IdempotencyLedger as IdempotencyLedger
    from .runtime import InMemoryConversationStore as InMemoryConversationStore
    from .runtime import InMemoryLedger as InMemoryLedger
    from .runtime import PostgresConversationStore as PostgresConversationStore
    from .runtime import PostgresLedger as PostgresLedger
    from .runtime import RequestStarted as RequestStarted
    from .runtime import RetryPolicy as RetryPolicy
    from .runtime import RetryScheduled as RetryScheduled
    from .runtime import RunFinished as RunFinished
    from .runtime import SQLiteConversationStore as SQLiteConversationStore
    from .runtime import SQLiteLedger as SQLiteLedger
    from .runtime import SyncLedgerAdapter as SyncLedgerAdapter
    from .runtime import ToolArgumentsPreview as ToolArgumentsPreview
    from .runtime import ToolCallRefused as ToolCallRefused
    from .runtime import ToolCallResult as ToolCallResult
    from .runtime import Usage as Usage
    from .runtime import aiter_events as aiter_events
    from .runtime import aiter_events_from_sse as aiter_events_from_sse
    from .runtime import aiter_tool_calls as aiter_tool_calls
    from .runtime import aiter_tool_calls_from_sse as aiter_tool_calls_from_sse
    from .runtime import aparse_events as aparse_events
    from .runtime import aparse_tool_calls as aparse_tool_calls
    from .runtime import approval_id as approval_id
    from .runtime import fallback_message as fallback_message
    from .runtime import iter_events as iter_events
    from .runtime import iter_tool_calls as iter_tool_calls
    from .runtime import parse_events as parse_events
    from .runtime import parse_tool_calls as parse_tool_calls
    from .runtime import provider_error_from_http as provider_error_from_http
    from .runtime import provider_error_from_sdk as provider_error_from_sdk
    from .runtime import translate_sdk_errors as translate_sdk_errors
    from .runtime.clients import AnthropicClient as AnthropicClient
    from .runtime.clients import GeminiClient as GeminiClient
    from .runtime.clients import OpenAIChatClient as OpenAIChatClient
    from .runtime.clients import OpenAIResponsesClient as OpenAIResponsesClient
    from .runtime.clients import ProviderClient as ProviderClient
    from .runtime.clients import client_for as client_for
    from .runtime.failover import FallbackClient as FallbackClient
    from .runtime.tracing import Tracing as Tracing
    from .sandbox import HandlerRef as HandlerRef
    from .sandbox import Sandbox as Sandbox
    from .sandbox import SandboxResult as SandboxResult
    from .sandbox import Violation as Violation
    from .sandbox import ViolationKind as ViolationKind
    from .sandbox import run_in_sandbox as run_in_sandbox
    from .simulator import Script as Script
    from .simulator import ScriptedCall as ScriptedCall
    from .simulator import Simulator as Simulator
    from .simulator import Turn as Turn
    from .sse import ServerSentEvent as ServerSentEvent
    from .sse import SSEFramer as SSEFramer
    from .tools import Coercion as Coercion
    from .tools import Effect as Effect
    from .tools import Problem as Problem
    from .tools import Tool as Tool
    from .tools import ToolContext as ToolContext
    from .tools import ToolRegistry as ToolRegistry
    from .tools import ValidatedCall as ValidatedCall

del TYPE_CHECKING  # not a public name of the package
