"""Real sandboxed tools attacking their sandbox, under bubblewrap and under Landlock, on
asyncio and trio, each in a cold child and on a warm worker: each attack is stopped with its
own violation and leaves no process."""

from __future__ import annotations

import signal
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from sse_toolcalls.runtime.sandbox import Backend, Sandbox, SandboxResult, ViolationKind, WarmPool
from sse_toolcalls.runtime.sandbox import run_in_sandbox as run_cold

from . import tools
from .conftest import sandbox_pids

pytestmark = pytest.mark.anyio

SECRET = "the secret outside"

_Run = Callable[..., Awaitable[SandboxResult]]
run_in_sandbox: _Run = run_cold
"""Each test's entry point: the engine's, cold or with a pool (``path`` below)."""


@pytest.fixture(autouse=True, params=["cold", "warm"])
async def path(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[str]:
    """Every attack once in a cold child and once on a warm worker, which must answer as
    the cold child does; the pool is closed (its zygotes killed) before the process check."""
    name: str = request.param
    if name == "cold":
        yield name
        return
    async with WarmPool(per_tool=4) as pool:

        async def warm(
            sandbox: Sandbox, handler: Any, arguments: Mapping[str, Any], **options: Any
        ) -> SandboxResult:
            result = await run_cold(sandbox, handler, arguments, pool=pool, **options)
            assert result.warm, "the call ran cold"
            return result

        monkeypatch.setitem(globals(), "run_in_sandbox", warm)
        yield name


@pytest.fixture
def area(tmp_path: Path) -> Path:
    """A tree the tests declare parts of; ``secret.txt`` is never declared."""
    # The sandbox keeps the tool's uid: the tree is open to it when the suite runs as an
    # unprivileged user too.
    (tmp_path / "secret.txt").write_text(SECRET)
    for name in ("data", "out"):
        (tmp_path / name).mkdir()
    (tmp_path / "data" / "in.txt").write_text("declared")
    return tmp_path


def _kind(result: SandboxResult) -> ViolationKind | None:
    return None if result.violation is None else result.violation.kind


async def test_a_declared_read_works_and_an_undeclared_one_is_refused(
    area: Path, backend: Backend
) -> None:
    box = Sandbox(read=[area / "data"])
    ok = await run_in_sandbox(
        box, tools.read_file, {"path": str(area / "data" / "in.txt")}, backend=backend
    )
    assert (ok.value, ok.violation, ok.backend) == ("declared", None, backend)
    secret = str(area / "secret.txt")
    refused = await run_in_sandbox(box, tools.read_file, {"path": secret}, backend=backend)
    assert _kind(refused) is ViolationKind.DENIED_PATH
    assert refused.violation is not None and refused.violation.path == secret
    assert refused.value is None


async def test_an_undeclared_write_is_refused_and_a_read_only_path_stays_so(
    area: Path, backend: Backend
) -> None:
    box = Sandbox(read=[area / "data"], write=[area / "out"])
    done = await run_in_sandbox(
        box, tools.write_file, {"path": str(area / "out" / "w.txt"), "text": "hi"}, backend=backend
    )
    assert done.value == 2 and (area / "out" / "w.txt").read_text() == "hi"
    for target in (area / "elsewhere.txt", area / "data" / "in.txt"):
        refused = await run_in_sandbox(
            box, tools.write_file, {"path": str(target), "text": "x"}, backend=backend
        )
        assert _kind(refused) is ViolationKind.DENIED_PATH, refused
        assert refused.violation is not None and refused.violation.path == str(target)
    assert not (area / "elsewhere.txt").exists()
    assert (area / "data" / "in.txt").read_text() == "declared"


async def test_dev_and_dev_shm_are_not_scratch_space(backend: Backend) -> None:
    # Under bwrap both were a writable tmpfs with no size limit: pages written there are
    # not the tool's address space, so its memory cap did not bound them.
    for target in ("/dev/shm/fill", "/dev/fill"):
        refused = await run_in_sandbox(
            Sandbox(), tools.write_file, {"path": target, "text": "x"}, backend=backend
        )
        assert _kind(refused) is ViolationKind.DENIED_PATH, (target, refused)
    sink = await run_in_sandbox(
        Sandbox(), tools.write_file, {"path": "/dev/null", "text": "x"}, backend=backend
    )
    assert sink.value == 1, sink


async def test_a_symlink_or_dotdot_out_of_a_declared_directory_is_refused(
    area: Path, backend: Backend
) -> None:
    (area / "out" / "link").symlink_to(area / "secret.txt")
    box = Sandbox(read=[area / "data"], write=[area / "out"])
    secret = str(area / "secret.txt")
    for path in (str(area / "out" / "link"), str(area / "data" / ".." / "secret.txt")):
        refused = await run_in_sandbox(box, tools.read_file, {"path": path}, backend=backend)
        assert _kind(refused) is ViolationKind.DENIED_PATH, (path, refused)
        assert refused.violation is not None and refused.violation.path == secret
    # A link the tool makes itself in its working directory leads nowhere either.
    made = await run_in_sandbox(Sandbox(), tools.link_and_read, {"target": secret}, backend=backend)
    assert _kind(made) is ViolationKind.DENIED_PATH, made


async def test_relative_paths_live_in_a_fresh_working_directory(
    backend: Backend, path: str
) -> None:
    box = Sandbox(write=["scratch"])
    first = await run_in_sandbox(box, tools.write_then_list, {"name": "scratch"}, backend=backend)
    second = await run_in_sandbox(box, tools.write_then_list, {"name": "scratch"}, backend=backend)
    assert first.value["listing"] == second.value["listing"] == ["scratch"]
    # A warm worker's directory is the same one, emptied (bound into its namespace once).
    assert (first.value["cwd"] != second.value["cwd"]) is (path == "cold")
    # Removed after the call, or (warm) emptied, and removed with its zygote.
    left = Path(first.value["cwd"])
    assert not left.exists() or not any(left.iterdir())  # noqa: ASYNC240 - in a test


async def test_the_network_is_refused_unless_declared(backend: Backend) -> None:
    async def greet(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            await stream.send(b"hello from 127.0.0.1")

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, greet)
        refused = await run_in_sandbox(Sandbox(), tools.connect, {"port": port}, backend=backend)
        assert _kind(refused) is ViolationKind.NETWORK_REFUSED, refused
        assert refused.violation is not None and refused.violation.address == f"127.0.0.1:{port}"
        allowed = await run_in_sandbox(
            Sandbox(network=True), tools.connect, {"port": port}, backend=backend
        )
        assert allowed.value == "hello from 127.0.0.1", allowed
        group.cancel_scope.cancel()


def _nothing_arrived(listener: socket.socket) -> bool:
    """Whether ``listener`` (non-blocking) got no connection or datagram: both are queued
    in the kernel by the time the sender's call returned, so looking once is enough."""
    listener.setblocking(False)
    try:
        if listener.type == socket.SOCK_STREAM:
            listener.accept()[0].close()
        else:
            listener.recv(100)
    except BlockingIOError:
        return True
    return False


@pytest.mark.parametrize("abstract", [False, True], ids=["pathname", "abstract"])
async def test_a_host_unix_socket_is_out_of_reach_without_network(
    tmp_path: Path, backend: Backend, abstract: bool
) -> None:
    # The socket's folder is declared readable: under bubblewrap it is then bound into
    # the sandbox, and a UNIX socket crosses network namespaces; under Landlock a
    # connect is no file access at all. Only the socket filter stands in the way.
    address = f"\0sse-toolcalls-{uuid.uuid4().hex}" if abstract else str(tmp_path / "host.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(address)
        listener.listen(4)
        box = Sandbox(read=[tmp_path])
        result = await run_in_sandbox(box, tools.unix_connect, {"path": address}, backend=backend)
        assert _nothing_arrived(listener), result
    assert _kind(result) is ViolationKind.NETWORK_REFUSED, result
    assert result.violation is not None and result.violation.address == "a socket of family 1"


async def test_udp_to_the_host_loopback_is_not_delivered_without_network(
    backend: Backend,
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as listener:
        listener.bind(("127.0.0.1", 0))
        port = listener.getsockname()[1]
        result = await run_in_sandbox(Sandbox(), tools.udp_send, {"port": port}, backend=backend)
        assert _nothing_arrived(listener), result
        assert _kind(result) is ViolationKind.NETWORK_REFUSED, result
        allowed = await run_in_sandbox(
            Sandbox(network=True), tools.udp_send, {"port": port}, backend=backend
        )
        assert allowed.value == "sent", allowed
        listener.setblocking(True)
        assert listener.recv(100) == b"hello from the sandbox"


@pytest.mark.parametrize(
    ("family", "kind"),
    [
        ("AF_NETLINK", "SOCK_RAW"),
        ("AF_PACKET", "SOCK_DGRAM"),
        ("AF_INET6", "SOCK_DGRAM"),
        ("AF_UNIX", "SOCK_DGRAM"),
    ],
)
async def test_no_socket_can_be_opened_without_network(
    backend: Backend, family: str, kind: str
) -> None:
    result = await run_in_sandbox(
        Sandbox(), tools.open_socket, {"family": family, "kind": kind}, backend=backend
    )
    assert _kind(result) is ViolationKind.NETWORK_REFUSED, result


async def test_a_socket_pair_inside_the_tool_still_works_without_network(
    backend: Backend,
) -> None:
    result = await run_in_sandbox(Sandbox(), tools.socket_pair, {}, backend=backend)
    assert result.value == "ping", result


async def test_twice_the_memory_cap_is_a_memory_limit(backend: Backend) -> None:
    box = Sandbox(memory="128 MiB")
    result = await run_in_sandbox(box, tools.allocate, {"size": 2 * 128 * 1024**2}, backend=backend)
    assert _kind(result) is ViolationKind.MEMORY_LIMIT, result
    small = await run_in_sandbox(box, tools.allocate, {"size": 16 * 1024**2}, backend=backend)
    assert small.value == 16 * 1024**2


async def test_spinning_past_the_cpu_limit_is_a_cpu_limit(backend: Backend) -> None:
    result = await run_in_sandbox(Sandbox(cpu=1, timeout=20), tools.spin, {}, backend=backend)
    assert _kind(result) is ViolationKind.CPU_LIMIT, result
    assert result.violation is not None and result.violation.signal == signal.SIGXCPU


async def test_sleeping_past_the_timeout_kills_the_whole_tree(backend: Backend) -> None:
    seen: set[int] = set()

    async def watch() -> None:
        # Every process of the call, whenever it appears: one look at a fixed moment
        # missed the daemon on a loaded machine (two suites at once), where the tool had
        # not forked it yet.
        while True:
            seen.update(sandbox_pids())
            await anyio.sleep(0.02)

    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        result = await run_in_sandbox(
            Sandbox(timeout=3), tools.daemon_then_sleep, {"seconds": 60}, backend=backend
        )
        group.cancel_scope.cancel()
    assert _kind(result) is ViolationKind.TIMEOUT, result
    # The handler, its child and the daemon that left the session, at least.
    assert len(seen) >= 3, seen
    assert not seen & sandbox_pids()


async def test_a_daemon_left_by_a_finished_call_is_killed(backend: Backend) -> None:
    result = await run_in_sandbox(
        Sandbox(), tools.daemon_then_sleep, {"seconds": 0.3}, backend=backend
    )
    assert result.violation is None, result
    # The autouse fixture checks by pid that the daemon is gone.


async def test_a_fork_bomb_is_a_process_limit(backend: Backend) -> None:
    result = await run_in_sandbox(
        Sandbox(processes=8, timeout=20), tools.fork_bomb, {}, backend=backend
    )
    assert _kind(result) is ViolationKind.PROCESS_LIMIT, result


async def test_threads_count_as_processes(backend: Backend) -> None:
    box = Sandbox(processes=4)
    assert (await run_in_sandbox(box, tools.threads, {"count": 2}, backend=backend)).value == 2
    over = await run_in_sandbox(box, tools.threads, {"count": 40}, backend=backend)
    assert _kind(over) is ViolationKind.PROCESS_LIMIT, over


async def test_other_work_of_the_same_user_does_not_count_as_the_tools(
    tmp_path: Path, backend: Backend
) -> None:
    """Other processes of the same uid that start while a call runs are not the tool's:
    under Landlock, RLIMIT_NPROC counted the whole uid, so 2 threads of a 4-process box
    failed when 30 other processes of the user appeared at the wrong moment (seen as a
    flaky PROCESS_LIMIT with two suites at once; planted here every time). Run as root the
    calls are in a pids cgroup; the unprivileged rerun (test_unprivileged.py) is the case."""
    box = Sandbox(processes=4, write=[tmp_path])
    others: list[Any] = []

    async def other_work() -> None:
        with anyio.fail_after(30):
            # The tool is another process: a file is all it can signal with.
            while not (tmp_path / "ready").exists():  # noqa: ASYNC110
                await anyio.sleep(0.01)
        for _ in range(30):
            others.append(await anyio.open_process(["sleep", "30"]))
        (tmp_path / "go").write_text("1")

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(other_work)
            result = await run_in_sandbox(
                box, tools.threads_after_go, {"count": 2, "folder": str(tmp_path)}, backend=backend
            )
    finally:
        for process in others:
            process.kill()
            await process.wait()
    assert (result.value, result.violation) == (2, None), result


async def test_only_declared_environment_variables_reach_the_tool(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SANDBOX_TEST_API_KEY", "sk-do-not-leak")
    monkeypatch.setenv("SANDBOX_TEST_REGION", "eu")
    box = Sandbox(env=["SANDBOX_TEST_REGION"])
    leaked = await run_in_sandbox(box, tools.env, {"name": "SANDBOX_TEST_API_KEY"}, backend=backend)
    assert (leaked.value, leaked.violation) == (None, None)
    given = await run_in_sandbox(box, tools.env, {"name": "SANDBOX_TEST_REGION"}, backend=backend)
    assert given.value == "eu"
    everything = await run_in_sandbox(box, tools.environment, {}, backend=backend)
    assert everything.value == {"SANDBOX_TEST_REGION": "eu"}


async def test_a_handler_error_and_a_result_that_is_not_json(backend: Backend) -> None:
    failed = await run_in_sandbox(Sandbox(), tools.fail, {}, backend=backend)
    assert _kind(failed) is ViolationKind.HANDLER_ERROR
    assert failed.violation is not None and failed.violation.exception == "ValueError"
    assert "the tool's own error" in failed.violation.message
    # A set is no JSON: rendered as it is unsandboxed (an array), not refused.
    odd = await run_in_sandbox(Sandbox(), tools.not_json, {}, backend=backend)
    assert (odd.violation, odd.value) == (None, [1, 2])


async def test_a_crash_of_the_child_is_a_crash(backend: Backend) -> None:
    result = await run_in_sandbox(Sandbox(), tools.crash, {}, backend=backend)
    assert _kind(result) is ViolationKind.CRASH, result
    assert result.violation is not None and result.violation.signal == signal.SIGSEGV


async def test_cancelling_the_caller_kills_the_call(backend: Backend) -> None:
    with anyio.move_on_after(1):
        await run_in_sandbox(Sandbox(), tools.sleep, {"seconds": 60}, backend=backend)
    # The autouse fixture checks by pid that nothing is left.


async def test_an_async_handler_runs_too(backend: Backend) -> None:
    result = await run_in_sandbox(Sandbox(), tools.async_echo, {"word": "hi"}, backend=backend)
    assert result.value == "hi"


async def test_the_worker_cannot_trace_its_supervisor(backend: Backend) -> None:
    # The supervisor holds no rlimits: a worker that could ptrace it could shed its own.
    result = await run_in_sandbox(Sandbox(), tools.trace_parent, {}, backend=backend)
    assert result.value == "refused", result
