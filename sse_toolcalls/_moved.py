"""Where the names and modules of 0.1 went when the package took its three layers
(issue 30), and the one mechanism that keeps the old paths working for one release.

- ``ROOT_NAMES``: names that were on the root face (``from sse_toolcalls import Agent``)
  and live on another face now; the root's lookup warns and hands them on.
- ``RUNTIME_NAMES``: the same for ``sse_toolcalls.runtime``'s face.
- ``MODULES``: modules that moved (``sse_toolcalls.simulator`` ->
  ``sse_toolcalls.tooling.simulator``); a finder placed *first* on ``sys.meta_path``
  answers for those paths alone, so a folder of 0.1 left behind by an update in place
  (git keeps a moved package's ``__pycache__``, which imports as an empty namespace
  package) cannot hide the move; any other import costs it one string test. It imports
  the new module under the old name with a warning.

A ``DeprecationWarning`` names the new home; the table in CHANGELOG.md ("Migration") is
the same, for readers. Nothing here is in any ``__all__`` or ``dir()``.
"""

import sys

ROOT_NAMES: dict[str, str] = {
    "Agent": "sse_toolcalls.runtime",
    "AgentEvent": "sse_toolcalls.runtime",
    "AgentReply": "sse_toolcalls.runtime",
    "AgentStream": "sse_toolcalls.runtime",
    "AnthropicClient": "sse_toolcalls.runtime",
    "ApprovalContext": "sse_toolcalls.runtime",
    "ApprovalRequested": "sse_toolcalls.runtime",
    "ApprovalState": "sse_toolcalls.runtime",
    "ApprovalStateError": "sse_toolcalls.runtime",
    "CallReport": "sse_toolcalls.runtime",
    "CircuitBreaker": "sse_toolcalls.runtime",
    "CircuitOpenError": "sse_toolcalls.runtime",
    "Coercion": "sse_toolcalls.runtime",
    "ConversationStore": "sse_toolcalls.runtime",
    "ConversationStoreError": "sse_toolcalls.runtime",
    "Deny": "sse_toolcalls.runtime",
    "Diagnostic": "sse_toolcalls.runtime",
    "Dispatcher": "sse_toolcalls.runtime",
    "Effect": "sse_toolcalls.runtime",
    "FallbackClient": "sse_toolcalls.runtime",
    "FallbackShown": "sse_toolcalls.runtime",
    "GeminiClient": "sse_toolcalls.runtime",
    "HandlerRef": "sse_toolcalls.runtime.sandbox",
    "IdempotencyLedger": "sse_toolcalls.runtime",
    "InMemoryConversationStore": "sse_toolcalls.runtime",
    "InMemoryLedger": "sse_toolcalls.runtime",
    "InvalidArgumentsError": "sse_toolcalls.runtime",
    "LedgerError": "sse_toolcalls.runtime",
    "OpenAIChatClient": "sse_toolcalls.runtime",
    "OpenAIResponsesClient": "sse_toolcalls.runtime",
    "PostgresConversationStore": "sse_toolcalls.runtime",
    "PostgresLedger": "sse_toolcalls.runtime",
    "Problem": "sse_toolcalls.runtime",
    "ProviderClient": "sse_toolcalls.runtime",
    "RequestStarted": "sse_toolcalls.runtime",
    "RetryPolicy": "sse_toolcalls.runtime",
    "RetryScheduled": "sse_toolcalls.runtime",
    "RunFinished": "sse_toolcalls.runtime",
    "SQLiteConversationStore": "sse_toolcalls.runtime",
    "SQLiteLedger": "sse_toolcalls.runtime",
    "Sandbox": "sse_toolcalls.runtime.sandbox",
    "SandboxDeclarationError": "sse_toolcalls.runtime",
    "SandboxResult": "sse_toolcalls.runtime.sandbox",
    "SandboxUnavailableError": "sse_toolcalls.runtime",
    "SandboxViolationError": "sse_toolcalls.runtime",
    "Script": "sse_toolcalls.tooling.simulator",
    "ScriptedCall": "sse_toolcalls.tooling.simulator",
    "Simulator": "sse_toolcalls.tooling.simulator",
    "SyncLedgerAdapter": "sse_toolcalls.runtime",
    "Tool": "sse_toolcalls.runtime",
    "ToolArgumentsPreview": "sse_toolcalls.runtime",
    "ToolCallRefused": "sse_toolcalls.runtime",
    "ToolCallResult": "sse_toolcalls.runtime",
    "ToolContext": "sse_toolcalls.runtime",
    "ToolError": "sse_toolcalls.runtime",
    "ToolErrorReply": "sse_toolcalls.runtime",
    "ToolExecutionError": "sse_toolcalls.runtime",
    "ToolRegistry": "sse_toolcalls.runtime",
    "ToolRetry": "sse_toolcalls.runtime",
    "ToolTimeoutError": "sse_toolcalls.runtime",
    "Tracing": "sse_toolcalls.runtime",
    "Turn": "sse_toolcalls.tooling.simulator",
    "UnknownToolError": "sse_toolcalls.runtime",
    "Usage": "sse_toolcalls.runtime",
    "ValidatedCall": "sse_toolcalls.runtime",
    "Violation": "sse_toolcalls.runtime.sandbox",
    "ViolationKind": "sse_toolcalls.runtime.sandbox",
    "approval_id": "sse_toolcalls.runtime",
    "client_for": "sse_toolcalls.runtime",
    "fallback_message": "sse_toolcalls.runtime",
    "run_in_sandbox": "sse_toolcalls.runtime.sandbox",
}
"""Old root name -> the module to import it from now."""

