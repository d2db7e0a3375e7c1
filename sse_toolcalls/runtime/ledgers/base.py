"""The idempotency ledger's protocol and what every ledger shares: its entries, its keys.

Every call to a ``write`` tool runs under an idempotency key (see :func:`idempotency_key`).
Before its handler starts, the dispatcher *reserves* the key; when the handler has
answered (ok or error), it *records* the result under the key. So each key is in one of
three states:

- absent: the write never started; it may run.
- ``in_flight``: it started and was never confirmed (the process crashed, or the turn
  was cancelled, mid-write). The action may or may not have happened. **Policy: it is
  never run again automatically**; the model gets an error result saying that the action
  may have run and is not being repeated (``write_unconfirmed``), and a person or the
  application decides (:meth:`IdempotencyLedger.forget` clears the key once they have).
- ``done``: it ran; a retried or replayed call gets the recorded result, re-addressed to
  its own call id, and the handler does not run again.

Three implementations, one module each in this package: :class:`~.sqlite.SQLiteLedger`
(a file in WAL mode, safe across processes and restarts: the embedded default),
:class:`~.memory.InMemoryLedger` (one process, for tests) and
:class:`~.postgres.PostgresLedger` (many workers on many machines; the ``postgres``
extra). Anything with the methods of :class:`IdempotencyLedger` can be plugged in (Redis,
another SQL server...): ``reserve`` must be atomic, as a compare-and-set. The methods are
coroutines and never block the event loop (issue 15); a synchronous ledger of the old
protocol runs through :class:`SyncLedgerAdapter`.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import hashlib
import inspect
import json
import math
import uuid
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, cast, runtime_checkable

import anyio
import anyio.to_thread

from ..._faces import publish
from ..._jsonsafe import MAX_DEPTH, MAX_INT_BITS, safe_repr, safe_str
from ...errors import UsageError
from ..errors import LedgerError

__all__ = [
    "DEFAULT_LEDGER_TIMEOUT_S",
    "DEFAULT_RETENTION_S",
    "KEY_VERSION",
    "IdempotencyLedger",
    "LedgerEntry",
    "LedgerError",
    "LedgerState",
    "SyncIdempotencyLedger",
    "SyncLedgerAdapter",
    "as_async_ledger",
    "call_ledger",
    "canonical_arguments",
    "idempotency_key",
    "key_arguments",
]

LedgerState = Literal["in_flight", "done"]
"""``in_flight``: started, never confirmed; ``done``: ran, result recorded."""

KEY_VERSION = "v3"
"""Part of every derived key: a change to the derivation changes the version, so old
ledger rows can never be mistaken for new ones. ``v3`` (request-scoped keys) replaced
``v2`` (conversation id + turn): a ``v2`` row is never matched by a ``v3`` key, so it is
inert (kept for people reading the ledger, removable with ``forget``); a ``v2`` write
left in flight at the upgrade is not recognised by a resumed request, so check those
before upgrading."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerEntry:
    """What the ledger knows about one idempotency key."""

    key: str
    """The idempotency key."""

    state: LedgerState
    """``in_flight`` or ``done``."""

    tool: str
    """The tool the key belongs to (for people reading the ledger)."""

    content: str | dict[str, Any] | list[Any] | None = None
    """The recorded result content (``None`` while in flight)."""

    is_error: bool = False
    """Whether the recorded result is an error result."""

    started_at: float = 0.0
    """When the key was reserved, in seconds since the epoch."""

    finished_at: float | None = None
    """When the result was recorded, or ``None`` while in flight."""


DEFAULT_RETENTION_S = 30 * 86400.0
"""How long :meth:`IdempotencyLedger.sweep` keeps a done entry, in seconds (30 days):
clients retry a lost reply within minutes and people re-submit a stale tab within days
(payment APIs keep keys for one day); a month covers both with room, and bounds the
table at a month of writes. An entry still in flight is kept whatever its age unless
the sweep is told otherwise: it is a write that may have run, and only a person
should let it run again."""


