"""The idempotency ledger: keys, states, and the SQLite file across connections,
processes and restarts."""

from __future__ import annotations

import datetime
import json
import math
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls.calls import ToolCall
from sse_toolcalls.dialects._common import parse_arguments
from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime.ledgers.base import (
    DEFAULT_RETENTION_S,
    IdempotencyLedger,
    LedgerEntry,
    LedgerError,
    SyncLedgerAdapter,
    as_async_ledger,
    canonical_arguments,
    idempotency_key,
)
from sse_toolcalls.runtime.ledgers.memory import InMemoryLedger
from sse_toolcalls.runtime.ledgers.sqlite import SQLiteLedger
from sse_toolcalls.runtime.tools import ToolRegistry


@pytest.fixture(params=["memory", "sqlite"])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> IdempotencyLedger:
    if request.param == "memory":
        return InMemoryLedger(clock=lambda: 100.0)
    return SQLiteLedger(tmp_path / "ledger.db", clock=lambda: 100.0)


def test_both_implementations_satisfy_the_protocol(ledger: IdempotencyLedger) -> None:
    assert isinstance(ledger, IdempotencyLedger)


@pytest.mark.anyio
async def test_reserve_then_record_then_get(ledger: IdempotencyLedger) -> None:
    assert await ledger.get("k") is None
    assert await ledger.reserve("k", tool="send_email") is None
    pending = await ledger.get("k")
    assert pending is not None
    assert (pending.state, pending.tool, pending.content, pending.started_at) == (
        "in_flight",
        "send_email",
        None,
        100.0,
    )
    await ledger.record("k", {"sent": True, "id": 12345678901234567890123})
    done = await ledger.get("k")
    assert done is not None
    assert (done.state, done.content, done.is_error, done.finished_at) == (
        "done",
        {"sent": True, "id": 12345678901234567890123},
        False,
        100.0,
    )


@pytest.mark.anyio
async def test_a_second_reservation_gets_the_existing_entry(ledger: IdempotencyLedger) -> None:
    assert await ledger.reserve("k", tool="t") is None
    second = await ledger.reserve("k", tool="t")
    assert second is not None and second.state == "in_flight"
    await ledger.record("k", "ok", is_error=True)
    third = await ledger.reserve("k", tool="t")
    assert third is not None and (third.state, third.content, third.is_error) == (
        "done",
        "ok",
        True,
    )


@pytest.mark.anyio
async def test_forget_clears_a_key(ledger: IdempotencyLedger) -> None:
    await ledger.reserve("k", tool="t")
    await ledger.forget("k")
    assert await ledger.get("k") is None
    assert await ledger.reserve("k", tool="t") is None


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_the_sweep_prunes_old_done_entries_and_keeps_writes_that_may_have_run(
    kind: str, tmp_path: Path
) -> None:
    clock = Clock()
    ledger: IdempotencyLedger = (
        InMemoryLedger(clock=clock)
        if kind == "memory"
        else SQLiteLedger(tmp_path / "l.db", clock=clock)
    )
    await ledger.reserve("old-done", tool="t")
    await ledger.record("old-done", "ok")
    await ledger.reserve("old-in-flight", tool="t")
    clock.now += DEFAULT_RETENTION_S - 10
    await ledger.reserve("recent", tool="t")
    await ledger.record("recent", "ok")
    assert await ledger.sweep() == 0, "nothing is past the retention yet"
    clock.now += 20
    assert await ledger.sweep() == 1
    assert await ledger.get("old-done") is None
    kept = await ledger.get("old-in-flight")
    assert kept is not None and kept.state == "in_flight", "a write that may have run stays"
    assert await ledger.get("recent") is not None
    assert await ledger.sweep(include_in_flight=True) == 1
    assert await ledger.get("old-in-flight") is None
    assert await ledger.sweep(older_than=0.0) == 1


