"""The many-streams workload's server: seeded bodies over real HTTP on a loopback port.

    python -m benchmarks.streams_server --calls 2 --arg-bytes 400 --gap-ms 1

It prints one JSON line, ``{"port": N}``, once it listens, and serves until its standard
input is closed (the benchmark runs it as a child process, so the server's CPU is never
counted as the client's). uvicorn (h11) on 127.0.0.1, through the package's one owner of
that job, :class:`sse_toolcalls.tooling._loopback.LoopbackServer`.

A request's first path segment names the dialect (``/openai_chat/...``: the SDKs append
their own paths to a base URL, so ``/openai_chat/v1/chat/completions`` is the same
stream), and the ``x-bench-seed`` header picks the body:
``inputs.parallel_calls(dialect, n_calls, arg_bytes, seed)``. The client builds the same
stream from the same seed to check the calls it got. The body goes out as
:func:`benchmarks.inputs.event_reads` cuts it, one or two whole events per write, with
``gap_ms`` between writes: the pace of a model's tokens, so a client that keeps up reads
about one event per read, as real streams arrive.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

from sse_toolcalls.tooling._loopback import LoopbackServer

from . import inputs

__all__ = ["SEED_HEADER", "StreamsApp", "main"]

SEED_HEADER = "x-bench-seed"
"""The request header whose integer value picks the stream's seed."""

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class StreamsApp:
    """An ASGI app answering every request with one seeded stream, paced."""

    def __init__(self, *, n_calls: int, arg_bytes: int, gap_s: float) -> None:
        self.n_calls = n_calls
        self.arg_bytes = arg_bytes
        self.gap_s = gap_s
        # Bodies are built once per (dialect, seed): building is the benchmark's input
        # generation, not the serving the client waits for.
        self._reads: dict[tuple[str, int], list[bytes]] = {}

    def reads(self, dialect: str, seed: int) -> list[bytes]:
        """The writes of one stream (raises ``UnknownDialectError`` for a bad dialect)."""
        key = (dialect, seed)
        if key not in self._reads:
            body = inputs.parallel_calls(
                dialect, n_calls=self.n_calls, arg_bytes=self.arg_bytes, seed=seed
            ).body
            self._reads[key] = inputs.event_reads(body, seed=seed)
        return self._reads[key]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass  # the request body says nothing here: drain it
        dialect = str(scope["path"]).strip("/").split("/", 1)[0]
        headers = dict(scope["headers"])
        try:
            seed = int(headers.get(SEED_HEADER.encode(), b"0"))
            reads = self.reads(dialect, seed)
        except Exception as exc:  # a bad request is the client's bug: say it in a 400
            await _plain(send, 400, f"{type(exc).__name__}: {exc}".encode())
            return
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        for read in reads:
            await send({"type": "http.response.body", "body": read, "more_body": True})
            await asyncio.sleep(self.gap_s)
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _plain(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain")],
        }
    )
    await send({"type": "http.response.body", "body": body})


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until standard input closes; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.streams_server")
    parser.add_argument("--calls", type=int, default=2, help="calls per stream")
    parser.add_argument("--arg-bytes", type=int, default=400, help="argument bytes per call")
    parser.add_argument("--gap-ms", type=float, default=1.0, help="pause between writes")
    args = parser.parse_args(argv)
    app = StreamsApp(n_calls=args.calls, arg_bytes=args.arg_bytes, gap_s=args.gap_ms / 1000)
    server = LoopbackServer(app, what="the many-streams server")
    server.start()
    try:
        print(json.dumps({"port": server.port}), flush=True)
        sys.stdin.read()  # the parent closes our standard input to stop us
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
