"""Check one stream, or a corpus of them, against every property the parser promises.

Each stream is parsed with its dialect given and with the dialect detected, and must

- give the same outcome (the same calls, or the same error and truncation reason) fed
  whole, in its recorded chunks, byte by byte, at seeded random splits, and in every
  server variant that keeps its end (:mod:`.transforms`);
- keep the prefix property at every cut: a prefix either raises
  :class:`TruncatedStreamError` whose completed calls begin the whole stream's, or gives
  exactly the whole stream's calls, or raises the whole stream's own error. Every cut is
  tried for streams up to :data:`EVERY_CUT_MAX_BYTES`; past that, a seeded sample of
  :data:`SAMPLED_CUTS` cuts plus every event boundary and the bytes either side of it
  (where the parser's state changes);
- hold to the fuzz invariants (:mod:`.invariants`: only our exceptions, well-formed
  calls, ``StreamParser`` agreeing with ``ToolCallParser``, refusal after the end);
- give the manifest's expected outcome and calls, when it has them.

Anything but our exceptions is reported as a crash, never raised: the checker reports
on every stream of the corpus.
"""

from __future__ import annotations

import itertools
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson

from ...calls import Dialect, ToolCall
from ...errors import ProviderError, SSEToolCallsError, TruncatedStreamError, UsageError
from ...parser import ToolCallParser
from . import invariants
from .manifest import MANIFEST, CorpusPathError, Entry, load, read_stream
from .transforms import KEEPS_END, transforms

__all__ = [
    "EVERY_CUT_MAX_BYTES",
    "SAMPLED_CUTS",
    "StreamResult",
    "assert_stream_invariants",
    "check_corpus",
    "check_stream",
]

EVERY_CUT_MAX_BYTES: Final = 4096
"""Streams up to this many bytes are cut at every byte: every stream of our
``recorded_streams/`` (the largest is 3.7 KB) and most of the shared corpus. Each cut is
a fresh parse, so the cost grows with the square of the size."""

SAMPLED_CUTS: Final = 256
"""Random cuts of a larger stream, on top of its event boundaries (seeded per file, so a
failure is reproduced by running the check again)."""

RANDOM_SPLITS: Final = 8
"""Random splittings of each stream into 1-40 chunks, as the shared checker does."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamResult:
    """What the check found on one stream."""

    file: str
    """The stream's path in its corpus."""
    problem: str | None
    """The first property that broke, in one line, or ``None``: the stream passed."""


@dataclass(frozen=True, slots=True)
class _Outcome:
    kind: str
    """"ok", "truncated", "provider_error", another error's class name, or "crash"."""
    calls: tuple[tuple[str, bytes, str | None], ...]
    """The calls (ok), or the calls completed or released before the error."""
    detail: str | None = None
    """The truncation reason, or the crash's exception."""


def _brief(calls: Sequence[ToolCall]) -> tuple[tuple[str, bytes, str | None], ...]:
    # Types count (1 and 1.0 are different arguments), key order does not.
    return tuple(
        (c.name, orjson.dumps(c.args, option=orjson.OPT_SORT_KEYS), c.call_id) for c in calls
    )


def _run(dialect: Dialect | None, chunks: Sequence[bytes]) -> _Outcome:
    parser = ToolCallParser(dialect)
    released: list[ToolCall] = []
    try:
        for chunk in chunks:
            released += parser.feed(chunk)
        released += parser.finish()
    except TruncatedStreamError as exc:
        return _Outcome("truncated", _brief(released + list(exc.completed)), exc.reason)
    except ProviderError:
        return _Outcome("provider_error", _brief(released))
    except SSEToolCallsError as exc:
        return _Outcome(type(exc).__name__, _brief(released))
    except Exception as exc:  # a defect of the parser: reported, not raised
        return _Outcome("crash", (), f"{type(exc).__name__}: {str(exc)[:160]}")
    return _Outcome("ok", _brief(released))


def _show(outcome: _Outcome) -> str:
    if outcome.kind == "crash":
        return f"a crash ({outcome.detail})"
    names = [name for name, _, _ in outcome.calls]
    if outcome.kind == "ok":
        return f"{len(names)} calls {names}"
    reason = f" ({outcome.detail})" if outcome.detail else ""
    return f"{outcome.kind}{reason} after {len(names)} calls {names}"