class SyncLedger:
    """A ledger written for the old, synchronous protocol."""

    def __init__(self) -> None:
        self.entries: dict[str, LedgerEntry] = {}
        self.threads: set[int] = set()

    def get(self, key: str) -> LedgerEntry | None:
        self.threads.add(threading.get_ident())
        return self.entries.get(key)

    def reserve(self, key: str, *, tool: str) -> LedgerEntry | None:
        self.threads.add(threading.get_ident())
        if key in self.entries:
            return self.entries[key]
        self.entries[key] = LedgerEntry(key=key, state="in_flight", tool=tool)
        return None

    def record(
        self, key: str, content: str | dict[str, Any] | list[Any], *, is_error: bool = False
    ) -> None:
        self.entries[key] = LedgerEntry(key=key, state="done", tool="", content=content)

    def forget(self, key: str) -> None:
        self.entries.pop(key, None)


@pytest.mark.anyio
async def test_a_sync_ledger_of_the_old_protocol_runs_in_threads_with_a_warning() -> None:
    old = SyncLedger()
    with pytest.warns(DeprecationWarning, match="SyncLedgerAdapter"):
        adapted = as_async_ledger(old)
    assert isinstance(adapted, SyncLedgerAdapter) and adapted.ledger is old
    assert await adapted.reserve("k", tool="t") is None
    again = await adapted.reserve("k", tool="t")
    assert again is not None and again.state == "in_flight"
    await adapted.record("k", "ok")
    done = await adapted.get("k")
    assert done is not None and done.content == "ok"
    assert await adapted.sweep() == 0  # the old protocol had no sweep
    await adapted.forget("k")
    assert await adapted.get("k") is None
    assert threading.get_ident() not in old.threads, "the old methods ran off the loop"
    native = InMemoryLedger()
    assert as_async_ledger(native) is native
    with pytest.raises(UsageError, match="missing"):
        as_async_ledger(object())  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_sqlite_never_blocks_the_event_loop(tmp_path: Path) -> None:
    """Another process holds the write lock for 0.4 s: a blocking reserve would freeze
    the loop that long. A heartbeat task ticking every 10 ms must keep ticking."""
    path = tmp_path / "ledger.db"
    ledger = SQLiteLedger(path)
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    gaps: list[float] = []
    done = anyio.Event()

    async def heartbeat() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await anyio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    def release() -> None:
        time.sleep(0.4)
        holder.execute("COMMIT")

    async with anyio.create_task_group() as group:
        group.start_soon(heartbeat)
        group.start_soon(anyio.to_thread.run_sync, release)
        await anyio.sleep(0.02)
        started = time.perf_counter()
        assert await ledger.reserve("k", tool="t") is None
        waited = time.perf_counter() - started
        await ledger.record("k", "ok")
        done.set()
    holder.close()
    ledger.close()
    assert waited > 0.3, "the reservation really waited for the lock"
    assert max(gaps) < 0.2, f"the loop stalled for {max(gaps):.3f} s"


def test_sqlite_survives_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with SQLiteLedger(path) as first:
        first.reserve_sync("done-key", tool="pay")
        first.record_sync("done-key", {"paid": 10})
        first.reserve_sync("crashed-key", tool="pay")
    with SQLiteLedger(path) as reopened:
        done = reopened.get_sync("done-key")
        crashed = reopened.get_sync("crashed-key")
    assert done is not None and (done.state, done.content) == ("done", {"paid": 10})
    assert crashed is not None and crashed.state == "in_flight"


def test_sqlite_reservation_is_atomic_across_connections(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    ledgers = [SQLiteLedger(path) for _ in range(6)]
    winners: list[int] = []
    start = threading.Barrier(len(ledgers))

    def contend(n: int) -> None:
        start.wait()
        if ledgers[n].reserve_sync("contended", tool="pay") is None:
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
        "from sse_toolcalls.runtime.ledgers.sqlite import SQLiteLedger\n"
        "with SQLiteLedger(sys.argv[1]) as ledger:\n"
        "    assert ledger.reserve_sync('from-child', tool='pay') is None\n"
        "    ledger.record_sync('from-child', 'child result')\n"
        "    print(ledger.reserve_sync('from-parent', tool='pay').state)\n"
    )
    with SQLiteLedger(path) as parent:
        parent.reserve_sync("from-parent", tool="pay")
        child = subprocess.run(
            [sys.executable, "-c", code, str(path)],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONPATH": str(Path(__file__).resolve().parents[2])},
            timeout=60,
        )
        seen = parent.get_sync("from-child")
    assert child.stdout.strip() == "in_flight"
    assert seen is not None and (seen.state, seen.content) == ("done", "child result")


