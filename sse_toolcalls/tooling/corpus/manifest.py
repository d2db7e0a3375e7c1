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
``.sse`` (and Amazon Bedrock ``.eventstream``) file below it, with the dialect detected.

A folder of the corpus may have a manifest of its own (the shared corpus keeps its
Bedrock streams so: ``bedrock/MANIFEST.json``, whose files are named from the corpus
root, ``bedrock/x.eventstream``): it is read with the corpus's, and read alone when its
folder is the one checked (a file named from the root above is then found in it).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Final

import orjson

from ...calls import DIALECTS, Dialect
from ...errors import UnknownDialectError, UsageError
from ...messages import as_dialect

__all__ = [
    "MANIFEST",
    "OUTCOMES",
    "CorpusPathError",
    "Entry",
    "load",
    "read_stream",
    "stream_path",
    "write",
]

MANIFEST: Final = "MANIFEST.json"
"""The manifest's file name in a corpus folder."""

OUTCOMES: Final = ("complete", "no_calls", "truncated", "provider_error")
"""What a stream may be expected to give."""


class CorpusPathError(UsageError):
    """A stream's path is not one the corpus may name: outside its folder (absolute,
    ``..``, a symlink that leads out), not a regular file, or not a path at all (a NUL, a
    control character, a backslash)."""


def _name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a stream of a corpus, or ``None``."""
    if not name or any(ord(c) < 0x20 or c == "\x7f" for c in name):
        # NUL ends a C path; a newline would forge a line of `check`'s report.
        return "it is empty or holds a NUL or another control character"
    try:
        os.fsencode(name)
    except UnicodeEncodeError:
        return "it does not encode as a file name (a lone surrogate?)"
    if "\\" in name or (len(name) > 1 and name[0].isalpha() and name[1] == ":"):
        # A Windows separator or drive: on Windows "..\\x" and "C:x" leave the folder.
        return "it holds a backslash or a drive letter (use / separators)"
    parts = PurePosixPath(name)
    if parts.is_absolute() or ".." in parts.parts or not parts.parts:
        return "it is absolute or climbs out with .."
    return None


def stream_path(folder: str | os.PathLike[str], name: str) -> Path:
    """The file a corpus entry names, resolved, and checked to stay inside ``folder``.

    Raises:
        CorpusPathError: the name is not a path inside the folder, or a symlink on the
            way (the file or a folder) leads out of it.
    """
    problem = _name_problem(name)
    if problem is not None:
        raise CorpusPathError(f"{name!r} is not a stream of {folder}: {problem}")
    root = Path(folder).resolve()
    try:
        target = (root / name).resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop
        raise CorpusPathError(f"{name!r} cannot be resolved: {exc}") from exc
    if not target.is_relative_to(root):
        # A corpus speaks for its own folder: a symlink must not make `check` read and
        # print ~/.ssh/id_ed25519 or /etc/shadow.
        raise CorpusPathError(f"{name!r} leads outside {folder} (a symlink?)")
    return target


def read_stream(folder: str | os.PathLike[str], name: str) -> bytes:
    """The bytes of the stream ``name`` of the corpus in ``folder``.

    Raises:
        CorpusPathError: as :func:`stream_path`, or the path is no regular file (a FIFO
            would block the reader for good; a device has no end).
        UsageError: the file cannot be read.
    """
    target = stream_path(folder, name)
    try:
        # O_NOFOLLOW: the path was resolved, so a symlink here appeared since; O_NONBLOCK:
        # opening a FIFO must not wait for a writer before fstat refuses it.
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        handle = os.open(target, flags)
    except OSError as exc:
        raise UsageError(f"cannot read {name!r}: {exc.strerror or exc}") from exc
    with os.fdopen(handle, "rb") as stream:
        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            raise CorpusPathError(f"{name!r} is not a regular file")
        try:
            return stream.read()
        except OSError as exc:
            raise UsageError(f"cannot read {name!r}: {exc.strerror or exc}") from exc


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
    # ... and Anthropic models through Bedrock's InvokeModelWithResponseStream so.
    if name == "bedrock_invoke_anthropic":
        return "bedrock_anthropic"
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
        files = sorted(
            p.relative_to(root).as_posix()
            for pattern in ("*.sse", "*.eventstream")
            for p in root.rglob(pattern)
        )
        return [Entry(file=name, dialect=None, expected=None) for name in files]
    out = _entries(root, manifest)
    for inner in sorted(root.glob(f"*/{MANIFEST}")):
        out += _entries(root, inner)
    return out


def _entries(root: Path, manifest: Path) -> list[Entry]:
    """The entries of one manifest of the corpus in ``root``."""
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
        name = entry["file"]
        problem = _name_problem(name)
        if problem is not None:
            # A manifest speaks for its own folder: `check` and `fuzz` read what it names,
            # and a shared corpus must not make them read /etc/shadow or ../secrets.
            raise CorpusPathError(
                f'{where}: "file" must name a file inside {root}, not {entry["file"]!r}: {problem}'
            )
        inner = name.removeprefix(f"{root.name}/")
        if inner != name and _name_problem(inner) is None and not (root / name).exists():
            # A folder's own manifest read alone: its files are named from the root above
            # (still inside this folder: the name only loses its first part).
            name = inner
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
                file=name,
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
