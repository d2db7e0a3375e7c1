"""Run the coverage-guided fuzz targets (atheris), one process per target.

    python -m tests.tooling.fuzz                                  # every target, 60 s each
    python -m tests.tooling.fuzz --target gemini --seconds 600    # one target, ten minutes
    python -m tests.tooling.fuzz --runs 20000 --seed 1            # the CI smoke: fixed work, fixed seed
    python -m tests.tooling.fuzz --keep-going                     # record findings and go on
    python -m tests.tooling.fuzz --target framer -- -max_len=512  # anything after -- goes to libFuzzer
    python -m tests.tooling.fuzz --replay                         # which findings still fail (no atheris)

Each target is seeded from the stream corpora (``tests/tooling/fuzz/corpus.py``), written into a
temporary folder, and given a dictionary of the words the parsers branch on. By default
the first finding stops its target, which then fails (libFuzzer's crash report and input
are in ``.cache/fuzz/``); with ``--keep-going`` the shortest input of each distinct
finding goes to ``tests/tooling/fuzz/findings/<target>/`` (or ``--findings``), with a ``.txt``
beside it, and fuzzing goes on. Exits 1 when any target found anything.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from sse_toolcalls.tooling.corpus import atheris_engine
from sse_toolcalls.tooling.corpus.invariants import TARGETS, check, decode

from .corpus import ROOT, write_dictionary, write_seeds

__all__ = ["main"]

_HERE = Path(__file__).resolve().parent


@dataclass
class Result:
    target: str
    seeds: int
    inputs: int
    seconds: float
    exit_code: int
    findings: list[str] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.findings


def _parse(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    args = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in args:
        at = args.index("--")
        args, extra = args[:at], args[at + 1 :]
    parser = argparse.ArgumentParser(
        prog="python -m tests.tooling.fuzz", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--target", action="append", choices=[*TARGETS, "all"], help="repeatable; default all"
    )
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--runs", type=int, help="inputs per target (seeds included)")
    budget.add_argument("--seconds", type=int, help="seconds per target (default 60)")
    parser.add_argument("--seed", type=int, help="libFuzzer's random seed (default: random)")
    parser.add_argument("--keep-going", action="store_true", help="record findings, go on")
    parser.add_argument(
        "--findings", type=Path, help="findings folder (default tests/tooling/fuzz/findings)"
    )
    parser.add_argument("--corpus", type=Path, help="keep each target's grown corpus here")
    parser.add_argument("--timeout", type=int, default=20, help="seconds one input may take")
    parser.add_argument("--rss-limit-mb", type=int, default=2048, help="memory of one target")
    parser.add_argument("--max-len", type=int, default=8192, help="largest input, in bytes")
    parser.add_argument(
        "--replay", action="store_true", help="replay findings/ and regressions/, no fuzzing"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="show libFuzzer's output")
    return parser.parse_args(args), extra


def run_target(target: str, args: argparse.Namespace, extra: list[str], work: Path) -> Result:
    """Fuzz one target in a child process (the library's engine); return what it ran and found."""
    seeds = work / f"seeds-{target}"
    count = write_seeds(target, seeds)
    corpus = [seeds]
    if args.corpus is not None:
        # libFuzzer adds new inputs to the first folder only: the kept one.
        corpus.insert(0, args.corpus / target)
        corpus[0].mkdir(parents=True, exist_ok=True)
    dictionary = work / "tokens.dict"
    write_dictionary(dictionary)
    log_path = ROOT / ".cache" / "fuzz" / f"{target}.log"

    def echo(line: str) -> None:
        if args.verbose or line.startswith("#finding"):
            sys.stdout.write(f"[{target}] {line}")

    ran = atheris_engine.run_target(
        target,
        corpus,
        runs=args.runs,
        seconds=args.seconds,
        seed=args.seed,
        dictionary=dictionary,
        artifacts=ROOT / ".cache" / "fuzz" / target,
        log_path=log_path,
        findings=(args.findings or _HERE / "findings") / target if args.keep_going else None,
        timeout=args.timeout,
        rss_limit_mb=args.rss_limit_mb,
        max_len=args.max_len,
        extra=extra,
        cwd=ROOT,
        echo=echo,
    )
    result = Result(
        target=target,
        seeds=count,
        inputs=ran.inputs,
        seconds=ran.seconds,
        exit_code=ran.exit_code,
        findings=ran.findings,
        artifacts=ran.artifacts,
    )
    if ran.exit_code != 0:
        # The crash report: libFuzzer's own lines, the traceback and the input.
        print(f"---- {target}: libFuzzer exited {ran.exit_code}; the end of {log_path}:")
        print("".join(ran.output.splitlines(keepends=True)[-60:]), end="")
        for artifact in result.artifacts:
            path = Path(artifact)
            if path.is_file():
                stream, cuts = decode(path.read_bytes())
                print(f"---- input {path}: stream {stream[:400]!r} cut at {cuts}")
    return result


def replay(targets: list[str], findings: Path) -> int:
    """Replay every kept input through the checker; return how many still fail."""
    failing = 0
    for folder in (findings, _HERE / "regressions"):
        for target in targets:
            for path in sorted((folder / target).glob("*.bin")):
                try:
                    check(target, path.read_bytes())
                except Exception as exc:  # a finding: report it and go on to the next
                    failing += 1
                    line = str(exc).splitlines()[0][:160] if str(exc) else ""
                    print(f"fails  {path.relative_to(ROOT)}: {type(exc).__name__}: {line}")
                else:
                    print(f"holds  {path.relative_to(ROOT)}")
    print(f"replay: {failing} inputs still fail")
    return 1 if failing else 0


def main(argv: list[str] | None = None) -> int:
    args, extra = _parse(argv)
    targets = list(TARGETS) if not args.target or "all" in args.target else args.target
    if args.replay:
        return replay(targets, args.findings or _HERE / "findings")
    results: list[Result] = []
    work = Path(tempfile.mkdtemp(prefix="sse-toolcalls-fuzz-"))
    try:
        for target in dict.fromkeys(targets):
            result = run_target(target, args, extra, work)
            results.append(result)
            state = "ok" if result.ok else "FAILED"
            found = f", findings: {', '.join(result.findings)}" if result.findings else ""
            print(
                f"fuzz {target}: {state}, {result.inputs} inputs ({result.seeds} seeds) "
                f"in {result.seconds:.0f} s{found}",
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    failed = [r.target for r in results if not r.ok]
    if failed:
        print(f"fuzz: targets with findings: {', '.join(failed)}")
    print(f"fuzz: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
