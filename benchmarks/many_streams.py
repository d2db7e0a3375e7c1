"""W5, many streams: hundreds of concurrent streams over loopback HTTP, CPU per stream.

    python -m benchmarks --only W5            # the table, inside the whole run
    python -m benchmarks.many_streams --impl ours-httpx --dialect anthropic --port P ...

The server (:mod:`benchmarks.streams_server`, uvicorn on 127.0.0.1) runs in a process of
its own, so its CPU is never the client's. Each implementation, on each dialect, runs in
a fresh client process of its own too: its CPU time (``time.process_time``, every thread
of the process), wall time and peak RSS (``VmHWM``) belong to it alone, and the peers'
imports never weigh on ours. A client opens ``streams`` requests at once (one connection
each, all concurrent), reads every stream into complete calls and checks each stream's
calls against the seeded input; a warm-up of a few streams comes first, untimed. Then,
with ``--profile``, the same streams again under cProfile: the share of the client's
time spent in each layer (the parsing code, the HTTP client, the event loop), each
C function's time counted to the Python package that called it.

Implementations (``--impl``):

| key | what runs per stream |
|---|---|
| ``ours-httpx`` | ``httpx.AsyncClient.stream`` then ``aiter_tool_calls(response, dialect)`` |
| ``ours-httpx2`` | the same with ``httpx2`` |
| ``hand`` | httpx-sse's ``aconnect_sse`` then the hand-written loop (:mod:`.peers.handwritten`) |
| ``openai`` | ``AsyncOpenAI``'s ``chat.completions.stream()`` or ``responses.stream()`` |
| ``anthropic`` | ``AsyncAnthropic``'s ``messages.stream()`` |

(The SDKs' streams are iterated to the end, then the final message's calls are taken.)

``SSE_TOOLCALLS_PURE_PYTHON=1`` in a client's environment measures our pure twin.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import os
import pstats
import subprocess
import sys
import sysconfig
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

from . import inputs
from .model import Call, MissingPeer
from .streams_server import SEED_HEADER

__all__ = ["IMPLS", "Plan", "client_main", "run"]

ROOT = Path(__file__).resolve().parent.parent

WARMUP_STREAMS = 4
"""Streams read before the timed ones: connections, lazy imports and caches warm up."""

SEED_BASE = 10_000
"""The first timed stream's seed; stream ``i`` uses ``SEED_BASE + i`` (warm-up: below)."""

TIMEOUT_S = 120.0
"""Every client's timeout, connect included, the same for all: the SDKs' own connect
timeout (5 s) failed the anthropic SDK's 200 concurrent connects on the loaded machine."""

Fetch = Callable[[str, int], Awaitable[list[Call]]]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientImpl:
    """One way of reading a stream into calls over HTTP."""

    label: str
    """The table's name (ours gets its framer twin appended at run time)."""

    dialects: tuple[str, ...]
    """The wire formats it reads."""

    open: Callable[[str, int], Awaitable[tuple[Fetch, Callable[[], Awaitable[None]]]]]
    """``open(base_url, streams)``: a ``fetch(dialect, seed)`` and the session's close."""


def _limits(module: Any, streams: int) -> Any:
    # One connection per concurrent stream: a pool capped below that would queue streams
    # and turn "concurrent" into "in batches". None kept alive: every stream pays its own
    # connect, the same for every client, and no request races the server's closing of
    # an idle kept-alive connection (uvicorn's 5 s; it gave one ReadError in 300).
    return module.Limits(max_connections=streams + 8, max_keepalive_connections=0)


def _ours(module_name: str) -> Callable[[str, int], Awaitable[tuple[Fetch, Any]]]:
    async def open_(base: str, streams: int) -> tuple[Fetch, Any]:
        import importlib

        from sse_toolcalls import aiter_tool_calls

        http = importlib.import_module(module_name)
        client = http.AsyncClient(limits=_limits(http, streams), timeout=TIMEOUT_S)

        async def fetch(dialect: str, seed: int) -> list[Call]:
            headers = {SEED_HEADER: str(seed)}
            async with client.stream("POST", f"{base}/{dialect}", headers=headers) as resp:
                return [
                    (c.call_id, c.name, c.args)
                    async for c in aiter_tool_calls(resp, dialect)  # type: ignore[arg-type]
                ]

        return fetch, client.aclose

    return open_