def _prefix_problem(whole: _Outcome, prefix: _Outcome) -> str | None:
    if prefix.kind == "crash":
        return f"raised {prefix.detail}"
    if prefix.kind == "ok":
        if whole.kind != "ok" or prefix.calls != whole.calls:
            return f"a prefix gave {_show(prefix)}, the whole stream {_show(whole)}"
        return None
    if prefix.kind not in ("truncated", whole.kind):
        return f"a prefix raised {prefix.kind}, the whole stream gave {_show(whole)}"
    if prefix.calls != whole.calls[: len(prefix.calls)]:
        return f"a cut stream completed calls the whole does not: {_show(prefix)}"
    return None


def _cuts(raw: bytes, rng: random.Random) -> list[int]:
    if len(raw) <= EVERY_CUT_MAX_BYTES:
        return list(range(len(raw)))
    cuts = {rng.randrange(len(raw)) for _ in range(SAMPLED_CUTS)}
    at = raw.find(b"\n\n")
    while at != -1:
        cuts.update((at, at + 1, at + 2, at + 3))
        at = raw.find(b"\n\n", at + 1)
    return sorted(c for c in cuts if c < len(raw))


def _random_splits(raw: bytes, rng: random.Random) -> list[list[bytes]]:
    out = []
    for _ in range(RANDOM_SPLITS if len(raw) > 1 else 0):
        count = min(len(raw) - 1, rng.randint(1, 40))
        bounds = [0, *sorted(rng.sample(range(1, len(raw)), count)), len(raw)]
        out.append([raw[a:b] for a, b in itertools.pairwise(bounds)])
    return out


def _expected_problem(whole: _Outcome, expected: dict[str, Any]) -> str | None:
    want = expected["outcome"]
    if want in ("truncated", "provider_error"):
        return None if whole.kind == want else f"expected {want}, got {_show(whole)}"
    calls = [
        (c.get("name"), orjson.dumps(c.get("args"), option=orjson.OPT_SORT_KEYS), c.get("call_id"))
        for c in expected.get("calls", [])
    ]
    if whole.kind != "ok":
        return f"expected {len(calls)} calls, got {_show(whole)}"
    if list(whole.calls) != calls:
        got = [(n, a.decode(), i) for n, a, i in whole.calls]
        return f"calls differ from the manifest's: got {str(got)[:300]}"
    return None


def _check_as(
    raw: bytes,
    dialect: Dialect | None,
    expected: dict[str, Any] | None,
    chunks: Sequence[int] | None,
    rng: random.Random,
) -> tuple[_Outcome, str | None]:
    whole = _run(dialect, [raw])
    if whole.kind == "crash":
        return whole, f"[whole] raised {whole.detail}"
    # The manifest first: a wrong answer is the likeliest defect and the plainest to read.
    problem = None if expected is None else _expected_problem(whole, expected)
    if problem is not None:
        return whole, f"[whole] {problem}"
    feedings: list[tuple[str, list[bytes]]] = []
    if chunks:
        bounds = [0]
        for size in chunks:
            bounds.append(bounds[-1] + size)
        if bounds[-1] == len(raw):
            feedings.append(("recorded chunks", [raw[a:b] for a, b in itertools.pairwise(bounds)]))
    feedings.append(("byte by byte", [raw[i : i + 1] for i in range(len(raw))]))
    feedings += [(f"random split {n}", s) for n, s in enumerate(_random_splits(raw, rng))]
    variants = transforms(raw, dialect)
    for name, variant in variants.items():
        if name in KEEPS_END and name not in ("as recorded", "one byte at a time"):
            feedings.append((name, variant))
    for label, feeding in feedings:
        got = _run(dialect, feeding)
        if got != whole:
            return whole, f"[{label}] gave {_show(got)}, whole gave {_show(whole)}"
    for name, variant in variants.items():
        if name not in KEEPS_END:
            got = _run(dialect, variant)
            problem = _prefix_problem(whole, got)
            if problem is not None and got.kind != "crash":
                # A variant without the end marker may end truncated, never otherwise.
                continue
            if problem is not None:
                return whole, f"[{name}] {problem}"
    for cut in _cuts(raw, rng):
        problem = _prefix_problem(whole, _run(dialect, [raw[:cut]]))
        if problem is not None:
            return whole, f"[cut at {cut}] {problem}"
    target = "detect" if dialect is None else dialect
    head = [rng.randrange(len(raw) + 1) for _ in range(3)]
    try:
        invariants.check(target, invariants.encode(raw, head if len(raw) < 65536 else ()))
    except invariants.InvariantError as exc:
        return whole, f"[invariants] {str(exc)[:300]}"
    except Exception as exc:  # a defect of the library: reported, not raised
        return whole, f"[invariants] raised {type(exc).__name__}: {str(exc)[:160]}"
    return whole, None


