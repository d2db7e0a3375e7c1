"""OpenTelemetry spans for :class:`~.agent.Agent`, after the GenAI semantic conventions.

With ``opentelemetry-api`` installed (the ``otel`` extra) every run of an agent emits:

- ``invoke_agent {name}`` (kind ``INTERNAL``), one per :meth:`~.agent.Agent.run` or
  :meth:`~.agent.Agent.resume`: ``gen_ai.operation.name`` = ``invoke_agent``, the
  provider, the model, the conversation id, the run's summed token usage; a fallback
  reply sets ``error.type`` to its reason.
- ``chat {model}`` (kind ``CLIENT``), one per request sent to the provider, retries
  included, each a child of the run's span: the provider, the model, the server, token
  usage, ``gen_ai.response.finish_reasons`` and ``sse_toolcalls.request.attempt`` (1 for
  the first try); a failed attempt sets ``error.type`` to the provider's error code.
- ``execute_tool {tool}`` (kind ``INTERNAL``), one per call the dispatcher handled, a
  child of the run's span: ``gen_ai.tool.name``, ``gen_ai.tool.call.id``, the outcome,
  the handler's runs, whether the ledger replayed a write and the sandbox's verdict.

The conventions are quoted from the OpenTelemetry GenAI pages ("Semantic conventions for
generative client AI spans", "... for GenAI agent spans", "... tool execution").
Attributes of our own are under ``sse_toolcalls.``.

**Content stays out** unless the application opts in: no prompt, reply text, tool
arguments or results are recorded by default (they are the users' data). Opt in with
``Tracing(capture_content=True)`` or the variable the GenAI instrumentations read,
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``; then tool spans carry
``gen_ai.tool.call.arguments`` and ``gen_ai.tool.call.result``, and chat spans
``gen_ai.input.messages`` (with ``gen_ai.system_instructions``) and
``gen_ai.output.messages``.

**Without the package nothing is imported and nothing costs**: the agent's default
:func:`default_tracing` tries the import once; when it fails, every hook is a shared
object whose methods do nothing (no span, no attribute built).
"""

from __future__ import annotations

import contextvars
import functools
import os
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Final, Self
from urllib.parse import urlsplit

from .._faces import publish
from .._jsonsafe import dumps_safe, safe_str
from ..dialects import spec_for
from ..errors import ProviderError, UnknownDialectError, UsageError
from .reply import AgentReply
from .report import CallReport
from .usage import Usage, usage_of

if TYPE_CHECKING:
    from ..calls import StreamFinished, ToolCall, ToolResult
    from ..conversation import Message
    from .tools.registry import ValidatedCall

__all__ = ["Tracing"]

