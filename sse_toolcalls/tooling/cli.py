"""The ``sse-toolcalls`` command line.

``replay FILE`` runs a recorded stream through the parser and prints one JSON line per
call; ``demo`` and ``serve`` run the built-in simulator; ``record``, ``check`` and ``fuzz``
capture, check and fuzz a corpus of the user's own streams; ``bfcl`` replays BFCL's
multi-turn cases through the agent (each imports what it needs lazily, so the replay path
stays as light as the core).

Exit statuses, the same for every command (:data:`EXIT_STATUSES`): 0 done; 1 the input
failed (a stream's error, a failing check, a fuzz finding); 2 a usage error (a bad
option, an unreadable or invalid file, a port that cannot be bound), said in one line on
standard error; 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import orjson

from ..calls import (
    DIALECTS,
    Dialect,
    ReasoningCompleted,
    ReasoningDelta,
    StreamEvent,
    StreamFinished,
    TextDelta,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from ..errors import ProviderError, SSEToolCallsError, TruncatedStreamError, UsageError
from ..messages import as_dialect
from ..parser import StreamParser

EXIT_OK = 0
"""The command did what it was asked."""
EXIT_FAILED = 1
"""The input failed: a stream's error, a failing check, a fuzz finding."""
EXIT_USAGE = 2
"""A usage error: a bad option, an unreadable or invalid file, a port not available."""
EXIT_INTERRUPTED = 130
"""Interrupted by Ctrl-C (128 + SIGINT, as shells report it)."""

EXIT_STATUSES = {
    EXIT_OK: "done",
    EXIT_FAILED: "the input failed (a stream's error, a failing check, a fuzz finding)",
    EXIT_USAGE: "usage error (a bad option, an unreadable or invalid file, a port in use)",
    EXIT_INTERRUPTED: "interrupted",
}
"""Every exit status of the command line, as its ``--help`` lists them."""


def _print_json(value: Any) -> None:
    sys.stdout.write(orjson.dumps(value).decode() + "\n")
    sys.stdout.flush()


def _error_json(exc: SSEToolCallsError, printed: tuple[Any, ...] = ()) -> dict[str, Any]:
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
            "completed": [c.call_id for c in printed + exc.completed],
            "partial": [
                {"name": p.name, "call_id": p.call_id, "raw_arguments": p.raw_arguments}
                for p in exc.partial
            ],
            "text": exc.text,
        }
    return out


def replay(path: str, dialect: Dialect | None, chunk_size: int, *, events: bool = False) -> int:
    """Feed a recorded stream (``-``: standard input) in chunks; print one JSON line per
    call, or the turn's text and finish reason when it has no call; with ``events``, one
    line per event of the rich stream. Return the exit status.

    Raises:
        UsageError: the file cannot be read.
    """
    try:
        if path == "-":
            raw = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as handle:
                raw = handle.read()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    parser = StreamParser(dialect)
    out: list[StreamEvent] = []
    try:
        for start in range(0, len(raw), chunk_size):
            _show(parser.feed(raw[start : start + chunk_size]), out, events=events)
        _show(parser.finish(), out, events=events)
    except SSEToolCallsError as exc:
        # The error names every call completed before it, the ones printed above too: the
        # line is then the same whatever the chunk size (the error itself carries only
        # the calls no read returned).
        printed = tuple(e.call for e in out if isinstance(e, ToolCallCompleted))
        _print_json(_error_json(exc, printed))
        return EXIT_FAILED
    finished = [e for e in out if isinstance(e, StreamFinished)]
    if not events and finished and not finished[-1].calls:
        _print_json({"text": finished[-1].text, "finish_reason": finished[-1].stop_reason})
    return EXIT_OK


def _show(batch: list[StreamEvent], seen: list[StreamEvent], *, events: bool) -> None:
    for event in batch:
        seen.append(event)
        if events:
            _print_json(_event_json(event))
        elif isinstance(event, ToolCallCompleted):
            _print_json(_call_json(event.call))