def check_stream(
    raw: bytes,
    *,
    dialect: Dialect | None = None,
    expected: dict[str, Any] | None = None,
    chunks: Sequence[int] | None = None,
    seed: str = "streams",
) -> str | None:
    """Check one stream; return the first problem in one line, or ``None``.

    Args:
        raw: the stream's bytes.
        dialect: the dialect it speaks; it is also parsed with the dialect detected.
        expected: ``{"outcome": ..., "calls": [...]}`` as in a manifest, or ``None``.
        chunks: the byte length of each read as recorded, fed as one more splitting.
        seed: seeds the random splits and sampled cuts (a failure reproduces).
    """
    rng = random.Random(f"{seed}:{len(raw)}:{raw[:64]!r}")
    modes = [dialect, None] if dialect is not None else [None]
    first: _Outcome | None = None
    for mode in modes:
        label = mode or "detected"
        whole, problem = _check_as(raw, mode, expected, chunks, rng)
        if problem is not None:
            return f"({label}) {problem}"
        if first is None:
            first = whole
        elif whole != first:
            return f"(detected) gave {_show(whole)}, with {dialect} given {_show(first)}"
    return None


def _check_entry(folder: Path, entry: Entry, seed: str) -> StreamResult:
    try:
        raw = read_stream(folder, entry.file)
    except CorpusPathError as exc:
        return StreamResult(file=entry.file, problem=f"refused: {exc}")
    except UsageError as exc:
        return StreamResult(file=entry.file, problem=f"cannot read it: {exc}")
    problem = check_stream(
        raw, dialect=entry.dialect, expected=entry.expected, chunks=entry.chunks, seed=seed
    )
    return StreamResult(file=entry.file, problem=problem)


def check_corpus(folder: str | os.PathLike[str], *, seed: str = "streams") -> list[StreamResult]:
    """Check every stream of the corpus in ``folder``, in manifest order.

    Raises:
        UsageError: the folder or its manifest cannot be read.
    """
    root = Path(folder)
    return [_check_entry(root, entry, seed) for entry in load(root)]


def _entry_for(path: Path) -> Entry | None:
    for folder in path.resolve().parents:
        if (folder / MANIFEST).exists():
            name = path.resolve().relative_to(folder).as_posix()
            for entry in load(folder):
                if entry.file == name:
                    return entry
            return None
    return None


def assert_stream_invariants(
    path: str | os.PathLike[str],
    *,
    dialect: Dialect | None = None,
    expected: dict[str, Any] | None = None,
) -> None:
    """Check the stream in ``path`` as ``sse-toolcalls check`` does, for a test suite.

    The dialect, expected outcome and recorded chunks come from the nearest
    ``MANIFEST.json`` above the file that lists it, unless given here.

    Raises:
        AssertionError: a property broke; the message says which, where.
        UsageError: the file or its manifest cannot be read.
    """
    stream = Path(path)
    try:
        raw = stream.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {stream}: {exc}") from exc
    entry = _entry_for(stream)
    if entry is not None:
        dialect = entry.dialect if dialect is None else dialect
        expected = entry.expected if expected is None else expected
    problem = check_stream(
        raw,
        dialect=dialect,
        expected=expected,
        chunks=entry.chunks if entry is not None else None,
    )
    if problem is not None:
        raise AssertionError(f"{stream}: {problem}")