CAPTURE_CONTENT_ENV: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The environment variable that opts in to content on spans (``true``), as the
OpenTelemetry GenAI instrumentations read it."""

# Outcomes of a call that are not an error of the operation: it ran and answered, the
# ledger answered for it, or it was never the tool's to run.
_NOT_ERRORS: Final = frozenset({"ok", "replayed", "declined"})

_current_run: contextvars.ContextVar[_RunSpan | None] = contextvars.ContextVar(
    "sse_toolcalls_run_span", default=None
)
_current_tool: contextvars.ContextVar[_ToolSpan | None] = contextvars.ContextVar(
    "sse_toolcalls_tool_span", default=None
)


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


def _set_usage(span: _Span, usage: Usage) -> None:
    """The GenAI usage attributes from :class:`~.usage.Usage`, the one reader of a
    provider's counts (input with cached tokens, output with reasoning: the conventions'
    "SHOULD include all types of input tokens, including cached tokens")."""
    span.set("gen_ai.usage.input_tokens", usage.input_tokens)
    span.set("gen_ai.usage.output_tokens", usage.output_tokens)
    span.set("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens)
    span.set("gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens)


class Tracing:
    """How an agent traces: through OpenTelemetry's API, to the global tracer provider
    unless given one."""

    def __init__(
        self,
        *,
        tracer_provider: Any = None,
        agent_name: str | None = None,
        capture_content: bool | None = None,
    ) -> None:
        """Args:
            tracer_provider: an OpenTelemetry ``TracerProvider``; the global one (looked
                up at each span, so one set later counts) by default.
            agent_name: ``gen_ai.agent.name``, and the run span's name
                (``invoke_agent {agent_name}``; ``invoke_agent`` without one).
            capture_content: record tool arguments, tool results and the model's
                output on spans; by default as :data:`CAPTURE_CONTENT_ENV` says (off
                when unset).

        Raises:
            UsageError: ``opentelemetry-api`` is not installed.
        """
        try:
            from opentelemetry import trace
        except ImportError as exc:
            raise UsageError(
                "tracing needs opentelemetry-api: pip install 'sse_toolcalls[otel]'"
            ) from exc
        self._trace = trace
        self._tracer = trace.get_tracer(
            "sse_toolcalls", _version(), tracer_provider=tracer_provider
        )
        self.agent_name = agent_name
        """``gen_ai.agent.name``, or ``None``."""
        self.capture_content = (
            _truthy(os.environ.get(CAPTURE_CONTENT_ENV))
            if capture_content is None
            else capture_content
        )
        """Whether content (arguments, results, output) is recorded."""

    # -- the agent's hooks ------------------------------------------------------------

    def run(self, client: object, *, conversation_id: str, request_id: str) -> _RunSpan:
        """The span of one run (a context manager); its children find it."""
        dialect = _dialect(client)
        model = _model(client)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.conversation.id": conversation_id,
            "sse_toolcalls.request.id": request_id,
        }
        _provider(attributes, dialect)
        if model is not None:
            attributes["gen_ai.request.model"] = model
        if self.agent_name is not None:
            attributes["gen_ai.agent.name"] = self.agent_name
        name = f"invoke_agent {self.agent_name}" if self.agent_name else "invoke_agent"
        return _RunSpan(self, name, attributes)

    def request(
        self, client: object, *, attempt: int, messages: Sequence[Message] = ()
    ) -> _RequestSpan:
        """The span of one request to the provider (a context manager); ``messages``,
        the conversation sent, is recorded only when content is captured."""
        dialect = _dialect(client)
        model = _model(client)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "sse_toolcalls.request.attempt": attempt,
        }
        _provider(attributes, dialect)
        if model is not None:
            attributes["gen_ai.request.model"] = model
        _server(attributes, getattr(client, "base_url", None))
        if self.capture_content and messages:
            system, sent = _input_messages(messages)
            attributes["gen_ai.input.messages"] = sent
            if system is not None:
                attributes["gen_ai.system_instructions"] = system
        name = f"chat {model}" if model else "chat"
        return _RequestSpan(self, name, attributes)

    def _start(self, name: str, kind: str, attributes: dict[str, Any]) -> tuple[Any, Any]:
        """Start a span as the current one; (span, the token to detach it with)."""
        from opentelemetry import context

        span = self._tracer.start_span(
            name, kind=getattr(self._trace.SpanKind, kind), attributes=attributes
        )
        token = context.attach(self._trace.set_span_in_context(span))
        return span, token

    def _end(self, span: Any, token: Any, error: str | None, message: str = "") -> None:
        from opentelemetry import context

        if error is not None:
            span.set_attribute("error.type", error)
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, message or None))
        # Detach before ending: a span is ended once, and the context must be what it was
        # whatever happens to the export.
        context.detach(token)
        span.end()


class _Off:
    """No tracing: the hooks' shared no-op, so an untraced run builds nothing."""

    def run(self, client: object, *, conversation_id: str, request_id: str) -> _NoSpan:
        return _NO_SPAN

    def request(self, client: object, *, attempt: int, messages: Sequence[Message] = ()) -> _NoSpan:
        return _NO_SPAN


class _NoSpan:
    """A span that records nothing; every hook of a run without tracing."""

    def __enter__(self) -> _NoSpan:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    def reply(self, reply: AgentReply) -> AgentReply:
        return reply

    def finished(self, finished: StreamFinished) -> StreamFinished:
        return finished


_NO_SPAN: Final = _NoSpan()
OFF: Final = _Off()
"""No tracing (``Agent(tracing=False)``, or the default without the package)."""


class _Span:
    kind = "INTERNAL"
    current: ClassVar[contextvars.ContextVar[Any] | None] = None
    """Where a span of this kind is found while it is open (the run's, a tool call's),
    for the code below it that has no reference to it."""

    def __init__(self, tracing: Tracing, name: str, attributes: dict[str, Any]) -> None:
        self.tracing = tracing
        self.name = name
        self.attributes = attributes
        self.error: str | None = None
        self.message = ""
        self._span: Any = None
        self._token: Any = None
        self._current_token: Any = None

    def __enter__(self) -> Self:
        self._span, self._token = self.tracing._start(self.name, self.kind, self.attributes)
        if self.current is not None:
            self._current_token = self.current.set(self)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.current is not None:
            self.current.reset(self._current_token)
        if exc is not None:
            # safe_str: a hostile exception's __str__ may raise, and a span must not
            # turn the run's own error into another (test_agent_hostile.py).
            self.error, self.message = _error_type(exc), safe_str(exc)
            status = getattr(exc, "status", None) if isinstance(exc, ProviderError) else None
            if isinstance(status, int):
                self.set("http.response.status_code", status)
        self.tracing._end(self._span, self._token, self.error, self.message)

    def set(self, name: str, value: Any) -> None:
        if value is not None:
            self._span.set_attribute(name, value)


