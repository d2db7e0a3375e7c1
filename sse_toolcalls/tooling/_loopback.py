"""An ASGI application served by uvicorn on a loopback port, in a background thread.

The one owner of that job for the simulator (:mod:`.simulator.server`) and the recording
proxy (:mod:`.corpus.record`). A thread, not a task, so the same object works from sync
code and from async code on asyncio or trio: the server has its own asyncio loop
whatever the caller runs. uvicorn is imported only when a server starts.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any, Literal

from ..errors import UsageError

__all__ = ["STARTUP_TIMEOUT_S", "LoopbackServer"]

STARTUP_TIMEOUT_S = 10.0
"""How long to wait for the server to listen, in seconds: it takes ~50 ms on the project
machine; ten seconds absorbs a loaded CI runner."""

_JOIN_MARGIN_S = 5.0
"""Seconds past the shutdown grace that stopping waits for the server's thread."""


class LoopbackServer:
    """``app`` on ``host:port`` (``0``: a free port) once :meth:`start` returned."""

    def __init__(
        self,
        app: Any,
        *,
        what: str,
        host: str = "127.0.0.1",
        port: int = 0,
        lifespan: Literal["on", "off"] = "off",
        grace: int = 1,
    ) -> None:
        self.app = app
        self.what = what
        """What is served, for errors and the thread's name (``"the simulator"``)."""
        self.host = host
        self._port = port
        self._lifespan = lifespan
        self._grace = grace  # whole seconds, as uvicorn takes it
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None

    @property
    def running(self) -> bool:
        """Whether it is started and not yet stopped."""
        return self._thread is not None

    @property
    def port(self) -> int | None:
        """The port it listens on, or ``None`` when it is not running."""
        if self._socket is None:
            return None
        port: int = self._socket.getsockname()[1]
        return port

    def start(self) -> None:
        """Bind the port and start serving; returns once the server listens.

        Raises:
            UsageError: already running, uvicorn is missing, the port cannot be bound,
                or the server did not listen within :data:`STARTUP_TIMEOUT_S`.
        """
        if self._thread is not None:
            raise UsageError(f"{self.what} is already running")
        try:
            import uvicorn
        except ImportError as exc:
            raise UsageError(f"{self.what} needs uvicorn: pip install uvicorn") from exc
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self._port))
        except OSError as exc:
            sock.close()
            raise UsageError(f"cannot bind {self.host}:{self._port}: {exc}") from exc
        config = uvicorn.Config(
            self.app,
            lifespan=self._lifespan,
            log_level="warning",
            access_log=False,
            http="h11",
            ws="none",
            loop="asyncio",
            timeout_graceful_shutdown=self._grace,
        )
        server = uvicorn.Server(config)
        ended: list[BaseException] = []
        thread = threading.Thread(
            target=_serve,
            args=(server, sock, ended),
            name=f"sse-toolcalls: {self.what}",
            daemon=True,
        )
        self._socket, self._server, self._thread = sock, server, thread
        thread.start()
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                why = f" (uvicorn ended with {ended[0]!r})" if ended else ""
                raise UsageError(f"{self.what} did not start{why}")
            time.sleep(0.005)

    def stop(self) -> None:
        """Stop serving and release the port (open streams get the grace); idempotent."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(self._grace + _JOIN_MARGIN_S)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = None


def _serve(server: Any, sock: socket.socket, ended: list[BaseException]) -> None:
    # uvicorn calls sys.exit when the application's startup fails: in a thread that is an
    # unhandled exception nobody sees; kept here, start() reports it as ours.
    try:
        server.run(sockets=[sock])
    except BaseException as exc:
        ended.append(exc)