async def _open_hand(base: str, streams: int) -> tuple[Fetch, Any]:
    from .peers._require import require
    from .peers.handwritten import LOOPS

    httpx = require("httpx", "httpx")
    httpx_sse = require("httpx_sse", "httpx-sse")
    client = httpx.AsyncClient(limits=_limits(httpx, streams), timeout=TIMEOUT_S)

    async def fetch(dialect: str, seed: int) -> list[Call]:
        loop = LOOPS[dialect]()
        headers = {SEED_HEADER: str(seed)}
        async with httpx_sse.aconnect_sse(
            client, "POST", f"{base}/{dialect}", headers=headers
        ) as source:
            async for sse in source.aiter_sse():
                if not loop.on(sse.event, sse.data):
                    break
        return loop.calls()

    return fetch, client.aclose


async def _open_openai(base: str, streams: int) -> tuple[Fetch, Any]:
    from .peers._require import require

    openai = require("openai", "openai")
    http = openai.DefaultAsyncHttpxClient(limits=_limits(require("httpx", "httpx"), streams))
    clients = {
        d: openai.AsyncOpenAI(
            base_url=f"{base}/{d}/v1",
            api_key="x",
            max_retries=0,
            timeout=TIMEOUT_S,
            http_client=http,
        )
        for d in ("openai_chat", "openai_responses")
    }
    messages = [{"role": "user", "content": "go"}]

    async def fetch(dialect: str, seed: int) -> list[Call]:
        headers = {SEED_HEADER: str(seed)}
        client = clients[dialect]
        if dialect == "openai_chat":
            async with client.chat.completions.stream(
                model="m", messages=messages, extra_headers=headers
            ) as stream:
                async for _ in stream:
                    pass
                completion = await stream.get_final_completion()
            return [
                (t.id, t.function.name, json.loads(t.function.arguments))
                for t in completion.choices[0].message.tool_calls or ()
            ]
        async with client.responses.stream(model="m", input="go", extra_headers=headers) as rs:
            async for _ in rs:
                pass
            response = await rs.get_final_response()
        return [
            (i.call_id, i.name, json.loads(i.arguments))
            for i in response.output
            if i.type == "function_call"
        ]

    return fetch, http.aclose


async def _open_anthropic(base: str, streams: int) -> tuple[Fetch, Any]:
    from .peers._require import require

    anthropic = require("anthropic", "anthropic")
    http = anthropic.DefaultAsyncHttpxClient(limits=_limits(require("httpx", "httpx"), streams))
    client = anthropic.AsyncAnthropic(
        base_url=f"{base}/anthropic",
        api_key="x",
        max_retries=0,
        timeout=TIMEOUT_S,
        http_client=http,
    )
    messages = [{"role": "user", "content": "go"}]

    async def fetch(dialect: str, seed: int) -> list[Call]:
        async with client.messages.stream(
            model="m",
            max_tokens=1024,
            messages=messages,
            extra_headers={SEED_HEADER: str(seed)},
        ) as stream:
            async for _ in stream:
                pass
            message = await stream.get_final_message()
        return [(b.id, b.name, b.input) for b in message.content if b.type == "tool_use"]

    return fetch, http.aclose


IMPLS: dict[str, ClientImpl] = {
    "ours-httpx": ClientImpl(label="httpx", dialects=inputs.W2_DIALECTS, open=_ours("httpx")),
    "ours-httpx2": ClientImpl(label="httpx2", dialects=inputs.W2_DIALECTS, open=_ours("httpx2")),
    "hand": ClientImpl(
        label="hand-written httpx-sse+json", dialects=inputs.W2_DIALECTS, open=_open_hand
    ),
    "openai": ClientImpl(
        label="openai-sdk", dialects=("openai_chat", "openai_responses"), open=_open_openai
    ),
    "anthropic": ClientImpl(label="anthropic-sdk", dialects=("anthropic",), open=_open_anthropic),
}
"""Every client, by its ``--impl`` key."""


