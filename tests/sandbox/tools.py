"""Real tools that attack their sandbox: each is imported by module path in the child."""

from __future__ import annotations

import os
import signal
import socket
import time
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
