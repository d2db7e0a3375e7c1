"""The resumable app's promises with a scripted run (issue 32, item 4): a client that
drops after any k events and reconnects with the last id it saw gets the whole run
exactly once, in order; a drop does not stop the run; a second POST attaches; the
bounds; hostile ``Last-Event-ID`` values get typed answers, never a 500."""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections import Counter
from collections.abc import AsyncIterator, MutableMapping
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sse_toolcalls import UsageError
from sse_toolcalls.runtime.ui import resumable
from sse_toolcalls.runtime.ui.resumable import KeyedResponse, resumable_app
from sse_toolcalls.runtime.ui.runlog import MemoryRunLog, RunLimits
from sse_toolcalls.runtime.ui.runlog_sqlite import SQLiteRunLog
from sse_toolcalls.runtime.ui.sse_out import SSE_HEADERS, sse_event

from .asgi_driver import App, Call, request

pytestmark = pytest.mark.anyio

EVENTS = 12


class Script:
    """A KeyedResponder whose run writes ``n`` events; it counts the runs it started
    and finished, and can hold the run at a gate (a run slower than its reader)."""

    def __init__(self) -> None:
        self.started: Counter[str] = Counter()
        self.finished: Counter[str] = Counter()
        self.gate: anyio.Event | None = None

    async def __call__(self, body: bytes) -> KeyedResponse:
        asked = json.loads(body)
        key = hashlib.sha256(f"{asked['chat']}\0{asked['id']}".encode()).hexdigest()
        return KeyedResponse(
            status=200,
            headers=SSE_HEADERS,
            chunks=self._run(key, asked["id"], asked.get("n", EVENTS)),
            run_key=key,
            chat_id=asked["chat"],
        )

    async def _run(self, key: str, message: str, n: int) -> AsyncIterator[bytes]:
        self.started[key] += 1
        for i in range(1, n + 1):
            if i == 3 and self.gate is not None:
                await self.gate.wait()
            await anyio.lowlevel.checkpoint()
            yield sse_event(
                json.dumps({"i": i, "text": f"event {i} \u00e9\n"}), id=f"{message}:{i}"
            )
        self.finished[key] += 1


def post_body(chat: str, message: str, n: int = EVENTS) -> bytes:
    return json.dumps({"chat": chat, "id": message, "n": n}).encode()


def last_id(events: list[bytes]) -> bytes:
    [line] = [x for x in events[-1].split(b"\n") if x.startswith(b"id: ")]
    return line[4:]


async def whole_run(n: int = EVENTS) -> list[bytes]:
    """The uninterrupted stream of the same run, from a fresh app."""
    app = resumable_app(Script())
    return (await request(app, "POST", "/chat", body=post_body("c", "m", n))).events


async def drop_and_resume(app: App, k: int, *, query: bool, chat: str = "c") -> list[bytes]:
    """POST, leave after k events, GET the rest with the last id seen."""
    async with anyio.create_task_group() as group:
        first = Call(app, "POST", "/chat", body=post_body(chat, "m"), drop_after=k)
        group.start_soon(first.run)
        with anyio.fail_after(30):
            await first.left.wait()
        assert first.status == 200
        headers: list[tuple[bytes, bytes]] = []
        q = b""
        if first.events:
            if query:
                q = b"lastEventId=" + last_id(first.events).replace(b":", b"%3A")
            else:
                headers = [(b"last-event-id", last_id(first.events))]
        second = await request(app, "GET", f"/chat/{chat}/stream", headers=headers, query=q)
    assert second.status == (204 if k == EVENTS else 200)
    return first.events + second.events


@pytest.mark.parametrize("query", [False, True], ids=["header", "query"])
async def test_a_drop_after_any_k_events_then_a_resume_gives_the_run_exactly_once(
    query: bool,
) -> None:
    expected = await whole_run()
    assert len(expected) == EVENTS
    for k in range(EVENTS + 1):
        script = Script()
        app = resumable_app(script)
        assert await drop_and_resume(app, k, query=query) == expected, k
        assert list(script.started.values()) == [1] and list(script.finished.values()) == [1]


