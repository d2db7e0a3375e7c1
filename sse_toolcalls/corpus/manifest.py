"""A corpus folder: ``.sse`` streams and a ``MANIFEST.json`` that says what each should give.

The manifest is a JSON list, one object per stream, in the layout of the shared external
corpus (so ``sse-toolcalls check`` reads that corpus in place)::

    {"file": "openai_chat/one_call.sse",
     "provider": "openai_chat",              # or "dialect"; openai_compat_* means Chat
     "expected": {"outcome": "complete",     # complete | no_calls | truncated | provider_error
                  "calls": [{"name": "f", "args": {}, "call_id": "c1"}]}}

``file`` is relative and stays inside the folder (no ``..``, no absolute path). A
recorded entry adds what the recorder saw (``path``, ``status``, ``headers``,
``chunks``: the byte length of each read, ``error``, ``recorded_at``). A stream without an
``expected`` is checked for the invariants only; a folder without a manifest is every
``.sse`` file below it, with the dialect detected.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Final

import orjson

from ..calls import DIALECTS, Dialect, as_dialect
from ..errors import UnknownDialectError, UsageError

__all__ = ["MANIFEST", "OUTCOMES", "Entry", "load", "write"]

MANIFEST: Final = "MANIFEST.json"
"""The manifest's file name in a corpus folder."""

OUTCOMES: Final = ("complete", "no_calls", "truncated", "provider_error")
"""What a stream may be expected to give."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One stream of a corpus."""

    file: str
    """The stream's path, relative to the corpus folder, with ``/`` separators."""
    dialect: Dialect | None
    """The dialect the stream speaks, or ``None`` where the manifest does not say."""
    expected: dict[str, Any] | None
    """``{"outcome": ..., "calls": [...]}``, or ``None``: check the invariants only."""
    chunks: tuple[int, ...] | None = None
    """The byte length of each read as recorded, or ``None`` where not recorded."""
    extra: dict[str, Any] = field(default_factory=dict)
    """The entry's other fields, kept as read."""


def _dialect(entry: dict[str, Any], where: str) -> Dialect | None:
    name = entry.get("dialect") or entry.get("provider")
    if not isinstance(name, str):
        return None
    # The shared corpus names OpenAI-compatible servers by vendor; they all speak Chat.
    if name.startswith("openai_compat_"):
        return "openai_chat"
    try:
        return as_dialect(name)
    except UnknownDialectError:
        raise UsageError(f"{where}: unknown dialect {name!r}; expected one of {DIALECTS}") from None


def load(folder: str | os.PathLike[str]) -> list[Entry]:
    """The entries of the corpus in ``folder``.

    Raises:
        UsageError: the folder or its manifest cannot be read, or an entry is malformed.
    """
    root = Path(folder)
    if not root.is_dir():
        raise UsageError(f"{root} is not a folder")
    manifest = root / MANIFEST
    if not manifest.exists():
        files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.sse"))
        return [Entry(file=name, dialect=None, expected=None) for name in files]
    try:
        entries = orjson.loads(manifest.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise UsageError(f"cannot read {manifest}: {exc}") from exc
    if not isinstance(entries, list):
        raise UsageError(f"{manifest}: expected a JSON list of entries")
    out = []
    for number, entry in enumerate(entries):
        where = f"{manifest}: entry {number}"
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
            raise UsageError(f'{where} has no "file"')
        name = PurePosixPath(entry["file"])
        if name.is_absolute() or ".." in name.parts or not name.parts:
            # A manifest speaks for its own folder: `check` and `fuzz` read what it names,
            # and a shared corpus must not make them read /etc/shadow or ../secrets.
            raise UsageError(
                f'{where}: "file" must name a file inside {root}, not {entry["file"]!r}'
            )
        dialect = _dialect(entry, where)
        expected = entry.get("expected")
        if expected is not None and not (
            isinstance(expected, dict)
            and expected.get("outcome") in OUTCOMES
            and isinstance(expected.get("calls", []), list)
        ):
            raise UsageError(f'{where}: "expected" needs an outcome of {OUTCOMES}')
        chunks = entry.get("chunks")
        if chunks is not None and not (
            isinstance(chunks, list) and all(type(n) is int and n > 0 for n in chunks)
        ):
            raise UsageError(f'{where}: "chunks" must be a list of positive byte counts')
        rest = {k: v for k, v in entry.items() if k not in ("file", "expected", "chunks")}
        out.append(
            Entry(
                file=entry["file"],
                dialect=dialect,
                expected=expected,
                chunks=None if chunks is None else tuple(chunks),
                extra=rest,
            )
        )
    return out


def write(folder: str | os.PathLike[str], entries: list[dict[str, Any]]) -> None:
    """Write ``entries`` as the manifest of ``folder``, atomically (a reader never sees
    half a manifest: the recorder rewrites it after every stream)."""
    target = Path(folder) / MANIFEST
    scratch = target.with_suffix(".json.tmp")
    scratch.write_bytes(orjson.dumps(entries, option=orjson.OPT_INDENT_2) + b"\n")
    os.replace(scratch, target)
