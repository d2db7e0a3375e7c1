"""A UI stream served over HTTP: a plain ASGI app, no web framework needed.

``ui_app(respond)`` is an ASGI application that reads a POSTed body (bounded), hands it to
``respond`` (a protocol's function of :mod:`sse_toolcalls.runtime.ui`, bound to an
``Agent``) and streams back the status, headers and bytes it answers. Any ASGI server
runs it (uvicorn, hypercorn), and a framework mounts it as it is, FastAPI included::

    from fastapi import FastAPI
    app = FastAPI()
    app.mount("/chat", ui_app(lambda body: vercel_response(agent, body)))

What is not a POST is answered 405, a body past ``max_body_bytes`` 413, without calling
``respond``. A client that goes away ends the response; what happens to the run is the
responder's (its iterator is closed).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from typing import Any, Final

from ..._checks import check_count
from .paused import MAX_BODY_BYTES

__all__ = ["DEFAULT_MAX_BODY_BYTES", "Responder", "UIResponse", "ui_app"]

DEFAULT_MAX_BODY_BYTES: Final = MAX_BODY_BYTES
"""Bound on a request body, in bytes: the protocols' own (:data:`.paused.MAX_BODY_BYTES`)."""

UIResponse = tuple[int, Mapping[str, str], AsyncIterator[bytes]]
"""What a responder answers: the status, the headers and the body's chunks."""

Responder = Callable[[bytes], "UIResponse | Awaitable[UIResponse]"]
"""A protocol's response function bound to an agent: the raw body in, the response out."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


async def _plain(send: Send, status: int, text: str, headers: list[tuple[bytes, bytes]]) -> None:
    body = text.encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode("ascii")),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class _TooLarge(Exception):
    pass


class _Gone(Exception):
    pass


async def _read_body(receive: Receive, limit: int) -> bytes:
    """The request's body.

    Raises:
        _TooLarge: past ``limit`` bytes (the rest is not read).
        _Gone: the client left before the body's end.
    """
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Gone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _TooLarge
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts)


def ui_app(
    respond: Responder, *, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
) -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """An ASGI application serving ``respond`` (see the module docstring).

    Raises:
        UsageError: ``max_body_bytes`` is not a positive count.
    """
    limit = check_count("max_body_bytes", max_body_bytes, minimum=1)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        if scope.get("method") != "POST":
            await _plain(send, 405, "POST a request body", [(b"allow", b"POST")])
            return
        try:
            body = await _read_body(receive, limit)
        except _TooLarge:
            await _plain(send, 413, f"the request body is over {limit} bytes", [])
            return
        except _Gone:
            return
        answer = respond(body)
        status, headers, chunks = await answer if inspect.isawaitable(answer) else answer
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (name.lower().encode("latin-1"), value.encode("latin-1"))
                    for name, value in headers.items()
                ],
            }
        )
        try:
            async for chunk in chunks:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        finally:
            closer = getattr(chunks, "aclose", None)
            if closer is not None:
                await closer()

    return app
