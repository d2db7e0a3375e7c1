"""One agent worker of the many-workers test (``test_many_workers.py``), as a process.

``python -m tests.runtime.chaos_worker DSN NAME`` prints ``ready``, then reads one job
per line (JSON) on stdin and answers each with one JSON line on stdout: an ``Agent``
with the Postgres ledger and conversation store, against its own simulator. The write
tool counts each of its executions in the database (table ``executions``), and obeys
the job's faults: SIGKILL itself before or after its effect, or drop the ledger's
database connections in the middle of the write.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from typing import Any

import anyio
import anyio.lowlevel
import psycopg

from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.runtime.ledgers.postgres import PostgresLedger
from sse_toolcalls.runtime.retry import RetryPolicy
from sse_toolcalls.runtime.stores.postgres import PostgresConversationStore
from sse_toolcalls.runtime.tools import ToolContext, ToolRegistry
from sse_toolcalls.tooling.simulator import (
    CutInArguments,
    HTTPError,
    Script,
    ScriptedCall,
    Simulator,
    Turn,
)


async def no_sleep(seconds: float) -> None:
    await anyio.lowlevel.checkpoint()


def script(job: dict[str, Any]) -> Script:
    if job["kind"] == "ask":
        # Its history holds calls another worker's simulator issued.
        return Script(turns=(Turn(text="You sent money earlier."),), check_results=False)
    call = ScriptedCall(name="transfer", args={"to": job["to"], "amount": job["amount"]})
    turns: list[Turn] = []
    fault = job.get("fault")
    if fault == "429":
        turns.append(Turn(fault=HTTPError(status=429, retry_after="0")))
    elif fault == "500":
        turns.append(Turn(fault=HTTPError(status=500)))
    elif fault == "cut":
        turns.append(Turn(calls=(call,), fault=CutInArguments()))
    turns += [Turn(calls=(call,)), Turn(text="Done.")]
    return Script(turns=tuple(turns))


def registry(dsn: str, name: str, job: dict[str, Any]) -> ToolRegistry:
    tools = ToolRegistry()

    @tools.register(effect="write")
    def transfer(to: str, amount: int, ctx: ToolContext[None]) -> dict[str, str]:
        """Send money.

        Args:
            to: who receives it.
            amount: how much.
        """
        if job.get("kill") == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(
                "INSERT INTO executions (request_id, worker) VALUES (%s, %s)",
                (ctx.request_id, name),
            )
            if job.get("kill") == "after":
                os.kill(os.getpid(), signal.SIGKILL)
            if job.get("drop"):
                conn.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = %s",
                    (f"{name}-ledger",),
                )
        return {"receipt": f"{ctx.request_id}@{name}"}

    return tools


async def main(dsn: str, name: str) -> None:
    ledger = PostgresLedger(f"{dsn} application_name={name}-ledger")
    store = PostgresConversationStore(f"{dsn} application_name={name}-store")
    with Simulator() as sim:
        print("ready", flush=True)  # noqa: T201 - stdout is the protocol with the test
        while True:
            line = await anyio.to_thread.run_sync(sys.stdin.readline)
            if not line:
                break
            job = json.loads(line)
            await anyio.sleep(max(0.0, job.get("start_at", 0.0) - time.time()))
            sim.play(script(job), continuing=True)
            async with client_for(
                job["dialect"],
                model="sim-model-1",
                api_key="test-key",
                base_url=sim.base_url_for(job["dialect"]),
                idle_timeout=2.0,
            ) as client:
                agent = Agent(
                    client,
                    registry(dsn, name, job),
                    ledger=ledger,
                    store=store,
                    retry=RetryPolicy(sleep=no_sleep, random=lambda: 0.5),
                )
                with anyio.fail_after(30):
                    reply = await agent.run(
                        job["text"],
                        conversation_id=job["conversation_id"],
                        request_id=job["request_id"],
                    )
            first = json.dumps(sim.requests[0].body) if sim.requests else ""
            answer = {
                "id": job["id"],
                "request_id": job["request_id"],
                "worker": name,
                "text": reply.text,
                "is_fallback": reply.is_fallback,
                "outcomes": [r.outcome for r in reply.reports],
                "saw_history": job.get("history_text", "") in first,
                "problems": list(sim.problems),
            }
            print(json.dumps(answer), flush=True)  # noqa: T201 - the protocol
    await ledger.aclose()
    await store.aclose()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
