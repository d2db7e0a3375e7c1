"""MCP tools out: a :class:`ToolRegistry` served as an MCP server (stdio or Streamable HTTP).

The server is the SDK's low-level ``Server`` with two handlers of ours. ``tools/list``
describes every tool from the registry (its name, description and JSON Schema; the
effect as annotations: a ``read`` is ``readOnlyHint``, a ``write`` is ``destructiveHint``
and not idempotent). ``tools/call`` goes through the same path as a model's call in the
:class:`~sse_toolcalls.runtime.Agent`: the runtime's :class:`Dispatcher` validates the
arguments against the schema (a refusal comes back as an ``isError`` result listing every
problem, nothing runs), a write reserves its idempotency key in the ledger first, the
breaker may refuse a failing tool, and the one executor runs the handler (in its sandbox
when it declares one) within its timeout. What the model would have read is what the MCP
client gets: the result's text (JSON for a JSON value), ``isError`` for every error result,
and the images and documents the tool returned as MCP ``image`` blocks and embedded blobs
(a URL as a ``resource_link``). Calls of one MCP session share a conversation id (the
breaker's scope, ``ToolContext.conversation_id``).

**Idempotency across MCP requests.** MCP has no request id of the caller's; each
``tools/call`` is its own request unless the client names one: a client that may retry a
call (a dropped connection) sends the same ``_meta`` ``"sse-toolcalls/idempotency-key"``
each time, and a write already done under that key is answered from the ledger (its
recorded result, marked as a replay) instead of running again. Without the key a write
still passes through the ledger, but no two calls share a key.

A key names one call, as a payment API's ``Idempotency-Key`` names one request: the
first call under a key claims it in the dispatcher's ledger for its tool and a digest of
its arguments (canonical JSON, so the order of keys does not matter). The same key
again with the same tool and arguments is that call again (a replay); with other
arguments or another tool it is refused with an error result (``isError``,
``idempotency_key_conflict``) and nothing runs. A key that is not a string, is empty or
blank, or is longer than :data:`MAX_IDEMPOTENCY_KEY_CHARS` is refused the same way
rather than ignored. The claim is an entry of the ledger itself (a compare-and-set
reservation), so every worker sharing the ledger sees it, and it ages out with the
ledger's other entries.

**Approval.** A tool that needs a person's approval (``needs_approval``) is declined: an
MCP server has no person to ask (an MCP client that asks its user first is the place for
such tools), and running it unasked would break the promise its declaration makes.
"""

from __future__ import annotations

import base64
import contextlib
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import anyio
import orjson

from ...calls import Image, MediaPart, ToolCall, ToolResult
from ...errors import UsageError
from .._targets import resolve
from ..dispatch import Dispatcher
from ..errors import LedgerError
from ..keyclaim import KeyConflict, claim_key
from ..ledgers.base import key_arguments
from ..tools.registry import Tool, ToolRegistry
from ..tools.results import declined_result, key_conflict_result, ledger_refusal_result
from .client import _require_mcp

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server
    from mcp_types import CallToolResult
    from starlette.applications import Starlette


__all__ = [
    "IDEMPOTENCY_KEY_META",
    "MAX_IDEMPOTENCY_KEY_CHARS",
    "build_server",
    "http_app",
    "load_registry",
    "serve_http",
    "serve_stdio",
]

IDEMPOTENCY_KEY_META = "sse-toolcalls/idempotency-key"
"""The ``_meta`` key of a ``tools/call`` request naming the caller's request (MCP's
reverse-DNS-style prefix form): calls that carry the same one are the same request."""

MAX_IDEMPOTENCY_KEY_CHARS = 255
"""Longest idempotency key accepted, in characters: a UUID is 36, payment APIs allow 255;
a longer one is a client bug, refused rather than stored."""

RESULT_URI_SCHEME = "sse-toolcalls-result"
"""The URI scheme of a document a tool returned as bytes, embedded in an MCP answer (an
embedded resource needs a URI; the name after the colon is the document's)."""

_APPROVAL_REASON = (
    "this tool needs a person's approval for each call, which this MCP server cannot ask for"
)


def load_registry(spec: str) -> ToolRegistry:
    """The :class:`ToolRegistry` named by ``module:attribute`` (dots walk attributes).

    Raises:
        UsageError: the spec is malformed, cannot be imported, or names no registry.
    """
    value = resolve(spec, what="the registry")
    if not isinstance(value, ToolRegistry):
        raise UsageError(f"{spec!r} is a {type(value).__name__}, not a ToolRegistry")
    return value


