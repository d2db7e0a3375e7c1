"""Running one turn's calls: concurrently where allowed, safely always.

:meth:`Dispatcher.dispatch` takes the complete calls of one assistant turn and returns
one :class:`CallReport` per call, in call order, each with its call and its result:

- **Checked first.** Every call is validated by the registry before anything runs; an
  unknown tool or invalid arguments give an error result under the call's own id, and
  nothing runs for that call.
- **Approval.** A call to a ``needs_approval`` tool runs only when the caller hands in
  its :func:`~._seal.call_digest` (of the call exactly as sent, and the request) in
  ``approved``; else it is declined, nothing run. This is the lowest layer that runs
  tools, so no entry point (the agent, an MCP server, an application's own loop) runs
  such a call without a person's answer for that very call.
- **Order.** Calls to ``parallel_safe`` tools run at the same time, up to
  ``max_concurrency``; a call to a tool that is not parallel-safe is a barrier: it starts
  after every earlier call of the turn has finished, and later calls start after it (a
  file system must see ``cd`` before ``mkdir``). All of it in one anyio task group.
- **Running** a handler is :mod:`.execute`'s job, the one place it happens: the
  dispatcher calls :func:`~.execute.run_once` with its ``executor`` (in-process by
  default; the seam for a sandbox backend).
- **Timeouts** per tool (``Tool.timeout``, applied by :func:`~.execute.run_once`); a sync
  handler that overruns is abandoned in its worker thread (Python cannot stop it) and
  answered as timed out.
- **Failures stay local.** A handler that raises or times out gives an error result for
  its own call; its siblings go on. Cancellation from outside propagates: the task group
  cancels every call still running and ``dispatch`` raises, returning nothing partial.
- **Reads** (``effect="read"``) that fail with a *transient* fault (a timeout, a
  connection error, a type the tool declares ``transient``) are retried
  ``read_retries`` times; a deterministic exception is not re-run (it would only fail
  again, and count twice).
- **Writes** (``effect="write"``) run at most once per idempotency key (see
  :mod:`.ledgers`; the key names the user request, ``request_id``, and the call's place
  in it): the key is reserved before the handler starts and the result
  recorded when it answers (an error included). A write whose key is done returns the
  recorded result, marked as a replay with the time the action ran; one whose key is
  still in flight (a crash or cancellation mid-write)
  is not repeated, and the model is told it may have happened. A failed write is never
  retried within its request (its failure replays); a new request runs it again.
- **Circuit breaker** per tool, or per what ``breaker_scope`` names (see
  :mod:`.breaker`): only faults of the tool count (:func:`~.breaker.blame`), never its
  bad input; a refused call gets a ``tool_unavailable`` error result and does not run.
- **Calls per turn** are capped (``max_calls_per_turn``): a turn asking for more is
  refused whole, before anything is validated or run, with a ``too_many_calls`` error
  result for every call (outcome ``over_limit``), so no turn is ever half executed and
  the model can ask again in smaller turns.
- **Linear.** Each call waits on at most the calls since the previous barrier (a barrier
  waits for those, a later call for the barrier alone), so a turn's waiting is linear in
  its calls however barriers and parallel calls mix.

Every text the model reads in a result comes from :mod:`sse_toolcalls.runtime.tools.results`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
import uuid
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from .._checks import check_count, check_quantity
from .._faces import publish
from .._jsonsafe import safe_repr, safe_str
from .._logging import log
from ..calls import ToolCall, ToolResult
from ..errors import UsageError
from . import tracing
from ._seal import call_digest
from .breaker import Blame, CircuitBreaker, blame
from .diagnostics import Diagnostic, logger, report
from .errors import (
    ApprovalStateError,
    CircuitOpenError,
    LedgerError,
    ToolError,
    ToolErrorReply,
    ToolExecutionError,
    ToolRetry,
    ToolTimeoutError,
)
from .execute import Executor, run_local, run_once
from .keyclaim import KeyConflict, claim_key
from .ledgers.base import (
    DEFAULT_LEDGER_TIMEOUT_S,
    IdempotencyLedger,
    LedgerEntry,
    SyncIdempotencyLedger,
    as_async_ledger,
    call_ledger,
    idempotency_key,
    key_arguments,
)
from .ledgers.memory import InMemoryLedger
from .recorded import recorded_content, replayed_parts
from .report import CallOutcome, CallReport
from .tools import results
from .tools.context import ToolContext

if TYPE_CHECKING:
    from .sandbox import WarmPool
    from .tools.registry import ToolRegistry, ValidatedCall

__all__ = [
    "DEFAULT_IN_FLIGHT_WAIT_S",
    "DEFAULT_MAX_CALLS_PER_TURN",
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_READ_RETRIES",
    "BreakerScope",
    "Dispatcher",
    "KeyFunction",
    "per_tool",
]

DEFAULT_MAX_CONCURRENCY = 8
"""Calls of one turn running at once: models rarely ask for more than a handful in
parallel, and a bound keeps a runaway turn from opening hundreds of connections."""

DEFAULT_MAX_CALLS_PER_TURN = 128
"""Calls one assistant turn may ask for: models ask for a handful, parallel tool calling
for a few dozen at most; a turn of thousands is a runaway loop or an attack, and is
refused whole rather than run (bulk work belongs in one tool taking a list)."""

DEFAULT_READ_RETRIES = 1
"""Extra runs of a failed read: one absorbs a blip; a tool failing twice in a row is
failing, and the model is better told so than kept waiting."""

DEFAULT_IN_FLIGHT_WAIT_S = 10.0
"""Seconds a write waits, at most, on its key held in flight by another worker (two
copies of one request racing) for the owner's result, to replay it: a write takes well
under a second to a few seconds, and the user waits for the reply meanwhile. Past it,
or once the owner is gone (see :meth:`Dispatcher._owner_gone`), the call answers
"this action may have run". ``0`` answers at once, as before issue 29."""

_POLL_FIRST_S = 0.02
"""First pause between two looks at a key in flight, in seconds; doubled each look."""

_POLL_MAX_S = 0.5
"""Longest pause between two looks at a key in flight, in seconds: a ledger read costs
a millisecond, so two reads a second per waiting call is cheap, and the replay lands at
most half a second after the owner's result."""

