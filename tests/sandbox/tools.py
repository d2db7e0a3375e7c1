"""Real tools that attack their sandbox: each is imported by module path in the child."""

from __future__ import annotations

import os
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