def test_a_file_that_is_not_a_database_is_our_error(tmp_path: Path) -> None:
    path = tmp_path / "not-a-db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(LedgerError):
        SQLiteLedger(path)


def test_canonical_arguments_ignore_key_order() -> None:
    assert canonical_arguments({"b": 1, "a": {"y": 2, "x": [3, "é"]}}) == (
        '{"a":{"x":[3,"\\u00e9"],"y":2},"b":1}'
    )
    assert canonical_arguments({"n": 2**70}) == '{"n":1180591620717411303424}'


def key_of(**changes: object) -> str:
    fields: dict[str, object] = {
        "tool": "pay",
        "arguments": {"to": "bob", "cents": 500},
        "request_id": "r1",
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
        key_of(request_id="r2"),
        key_of(occurrence=1),
    }
    assert key not in others
    assert len(others) == 4


# --------------------------------------------------------------------------------------
# The key is computed from what the handler receives, canonically (issue 9).

JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]


def json_values() -> st.SearchStrategy[Any]:
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(-(2**70), 2**70)
        | st.sampled_from([0, -1, 2**53 + 1, -(10**20)])  # edges a wide range rarely hits
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=6)
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
        max_leaves=8,
    )


Draw = Callable[[st.SearchStrategy[Any]], Any]


def spell(value: Any, draw: Draw) -> str:
    """One of the JSON texts of ``value``: other number spellings, escapes, key order and
    whitespace, all parsing back to values the handler sees as equal (or, for a float
    spelling of a large integer, to a different value, which the key must then tell)."""
    space = str(draw(st.sampled_from(["", " ", "\n  "])))
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        scaled = f"{value}00e-2" if value else "0e-2"  # no leading zeros in JSON
        return str(
            draw(st.sampled_from([str(value), f"{value}.0", f"{value}e0", scaled, f"{value}E+0"]))
        )
    if isinstance(value, float):
        text = repr(value)
        more = [] if "e" in text else [f"{text}0", f"{text}e0"]  # 0.5 -> 0.50, 0.5e0
        return str(draw(st.sampled_from([text, f"{value:.17e}", *more])))
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=bool(draw(st.booleans())))
        return str(text.replace("/", "\\/")) if draw(st.booleans()) else str(text)
    if isinstance(value, list):
        return "[" + space + ("," + space).join(spell(v, draw) for v in value) + "]"
    items = draw(st.permutations(list(value.items())))
    return "{" + ",".join(f"{json.dumps(k)}:{space}{spell(v, draw)}" for k, v in items) + "}"


