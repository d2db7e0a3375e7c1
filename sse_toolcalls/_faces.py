"""The package's faces, as data: which public names each face hands on, from which of
its modules, and the one mechanism behind them.

Three faces are lazy (PEP 562): the root (the wire core), ``sse_toolcalls.runtime`` (the
agent runtime); the sandbox's and the simulator's faces are plain packages. Each face's
table below is the one place a public name is written outside its module: ``__all__``,
``__dir__`` and the lookup on first use are derived from it, so a program pays for a
module (the framer, the async edge, jsonschema, anyio) only when it uses one of its
names. Type checkers cannot run a table, so each face repeats its names as
``TYPE_CHECKING`` imports (``X as X``); ``tests/core/test_public_api.py`` holds the two
equal.

**Class paths are fixed here, once.** A public class is known by its face's path
(``sse_toolcalls.ToolCall``, ``sse_toolcalls.runtime.Agent``) in reprs, tracebacks and
pickles, so a pickle outlives a move of the module inside the package. Each defining
module calls :func:`publish` as its last line: this module is the ground floor (it
imports only ``sys``), so no leaf imports a face, and the path does not depend on what
was imported first.

This module imports nothing else at load: ``import sse_toolcalls`` costs the interpreter
three small files (issue 16 measured typing alone at 41 M instructions).
"""

import sys

__all__ = ["CORE", "FACES", "RUNTIME", "SANDBOX", "SIMULATOR", "Face", "publish"]

CORE: dict[str, tuple[str, ...]] = {
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
    ),
    "errors": (
        "EventTooLargeError",
        "FramingError",
        "LimitExceededError",
        "MalformedStreamError",
        "ProviderError",
        "SSEToolCallsError",
        "StreamError",
        "StreamTimeoutError",
        "TruncatedStreamError",
        "UnknownDialectError",
        "UsageError",
    ),
    "parser": (
        "StreamParser",
        "ToolCallParser",
    ),
    "_event": ("ServerSentEvent",),
    "framing.sse": ("SSEFramer",),
    "conversation": (
        "AssistantMessage",
        "Conversation",
        "Message",
        "SystemPrompt",
        "ToolResultsMessage",
        "UserMessage",
    ),
    "messages": (
        "as_dialect",
        "assistant_turn",
        "build_request",
        "format_results",
        "tool_declarations",
    ),
    "crossing": ("carry_over",),
    "dialects.naming": (
        "ToolNameMap",
        "is_legal_name",
    ),
    "edge.responses": (
        "aiter_events",
        "aiter_events_from_sse",
        "aiter_tool_calls",
        "aiter_tool_calls_from_sse",
        "aparse_events",
        "aparse_tool_calls",
        "iter_events",
        "iter_tool_calls",
        "parse_events",
        "parse_tool_calls",
    ),
    "edge.http_errors": ("provider_error_from_http",),
    "edge.sdk_errors": (
        "provider_error_from_sdk",
        "translate_sdk_errors",
    ),
}
"""The root face (the wire core): module, relative to ``sse_toolcalls`` -> names."""

RUNTIME: dict[str, tuple[str, ...]] = {
    "agent": (
        "Agent",
        "AgentStream",
    ),
    "reply": ("AgentReply",),
    "events": (
        "AgentEvent",
        "ApprovalRequested",
        "FallbackShown",
        "RequestStarted",
        "RetryScheduled",
        "RunFinished",
        "ToolArgumentsPreview",
        "ToolCallRefused",
        "ToolCallResult",
    ),
    "approval": (
        "ApprovalContext",
        "ApprovalState",
        "Deny",
        "approval_id",
    ),
    "breaker": ("CircuitBreaker",),
    "clients": (
        "AnthropicClient",
        "BedrockAnthropicClient",
        "BedrockClient",
        "GeminiClient",
        "OpenAIChatClient",
        "OpenAIResponsesClient",
        "ProviderClient",
        "client_for",
    ),
    "failover": ("FallbackClient",),
    "diagnostics": ("Diagnostic",),
    "dispatch": ("Dispatcher",),
    "fallback": ("fallback_message",),
    "ledgers.base": (
        "IdempotencyLedger",
        "SyncLedgerAdapter",
    ),
    "ledgers.memory": ("InMemoryLedger",),
    "ledgers.postgres": ("PostgresLedger",),
    "ledgers.sqlite": ("SQLiteLedger",),
    "stores.base": ("ConversationStore",),
    "stores.memory": ("InMemoryConversationStore",),
    "stores.postgres": ("PostgresConversationStore",),
    "stores.sqlite": ("SQLiteConversationStore",),
    "report": ("CallReport",),
    "retry": ("RetryPolicy",),
    "tracing": ("Tracing",),
    "usage": ("Usage",),
    "tools.context": ("ToolContext",),
    "tools.registry": (
        "Effect",
        "Tool",
        "ToolRegistry",
        "ValidatedCall",
    ),
    "tools.validation": (
        "Coercion",
        "Problem",
    ),
    "errors": (
        "ApprovalStateError",
        "CircuitOpenError",
        "ConversationStoreError",
        "InvalidArgumentsError",
        "LedgerError",
        "SandboxDeclarationError",
        "SandboxUnavailableError",
        "SandboxViolationError",
        "ToolError",
        "ToolErrorReply",
        "ToolExecutionError",
        "ToolRetry",
        "ToolTimeoutError",
        "UnknownToolError",
    ),
}
"""``sse_toolcalls.runtime``: module, relative to it -> names."""

