"""``sse-toolcalls fuzz DIR``: mutate a corpus, report what breaks, save what reproduces it.

Inputs are drawn by Hypothesis from the corpus: a stream, a few mutations (byte flips,
insertions of the words the parsers branch on, deletions, duplicated runs, a splice of
another stream, a hostile JSON value in an event, a long repeated run; the structure-aware
ones are :mod:`.mutators`, shared with the atheris harness in ``tests/tooling/fuzz``) and three cut
positions. Each input is held to :func:`.invariants.check` with its dialect and detected:
a finding is an exception that is not ours, or a result that depends on the split, or a
broken property of a call. With ``--registry module:attribute`` every call the parser
releases is also checked by the user's :class:`~sse_toolcalls.ToolRegistry`: validation
(schemas, coercion, the tool's own decoder) sees every hostile argument, and only
``UnknownToolError`` or ``InvalidArgumentsError`` may come out; no handler is ever run.

Before fuzzing, every stream is also grown (its inner events repeated 8 and 64 times) and
fed in fixed reads: a parse whose CPU time or memory per byte grows more than
:data:`GROWTH_FACTOR` times between the two sizes is a finding (it grows faster than its
bytes).

With atheris installed (the ``fuzz`` extra) the command runs the coverage-guided engine
instead (:mod:`.atheris_engine`: the same checks, mutations and findings' format, taken
from here); this module is the Hypothesis engine and what both engines share, and the
command that picks one is the CLI's (:func:`sse_toolcalls.tooling.cli.fuzz`).

Each finding is saved, its mutations minimised by Hypothesis (atheris: its shortest
input), as a corpus file in the findings folder (``<kind>-<hash>.sse``, its cuts recorded
as the manifest entry's ``chunks``), so ``sse-toolcalls check FINDINGS`` replays it.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import time
import tracemalloc
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ...calls import Dialect, ToolCall
from ...errors import SSEToolCallsError, TruncatedStreamError, UsageError
from ...parser import ToolCallParser
from ...runtime._targets import resolve
from ...runtime.errors import InvalidArgumentsError, UnknownToolError
from . import invariants, manifest
from .mutators import mutate_event_stream, mutate_json, repeat_bytes

__all__ = [
    "GROWTH_CONFIRMATIONS",
    "GROWTH_FACTOR",
    "Finding",
    "FuzzReport",
    "RegistryFailure",
    "check_growth",
    "check_input",
    "corpus_seeds",
    "finding_kind",
    "fuzz_corpus",
    "load_registry",
    "save_findings",
]

GROWTH_FACTOR: Final = 4.0
"""How much more CPU time (or memory) per byte the 64-fold stream may take than the
8-fold one before it is a finding. A linear parser measures about 1 here (6 to 8-fold
CPU time for 7.9 times the bytes, on the loaded two-core machine, 2026-12-01); a
quadratic one gives 8 (a planted re-scan, 53 to 59-fold)."""

GROWTH_CONFIRMATIONS: Final = 3
"""Measurements in a row that must each show a time growth before it is a finding."""
GROWTH_RUNS: Final = 3
"""Runs of each size per measurement, the least CPU time kept (timer and cache noise
only ever add)."""
GROWTH_READ_BYTES: Final = 64
"""The read size of the growth check: small reads are where a parser that re-scans its
buffer per read (the quadratic bug STYLE 4 warns of) shows."""

MAX_INPUT_BYTES: Final = 16384
"""Mutated streams are cut to this size: larger inputs slow every check (it feeds each
input several ways) without reaching more states."""

TOKENS: Final = (
    b"data: ",
    b"event: ",
    b"id: ",
    b"retry: ",
    b": ping",
    b"\n\n",
    b"\r\n",
    b"\r",
    b"data: [DONE]\n\n",
    b'"tool_calls"',
    b'"arguments"',
    b'"finish_reason":"tool_calls"',
    b'"index":1',
    b'"type":"error"',
    b'"content_block_stop"',
    b'"functionCall"',
    b'"partial_json"',
    b"\\u0000",
    b"\\ud800",
    b"\xef\xbb\xbf",
    b"\xff",
)
"""Words the parsers branch on, for the insertion mutation."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FuzzReport:
    """What one fuzzing run did and found."""

    findings: tuple[Finding, ...]
    """The distinct findings, one per kind, each with its mutations minimised."""
    inputs: int
    """How many inputs were checked (shrinking included)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One thing the fuzzer found."""

    kind: str
    """What broke, in a few words (``crash-KeyError``, ``split-calls-vs-error-...``,
    ``registry-crash-TypeError``, ``growth-time``)."""
    message: str
    """What happened, in one line."""
    stream: bytes
    """The stream that shows it (Hypothesis minimises the mutations and cuts that made
    it, not the seed stream's bytes)."""
    dialect: str | None
    """The dialect it was fed as (``None``: detected)."""
    cuts: tuple[int, ...] = ()
    """Where the stream was cut when it showed it."""


