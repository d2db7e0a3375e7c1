"""Many workers, faults, one truth (issue 15, item 5).

Four worker processes (``chaos_worker.py``), each an ``Agent`` with the Postgres ledger
and conversation store against its own simulator, serve the same conversations; every
user request is submitted twice, to two different workers, at the same time (a client
retrying through a load balancer). Faults: streams cut in a call's arguments, 429 and
500 answers, a worker SIGKILLed in the middle of a write (before its effect and after
it; its request is then re-submitted to a fresh worker), the ledger's database
connections dropped in the middle of a write (``pg_terminate_backend``) and every
worker's connections dropped at once in the middle of the round.

The write tool counts its executions in the database. Checked: no request's write ran
twice; none was lost (each either recorded its result, or is in flight and some reply
told the model it may have run); every submission got a reply; the second message of
each conversation saw the first (the shared store). The counts go to
``<basetemp>/many_workers_summary.json`` and the terminal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import IO, Any

import pytest

from sse_toolcalls.calls import DIALECTS
from sse_toolcalls.runtime.ledgers.base import idempotency_key

from ..pg_server import PgServer

WORKERS = 4
CONVERSATIONS = 16
WAVE_S = 1.0
"""Seconds between waves of requests: one write request takes 0.1-0.5 s here."""
FAULTS: tuple[dict[str, Any], ...] = (
    {},
    {"fault": "429"},
    {"fault": "500"},
    {"fault": "cut"},
    {"kill": "after"},
    {"kill": "before"},
    {"drop": True},
    {"fault": "cut", "drop": True},
)
ROOT = Path(__file__).resolve().parents[2]


class Worker:
    """One worker process; restarted when it dies."""

    def __init__(self, dsn: str, slot: int, log: Path) -> None:
        self.dsn, self.slot, self.generation, self.log = dsn, slot, 0, log
        self.process: subprocess.Popen[str] | None = None
        self.start()

    @property
    def name(self) -> str:
        return f"w{self.slot}g{self.generation}"

    def start(self) -> None:
        self.generation += 1
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        # The workers' logs (their diagnostics) go to a file, read when a check fails.
        with self.log.open("a") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.runtime.chaos_worker", self.dsn, self.name],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                cwd=ROOT,
                env=env,
            )
        assert self._stdout().readline().strip() == "ready", f"{self.name} did not start"

    def _stdout(self) -> IO[str]:
        assert self.process is not None and self.process.stdout is not None
        return self.process.stdout

    def submit(self, job: dict[str, Any]) -> dict[str, Any] | None:
        """The reply, or ``None`` when the worker died on it (it is restarted)."""
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(json.dumps(job) + "\n")
        self.process.stdin.flush()
        line = self._stdout().readline()
        if line:
            answer: dict[str, Any] = json.loads(line)
            return answer
        self.process.wait(timeout=30)
        self.process.stdin.close()
        self._stdout().close()
        self.start()
        return None

    def stop(self) -> None:
        if self.process is not None and self.process.stdin is not None:
            self.process.stdin.close()
            self.process.wait(timeout=30)
            self._stdout().close()


def run_round(workers: list[Worker], plan: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Each worker runs its list of jobs in order, all workers at once; a job whose
    worker died is re-submitted (without its fault) to the restarted worker."""
    replies: list[dict[str, Any]] = []
    deaths: list[str] = []
    lock = threading.Lock()

    def serve(worker: Worker, jobs: list[dict[str, Any]]) -> None:
        for job in jobs:
            reply = worker.submit(job)
            if reply is None:
                with lock:
                    deaths.append(job["id"])
                again = {**job, "kill": None, "id": job["id"] + "+resubmitted"}
                reply = worker.submit(again)
            assert reply is not None
            with lock:
                replies.append(reply)

    threads = [
        threading.Thread(target=serve, args=(w, jobs))
        for w, jobs in zip(workers, plan, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a worker hung"
    for reply in replies:
        reply["deaths"] = deaths
    return replies


def sql(dsn: str, statement: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        cursor = conn.execute(statement, params)
        return cursor.fetchall() if cursor.description else []


@pytest.mark.timeout(300)  # ~35 s alone; a machine shared 6x took 140 s
def test_many_workers_with_faults_keep_one_truth(
    postgres_server: PgServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    started = time.monotonic()
    dsn = postgres_server.create_database()
    sql(dsn, "CREATE TABLE executions (request_id text NOT NULL, worker text NOT NULL)")
    log = tmp_path_factory.mktemp("workers") / "workers.log"
    workers = [Worker(dsn, slot, log) for slot in range(WORKERS)]
    try:
        writes: dict[str, dict[str, Any]] = {}
        plan: list[list[dict[str, Any]]] = [[] for _ in workers]
        later: list[list[dict[str, Any]]] = [[] for _ in workers]
        first_wave = time.time() + 0.5
        for c in range(CONVERSATIONS):
            faults = FAULTS[c % len(FAULTS)]
            job: dict[str, Any] = {
                "kind": "write",
                "conversation_id": f"chat-{c}",
                "request_id": f"chat-{c}/msg-1",
                "text": f"Send user{c} {c + 1} euros",
                "dialect": DIALECTS[c % len(DIALECTS)],
                "to": f"user{c}",
                "amount": c + 1,
            }
            writes[job["request_id"]] = job
            # The same request on two workers at once; the first copy carries the fault.
            # Two conversations per wave, each on a pair of workers, both copies of a
            # request starting at the same instant: they race for the reservation.
            wave, pair = divmod(c, 2)
            start_at = first_wave + wave * WAVE_S
            plan[2 * pair].append({**job, **faults, "id": f"{c}a", "start_at": start_at})
            copy_b = {**job, "fault": faults.get("fault"), "id": f"{c}b", "start_at": start_at}
            if faults.get("kill"):
                # The copy of a request whose worker is to be killed comes after the
                # round (else it may win the race and the kill never happen mid-write).
                later[2 * pair + 1].append({**copy_b, "start_at": 0.0})
            else:
                plan[2 * pair + 1].append(copy_b)

        def drop_everything() -> None:
            time.sleep(2.2)  # in the middle of the third wave
            sql(
                dsn,
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name LIKE 'w%%-%%' AND pid <> pg_backend_pid()",
            )

        dropper = threading.Thread(target=drop_everything)
        dropper.start()
        first = run_round(workers, plan)
        dropper.join()
        deaths = len(first[0]["deaths"])
        first += run_round(workers, later)

        asks: list[list[dict[str, Any]]] = [[] for _ in workers]
        for c in range(CONVERSATIONS):
            asks[(c + 2) % WORKERS].append(
                {
                    "kind": "ask",
                    "conversation_id": f"chat-{c}",
                    "request_id": f"chat-{c}/msg-2",
                    "text": "What did I just send?",
                    "history_text": f"Send user{c} {c + 1} euros",
                    "dialect": DIALECTS[c % len(DIALECTS)],
                    "id": f"{c}q",
                }
            )
        second = run_round(workers, asks)
    finally:
        for worker in workers:
            worker.stop()

    executions = Counter(r[0] for r in sql(dsn, "SELECT request_id FROM executions"))
    states = dict(sql(dsn, "SELECT key, state FROM sse_toolcalls_ledger"))
    by_request: dict[str, list[dict[str, Any]]] = {}
    for reply in first:
        by_request.setdefault(reply["request_id"], []).append(reply)

    recorded = may_have_run = met = 0
    for request_id, job in writes.items():
        key = idempotency_key(
            tool="transfer",
            arguments={"to": job["to"], "amount": job["amount"]},
            request_id=request_id,
        )
        outcomes = [o for r in by_request[request_id] for o in r["outcomes"]]
        assert executions[request_id] <= 1, f"{request_id} ran {executions[request_id]} times"
        state = states.get(key)
        assert state is not None, f"{request_id}: no reservation, the write was lost"
        if state == "done":
            recorded += 1
            met += "unconfirmed" in outcomes
            assert executions[request_id] == 1, f"{request_id} recorded without running"
            assert set(outcomes) <= {"ok", "replayed", "unconfirmed"}, outcomes
            assert "ok" in outcomes or "replayed" in outcomes
        else:
            may_have_run += 1
            assert "unconfirmed" in outcomes, f"{request_id} in flight, nobody was told"

    replies = first + second
    assert all(r["text"].strip() for r in replies), "every user got a reply"
    assert not [r for r in replies if r["problems"]], "the simulators found problems"
    assert all(r["saw_history"] for r in second), "the second message saw the first"
    counts = {
        "workers": WORKERS,
        "conversations": CONVERSATIONS,
        "submissions": len(replies),
        "writes_requested": len(writes),
        "writes_executed": sum(executions.values()),
        "writes_executed_twice": sum(1 for n in executions.values() if n > 1),
        "writes_recorded": recorded,
        "copies_that_found_the_other_in_flight": met,
        "writes_reported_may_have_run": may_have_run,
        "writes_lost": 0,
        "workers_killed_mid_write": deaths,
        "replies": len(replies),
        "fallback_replies": sum(r["is_fallback"] for r in replies),
        "outcomes": dict(Counter(o for r in first for o in r["outcomes"])),
        "second_messages_with_history": sum(r["saw_history"] for r in second),
        "wall_seconds": round(time.monotonic() - started, 1),
    }
    text = json.dumps(counts, indent=2, sort_keys=True)
    (tmp_path_factory.getbasetemp() / "many_workers_summary.json").write_text(text)
    assert deaths == 2 * CONVERSATIONS // len(FAULTS)
    assert counts["writes_executed_twice"] == 0
    # A copy that met its twin inside the write waited for it and replayed its result:
    # no recorded write told anyone it "may have run" (issue 29, item 17).
    assert met == 0, counts
