"""The agent runtime: tools and their validation, the one conversation loop (``Agent``),
dispatch of calls, policies (retry, circuit breaker, idempotency ledger, approvals),
conversation stores, provider clients, fallback messages, diagnostics and tracing; the
sandbox (:mod:`sse_toolcalls.runtime.sandbox`) and MCP (:mod:`sse_toolcalls.runtime.mcp`)
are its subpackages.

It builds on the wire core (the root package) and never on the tooling. Depends on
anyio, jsonschema, and an HTTP client (httpx2 or httpx) only where a client is made.
Its face is lazy, as the root's is: ``from sse_toolcalls.runtime import ToolRetry``
loads the exceptions and nothing else (a sandboxed handler pays for no more).
"""

from .. import _moved
from .._faces import Face as _Face

# See the root: typing is not imported for this flag.
TYPE_CHECKING = False

_FACE = _Face(__name__, globals(), __path__, moved=_moved.RUNTIME_NAMES)

if not TYPE_CHECKING:
    __all__ = _FACE.all()  # noqa: PLE0605

    def __getattr__(name: str) -> object:
        return _FACE.getattr(name)


def __dir__() -> list[str]:
    return _FACE.dir()


if TYPE_CHECKING:
    from .agent import Agent as Agent
    from .agent import AgentStream as AgentStream
    from .approval import ApprovalContext as ApprovalContext
    from .approval import ApprovalState as ApprovalState
    from .approval import Deny as Deny
    from .approval import approval_id as approval_id
    from .breaker import CircuitBreaker as CircuitBreaker
    from .clients import AnthropicClient as AnthropicClient
    from .clients import BedrockAnthropicClient as BedrockAnthropicClient
    from .clients import BedrockClient as BedrockClient
    from .clients import GeminiClient as GeminiClient
    from .clients import OpenAIChatClient as OpenAIChatClient
    from .clients import OpenAIResponsesClient as OpenAIResponsesClient
    from .clients import ProviderClient as ProviderClient
    from .clients import client_for as client_for
    from .diagnostics import Diagnostic as Diagnostic
    from .dispatch import Dispatcher as Dispatcher
    from .errors import ApprovalStateError as ApprovalStateError
    from .errors import CircuitOpenError as CircuitOpenError
    from .errors import ConversationStoreError as ConversationStoreError
    from .errors import InvalidArgumentsError as InvalidArgumentsError
    from .errors import LedgerError as LedgerError
    from .errors import SandboxDeclarationError as SandboxDeclarationError
    from .errors import SandboxUnavailableError as SandboxUnavailableError
    from .errors import SandboxViolationError as SandboxViolationError
    from .errors import ToolError as ToolError
    from .errors import ToolErrorReply as ToolErrorReply
    from .errors import ToolExecutionError as ToolExecutionError
    from .errors import ToolRetry as ToolRetry
    from .errors import ToolTimeoutError as ToolTimeoutError
    from .errors import UnknownToolError as UnknownToolError
    from .events import AgentEvent as AgentEvent
    from .events import ApprovalRequested as ApprovalRequested
    from .events import FallbackShown as FallbackShown
    from .events import RequestStarted as RequestStarted
    from .events import RetryScheduled as RetryScheduled
    from .events import RunFinished as RunFinished
    from .events import ToolArgumentsPreview as ToolArgumentsPreview
    from .events import ToolCallRefused as ToolCallRefused
    from .events import ToolCallResult as ToolCallResult
    from .failover import FallbackClient as FallbackClient
    from .fallback import fallback_message as fallback_message
    from .ledgers.base import IdempotencyLedger as IdempotencyLedger
    from .ledgers.base import SyncLedgerAdapter as SyncLedgerAdapter
    from .ledgers.memory import InMemoryLedger as InMemoryLedger
    from .ledgers.postgres import PostgresLedger as PostgresLedger
    from .ledgers.sqlite import SQLiteLedger as SQLiteLedger
    from .reply import AgentReply as AgentReply
    from .report import CallReport as CallReport
    from .retry import RetryPolicy as RetryPolicy
    from .stores.base import ConversationStore as ConversationStore
    from .stores.memory import InMemoryConversationStore as InMemoryConversationStore
    from .stores.postgres import PostgresConversationStore as PostgresConversationStore
    from .stores.sqlite import SQLiteConversationStore as SQLiteConversationStore
    from .tools.context import ToolContext as ToolContext
    from .tools.registry import Effect as Effect
    from .tools.registry import Tool as Tool
    from .tools.registry import ToolRegistry as ToolRegistry
    from .tools.registry import ValidatedCall as ValidatedCall
    from .tools.validation import Coercion as Coercion
    from .tools.validation import Problem as Problem
    from .tracing import Tracing as Tracing
    from .usage import Usage as Usage

del TYPE_CHECKING  # not a public name of the package
