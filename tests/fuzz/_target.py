"""One atheris fuzz target, in its own process (the runner in ``__main__`` starts it).

    python -m tests.fuzz._target TARGET [libFuzzer flags] CORPUS_DIR...

libFuzzer ends the process itself, so each target gets its own. With the environment
variable ``SSE_TOOLCALLS_FUZZ_FINDINGS`` set to a folder, a finding does not stop the
run: the shortest input of each distinct finding is kept there (``<signature>.bin``,
with ``<signature>.txt`` telling the exception and the traceback), and fuzzing goes on.
Without it, the first finding is a crash, as libFuzzer reports it (the CI smoke).
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import sys
import traceback
from pathlib import Path

import atheris  # type: ignore[import-untyped,import-not-found,unused-ignore]

# Only the library is instrumented: coverage of the checker or of the stdlib would
# steer the fuzzer towards inputs that are new to them, not to sse_toolcalls.
with atheris.instrument_imports(include=["sse_toolcalls"]):
    import sse_toolcalls
    import sse_toolcalls._json
    import sse_toolcalls.dialects
    import sse_toolcalls.parser
    import sse_toolcalls.sse

from .invariants import TARGETS, InvariantError, check, decode
from .mutators import mutate_json, repeat_bytes

__all__ = ["finding_signature", "main", "mutate"]

_LIBRARY = os.path.dirname(sse_toolcalls.__file__)


def finding_signature(exc: BaseException) -> str:
    """A short name for a finding, stable across inputs that hit the same defect.

    An exception is named by its type and the innermost library function it passed
    through (no line numbers: they move with every fix); a broken property by its kind.
    """
    if isinstance(exc, InvariantError):
        return "invariant-" + exc.kind
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if os.path.abspath(f.filename).startswith(_LIBRARY)
    ]
    where = "outside"
    if frames:
        inner = frames[-1]
        module = os.path.relpath(inner.filename, _LIBRARY).removesuffix(".py")
        where = f"{module.replace(os.sep, '.')}.{inner.name}"
    return f"{type(exc).__name__}-{where}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:120]


def _describe(target: str, data: bytes, exc: BaseException, hits: int) -> str:
    stream, cuts = decode(data)
    lines = traceback.format_exception(exc)
    if len(lines) > 40:
        lines = [*lines[:12], "  ...\n", *lines[-24:]]
    return (
        f"target: {target}\n"
        f"finding: {finding_signature(exc)}\n"
        f"hits in the run that saved it: {hits}\n"
        f"input: {len(data)} bytes (stream {len(stream)} bytes, cuts {cuts})\n"
        f"stream (first 600 bytes): {stream[:600]!r}\n\n" + "".join(lines)
    )


def mutate(data: bytes, max_size: int, seed: int) -> bytes:
    """libFuzzer's own mutations, and one time in four a structure-aware one.

    Byte-level mutations grow an input a few bytes at a time and rarely keep an event's
    JSON valid, and nothing in the coverage rewards the 500th ``[`` over the 499th: the
    limits worth testing are hundreds of repeats or one hostile JSON value away (see
    ``mutators``).
    """
    rng = random.Random(seed)
    choice = rng.randrange(8)
    mutated: bytes | None = None
    if choice == 0:
        mutated = repeat_bytes(data, rng, max_size)
    elif choice == 1:
        mutated = mutate_json(data, rng, max_size)
    if mutated is None:
        mutated = atheris.Mutate(data, max_size)
    return mutated


class _KeepGoing:
    """Records findings instead of crashing, keeping the shortest input of each kind."""

    def __init__(self, target: str, folder: Path) -> None:
        self.target = target
        self.folder = folder
        self.hits: dict[str, int] = {}
        self.best: dict[str, int] = {}
        folder.mkdir(parents=True, exist_ok=True)
        # A finding kept by an earlier run is replaced only by a shorter input.
        for old in folder.glob("*.bin"):
            self.best[old.stem] = old.stat().st_size

    def record(self, data: bytes, exc: BaseException) -> None:
        name = _slug(finding_signature(exc))
        self.hits[name] = self.hits.get(name, 0) + 1
        if name in self.best and self.best[name] <= len(data):
            return
        self.best[name] = len(data)
        (self.folder / f"{name}.bin").write_bytes(data)
        (self.folder / f"{name}.txt").write_text(
            _describe(self.target, data, exc, self.hits[name]), encoding="utf-8"
        )
        sha = hashlib.sha1(data).hexdigest()[:12]
        print(f"#finding {name} ({len(data)} bytes, {sha})", file=sys.stderr, flush=True)


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: python -m tests.fuzz._target {{{','.join(TARGETS)}}} [libFuzzer args]")
    target = sys.argv[1]
    folder = os.environ.get("SSE_TOOLCALLS_FUZZ_FINDINGS")
    keeper = _KeepGoing(target, Path(folder)) if folder else None

    def one_input(data: bytes) -> None:
        if keeper is None:
            check(target, data)
            return
        try:
            check(target, data)
        except Exception as exc:  # every escape is a finding, recorded and survived
            keeper.record(data, exc)

    atheris.Setup([sys.argv[0], *sys.argv[2:]], one_input, custom_mutator=mutate)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