SANDBOX: dict[str, tuple[str, ...]] = {
    "declaration": (
        "HandlerRef",
        "Sandbox",
    ),
    "engine": ("run_in_sandbox",),
    "results": (
        "SandboxResult",
        "Violation",
        "ViolationKind",
    ),
}
"""``sse_toolcalls.runtime.sandbox`` (a plain package face)."""

SIMULATOR: dict[str, tuple[str, ...]] = {
    "script": (
        "Script",
        "ScriptedCall",
        "Turn",
    ),
    "server": ("Simulator",),
}
"""``sse_toolcalls.tooling.simulator`` (a plain package face)."""

FACES: dict[str, dict[str, tuple[str, ...]]] = {
    "sse_toolcalls": CORE,
    "sse_toolcalls.runtime": RUNTIME,
    "sse_toolcalls.runtime.sandbox": SANDBOX,
    "sse_toolcalls.tooling.simulator": SIMULATOR,
}
"""Each face's path -> its table."""

_PUBLISHED: dict[str, tuple[str, tuple[str, ...]]] = {
    f"{face}.{module}": (face, names)
    for face, table in FACES.items()
    for module, names in table.items()
}
"""Each defining module -> its face's path and the names it publishes there."""


def publish(module: str, namespace: dict[str, object]) -> None:
    """Give the public classes of ``module`` (its ``__name__``; ``namespace`` its globals)
    their face's path. Called by each defining module as its last line."""
    face, names = _PUBLISHED[module]
    for name in names:
        value = namespace[name]
        if isinstance(value, type) and value.__module__ == module:
            _resolve_annotations(value)
            value.__module__ = face


def _resolve_annotations(cls: type) -> None:
    # typing.get_type_hints (and pydantic, cattrs...) evaluate a class's string annotations
    # in the module named by its __module__, where "Any" or "CallOutcome" are not defined:
    # so they are evaluated here, in the defining module, before __module__ changes.
    # A name only imported under TYPE_CHECKING cannot be evaluated: such a class keeps its
    # strings (tests/core/test_public_api.py checks that no public class is left so).
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


class Face:
    """One face: its package's name and its table; its three module-level hooks."""

    def __init__(
        self,
        package: str,
        namespace: dict[str, object],
        path: list[str],
        moved: dict[str, str] | None = None,
    ) -> None:
        self.package = package
        exports = FACES[package]
        self.home = {name: module for module, names in exports.items() for name in names}
        """Each public name's defining module, relative to the package."""
        self.namespace = namespace
        self.path = path
        self.moved = moved or {}
        """Names that lived on this face before and have a new home: looked up with a
        warning that names it, for one release; never in ``__all__`` or ``dir()``."""

    def all(self) -> list[str]:
        return sorted(self.home)

    def getattr(self, name: str) -> object:
        module = self.home.get(name)
        if module is not None:
            __import__(f"{self.package}.{module}")
            value = getattr(sys.modules[f"{self.package}.{module}"], name)
            self.namespace[name] = value
            return value
        new_home = self.moved.get(name)
        if new_home is not None:
            # Kept once found: "from face import Old" looks the name up twice (hasattr,
            # then the import), and one warning is enough.
            value = self.namespace[name] = _moved_name(self.package, name, new_home)
            return value
        # name= without obj=: the interpreter then adds no suggestion of its own
        # (3.11 prints one only at the top level, never in traceback.format_*).
        raise AttributeError(self._no_such_name(name), name=name)

    def dir(self) -> list[str]:
        # The lazy names are listed before they are loaded, so completion and help() see
        # them; the moved ones are not (they are on their way out).
        return sorted({*self.namespace, *self.home} - self.moved.keys())

    def _no_such_name(self, name: str) -> str:
        message = f"module {self.package!r} has no attribute {name!r}"
        if name.startswith("_") or self._is_submodule(name):
            # The import system asks for every submodule ("from sse_toolcalls import framing")
            # before it loads it, and copy, pickle and doctest probe dunders: no user
            # misspelt those, and difflib would load for nothing.
            return message
        import difflib  # only on this error path

        # The moved names too: a misspelt ToolRegistry is still a ToolRegistry user.
        close = difflib.get_close_matches(name, [*self.home, *self.moved], n=1)
        return f"{message}. Did you mean: {close[0]!r}?" if close else message

    def _is_submodule(self, name: str) -> bool:
        import os  # loaded with the interpreter already

        return any(
            os.path.exists(os.path.join(folder, name + ending))
            for folder in self.path
            for ending in ("", ".py")
        )


def _moved_name(package: str, name: str, new_home: str) -> object:
    import warnings  # loaded with the interpreter already; only on this path

    warnings.warn(
        f"{package}.{name} moved: import it from {new_home} (the old path is removed in 0.3.0)",
        DeprecationWarning,
        stacklevel=4,  # this function, Face.getattr, the face's __getattr__, the caller
    )
    __import__(new_home)
    return getattr(sys.modules[new_home], name)
