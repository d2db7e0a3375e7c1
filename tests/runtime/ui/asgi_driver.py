"""A client for ASGI apps in the test's own event loop (asyncio or trio): it sends one
request, records the response event by event, and can leave after any number of body
messages, as a browser whose connection drops (issue 32's resumable streams)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio

App = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


class Call:
    """One request to ``app``; :attr:`events` are the body messages it received."""

    def __init__(
        self,
        app: App,
        method: str,
        path: str,
        *,
        body: bytes = b"",
        headers: Sequence[tuple[bytes, bytes]] = (),
        query: bytes = b"",
        drop_after: int | None = None,
        drop_when: Callable[[bytes], bool] | None = None,
    ) -> None:
        self.app = app
        self.scope: dict[str, Any] = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "path": path,
            "raw_path": path.encode("utf-8"),
            "root_path": "",
            "query_string": query,
            "headers": list(headers),
        }
        self.body = body
        self.drop_after = drop_after
        self.drop_when = drop_when
        """Leave right after the first event this says yes to."""
        self.status: int | None = None
        self.headers: dict[bytes, bytes] = {}
        self.events: list[bytes] = []
        self.left = anyio.Event()
        """Set when the client is done: it dropped, or the response ended."""
        self.returned = anyio.Event()
        """Set when the app's coroutine returned (the run's end, for a POST that runs)."""
        self._asked = False

    async def _receive(self) -> dict[str, Any]:
        if not self._asked:
            self._asked = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.left.wait()
        return {"type": "http.disconnect"}

    async def _send(self, message: dict[str, Any]) -> None:
        if self.left.is_set():
            return  # the client is gone: a server drops what is sent (uvicorn does)
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = dict(message.get("headers", []))
            if self.drop_after == 0:
                self.left.set()  # gone as soon as the response started
            return
        chunk = message.get("body", b"")
        if chunk:
            self.events.append(chunk)
        if (
            not message.get("more_body", False)
            or (self.drop_after is not None and len(self.events) >= self.drop_after)
            or (chunk and self.drop_when is not None and self.drop_when(chunk))
        ):
            self.left.set()

    async def run(self) -> None:
        try:
            await self.app(self.scope, self._receive, self._send)
        finally:
            self.left.set()
            self.returned.set()

    @property
    def data(self) -> bytes:
        return b"".join(self.events)


async def request(
    app: App,
    method: str,
    path: str,
    *,
    body: bytes = b"",
    headers: Sequence[tuple[bytes, bytes]] = (),
    query: bytes = b"",
) -> Call:
    """One whole request: its app coroutine run to its end."""
    call = Call(app, method, path, body=body, headers=headers, query=query)
    with anyio.fail_after(60):  # a hang guard
        await call.run()
    return call
