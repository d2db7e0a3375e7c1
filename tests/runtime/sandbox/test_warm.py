"""The warm worker's reset, attacked: nothing of one call reaches the next (module globals,
files and the directory's own mode and attributes, IPC objects, fds, processes, memory);
limits apply per call; a worker that crashed, hung or killed its supervisors is replaced;
a tool that cannot be kept warm runs cold. Under both backends, on asyncio and trio (the
attacks of test_attacks.py also run on a warm worker there)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import anyio
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream

from sse_toolcalls import UsageError
from sse_toolcalls.runtime.sandbox import (
    Backend,
    Sandbox,
    SandboxResult,
    ViolationKind,
    WarmPool,
    _processes,
    run_in_sandbox,
    warm,
)

from . import threaded_tool, tools

pytestmark = pytest.mark.anyio


def _zygotes(pool: WarmPool) -> list[int]:
    """The pids of the pool's zygote processes (bwrap's, or the interpreter's)."""
    return sorted(zygote.process.pid for tool in pool._tools.values() for zygote in tool.idle)


def _tree_size(pool: WarmPool) -> int:
    return sum(len(_processes.descendants(pid)) for pid in _zygotes(pool))


def _rss_kib(pool: WarmPool) -> int:
    """The resident memory of the pool's zygote interpreters, KiB."""
    total = 0
    for root in _zygotes(pool):
        for pid in _processes.descendants(root):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as file:
                    argv = file.read().split(b"\0")
                if b"--zygote" not in argv or argv[0].endswith(b"bwrap"):
                    continue  # bwrap's own two processes
                with open(f"/proc/{pid}/status", encoding="ascii") as file:
                    for line in file:
                        if line.startswith("VmRSS:"):
                            total += int(line.split()[1])
            except OSError:
                continue
    return total


async def _warm(
    pool: WarmPool, box: Sandbox, handler: object, backend: Backend, **arguments: object
) -> SandboxResult:
    result = await run_in_sandbox(box, handler, arguments, backend=backend, pool=pool)  # type: ignore[arg-type]
    assert result.warm
    return result


async def test_a_global_a_file_and_the_directory_do_not_reach_the_next_call(
    backend: Backend,
) -> None:
    async with WarmPool() as pool:
        first = await _warm(pool, Sandbox(), tools.remember, backend, word="one")
        zygote = _zygotes(pool)
        second = await _warm(pool, Sandbox(), tools.remember, backend, word="two")
        assert zygote and _zygotes(pool) == zygote  # the same zygote served both
    clean = {"global": [], "files": [], "mode": 0o700, "xattrs": []}
    assert first.value == second.value == clean


async def test_ipc_objects_left_by_a_call_end_its_zygote(backend: Backend) -> None:
    async with WarmPool() as pool:
        first = await _warm(pool, Sandbox(), tools.leave_ipc, backend)
        second = await _warm(pool, Sandbox(), tools.leave_ipc, backend)
    assert first.violation is None and second.violation is None
    if backend == "bwrap":
        # The zygote's own IPC namespace: the second call came to a fresh one.
        assert first.value == second.value == {"/dev/shm": [], "/dev/mqueue": [], "sysv": []}
    else:
        # Landlock: the machine's IPC, shared by cold calls alike; /dev/shm is not writable.
        assert second.value["/dev/shm"] is None or "note" not in second.value["/dev/shm"]


async def test_every_call_starts_with_the_same_fds_as_a_cold_one(backend: Backend) -> None:
    cold = await run_in_sandbox(Sandbox(), tools.leak_fd, {}, backend=backend)
    async with WarmPool() as pool:
        calls = [await _warm(pool, Sandbox(), tools.leak_fd, backend) for _ in range(3)]
    assert [call.value for call in calls] == [cold.value] * 3


async def test_a_daemon_left_by_a_call_is_killed_before_the_next(backend: Backend) -> None:
    async with WarmPool() as pool:
        await _warm(pool, Sandbox(), tools.leave_daemon, backend)
        idle = _tree_size(pool)
        await _warm(pool, Sandbox(), tools.leave_daemon, backend)
        # Only the zygote's own processes (bwrap's two and the interpreter): no daemon.
        assert _tree_size(pool) == idle == (3 if backend == "bwrap" else 1)


async def test_the_zygote_does_not_grow(backend: Backend) -> None:
    big = "x" * 200_000
    async with WarmPool() as pool:
        for _ in range(3):
            await _warm(pool, Sandbox(), tools.echo, backend, text=big)
        before = _rss_kib(pool)
        for _ in range(30):
            await _warm(pool, Sandbox(), tools.echo, backend, text=big)
        after = _rss_kib(pool)
    # The arguments never pass through the zygote: 30 calls of 200 KB each leave it as it was.
    assert before > 0 and after - before < 1024


async def test_limits_apply_per_call(backend: Backend) -> None:
    box = Sandbox(cpu=1, memory="128 MiB", timeout=20)
    async with WarmPool() as pool:
        # 0.6 s of CPU each: two calls on one zygote would pass one second together.
        spent = [await _warm(pool, box, tools.burn, backend, seconds=0.6) for _ in range(2)]
        assert all(call.violation is None for call in spent)
        over = await _warm(pool, box, tools.allocate, backend, size=256 * 1024**2)
        assert over.violation is not None and over.violation.kind is ViolationKind.MEMORY_LIMIT
        small = await _warm(pool, box, tools.allocate, backend, size=1024)
        assert small.value == 1024