DEFAULT_LEDGER_TIMEOUT_S = 20.0
"""How long the dispatcher waits for one ledger call (``get``, ``reserve``, ``record``,
``forget``), in seconds. Past it the call counts as failed: a write not yet reserved is
not run, one that ran has its result go to the model with a ``ledger_error`` diagnostic
(its key may stay in flight: "may have run", never run again). Longer than everything
a working store may take (SQLite's ``BUSY_TIMEOUT_S`` of 5 s, a Postgres connection
through a failover in ``DEFAULT_TIMEOUT_S`` of 10 s), short of the minute after which a
person waiting for a reply gives up."""


@runtime_checkable
class IdempotencyLedger(Protocol):
    """What the dispatcher needs from a ledger. Every method is a coroutine and must not
    block the event loop (a store with a blocking client runs it in a worker thread, as
    :class:`SQLiteLedger` does). **(changed, issue 15: the methods were synchronous; a
    ledger of your own with the old methods is wrapped by :class:`SyncLedgerAdapter`.)**"""

    async def get(self, key: str) -> LedgerEntry | None:
        """The entry for ``key``, or ``None`` when the key was never reserved.

        Raises:
            LedgerError: the store cannot be read.
        """
        ...

    async def reserve(self, key: str, *, tool: str) -> LedgerEntry | None:
        """Atomically mark ``key`` in flight, unless it already has an entry.

        Returns:
            ``None`` when this caller now holds the reservation (the write may run), or
            the existing entry (the write must not run).

        Raises:
            LedgerError: the store cannot be written, or it cannot tell whether the
                reservation was taken; the write must not run.
        """
        ...

    async def record(
        self, key: str, content: str | dict[str, Any] | list[Any], *, is_error: bool = False
    ) -> None:
        """Mark ``key`` done with its result (creating the entry if it has none).

        Raises:
            LedgerError: the store cannot be written (the key stays in flight: "may
                have run", never re-run).
        """
        ...

    async def forget(self, key: str) -> None:
        """Remove ``key`` (after a person checked an unconfirmed write, say).

        Raises:
            LedgerError: the store cannot be written.
        """
        ...

    async def sweep(
        self, *, older_than: float = DEFAULT_RETENTION_S, include_in_flight: bool = False
    ) -> int:
        """Remove done entries that finished more than ``older_than`` seconds ago (and
        in-flight ones reserved that long ago, with ``include_in_flight``).

        A swept key is absent again: a request re-submitted after the sweep runs its
        writes again, so keep ``older_than`` past any retry the application allows.

        Returns:
            How many entries were removed.

        Raises:
            LedgerError: the store cannot be written.
        """
        ...


class SyncIdempotencyLedger(Protocol):
    """The ledger protocol before issue 15: the same methods, synchronous (no
    ``sweep``). Wrap one in :class:`SyncLedgerAdapter` to use it."""

    def get(self, key: str) -> LedgerEntry | None: ...

    def reserve(self, key: str, *, tool: str) -> LedgerEntry | None: ...

    def record(
        self, key: str, content: str | dict[str, Any] | list[Any], *, is_error: bool = False
    ) -> None: ...

    def forget(self, key: str) -> None: ...