def _event_json(event: StreamEvent) -> dict[str, Any]:
    """One rich stream event as a JSON line: ``event`` names its kind."""
    if isinstance(event, TextDelta):
        return {"event": "text", "text": event.text}
    if isinstance(event, ReasoningDelta):
        return {"event": "reasoning", "text": event.text}
    if isinstance(event, ToolCallStarted):
        return {
            "event": "call_started",
            "index": event.index,
            "call_id": event.call_id,
            "name": event.name,
        }
    if isinstance(event, ToolCallArgumentsDelta):
        return {"event": "arguments", "index": event.index, "delta": event.delta}
    if isinstance(event, ToolCallCompleted):
        return {"event": "call_completed", **_call_json(event.call)}
    if isinstance(event, ReasoningCompleted):
        # Its kind and size only: a signature or encrypted content means nothing on a
        # terminal, and the text came as reasoning deltas already.
        return {
            "event": "reasoning_completed",
            "kind": event.block.kind,
            "chars": len(event.block.text),
        }
    return {
        "event": "finished",
        "finish_reason": event.stop_reason,
        "usage": event.usage,
        "text": event.text,
        "calls": [c.call_id for c in event.calls],
    }


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
    count. Returns 0 when all pass, 1 when any fails.

    Raises:
        UsageError: a folder cannot be read as a corpus.
    """
    from .corpus import check_corpus

    passed = failed = 0
    for folder in folders:
        try:
            results = check_corpus(folder, seed=seed)
        except SSEToolCallsError as exc:
            # A folder that is not a corpus is the caller's to fix: main says it in one
            # line, as for every usage error.
            raise UsageError(str(exc)) from exc
        for result in results:
            # A file name is the corpus author's: a newline in it must not forge a line.
            name = _printable(f"{folder}/{result.file}")
            if result.problem is None:
                passed += 1
                if verbose:
                    sys.stdout.write(f"ok   {name}\n")
            else:
                failed += 1
                sys.stdout.write(f"FAIL {name} {_printable(result.problem)}\n")
    sys.stdout.write(f"{passed} passed, {failed} failed\n")
    return 0 if failed == 0 else 1


def fuzz(
    folder: str,
    *,
    seconds: float,
    seed: int | None,
    findings: str | None,
    runs: int | None,
    registry: str | None,
    engine: str,
) -> int:
    """Fuzz the corpus in ``folder``, save each finding and print it, then the count.
    Returns 0 when nothing was found, 1 on findings, 2 on usage errors.

    ``engine``: ``atheris`` (coverage-guided, :mod:`.corpus.atheris_engine`),
    ``hypothesis`` (:func:`.corpus.fuzz.fuzz_corpus`) or ``auto``: atheris when it can be
    imported. The command picks the engine, so it stands above both (the atheris engine
    builds on the Hypothesis engine's checks and findings).
    """
    from pathlib import Path

    from .corpus import atheris_engine
    from .corpus.fuzz import fuzz_corpus, load_registry, save_findings

    try:
        if engine == "auto":
            engine = "atheris" if atheris_engine.available() else "hypothesis"
        if engine == "atheris":
            if not atheris_engine.available():
                raise UsageError("--engine atheris: atheris is not installed (the fuzz extra)")
            report = atheris_engine.fuzz_corpus_atheris(
                folder, seconds=seconds, runs=runs, seed=seed, registry=registry
            )
        else:
            loaded = None if registry is None else load_registry(registry)
            report = fuzz_corpus(
                folder, seconds=seconds, seed=seed, registry=loaded, max_inputs=runs
            )
    except UsageError as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    target = Path(findings) if findings is not None else Path(folder) / "findings"
    found = report.findings
    if found:
        save_findings(target, found)
    for finding in found:
        sys.stdout.write(f"FINDING {finding.kind}: {finding.message}\n")
    saved = f", saved in {target}" if found else ""
    sys.stdout.write(f"{engine}: {report.inputs} inputs, {len(found)} findings{saved}\n")
    return 1 if found else 0


def _printable(text: str) -> str:
    """``text`` with each control character (and lone surrogate) escaped, on one line."""
    return "".join(
        c if c.isprintable() and not 0xD800 <= ord(c) <= 0xDFFF else repr(c)[1:-1] for c in text
    )


def _positive(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _port(text: str) -> int:
    value = _integer(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535 (0: any free one), not {value}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0 or value == float("inf"):  # NaN fails the comparison
        raise argparse.ArgumentTypeError(f"seconds must be finite and at least 0, not {text}")
    return value


class _Parser(argparse.ArgumentParser):
    """argparse, with a usage error said in one line (and where to read more)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


_EXAMPLES = {
    "replay": """examples:
  sse-toolcalls replay turn.sse
  curl -sN ... | sse-toolcalls replay - --dialect anthropic --events""",
    "demo": """examples:
  sse-toolcalls demo --dialect anthropic --lang pt-BR
  sse-toolcalls demo --scenario registry    # three calls at once, one refused, corrected""",
    "serve": """examples:
  sse-toolcalls serve --port 8765 --script turns.json
  sse-toolcalls serve --port 0 --loop        # any free port; the turns round and round
Each new conversation gets the script from its first turn; --loop wraps instead.""",
    "record": """example:
  sse-toolcalls record --upstream https://api.openai.com --out corpus/ --port 8766""",
    "check": """example:
  sse-toolcalls check recorded_streams corpus/ -v""",
    "fuzz": """example:
  sse-toolcalls fuzz corpus/ --seconds 300 --findings findings/""",
    "catalogue": """examples:
  sse-toolcalls catalogue myapp.tools:registry --strict
  sse-toolcalls catalogue tools.json --declarations out/   # one file per dialect""",
    "bfcl": """examples:
  sse-toolcalls bfcl --sample 20                 # one case in ten per category
  sse-toolcalls bfcl --faults --dialect anthropic --category multi_turn_base""",
}
"""The example each command's ``--help`` ends with."""


def _command(
    commands: Any, name: str, help: str
) -> argparse.ArgumentParser:  # the subparsers action is private in typeshed
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=help,
        description=help[:1].upper() + help[1:] + ".",
        epilog=_EXAMPLES[name],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("sse_toolcalls")
    except metadata.PackageNotFoundError:  # pragma: no cover - run from a bare checkout
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the command line."""
    statuses = "\n".join(f"  {code:<4} {what}" for code, what in EXIT_STATUSES.items())
    parser = _Parser(
        prog="sse-toolcalls",
        description="Streamed LLM tool calls: replay, demo, simulator, your own corpus.",
        epilog=f"example:\n  sse-toolcalls demo\n\nexit statuses:\n{statuses}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    rep = _command(commands, "replay", "parse a recorded stream, one JSON line per call")
    rep.add_argument("file", help="the stream's bytes; - reads standard input")
    rep.add_argument("--dialect", choices=DIALECTS, default=None, help="default: detect")
    rep.add_argument("--chunk-size", type=_positive, default=65536, help="bytes per feed")
    rep.add_argument(
        "--events", action="store_true", help="print every event of the rich stream instead"
    )
    demo = _command(commands, "demo", "ask the built-in simulator a two-call question")
    demo.add_argument("--dialect", choices=DIALECTS, default="openai_chat")
    demo.add_argument("--lang", choices=("en", "pt-BR"), default="en")
    demo.add_argument("--delay", type=_seconds, default=0.02, help="seconds between chunks")
    demo.add_argument(
        "--scenario",
        choices=("lookup", "registry"),
        default="lookup",
        help="registry: three calls at once, one malformed, refused and corrected",
    )
    serve = _command(commands, "serve", "run the simulator for other clients")
    serve.add_argument("--port", type=_port, default=8765)
    serve.add_argument("--script", default=None, help="JSON script of assistant turns")
    serve.add_argument(
        "--loop", action="store_true", help="play the turns round and round, whatever comes"
    )
    rec = _command(commands, "record", "a loopback proxy that records every stream")
    rec.add_argument("--upstream", required=True, help="the provider's base URL")
    rec.add_argument("--out", required=True, help="the corpus folder to write")
    rec.add_argument("--port", type=_port, default=8766, help="loopback port to listen on")
    rec.add_argument(
        "--redact", action="append", default=[], metavar="REGEX", help="also redact (repeatable)"
    )
    chk = _command(commands, "check", "check every stream of a corpus folder")
    chk.add_argument("folder", nargs="+")
    chk.add_argument("--seed", default="streams", help="seeds random splits and cuts")
    chk.add_argument("-v", "--verbose", action="store_true", help="also list passing streams")
    fuzz = _command(commands, "fuzz", "mutate a corpus; report what breaks")
    fuzz.add_argument("folder")
    fuzz.add_argument("--seconds", type=_seconds, default=60.0)
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
    _add_mcp(commands)
    cat = _command(
        commands,
        "catalogue",
        "a tool catalogue as Markdown, its declarations, its description checks",
    )
    cat.add_argument("target", help="MODULE:ATTRIBUTE of a registry, or a JSON file of tools")
    cat.add_argument("--declarations", metavar="DIR", default=None, help="write each dialect's")
    cat.add_argument("--strict", action="store_true", help="exit 1 when there are findings")
    bf = _command(commands, "bfcl", "replay BFCL's multi-turn cases through Agent")
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


def _add_mcp(commands: Any) -> None:
    """``mcp serve``: a registry as an MCP server (sse_toolcalls.runtime.mcp.server)."""
    mcp = commands.add_parser("mcp", help="MCP: serve a tool registry as an MCP server")
    mcp_commands = mcp.add_subparsers(dest="mcp_command", required=True)
    serve = mcp_commands.add_parser(
        "serve",
        help="serve module:registry over stdio, or Streamable HTTP with --http",
        description=(
            "Serve a ToolRegistry as an MCP server: every call is validated against its "
            "tool's schema and run through the dispatcher (ledger, breaker, sandbox). "
            "Example: sse-toolcalls mcp serve my_app.tools:registry --http 8800"
        ),
    )
    serve.add_argument("registry", metavar="MODULE:ATTRIBUTE", help="the ToolRegistry to serve")
    serve.add_argument(
        "--http", type=_port, default=None, metavar="PORT", help="Streamable HTTP on PORT"
    )
    serve.add_argument("--host", default="127.0.0.1", help="with --http (default: loopback)")
    serve.add_argument(
        "--ledger", default=None, metavar="FILE", help="an SQLite ledger file (writes once)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (:data:`EXIT_STATUSES`)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return _run(args)
    except UsageError as exc:
        # Ours, and the caller's to fix: one line, not a traceback.
        sys.stderr.write(f"sse-toolcalls {args.command}: error: {_one_line(exc)}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, as Unix tools do.
        sys.stderr.close()
        return EXIT_OK


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _run(args: argparse.Namespace) -> int:
    if args.command == "replay":
        dialect = None if args.dialect is None else as_dialect(args.dialect)
        return replay(args.file, dialect, args.chunk_size, events=args.events)
    if args.command == "demo" and args.scenario == "registry":
        from .demo_registry import run_registry_demo

        return run_registry_demo(dialect=as_dialect(args.dialect), delay=args.delay)
    if args.command == "demo":
        from .demo import run_demo

        return run_demo(dialect=as_dialect(args.dialect), lang=args.lang, delay=args.delay)
    if args.command == "catalogue":
        from .catalogue import run_catalogue

        return run_catalogue(
            args.target,
            declarations=args.declarations,
            strict=args.strict,
            out=sys.stdout,
            err=sys.stderr,
        )
    if args.command == "check":
        return check(args.folder, seed=args.seed, verbose=args.verbose)
    if args.command == "record":
        from .corpus.record import serve_proxy

        return serve_proxy(args.upstream, args.out, port=args.port, patterns=args.redact)
    if args.command == "fuzz":
        return fuzz(
            args.folder,
            seconds=args.seconds,
            runs=args.runs,
            seed=args.seed,
            findings=args.findings,
            registry=args.registry,
            engine=args.engine,
        )
    if args.command == "mcp":
        from ..runtime.mcp.server import run_serve

        return run_serve(args.registry, http=args.http, host=args.host, ledger=args.ledger)
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

    return serve(port=args.port, script_file=args.script, loop=args.loop)


if __name__ == "__main__":
    sys.exit(main())