# --------------------------------------------------------------------------------------
# The client process


def _status_kib(field: str) -> int:
    """A ``/proc/self/status`` memory line in KiB (``VmRSS``, ``VmHWM``), 0 elsewhere.

    Not ``getrusage``: Linux keeps ``ru_maxrss`` across ``execve``, so a client started
    by a parent that imported every peer would report the parent's peak.
    """
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, IndexError, ValueError):
        pass
    return 0


async def _read_all(fetch: Fetch, dialect: str, seeds: Sequence[int]) -> list[Any]:
    async def one(seed: int) -> Any:
        try:
            return await fetch(dialect, seed)
        except Exception as exc:  # a wrong stream is a result to report, not a crash
            return f"raised {type(exc).__name__}: {str(exc)[:200]}"

    return list(await asyncio.gather(*(one(s) for s in seeds)))


def _problems(
    got: Sequence[Any], seeds: Sequence[int], dialect: str, n_calls: int, arg_bytes: int
) -> list[str]:
    out = []
    for seed, calls in zip(seeds, got, strict=True):
        stream = inputs.parallel_calls(dialect, n_calls=n_calls, arg_bytes=arg_bytes, seed=seed)
        expected = [(c.call_id, c.name, c.args) for c in stream.calls]
        if calls != expected:
            what = calls if isinstance(calls, str) else f"{len(calls)} calls, not as expected"
            out.append(f"seed {seed}: {what}")
    return out


_HTTP = frozenset(
    {"httpx", "httpx2", "httpcore", "httpcore2", "h11", "h2", "anyio", "sniffio", "idna"}
)
_LOOP = frozenset({"asyncio", "selectors", "socket", "ssl", "contextlib", "contextvars"})
_PEER_PARSING = frozenset({"httpx_sse", "openai", "anthropic", "pydantic", "pydantic_core", "json"})
"""A peer's reader: httpx-sse, the SDK and its pydantic models, the json module."""


def _top_package(filename: str, prefixes: Sequence[str]) -> str:
    for prefix in prefixes:
        if filename.startswith(prefix):
            rest = filename[len(prefix) :]
            if rest.startswith("benchmarks/peers/handwritten"):
                return "hand loop"
            return rest.split("/", 1)[0].removesuffix(".py")
    return "other"


def _layer(package: str, *, ours: bool) -> str:
    if package in (("sse_toolcalls",) if ours else _PEER_PARSING | {"hand loop"}):
        return "parsing"
    if package in _HTTP:
        return "http"
    if package in _LOOP:
        return "loop"
    return "other"