class SyncLedgerAdapter:
    """A synchronous ledger (:class:`SyncIdempotencyLedger`: a Redis or SQL client of
    your own written for the old protocol) as an :class:`IdempotencyLedger`: each call
    runs in a worker thread, so a slow store never stalls the event loop.

    A call cut short (the dispatcher's deadline, ``DEFAULT_LEDGER_TIMEOUT_S``, or a
    cancellation) is abandoned in its thread, since Python cannot stop it: a store that
    stopped answering must not hold the user's reply. A reservation it still makes
    later is one nobody runs: its key stays in flight, "may have run", never run."""

    def __init__(self, ledger: SyncIdempotencyLedger) -> None:
        """Args:
        ledger: the synchronous ledger."""
        self.ledger = ledger
        """The wrapped ledger."""

    def __repr__(self) -> str:
        return f"SyncLedgerAdapter({self.ledger!r})"

    async def get(self, key: str) -> LedgerEntry | None:
        """See :meth:`IdempotencyLedger.get`."""
        return await anyio.to_thread.run_sync(self.ledger.get, key, abandon_on_cancel=True)

    async def reserve(self, key: str, *, tool: str) -> LedgerEntry | None:
        """See :meth:`IdempotencyLedger.reserve`."""
        return await anyio.to_thread.run_sync(
            lambda: self.ledger.reserve(key, tool=tool), abandon_on_cancel=True
        )

    async def record(
        self, key: str, content: str | dict[str, Any] | list[Any], *, is_error: bool = False
    ) -> None:
        """See :meth:`IdempotencyLedger.record`."""
        await anyio.to_thread.run_sync(
            lambda: self.ledger.record(key, content, is_error=is_error), abandon_on_cancel=True
        )

    async def forget(self, key: str) -> None:
        """See :meth:`IdempotencyLedger.forget`."""
        await anyio.to_thread.run_sync(self.ledger.forget, key, abandon_on_cancel=True)

    async def sweep(
        self, *, older_than: float = DEFAULT_RETENTION_S, include_in_flight: bool = False
    ) -> int:
        """The wrapped ledger's ``sweep`` when it has one (called with the same keyword
        arguments, in a thread), else nothing is removed.

        Returns:
            How many entries were removed (0 without a ``sweep``)."""
        sweep = getattr(self.ledger, "sweep", None)
        if sweep is None:
            return 0
        removed = await anyio.to_thread.run_sync(
            lambda: sweep(older_than=older_than, include_in_flight=include_in_flight)
        )
        return int(removed)


def as_async_ledger(ledger: IdempotencyLedger | SyncIdempotencyLedger) -> IdempotencyLedger:
    """``ledger`` itself when its methods are coroutines, else wrapped in a
    :class:`SyncLedgerAdapter` with a ``DeprecationWarning`` (the migration path of
    issue 15: the old synchronous protocol keeps working, off the event loop).

    Raises:
        UsageError: ``ledger`` lacks a method of the protocol.
    """
    missing = [n for n in ("get", "reserve", "record", "forget") if not hasattr(ledger, n)]
    if missing:
        raise UsageError(f"a ledger needs get, reserve, record and forget; missing: {missing}")
    if inspect.iscoroutinefunction(ledger.reserve):
        return cast(IdempotencyLedger, ledger)
    warnings.warn(
        f"{type(ledger).__name__} has synchronous methods: the ledger protocol is async "
        "since 0.2.0; wrap it in SyncLedgerAdapter (done for you now, in worker threads)",
        DeprecationWarning,
        stacklevel=3,
    )
    return SyncLedgerAdapter(cast(SyncIdempotencyLedger, ledger))


# --------------------------------------------------------------------------------------
# Keys.


class _NoCanonicalForm(ValueError):
    """A value with no canonical text (an arbitrary object, a cycle, too deep)."""


_CANONICAL_DEPTH = MAX_DEPTH
"""Deepest nesting given a canonical form, in levels (the limit of every JSON value we
write; the registry refuses arguments far shallower: ``MAX_VALIDATED_ARGUMENTS_DEPTH``)."""


