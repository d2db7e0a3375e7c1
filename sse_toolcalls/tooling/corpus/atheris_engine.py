"""The atheris engine of ``sse-toolcalls fuzz``, and the runner of ``python -m
tests.tooling.fuzz``.

Coverage-guided fuzzing (libFuzzer, through atheris) of the library only: the child
process instruments ``sse_toolcalls``' core before anything else imports it, so coverage
of the checker or of the stdlib never steers the fuzzer. Each target runs in its own
child process, because libFuzzer ends its process itself (on a crash, a timeout or the end
of the budget): the parent reads the child's report and is never taken down with it.

Inputs are :mod:`.invariants`' (three cut positions, then the stream) and are held to the
same properties as the Hypothesis engine's, with the same structure-aware mutations
(:mod:`.mutators`) mixed into libFuzzer's own. In the child, environment variables say
what to do (libFuzzer owns the command line):

``SSE_TOOLCALLS_FUZZ_FINDINGS``
    a folder: findings do not stop the run; the shortest input of each distinct finding is
    kept there (``<name>.bin`` and ``<name>.txt``). Unset: the first finding is a crash.
``SSE_TOOLCALLS_FUZZ_MODE``
    ``corpus``: the target is a dialect (or ``detect``) and each input goes through
    :func:`.fuzz.check_input`, findings named as the Hypothesis engine names them.
    Otherwise the target is one of :data:`.invariants.TARGETS`, checked by
    :func:`.invariants.check` (the ``tests/tooling/fuzz`` harness).
``SSE_TOOLCALLS_FUZZ_REGISTRY``
    ``module:attribute`` of a ``ToolRegistry``, in corpus mode.
``SSE_TOOLCALLS_FUZZ_IMPORT``
    modules (comma-separated; ``module:function`` also calls the function) imported after
    instrumentation, before fuzzing: how a test plants a defect in the child's parser.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from ...messages import as_dialect
from . import fuzz, invariants
from .fuzz import Finding, FuzzReport
from .mutators import mutate_event_stream, mutate_json, repeat_bytes

__all__ = [
    "CHILD_CODE",
    "TargetResult",
    "available",
    "child_main",
    "finding_signature",
    "fuzz_corpus_atheris",
    "mutate",
    "run_target",
    "write_dictionary",
]

CHILD_CODE: Final = """\
import atheris
with atheris.instrument_imports(include=["sse_toolcalls"]):
    import sse_toolcalls, sse_toolcalls._json, sse_toolcalls.dialects
    import sse_toolcalls.parser, sse_toolcalls.framing.sse
