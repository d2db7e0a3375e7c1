"""The conversation loop, the library's one: the user always gets a message.

:class:`Agent` talks with the model until it answers without calling a tool (user
message -> stream -> calls -> dispatch -> results -> next request -> ... -> the final
text, within ``max_steps``), and adds what a product needs when things fail:

- **Provider or stream failures** (an HTTP error, an error event, a stall, a cut
  stream): transient ones are retried per the :class:`~.retry.RetryPolicy`, re-sending
  the same conversation; the calls of a turn run only once its stream has finished
  cleanly, so a failed stream never runs anything, and the results of a turn that ran
  are part of the conversation re-sent, so a retry never runs them again. When the
  provider cannot answer, the reply is a pre-written message in the user's language
  (:mod:`.fallback`) and the detail goes to diagnostics (:mod:`.diagnostics`).
- **Calls** go through a :class:`~.dispatch.Dispatcher`: validation, concurrency, per-tool
  timeouts, the circuit breaker, and the idempotency ledger for writes (keyed by the
  user request, ``request_id``, and the call's place in it, so a call re-issued with a
  new id in the same request replays, and a new request always runs).
- **Invalid arguments**: the model gets an error result under the same id and may correct
  itself once; if its next call to the same tool is refused again, the reply is the
  ``tool_arguments`` fallback.
- **A tool's own refusal** (:class:`~sse_toolcalls.runtime.errors.ToolRetry`): its reason goes to
  the model, up to ``Tool.retries`` times per tool and run; then the ``tool_arguments``
  fallback.
- **Step limit**: the ``step_limit`` fallback.
- **Permissions and approval** (:mod:`.approval`): before a turn's calls run, the
  ``policy`` (and each tool's ``needs_approval``) decides per call: allow, deny (the
  model reads the reason) or ask. A turn with a call that asks runs nothing and the run
  pauses: the reply's ``pending_approvals`` and ``state`` say what waits, and
  :meth:`Agent.resume` goes on with the person's answer, once, and only with the state
  as it was paused (its record in the ledger, or its signature with ``approval_key``).
- **Anything else** (a bug here or in a handler's result, an exception a stream should
  never raise): the ``internal_error`` fallback, with the exception and its traceback in
  the diagnostics and the log. Only cancellation, and misuse found before any tool ran
  (``UsageError``), leave :meth:`Agent.run` as exceptions.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import logging
import sys
import time
import traceback
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio

from .._checks import check_count, check_quantity
from .._faces import publish
from .._jsonsafe import clean_text, safe_repr, safe_str
from .._logging import log
from ..calls import (
    ReasoningDelta,
    StreamFinished,
    TextDelta,
    ToolCall,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
    ToolSpec,
)
from ..conversation import (
    AssistantMessage,
    Conversation,
    Message,
    ToolResultsMessage,
    UserMessage,
)
from ..dialects import spec_for
from ..errors import (
    StreamError,
    StreamTimeoutError,
    TruncatedStreamError,
    UnknownDialectError,
    UsageError,
)
from .approval import (
    ApprovalContext,
    ApprovalPolicy,
    ApprovalState,
    Decision,
    Deny,
    approval_ids,
    check_approval_key,
    claim_decision,
    pending_ids,
    record_pause,
    sealed,
    verify_state,
)
from .breaker import CircuitBreaker
from .diagnostics import MAX_BODY_CHARS, Diagnostic, from_exception, logger, report
from .dispatch import (
    DEFAULT_MAX_CALLS_PER_TURN,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_READ_RETRIES,
    BreakerScope,
    Dispatcher,
    per_tool,
)
from .errors import ApprovalStateError, LedgerError
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
from .execute import Executor, run_local
from .fallback import FallbackReason, fallback_message
from .ledgers.base import DEFAULT_LEDGER_TIMEOUT_S, IdempotencyLedger, SyncIdempotencyLedger
from .partial_json import PartialJSON
from .reply import AgentReply
from .report import CallReport
from .retry import RetryPolicy
from .stores.base import (
    DEFAULT_STORE_TIMEOUT_S,
    ConversationStore,
    history_before,
    within_deadline,
)
from .stores.memory import InMemoryConversationStore
from .tools import results as result_texts
from .tracing import Tracing, resolve
from .usage import Usage, usage_of

if TYPE_CHECKING:
    from ..calls import StreamEvent
    from .sandbox import WarmPool
    from .tools.registry import ToolRegistry

__all__ = ["DEFAULT_MAX_STEPS", "Agent", "AgentReply", "AgentStream", "StreamingClient"]

DEFAULT_MAX_STEPS = 8
"""Assistant turns one run may take: enough for a few rounds of parallel calls, and a
bound on the cost of a model that keeps calling tools without ever answering."""


class StreamingClient(Protocol):
    """What the agent needs from a provider client (every :class:`~.clients.ProviderClient`)."""

    def stream_events(
        self, conversation: Conversation, tools: Sequence[ToolSpec] = (), **options: Any
    ) -> AsyncIterator[StreamEvent]:
        """Send the conversation; yield the rich stream events of the answer."""
        ...


class AgentStream:
    """The events of one streamed run (:meth:`Agent.run_stream`), an async iterator.

    ``reply`` is the run's reply once the last event (:class:`~.events.RunFinished`) has
    been read.
    """

    def __init__(self, receive: anyio.abc.ObjectReceiveStream[AgentEvent]) -> None:
        self._receive = receive
        self._failure: BaseException | None = None
        self.reply: AgentReply | None = None
        """The reply, once the run finished."""

    def __repr__(self) -> str:
        return f"<AgentStream {'finished' if self.reply is not None else 'running'}>"

    def __aiter__(self) -> AgentStream:
        return self

    async def __anext__(self) -> AgentEvent:
        """The next event.

        Raises:
            UsageError: as :meth:`Agent.run` raises it.
        """
        try:
            event = await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            if self._failure is not None:
                failure, self._failure = self._failure, None
                raise failure from None
            raise StopAsyncIteration from None
        if isinstance(event, RunFinished):
            self.reply = event.reply
        return event


class Agent:
    """A conversation loop that fails safely. Reusable across runs; one ledger and one
    breaker serve them all."""

    def __init__(
        self,
        client: StreamingClient,
        registry: ToolRegistry,
        *,
        ledger: IdempotencyLedger | SyncIdempotencyLedger | None = None,
        store: ConversationStore | None = None,
        breaker: CircuitBreaker | None = None,
        retry: RetryPolicy | None = None,
        lang: str = "en",
        max_steps: int = DEFAULT_MAX_STEPS,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        read_retries: int = DEFAULT_READ_RETRIES,
        max_calls_per_turn: int = DEFAULT_MAX_CALLS_PER_TURN,
        request_timeout: float | None = None,
        options: dict[str, Any] | None = None,
        executor: Executor = run_local,
        breaker_scope: BreakerScope = per_tool,
        deps: Any = None,
        policy: ApprovalPolicy | None = None,
        tracing: Tracing | bool | None = None,
        sandbox_pool: WarmPool | None = None,
        approval_key: bytes | None = None,
        ledger_timeout: float = DEFAULT_LEDGER_TIMEOUT_S,
        store_timeout: float = DEFAULT_STORE_TIMEOUT_S,
    ) -> None:
        """Args:
            client: the provider client (its dialect decides every format).
            registry: the tools the model may call.
            ledger: the idempotency ledger for writes (in memory by default; use a
                :class:`~.ledgers.sqlite.SQLiteLedger` to be safe across processes and restarts,
                a :class:`~.ledgers.postgres.PostgresLedger` across machines).
            store: where conversations are kept, so that ``run(text,
                conversation_id=...)`` continues one (:mod:`.store`; in memory by
                default; SQLite or Postgres to survive restarts and span workers).
            breaker: the circuit breaker (3 failures, 60 s by default).
            retry: the provider retry policy (3 attempts by default).
            lang: the user's language for fallback messages (BCP 47: ``en``, ``pt-BR``).
            max_steps: assistant turns per run (at least 1).
            max_concurrency: calls of one turn running at once.
            read_retries: extra runs of a failed read tool.
            max_calls_per_turn: calls one assistant turn may ask for; a turn asking for
                more is refused whole (every call gets a ``too_many_calls`` result).
            request_timeout: seconds one request (its whole stream) may take, or
                ``None``; a stream going silent is the client's ``idle_timeout``.
            options: request options sent with every request (``temperature``...).
            executor: how a handler is run (:class:`~.execute.Executor`): in this
                process by default; the dispatcher's seam for another backend.
            breaker_scope: names the circuit a call counts against, from (validated
                call, conversation id); per tool by default (see
                :data:`~.dispatch.BreakerScope`).
            deps: the application's dependencies, given to tools that declare a
                :class:`~sse_toolcalls.runtime.tools.ToolContext` parameter.
            policy: decides before each call runs: ``"allow"``, ``Deny(reason)`` or
                ``"ask"`` (:mod:`.approval`); every call is allowed by default, except
                that a tool with ``needs_approval`` always asks.
            tracing: OpenTelemetry spans (:mod:`.tracing`): a :class:`~.tracing.Tracing`,
                ``False`` for none, or ``None`` (the default) for spans to the global
                tracer provider when ``opentelemetry-api`` is installed, none otherwise.
            sandbox_pool: warm workers for sandboxed tools, reused across calls and
                runs (a :class:`~sse_toolcalls.runtime.sandbox.WarmPool`, opened and closed by
                the application in the same event loop); a cold child per call without.
            approval_key: the application's secret (at least 16 random bytes) that
                signs each paused state (HMAC-SHA256), so that any worker holding it can
                check a state that came back, even one whose ledger did not record the
                pause. Without it, a state resumes only where the ledger that recorded
                its pause is shared. Keep it out of the browser: who holds it can make
                states (``docs/threat-model.md``).
            ledger_timeout: seconds one ledger call may take
                (:data:`~.ledgers.base.DEFAULT_LEDGER_TIMEOUT_S`).
            store_timeout: seconds the store's ``load`` or ``save`` may take
                (:data:`~.stores.base.DEFAULT_STORE_TIMEOUT_S`).

        Raises:
            UsageError: ``max_steps`` not a whole number of at least 1, a
                ``request_timeout`` not a finite positive number of seconds, a bad
                dispatcher setting, ``tracing=True`` without ``opentelemetry-api``, or
                an ``approval_key`` that is not bytes of at least 16.
        """
        check_count("max_steps", max_steps, minimum=1)
        self._approval_key = check_approval_key(approval_key)
        if request_timeout is not None:
            check_quantity("request_timeout", request_timeout, positive=True)
        self.client = client
        """The provider client."""
        self.registry = registry
        """The tools."""
        self.dispatcher = Dispatcher(
            registry,
            ledger=ledger,
            breaker=breaker,
            max_concurrency=max_concurrency,
            read_retries=read_retries,
            max_calls_per_turn=max_calls_per_turn,
            executor=executor,
            breaker_scope=breaker_scope,
            sandbox_pool=sandbox_pool,
            ledger_timeout=ledger_timeout,
        )
        """Runs each turn's calls."""
        check_quantity("store_timeout", store_timeout, positive=True)
        self.store_timeout = store_timeout
        """Seconds the store's ``load`` or ``save`` may take."""
        self.retry = retry if retry is not None else RetryPolicy()
        """The provider retry policy."""
        self.lang = lang
        """The default language of fallback messages."""
        self.max_steps = max_steps
        """Assistant turns per run."""
        self.request_timeout = request_timeout
        """Seconds one request may take, or ``None``."""
        self.options = dict(options or {})
        """Request options."""
        self.deps = deps
        """The application's dependencies, for tools' contexts."""
        self.policy = policy
        """The approval policy, or ``None``."""
        self.tracing = resolve(tracing)
        """Where spans go (a no-op without OpenTelemetry)."""
        self.store: ConversationStore = store if store is not None else InMemoryConversationStore()
        """Where conversations are kept."""

    def __repr__(self) -> str:
        tools = ", ".join(spec.name for spec in self.registry.specs())
        return (
            f"<Agent {self.client!r}, tools: {tools or 'none'}, max_steps={self.max_steps}, "
            f"retry attempts={self.retry.attempts}, policy={'yes' if self.policy else 'none'}>"
        )

    async def run(
        self,
        conversation: Conversation | str,
        *,
        conversation_id: str | None = None,
        request_id: str | None = None,
        lang: str | None = None,
        deps: Any = None,
        history: Sequence[Message] | None = None,
    ) -> AgentReply:
        """Talk with the model until it answers without calling a tool.

        **Conversation memory.** Given text and a ``conversation_id`` (and no
        ``history``), the run continues that conversation: the agent's ``store``
        gives the messages of the requests before this one, and this request's
        messages are saved back when the run ends (a fallback and a pause included),
        under its ``request_id``, so a re-submitted request replaces its own exchange
        rather than repeating itself. ``history`` (or a whole conversation instead of
        text) is the application keeping the history itself: the store is then
        neither read nor written. The reply's ``conversation`` is the whole updated
        conversation either way.

        Args:
            conversation: the user's message as text, or the whole conversation so far.
            conversation_id: a stable id of the conversation: the store's key, and
                given to tools and diagnostics (write keys do not use it). A random id
                (and no memory) by default.
            request_id: the application's id for the user's message (one per message
                the user sent, as a payment API's idempotency key): write keys are made
                of it. Re-submit the same id to resume a request (after a crash, a
                fallback): its recorded writes replay. A new id is a new request, whose
                writes run even with identical arguments. A random id by default: each
                run is a new request.
            lang: the language of a fallback message, overriding the agent's.
            deps: dependencies for tools' contexts, overriding the agent's.
            history: the messages before ``conversation`` (text), kept by the
                application instead of the store.

        Returns:
            The reply: the final answer, or a fallback message, never empty (when the
            store cannot be read, the ``internal_error`` fallback, with nothing run and
            a ``store_error`` diagnostic).

        Raises:
            UsageError: the conversation cannot be encoded for the client's dialect,
                found before any tool ran (after one ran, the reply is a fallback).
            Cancellation from the caller, unswallowed.
        """
        # The one pipeline: run is run_stream with every event but the last dropped.
        async with self.run_stream(
            conversation,
            conversation_id=conversation_id,
            request_id=request_id,
            lang=lang,
            deps=deps,
            history=history,
        ) as stream:
            return await _last_reply(stream)

    @asynccontextmanager
    async def run_stream(
        self,
        conversation: Conversation | str,
        *,
        conversation_id: str | None = None,
        request_id: str | None = None,
        lang: str | None = None,
        deps: Any = None,
        history: Sequence[Message] | None = None,
    ) -> AsyncIterator[AgentStream]:
        """:meth:`run`, as it happens: an async context manager giving the run's events.

        ``async with agent.run_stream("hi") as events: async for event in events: ...``
        gives the :data:`~.events.AgentEvent` s in order (see :mod:`.events`), the last
        always :class:`~.events.RunFinished` with the reply :meth:`run` would return
        (also ``events.reply`` after it). Same arguments, same safety: :meth:`run`
        consumes this very pipeline. The run goes on in a task of its own while the
        consumer reads (each event waits for the consumer: a slow consumer slows the
        stream, and its time counts in ``request_timeout``); leaving the block before
        the last event cancels the run, as cancelling :meth:`run` would (a write whose
        handler was cut is ``unconfirmed`` in the ledger, never repeated).

        Raises:
            UsageError: from the iteration, as :meth:`run` raises it.
        """
        remember = isinstance(conversation, str) and history is None and bool(conversation_id)
        run = _Run(
            self,
            [*(history or ()), UserMessage(text=conversation)]
            if isinstance(conversation, str)
            else list(conversation),
            conversation_id=conversation_id or uuid.uuid4().hex,
            request_id=request_id or uuid.uuid4().hex,
            lang=lang or self.lang,
            deps=deps if deps is not None else self.deps,
        )
        async with _pipeline(run, run.go, usage_errors=True, remember=remember) as stream:
            yield stream

    def run_sync(
        self,
        conversation: Conversation | str,
        *,
        conversation_id: str | None = None,
        request_id: str | None = None,
        lang: str | None = None,
        deps: Any = None,
        history: Sequence[Message] | None = None,
        backend: Literal["asyncio", "trio"] = "asyncio",
    ) -> AgentReply:
        """:meth:`run` for scripts: starts an event loop (``backend``), runs, returns.

        Raises:
            UsageError: called where an event loop already runs (``await run`` there),
                or as :meth:`run` raises it.
        """
        library = _running_loop()
        if library is not None:
            raise UsageError(
                f"run_sync was called inside a running {library} event loop; "
                "use 'await agent.run(...)' there"
            )
        go = functools.partial(
            self.run,
            conversation,
            conversation_id=conversation_id,
            request_id=request_id,
            lang=lang,
            deps=deps,
            history=history,
        )
        return anyio.run(go, backend=backend)

    async def resume(
        self,
        state: ApprovalState,
        *,
        approve: Sequence[str] = (),
        deny: Sequence[str] = (),
        deps: Any = None,
    ) -> AgentReply:
        """Go on with a paused run; see :meth:`resume_stream`, which this consumes.

        Returns:
            The reply, as from :meth:`run`.

        Raises:
            UsageError: as :meth:`resume_stream` raises it.
        """
        async with self.resume_stream(state, approve=approve, deny=deny, deps=deps) as stream:
            return await _last_reply(stream)

    @asynccontextmanager
    async def resume_stream(
        self,
        state: ApprovalState,
        *,
        approve: Sequence[str] = (),
        deny: Sequence[str] = (),
        deps: Any = None,
    ) -> AsyncIterator[AgentStream]:
        """Go on with a paused run: run the approved calls, decline the denied ones.

        Every pending call must be named once, in ``approve`` or in ``deny``, by its
        :func:`~.approval.approval_id` (its ``call_id``; :func:`~.approval.pending_ids`
        lists them, telling apart calls that share an id). The state must be the one
        paused, checked against its record in the agent's ledger or its signature
        (``approval_key``), and not yet decided: the decision is then reserved in the
        ledger, so it is taken once on every worker sharing it, a denial for good
        (see :mod:`.approval`). The paused turn then runs as
        one dispatch (in call order, under the same write keys as any run of that
        turn), a denied call answered with "the user declined"; the loop goes on and
        may pause again. The turn keeps its request's id, so an approved write has the
        key it would have had without the pause. ``deps``: as for :meth:`run` (the
        agent's by default; the state does not keep them).

        Yields:
            The events, as :meth:`run_stream` does (the approved calls' results first).

        Raises:
            ApprovalStateError: on entering, nothing run: ``state`` is not the state
                paused (edited, forged, copied with a new token or request id, badly
                signed), was already resumed here or on another worker sharing the
                ledger, or is older than ``MAX_PAUSE_AGE_S``.
            UsageError: on entering: the ids do not name each pending call exactly
                once. (When the ledger cannot be read or written, nothing runs and the
                reply is the ``internal_error`` fallback.)
        """
        if not isinstance(state, ApprovalState):
            raise ApprovalStateError(
                f"a {type(state).__name__} is not an ApprovalState", reason="tampered"
            )
        ledger = self.dispatcher.ledger
        problem: LedgerError | None = None
        approved: frozenset[str] = frozenset()
        detail: str | None = None
        try:
            # The state first, so that an edited one is refused as such whatever it
            # names; the person's answer next; the decision last, so that misuse takes
            # none.
            await verify_state(ledger, state, key=self._approval_key, now=time.time())
        except LedgerError as exc:
            problem = exc
        if problem is None:
            pending = set(pending_ids(state))
            named = [*approve, *deny]
            if len(set(named)) != len(named) or set(named) != pending:
                raise UsageError(
                    "resume names each pending call once, in approve or deny; pending: "
                    + ", ".join(sorted(pending))
                )
            try:
                approved, detail = await claim_decision(ledger, state, approve=approve, deny=deny)
            except LedgerError as exc:
                problem = exc
        if problem is not None:
            # Neither the state nor the decision could be checked against the ledger:
            # nothing of the turn may run, and the user still gets a reply. The state
            # is unchecked, so only its plain texts and messages are read from it.
            run = _Run(
                self,
                list(state.messages) if isinstance(state.messages, tuple | list) else [],
                conversation_id=_text_or(state.conversation_id, ""),
                request_id=_text_or(state.request_id, ""),
                lang=_text_or(state.lang, self.lang),
                deps=deps if deps is not None else self.deps,
            )
            go = functools.partial(run.refused, problem)
        else:
            run = self._resumed_run(state, deps)
            if detail is not None:
                run._note(Diagnostic(kind="approval_record_error", message=detail))
            declined = dict(state.denied)
            decisions: list[Decision] = [
                Deny(reason=declined[name])
                if name in declined
                else ("allow" if name not in deny else "ask")
                for name in approval_ids(state.calls)
            ]
            go = functools.partial(run.go, resumed=(state, decisions, approved))
        async with _pipeline(run, go, usage_errors=False, remember=False) as stream:
            yield stream

    def _resumed_run(self, state: ApprovalState, deps: Any) -> _Run:
        """The run a checked state goes on as, where it paused."""
        run = _Run(
            self,
            list(state.messages),
            conversation_id=state.conversation_id,
            request_id=state.request_id,
            lang=state.lang,
            deps=deps if deps is not None else self.deps,
        )
        run.retries = dict(state.retries)
        run.reports = list(state.reports)
        run.diagnostics = list(state.diagnostics)
        run.steps, run.requests = state.steps, state.requests
        run.history_length = state.history_length
        run.usage, run.provider_retries = state.usage, state.provider_retries
        run.started -= state.elapsed
        return run


