"""The kept events of UI runs: what a client that reconnects (``Last-Event-ID``) reads.

A run's stream is kept event by event under ``(run key, n)``, n = 1, 2, 3... as the
run writes it, so a response can follow the run without belonging to it: the run
drains into the log, each client tails the log. A :class:`RunLog` is that store, in
three implementations behind one small protocol: :class:`MemoryRunLog` (this process,
the default), :class:`~.runlog_sqlite.SQLiteRunLog` (a file several processes of one
machine share) and :class:`~.runlog_postgres.PostgresRunLog` (workers on many machines).

Every log is bounded by :class:`RunLimits`: a run is kept :data:`KEEP_SECONDS` after
its end; past :data:`MAX_RUN_EVENTS` events or :data:`MAX_RUN_BYTES` bytes an append is
refused with :class:`RunLogFull` (the run's later events are not kept: its streams end
there); opening a run past :data:`MAX_RUNS` drops the oldest kept runs (their readers
end, a GET of them is a 204). A run whose writer went silent for
:data:`ABANDON_SECONDS` (its worker died) reads as ended, and is expired like one.

The :class:`Bell` wakes followers in this process as soon as an event is kept; a
follower of a run another process writes polls the shared store (see
:data:`~.resumable.POLL_INTERVAL_S`).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Protocol

import anyio

from ..._checks import check_count, check_quantity
from ...errors import SSEToolCallsError

__all__ = [
    "ABANDON_SECONDS",
    "KEEP_SECONDS",
    "MAX_READ_EVENTS",
    "MAX_RUNS",
    "MAX_RUN_BYTES",
    "MAX_RUN_EVENTS",
    "Bell",
    "KeptEvents",
    "KeptRun",
    "MemoryRunLog",
    "RunDropped",
    "RunLimits",
    "RunLog",
    "RunLogError",
    "RunLogFull",
]

KEEP_SECONDS: Final = 300.0
"""Seconds a run is kept after its end: a reload or a dropped connection reconnects
within seconds (``useChat`` resumes when the page mounts); five minutes covers a laptop
woken from sleep without keeping every finished run around."""

MAX_RUNS: Final = 1000
"""Runs a log keeps, the oldest dropped first: with :data:`MAX_RUN_BYTES` it bounds a
memory log's size (and a table's)."""

MAX_RUN_EVENTS: Final = 100_000
"""Events one run may keep: a model that streams one token per event writes a few
thousand per turn; a hundred thousand holds a long multi-turn run."""

MAX_RUN_BYTES: Final = 16 * 1024 * 1024
"""Bytes one run may keep (the SSE blocks as sent): twice the largest request body
(:data:`.paused.MAX_BODY_BYTES`), since a run's stream repeats its tools' outputs."""

ABANDON_SECONDS: Final = 900.0
"""Seconds a live run may stay silent before it reads as ended: its worker died (a
crash leaves no end mark). A quarter of an hour outlasts any tool's usual timeout."""

MAX_READ_EVENTS: Final = 512
"""Events one read returns at most: a reader catching up on a long run pages through
it instead of holding all of it at once."""


class RunLogError(SSEToolCallsError):
    """The kept events could not be read or written (a locked or unreachable database,
    a misuse such as an event out of order)."""


class RunLogFull(RunLogError):
    """A run reached :attr:`RunLimits.max_run_events` or :attr:`RunLimits.max_run_bytes`:
    the event was not kept (nor will any later one be)."""


