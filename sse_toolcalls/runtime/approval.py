"""Permissions and approval: a policy decides, before a call runs, whether it may.

An :data:`ApprovalPolicy` is called once per call of a turn, before anything of the
turn runs, with an :class:`ApprovalContext` and the call; it answers:

- ``"allow"``: the call runs as usual (validation, ledger, breaker, sandbox);
- :class:`Deny` ``(reason)``: it does not run; the model reads the reason as the call's
  result (``declined``, :func:`~sse_toolcalls.runtime.tools.results.declined_result`);
- ``"ask"``: a person decides. The run pauses: :meth:`~.agent.Agent.run` returns a
  reply whose ``pending_approvals`` lists the calls waiting and whose ``state`` is an
  :class:`ApprovalState`; :meth:`~.agent.Agent.resume` goes on with the person's
  answer. ``Tool.needs_approval=True`` is the short form: such a tool's calls ask
  even when the policy allows them (a denial still wins).

Nothing of a paused turn runs before it is resumed, so a barrier or a write after the
call that waits never runs ahead of it. The state is a plain frozen value, so that a
streaming loop can hand the same object out as its approval event.

**A state that comes back is checked, and good once** (``docs/threat-model.md``). An
application may send the state through a browser and back, so on resume it is untrusted:

- The pause is on record: its digest (of every field of the state) is written to the
  agent's ledger when the run pauses, under the state's token, so every worker sharing
  the ledger can check it; and/or the state is signed (HMAC-SHA256) with the
  application's ``approval_key``. A state that matches neither (edited, given a new
  token or request id, forged) is refused with
  :class:`~sse_toolcalls.runtime.errors.ApprovalStateError` before anything runs.
- The decision is on record: the first resume reserves the pause's decision in the
  ledger (an atomic compare-and-set, as a write's key), so of two workers answering the
  same state, one wins and the other is refused; a denial is final, an approval is
  used once, and a replayed state is refused.
- The call that runs is the call shown: the person's answer is bound to the digest of
  each approved call and its request (:func:`call_digest`), and the dispatcher runs a
  ``needs_approval`` tool's call only with its digest in hand, whoever calls it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .._faces import publish

# At run time, not under TYPE_CHECKING: the root adopts these classes, and
# typing.get_type_hints must resolve their fields.
from ..calls import ToolCall
from ..conversation import Message
from ..errors import UsageError
from ._seal import call_digest, sign, signature_ok, value_digest
from .diagnostics import Diagnostic
from .errors import ApprovalStateError, LedgerError
from .ledgers.base import IdempotencyLedger, call_ledger
from .report import CallReport
from .tools.registry import Tool
from .usage import Usage

__all__ = [
    "MAX_PAUSE_AGE_S",
    "MIN_APPROVAL_KEY_BYTES",
    "ApprovalContext",
    "ApprovalPolicy",
    "ApprovalState",
    "ApprovalStateError",
    "Decision",
    "Deny",
    "approval_id",
    "approval_ids",
    "call_digest",
    "pending_ids",
    "state_digest",
]

MAX_PAUSE_AGE_S = 7 * 86400.0
"""How long a paused run waits for its answer, in seconds (a week): a person away over
a long weekend still answers in time, and it stays well inside the ledger's retention
(``DEFAULT_RETENTION_S``, 30 days), so the record of a state's decision always
outlives the state: a sweep can never make a decided state good again. An older state
is refused (``reason="expired"``); re-submit the request to ask again."""

MIN_APPROVAL_KEY_BYTES = 16
"""The shortest ``approval_key`` accepted, in bytes: 128 bits, the least a key for
HMAC-SHA256 should have (32 random bytes, ``secrets.token_bytes(32)``, is the usual)."""

PAUSE_RECORD_TOOL = "<approval pause>"
"""The ``tool`` of a pause's ledger entry (no tool name has ``<``), for people reading
the ledger."""

DECISION_RECORD_TOOL = "<approval decision>"
"""The ``tool`` of a decision's ledger entry."""