def canonical_arguments(arguments: Any) -> str:
    """The canonical text of the arguments a handler receives: equal values, equal text.

    "Equal" is equality of JSON values, as the handler sees them:

    - **numbers** by exact value, whatever their spelling or Python type: ``125``,
      ``125.0``, ``1.25e2`` and ``12500e-2`` all reach the handler equal to ``125`` and
      give ``125``; an integral float is written as its exact integer, any other float
      as its shortest round-trip text (``0.1``); ``-0.0`` is ``0``; NaN and the
      infinities (which no valid call holds) are ``NaN``, ``Infinity``, ``-Infinity``.
      Booleans are not numbers (``true`` is not ``1``).
    - **strings** by code point, written with ASCII escapes (so a lone surrogate is
      written as ``\\ud800`` and never fails). No Unicode normalisation: NFC ``"é"`` and
      NFD ``"é"`` are different strings to the handler (two different file names on
      Linux), so they are two requests; the key follows what the handler receives.
    - **objects** with keys sorted (by their canonical text), at every depth; arrays in
      order (tuples as arrays); sets in sorted order.
    - values a function tool decodes: enum members by their value, UUIDs as text,
      dates and times in ISO 8601 (an aware ``datetime`` in UTC, since instants equal
      under ``==`` are one request), dataclasses and pydantic models by their fields.

    Returns:
        ASCII text.

    Raises:
        ValueError: ``arguments`` holds a value of none of these kinds (an arbitrary
            object), a cycle, or nesting deeper than ``MAX_DEPTH``;
            :func:`idempotency_key` then falls back to the JSON arguments.
    """
    out: list[str] = []
    try:
        _canonical(arguments, out, _CANONICAL_DEPTH, set())
    except RecursionError as exc:  # a pydantic model_dump recursing, say
        raise _NoCanonicalForm("nested too deep") from exc
    return "".join(out)


def _number_text(value: int | float) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if not value.is_integer():
            return repr(value)
        value = int(value)
    if value.bit_length() > MAX_INT_BITS:
        # Python will not print integers this long in decimal; hex is exact and cheap,
        # and the "0x" keeps it apart from every decimal spelling.
        return hex(value)
    return str(value)


def _canonical(value: Any, out: list[str], depth: int, path: set[int]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        out.append(_number_text(value))
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=True))
    elif isinstance(value, enum.Enum):
        _canonical(value.value, out, depth, path)
    elif isinstance(value, datetime.datetime):
        if value.utcoffset() is not None:
            value = value.astimezone(datetime.UTC)
        out.append(json.dumps(value.isoformat()))
    elif isinstance(value, datetime.date | datetime.time):
        out.append(json.dumps(value.isoformat()))
    elif isinstance(value, uuid.UUID):
        out.append(json.dumps(str(value)))
    else:
        _canonical_container(value, out, depth, path)


def _canonical_container(value: Any, out: list[str], depth: int, path: set[int]) -> None:
    if depth <= 0:
        raise _NoCanonicalForm(f"nested deeper than {_CANONICAL_DEPTH} levels")
    if id(value) in path:
        raise _NoCanonicalForm("a value that contains itself")
    path.add(id(value))
    if isinstance(value, dict):
        items = [(_item_text(k, depth, path), v) for k, v in value.items()]
        items.sort(key=lambda kv: kv[0])
        out.append("{")
        for n, (key, item) in enumerate(items):
            out.append("," if n else "")
            out.append(key)
            out.append(":")
            _canonical(item, out, depth - 1, path)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for n, item in enumerate(value):
            out.append("," if n else "")
            _canonical(item, out, depth - 1, path)
        out.append("]")
    elif isinstance(value, set | frozenset):
        texts = sorted(_item_text(v, depth, path) for v in value)
        out.append("[" + ",".join(texts) + "]")
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        _canonical_container(fields, out, depth, path)
    elif callable(getattr(value, "model_dump", None)):
        _canonical(value.model_dump(mode="json"), out, depth - 1, path)
    else:
        raise _NoCanonicalForm(f"a {type(value).__name__} has no canonical form")
    path.discard(id(value))


def _item_text(value: Any, depth: int, path: set[int]) -> str:
    part: list[str] = []
    _canonical(value, part, depth - 1, path)
    return "".join(part)