def same(a: Any, b: Any) -> bool:
    """Equality of JSON values as a handler sees them: numbers by value (125 == 125.0),
    booleans apart from numbers, strings by code point, objects whatever their order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def handler_sees(registry: ToolRegistry, name: str, text: str) -> tuple[dict[str, Any], str]:
    """What the handler of ``name`` receives for argument text ``text``, and its key."""
    args, error = parse_arguments(text)
    assert error is None, error
    call = ToolCall(name=name, args=args, provider="openai_chat", call_id="c", index=0)
    validated = registry.check(call)
    key = idempotency_key(
        tool=name,
        arguments=validated.kwargs,
        json_arguments=validated.arguments,
        request_id="req",
    )
    return validated.kwargs, key


def any_json_registry() -> ToolRegistry:
    registry = ToolRegistry()
    registry.add_schema_tool("put", {"type": "object"}, lambda **kwargs: None, effect="write")
    return registry


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(max_size=3), json_values(), max_size=4), st.data())
def test_spellings_that_reach_the_handler_equal_give_one_key(
    value: dict[str, Any], data: st.DataObject
) -> None:
    registry = any_json_registry()
    first = handler_sees(registry, "put", spell(value, data.draw))
    second = handler_sees(registry, "put", spell(value, data.draw))
    assert (first[1] == second[1]) == same(first[0], second[0])


def pay_registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.register(effect="write")
    def pay(to: str, cents: int, rate: float = 1.0) -> str:
        """Pay someone."""
        return "paid"

    return registry


@pytest.mark.parametrize(
    "text",
    [
        '{"to":"bob","cents":125.0}',
        '{"cents":1.25e2,"to":"bob"}',
        '{"to":"b\\u006fb","cents":12500e-2}',
    ],
)
def test_125_and_125_point_0_are_one_write(text: str) -> None:
    """The hole: both validate as an integer and reach the handler as 125, but gave two
    keys, so a re-issued write ran twice."""
    registry = pay_registry()
    assert handler_sees(registry, "pay", text) == handler_sees(
        registry, "pay", '{"to":"bob","cents":125}'
    )


def test_a_float_parameter_given_an_integer_is_the_same_write() -> None:
    registry = pay_registry()
    one = handler_sees(registry, "pay", '{"to":"bob","cents":1,"rate":2}')
    two = handler_sees(registry, "pay", '{"to":"bob","cents":1,"rate":2.0}')
    assert one == two


def test_unicode_is_not_normalised_two_spellings_are_two_requests() -> None:
    registry = any_json_registry()
    nfc = handler_sees(registry, "put", json.dumps({"file": "\u00e9"}))
    nfd = handler_sees(registry, "put", json.dumps({"file": "e\u0301"}))
    assert nfc[1] != nfd[1]


def test_booleans_are_not_numbers_in_the_key() -> None:
    assert key_of(arguments={"n": True}) != key_of(arguments={"n": 1})
    assert key_of(arguments={"n": 0}) == key_of(arguments={"n": -0.0})


any_character = st.integers(0, 0x10FFFF).map(chr)  # surrogates included


@settings(max_examples=300, deadline=None)
@given(
    st.text(any_character, max_size=8),
    st.text(any_character, max_size=8),
    st.dictionaries(st.text(any_character, max_size=4), st.text(any_character, max_size=6)),
)
def test_the_key_never_raises_on_any_string(
    tool: str, conversation: str, args: dict[str, str]
) -> None:
    key = idempotency_key(tool=tool, arguments=args, request_id=conversation)
    assert len(key) == 64
    assert key == idempotency_key(tool=tool, arguments=dict(args), request_id=conversation)


@pytest.mark.parametrize(
    "value",
    [
        {
            "d": datetime.datetime(
                2025, 1, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=1))
            )
        },
        {"big": 10**5000, "nan": math.nan, "inf": -math.inf},
        {"set": {3, 1, 2}, "tuple": (1, 2), "id": uuid.UUID(int=7)},
    ],
    ids=["aware-datetime", "non-finite", "containers"],
)
def test_decoded_values_have_a_canonical_form(value: dict[str, Any]) -> None:
    assert canonical_arguments(value).isascii()


def test_aware_datetimes_of_one_instant_are_one_key() -> None:
    utc = datetime.datetime(2025, 1, 1, 0, tzinfo=datetime.UTC)
    paris = utc.astimezone(datetime.timezone(datetime.timedelta(hours=1)))
    assert key_of(arguments={"at": utc}) == key_of(arguments={"at": paris})


def test_an_object_without_canonical_form_falls_back_to_the_json_arguments() -> None:
    odd = object()
    with pytest.raises(ValueError):
        canonical_arguments({"x": odd})
    assert key_of(arguments={"x": odd}, json_arguments={"x": 1}) == key_of(
        arguments={"x": object()}, json_arguments={"x": 1}
    )
    assert key_of(arguments={"x": odd}, json_arguments={"x": 1}) != key_of(arguments={"x": 1})
