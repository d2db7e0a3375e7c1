"""The price of the ledger: writes per second and the latency each write adds, per store.

One *write* is what the dispatcher asks of the ledger around a write tool's handler:
``get`` (already done?), ``reserve`` and ``record`` — three calls, timed together, with
a fresh key each time and a small JSON result. Stores:

- ``memory``: :class:`InMemoryLedger` (the floor: a dict under a lock);
- ``sqlite``: :class:`SQLiteLedger`, one WAL file, ``synchronous=FULL`` (an fsync per
  commit), each statement in a worker thread;
- ``postgres``: :class:`PostgresLedger` on a throwaway local cluster with the server's
  default durability (``fsync=on``, ``synchronous_commit=on``), over a unix socket; or
  your own server with ``--dsn``.

With 1 worker, and with N worker *processes* (``--workers``) writing at once, each with
its own ledger object (as N agent workers would): writes/s is all writes over the wall
time of the run; p50/p99 are over every write's latency. The in-memory ledger cannot be
shared between processes, so its N-worker row is N independent ledgers (the floor of
what N processes cost each other: nothing). Every write is checked afterwards (each key
done, with its content), so a fast wrong answer cannot count.

Run: ``python benchmarks/bench_ledger.py`` (``--fast`` for a CI smoke run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio

from sse_toolcalls.runtime.ledgers.base import IdempotencyLedger
from sse_toolcalls.runtime.ledgers.memory import InMemoryLedger
from sse_toolcalls.runtime.ledgers.sqlite import SQLiteLedger

ROOT = Path(__file__).resolve().parents[1]
CONTENT = {"receipt": "R-000123", "amount": 1000, "currency": "EUR"}


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _ledger(kind: str, target: str) -> Any:
    if kind == "memory":
        return InMemoryLedger()
    if kind == "sqlite":
        return SQLiteLedger(target)
    from sse_toolcalls.runtime.ledgers.postgres import PostgresLedger

    return PostgresLedger(target, max_size=2)


async def _close(ledger: Any) -> None:
    if isinstance(ledger, SQLiteLedger):
        ledger.close()
    elif hasattr(ledger, "aclose"):
        await ledger.aclose()


async def _writes(kind: str, target: str, writes: int, start_at: float) -> dict[str, Any]:
    """One worker: ``writes`` writes from ``start_at`` (a shared wall-clock start)."""
    ledger: IdempotencyLedger = _ledger(kind, target)
    await ledger.get("warm-up")  # the pool opened and the schema migrated before timing
    prefix = uuid.uuid4().hex
    keys = [f"{prefix}-{n}" for n in range(writes)]
    await anyio.sleep(max(0.0, start_at - time.time()))
    latencies: list[float] = []
    began = time.perf_counter()
    for key in keys:
        t0 = time.perf_counter()
        assert await ledger.get(key) is None
        assert await ledger.reserve(key, tool="pay") is None
        await ledger.record(key, CONTENT)
        latencies.append(time.perf_counter() - t0)
    wall = time.perf_counter() - began
    for key in keys:  # correctness: every write is on record, with its result
        entry = await ledger.get(key)
        assert entry is not None and entry.state == "done" and entry.content == CONTENT, key
    await _close(ledger)
    return {"latencies": latencies, "wall": wall}


def _child(argv: list[str]) -> int:
    kind, target, writes, start_at = argv[0], argv[1], int(argv[2]), float(argv[3])
    result = anyio.run(_writes, kind, target, writes, start_at)
    print(json.dumps(result))
    return 0


def _run(kind: str, target: str, workers: int, writes: int) -> dict[str, Any]:
    start_at = time.time() + 1.0 + 0.3 * workers  # every child imported and connected
    children = [
        subprocess.Popen(
            [sys.executable, __file__, "--child", kind, target, str(writes), str(start_at)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for _ in range(workers)
    ]
    results = []
    for child in children:
        out, _ = child.communicate(timeout=600)
        if child.returncode != 0:
            raise SystemExit(f"a {kind} worker failed ({child.returncode})")
        results.append(json.loads(out))
    latencies = [x for r in results for x in r["latencies"]]
    wall = max(r["wall"] for r in results)
    return {
        "store": kind,
        "workers": workers,
        "writes": len(latencies),
        "writes_per_s": len(latencies) / wall,
        "p50_ms": 1000 * _percentile(latencies, 0.50),
        "p99_ms": 1000 * _percentile(latencies, 0.99),
    }


def _postgres(dsn: str | None) -> tuple[str | None, Any]:
    """A DSN to benchmark on (and the server to stop), or ``(None, reason)``."""
    if dsn:
        return dsn, None
    from tests.pg_server import REQUIRE_ENV, PgServer, missing_reason

    reason = missing_reason()
    if reason is not None:
        if os.environ.get(REQUIRE_ENV) == "1":
            raise SystemExit(f"{REQUIRE_ENV}=1 but {reason}")
        return None, reason
    server = PgServer(durable=True)
    server.start()
    return server.create_database(), server


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        return _child(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help="20 writes per worker (CI smoke)")
    parser.add_argument("--writes", type=int, default=500, help="writes per worker")
    parser.add_argument("--workers", type=int, default=4, help="N, the concurrent workers")
    parser.add_argument("--dsn", help="benchmark Postgres on this server instead")
    parser.add_argument("--stores", default="memory,sqlite,postgres")
    args = parser.parse_args(argv)
    writes = 20 if args.fast else args.writes
    stores = args.stores.split(",")
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench_ledger_") as tmp:
        folder = Path(tmp)
        server = None
        targets = {"memory": "", "sqlite": str(folder / "ledger.db")}
        if "postgres" in stores:
            dsn, server = _postgres(args.dsn)
            if dsn is None:
                print(f"postgres: skipped ({server})")
                stores.remove("postgres")
            else:
                targets["postgres"] = dsn
        try:
            for kind in stores:
                for workers in (1, args.workers):
                    rows.append(_run(kind, targets[kind], workers, writes))
        finally:
            if server is not None and hasattr(server, "stop"):
                server.stop()
    print(
        f"ledger writes (get + reserve + record), {writes} per worker; "
        f"{platform.platform()}, CPython {platform.python_version()}, {os.cpu_count()} cores"
    )
    print("| store | workers | writes | writes/s | p50 ms | p99 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['store']} | {row['workers']} | {row['writes']} | "
            f"{row['writes_per_s']:,.0f} | {row['p50_ms']:.3f} | {row['p99_ms']:.3f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