def _text_or(value: object, default: str) -> str:
    return value if isinstance(value, str) else default


def _running_loop() -> str | None:
    """The event loop running in this thread (``asyncio``, ``trio``), or ``None``.

    Asked of each library itself: anyio no longer brings sniffio along."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        return "asyncio"
    trio = sys.modules.get("trio")
    if trio is not None:
        try:
            trio.lowlevel.current_trio_token()
        except RuntimeError:
            pass
        else:
            return "trio"
    return None


async def _last_reply(stream: AgentStream) -> AgentReply:
    async for _event in stream:
        pass
    if stream.reply is None:  # pragma: no cover - the pipeline always ends on the reply
        raise UsageError("the run ended without a reply")
    return stream.reply


@asynccontextmanager
async def _pipeline(
    run: _Run,
    go: Callable[[], Awaitable[AgentReply]],
    *,
    usage_errors: bool,
    remember: bool,
) -> AsyncIterator[AgentStream]:
    """Run ``go`` in a task of its own, its events sent to the consumer one by one.

    The one place where a run's failures become its reply: ``usage_errors`` lets a
    ``UsageError`` found before any tool ran reach the consumer (as :meth:`Agent.run`
    promises); anything else is the ``internal_error`` fallback. ``remember``: load the
    conversation's earlier requests from the agent's store first (a store that cannot be
    read is the ``internal_error`` fallback, nothing run); the request's exchange is
    saved at the end whenever the run uses the store. The run's span covers it all, in
    the task that runs it, so the requests' and tools' spans are its children.
    """
    # No buffer: each event waits for its reader, so nothing queues up behind a slow UI.
    send, receive = anyio.create_memory_object_stream[AgentEvent](0)
    stream = AgentStream(receive)
    run.emit = send.send
    failure: Exception | None = None

    async def produce() -> None:
        async with send:
            with run.span:
                reply = await answer()
                if reply is None:
                    return
                reply = run.done(await run.saved(reply))
            if reply.is_fallback and reply.reason is not None:
                await send.send(FallbackShown(reason=reply.reason, text=reply.text))
            if reply.state is not None:
                await send.send(ApprovalRequested(calls=reply.pending_approvals, state=reply.state))
            await send.send(RunFinished(reply=reply))

    async def answer() -> AgentReply | None:
        if remember:
            try:
                agent = run.agent
                exchanges = await within_deadline(
                    "load", agent.store_timeout, lambda: agent.store.load(run.conversation_id)
                )
            except Exception as exc:  # ours, or a bug in the application's store
                run.store_failed(exc, "loaded")
                return run._fallback("internal_error")
            earlier = history_before(exchanges, run.request_id)
            run.messages[:0] = earlier
            run.history_length = len(earlier)
        try:
            return await go()
        except UsageError as exc:
            if usage_errors and not run.reports:
                # Misuse, and nothing has run yet: the caller must hear of it.
                stream._failure = exc
                return None
            return run.crashed(exc)
        except Exception as exc:
            # Defence in depth: each failure we know of is handled where it happens;
            # this is the last line, so that the user always gets a reply.
            return run.crashed(exc)

    async with anyio.create_task_group() as group:
        group.start_soon(produce)
        try:
            yield stream
        except Exception as exc:
            # Raised outside the task group below, as itself (not in an ExceptionGroup).
            failure = exc
        finally:
            # The consumer is done (or left early): a run still going is cancelled.
            group.cancel_scope.cancel()
            receive.close()
    if failure is not None:
        raise failure


class _Run:
    """The state of one :meth:`Agent.run`."""

    def __init__(
        self,
        agent: Agent,
        messages: list[Message],
        *,
        conversation_id: str,
        request_id: str,
        lang: str,
        deps: Any,
    ):
        self.agent = agent
        self.messages = messages
        self.conversation_id = conversation_id
        self.request_id = request_id
        self.deps = deps
        self.lang = lang
        self.diagnostics: list[Diagnostic] = []
        self.reports: list[CallReport] = []
        self.steps = 0
        self.requests = 0
        self.retries: dict[str, int] = {}  # ToolRetry answers per tool, this run
        self.span = agent.tracing.run(
            agent.client, conversation_id=conversation_id, request_id=request_id
        )
        # Messages from the conversation store at the head of ``messages``; ``None``
        # when the run does not use the store (the application keeps the history).
        self.history_length: int | None = None
        self.usage = Usage()
        self.provider_retries = 0
        self.started = time.monotonic()
        self.emit: Callable[[AgentEvent], Awaitable[None]] = _discard

    async def refused(self, problem: LedgerError) -> AgentReply:
        """The reply of a resume whose state or decision the ledger could not check."""
        self._note(
            Diagnostic(
                kind="approval_record_error",
                message="the approval could not be checked against the ledger, so "
                f"nothing ran: {safe_str(problem)}",
                exception=safe_repr(problem),
            )
        )
        return self._fallback("internal_error")

    async def go(
        self, resumed: tuple[ApprovalState, list[Decision], frozenset[str]] | None = None
    ) -> AgentReply:
        agent = self.agent
        log(
            logger,
            logging.DEBUG,
            "run_started",
            "resumed after approval" if resumed is not None else "started",
            provider=_dialect(agent.client),
            conversation_id=self.conversation_id,
            request_id=self.request_id,
        )
        tools = agent.registry.specs()
        refused_before: set[str] = set()
        if resumed is not None:
            # The paused turn first: its calls and decisions come from the state; a call
            # the person denied is the "ask" left in the decisions.
            state, decisions, approved = resumed
            refused_before = set(state.refused_before)
            reports = await self._dispatch(state.calls, decisions, by_user=True, approved=approved)
            done = self._after_turn(reports, refused_before)
            if isinstance(done, AgentReply):
                return done
            refused_before = done
        while self.steps < agent.max_steps:
            finished = await self._request(tools)
            if finished is None:
                return self._fallback("provider_unavailable")
            self.steps += 1
            # The turn's index in the conversation, for the approval policy's context and
            # the paused state (write keys no longer use it: they are request-scoped).
            turn = sum(isinstance(m, AssistantMessage) for m in self.messages)
            self.messages.append(
                AssistantMessage(
                    text=finished.text, calls=finished.calls, reasoning=finished.reasoning
                )
            )
            if not finished.calls:
                if not finished.text.strip():
                    self._note(Diagnostic(kind="empty_answer", message="no text and no calls"))
                    return self._fallback("provider_unavailable")
                return self._reply(finished.text, None)
            decisions = [await self._decide(call, turn) for call in finished.calls]
            if "ask" in decisions:
                return await self._paused(finished, turn, decisions, refused_before)
            reports = await self._dispatch(finished.calls, decisions, by_user=False)
            done = self._after_turn(reports, refused_before)
            if isinstance(done, AgentReply):
                return done
            refused_before = done
        self._note(Diagnostic(kind="step_limit", message=f"{agent.max_steps} steps taken"))
        return self._fallback("step_limit")

    async def _decide(self, call: ToolCall, turn: int) -> Decision:
        """The policy's answer for one call, ``needs_approval`` applied; fail closed."""
        tool = self.agent.registry.get(call.name)
        decision: Decision = "allow"
        policy = self.agent.policy
        if policy is not None:
            context = ApprovalContext(conversation_id=self.conversation_id, turn=turn, tool=tool)
            try:
                answer = policy(context, call)
                if inspect.isawaitable(answer):
                    answer = await answer
            except Exception as exc:
                self._note(from_exception(exc))
                return Deny(reason="the application's permission check failed")
            if not (isinstance(answer, Deny) or answer in ("allow", "ask")):
                self._note(
                    Diagnostic(
                        kind="policy_error",
                        message=f"the policy answered {safe_repr(answer)} for {call.name}",
                        tool=call.name,
                        call_id=call.call_id,
                    )
                )
                return Deny(reason="the application's permission check failed")
            decision = answer
        if decision == "allow" and tool is not None and tool.needs_approval:
            return "ask"
        return decision

    async def _dispatch(
        self,
        calls: Sequence[ToolCall],
        decisions: Sequence[Decision],
        *,
        by_user: bool,
        approved: frozenset[str] = frozenset(),
    ) -> list[CallReport]:
        """Run the allowed calls of a turn as one dispatch; answer the others as declined.

        ``"ask"`` here is a call the person denied (``by_user``); ``approved``: the
        digests of the calls the person approved, which the dispatcher requires of a
        ``needs_approval`` tool's call."""
        allowed = [call for call, d in zip(calls, decisions, strict=True) if d == "allow"]
        for call, decision in zip(calls, decisions, strict=True):
            if isinstance(decision, Deny):
                await self.emit(ToolCallRefused(call=call, reason=decision.reason))
        ran = iter(
            await self.agent.dispatcher.dispatch(
                allowed,
                request_id=self.request_id,
                conversation_id=self.conversation_id,
                deps=self.deps,
                approved=approved,
            )
            if allowed
            else []
        )
        reports: list[CallReport] = []
        for call, decision in zip(calls, decisions, strict=True):
            if decision == "allow":
                reports.append(next(ran))
                continue
            reason = decision.reason if isinstance(decision, Deny) else None
            if reason is None and not by_user:  # pragma: no cover - asks pause the turn
                raise UsageError("a call waiting for approval reached dispatch")
            problem = Diagnostic(
                kind="call_declined",
                message=f"{call.name} was declined: {reason or 'by the user'}",
                tool=call.name,
                call_id=call.call_id,
            )
            reports.append(
                CallReport(
                    call=call,
                    result=result_texts.declined_result(call, reason=reason),
                    outcome="declined",
                    runs=0,
                    diagnostics=(report(problem, level=logging.INFO),),
                )
            )
        for done in reports:
            await self.emit(
                ToolCallResult(
                    call=done.call, result=done.result, outcome=done.outcome, report=done
                )
            )
        return reports

    async def _paused(
        self,
        finished: StreamFinished,
        turn: int,
        decisions: Sequence[Decision],
        refused_before: set[str],
    ) -> AgentReply:
        pending = tuple(
            call for call, d in zip(finished.calls, decisions, strict=True) if d == "ask"
        )
        state = ApprovalState(
            token=uuid.uuid4().hex,
            conversation_id=self.conversation_id,
            request_id=self.request_id,
            lang=self.lang,
            turn=turn,
            messages=tuple(self.messages),
            calls=finished.calls,
            denied=tuple(
                (name, d.reason)
                for name, d in zip(approval_ids(finished.calls), decisions, strict=True)
                if isinstance(d, Deny)
            ),
            pending=pending,
            reports=tuple(self.reports),
            diagnostics=tuple(self.diagnostics),
            refused_before=tuple(sorted(refused_before)),
            steps=self.steps,
            requests=self.requests,
            retries=tuple(sorted(self.retries.items())),
            history_length=self.history_length,
            usage=self.usage,
            provider_retries=self.provider_retries,
            elapsed=time.monotonic() - self.started,
            paused_at=time.time(),
        )
        key = self.agent._approval_key
        state = sealed(state, key)
        try:
            await record_pause(self.agent.dispatcher.ledger, state)
        except LedgerError as exc:
            self._note(
                Diagnostic(
                    kind="approval_record_error",
                    message=f"the pause could not be recorded in the ledger: {safe_str(exc)}",
                    exception=safe_repr(exc),
                )
            )
            if key is None:
                # Unrecorded and unsigned, the state could never be checked on resume:
                # no pause is offered that no one could answer. The turn's calls go
                # too, so the conversation kept holds no call without its result.
                self.messages.pop()
                return self._fallback("internal_error")
        reply = self._reply(finished.text, None)
        return dataclasses.replace(reply, pending_approvals=pending, state=state)

    def _after_turn(
        self, reports: list[CallReport], refused_before: set[str]
    ) -> AgentReply | set[str]:
        """Record a turn's reports; the fallback when a corrected call was refused again,
        else the tools refused this turn."""
        self.reports += reports
        self.diagnostics += [d for r in reports for d in r.diagnostics]
        self.messages.append(ToolResultsMessage(results=tuple(r.result for r in reports)))
        refused_now = {r.call.name for r in reports if r.outcome == "refused"}
        if refused_now & refused_before:
            self._note(
                Diagnostic(
                    kind="tool_arguments",
                    message="the model's corrected call was refused again: "
                    + ", ".join(sorted(refused_now & refused_before)),
                )
            )
            return self._fallback("tool_arguments")
        spent = [r.call.name for r in reports if r.outcome == "retry"]
        for name in spent:
            self.retries[name] = self.retries.get(name, 0) + 1
        registry = self.agent.registry
        over = sorted({n for n in spent if self.retries[n] > _retry_budget(registry, n)})
        if over:
            self._note(
                Diagnostic(
                    kind="tool_arguments",
                    message="the model used up its ToolRetry budget: " + ", ".join(over),
                )
            )
            return self._fallback("tool_arguments")
        return refused_now

    async def _request(self, tools: Sequence[ToolSpec]) -> StreamFinished | None:
        """One turn from the provider, with retries; ``None`` when it cannot answer."""
        policy = self.agent.retry
        for attempt in range(1, policy.attempts + 1):
            self.requests += 1
            await self.emit(RequestStarted(step=self.steps + 1, attempt=attempt))
            try:
                with self.agent.tracing.request(
                    self.agent.client, attempt=attempt, messages=self.messages
                ) as span:
                    finished = span.finished(await self._stream(tools))
                log(
                    logger,
                    logging.DEBUG,
                    "turn_received",
                    f"{len(finished.calls)} call(s), stop reason {finished.stop_reason}",
                    provider=_dialect(self.agent.client),
                    attempt=attempt,
                    stop_reason=finished.stop_reason,
                    calls=len(finished.calls),
                    usage=finished.usage,
                )
                return finished
            except StreamError as error:
                retry = policy.should_retry(error, attempt)
                diagnostic = from_exception(error, attempt=attempt, retried=retry)
                self._note(diagnostic)
                if not retry:
                    return None
                delay = policy.delay(attempt, error)
                self.provider_retries += 1
                await self.emit(RetryScheduled(attempt=attempt, delay=delay, diagnostic=diagnostic))
                await policy.sleep(delay)
        return None  # pragma: no cover - the last attempt returns above

    async def _stream(self, tools: Sequence[ToolSpec]) -> StreamFinished:
        agent = self.agent
        last: StreamFinished | None = None
        timeout = agent.request_timeout
        previews = _Previews(_dialect(agent.client))
        deadline = anyio.CancelScope()  # replaced by the request's own deadline below
        try:
            with anyio.fail_after(timeout) as deadline:
                events = agent.client.stream_events(self.messages, tools, **agent.options)
                try:
                    async for event in events:
                        if isinstance(event, StreamFinished):
                            last = event
                        elif isinstance(event, ToolCallArgumentsDelta):
                            await self.emit(previews.preview(event))
                        elif isinstance(event, ToolCallStarted):
                            previews.started(event)
                            await self.emit(event)
                        elif isinstance(event, TextDelta | ReasoningDelta | ToolCallCompleted):
                            await self.emit(event)
                finally:
                    closer = getattr(events, "aclose", None)
                    if closer is not None:
                        with anyio.CancelScope(shield=True):
                            await closer()
        except TimeoutError as exc:
            # Ours only when our deadline fired; else the client's own I/O timed out
            # (there may be no request_timeout at all): a timeout all the same.
            detail = (
                f"the request took longer than {timeout:g} s"
                if timeout is not None and deadline.cancelled_caught
                else f"the client timed out: {safe_str(exc) or type(exc).__name__}"
            )
            raise StreamTimeoutError(detail, provider=_dialect(agent.client)) from exc
        if last is None:
            # Our clients end every good stream with StreamFinished or raise; a client
            # that simply stops has been cut off, as far as anyone can tell.
            raise TruncatedStreamError(
                "the stream ended without its end event",
                reason="eof",
                provider=_dialect(agent.client),
            )
        self.usage += usage_of(_dialect(agent.client), last.usage)
        return last

    def done(self, reply: AgentReply) -> AgentReply:
        """The run's end, on its span and in the log; returns ``reply``."""
        self.span.reply(reply)
        log(
            logger,
            logging.DEBUG,
            "run_finished",
            f"fallback {reply.reason}" if reply.reason else "answered",
            provider=_dialect(self.agent.client),
            conversation_id=self.conversation_id,
            request_id=self.request_id,
            steps=reply.steps,
            requests=reply.requests,
            calls=len(reply.calls),
            fallback=reply.reason,
            paused=bool(reply.pending_approvals),
        )
        return reply

    async def saved(self, reply: AgentReply) -> AgentReply:
        """Save this request's exchange to the store (when the run uses it); a store
        that fails is a diagnostic on the reply, which still goes to the user."""
        if self.history_length is None:
            return reply
        try:
            store, sent = self.agent.store, self.messages[self.history_length :]
            await within_deadline(
                "save",
                self.agent.store_timeout,
                lambda: store.save(self.conversation_id, self.request_id, sent),
            )
        except Exception as exc:  # the reply still goes to the user
            self.store_failed(exc, "saved")
            return dataclasses.replace(reply, diagnostics=tuple(self.diagnostics))
        return reply

    def store_failed(self, exc: Exception, verb: str) -> None:
        self.diagnostics.append(
            report(
                Diagnostic(
                    kind="store_error",
                    message=f"the conversation could not be {verb}: {safe_str(exc)}",
                    exception=safe_repr(exc),
                ),
                level=logging.ERROR,
            )
        )

    def crashed(self, exc: Exception) -> AgentReply:
        """The ``internal_error`` fallback for an exception that stopped the run."""
        trace = "".join(traceback.format_exception(exc))
        diagnostic = Diagnostic(
            kind="internal_error",
            message=f"the run stopped on an unexpected {type(exc).__name__}: {safe_str(exc)}",
            exception=safe_repr(exc),
            body=clean_text(trace[-MAX_BODY_CHARS:]),
        )
        self.diagnostics.append(report(diagnostic, level=logging.ERROR))
        return self._fallback("internal_error")

    def _note(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(report(diagnostic, level=logging.WARNING))

    def _fallback(self, reason: FallbackReason) -> AgentReply:
        return self._reply(fallback_message(reason, self.lang), reason)

    def _reply(self, text: str, reason: FallbackReason | None) -> AgentReply:
        return AgentReply(
            text=text,
            is_fallback=reason is not None,
            reason=reason,
            diagnostics=tuple(self.diagnostics),
            calls=tuple(r.call for r in self.reports),
            results=tuple(r.result for r in self.reports),
            reports=tuple(self.reports),
            conversation=tuple(self.messages),
            steps=self.steps,
            requests=self.requests,
            usage=self.usage,
            retries=self.provider_retries,
            elapsed=time.monotonic() - self.started,
        )


async def _discard(event: AgentEvent) -> None:
    """The emitter of a run outside a pipeline: nobody listens."""


def _json_argument_deltas(dialect: str) -> bool:
    try:
        return spec_for(dialect).json_argument_deltas
    except UnknownDialectError:
        return True


class _Previews:
    """The arguments parsed so far of each call of one turn, one reader per call."""

    def __init__(self, dialect: str | None) -> None:
        # Where the argument deltas are not pieces of a JSON text (Gemini's partialArgs
        # path updates) no preview is made of them: the completed call carries them.
        self._text = dialect is None or _json_argument_deltas(dialect)
        self._readers: dict[int, PartialJSON] = {}
        self._names: dict[int, str] = {}

    def started(self, event: ToolCallStarted) -> None:
        self._names[event.index] = event.name

    def preview(self, event: ToolCallArgumentsDelta) -> ToolArgumentsPreview:
        arguments: Any = None
        if self._text:
            reader = self._readers.get(event.index)
            if reader is None:
                reader = self._readers[event.index] = PartialJSON()
            arguments = reader.feed(event.delta)
        return ToolArgumentsPreview(
            index=event.index,
            name=self._names.get(event.index, ""),
            delta=event.delta,
            arguments=arguments,
        )


def _dialect(client: object) -> str | None:
    dialect = getattr(client, "dialect", None)
    return dialect if isinstance(dialect, str) else None


def _retry_budget(registry: ToolRegistry, name: str) -> int:
    tool = registry.get(name)
    return tool.retries if tool is not None else 0


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