KeyFunction = Callable[["ValidatedCall", str, int], str]
"""Makes a write's idempotency key from (validated call, request id, occurrence in its
turn); the default is :func:`~.ledgers.base.idempotency_key`."""


BreakerScope = Callable[["ValidatedCall", str], str]
"""Names the circuit a call counts against, from (validated call, conversation id): the
tool name by default; per tool and tenant, say,
``lambda v, conversation: f"{v.tool.name}@{conversation.partition('/')[0]}"``."""


def _with_context(
    checked: ValidatedCall | ToolResult, conversation_id: str, request_id: str, deps: Any
) -> ValidatedCall | ToolResult:
    if isinstance(checked, ToolResult) or checked.tool.context_parameter is None:
        return checked
    context = ToolContext(
        conversation_id=conversation_id, request_id=request_id, call=checked.call, deps=deps
    )
    return dataclasses.replace(checked, context=context)


def per_tool(validated: ValidatedCall, conversation_id: str) -> str:
    """The default :data:`BreakerScope`: one circuit per tool."""
    return validated.tool.name


def _default_key(validated: ValidatedCall, request_id: str, occurrence: int) -> str:
    return idempotency_key(
        tool=validated.tool.name,
        arguments=validated.kwargs,
        json_arguments=validated.arguments,
        request_id=request_id,
        occurrence=occurrence,
    )