def load_registry(spec: str) -> Any:
    """The registry ``module:attribute`` names, for ``--registry``.

    Raises:
        UsageError: it cannot be loaded, or it is not a registry (no ``check`` method).
    """
    value = resolve(spec, what="the registry")
    if not callable(getattr(value, "check", None)):
        raise UsageError(f"{spec!r} is not a ToolRegistry (it has no check method)")
    return value


def corpus_seeds(folder: Path) -> list[tuple[bytes, Dialect | None]]:
    """Each stream of the corpus in ``folder`` with its dialect (``None``: detected).

    Raises:
        UsageError: the corpus cannot be read, or it holds no stream.
    """
    out = []
    for entry in manifest.load(folder):
        # Confined to the folder (a symlink that leads out is refused), read or refused
        # with our UsageError, never an OSError or a NUL's ValueError.
        raw = manifest.read_stream(folder, entry.file)
        out.append((raw, entry.dialect))
    if not out:
        raise UsageError(f"{folder} holds no streams to fuzz")
    return out


def _mutate(stream: bytes, other: bytes, choices: Sequence[int], rng: random.Random) -> bytes:
    data = stream
    for choice in choices:
        kind = choice % 8
        at = rng.randrange(len(data) + 1)
        if kind == 0 and data:
            i = min(at, len(data) - 1)
            data = data[:i] + bytes([rng.randrange(256)]) + data[i + 1 :]
        elif kind == 1:
            data = data[:at] + rng.choice(TOKENS) + data[at:]
        elif kind == 2:
            data = data[:at] + data[at + rng.randint(1, 64) :]
        elif kind == 3:
            piece = data[at : at + rng.randint(1, 256)]
            data = data[:at] + piece * rng.randint(2, 4) + data[at:]
        elif kind == 4 and other:
            data = data[:at] + other[rng.randrange(len(other)) :]
        elif kind == 5:
            # The shared mutators work on atheris' inputs (cuts in front): give them one.
            mutated = mutate_json(invariants.encode(data), rng, MAX_INPUT_BYTES)
            if mutated is None:
                # An event stream has no data: lines; its messages are rewritten whole,
                # with valid CRCs (a byte mutation stops at its framer's checksum).
                mutated = mutate_event_stream(invariants.encode(data), rng, MAX_INPUT_BYTES)
            data = data if mutated is None else mutated[invariants.HEADER_BYTES :]
        elif kind == 6:
            mutated = repeat_bytes(invariants.encode(data), rng, MAX_INPUT_BYTES)
            data = data if mutated is None else mutated[invariants.HEADER_BYTES :]
        elif kind == 7:
            data = data[:at]
    return data[:MAX_INPUT_BYTES]


def _registry_check(registry: Any, calls: Sequence[ToolCall]) -> None:
    for call in calls:
        try:
            registry.check(call)
        except (UnknownToolError, InvalidArgumentsError):
            continue


def _calls_of(stream: bytes, dialect: Dialect | None) -> list[ToolCall]:
    parser = ToolCallParser(dialect)
    calls: list[ToolCall] = []
    try:
        calls += parser.feed(stream)
        return calls + parser.finish()
    except TruncatedStreamError as exc:
        return calls + list(exc.completed)
    except SSEToolCallsError:
        return []


def finding_kind(exc: BaseException) -> str:
    """The kind of finding an exception out of :func:`check_input` is, as both engines
    name it: a broken property's own kind, ``registry-crash-<type>`` for what the registry
    let out, ``crash-<type>`` for anything else."""
    if isinstance(exc, RegistryFailure):
        return f"registry-crash-{type(exc.cause).__name__}"
    if isinstance(exc, invariants.InvariantError):
        return exc.kind
    return f"crash-{type(exc).__name__}"