def approval_id(call: ToolCall) -> str:
    """How :meth:`~.agent.Agent.resume` names a pending call: its ``call_id``, or
    ``"#<index>"`` for a provider that sent none. Where two calls of one turn share
    it, each is named by :func:`approval_ids` instead."""
    return call.call_id if call.call_id else f"#{call.index}"


def approval_ids(calls: Sequence[ToolCall]) -> list[str]:
    """The approval id of each call of one turn, unique within the turn.

    A call keeps :func:`approval_id` when no other call of the turn has it. Calls that
    share one (a proxy that reuses an id for parallel calls) are named
    ``"<approval_id>#<position in the turn>"``: a person's answer about one of them
    must never reach the other, so the bare shared id names neither. Should that
    spelling meet another call's own id, every call is named with its position.
    """
    bases = [approval_id(call) for call in calls]
    counts = Counter(bases)
    ids = [base if counts[base] == 1 else f"{base}#{n}" for n, base in enumerate(bases)]
    if len(set(ids)) != len(ids):
        # Each id now ends in "#" and its own position, which holds no "#": all differ.
        ids = [f"{base}#{n}" for n, base in enumerate(bases)]
    return ids


@dataclass(frozen=True, slots=True, kw_only=True)
class Deny:
    """The policy's refusal of one call, with the reason the model is told."""

    reason: str
    """Why the call may not run, in a sentence the model can act on."""


Decision = Literal["allow", "ask"] | Deny
"""What a policy answers for one call."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalContext:
    """What a policy knows about a call besides the call itself."""

    conversation_id: str
    """The conversation's id (the one write keys are made of)."""
    turn: int
    """The assistant turn that made the call, from 0."""
    tool: Tool | None
    """The tool called, or ``None`` when the name is unknown (the call will be refused)."""