async def test_a_drop_mid_run_neither_stops_the_run_nor_loses_its_events(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No polling: a follower in the draining process must wake on the log's bell alone.
    monkeypatch.setattr(resumable, "POLL_INTERVAL_S", 3600.0)
    script = Script()
    script.gate = anyio.Event()
    runs = MemoryRunLog()
    app = resumable_app(script, runs=runs)
    async with anyio.create_task_group() as group:
        first = Call(app, "POST", "/chat", body=post_body("c", "m"), drop_after=2)
        group.start_soon(first.run)
        with anyio.fail_after(30):
            await first.left.wait()
        assert len(first.events) == 2 and not first.returned.is_set()
        assert sum(script.finished.values()) == 0  # held at the gate: the run is live
        # A follower that joins while the run is held: it gets what is kept, then waits.
        follower = Call(app, "GET", "/chat/c/stream", headers=[(b"last-event-id", b"m:1")])
        group.start_soon(follower.run)
        script.gate.set()
        with anyio.fail_after(30):
            await first.returned.wait()  # the POST's task ends with the run, not the client
            await follower.returned.wait()
    assert sum(script.finished.values()) == 1
    assert first.events + follower.events[1:] == await whole_run()
    latest = await runs.latest("c")
    assert latest is not None and latest.ended and latest.count == EVENTS


async def test_the_same_request_posted_again_attaches_to_its_run() -> None:
    script = Script()
    script.gate = anyio.Event()
    app = resumable_app(script)
    async with anyio.create_task_group() as group:
        calls = [Call(app, "POST", "/chat", body=post_body("c", "m")) for _ in range(3)]
        for call in calls:
            group.start_soon(call.run)
        await anyio.wait_all_tasks_blocked()
        script.gate.set()
    again = await request(app, "POST", "/chat", body=post_body("c", "m"))
    expected = await whole_run()
    assert [c.events for c in calls] == [expected] * 3 and again.events == expected
    assert list(script.started.values()) == [1]
    # Another message of the chat is another run; the chat's GET now gives that one.
    other = await request(app, "POST", "/chat", body=post_body("c", "m2", 2))
    assert len(other.events) == 2 and sum(script.started.values()) == 2
    assert (await request(app, "GET", "/chat/c/stream")).events == other.events


async def test_nothing_kept_is_a_204_and_other_methods_a_405() -> None:
    app = resumable_app(Script())
    assert (await request(app, "GET", "/chat/nobody/stream")).status == 204
    got = await request(app, "PUT", "/chat/c/stream")
    assert (got.status, got.headers[b"allow"]) == (405, b"GET")
    got = await request(app, "GET", "/chat")
    assert (got.status, got.headers[b"allow"]) == (405, b"POST")


async def test_a_run_past_its_events_bound_is_cut_and_still_runs_to_its_end() -> None:
    script = Script()
    app = resumable_app(script, runs=MemoryRunLog(RunLimits(max_run_events=5)))
    first = await request(app, "POST", "/chat", body=post_body("c", "m"))
    assert first.events == (await whole_run())[:5]
    assert list(script.finished.values()) == [1]
    assert (await request(app, "GET", "/chat/c/stream")).events == first.events
    cut = [(b"last-event-id", b"m:5")]
    assert (await request(app, "GET", "/chat/c/stream", headers=cut)).status == 204


async def test_a_run_past_its_bytes_bound_is_cut_at_the_last_event_that_fits() -> None:
    full = await whole_run()
    room = sum(len(e) for e in full[:4]) + len(full[4]) - 1
    script = Script()
    app = resumable_app(script, runs=MemoryRunLog(RunLimits(max_run_bytes=room)))
    assert (await request(app, "POST", "/chat", body=post_body("c", "m"))).events == full[:4]
    assert list(script.finished.values()) == [1]


async def test_past_the_runs_bound_the_oldest_run_is_dropped() -> None:
    app = resumable_app(Script(), runs=MemoryRunLog(RunLimits(max_runs=2)))
    for chat in ("a", "b", "c"):
        await request(app, "POST", "/chat", body=post_body(chat, "m", 2))
    statuses = [(await request(app, "GET", f"/x/{c}/stream")).status for c in "abc"]
    assert statuses == [204, 200, 200]


async def test_a_run_is_kept_its_time_after_its_end_then_dropped() -> None:
    now = [0.0]
    runs = MemoryRunLog(RunLimits(keep_seconds=10), clock=lambda: now[0])
    app = resumable_app(Script(), runs=runs)
    await request(app, "POST", "/chat", body=post_body("c", "m", 2))
    now[0] = 10.0
    assert (await request(app, "GET", "/chat/c/stream")).status == 200
    now[0] = 10.5
    assert (await request(app, "GET", "/chat/c/stream")).status == 204


HOSTILE = [
    (b"m:" + b"9" * 19, 400),  # past 64 bits
    (b"m:" + b"9" * 18, 204),  # past the end
    (b"m:13", 204),
    (b"m:12", 204),  # the last one: nothing follows an ended run
    (b"m:-1", 400),
    (b"m:+1", 400),
    (b"m:1.0", 400),
    (b"m:\xd9\xa1", 400),  # ARABIC-INDIC DIGIT ONE
    (b"other:3", 204),  # another run
    (b"\xc3\xa9:3", 204),  # a non-ASCII key: another run
    (b"m\x00:3", 400),
    (b"m:3\x00", 400),
    (b"\xff\xfe:3", 400),  # not UTF-8
    (b":3", 400),
    (b"m", 400),
    (b"m:", 400),
    (b"x" * 2000 + b":1", 400),
    (b"m:0", 200),
    (b"m:11", 200),
    (b"", 200),  # no id: from the first event
]


@pytest.mark.parametrize(("value", "status"), HOSTILE, ids=[repr(v[:24]) for v, _ in HOSTILE])
async def test_hostile_last_event_ids_get_typed_answers(value: bytes, status: int) -> None:
    app = resumable_app(Script())
    full = (await request(app, "POST", "/chat", body=post_body("c", "m"))).events
    by_header = await request(app, "GET", "/chat/c/stream", headers=[(b"last-event-id", value)])
    assert by_header.status == status
    if status == 200:
        after = int(value.partition(b":")[2] or 0)
        assert by_header.events == full[after:]
    # The same through the query, percent-encoded byte by byte.
    encoded = b"".join(b"%%%02X" % c for c in value)
    by_query = await request(app, "GET", "/chat/c/stream", query=b"lastEventId=" + encoded)
    assert by_query.status == status


@pytest.mark.parametrize("query", [b"lastEventId=%ZZ", b"lastEventId=%FF%FE%3A1", b"a=%00&b"])
async def test_a_hostile_query_is_a_400_or_ignored(query: bytes) -> None:
    app = resumable_app(Script())
    await request(app, "POST", "/chat", body=post_body("c", "m"))
    got = await request(app, "GET", "/chat/c/stream", query=query)
    assert got.status == (200 if query.startswith(b"a=") else 400)


async def test_a_chat_id_is_read_percent_decoded_from_its_path_segment() -> None:
    app = resumable_app(Script())
    await request(app, "POST", "/chat", body=post_body("a/b \u00e9", "m", 2))
    got = await request(app, "GET", "/api/chat/a%2Fb%20%C3%A9/stream")
    assert (got.status, len(got.events)) == (200, 2)
    assert (await request(app, "GET", "/api/chat/%FF/stream")).status == 405


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_the_apps_and_the_logs_numbers_are_checked(bad: Any) -> None:
    with pytest.raises(UsageError):
        resumable_app(Script(), max_body_bytes=bad)
    with pytest.raises(UsageError):
        RunLimits(max_runs=bad)


async def test_a_send_that_fails_ends_the_tail_not_the_run() -> None:
    script = Script()
    gate = script.gate = anyio.Event()
    app = resumable_app(script)
    sent: list[MutableMapping[str, Any]] = []
    asked = False

    async def receive() -> dict[str, Any]:
        nonlocal asked
        if not asked:
            asked = True
            return {"type": "http.request", "body": post_body("c", "m"), "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError  # pragma: no cover

    async def send(message: MutableMapping[str, Any]) -> None:
        if len(sent) == 2:
            gate.set()
            raise RuntimeError("the server's own word for a client that left")
        sent.append(message)

    scope = Call(app, "POST", "/chat").scope
    with anyio.fail_after(30):
        await app(scope, receive, send)
    assert list(script.finished.values()) == [1]
    assert len((await request(app, "GET", "/chat/c/stream")).events) == EVENTS


async def _chain(app: App, n: int, drops: list[int], use_query: list[bool]) -> list[bytes]:
    """POST, then GETs, each dropped after its count of events, then a GET to the end:
    what the client saw, in order."""
    seen: list[bytes] = []
    async with anyio.create_task_group() as group:
        call = Call(app, "POST", "/chat", body=post_body("c", "m", n), drop_after=drops[0])
        group.start_soon(call.run)
        with anyio.fail_after(30):
            await call.left.wait()
        seen += call.events
        for step, drop in enumerate([*drops[1:], None]):
            headers: list[tuple[bytes, bytes]] = []
            query = b""
            if seen:
                if use_query[step % len(use_query)]:
                    query = b"lastEventId=" + last_id(seen).replace(b":", b"%3A")
                else:
                    headers = [(b"last-event-id", last_id(seen))]
            call = Call(app, "GET", "/c/c/stream", headers=headers, query=query, drop_after=drop)
            group.start_soon(call.run)
            with anyio.fail_after(30):
                await call.left.wait()
            assert call.status in {200, 204}
            seen += call.events
    return seen


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, 30),
    drops=st.lists(st.integers(0, 8), min_size=1, max_size=6),
    use_query=st.lists(st.booleans(), min_size=1, max_size=3),
    store=st.sampled_from(["memory", "sqlite"]),
    backend=st.sampled_from(["asyncio", "trio"]),
)
def test_any_chain_of_drops_and_resumes_sees_the_run_once_in_order(
    n: int, drops: list[int], use_query: list[bool], store: str, backend: str
) -> None:
    with tempfile.TemporaryDirectory() as folder:

        async def main() -> tuple[list[bytes], list[bytes], Counter[str]]:
            script = Script()
            runs = MemoryRunLog() if store == "memory" else SQLiteRunLog(Path(folder) / "r.db")
            seen = await _chain(resumable_app(script, runs=runs), n, drops, use_query)
            expected = (
                await request(resumable_app(Script()), "POST", "/c", body=post_body("c", "m", n))
            ).events
            if isinstance(runs, SQLiteRunLog):
                runs.close()
            return seen, expected, script.started

        seen, expected, started = anyio.run(main, backend=backend)
    assert seen == expected
    assert list(started.values()) == [1]


async def test_mounted_in_a_starlette_app_its_routes_answer_under_the_mount() -> None:
    # FastAPI's app.mount is Starlette's Mount.
    from starlette.applications import Starlette
    from starlette.routing import Mount

    script = Script()
    site = Starlette(routes=[Mount("/api/chat", app=resumable_app(script))])
    posted = await request(site, "POST", "/api/chat/", body=post_body("c", "m"))
    assert posted.status == 200 and posted.events == await whole_run()
    resumed = await request(
        site, "GET", "/api/chat/c/stream", headers=[(b"last-event-id", b"m:10")]
    )
    assert resumed.events == posted.events[10:]
    assert (await request(site, "GET", "/api/chat/other/stream")).status == 204
    assert list(script.started.values()) == [1]