class RunDropped(RunLogError):
    """The run is no longer kept (expired, or dropped for newer runs)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunLimits:
    """The bounds of a :class:`RunLog` (see the module docstring)."""

    keep_seconds: float = KEEP_SECONDS
    """Seconds a run is kept after its end."""

    max_runs: int = MAX_RUNS
    """Runs kept at most; opening one more drops the oldest."""

    max_run_events: int = MAX_RUN_EVENTS
    """Events one run keeps at most."""

    max_run_bytes: int = MAX_RUN_BYTES
    """Bytes one run keeps at most."""

    abandon_seconds: float = ABANDON_SECONDS
    """Seconds of silence after which a live run reads as ended."""

    def __post_init__(self) -> None:
        check_quantity("keep_seconds", self.keep_seconds, positive=True)
        check_count("max_runs", self.max_runs, minimum=1)
        check_count("max_run_events", self.max_run_events, minimum=1)
        check_count("max_run_bytes", self.max_run_bytes, minimum=1)
        check_quantity("abandon_seconds", self.abandon_seconds, positive=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class KeptRun:
    """A kept run, as :meth:`RunLog.latest` finds it."""

    run_key: str
    """The key the run is kept under (one request of one protocol)."""

    event_key: str | None
    """The ``<key>`` of its events' ids ``<key>:<n>``; ``None`` before its first event."""

    count: int
    """Events kept so far."""

    ended: bool
    """Whether the run ended (or was abandoned): no event will follow ``count``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class KeptEvents:
    """What a :meth:`RunLog.read` found."""

    events: tuple[bytes, ...]
    """The events after the one asked for, in order (at most :data:`MAX_READ_EVENTS`)."""

    count: int
    """Events the run has kept so far."""

    ended: bool
    """Whether the run ended: once ``ended`` and every event up to ``count`` was read,
    nothing more comes."""

    event_key: str | None
    """As :attr:`KeptRun.event_key`."""


class Bell:
    """Wakes this process's followers of a run when it keeps an event or ends.

    One per log, used from one event loop (the server's). A follower takes the run's
    :meth:`event` *before* it reads, so an event kept between its read and its wait
    still wakes it."""

    def __init__(self) -> None:
        self._events: dict[str, tuple[anyio.Event, int]] = {}

    def event(self, run_key: str) -> anyio.Event:
        """The event the next :meth:`ring` of ``run_key`` sets (release it after)."""
        found = self._events.get(run_key)
        event, users = found if found is not None else (anyio.Event(), 0)
        self._events[run_key] = (event, users + 1)
        return event

    def release(self, run_key: str, event: anyio.Event) -> None:
        """A follower no longer waits on ``event``: forget it once nobody does."""
        found = self._events.get(run_key)
        if found is None or found[0] is not event:
            return
        if found[1] <= 1:
            del self._events[run_key]
        else:
            self._events[run_key] = (event, found[1] - 1)

    def ring(self, run_key: str) -> None:
        """Wake every follower of ``run_key``."""
        found = self._events.pop(run_key, None)
        if found is not None:
            found[0].set()


class RunLog(Protocol):
    """Where runs' events are kept (see the module docstring). Each implementation
    refuses with :class:`RunLogError` (or a subclass), never another exception."""

    limits: RunLimits
    """Its bounds."""

    bell: Bell
    """Rung by :meth:`append` and :meth:`end` for followers in this process."""

    async def open(self, run_key: str, *, chat_id: str) -> bool:
        """Claim ``run_key`` for a new run of ``chat_id`` (expiring what is due, and
        dropping the oldest runs past :attr:`RunLimits.max_runs`).

        Returns:
            ``True`` if this call claimed it (the caller runs it), ``False`` if it is
            kept already (the caller follows it instead: a run never starts twice).
        """

    async def append(self, run_key: str, n: int, data: bytes, *, event_key: str) -> None:
        """Keep event ``n`` (the run's next) of ``run_key``.

        Raises:
            RunLogFull: past the run's events or bytes bound (not kept).
            RunDropped: the run is not kept any more.
            RunLogError: ``n`` is not the next event, or the store failed.
        """

    async def read(self, run_key: str, after: int) -> KeptEvents | None:
        """The events of ``run_key`` after ``after``, or ``None`` if it is not kept."""

    async def end(self, run_key: str) -> None:
        """Mark the run's end (no-op if it is not kept)."""

    async def latest(self, chat_id: str) -> KeptRun | None:
        """The last run opened for ``chat_id`` that is still kept, or ``None``."""

    async def expire(self) -> int:
        """Drop the runs past their time; how many were dropped."""


@dataclass(slots=True, kw_only=True)
class _Run:
    chat_id: str
    event_key: str | None = None
    events: list[bytes] = field(default_factory=list)
    size: int = 0
    ended_at: float | None = None
    touched_at: float = 0.0


class MemoryRunLog:
    """A :class:`RunLog` in this process's memory (one event loop's), bounded by its
    limits: at most ``max_runs * max_run_bytes`` bytes of events."""

    def __init__(
        self, limits: RunLimits | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limits = limits if limits is not None else RunLimits()
        self.bell = Bell()
        self._clock = clock
        self._runs: OrderedDict[str, _Run] = OrderedDict()
        """By opening order: the first is the oldest."""
        self._latest: dict[str, str] = {}
        """Chat id -> the key of its last opened run."""

    def __repr__(self) -> str:
        return f"MemoryRunLog(runs={len(self._runs)})"

    def _ended(self, run: _Run, now: float) -> bool:
        return run.ended_at is not None or now - run.touched_at > self.limits.abandon_seconds

    def _drop(self, run_key: str) -> None:
        run = self._runs.pop(run_key)
        if self._latest.get(run.chat_id) == run_key:
            del self._latest[run.chat_id]
        self.bell.ring(run_key)  # its followers read that it is gone, and end

    async def open(self, run_key: str, *, chat_id: str) -> bool:
        """See :meth:`RunLog.open`."""
        await self.expire()
        if run_key in self._runs:
            return False
        while len(self._runs) >= self.limits.max_runs:
            self._drop(next(iter(self._runs)))
        self._runs[run_key] = _Run(chat_id=chat_id, touched_at=self._clock())
        self._latest[chat_id] = run_key
        return True

    async def append(self, run_key: str, n: int, data: bytes, *, event_key: str) -> None:
        """See :meth:`RunLog.append`."""
        run = self._runs.get(run_key)
        if run is None:
            raise RunDropped(f"run {run_key!r} is not kept")
        if n != len(run.events) + 1 or run.ended_at is not None:
            raise RunLogError(f"run {run_key!r}: event {n} is not its next")
        if n > self.limits.max_run_events:
            raise RunLogFull(f"run {run_key!r} is past {self.limits.max_run_events} events")
        if run.size + len(data) > self.limits.max_run_bytes:
            raise RunLogFull(f"run {run_key!r} is past {self.limits.max_run_bytes} bytes")
        run.events.append(bytes(data))
        run.size += len(data)
        run.touched_at = self._clock()
        if run.event_key is None:
            run.event_key = event_key
        self.bell.ring(run_key)

    async def read(self, run_key: str, after: int) -> KeptEvents | None:
        """See :meth:`RunLog.read`."""
        run = self._runs.get(run_key)
        if run is None:
            return None
        start = max(after, 0)
        return KeptEvents(
            events=tuple(run.events[start : start + MAX_READ_EVENTS]),
            count=len(run.events),
            ended=self._ended(run, self._clock()),
            event_key=run.event_key,
        )

    async def end(self, run_key: str) -> None:
        """See :meth:`RunLog.end`."""
        run = self._runs.get(run_key)
        if run is not None and run.ended_at is None:
            run.ended_at = self._clock()
        self.bell.ring(run_key)

    async def latest(self, chat_id: str) -> KeptRun | None:
        """See :meth:`RunLog.latest`."""
        await self.expire()
        run_key = self._latest.get(chat_id)
        if run_key is None:
            return None
        run = self._runs[run_key]
        return KeptRun(
            run_key=run_key,
            event_key=run.event_key,
            count=len(run.events),
            ended=self._ended(run, self._clock()),
        )

    async def expire(self) -> int:
        """See :meth:`RunLog.expire`."""
        now = self._clock()
        due = [
            key
            for key, run in self._runs.items()
            if (run.ended_at is not None and now - run.ended_at > self.limits.keep_seconds)
            or (
                run.ended_at is None
                and now - run.touched_at > self.limits.abandon_seconds + self.limits.keep_seconds
            )
        ]
        for key in due:
            self._drop(key)
        return len(due)
