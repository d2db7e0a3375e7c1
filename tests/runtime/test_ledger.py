"""The idempotency ledger: keys, states, and the SQLite file across connections,
processes and restarts."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from sse_toolcalls.runtime.ledger import (
    IdempotencyLedger,
    InMemoryLedger,
    LedgerError,
    SQLiteLedger,
    canonical_arguments,
    idempotency_key,
)


@pytest.fixture(params=["memory", "sqlite"])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> IdempotencyLedger:
    if request.param == "memory":
        return InMemoryLedger(clock=lambda: 100.0)
    return SQLiteLedger(tmp_path / "ledger.db", clock=lambda: 100.0)


def test_both_implementations_satisfy_the_protocol(ledger: IdempotencyLedger) -> None:
    assert isinstance(ledger, IdempotencyLedger)


def test_reserve_then_record_then_get(ledger: IdempotencyLedger) -> None:
    assert ledger.get("k") is None
    assert ledger.reserve("k", tool="send_email") is None
    pending = ledger.get("k")
    assert pending is not None
    assert (pending.state, pending.tool, pending.content, pending.started_at) == (
        "in_flight",
        "send_email",
        None,
        100.0,
    )
    ledger.record("k", {"sent": True, "id": 12345678901234567890123})
    done = ledger.get("k")
    assert done is not None
    assert (done.state, done.content, done.is_error, done.finished_at) == (
        "done",
        {"sent": True, "id": 12345678901234567890123},
        False,
        100.0,
    )


def test_a_second_reservation_gets_the_existing_entry(ledger: IdempotencyLedger) -> None:
    assert ledger.reserve("k", tool="t") is None
    second = ledger.reserve("k", tool="t")
    assert second is not None and second.state == "in_flight"
    ledger.record("k", "ok", is_error=True)
    third = ledger.reserve("k", tool="t")
    assert third is not None and (third.state, third.content, third.is_error) == (
        "done",
        "ok",
        True,
    )


def test_forget_clears_a_key(ledger: IdempotencyLedger) -> None:
    ledger.reserve("k", tool="t")
    ledger.forget("k")
    assert ledger.get("k") is None
    assert ledger.reserve("k", tool="t") is None


def test_sqlite_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with SQLiteLedger(path) as first:
        first.reserve("done-key", tool="pay")
        first.record("done-key", {"paid": 10})
        first.reserve("crashed-key", tool="pay")
    with SQLiteLedger(path) as reopened:
        done = reopened.get("done-key")
        crashed = reopened.get("crashed-key")
    assert done is not None and (done.state, done.content) == ("done", {"paid": 10})
    assert crashed is not None and crashed.state == "in_flight"


def test_sqlite_reservation_is_atomic_across_connections(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    ledgers = [SQLiteLedger(path) for _ in range(6)]
    winners: list[int] = []
    start = threading.Barrier(len(ledgers))

    def contend(n: int) -> None:
        start.wait()
        if ledgers[n].reserve("contended", tool="pay") is None:
            winners.append(n)

    threads = [threading.Thread(target=contend, args=(n,)) for n in range(len(ledgers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for one in ledgers:
        one.close()
    assert len(winners) == 1


def test_sqlite_is_shared_with_another_process(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    code = (
        "import sys\n"
        "from sse_toolcalls.runtime.ledger import SQLiteLedger\n"
        "with SQLiteLedger(sys.argv[1]) as ledger:\n"
        "    assert ledger.reserve('from-child', tool='pay') is None\n"
        "    ledger.record('from-child', 'child result')\n"
        "    print(ledger.reserve('from-parent', tool='pay').state)\n"
    )
    with SQLiteLedger(path) as parent:
        parent.reserve("from-parent", tool="pay")
        child = subprocess.run(
            [sys.executable, "-c", code, str(path)],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONPATH": str(Path(__file__).resolve().parents[2])},
            timeout=60,
        )
        seen = parent.get("from-child")
    assert child.stdout.strip() == "in_flight"
    assert seen is not None and (seen.state, seen.content) == ("done", "child result")


def test_a_file_that_is_not_a_database_is_our_error(tmp_path: Path) -> None:
    path = tmp_path / "not-a-db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(LedgerError):
        SQLiteLedger(path)


def test_canonical_arguments_ignore_key_order() -> None:
    assert canonical_arguments({"b": 1, "a": {"y": 2, "x": [3, "é"]}}) == (
        '{"a":{"x":[3,"é"],"y":2},"b":1}'
    )
    assert canonical_arguments({"n": 2**70}) == '{"n":1180591620717411303424}'


def key_of(**changes: object) -> str:
    fields: dict[str, object] = {
        "tool": "pay",
        "arguments": {"to": "bob", "cents": 500},
        "conversation_id": "c1",
        "turn": 2,
        "occurrence": 0,
    }
    fields.update(changes)
    return idempotency_key(**fields)  # type: ignore[arg-type]


def test_the_key_ignores_argument_order_but_not_what_matters() -> None:
    key = key_of()
    assert len(key) == 64
    assert key_of(arguments={"cents": 500, "to": "bob"}) == key
    others = {
        key_of(tool="refund"),
        key_of(arguments={"to": "bob", "cents": 501}),
        key_of(conversation_id="c2"),
        key_of(turn=3),
        key_of(occurrence=1),
    }
    assert key not in others
    assert len(others) == 5