def check_input(
    stream: bytes, dialect: Dialect | None, cuts: Sequence[int], registry: Any = None
) -> None:
    """Hold one input to every property (and the registry, when given).

    Raises:
        invariants.InvariantError: a property broke.
        RegistryFailure: the registry let out an exception that is not a refusal.
        Exception: whatever non-library exception the parser let out.
    """
    targets = [dialect, None] if dialect is not None else [None]
    for target in targets:
        invariants.check("detect" if target is None else target, invariants.encode(stream, cuts))
    if registry is not None:
        calls = _calls_of(stream, dialect)
        try:
            _registry_check(registry, calls)
        except Exception as exc:
            raise RegistryFailure(exc) from exc


class RegistryFailure(Exception):
    """The user's registry raised something other than a refusal on a hostile call."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.cause = cause


def fuzz_corpus(
    folder: str | Path,
    *,
    seconds: float,
    seed: int | None = None,
    registry: Any = None,
    check_growth_first: bool = True,
    max_inputs: int | None = None,
) -> FuzzReport:
    """Fuzz the corpus in ``folder`` for about ``seconds``; report the distinct findings
    (one per kind), each minimised. ``max_inputs`` also ends the run after about that many
    inputs (a batch of 50 is finished): with a ``seed``, a fixed amount of work is the
    same run again on any machine.

    Raises:
        UsageError: the corpus cannot be read or is empty.
    """
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded
    from hypothesis import strategies as st

    root = Path(folder)
    seeds = corpus_seeds(root)
    findings: dict[str, Finding] = {}
    if check_growth_first:
        for raw, dialect in seeds:
            found = check_growth(raw, dialect)
            if found is not None and found.kind not in findings:
                findings[found.kind] = found
    master = random.Random(seed)
    deadline = time.monotonic() + seconds
    failing: list[tuple[bytes, Dialect | None, tuple[int, ...]]] = []
    count = [0]

    @given(
        index=st.integers(0, len(seeds) - 1),
        other=st.integers(0, len(seeds) - 1),
        choices=st.lists(st.integers(0, 7), min_size=0, max_size=6),
        cuts=st.lists(st.integers(0, 65535), min_size=0, max_size=3),
        salt=st.integers(0, 2**32 - 1),
    )
    def one(index: int, other: int, choices: list[int], cuts: list[int], salt: int) -> None:
        raw, dialect = seeds[index]
        stream = _mutate(raw, seeds[other][0], choices, random.Random(salt))
        inner = tuple(sorted({c % (len(stream) + 1) for c in cuts} - {0, len(stream)}))
        count[0] += 1
        try:
            check_input(stream, dialect, inner, registry)
        except BaseException:
            # Hypothesis replays the shrunk example last: the last failure is the one.
            failing[:] = [(stream, dialect, inner)]
            raise

    run = settings(
        max_examples=50,
        deadline=None,
        database=None,
        derandomize=False,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )(one)
    while time.monotonic() < deadline and (max_inputs is None or count[0] < max_inputs):
        # Hypothesis draws from its own random source: seed it per batch, so that a
        # run with --seed is the same run again (within the same time budget).
        try:
            seeded(master.randrange(2**64))(run)()
        except BaseException as exc:  # a finding: anything the checks let out
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            if not failing:
                raise  # Hypothesis itself failed, not a check: not a finding
            stream, dialect, cuts = failing[0]
            cause = exc.cause if isinstance(exc, RegistryFailure) else exc
            kind = finding_kind(exc)
            if kind not in findings:
                findings[kind] = Finding(
                    kind=kind,
                    message=f"{type(cause).__name__}: {str(cause)[:300]}".replace("\n", " "),
                    stream=stream,
                    dialect=dialect,
                    cuts=cuts,
                )
    return FuzzReport(findings=tuple(findings.values()), inputs=count[0])


def _grown(raw: bytes, times: int) -> bytes:
    """The stream with its inner events repeated ``times`` times (first and last kept)."""
    blocks = raw.split(b"\n\n")
    if len(blocks) < 4:
        return raw * times
    head, middle, tail = blocks[:1], blocks[1:-2], blocks[-2:]
    return b"\n\n".join(head + middle * times + tail)


def _parse_in_reads(stream: bytes, dialect: Dialect | None) -> None:
    parser = ToolCallParser(dialect)
    try:
        for at in range(0, len(stream), GROWTH_READ_BYTES):
            parser.feed(stream[at : at + GROWTH_READ_BYTES])
        parser.finish()
    except SSEToolCallsError:
        pass


def _work(small: bytes, large: bytes, dialect: Dialect | None) -> tuple[float, float]:
    """The CPU seconds this thread spends parsing each stream, the least of
    :data:`GROWTH_RUNS` runs, the two sizes taken in turn.

    CPU time of the thread, not wall time: on a loaded machine the wall clock also counts
    the time the process waited for a core, which lands on one run and not the other
    (main's linear parser measured 31.8- and 32.8-fold against the 32-fold bar), while the
    thread's CPU time counts the work done, whatever else runs. Taken in turn so that a
    slow spell (a neighbour filling the caches) falls on both sizes alike. (Hardware
    instruction counters would be exact, but the machines this runs on, VMs, have none.)
    """
    best_small = best_large = float("inf")
    for _ in range(GROWTH_RUNS):
        for stream in (small, large):
            start = time.thread_time()
            _parse_in_reads(stream, dialect)
            spent = time.thread_time() - start
            if stream is small:
                best_small = min(best_small, spent)
            else:
                best_large = min(best_large, spent)
    return best_small, best_large


def _peak_memory(stream: bytes, dialect: Dialect | None) -> int:
    tracemalloc.start()
    try:
        _parse_in_reads(stream, dialect)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak


def check_growth(raw: bytes, dialect: Dialect | None) -> Finding | None:
    """Whether parsing ``raw`` grown 64-fold costs more per byte than grown 8-fold,
    by more than :data:`GROWTH_FACTOR`, in CPU time (the thread's: work done, not the
    wall clock, see :func:`_work`) or in peak memory.

    A time finding must show in :data:`GROWTH_CONFIRMATIONS` measurements in a row: on a
    loaded machine one measurement of the small stream can be lucky while the large one
    is not (main's parser once measured 31.8-fold against the 32-fold bar), and a real
    quadratic cost shows every time."""
    small, large = _grown(raw, 8), _grown(raw, 64)
    if len(large) <= len(small):
        return None
    ratio = len(large) / len(small)
    found: Finding | None = None
    for _ in range(GROWTH_CONFIRMATIONS):
        found = _growth_once(small, large, ratio, dialect)
        if found is None or found.kind == "growth-memory":
            return found  # peak memory is counted, not timed: one measurement tells
    return found


def _growth_once(
    small: bytes, large: bytes, ratio: float, dialect: Dialect | None
) -> Finding | None:
    m_small, m_large = _peak_memory(small, dialect), _peak_memory(large, dialect)
    t_small, t_large = _work(small, large, dialect)
    for kind, a, b in (("memory", m_small, m_large), ("time", t_small, t_large)):
        if a > 0 and b / a > ratio * GROWTH_FACTOR:
            return Finding(
                kind=f"growth-{kind}",
                message=(
                    f"{kind} grew {b / a:.1f}-fold for {ratio:.1f} times the bytes "
                    f"({len(small)} -> {len(large)} bytes, read {GROWTH_READ_BYTES} at a time)"
                ),
                stream=large,
                dialect=dialect,
            )
    return None


def save_findings(folder: str | Path, findings: Sequence[Finding]) -> list[Path]:
    """Write each finding as a corpus stream with a manifest entry; return the files."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    existing = root / manifest.MANIFEST
    import orjson

    entries: list[dict[str, Any]] = orjson.loads(existing.read_bytes()) if existing.exists() else []
    written = []
    for finding in findings:
        digest = hashlib.sha256(finding.stream).hexdigest()[:12]
        name = f"{finding.kind}-{digest}.sse"
        (root / name).write_bytes(finding.stream)
        bounds = [0, *finding.cuts, len(finding.stream)]
        chunks = [b - a for a, b in itertools.pairwise(bounds) if b > a]
        entries = [e for e in entries if e.get("file") != name]
        entries.append(
            {
                "file": name,
                "dialect": finding.dialect,
                "finding": finding.kind,
                "message": finding.message,
                **({"chunks": chunks} if finding.cuts else {}),
            }
        )
        written.append(root / name)
    manifest.write(root, entries)
    return written