class _RunSpan(_Span):
    current = _current_run

    def reply(self, reply: AgentReply) -> AgentReply:
        """Record how the run ended; returns ``reply``."""
        self.set("sse_toolcalls.agent.steps", reply.steps)
        self.set("sse_toolcalls.agent.requests", reply.requests)
        self.set("sse_toolcalls.agent.calls", len(reply.calls))
        # The reply's totals, summed by the agent over its turns: one owner of the sum.
        _set_usage(self, reply.usage)
        if reply.pending_approvals:
            self.set("sse_toolcalls.agent.pending_approvals", len(reply.pending_approvals))
        if reply.reason is not None:
            self.set("sse_toolcalls.agent.fallback", reply.reason)
            self.error, self.message = reply.reason, f"fallback reply: {reply.reason}"
        return reply


class _RequestSpan(_Span):
    kind = "CLIENT"

    def finished(self, finished: StreamFinished) -> StreamFinished:
        """Record the turn the provider sent; returns ``finished``."""
        if finished.stop_reason is not None:
            self.set("gen_ai.response.finish_reasons", (finished.stop_reason,))
        dialect = self.attributes.get("sse_toolcalls.dialect")
        _set_usage(self, usage_of(dialect if isinstance(dialect, str) else None, finished.usage))
        if self.tracing.capture_content:
            self.set("gen_ai.output.messages", _output_messages(finished))
        return finished


class _ToolSpan(_Span):
    current = _current_tool

    def __init__(self, tracing: Tracing, name: str, attributes: dict[str, Any]) -> None:
        super().__init__(tracing, name, attributes)
        self.verdict: str | None = None

    def report(self, report: CallReport, sandboxed: bool) -> None:
        outcome = report.outcome
        self.set("sse_toolcalls.tool.outcome", outcome)
        self.set("sse_toolcalls.tool.runs", report.runs)
        self.set("sse_toolcalls.ledger.replayed", outcome == "replayed")
        if sandboxed and report.runs:
            self.set("sse_toolcalls.runtime.sandbox.verdict", self.verdict or "passed")
        if outcome not in _NOT_ERRORS and self.error is None:
            self.error, self.message = outcome, f"the call ended {outcome}"
        if self.tracing.capture_content:
            self.set("gen_ai.tool.call.result", _content(report.result))


@functools.cache
def _version() -> str | None:
    # Cached: a metadata lookup walks sys.path (about 1 ms), and agents are cheap to make.
    from importlib import metadata

    try:
        return metadata.version("sse_toolcalls")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a bare checkout
        return None


def _error_type(exc: BaseException) -> str:
    """``error.type``: a provider's own error code, else the exception's class."""
    if isinstance(exc, ProviderError) and exc.code:
        return str(exc.code)
    return type(exc).__qualname__


def _dialect(client: object) -> str | None:
    dialect = getattr(client, "dialect", None)
    return dialect if isinstance(dialect, str) else None


def _model(client: object) -> str | None:
    model = getattr(client, "model", None)
    return model if isinstance(model, str) and model else None


def _provider(attributes: dict[str, Any], dialect: str | None) -> None:
    if dialect is None:
        return
    try:
        # The dialect's gen_ai.provider.name (DialectSpec.telemetry_name).
        provider = spec_for(dialect).telemetry_name
    except UnknownDialectError:
        provider = dialect
    attributes["gen_ai.provider.name"] = provider
    # The attribute's name before the conventions renamed it (1.37), which many
    # backends still read.
    attributes["gen_ai.system"] = provider
    attributes["sse_toolcalls.dialect"] = dialect


def _server(attributes: dict[str, Any], base_url: object) -> None:
    if not isinstance(base_url, str):
        return
    try:
        parts = urlsplit(base_url)
        port = parts.port
    except ValueError:
        return
    if parts.hostname:
        attributes["server.address"] = parts.hostname
        if port is None:
            port = {"https": 443, "http": 80}.get(parts.scheme)
        if port is not None:
            attributes["server.port"] = port


def _content(result: ToolResult) -> str:
    content = result.content
    return content if isinstance(content, str) else dumps_safe(content).decode()