from sse_toolcalls.tooling.corpus.atheris_engine import child_main
child_main()
"""
"""What the child runs (``python -c``): the core is imported, instrumented, before the
engine (and with it the checker) is, which ``python -m`` of a module in the package could
not do (it imports the package first)."""

MAX_LEN: Final = 8192
"""libFuzzer's largest input, in bytes: room for the structure-aware mutations (by default
libFuzzer caps inputs at the largest seed, a few KB for most dialects)."""

_FINDING = re.compile(r"^#finding (\S+)", re.MULTILINE)
_EXECUTED = re.compile(r"stat::number_of_executed_units: (\d+)")
_ARTIFACT = re.compile(r"Test unit written to (\S+)")
_LIBRARY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def available() -> bool:
    """Whether atheris can be imported (the ``fuzz`` extra is installed)."""
    return importlib.util.find_spec("atheris") is not None


# ---- the child ---------------------------------------------------------------------------


def finding_signature(exc: BaseException) -> str:
    """A short name for a finding, stable across inputs that hit the same defect.

    An exception is named by its type and the innermost library function it passed
    through (no line numbers: they move with every fix); a broken property by its kind.
    """
    if isinstance(exc, invariants.InvariantError):
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


def _describe(target: str, name: str, data: bytes, exc: BaseException, hits: int) -> str:
    stream, cuts = invariants.decode(data)
    lines = traceback.format_exception(exc)
    if len(lines) > 40:
        lines = [*lines[:12], "  ...\n", *lines[-24:]]
    message = f"{type(exc).__name__}: {str(exc)[:300]}".replace("\n", " ")
    return (
        f"target: {target}\n"
        f"finding: {name}\n"
        f"message: {message}\n"
        f"hits in the run that saved it: {hits}\n"
        f"input: {len(data)} bytes (stream {len(stream)} bytes, cuts {cuts})\n"
        f"stream (first 600 bytes): {stream[:600]!r}\n\n" + "".join(lines)
    )


def mutate(data: bytes, max_size: int, seed: int) -> bytes:
    """libFuzzer's own mutations, and one time in four a structure-aware one.

    Byte-level mutations grow an input a few bytes at a time and rarely keep an event's
    JSON valid, and nothing in the coverage rewards the 500th ``[`` over the 499th: the
    limits worth testing are hundreds of repeats or one hostile JSON value away (see
    :mod:`.mutators`). Only in the child (it needs atheris).
    """
    import atheris  # type: ignore[import-untyped,import-not-found,unused-ignore]

    rng = random.Random(seed)
    choice = rng.randrange(8)
    mutated: bytes | None = None
    if choice == 0:
        mutated = repeat_bytes(data, rng, max_size)
    elif choice == 1:
        mutated = mutate_json(data, rng, max_size)
    elif (
        choice in (2, 3) and data[invariants.HEADER_BYTES : invariants.HEADER_BYTES + 1] == b"\x00"
    ):
        # An event stream: byte mutations nearly all break a CRC and stop at the framer,
        # so a quarter of its mutations rewrite whole messages with valid CRCs.
        mutated = mutate_event_stream(data, rng, max_size)
    if mutated is None:
        mutated = atheris.Mutate(data, max_size)
    return bytes(mutated)


class _KeepGoing:
    """Records findings instead of crashing, keeping the shortest input of each kind."""

    def __init__(self, target: str, folder: Path, name: Callable[[BaseException], str]) -> None:
        self.target = target
        self.folder = folder
        self.name = name
        self.hits: dict[str, int] = {}
        self.best: dict[str, int] = {}
        folder.mkdir(parents=True, exist_ok=True)
        # A finding kept by an earlier run is replaced only by a shorter input.
        for old in folder.glob("*.bin"):
            self.best[old.stem] = old.stat().st_size

    def record(self, data: bytes, exc: BaseException) -> None:
        name = _slug(self.name(exc))
        self.hits[name] = self.hits.get(name, 0) + 1
        if name in self.best and self.best[name] <= len(data):
            return
        self.best[name] = len(data)
        (self.folder / f"{name}.bin").write_bytes(data)
        (self.folder / f"{name}.txt").write_text(
            _describe(self.target, name, data, exc, self.hits[name]), encoding="utf-8"
        )
        sha = hashlib.sha1(data).hexdigest()[:12]
        sys.stderr.write(f"#finding {name} ({len(data)} bytes, {sha})\n")
        sys.stderr.flush()


def _corpus_check(target: str) -> tuple[Callable[[bytes], None], Callable[[BaseException], str]]:
    """The Hypothesis engine's check and names, for one dialect (or ``detect``)."""
    spec = os.environ.get("SSE_TOOLCALLS_FUZZ_REGISTRY")
    registry = None if not spec else fuzz.load_registry(spec)
    dialect = None if target == "detect" else as_dialect(target)

    def check(data: bytes) -> None:
        stream, cuts = invariants.decode(data)
        fuzz.check_input(stream, dialect, cuts, registry)

    return check, fuzz.finding_kind


def child_main(argv: Sequence[str] | None = None) -> None:
    """Fuzz one target in this process: ``TARGET [libFuzzer flags] CORPUS_DIR...``.

    Runs :data:`CHILD_CODE` (``python -c``) so that the core is instrumented; libFuzzer
    exits the process when it is done.
    """
    import atheris  # type: ignore[import-untyped,import-not-found,unused-ignore]

    args = list(sys.argv if argv is None else argv)
    corpus_mode = os.environ.get("SSE_TOOLCALLS_FUZZ_MODE") == "corpus"
    allowed = invariants.STREAM_TARGETS if corpus_mode else invariants.TARGETS
    if len(args) < 2 or args[1] not in allowed:
        sys.exit(f"usage: TARGET [libFuzzer args] CORPUS_DIR...; TARGET one of {allowed}")
    target = args[1]
    for spec in filter(None, os.environ.get("SSE_TOOLCALLS_FUZZ_IMPORT", "").split(",")):
        module, _, function = spec.strip().partition(":")
        loaded = importlib.import_module(module)
        if function:
            getattr(loaded, function)()
    if corpus_mode:
        check, name = _corpus_check(target)
    else:

        def check(data: bytes) -> None:
            invariants.check(target, data)

        name = finding_signature
    folder = os.environ.get("SSE_TOOLCALLS_FUZZ_FINDINGS")
    keeper = _KeepGoing(target, Path(folder), name) if folder else None

    def one_input(data: bytes) -> None:
        if keeper is None:
            check(data)
            return
        try:
            check(data)
        except Exception as exc:  # every escape is a finding, recorded and survived
            keeper.record(data, exc)

    atheris.Setup([args[0], *args[2:]], one_input, custom_mutator=mutate)
    atheris.Fuzz()


# ---- the parent --------------------------------------------------------------------------


@dataclass
class TargetResult:
    """What one child process ran and found."""

    target: str
    inputs: int
    seconds: float
    exit_code: int
    output: str
    findings: list[str] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.findings


def write_dictionary(path: Path, tokens: Sequence[bytes]) -> None:
    """Write ``tokens`` as a libFuzzer dictionary file."""
    lines = ['"' + "".join(f"\\x{b:02x}" for b in token) + '"' for token in tokens]
    path.write_text("\n".join(lines) + "\n", encoding="ascii")


def run_target(
    target: str,
    corpus: Sequence[Path],
    *,
    runs: int | None = None,
    seconds: float | None = None,
    seed: int | None = None,
    dictionary: Path | None = None,
    artifacts: Path,
    log_path: Path,
    findings: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: int = 20,
    rss_limit_mb: int = 2048,
    max_len: int = MAX_LEN,
    extra: Sequence[str] = (),
    cwd: Path | None = None,
    echo: Callable[[str], object] | None = None,
) -> TargetResult:
    """Fuzz ``target`` in a child process over the ``corpus`` folders (libFuzzer adds new
    inputs to the first); return what it ran and found. ``findings``: keep going and keep
    each finding there; otherwise the first one ends the child with its exit code.
    ``echo`` gets every line when given, else only the ``#finding`` lines are returned."""
    artifacts.mkdir(parents=True, exist_ok=True)
    budget = f"-runs={runs}" if runs is not None else f"-max_total_time={int(seconds or 60)}"
    command = [
        sys.executable,
        "-c",
        CHILD_CODE,
        target,
        budget,
        *([f"-dict={dictionary}"] if dictionary is not None else []),
        f"-timeout={timeout}",
        f"-rss_limit_mb={rss_limit_mb}",
        f"-artifact_prefix={artifacts}/",
        "-print_final_stats=1",
        f"-max_len={max_len}",
        *([f"-seed={seed}"] if seed is not None else []),
        *extra,
        *map(str, corpus),
    ]
    child_env = dict(os.environ)
    child_env.pop("SSE_TOOLCALLS_FUZZ_FINDINGS", None)
    child_env.update(env or {})
    if findings is not None:
        child_env["SSE_TOOLCALLS_FUZZ_FINDINGS"] = str(findings)
    started = time.monotonic()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w", encoding="utf-8", errors="replace") as log:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            env=child_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
        )
        assert process.stdout is not None
        try:
            with process.stdout:
                for line in process.stdout:
                    log.write(line)
                    if echo is not None:
                        echo(line)
        finally:
            # Interrupted (Ctrl-C, a test's timeout): the child must not fuzz on alone.
            if process.poll() is None:
                process.kill()
            exit_code = process.wait()
    output = log_path.read_text(encoding="utf-8", errors="replace")
    executed = _EXECUTED.findall(output)
    return TargetResult(
        target=target,
        inputs=int(executed[-1]) if executed else 0,
        seconds=time.monotonic() - started,
        exit_code=exit_code,
        output=output,
        findings=sorted(set(_FINDING.findall(output))),
        artifacts=_ARTIFACT.findall(output),
    )