RUNTIME_NAMES: dict[str, str] = {
    "ApprovalPolicy": "sse_toolcalls.runtime.approval",
    "AsyncByteResponse": "sse_toolcalls.edge.responses",
    "CallOutcome": "sse_toolcalls.runtime.report",
    "CircuitStatus": "sse_toolcalls.runtime.breaker",
    "DEFAULT_MAX_STEPS": "sse_toolcalls.runtime.agent",
    "Decision": "sse_toolcalls.runtime.approval",
    "Exchange": "sse_toolcalls.runtime.stores.base",
    "Executor": "sse_toolcalls.runtime.execute",
    "FallbackReason": "sse_toolcalls.runtime.fallback",
    "LedgerEntry": "sse_toolcalls.runtime.ledgers.base",
    "PartialJSON": "sse_toolcalls.runtime.partial_json",
    "SSELike": "sse_toolcalls.edge.responses",
    "StreamingClient": "sse_toolcalls.runtime.agent",
    "SyncByteResponse": "sse_toolcalls.edge.responses",
    "TIMEOUT_CODE": "sse_toolcalls.edge.responses",
    "aiter_events": "sse_toolcalls",
    "aiter_events_from_sse": "sse_toolcalls",
    "aiter_tool_calls": "sse_toolcalls",
    "aiter_tool_calls_from_sse": "sse_toolcalls",
    "aparse_events": "sse_toolcalls",
    "aparse_tool_calls": "sse_toolcalls",
    "call_digest": "sse_toolcalls.runtime.approval",
    "idempotency_key": "sse_toolcalls.runtime.ledgers.base",
    "is_retryable_status": "sse_toolcalls.edge.http_errors",
    "is_transient": "sse_toolcalls.runtime.retry",
    "iter_events": "sse_toolcalls",
    "iter_tool_calls": "sse_toolcalls",
    "parse_events": "sse_toolcalls",
    "parse_retry_after": "sse_toolcalls.edge.http_errors",
    "parse_tool_calls": "sse_toolcalls",
    "provider_error_from_http": "sse_toolcalls",
    "provider_error_from_sdk": "sse_toolcalls",
    "run_local": "sse_toolcalls.runtime.execute",
    "run_sandboxed": "sse_toolcalls.runtime.execute",
    "translate_sdk_errors": "sse_toolcalls",
    "usage_of": "sse_toolcalls.runtime.usage",
}
"""Old ``sse_toolcalls.runtime`` name -> the module to import it from now."""

MODULES: dict[str, str] = {
    "sse_toolcalls.naming": "sse_toolcalls.dialects.naming",
    "sse_toolcalls.bfcl": "sse_toolcalls.tooling.bfcl",
    "sse_toolcalls.catalogue": "sse_toolcalls.tooling.catalogue",
    "sse_toolcalls.cli": "sse_toolcalls.tooling.cli",
    "sse_toolcalls.corpus": "sse_toolcalls.tooling.corpus",
    "sse_toolcalls.demo": "sse_toolcalls.tooling.demo",
    "sse_toolcalls.demo_registry": "sse_toolcalls.tooling.demo_registry",
    "sse_toolcalls.mcp": "sse_toolcalls.runtime.mcp",
    # The ledger, store and Postgres modules split into one module per backend (see the
    # CHANGELOG's migration table); an old path can alias one module only: the one that
    # holds most of its names (ledger: 13 of 16, store: 7 of 10, postgres: 4 of 6).
    "sse_toolcalls.runtime.ledger": "sse_toolcalls.runtime.ledgers.base",
    "sse_toolcalls.runtime.postgres": "sse_toolcalls.runtime.ledgers.postgres",
    "sse_toolcalls.runtime.store": "sse_toolcalls.runtime.stores.base",
    "sse_toolcalls.runtime.edge": "sse_toolcalls.edge.responses",
    "sse_toolcalls.runtime.http_errors": "sse_toolcalls.edge.http_errors",
    "sse_toolcalls.runtime.sdk_errors": "sse_toolcalls.edge.sdk_errors",
    "sse_toolcalls.runtime.transport": "sse_toolcalls.edge.transport",
    "sse_toolcalls.sandbox": "sse_toolcalls.runtime.sandbox",
    "sse_toolcalls.simulator": "sse_toolcalls.tooling.simulator",
    "sse_toolcalls.sse": "sse_toolcalls.framing.sse",
    "sse_toolcalls.tools": "sse_toolcalls.runtime.tools",
    "sse_toolcalls.tools.strict": "sse_toolcalls.strict",
}
"""Old module (or package) -> its new path; a submodule of an old package follows it."""