def _input_messages(messages: Sequence[Message]) -> tuple[str | None, str]:
    """(``gen_ai.system_instructions``, ``gen_ai.input.messages``) of a conversation, in
    the conventions' parts form: text, tool calls, tool call responses."""
    from ..conversation import AssistantMessage, SystemPrompt, ToolResultsMessage, UserMessage

    system: list[dict[str, Any]] = []
    sent: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, SystemPrompt):
            system.append({"type": "text", "content": message.text})
        elif isinstance(message, UserMessage):
            sent.append({"role": "user", "parts": [{"type": "text", "content": message.text}]})
        elif isinstance(message, AssistantMessage):
            parts: list[dict[str, Any]] = []
            if message.text:
                parts.append({"type": "text", "content": message.text})
            parts += [_call_part(call) for call in message.calls]
            sent.append({"role": "assistant", "parts": parts})
        elif isinstance(message, ToolResultsMessage):
            sent.append(
                {
                    "role": "tool",
                    "parts": [
                        {
                            "type": "tool_call_response",
                            "id": result.call.call_id,
                            "response": result.content,
                        }
                        for result in message.results
                    ],
                }
            )
    instructions = dumps_safe(system).decode() if system else None
    return instructions, dumps_safe(sent).decode()


def _call_part(call: ToolCall) -> dict[str, Any]:
    return {"type": "tool_call", "id": call.call_id, "name": call.name, "arguments": call.args}


def _output_messages(finished: StreamFinished) -> str:
    """The turn as ``gen_ai.output.messages`` (one assistant message of parts)."""
    parts: list[dict[str, Any]] = []
    if finished.text:
        parts.append({"type": "text", "content": finished.text})
    parts += [_call_part(call) for call in finished.calls]
    message = {"role": "assistant", "parts": parts, "finish_reason": finished.stop_reason or ""}
    return dumps_safe([message]).decode()


# -- the dispatcher's hooks: they find the run's tracing in the context ---------------


def tool_span(call: ToolCall, validated: ValidatedCall | ToolResult) -> _ToolSpan | _NoSpan:
    """The span of one call's handling, when a traced run is dispatching it."""
    run = _current_run.get()
    if run is None:
        return _NO_SPAN
    tracing = run.tracing
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.name,
        "gen_ai.tool.type": "function",
    }
    if call.call_id is not None:
        attributes["gen_ai.tool.call.id"] = call.call_id
    tool = getattr(validated, "tool", None)
    if tool is not None:
        attributes["sse_toolcalls.tool.effect"] = tool.effect
        if tool.description:
            attributes["gen_ai.tool.description"] = tool.description
    if tracing.capture_content:
        attributes["gen_ai.tool.call.arguments"] = (
            call.raw_arguments if call.raw_arguments is not None else dumps_safe(call.args).decode()
        )
    return _ToolSpan(tracing, f"execute_tool {call.name}", attributes)


def note_tool_failure(exc: BaseException) -> None:
    """Tell the current tool span (if any) why its handler failed: ``error.type``, and
    the sandbox's verdict when a sandbox stopped it."""
    span = _current_tool.get()
    if span is None:
        return
    seen: BaseException | None = exc
    while seen is not None:
        violation = getattr(seen, "violation", None)
        kind = getattr(violation, "kind", None)
        if kind is not None:
            span.verdict = str(getattr(kind, "value", kind))
            break
        seen = seen.__cause__
    cause = exc.__cause__ if exc.__cause__ is not None else exc
    span.error, span.message = type(cause).__qualname__, safe_str(exc)


def tool_report(span: _ToolSpan | _NoSpan, report: CallReport, sandboxed: bool) -> None:
    """Record a call's report on its span."""
    if isinstance(span, _ToolSpan):
        span.report(report, sandboxed)


def default_tracing() -> Tracing | _Off:
    """OpenTelemetry tracing when ``opentelemetry-api`` imports, else :data:`OFF`."""
    if not _importable():
        return OFF
    return Tracing()


@functools.cache
def _importable() -> bool:
    # Asked once per process: a failed import is retried by Python on every attempt,
    # walking sys.path each time, and an Agent is made per request in many applications.
    try:
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        return False
    return True


def resolve(tracing: Tracing | bool | None) -> Tracing | _Off:
    """The agent's ``tracing=`` argument made concrete."""
    if tracing is None or tracing is True:
        return default_tracing() if tracing is None else Tracing()
    if tracing is False:
        return OFF
    if isinstance(tracing, Tracing):
        return tracing
    raise UsageError(f"tracing must be a Tracing, True, False or None, not {tracing!r}")


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