def profile_shares(stats: pstats.Stats, *, ours: bool) -> tuple[dict[str, float], dict[str, float]]:
    """Shares of the profiled time per layer and per package.

    Layers: ``parsing`` (our package for ours; for a peer its reader: httpx-sse, the SDK
    and pydantic, json, the hand loop), ``http`` (httpx, httpcore, h11, anyio and the
    like), ``loop`` (asyncio, selectors, sockets), ``other`` (the rest of the standard
    library, the harness's glue). A Python function's own time goes to its package; a C
    function's (filename ``~``) to its callers' packages, in the proportion they called
    it, so orjson's time inside our dialects is ours and a socket's inside asyncio is
    the loop's.
    """
    paths = sysconfig.get_paths()
    prefixes = sorted(
        {
            str(ROOT) + "/",
            paths["purelib"] + "/",
            paths["platlib"] + "/",
            paths["stdlib"] + "/",
        },
        key=len,
        reverse=True,
    )
    packages: dict[str, float] = {}
    table: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]

    def package_of(func: tuple[str, int, str]) -> str:
        if func[0] == "~" or func[0].startswith("<frozen "):
            return "other"
        return _top_package(func[0], prefixes)

    for func, (_cc, _nc, tottime, _ct, callers) in table.items():
        if func[0] == "~":
            spread = sum(c[2] for c in callers.values())
            if not callers or spread <= 0:
                packages["other"] = packages.get("other", 0.0) + tottime
                continue
            for caller, (_c, _n, tt, _t) in callers.items():
                name = package_of(caller)
                packages[name] = packages.get(name, 0.0) + tottime * tt / spread
        else:
            name = package_of(func)
            packages[name] = packages.get(name, 0.0) + tottime
    whole = sum(packages.values()) or 1.0
    layers = {"parsing": 0.0, "http": 0.0, "loop": 0.0, "other": 0.0}
    for name, t in packages.items():
        layers[_layer(name, ours=ours)] += t / whole
    top = sorted(packages.items(), key=lambda kv: -kv[1])[:8]
    return layers, {k: v / whole for k, v in top}


async def _client(args: argparse.Namespace) -> list[dict[str, Any]]:
    impl = IMPLS[args.impl]
    fetch, aclose = await impl.open(f"http://127.0.0.1:{args.port}", args.streams)
    label = impl.label
    if args.impl.startswith("ours"):
        from sse_toolcalls.framing import sse

        twin = "c" if sse.IMPLEMENTATION == "c" else "py"
        label = f"sse_toolcalls[{twin}] {impl.label}"
    rows = []
    try:
        for dialect in args.dialect.split(","):
            row = await _one_dialect(args, fetch, dialect)
            rows.append({"impl": label, "key": args.impl, "dialect": dialect, **row})
    finally:
        await aclose()
    return rows


async def _one_dialect(args: argparse.Namespace, fetch: Fetch, dialect: str) -> dict[str, Any]:
    seeds = [SEED_BASE + i for i in range(args.streams)]
    warm = [SEED_BASE - 1 - i for i in range(WARMUP_STREAMS)]
    problems = _problems(
        await _read_all(fetch, dialect, warm), warm, dialect, args.calls, args.arg_bytes
    )
    gc.collect()
    rss_before = _status_kib("VmRSS")
    cpu0, wall0 = time.process_time(), time.perf_counter()
    got = await _read_all(fetch, dialect, seeds)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    peak = _status_kib("VmHWM")
    problems += _problems(got, seeds, dialect, args.calls, args.arg_bytes)
    row: dict[str, Any] = {
        "streams": args.streams,
        "cpu_s": cpu,
        "wall_s": wall,
        "cpu_ms_stream": cpu / args.streams * 1000,
        "rss_peak_mib": peak / 1024,
        "rss_run_mib": max(0, peak - rss_before) / 1024,
        "problems": problems[:5],
        "wrong": len(problems),
    }
    if args.profile and not problems:
        profiler = cProfile.Profile()
        profiler.enable()
        await _read_all(fetch, dialect, seeds)
        profiler.disable()
        row["shares"], row["packages"] = profile_shares(
            pstats.Stats(profiler), ours=args.impl.startswith("ours")
        )
    return row