def _declaration(tool: Tool) -> Any:
    from mcp_types import Tool as MCPTool
    from mcp_types import ToolAnnotations

    read = tool.effect == "read"
    return MCPTool(
        name=tool.name,
        description=tool.description or None,
        input_schema=tool.parameters,
        annotations=ToolAnnotations(
            read_only_hint=read,
            destructive_hint=not read,
            idempotent_hint=read,
            open_world_hint=None,
        ),
    )


def _answer(result: ToolResult) -> CallToolResult:
    from mcp_types import CallToolResult, TextContent

    content = result.content
    text = content if isinstance(content, str) else orjson.dumps(content).decode("utf-8")
    blocks: list[Any] = [TextContent(text=text)] if text or not result.media else []
    blocks.extend(_media_block(part) for part in result.media)
    return CallToolResult(content=blocks, is_error=result.is_error)


def _media_block(part: MediaPart) -> Any:
    """An image or document of a result as MCP content: bytes as an ``image`` block or an
    embedded blob, a URL as a ``resource_link`` (MCP has no image-by-URL block)."""
    from mcp_types import BlobResourceContents, EmbeddedResource, ImageContent, ResourceLink

    name = part.name or ("image" if isinstance(part, Image) else "document")
    if part.data is None:
        return ResourceLink(uri=str(part.url), name=name, mime_type=part.media_type)
    data = base64.b64encode(part.data).decode("ascii")
    if isinstance(part, Image):
        return ImageContent(data=data, mime_type=part.media_type)
    # An embedded resource needs a URI; the document has none of its own.
    uri = f"{RESULT_URI_SCHEME}:{quote(name)}"
    return EmbeddedResource(
        resource=BlobResourceContents(uri=uri, mime_type=part.media_type, blob=data)
    )


def _conversation_id(ctx: Any) -> str:
    """The MCP session a call belongs to, as the dispatcher's conversation id (the
    breaker's scope and ``ToolContext.conversation_id``): Streamable HTTP names it in
    the ``mcp-session-id`` header; over stdio (or in memory) the connection is the session."""
    headers = getattr(getattr(ctx, "request", None), "headers", None)
    if headers is None:
        return "mcp-connection"
    session = headers.get("mcp-session-id")
    # A stateless Streamable HTTP server has no sessions: its calls share none.
    return f"mcp-session-{session}" if session else "mcp-http"


def _caller_key(meta: Mapping[str, Any] | None) -> str | None:
    """The caller's idempotency key, ``None`` when it sent none.

    Raises:
        KeyConflict: the key is there but not a non-blank string within the limit.
    """
    if meta is None or IDEMPOTENCY_KEY_META not in meta:
        return None
    key = meta[IDEMPOTENCY_KEY_META]
    if not isinstance(key, str) or not key.strip():
        # An empty key silently treated as "no key" would run a retried write twice.
        raise KeyConflict(
            f"The idempotency key ({IDEMPOTENCY_KEY_META}) must be a non-empty string; "
            f"got {str(key)[:40]!r}. Send a unique key per call, or none."
        )
    if len(key) > MAX_IDEMPOTENCY_KEY_CHARS:
        raise KeyConflict(
            f"The idempotency key ({IDEMPOTENCY_KEY_META}) has {len(key)} characters, over "
            f"the limit of {MAX_IDEMPOTENCY_KEY_CHARS}."
        )
    return key


_NOTHING_STARTED = frozenset(
    {"refused", "unavailable", "over_limit", "ledger_error", "retry", "declined"}
)
"""Outcomes of a call whose handler never started, or that the tool refused having done
nothing (``retry``): the key it claimed is given back, so the corrected call may use it
(as a payment API keeps no key for a request that failed validation)."""