def idempotency_key(
    *,
    tool: str,
    arguments: Any,
    request_id: str,
    occurrence: int = 0,
    json_arguments: dict[str, Any] | None = None,
) -> str:
    """The idempotency key of one write call, independent of the provider's call id.

    The key is the SHA-256 (hex) of, joined by NUL bytes: :data:`KEY_VERSION`, the
    request id, the tool name, :func:`canonical_arguments` of the arguments *the handler
    receives* (after coercion and decoding, so ``"5"``, ``5`` and ``5.0`` for an integer
    are one call), and the occurrence number. Text is encoded as UTF-8 with lone
    surrogates passed through, so no id or name can make it fail.

    The key names one *user request* and the call's place in it: the k-th identical
    call (same tool, same canonical arguments) of one assistant turn of that request.

    - Why the request id: it is the application's id for the user's message, as a
      payment API's ``Idempotency-Key``. Re-submitting it (after a crash, a lost
      reply) resumes the request, and its writes replay; a new message is a new
      request, so "send Bob another 10" runs even with identical arguments.
    - Why not the call id, nor the turn: within one request a provider re-issues a call
      under a new id (a regenerated turn, a resumed request whose turns restart at 0, a
      model repeating a write whose confirmation it lost), and that must replay, not pay
      twice.
    - Why the occurrence: two identical writes in one turn (``add_item`` twice) are two
      actions; the k-th identical call of a turn gets occurrence k.

    Args:
        tool: the tool name.
        arguments: the handler's keyword arguments.
        request_id: the id of the user request (the caller's; keep it when the request
            is resumed or retried to keep its writes from running twice).
        occurrence: how many identical calls came before it in the same turn.
        json_arguments: the validated JSON arguments, used (marked as such) when
            ``arguments`` hold a value with no canonical form (an arbitrary object a
            decoder made); decoding is deterministic, so equal JSON gives equal
            handler arguments.

    Returns:
        64 hexadecimal characters; never raises.
    """
    parts = (
        KEY_VERSION,
        request_id,
        tool,
        key_arguments(arguments, json_arguments),
        str(occurrence),
    )
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def key_arguments(arguments: Any, json_arguments: dict[str, Any] | None = None) -> str:
    """The arguments part of :func:`idempotency_key`: :func:`canonical_arguments` of
    ``arguments``, else of ``json_arguments`` (marked ``json:``), else a ``repr:``
    (only for a direct call with an arbitrary object); never raises."""
    try:
        return canonical_arguments(arguments)
    except _NoCanonicalForm:
        pass
    if json_arguments is not None:
        try:
            return "json:" + canonical_arguments(json_arguments)
        except _NoCanonicalForm:
            pass
    # Only reached by a direct call with an arbitrary object and no JSON arguments.
    return "repr:" + safe_repr(arguments)


# --------------------------------------------------------------------------------------
# Calling a ledger: what the dispatcher and the approvals both do.

_T = TypeVar("_T")


async def call_ledger(
    method: str,
    op: Callable[..., Awaitable[_T]],
    *args: Any,
    deadline: float = DEFAULT_LEDGER_TIMEOUT_S,
    **kw: Any,
) -> _T:
    """``op(*args, **kw)``, one of the ledger's methods, with any failure a ``LedgerError``,
    an answer later than ``deadline`` seconds included.

    The ledger is the guard against doubled writes, and a custom one (the public
    protocol) may fail with its own exceptions (its driver's, a ``KeyError``...): each is
    the ledger failing, so the write is refused before it runs, or its result kept
    with a diagnostic after, exactly as for a ``LedgerError`` (it ended the run in the
    ``internal_error`` fallback). Cancellation and other ``BaseException`` pass.

    Raises:
        LedgerError: the ledger's own, or a wrapper chained to what it raised.
    """
    answered = False
    try:
        # A store that stops answering (a frozen server, a hung client) must not hold
        # the user's reply for good: past the deadline the call has failed.
        with anyio.move_on_after(deadline):
            value = await op(*args, **kw)
            answered = True
    except LedgerError:
        raise
    except Exception as exc:
        raise LedgerError(
            f"the ledger's {method} raised {type(exc).__name__}: {safe_str(exc)}"
        ) from exc
    if not answered:
        raise LedgerError(f"the ledger's {method} did not answer within {deadline} s")
    if method in ("get", "reserve") and not (value is None or isinstance(value, LedgerEntry)):
        # Read as an entry, it would fail later, outside this guard.
        raise LedgerError(
            f"the ledger's {method} returned {type(value).__name__}, not a LedgerEntry or None"
        )
    return value


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