def client_main(argv: Sequence[str] | None = None) -> int:
    """One client process: prints one JSON line, its rows (or ``{"missing": ...}``)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.many_streams")
    parser.add_argument("--impl", required=True, choices=sorted(IMPLS))
    parser.add_argument("--dialect", required=True, help="comma-separated, run in turn")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--streams", type=int, default=300)
    parser.add_argument("--calls", type=int, default=2)
    parser.add_argument("--arg-bytes", type=int, default=400)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    out: Any
    try:
        out = asyncio.run(_client(args))
    except (MissingPeer, ImportError) as exc:
        out = {"missing": f"{args.impl}: {exc}"}
    print(json.dumps(out), flush=True)
    return 0


# --------------------------------------------------------------------------------------
# The parent: one server, one client process per implementation and dialect


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """What one W5 run does."""

    streams: int
    """Concurrent streams per client."""
    n_calls: int
    """Calls per stream."""
    arg_bytes: int
    """Argument bytes per call."""
    gap_ms: float
    """The server's pause between writes of one stream."""
    impls: tuple[str, ...]
    """``IMPLS`` keys; ours also runs with the pure twin."""
    dialects: tuple[str, ...]
    profile: bool
    one_process: bool
    """All of a client's dialects in one process (the smoke: fewer interpreter starts;
    the peak RSS is then the largest so far), else one process per dialect."""
    timeout_s: float
    """Seconds one client process may take."""


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **extra}
    env.pop("SSE_TOOLCALLS_PURE_PYTHON", None)
    env.update(extra)
    return env


def run(
    plan: Plan, log: Callable[[str], None]
) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """Serve, run every client, stop; returns (rows, missing peers, failures)."""
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "benchmarks.streams_server",
            "--calls",
            str(plan.n_calls),
            "--arg-bytes",
            str(plan.arg_bytes),
            "--gap-ms",
            str(plan.gap_ms),
        ],
        cwd=ROOT,
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    rows: list[dict[str, Any]] = []
    missing: list[str] = []
    failures: list[str] = []
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if not line:
            return rows, missing, ["W5: the streams server did not start"]
        port = json.loads(line)["port"]
        runs: list[tuple[str, dict[str, str]]] = []
        for key in plan.impls:
            runs.append((key, {}))
            if key == "ours-httpx":
                runs.append((key, {"SSE_TOOLCALLS_PURE_PYTHON": "1"}))
        for key, extra in runs:
            dialects = [d for d in plan.dialects if d in IMPLS[key].dialects]
            groups = [dialects] if plan.one_process else [[d] for d in dialects]
            for group in groups:
                result = _run_client(plan, port, key, group, extra, log)
                if isinstance(result, dict) and "missing" in result:
                    missing.append(f"W5 {result['missing']}")
                    log(f"  peer not run: {result['missing']}")
                    break
                if isinstance(result, dict):
                    failures.append(f"W5 {','.join(group)}: {key}: {result['error']}")
                    log(f"  FAILED {key}: {result['error']}")
                    continue
                for row in result:
                    if row["wrong"]:
                        failures.append(f"W5 {row['dialect']}: {row['impl']}: {row['problems']}")
                        log(f"  WRONG {row['impl']} {row['dialect']}: {row['problems']}")
                    else:
                        rows.append(row)
    finally:
        if server.stdin is not None:
            server.stdin.close()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    return rows, missing, failures


def _run_client(
    plan: Plan,
    port: int,
    key: str,
    dialects: list[str],
    extra: dict[str, str],
    log: Callable[[str], None],
) -> list[dict[str, Any]] | dict[str, Any]:
    """The client's rows, or ``{"missing": ...}`` or ``{"error": ...}``."""
    twin = " (pure twin)" if extra else ""
    log(f"W5 {','.join(dialects)}: {key}{twin}, {plan.streams} concurrent streams")
    command = [
        sys.executable,
        "-m",
        "benchmarks.many_streams",
        "--impl",
        key,
        "--dialect",
        ",".join(dialects),
        "--port",
        str(port),
        "--streams",
        str(plan.streams),
        "--calls",
        str(plan.n_calls),
        "--arg-bytes",
        str(plan.arg_bytes),
    ]
    if plan.profile:
        command.append("--profile")
    try:
        proc = subprocess.run(
            command,
            cwd=ROOT,
            env=_env(**extra),
            capture_output=True,
            text=True,
            timeout=plan.timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"took over {plan.timeout_s:.0f} s"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"error": f"exit {proc.returncode}: {proc.stderr[-500:]}"}
    result: list[dict[str, Any]] | dict[str, Any] = json.loads(lines[-1])
    return result


if __name__ == "__main__":
    sys.exit(client_main())