def build_server(
    registry: ToolRegistry,
    *,
    name: str = "sse-toolcalls",
    dispatcher: Dispatcher | None = None,
) -> Server[Any]:
    """The SDK's low-level MCP ``Server`` exposing ``registry``'s tools.

    Args:
        registry: The tools served (their current set, on each ``tools/list``).
        name: The server's name in the MCP handshake.
        dispatcher: Runs the calls; by default one ``Dispatcher(registry)`` for the
            server's life (an in-memory ledger, the default breaker). Pass one with a
            :class:`~sse_toolcalls.runtime.SQLiteLedger` to keep writes once across
            restarts, or with another executor.

    Raises:
        UsageError: the ``mcp`` SDK is not installed.
    """
    _require_mcp()
    from mcp.server.lowlevel import Server
    from mcp_types import CallToolRequestParams, ListToolsResult, PaginatedRequestParams

    runner = dispatcher if dispatcher is not None else Dispatcher(registry)

    async def list_tools(ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=[_declaration(tool) for tool in registry])

    async def call_tool(ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        meta: Mapping[str, Any] | None = params.meta
        call = ToolCall(
            name=params.name,
            args=dict(params.arguments or {}),
            # The dialect only addresses a result in a provider's format; an MCP answer
            # is built here from the result's content, so any dialect would do.
            provider="openai_chat",
            call_id=f"mcp-{ctx.request_id}",
            index=0,
        )
        tool = registry.get(call.name)
        if tool is not None and tool.needs_approval:
            return _answer(declined_result(call, reason=_APPROVAL_REASON))
        claim: str | None = None
        try:
            key = _caller_key(meta)
            # Only a call that passes validation claims its key: a refused one ran
            # nothing, and the corrected call may come under the same key.
            if key is not None and not isinstance(runner.registry.validate(call), ToolResult):
                claim = await claim_key(
                    runner.ledger,
                    f"mcp:{key}",
                    call.name,
                    key_arguments(call.args),
                    deadline=runner.ledger_timeout,
                )
        except KeyConflict as exc:
            return _answer(key_conflict_result(call, str(exc)))
        except LedgerError:
            return _answer(ledger_refusal_result(call))
        request_id = key if key is not None else f"mcp-{uuid.uuid4().hex}"
        (report,) = await runner.dispatch(
            [call], request_id=request_id, conversation_id=_conversation_id(ctx)
        )
        if claim is not None and report.outcome in _NOTHING_STARTED:
            # Bounded as every ledger call is: a frozen ledger keeps the claim, never the
            # caller (the key then reads as used, which refuses, never runs twice).
            with contextlib.suppress(Exception), anyio.move_on_after(runner.ledger_timeout):
                await runner.ledger.forget(claim)
        return _answer(report.result)

    return Server(name, on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(registry: ToolRegistry, *, dispatcher: Dispatcher | None = None) -> None:
    """Serve ``registry`` over this process's standard input and output until it closes.

    Nothing else may write to standard output meanwhile (logs go to standard error).
    """
    server = build_server(registry, dispatcher=dispatcher)
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def http_app(
    registry: ToolRegistry, *, host: str = "127.0.0.1", dispatcher: Dispatcher | None = None
) -> Starlette:
    """``registry`` as a Streamable HTTP ASGI app (the endpoint is ``/mcp``).

    On a loopback ``host`` the SDK's DNS-rebinding protection is on (only loopback
    ``Host`` and ``Origin`` headers are accepted).
    """
    return build_server(registry, dispatcher=dispatcher).streamable_http_app(host=host)


def serve_http(
    registry: ToolRegistry,
    *,
    port: int,
    host: str = "127.0.0.1",
    dispatcher: Dispatcher | None = None,
) -> None:
    """Serve ``registry`` over Streamable HTTP at ``http://host:port/mcp`` until stopped.

    Raises:
        UsageError: the port cannot be bound.
    """
    import socket

    import uvicorn

    app = http_app(registry, host=host, dispatcher=dispatcher)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc}") from exc
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()


def run_serve(spec: str, *, http: int | None, host: str, ledger: str | None) -> int:
    """``sse-toolcalls mcp serve``: serve the registry ``spec`` until stopped.

    Returns:
        The exit status: 0 when the server stopped; 2 for a usage error (a bad spec, an
        unusable ledger file, a port that cannot be bound), said in one line on standard
        error (standard output is the MCP channel under stdio).
    """
    import sys

    import anyio

    from ..errors import LedgerError
    from ..ledgers.sqlite import SQLiteLedger

    try:
        registry = load_registry(spec)
        dispatcher = Dispatcher(registry, ledger=SQLiteLedger(ledger)) if ledger else None
        if http is None:
            anyio.run(lambda: serve_stdio(registry, dispatcher=dispatcher))
        else:
            sys.stderr.write(
                f"serving {len(registry)} tools of {spec} at http://{host}:{http}/mcp\n"
            )
            sys.stderr.flush()
            serve_http(registry, port=http, host=host, dispatcher=dispatcher)
    except (UsageError, LedgerError) as exc:
        sys.stderr.write(f"sse-toolcalls mcp serve: {exc}\n")
        return 2
    except KeyboardInterrupt:
        return 0
    return 0
