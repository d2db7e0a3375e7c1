"""Real tools that attack their sandbox: each is imported by module path in the child."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from pathlib import Path
from typing import Any


def echo(**arguments: Any) -> dict[str, Any]:
    return {"arguments": arguments, "cwd": os.getcwd()}


def read_file(path: str) -> str:
    with open(path, encoding="utf-8") as file:
        return file.read()


def write_file(path: str, text: str) -> int:
    with open(path, "w", encoding="utf-8") as file:
        return file.write(text)


def connect(port: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        return sock.recv(100).decode()


def allocate(size: int) -> int:
    block = bytearray(size)
    return len(block)


def spin() -> None:
    while True:
        pass


def sleep(seconds: float, marker: str | None = None) -> None:
    if marker is not None:
        with open(marker, "w", encoding="utf-8") as file:
            file.write(os.getcwd())
    time.sleep(seconds)


def fork_bomb() -> None:
    while True:
        os.fork()


def env(name: str) -> str | None:
    return os.environ.get(name)


def fail() -> None:
    raise ValueError("the tool's own error")


def not_json() -> object:
    return {1, 2}


def daemon_then_sleep(seconds: float) -> None:
    # A grandchild that leaves the session, as a daemon does, and outlives its parent.
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(600)
        os._exit(0)
    time.sleep(seconds)


def threads(count: int) -> int:
    import threading

    done = threading.Event()
    started = [threading.Thread(target=done.wait) for _ in range(count)]
    for thread in started:
        thread.start()
    done.set()
    return len(started)


def threads_after_go(count: int, folder: str) -> int:
    """Say ``ready`` (a file in ``folder``), wait for ``go``, then start ``count`` threads:
    the test starts other work of the same user in between."""
    Path(folder, "ready").write_text("1")
    deadline = time.monotonic() + 30
    while not Path(folder, "go").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return threads(count)


def link_and_read(target: str) -> str:
    os.symlink(target, "link")
    return read_file("link")


def write_then_list(name: str) -> dict[str, Any]:
    with open(name, "w", encoding="utf-8") as file:
        file.write("x")
    return {"cwd": os.getcwd(), "listing": sorted(os.listdir("."))}


def environment() -> dict[str, str]:
    return dict(os.environ)


def crash() -> None:
    os.kill(os.getpid(), signal.SIGSEGV)


async def async_echo(word: str) -> str:
    import asyncio

    await asyncio.sleep(0)
    return word


def trace_parent() -> str:
    import ctypes
    import errno

    libc = ctypes.CDLL(None, use_errno=True)
    ptrace_attach = 16
    if libc.ptrace(ptrace_attach, os.getppid(), None, None) == 0:
        return "attached"
    return "refused" if ctypes.get_errno() in (errno.EPERM, errno.EACCES) else "other"


_SEEN: list[str] = []
"""A module global a call writes: a later call must not see it."""


def remember(word: str) -> dict[str, Any]:
    """Report what earlier calls left (the global, the directory, its mode and attributes),
    then leave all of it behind for the next call."""
    seen: dict[str, Any] = {
        "global": list(_SEEN),
        "files": sorted(os.listdir(".")),
        "mode": os.stat(".").st_mode & 0o7777,
    }
    try:
        seen["xattrs"] = os.listxattr(".")
    except OSError:
        seen["xattrs"] = []
    _SEEN.append(word)
    with open("note.txt", "w", encoding="utf-8") as file:
        file.write(word)
    os.mkdir("hidden")
    with open("hidden/deep.txt", "w", encoding="utf-8") as file:
        file.write(word)
    os.chmod("hidden", 0)
    with contextlib.suppress(OSError):
        os.setxattr(".", "user.note", word.encode())
    os.chmod(".", 0o500)
    return seen


def leave_ipc() -> dict[str, Any]:
    """Leave a SysV shared memory segment, a file in /dev/shm and a POSIX message queue
    (each outlives the process in the namespace's IPC), and report what was already there."""
    import ctypes

    found = look_ipc()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmget(0, 4096, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
    with contextlib.suppress(OSError), open("/dev/shm/note", "w", encoding="utf-8") as file:
        file.write("left")
    libc.mq_open.restype = ctypes.c_int
    libc.mq_open(b"/note", os.O_CREAT | os.O_RDWR, 0o600, None)
    return found


def look_ipc() -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name in ("/dev/shm", "/dev/mqueue"):
        try:
            found[name] = sorted(os.listdir(name))
        except OSError:
            found[name] = None
    try:
        with open("/proc/sysvipc/shm", encoding="utf-8") as file:
            found["sysv"] = file.read().splitlines()[1:]
    except OSError:
        found["sysv"] = None
    return found


def leak_fd(path: str | None = None) -> list[int]:
    """Open fds this call has, then leave one open (the process's end closes it)."""
    opened = []
    for fd in range(256):
        try:
            os.fstat(fd)
        except OSError:
            continue
        opened.append(fd)
    os.dup(0)
    return opened


def leave_daemon() -> int:
    """Start a daemon that leaves the session, and return at once."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(600)
        os._exit(0)
    os.wait()
    return 0


def burn(seconds: float) -> float:
    """Use ``seconds`` of CPU time."""
    started = time.process_time()
    while time.process_time() - started < seconds:
        pass
    return time.process_time()


def kill_supervisors() -> str:
    """Kill the supervisor and its parent (the zygote, on a warm worker)."""
    import errno

    parent = os.getppid()
    try:
        with open(f"/proc/{parent}/stat", "rb") as stat:
            grandparent = int(stat.read().rsplit(b")", 1)[1].split()[1])
    except OSError:
        grandparent = 0
    outcome = "killed"
    for pid in (grandparent, parent):
        if pid > 1:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError as exc:
                outcome = "refused" if exc.errno == errno.EPERM else "other"
    time.sleep(2)
    return outcome


def misbehave(how: str) -> dict[str, Any]:
    """One tool that behaves, or crashes, hangs or forks without end, as asked."""
    if how == "crash":
        crash()
    elif how == "hang":
        time.sleep(60)
    elif how == "fork":
        fork_bomb()
    elif how == "kill":
        kill_supervisors()
    return {"how": how, "seen": list(_SEEN)}


def refuse(reason: str) -> None:
    # Imported here, not at the top: most tools of this module must not load the package.
    from sse_toolcalls.runtime.errors import ToolRetry

    class DateInFuture(ToolRetry):
        """A tool's own subclass: answered as ToolRetry, with its text."""

    raise DateInFuture(reason)


def answer_error(content: Any) -> None:
    from sse_toolcalls.runtime.errors import ToolErrorReply

    raise ToolErrorReply(content)


def answer_unencodable() -> None:
    from sse_toolcalls.runtime.errors import ToolErrorReply

    raise ToolErrorReply([{"type": "text", "text": "over"}, {"score": float("nan"), "at": b"\xff"}])


PIXEL = b"\x89PNG\r\n\x1a\n a pixel"
"""The bytes of the image :func:`chart` returns."""


def chart(title: str) -> list[object]:
    # What a local handler may return: text, an image and a document in one list.
    from sse_toolcalls.calls import Document, Image

    return [
        f"chart: {title}",
        Image(media_type="image/png", data=PIXEL),
        {"points": 3},
        Document(media_type="application/pdf", url="https://files.example/r.pdf", name="r.pdf"),
    ]


def picture() -> object:
    from sse_toolcalls.calls import Image

    return Image(media_type="image/webp", data=PIXEL, name="pixel")


def dated() -> object:
    # Values orjson-free JSON cannot hold, which ok_result renders (a dataclass, a date,
    # an enum, a set, bytes, NaN).
    import dataclasses
    import datetime
    import enum

    class Colour(enum.Enum):
        RED = "red"

    @dataclasses.dataclass
    class Reading:
        at: datetime.date
        colour: Colour
        tags: frozenset[str]

    return [
        Reading(at=datetime.date(2026, 12, 1), colour=Colour.RED, tags=frozenset({"a"})),
        b"\xff",
        float("nan"),
    ]


def unix_connect(path: str) -> str:
    """Reach a host service on a pathname (or, with a leading NUL, abstract) UNIX socket."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        sock.sendall(b"hello from the sandbox")
    return "connected"


def udp_send(port: int) -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.sendto(b"hello from the sandbox", ("127.0.0.1", port))
    return "sent"


def open_socket(family: str, kind: str) -> str:
    """Only open a socket (netlink, packet...): being able to is the escape."""
    with socket.socket(getattr(socket, family), getattr(socket, kind)):
        return "opened"


def socket_pair() -> str:
    """A connected pair within the process: reaches nothing outside it."""
    left, right = socket.socketpair()
    with left, right:
        left.sendall(b"ping")
        return right.recv(4).decode()