def fuzz_corpus_atheris(
    folder: str | Path,
    *,
    seconds: float,
    runs: int | None = None,
    seed: int | None = None,
    registry: str | None = None,
    check_growth_first: bool = True,
) -> FuzzReport:
    """Fuzz the corpus in ``folder`` with atheris: one child per dialect of its streams
    (``detect`` for those without one), each for ``seconds`` (or ``runs`` inputs), the
    corpus's streams as seeds. Returns a :class:`.fuzz.FuzzReport` like the Hypothesis
    engine's: one :class:`.fuzz.Finding` per kind, its shortest input.

    Raises:
        UsageError: the corpus cannot be read or is empty, or the registry cannot load.
    """
    if registry is not None:
        fuzz.load_registry(registry)  # a bad spec is a usage error here, not in a child
    seeds = fuzz.corpus_seeds(Path(folder))
    found: dict[str, Finding] = {}
    if check_growth_first:
        for raw, dialect in seeds:
            grown = fuzz.check_growth(raw, dialect)
            if grown is not None and grown.kind not in found:
                found[grown.kind] = grown
    by_target: dict[str, list[bytes]] = {}
    for raw, dialect in seeds:
        by_target.setdefault(dialect or "detect", []).append(raw)
    env = {"SSE_TOOLCALLS_FUZZ_MODE": "corpus"}
    if registry is not None:
        env["SSE_TOOLCALLS_FUZZ_REGISTRY"] = registry
    inputs = 0
    work = Path(tempfile.mkdtemp(prefix="sse-toolcalls-atheris-"))
    try:
        dictionary = work / "tokens.dict"
        write_dictionary(dictionary, fuzz.TOKENS)
        for target, streams in by_target.items():
            seed_dir = work / f"seeds-{target}"
            seed_dir.mkdir()
            for raw in streams:
                data = invariants.encode(raw[: fuzz.MAX_INPUT_BYTES])
                (seed_dir / hashlib.sha1(data).hexdigest()).write_bytes(data)
            kept = work / f"findings-{target}"
            (work / f"grown-{target}").mkdir()
            result = run_target(
                target,
                [work / f"grown-{target}", seed_dir],
                runs=runs,
                seconds=seconds,
                seed=seed,
                dictionary=dictionary,
                artifacts=work / f"artifacts-{target}",
                log_path=work / f"{target}.log",
                findings=kept,
                env=env,
                max_len=fuzz.MAX_INPUT_BYTES,
            )
            inputs += result.inputs
            dialect = None if target == "detect" else as_dialect(target)
            for path in sorted(kept.glob("*.bin")):
                if path.stem not in found:
                    found[path.stem] = _finding(path, dialect)
            if result.exit_code != 0:
                # libFuzzer's own finding (a timeout, memory past the limit, a crash of the
                # interpreter) or a child that could not start: report it with its input.
                kind = f"atheris-exit-{result.exit_code}"
                tail = " | ".join(result.output.strip().splitlines()[-3:])[:300]
                artifact = next((Path(a) for a in result.artifacts if Path(a).is_file()), None)
                stream, cuts = invariants.decode(artifact.read_bytes()) if artifact else (b"", [])
                found.setdefault(
                    kind,
                    Finding(
                        kind=kind,
                        message=f"{target}: libFuzzer exited {result.exit_code}: {tail}",
                        stream=stream,
                        dialect=dialect,
                        cuts=tuple(cuts),
                    ),
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return FuzzReport(findings=tuple(found.values()), inputs=inputs)


def _finding(path: Path, dialect: str | None) -> Finding:
    stream, cuts = invariants.decode(path.read_bytes())
    text = path.with_suffix(".txt").read_text(encoding="utf-8", errors="replace")
    message = next(
        (
            line.removeprefix("message: ")
            for line in text.splitlines()
            if line.startswith("message: ")
        ),
        path.stem,
    )
    return Finding(
        kind=path.stem, message=message, stream=stream, dialect=dialect, cuts=tuple(cuts)
    )