class Dispatcher:
    """Runs the calls of a turn with a registry, a ledger and a circuit breaker."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        ledger: IdempotencyLedger | SyncIdempotencyLedger | None = None,
        breaker: CircuitBreaker | None = None,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        read_retries: int = DEFAULT_READ_RETRIES,
        key: KeyFunction = _default_key,
        max_calls_per_turn: int = DEFAULT_MAX_CALLS_PER_TURN,
        executor: Executor = run_local,
        breaker_scope: BreakerScope = per_tool,
        sandbox_pool: WarmPool | None = None,
        ledger_timeout: float = DEFAULT_LEDGER_TIMEOUT_S,
        in_flight_wait: float = DEFAULT_IN_FLIGHT_WAIT_S,
    ) -> None:
        """Args:
            registry: the tools.
            ledger: where writes are recorded; an :class:`InMemoryLedger` by default
                (pass a :class:`~.ledgers.sqlite.SQLiteLedger` to be safe across restarts).
            breaker: the circuit breaker; a default one (3 failures, 60 s) if omitted.
            max_concurrency: calls of a turn running at once (at least 1).
            read_retries: extra runs of a failed read (0 disables).
            key: how a write's idempotency key is made.
            max_calls_per_turn: calls one turn may ask for (at least 1); a turn asking
                for more is refused whole.
            executor: how a handler is run (:class:`~.execute.Executor`); in this
                process by default (:func:`~.execute.run_local`).
            breaker_scope: names the circuit of a call (:data:`BreakerScope`): per
                tool by default.
            sandbox_pool: warm workers for sandboxed tools (a
                :class:`~sse_toolcalls.runtime.sandbox.WarmPool` the application opened, and
                closes); each sandboxed call starts a cold child without one.
            ledger_timeout: seconds one ledger call may take
                (:data:`~.ledgers.base.DEFAULT_LEDGER_TIMEOUT_S`); past it the call has
                failed, and the user still gets a reply.
            in_flight_wait: seconds a write waits, at most, for another worker's
                result on its key (:data:`DEFAULT_IN_FLIGHT_WAIT_S`); ``0`` for none.

        Raises:
            UsageError: a concurrency or a call cap that is not a whole number of at
                least 1, retries that are not one of at least 0, or a ledger timeout
                that is not a finite positive number of seconds, or a wait that is not
                one of at least 0.
        """
        check_count("max_concurrency", max_concurrency, minimum=1)
        check_count("max_calls_per_turn", max_calls_per_turn, minimum=1)
        check_count("read_retries", read_retries, minimum=0)
        check_quantity("ledger_timeout", ledger_timeout, positive=True)
        check_quantity("in_flight_wait", in_flight_wait)
        self.registry = registry
        """The tools."""
        self.ledger: IdempotencyLedger = (
            as_async_ledger(ledger) if ledger is not None else InMemoryLedger()
        )
        """Where writes are recorded."""
        self.breaker = breaker if breaker is not None else CircuitBreaker()
        """The circuit breaker."""
        self.max_concurrency = max_concurrency
        """Calls of a turn running at once."""
        self.read_retries = read_retries
        """Extra runs of a failed read."""
        self.max_calls_per_turn = max_calls_per_turn
        """Calls one turn may ask for."""
        self.executor = executor
        """How a handler is run."""
        self.sandbox_pool = sandbox_pool
        """Warm workers for sandboxed tools, or ``None`` (a cold child per call)."""
        self.ledger_timeout = ledger_timeout
        """Seconds one ledger call may take."""
        self.in_flight_wait = in_flight_wait
        """Seconds a write waits, at most, for another worker's result on its key."""
        self._key = key
        self._scope = breaker_scope

    async def dispatch(
        self,
        calls: Sequence[ToolCall],
        *,
        request_id: str | None = None,
        conversation_id: str = "",
        deps: Any = None,
        approved: Collection[str] = (),
    ) -> list[CallReport]:
        """Run the calls of one turn; see the module docstring for the rules.

        Args:
            calls: the turn's complete calls, in call order.
            request_id: the id of the user request the turn serves (write keys are
                made of it: see :func:`~.ledgers.base.idempotency_key`); give the same id to
                every turn of one request, and again when it is resumed. ``None``: a
                new request of its own, so this turn's writes replay for nothing else.
            conversation_id: the conversation's id (given to ``breaker_scope`` and to
                a tool's :class:`~sse_toolcalls.runtime.tools.ToolContext`).
            deps: the application's dependencies, for a tool's ``ToolContext``.
            approved: the :func:`~sse_toolcalls.runtime.approval.call_digest` of each
                call a person approved (with this ``request_id``); a call to a
                ``needs_approval`` tool whose digest is not here is declined, and so is
                every such call without a ``request_id`` (its digest cannot be known).

        Returns:
            One report per call, in call order.

        Raises:
            Whatever cancels the caller (cancellation is never swallowed).
        """
        if len(calls) > self.max_calls_per_turn:
            return [self._over_limit(call, len(calls), log=n == 0) for n, call in enumerate(calls)]
        request = request_id if request_id is not None else uuid.uuid4().hex
        checked = [
            _with_context(self.registry.validate(call), conversation_id, request, deps)
            for call in calls
        ]
        keys = self._keys(checked, request)
        waiting = [
            _unapproved(call, v, request, approved) for call, v in zip(calls, checked, strict=True)
        ]
        reports: list[CallReport | None] = [None] * len(calls)
        finished = [anyio.Event() for _ in calls]
        limiter = anyio.CapacityLimiter(self.max_concurrency)

        async def run(i: int, after: list[anyio.Event]) -> None:
            for event in after:
                await event.wait()
            try:
                if waiting[i]:
                    reports[i] = _declined(calls[i])
                    return
                async with limiter:
                    reports[i] = await self._one(calls[i], checked[i], keys[i], conversation_id)
            finally:
                finished[i].set()

        async with anyio.create_task_group() as group:
            # A barrier needs every earlier call finished; the calls since the previous
            # barrier (which itself waited for everything before it) are enough, so each
            # call is waited on by at most one barrier: linear, where waiting on every
            # earlier call was quadratic (4,000 barrier calls: 39 s, now 0.6 s,
            # as fast as 4,000 parallel-safe ones: benchmarks/bench_dispatch.py).
            barrier: int | None = None  # the last call that is not parallel-safe
            since: list[anyio.Event] = []  # calls started since that barrier
            for i, outcome in enumerate(checked):
                alone = not isinstance(outcome, ToolResult) and not outcome.tool.parallel_safe
                if alone:
                    after = ([finished[barrier]] if barrier is not None else []) + since
                    barrier, since = i, []
                else:
                    after = [finished[barrier]] if barrier is not None else []
                    since.append(finished[i])
                group.start_soon(run, i, after)
        done = [r for r in reports if r is not None]
        if len(done) != len(calls):  # pragma: no cover - every task fills its slot or raises
            raise UsageError("a call of the turn was left without a report")
        return done

    # ----------------------------------------------------------------------------------

    def _keys(self, checked: list[ValidatedCall | ToolResult], request_id: str) -> list[str | None]:
        seen: dict[tuple[str, str], int] = {}
        keys: list[str | None] = []
        for outcome in checked:
            if isinstance(outcome, ToolResult) or outcome.tool.effect != "write":
                keys.append(None)
                continue
            # The occurrence counts calls that are one request to the handler, by the
            # same canonical form the key is made of.
            identity = (outcome.tool.name, key_arguments(outcome.kwargs, outcome.arguments))
            occurrence = seen.get(identity, 0)
            seen[identity] = occurrence + 1
            keys.append(self._key(outcome, request_id, occurrence))
        return keys

    async def _one(
        self,
        call: ToolCall,
        checked: ValidatedCall | ToolResult,
        key: str | None,
        conversation_id: str,
    ) -> CallReport:
        with tracing.tool_span(call, checked) as span:
            done = await self._handle(call, checked, key, conversation_id)
            sandboxed = not isinstance(checked, ToolResult) and checked.tool.sandbox is not None
            tracing.tool_report(span, done, sandboxed)
        log(
            logger,
            logging.DEBUG,
            "call_finished",
            f"{call.name}: {done.outcome} after {done.runs} run(s)",
            tool=call.name,
            call_id=call.call_id,
            outcome=done.outcome,
            runs=done.runs,
        )
        return done

    async def _handle(
        self,
        call: ToolCall,
        checked: ValidatedCall | ToolResult,
        key: str | None,
        conversation_id: str,
    ) -> CallReport:
        if isinstance(checked, ToolResult):
            return CallReport(call=call, result=checked, outcome="refused", runs=0)
        circuit = self._scope(checked, conversation_id)
        if checked.tool.effect == "write" and key is not None:
            if self._key is not _default_key:
                return await self._claimed_write(checked, key, circuit)
            return await self._write(checked, key, circuit)
        return await self._read(checked, circuit)

    async def _claimed_write(self, validated: ValidatedCall, key: str, circuit: str) -> CallReport:
        """A write under a key of the application's own :data:`KeyFunction`, which need
        not be made of the arguments: the key is first claimed for this tool and these
        arguments (:mod:`.keyclaim`), so a key reused for another call is refused
        instead of replaying the other call's result. The default key is made of the
        tool and arguments, so it needs no claim."""
        arguments = key_arguments(validated.kwargs, validated.arguments)
        try:
            claim = await claim_key(
                self.ledger, key, validated.tool.name, arguments, deadline=self.ledger_timeout
            )
        except KeyConflict as exc:
            result = results.key_conflict_result(validated.call, str(exc))
            return CallReport(
                call=validated.call, result=result, outcome="refused", runs=0, key=key
            )
        except LedgerError as exc:
            return self._ledger_refusal(validated, key, exc)
        done = await self._write(validated, key, circuit)
        if claim is not None and done.outcome in ("unavailable", "ledger_error", "retry"):
            # Nothing ran (an open circuit, a refused reservation) or the tool refused
            # having done nothing (ToolRetry): the key is given back for the next call.
            with contextlib.suppress(LedgerError):
                await self.ledger.forget(claim)
        return done

    def _settle(self, circuit: str, blamed: Blame | None) -> None:
        """Tell the breaker how a run went: only the tool's own faults count."""
        if blamed is None:
            self.breaker.success(circuit)
        elif blamed == "input":
            # The handler worked and refused its arguments: no evidence either way, so
            # the count stays; a half-open probe slot is given back for the next call.
            self.breaker.release(circuit)
        else:
            self.breaker.failure(circuit)

    async def _read(self, validated: ValidatedCall, circuit: str) -> CallReport:
        call = validated.call
        diagnostics: list[Diagnostic] = []
        runs = 0
        result: ToolResult | None = None
        outcome: CallOutcome = "ok"
        for _ in range(1 + self.read_retries):
            if not self.breaker.allow(circuit):
                if result is not None:
                    break  # keep the last failure: it says more than "unavailable"
                return self._unavailable(validated, circuit)
            runs += 1
            result, outcome, problem, blamed = await self._attempt_in(circuit, validated)
            self._settle(circuit, blamed)
            if problem is None:
                break
            diagnostics.append(problem)
            if blamed != "transient":
                break  # a deterministic exception would only fail again
        assert result is not None  # the first attempt always runs or returns above
        return CallReport(
            call=call, result=result, outcome=outcome, runs=runs, diagnostics=tuple(diagnostics)
        )

    async def _write(self, validated: ValidatedCall, key: str, circuit: str) -> CallReport:
        call, name = validated.call, validated.tool.name
        try:
            entry = await call_ledger("get", self.ledger.get, key, deadline=self.ledger_timeout)
            if entry is not None:
                settled = await self._settled(validated, entry)
                if settled is not None:
                    return self._from_ledger(validated, key, settled)
                # Forgotten while we waited (the owner's tool asked for a retry, or a
                # person cleared it): absent again, so this call may reserve it.
            if not self.breaker.allow(circuit):
                return self._unavailable(validated, circuit, key)
            try:
                entry = await call_ledger(
                    "reserve", self.ledger.reserve, key, tool=name, deadline=self.ledger_timeout
                )
            except BaseException:
                self.breaker.release(circuit)
                raise
            if entry is not None:
                # Another process reserved it between our look and our reservation.
                self.breaker.release(circuit)
                settled = await self._settled(validated, entry)
                return self._from_ledger(validated, key, settled or entry)
        except LedgerError as exc:
            return self._ledger_refusal(validated, key, exc)
        # The reservation is on record: from here on, a crash or a cancellation leaves
        # the key in flight, and the write is never silently run again.
        result, outcome, problem, blamed = await self._attempt_in(circuit, validated, write=True)
        diagnostics = [problem] if problem is not None else []
        self._settle(circuit, blamed)
        try:
            if outcome == "retry":
                # ToolRetry is the tool saying it refused and did nothing: recording it
                # would answer the corrected call (same arguments, once the model did
                # what the tool asked) with this refusal, and the write would be lost.
                await call_ledger("forget", self.ledger.forget, key, deadline=self.ledger_timeout)
            else:
                # With its media, in the one record format (runtime/recorded.py).
                recorded = recorded_content(result.content, result.media)
                await call_ledger(
                    "record",
                    self.ledger.record,
                    key,
                    recorded,
                    is_error=result.is_error,
                    deadline=self.ledger_timeout,
                )
        except LedgerError as exc:
            diagnostics.append(
                _note(
                    "ledger_error",
                    f"the write ran but its result could not be recorded: {exc}",
                    call,
                    name,
                    exc=exc,
                    level=logging.ERROR,
                )
            )
        return CallReport(
            call=call,
            result=result,
            outcome=outcome,
            runs=1,
            key=key,
            diagnostics=tuple(diagnostics),
        )

    async def _settled(self, validated: ValidatedCall, entry: LedgerEntry) -> LedgerEntry | None:
        """``entry``, or, while it is in flight and its owner may still be writing, the
        entry the owner leaves: looked up again with a growing pause, up to
        ``in_flight_wait`` seconds. Past the wait, the last entry seen is returned (still
        in flight: "may have run"); a ledger failing meanwhile ends the wait the same
        way. ``None``: the key was forgotten meanwhile (absent again)."""
        if entry.state != "in_flight" or self._owner_gone(validated, entry):
            return entry
        pause = _POLL_FIRST_S
        with anyio.move_on_after(self.in_flight_wait):
            while True:
                await anyio.sleep(pause)
                pause = min(pause * 2, _POLL_MAX_S)
                try:
                    found = await call_ledger(
                        "get", self.ledger.get, entry.key, deadline=self.ledger_timeout
                    )
                except LedgerError:
                    break
                if found is None or found.state != "in_flight":
                    return found  # recorded (replay it), or forgotten
                entry = found
                if self._owner_gone(validated, entry):
                    break
        return entry

    def _owner_gone(self, validated: ValidatedCall, entry: LedgerEntry) -> bool:
        """Whether the worker that reserved ``entry`` can no longer record it: its
        handler's timeout and the record's deadline have both passed since the
        reservation (``started_at``, by the ledger's clock). A tool without a timeout
        never lets that be known: only ``in_flight_wait`` ends the wait. A clock of
        the owner's behind ours makes the owner look gone sooner (the old answer, "may
        have run", never a second run); one ahead, later (the wait bound still holds)."""
        timeout = validated.tool.timeout
        if timeout is None:
            return False
        return time.time() > entry.started_at + timeout + self.ledger_timeout

    async def _attempt_in(
        self, circuit: str, validated: ValidatedCall, *, write: bool = False
    ) -> tuple[ToolResult, CallOutcome, Diagnostic | None, Blame | None]:
        """:meth:`_attempt` on a circuit that allowed it. Cancelled meanwhile, the run
        says nothing about the tool: a half-open circuit's probe slot is given back, or
        the circuit would refuse the tool for good."""
        try:
            return await self._attempt(validated, write=write)
        except BaseException:
            self.breaker.release(circuit)
            raise

    async def _attempt(
        self, validated: ValidatedCall, *, write: bool = False
    ) -> tuple[ToolResult, CallOutcome, Diagnostic | None, Blame | None]:
        """Run the handler once (within its timeout) and answer the call; the last item
        is who a failure blames (:func:`~.breaker.blame`), ``None`` on success."""
        try:
            value = await run_once(validated, self.executor, pool=self.sandbox_pool)
        except ToolTimeoutError as exc:
            tracing.note_tool_failure(exc)
            result = (
                results.write_timeout_result(validated.call)
                if write
                else self.registry.error_result(exc)
            )
            problem = self._tool_problem("tool_timeout", exc, validated)
            return result, "timeout", problem, "transient"
        except ToolError as exc:
            tracing.note_tool_failure(exc)
            cause = exc.__cause__ if isinstance(exc, ToolExecutionError) else exc
            if isinstance(cause, ToolRetry):
                # The tool's verdict on its input, for the model: "input" keeps it off
                # the breaker and out of the read retries.
                problem = _note(
                    "tool_retry",
                    f"{validated.tool.name} asked the model to retry: {safe_str(cause)}",
                    validated.call,
                    validated.tool.name,
                    level=logging.INFO,
                )
                return results.tool_retry_result(validated.call, cause), "retry", problem, "input"
            if isinstance(cause, ToolErrorReply):
                # The tool ran and answered with an error of its own (an MCP isError):
                # its answer, not proof it is broken ("input": off the breaker, not
                # re-run); a write's ledger records it below, as any answer.
                problem = _note(
                    "tool_error",
                    f"{validated.tool.name} answered with an error",
                    validated.call,
                    validated.tool.name,
                    level=logging.INFO,
                )
                result = results.tool_error_result(validated.call, cause.content)
                return result, "failed", problem, "input"
            return (
                self.registry.error_result(exc),
                "failed",
                self._tool_problem("tool_failed", exc, validated),
                blame(validated.tool, cause),
            )
        return results.ok_result(validated.call, value), "ok", None, None

    # ----------------------------------------------------------------------------------
    # Results that did not come from running the handler.

    def _over_limit(self, call: ToolCall, count: int, *, log: bool) -> CallReport:
        cap = self.max_calls_per_turn
        problem = Diagnostic(
            kind="calls_over_limit",
            message=f"a turn asked for {count} calls, over the cap of {cap}: none ran",
            tool=call.name,
            call_id=call.call_id,
        )
        if log:  # once per turn, not once per refused call
            report(problem)
        return CallReport(
            call=call,
            result=results.too_many_calls_result(call, count=count, cap=cap),
            outcome="over_limit",
            runs=0,
            diagnostics=(problem,),
        )

    @staticmethod
    def _tool_problem(kind: str, exc: ToolError, validated: ValidatedCall) -> Diagnostic:
        cause = exc.__cause__ if isinstance(exc, ToolExecutionError) else None
        return _note(kind, str(exc), validated.call, validated.tool.name, exc=cause or exc)

    def _unavailable(
        self, validated: ValidatedCall, circuit: str, key: str | None = None
    ) -> CallReport:
        name = validated.tool.name
        status = self.breaker.status(circuit)
        exc = CircuitOpenError(
            f"{name} is refused until its circuit closes ({status.failures} failures)",
            call=validated.call,
        )
        problem = _note("tool_unavailable", str(exc), validated.call, name)
        return CallReport(
            call=validated.call,
            result=self.registry.error_result(exc),
            outcome="unavailable",
            runs=0,
            key=key,
            diagnostics=(problem,),
        )

    @staticmethod
    def _from_ledger(validated: ValidatedCall, key: str, entry: LedgerEntry) -> CallReport:
        call, name = validated.call, validated.tool.name
        if entry.state == "done" and entry.content is not None:
            content, media, not_kept = replayed_parts(entry.content)
            result = results.replayed_result(
                call, content, is_error=entry.is_error, ran_at=entry.finished_at
            )
            if media or not_kept:
                wrapped = result.content
                if not_kept and isinstance(wrapped, dict):
                    # The documented text fallback for media over the bound.
                    wrapped["media_not_kept"] = not_kept
                result = dataclasses.replace(result, media=media)
            problem = _note(
                "write_replayed",
                f"{name} already ran for this key; its recorded result is returned",
                call,
                name,
                level=logging.INFO,
            )
            return CallReport(
                call=call,
                result=result,
                outcome="replayed",
                runs=0,
                key=key,
                diagnostics=(problem,),
            )
        problem = _note(
            "write_unconfirmed",
            f"{name} has an in-flight reservation since {entry.started_at}",
            call,
            name,
        )
        return CallReport(
            call=call,
            result=results.write_unconfirmed_result(call),
            outcome="unconfirmed",
            runs=0,
            key=key,
            diagnostics=(problem,),
        )

    @staticmethod
    def _ledger_refusal(validated: ValidatedCall, key: str, exc: LedgerError) -> CallReport:
        call, name = validated.call, validated.tool.name
        problem = _note(
            "ledger_error",
            f"the ledger refused a reservation, so the write did not run: {exc}",
            call,
            name,
            exc=exc,
            level=logging.ERROR,
        )
        return CallReport(
            call=call,
            result=results.ledger_refusal_result(call),
            outcome="ledger_error",
            runs=0,
            key=key,
            diagnostics=(problem,),
        )


