"""The ``sse-toolcalls`` command line.

``replay FILE`` runs a recorded stream through the parser and prints one JSON line per
call; ``demo`` and ``serve`` run the built-in simulator; ``record``, ``check`` and ``fuzz``
capture, check and fuzz a corpus of the user's own streams; ``bfcl`` replays BFCL's
multi-turn cases through the agent (each imports what it needs lazily, so the replay path
stays as light as the core).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

import orjson

from .calls import DIALECTS
from .errors import ProviderError, SSEToolCallsError, TruncatedStreamError
from .parser import ToolCallParser


def _print_json(value: Any) -> None:
    sys.stdout.write(orjson.dumps(value).decode() + "\n")
    sys.stdout.flush()


def _error_json(exc: SSEToolCallsError) -> dict[str, Any]:
    out: dict[str, Any] = {"error": type(exc).__name__, "message": str(exc)}
    if isinstance(exc, ProviderError):
        out |= {
            "provider": exc.provider,
            "code": exc.code,
            "status": exc.status,
            "retryable": exc.retryable,
            "retry_after": exc.retry_after,
        }
    elif isinstance(exc, TruncatedStreamError):
        out |= {
            "reason": exc.reason,
            "completed": [c.call_id for c in exc.completed],
            "partial": [
                {"name": p.name, "call_id": p.call_id, "raw_arguments": p.raw_arguments}
                for p in exc.partial
            ],
            "text": exc.text,
        }
    return out


def replay(path: str, dialect: str | None, chunk_size: int) -> int:
    """Feed a recorded stream in chunks; print each call; return the exit status."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        sys.stderr.write(f"cannot read {path}: {exc}\n")
        return 2
    parser = ToolCallParser(dialect)
    try:
        for start in range(0, len(raw), chunk_size):
            for call in parser.feed(raw[start : start + chunk_size]):
                _print_json(_call_json(call))
        for call in parser.finish():
            _print_json(_call_json(call))
    except SSEToolCallsError as exc:
        _print_json(_error_json(exc))
        return 1
    return 0


def _call_json(call: Any) -> dict[str, Any]:
    out = {
        "name": call.name,
        "args": call.args,
        "call_id": call.call_id,
        "index": call.index,
        "provider": call.provider,
    }
    if call.arguments_error is not None:
        out |= {"arguments_error": call.arguments_error, "raw_arguments": call.raw_arguments}
    return out


