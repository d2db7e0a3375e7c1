"""A loopback HTTP server that answers as Amazon Bedrock's runtime does, for the tests of
the Bedrock client (tests/runtime) and of the edge under the real boto3 (tests/core).

It records each request as it arrived (the raw path, the headers, the body) and answers
with a body given by the test: an event stream (recorded, or encoded by
``tests/core/test_eventstream_wire.py``), or an error with ``x-amzn-ErrorType``. A thread
of its own, so a sync client (boto3) and an async one (asyncio or trio) talk to it alike.
Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.core.test_eventstream_wire import STRING, bedrock_event, encode

EVENT_STREAM = "application/vnd.amazon.eventstream"


def converse_stream(*, exception: str | None = None) -> bytes:
    """A ConverseStream answer with one call (``get_weather {"city": "Paris"}``), or
    cut by an exception message after the call's first fragment."""
    events: list[tuple[str, dict[str, Any]]] = [
        ("messageStart", {"role": "assistant"}),
        (
            "contentBlockStart",
            {
                "contentBlockIndex": 0,
                "start": {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather"}},
            },
        ),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": ""}}}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"ci'}}}),
        (
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"toolUse": {"input": 'ty": "Paris"}'}}},
        ),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": "tool_use"}),
        ("metadata", {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}}),
    ]
    out = b""
    for name, payload in events[:4] if exception else events:
        out += bedrock_event(name, json.dumps({**payload, "p": "abcdef"}).encode())
    if exception:
        out += encode(
            [
                (":exception-type", STRING, exception),
                (":content-type", STRING, "application/json"),
                (":message-type", STRING, "exception"),
            ],
            json.dumps({"message": "Too many tokens, please wait before trying again."}).encode(),
        )
    return out


def converse_text_stream(text: str) -> bytes:
    """A ConverseStream answer of text alone (no contentBlockStart, as Bedrock sends it)."""
    events: list[tuple[str, dict[str, Any]]] = [
        ("messageStart", {"role": "assistant"}),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        ("messageStop", {"stopReason": "end_turn"}),
        ("metadata", {"usage": {"inputTokens": 20, "outputTokens": 4, "totalTokens": 24}}),
    ]
    return b"".join(bedrock_event(name, json.dumps(payload).encode()) for name, payload in events)


def invoke_stream() -> bytes:
    """An InvokeModelWithResponseStream answer: Anthropic's events, base64 in chunks."""
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "role": "assistant",
                                              "usage": {"input_tokens": 3, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": '{"city": "Paris"}'}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
         "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]  # fmt: skip
    return b"".join(
        bedrock_event(
            "chunk",
            json.dumps({"bytes": base64.b64encode(json.dumps(e).encode()).decode()}).encode(),
        )
        for e in events
    )


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
    cut: int | None = None
    """Close the connection after this many bytes of the body, its whole length declared
    (a connection dropped mid-stream)."""


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
            sent = answer.body if answer.cut is None else answer.body[: answer.cut]
            step = answer.chunk or len(sent) or 1
            for start in range(0, len(sent), step):
                self.wfile.write(sent[start : start + step])
                self.wfile.flush()
            if answer.cut is not None:
                self.close_connection = True

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