def _unapproved(
    call: ToolCall, checked: ValidatedCall | ToolResult, request_id: str, approved: Collection[str]
) -> bool:
    """Whether ``call`` needs a person's approval that ``approved`` does not hold."""
    if isinstance(checked, ToolResult) or not checked.tool.needs_approval:
        return False
    try:
        return call_digest(call, request_id=request_id) not in approved
    except ApprovalStateError:
        return True  # arguments with no canonical form were never shown to anyone


def _declined(call: ToolCall) -> CallReport:
    problem = _note(
        "approval_missing",
        f"{call.name} needs a person's approval and was dispatched without it: not run",
        call,
        call.name,
    )
    return CallReport(
        call=call,
        result=results.declined_result(call, reason=_NO_APPROVAL),
        outcome="declined",
        runs=0,
        diagnostics=(problem,),
    )


_NO_APPROVAL = "this action needs a person's approval, and none was given for this call"

_T = TypeVar("_T")


def _note(
    kind: str,
    message: str,
    call: ToolCall,
    tool: str,
    *,
    exc: BaseException | None = None,
    level: int = logging.WARNING,
) -> Diagnostic:
    """Log and return one diagnostic about ``call`` of ``tool``."""
    return report(
        Diagnostic(
            kind=kind,
            message=message,
            exception=safe_repr(exc) if exc is not None else None,
            tool=tool,
            call_id=call.call_id,
        ),
        level=level,
    )


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