SPLIT: dict[str, dict[str, str]] = {
    "sse_toolcalls.runtime.ledger": {
        "BUSY_TIMEOUT_S": "sse_toolcalls.runtime.ledgers.sqlite",
        "InMemoryLedger": "sse_toolcalls.runtime.ledgers.memory",
        "SQLiteLedger": "sse_toolcalls.runtime.ledgers.sqlite",
    },
    "sse_toolcalls.runtime.postgres": {
        "CONVERSATIONS_TABLE": "sse_toolcalls.runtime.stores.postgres",
        "PostgresConversationStore": "sse_toolcalls.runtime.stores.postgres",
    },
    "sse_toolcalls.runtime.store": {
        "InMemoryConversationStore": "sse_toolcalls.runtime.stores.memory",
        "SQLiteConversationStore": "sse_toolcalls.runtime.stores.sqlite",
    },
}
"""Old modules whose names went to several new ones: each name that is not in the module
``MODULES`` names -> where it went. The old path is then a module of its own that hands
each name on from its new home (``from sse_toolcalls.runtime.ledger import SQLiteLedger``
keeps working, with the module's warning)."""


def new_module(name: str) -> str | None:
    """The new path of a module of 0.1 that moved, or ``None``."""
    # The longest old path first: sse_toolcalls.tools.strict went elsewhere than the rest
    # of sse_toolcalls.tools.
    for old in sorted(MODULES, key=len, reverse=True):
        if name == old or name.startswith(old + "."):
            return MODULES[old] + name[len(old) :]
    return None


_OLD_PREFIXES = tuple(MODULES)
"""What an old path starts with (``str.startswith`` takes the tuple: one test per import);
``new_module`` then tells a real match from a longer name that merely shares the start."""


class _MovedFinder:
    """Finds the old module paths, first of all finders (see the module's docstring)."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> object:
        if not name.startswith(_OLD_PREFIXES):
            return None
        new = new_module(name)
        if new is None:
            return None
        from importlib.machinery import ModuleSpec  # loaded with the import system

        # A loader by protocol (create_module, exec_module), as the import system asks.
        return ModuleSpec(name, _MovedLoader(new))  # type: ignore[arg-type]


class _MovedLoader:
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: object) -> None:
        return None  # the default module: exec_module puts the real one in its place

    def exec_module(self, module: object) -> None:
        import warnings

        name = getattr(module, "__name__", "")
        warnings.warn(
            f"the module {name} moved to {self.new} (the old path is removed in 0.3.0)",
            DeprecationWarning,
            # 2: the importing line; warnings skips the import system's own frames.
            stacklevel=2,
        )
        __import__(self.new)
        elsewhere = SPLIT.get(name)
        if elsewhere is None:
            # The import system returns what sys.modules holds under the old name once
            # this returns: the real module, never a copy, so its classes stay one.
            sys.modules[name] = sys.modules[self.new]
            return
        # A split module: this (new, empty) module hands each name on from its home, so
        # the objects are still the real ones.
        main = sys.modules[self.new]

        def lookup(attribute: str) -> object:
            home = elsewhere.get(attribute)
            if home is None:
                return getattr(main, attribute)
            __import__(home)
            return getattr(sys.modules[home], attribute)

        module.__getattr__ = lookup  # type: ignore[attr-defined]


_FINDER = _MovedFinder()


def install() -> None:
    """Put the finder first on ``sys.meta_path``, once."""
    finders: list[object] = list(sys.meta_path)
    if _FINDER not in finders:
        sys.meta_path.insert(0, _FINDER)  # type: ignore[arg-type]


__all__ = ["MODULES", "ROOT_NAMES", "RUNTIME_NAMES", "SPLIT", "install", "new_module"]
