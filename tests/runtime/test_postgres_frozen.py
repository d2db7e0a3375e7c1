"""Every PostgreSQL server process frozen (SIGSTOP) while a write runs, or before one
starts (issue 29, item 18): the dispatcher's and the agent's deadlines give the user a
reply, the write runs at most once, and after SIGCONT the server is used again. A cluster
of its own (freezing the session's would stall every other test)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from sse_toolcalls.calls import ToolCall
from sse_toolcalls.runtime.dispatch import Dispatcher
from sse_toolcalls.runtime.ledgers.postgres import PostgresLedger
from sse_toolcalls.runtime.stores.postgres import PostgresConversationStore
from sse_toolcalls.runtime.tools import ToolRegistry

from ..pg_server import PgServer, missing_reason

pytestmark = pytest.mark.anyio

DEADLINE = 1.0
"""The ledger deadline here, in seconds."""

GUARD = 120.0
"""Seconds after which a test counts as hung (the bug)."""


@pytest.fixture(scope="module")
def frozen_server() -> Iterator[PgServer]:
    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    server = PgServer()
    server.start()
    try:
        yield server
    finally:
        thaw(server)
        server.stop()


def _server_pids(server: PgServer) -> list[int]:
    main = int((server.data / "postmaster.pid").read_text().split()[0])
    pids = [main]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == main:
                pids.append(int(entry.name))
    return pids


def freeze(server: PgServer) -> None:
    for pid in _server_pids(server):
        os.kill(pid, signal.SIGSTOP)


def thaw(server: PgServer) -> None:
    for pid in _server_pids(server):
        os.kill(pid, signal.SIGCONT)


def _call(call_id: str) -> ToolCall:
    return ToolCall(name="pay", args={"to": "bob"}, provider="anthropic", call_id=call_id, index=0)


@pytest.mark.parametrize("when", ["before", "during"])
async def test_a_frozen_server_gives_a_reply_within_the_deadline(
    frozen_server: PgServer, when: str
) -> None:
    dsn = frozen_server.create_database()
    executed: list[str] = []
    registry = ToolRegistry()

    @registry.register(effect="write")
    def pay(to: str) -> str:
        """Pay someone."""
        executed.append(to)
        if when == "during":
            freeze(frozen_server)  # the write ran; its record meets a frozen server
        return "paid"

    ledger = PostgresLedger(dsn, timeout=DEADLINE)
    dispatcher = Dispatcher(registry, ledger=ledger, ledger_timeout=DEADLINE)
    try:
        await ledger.get("warm-up")  # the pool open and the schema made while it answers
        if when == "before":
            freeze(frozen_server)
        with anyio.fail_after(GUARD):
            (report,) = await dispatcher.dispatch([_call("a")], request_id="r1")
    finally:
        thaw(frozen_server)
    problems = [d for d in report.diagnostics if d.kind == "ledger_error"]
    assert problems, report
    if when == "before":
        assert (report.outcome, executed) == ("ledger_error", [])
    else:
        assert (report.outcome, report.result.content, executed) == ("ok", "paid", ["bob"])
    # Thawed, the server answers again, and nothing runs twice: refused before, the
    # write runs now; cut in its record, it replays (or is still in flight: may have run).
    with anyio.fail_after(GUARD):
        (again,) = await dispatcher.dispatch([_call("b")], request_id="r1")
        await ledger.aclose()
    assert executed == ["bob"]
    assert again.outcome in (("ok",) if when == "before" else ("replayed", "unconfirmed")), again


async def test_a_frozen_store_gives_a_reply(frozen_server: PgServer) -> None:
    from sse_toolcalls.runtime.errors import ConversationStoreError
    from sse_toolcalls.runtime.stores.base import within_deadline

    store = PostgresConversationStore(frozen_server.create_database(), timeout=DEADLINE)
    try:
        await store.load("warm-up")
        freeze(frozen_server)
        with anyio.fail_after(GUARD), pytest.raises(ConversationStoreError):
            await within_deadline("load", DEADLINE, lambda: store.load("chat-1"))
    finally:
        thaw(frozen_server)
    with anyio.fail_after(GUARD):
        await store.aclose()
