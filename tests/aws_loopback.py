"""A loopback HTTP server that answers as Amazon Bedrock's runtime does, for the tests of
the Bedrock client (tests/runtime) and of the edge under the real boto3 (tests/core).

It records each request as it arrived (the raw path, the headers, the body) and answers
with a body given by the test: an event stream (recorded, or encoded by
``tests/core/test_eventstream_wire.py``), or an error with ``x-amzn-ErrorType``. A thread
of its own, so a sync client (boto3) and an async one (asyncio or trio) talk to it alike.
Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

EVENT_STREAM = "application/vnd.amazon.eventstream"


@dataclass(frozen=True)
class Seen:
    """One request as the server read it."""

    method: str
    path: str
    """The request target as sent (percent-encoding kept)."""
    headers: dict[str, str]
    """Header names in lower case."""
    body: bytes


@dataclass
class Answer:
    """What the server sends back."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": EVENT_STREAM})
    chunk: int = 0
    """Write the body in pieces of this many bytes (0: at once)."""


class Loopback:
    """The server's state: the answers to give, in order (the last one repeats), and the
    requests seen."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.answers: list[Answer] = [Answer()]
        self.seen: list[Seen] = []
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def answer(self, *answers: Answer) -> None:
        with self._lock:
            self.answers = list(answers)

    def _next(self, seen: Seen) -> Answer:
        with self._lock:
            self.seen.append(seen)
            return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def _handler(state: Loopback) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length)
            seen = Seen(
                method="POST",
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
            )
            answer = state._next(seen)
            self.send_response(answer.status)
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(answer.body)))
            self.end_headers()
            step = answer.chunk or len(answer.body) or 1
            for start in range(0, len(answer.body), step):
                self.wfile.write(answer.body[start : start + step])
                self.wfile.flush()

        def log_message(self, format: str, *args: object) -> None:
            pass  # the test reads state.seen; stderr stays quiet

    return Handler


@contextmanager
def loopback() -> Iterator[Loopback]:
    """A running server on a free port of 127.0.0.1, shut down on exit."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(Loopback(0)))
    state = Loopback(server.server_address[1])
    server.RequestHandlerClass = _handler(state)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