def check(folders: Sequence[str], *, seed: str, verbose: bool) -> int:
    """Check every stream of each corpus folder; one line per failing stream, then the
    count. Returns 0 when all pass, 1 when any fails, 2 when a folder cannot be read."""
    from .corpus import check_corpus

    passed = failed = 0
    for folder in folders:
        try:
            results = check_corpus(folder, seed=seed)
        except SSEToolCallsError as exc:
            sys.stderr.write(f"{exc}\n")
            return 2
        for result in results:
            if result.problem is None:
                passed += 1
                if verbose:
                    sys.stdout.write(f"ok   {folder}/{result.file}\n")
            else:
                failed += 1
                sys.stdout.write(f"FAIL {folder}/{result.file} {result.problem}\n")
    sys.stdout.write(f"{passed} passed, {failed} failed\n")
    return 0 if failed == 0 else 1


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the command line."""
    parser = argparse.ArgumentParser(
        prog="sse-toolcalls",
        description="Streamed LLM tool calls: replay, demo, simulator, your own corpus.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    rep = commands.add_parser("replay", help="parse a recorded stream, one JSON line per call")
    rep.add_argument("file")
    rep.add_argument("--dialect", choices=DIALECTS, default=None, help="default: detect")
    rep.add_argument("--chunk-size", type=_positive, default=65536, help="bytes per feed")
    demo = commands.add_parser("demo", help="ask the built-in simulator a two-call question")
    demo.add_argument("--dialect", choices=DIALECTS, default="openai_chat")
    demo.add_argument("--lang", choices=("en", "pt-BR"), default="en")
    demo.add_argument("--delay", type=float, default=0.02, help="seconds between chunks")
    serve = commands.add_parser("serve", help="run the simulator for other clients")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--script", default=None, help="JSON script of assistant turns")
    rec = commands.add_parser("record", help="a loopback proxy that records every stream")
    rec.add_argument("--upstream", required=True, help="the provider's base URL")
    rec.add_argument("--out", required=True, help="the corpus folder to write")
    rec.add_argument("--port", type=int, default=8766, help="loopback port to listen on")
    rec.add_argument(
        "--redact", action="append", default=[], metavar="REGEX", help="also redact (repeatable)"
    )
    chk = commands.add_parser("check", help="check every stream of a corpus folder")
    chk.add_argument("folder", nargs="+")
    chk.add_argument("--seed", default="streams", help="seeds random splits and cuts")
    chk.add_argument("-v", "--verbose", action="store_true", help="also list passing streams")
    fuzz = commands.add_parser("fuzz", help="mutate a corpus; report what breaks")
    fuzz.add_argument("folder")
    fuzz.add_argument("--seconds", type=float, default=60.0)
    fuzz.add_argument("--runs", type=_positive, default=None, help="also stop after ~N inputs")
    fuzz.add_argument("--seed", type=int, default=None, help="default: random")
    fuzz.add_argument("--findings", default=None, help="default: FOLDER/findings")
    fuzz.add_argument(
        "--registry", default=None, metavar="MODULE:ATTRIBUTE", help="validate calls with it"
    )
    fuzz.add_argument(
        "--engine",
        choices=("auto", "atheris", "hypothesis"),
        default="auto",
        help="default auto: atheris when installed",
    )
    bf = commands.add_parser("bfcl", help="replay BFCL's multi-turn cases through Agent")
    bf.add_argument("--faults", action="store_true", help="the simulator's faults mid-turn")
    bf.add_argument(
        "--sample", type=_positive, default=None, metavar="N", help="N cases per category"
    )
    bf.add_argument(
        "--category", action="append", default=None, help="repeatable; default: all four"
    )
    bf.add_argument("--dialect", action="append", choices=DIALECTS, default=None, help="repeatable")
    bf.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    bf.add_argument("--data", default=None, help="the bfcl-eval wheel (default: $BFCL_DATA_DIR)")
    bf.add_argument("--jsonl", default=None, metavar="FILE", help="also one JSON line per case")
    bf.add_argument("--case", action="append", default=[], metavar="ID", help="only these cases")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    try:
        return _run(build_parser().parse_args(argv))
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, as Unix tools do.
        sys.stderr.close()
        return 0


def _run(args: argparse.Namespace) -> int:
    if args.command == "replay":
        return replay(args.file, args.dialect, args.chunk_size)
    if args.command == "demo":
        from .demo import run_demo

        return run_demo(dialect=args.dialect, lang=args.lang, delay=args.delay)
    if args.command == "check":
        return check(args.folder, seed=args.seed, verbose=args.verbose)
    if args.command == "record":
        from .corpus.record import serve_proxy

        return serve_proxy(args.upstream, args.out, port=args.port, patterns=args.redact)
    if args.command == "fuzz":
        from .corpus.fuzz import run_fuzz

        return run_fuzz(
            args.folder,
            seconds=args.seconds,
            runs=args.runs,
            seed=args.seed,
            findings=args.findings,
            registry=args.registry,
            engine=args.engine,
        )
    if args.command == "bfcl":
        from .bfcl.command import run_bfcl
        from .bfcl.multi_turn import MULTI_TURN_CATEGORIES

        return run_bfcl(
            data=args.data,
            categories=args.category or MULTI_TURN_CATEGORIES,
            dialects=args.dialect or DIALECTS,
            faults=args.faults,
            sample=args.sample,
            backend=args.backend,
            jsonl=args.jsonl,
            cases=args.case,
        )
    from .simulator.cli import serve

    return serve(port=args.port, script_file=args.script)


if __name__ == "__main__":
    sys.exit(main())