@pytest.mark.parametrize(
    ("how", "kind"),
    [
        ("crash", ViolationKind.CRASH),
        ("hang", ViolationKind.TIMEOUT),
        ("fork", ViolationKind.PROCESS_LIMIT),
        ("kill", ViolationKind.CRASH),
    ],
)
async def test_after_a_crash_a_timeout_a_fork_bomb_or_a_kill_a_fresh_zygote_serves(
    backend: Backend, how: str, kind: ViolationKind
) -> None:
    box = Sandbox(timeout=1.5, processes=8)
    async with WarmPool() as pool:
        await _warm(pool, box, tools.misbehave, backend, how="well")
        first = _zygotes(pool)
        bad = await _warm(pool, box, tools.misbehave, backend, how=how)
        if how == "kill" and backend == "landlock":
            # Landlock scopes signals to the worker's own domain: nothing was killed, the
            # call ran on to its timeout.
            kind = ViolationKind.TIMEOUT
        assert bad.violation is not None and bad.violation.kind is kind
        assert _zygotes(pool) == []  # the zygote that saw it is gone
        again = await _warm(pool, box, tools.misbehave, backend, how="well")
        assert again.value == {"how": "well", "seen": []}
        assert _zygotes(pool) and _zygotes(pool) != first


async def test_a_declared_directory_replaced_after_the_zygote_started_is_seen(
    backend: Backend, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "in.txt").write_text("first")
    box = Sandbox(read=[data])
    async with WarmPool() as pool:
        first = await _warm(pool, box, tools.read_file, backend, path=str(data / "in.txt"))
        # A bind (and a Landlock rule) holds the directory it was given: a new one, put in
        # its place by rename, needs a new zygote.
        fresh = tmp_path / "fresh"
        fresh.mkdir()
        (fresh / "in.txt").write_text("second")
        shutil.rmtree(data)
        fresh.rename(data)
        second = await _warm(pool, box, tools.read_file, backend, path=str(data / "in.txt"))
    assert (first.value, second.value) == ("first", "second")


async def test_calls_beyond_the_pool_run_cold_at_once(backend: Backend) -> None:
    results: list[SandboxResult] = []
    async with WarmPool(per_tool=1) as pool:

        async def one() -> None:
            box = Sandbox()
            result = await run_in_sandbox(
                box, tools.sleep, {"seconds": 0.5}, backend=backend, pool=pool
            )
            results.append(result)

        async with anyio.create_task_group() as group:
            for _ in range(2):
                group.start_soon(one)
    assert sorted(result.warm for result in results) == [False, True]
    assert all(result.violation is None for result in results)


async def test_a_module_that_starts_a_thread_at_import_runs_cold(backend: Backend) -> None:
    async with WarmPool() as pool:
        result = await run_in_sandbox(
            Sandbox(), threaded_tool.echo, {"word": "hi"}, backend=backend, pool=pool
        )
        assert (result.value, result.warm) == ("hi", False)
        assert pool.refusals() == {
            "tests.runtime.sandbox.threaded_tool:echo": "the handler's module starts a thread at import"
        }


async def test_a_closed_pool_runs_cold_and_a_bad_size_is_refused(backend: Backend) -> None:
    pool = WarmPool()
    async with pool:
        await _warm(pool, Sandbox(), tools.echo, backend)
    assert _zygotes(pool) == []
    result = await run_in_sandbox(Sandbox(), tools.echo, {}, backend=backend, pool=pool)
    assert result.violation is None and not result.warm
    with pytest.raises(UsageError):
        WarmPool(per_tool=0)


def test_a_working_directory_a_tool_locked_is_still_emptied(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "a" / "b").mkdir(parents=True)
    (work / "a" / "b" / "f").write_text("x")
    (work / "link").symlink_to(tmp_path)  # never followed
    os.chmod(work / "a" / "b", 0)
    os.chmod(work / "a", 0)
    os.chmod(work, 0o500)
    assert warm._reset(str(work))
    assert list(work.iterdir()) == [] and (work.stat().st_mode & 0o777) == 0o700
    assert tmp_path.exists()


@pytest.mark.parametrize(
    "sent",
    [b"", b"\x00\x00", b"\x00\x00\x00\x09short", (10**9).to_bytes(4, "big") + b"x"],
    ids=["nothing", "half a header", "short body", "oversized"],
)
async def test_a_zygote_that_breaks_the_protocol_is_gone(sent: bytes) -> None:
    send, receive = anyio.create_memory_object_stream[bytes](4)
    reader = BufferedByteReceiveStream(receive)
    zygote = warm._Zygote(process=None, reader=reader, cwd="", group=None)  # type: ignore[arg-type]
    async with send, receive:
        if sent:
            await send.send(sent)
        await send.aclose()
        with pytest.raises(warm._Gone):
            await zygote.frame(1024)