ApprovalPolicy = Callable[[ApprovalContext, ToolCall], Decision | Awaitable[Decision]]
"""``(context, call) -> "allow" | Deny(reason) | "ask"``, sync or ``async``. A policy that
raises denies the call (fail closed); the exception goes to the diagnostics."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalState:
    """A run paused for approval: everything :meth:`~.agent.Agent.resume` needs.

    Resume it once: the agent refuses a state it has already resumed, and a write it ran
    is recorded under its idempotency key (the request id, the tool, the canonical
    arguments and the call's place in its turn), so a second resume elsewhere with the
    same ledger replays the write's recorded result instead of running it again.
    """

    token: str
    """This pause's own id (a second resume of it is refused)."""
    conversation_id: str
    """The run's conversation id (for diagnostics and tools' contexts)."""
    request_id: str
    """The id of the user request the paused turn serves: its writes' keys are made of it."""
    lang: str
    """The language of fallback messages."""
    turn: int
    """The paused turn, from 0."""
    messages: tuple[Message, ...]
    """The conversation up to and including the paused assistant turn."""
    calls: tuple[ToolCall, ...]
    """Every call of the paused turn, in call order."""
    denied: tuple[tuple[str, str], ...]
    """``(approval id, reason)`` of the calls the policy denied (ids of
    :func:`approval_ids`)."""
    pending: tuple[ToolCall, ...]
    """The calls waiting for a person's answer."""
    reports: tuple[CallReport, ...]
    """The reports of the turns before, so the final reply holds the whole run."""
    diagnostics: tuple[Diagnostic, ...]
    """The diagnostics so far."""
    refused_before: tuple[str, ...]
    """Tools whose call was refused in the turn before (the corrected-once rule)."""
    steps: int
    """Assistant turns received so far."""
    requests: int
    """Requests sent so far."""
    retries: tuple[tuple[str, int], ...] = ()
    """``(tool, count)`` of the ToolRetry answers spent so far (the per-run budget)."""
    history_length: int | None = None
    """How many of ``messages`` came from the conversation store (the rest are this
    request's exchange, saved again when the run goes on), or ``None`` when the run
    did not use the store."""
    usage: Usage = field(default_factory=Usage)
    """Token usage summed over the turns so far (the reply's totals go on from it)."""
    provider_retries: int = 0
    """Requests re-sent after a failure so far."""
    elapsed: float = 0.0
    """Seconds the run took before it paused (the person's time is not counted)."""
    paused_at: float = 0.0
    """When the run paused, in seconds since the epoch (a state older than
    :data:`MAX_PAUSE_AGE_S` is refused)."""
    signature: str = ""
    """The HMAC-SHA256 of the state's digest under the agent's ``approval_key``, in hex,
    or ``""`` when the agent has none (the pause's ledger record is then the proof)."""


def pending_ids(state: ApprovalState) -> list[str]:
    """The approval ids of ``state.pending``, in order: the names
    :meth:`~.agent.Agent.resume` takes (each call's :func:`approval_id` unless two calls
    of the paused turn share it; see :func:`approval_ids`)."""
    ids = approval_ids(state.calls)
    out: list[str] = []
    waiting = iter(state.pending)
    current = next(waiting, None)
    for call, name in zip(state.calls, ids, strict=True):
        # The pending calls are the turn's calls in order, less the allowed and denied.
        if current is not None and call == current:
            out.append(name)
            current = next(waiting, None)
    return out


# --------------------------------------------------------------------------------------
# A state that comes back: checked against its record or its signature, decided once.


class ApprovalKey:
    """The application's key for signing states, kept out of every repr (an error
    report that dumps an agent's attributes must not carry it)."""

    __slots__ = ("_secret",)

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def __repr__(self) -> str:
        return "<approval key>"

    def reveal(self) -> bytes:
        """The key's bytes."""
        return self._secret


def check_approval_key(key: object) -> ApprovalKey | None:
    """``key`` when it can sign states (bytes, at least :data:`MIN_APPROVAL_KEY_BYTES`).

    Raises:
        UsageError: ``key`` is not ``None`` nor bytes that long.
    """
    if key is None:
        return None
    if not isinstance(key, bytes) or len(key) < MIN_APPROVAL_KEY_BYTES:
        raise UsageError(
            f"approval_key must be at least {MIN_APPROVAL_KEY_BYTES} random bytes "
            "(secrets.token_bytes(32)), or None"
        )
    return ApprovalKey(key)


def state_digest(state: ApprovalState) -> bytes:
    """The SHA-256 of every field of ``state`` but its signature, in canonical form: the
    digest a pause records and a signature signs (32 bytes).

    Raises:
        ApprovalStateError: ``state`` is not an :class:`ApprovalState` holding only the
            kinds of values a paused state holds (``reason="tampered"``).
    """
    if not isinstance(state, ApprovalState):
        raise ApprovalStateError(
            f"a {type(state).__name__} is not an ApprovalState", reason="tampered"
        )
    fields = tuple(
        (f.name, getattr(state, f.name)) for f in dataclasses.fields(state) if f.name != "signature"
    )
    return value_digest(("ApprovalState", fields))


def sealed(state: ApprovalState, key: ApprovalKey | None) -> ApprovalState:
    """``state`` signed with ``key``, or as it is without one."""
    if key is None:
        return state
    return dataclasses.replace(state, signature=sign(key.reveal(), state_digest(state)))


def _record_key(kind: str, token: str) -> str:
    # Its own namespace: an idempotency key hashes KEY_VERSION first, never this.
    text = f"sse_toolcalls approval {kind} v1\x00{token}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


async def record_pause(ledger: IdempotencyLedger, state: ApprovalState) -> None:
    """Put ``state``'s pause on record in ``ledger``: its digest, under its token.

    Raises:
        LedgerError: the ledger cannot be written (the state can then be resumed only
            if it is signed).
    """
    content = {
        "digest": state_digest(state).hex(),
        "request_id": state.request_id,
        "conversation_id": state.conversation_id,
        "pending": [call_digest(c, request_id=state.request_id) for c in state.pending],
    }
    pause = _record_key("pause", state.token)
    if await call_ledger("reserve", ledger.reserve, pause, tool=PAUSE_RECORD_TOOL) is not None:
        # A fresh random token never meets an entry: a ledger that says otherwise is
        # not one whose record could be trusted to tell this pause apart.
        raise LedgerError("a pause with this token is already on record")
    await call_ledger("record", ledger.record, pause, content)


async def verify_state(
    ledger: IdempotencyLedger, state: ApprovalState, *, key: ApprovalKey | None, now: float
) -> None:
    """Check that a state that came back is the one paused: equal to its pause record
    in ``ledger`` (when there is one) and, with a ``key``, signed by it; without a key
    the record is required. Takes nothing: :func:`claim_decision` does.

    Raises:
        ApprovalStateError: the state is refused (see its ``reason``).
        LedgerError: the ledger cannot be read.
    """
    digest = state_digest(state)
    if key is not None and not signature_ok(key.reveal(), digest, state.signature):
        raise ApprovalStateError(
            "the approval state's signature does not check: it was edited, or signed "
            "with another key",
            reason="tampered",
        )
    token = state.token
    pause = await call_ledger("get", ledger.get, _record_key("pause", token))
    recorded = (
        pause.content.get("digest")
        if pause is not None and isinstance(pause.content, dict)
        else None
    )
    if recorded is not None and recorded != digest.hex():
        raise ApprovalStateError(
            "the approval state differs from the one paused (edited after the pause)",
            reason="tampered",
        )
    if recorded is None and key is None:
        raise ApprovalStateError(
            "no pause with this state's token is on record in this agent's ledger: a "
            "forged or copied state, or one paused by a worker with another ledger "
            "(share the ledger, or give every worker the same approval_key)",
            reason="unknown",
        )
    if not now - MAX_PAUSE_AGE_S <= state.paused_at:
        raise ApprovalStateError(
            f"the approval state is older than {MAX_PAUSE_AGE_S:g} s; ask again",
            reason="expired",
        )


async def claim_decision(
    ledger: IdempotencyLedger,
    state: ApprovalState,
    *,
    approve: Sequence[str],
    deny: Sequence[str],
) -> tuple[frozenset[str], str | None]:
    """Take the one decision on a state :func:`verify_state` passed.

    The decision is reserved in ``ledger`` under the state's token, an atomic
    compare-and-set: only the first resume of a state, on any worker sharing the
    ledger, gets it; every later one is refused, whatever it answers.

    Args:
        approve, deny: the approval ids the person approved and denied (checked by the
            caller to name each pending call once).

    Returns:
        The :func:`call_digest` of each approved call, for the dispatcher, and a
        problem to report when the decision was taken but its detail not recorded.

    Raises:
        ApprovalStateError: a decision was already taken (``reason="decided"``).
        LedgerError: the ledger cannot be read or written; nothing may run.
    """
    ids = approval_ids(state.calls)
    approved = frozenset(
        call_digest(call, request_id=state.request_id)
        for call, name in zip(state.calls, ids, strict=True)
        if name in approve
    )
    decision = _record_key("decision", state.token)
    taken = await call_ledger("reserve", ledger.reserve, decision, tool=DECISION_RECORD_TOOL)
    if taken is not None:
        verdict = ""
        if isinstance(taken.content, dict) and isinstance(taken.content.get("verdict"), str):
            verdict = f" ({taken.content['verdict']})"
        raise ApprovalStateError(
            f"this approval state was already resumed{verdict}: a decision is taken once, "
            "and a denial is final",
            reason="decided",
        )
    content = {
        "digest": state_digest(state).hex(),
        "verdict": "approved" if approve and not deny else "denied" if not approve else "mixed",
        "approve": sorted(approved),
        "deny": sorted(
            call_digest(call, request_id=state.request_id)
            for call, name in zip(state.calls, ids, strict=True)
            if name in deny
        ),
    }
    try:
        await call_ledger("record", ledger.record, decision, content)
    except LedgerError as exc:
        # The reservation alone is the decision (no other resume can take it); only
        # its detail, for people reading the ledger, is missing.
        return approved, f"the decision was taken but its detail not recorded: {exc}"
    return approved, None


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
