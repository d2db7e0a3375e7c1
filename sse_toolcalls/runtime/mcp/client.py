"""MCP tools in: every tool of an MCP server, registered into a :class:`ToolRegistry`.

One MCP session, opened by :func:`connect_stdio` (a server run as a subprocess) or
:func:`connect_http` (Streamable HTTP), or one the application opened itself
(:func:`register_session_tools`), lends its tools to a registry. Each becomes a plain
schema tool; the registry and the runtime treat it as any other:

- **its input schema** is checked and compiled when it is added, and every call is
  validated against it (with the narrow coercion) before anything is sent to the server;
- **its effect** comes from the server's annotations: ``readOnlyHint: true`` is a
  ``read`` (retried after a transient fault); anything else, ``destructiveHint`` or no
  hint at all, is a ``write``, so it goes through the idempotency ledger (never run
  twice for one call) and the approval policy. The MCP specification calls annotations
  hints that a client must not trust from an untrusted server: a server can only make
  its tools *more* guarded by leaving them out, and ``effects=`` overrides them by name;
- **its answer**: a ``CallToolResult`` with ``isError`` is the tool's own error for the
  model (:class:`~sse_toolcalls.runtime.errors.ToolErrorReply`: an error result with the
  server's text, off the circuit breaker); content is one text as a string, otherwise a
  list of JSON parts (``text``; ``audio`` with ``mime_type`` and base64 ``data``;
  ``resource`` and ``resource_link``), ``structuredContent`` when there is no content.
  A JSON-RPC error (an unknown tool, the server's own validation) or a broken connection
  fails the call as any handler exception does.

**Images and PDFs reach the model as images and documents**, not as text: an ``image``
block becomes an :class:`~sse_toolcalls.calls.Image` and an embedded PDF blob a
:class:`~sse_toolcalls.calls.Document` in the result's ``media``, sent in each dialect's
own shape (Chat Completions, which reads only text, gets a line naming it). One over
:data:`MAX_MEDIA_BYTES`, or whose base64 does not decode, stays a JSON part with the
reason instead. Any other part's ``data`` longer than :data:`MAX_INLINE_DATA_CHARS` is
left out (its size and type kept), so one recording cannot flood a text context.

**The server is a peer, not trusted** (``docs/threat-model.md``): each input schema
passes :mod:`sse_toolcalls.runtime.tools.schema_guard` (size, depth, references only inside it,
patterns on RE2) when it is added, an ``outputSchema`` the same and no pattern (the SDK
runs it with Python's ``re``); a result over ``max_result_bytes`` or
:data:`MAX_RESULT_PARTS` parts is an error result for the model, nothing of it kept.

The session's lifetime is the ``async with`` block: the tools are removed from the
registry when it closes, and a handler called after that fails with a clear message.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import logging
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..._checks import check_count
from ..._logging import log
from ...calls import Document, Image
from ...errors import UsageError
from ..errors import ToolErrorReply
from ..tools.registry import DEFAULT_TIMEOUT, Effect, Tool, ToolRegistry

if TYPE_CHECKING:
    import httpx2
    from mcp import ClientSession
    from mcp_types import CallToolResult
    from mcp_types import Tool as MCPTool

__all__ = [
    "MAX_INLINE_DATA_CHARS",
    "MAX_LISTED_TOOLS",
    "MAX_MEDIA_BYTES",
    "MAX_RESULT_BYTES",
    "MAX_RESULT_PARTS",
    "MCPConnection",
    "connect_http",
    "connect_stdio",
    "effect_of",
    "register_session_tools",
    "result_value",
]

logger = logging.getLogger("sse_toolcalls.runtime.mcp")

MAX_INLINE_DATA_CHARS = 64 * 1024
"""Characters of base64 ``data`` (an image, audio, a blob) kept in a result part: a small
icon or chart fits; a full-page screenshot (megabytes) would cost the model a hundred
thousand tokens of text it cannot see as an image, so its data is left out."""

MAX_MEDIA_BYTES = 5 * 1024 * 1024
"""Bytes of one image or PDF passed on to the model as media: Anthropic's documented limit
for an image sent through its API (5 MB), the tightest of the dialects that take media;
a bigger one stays a JSON part saying it was left out."""

MAX_RESULT_BYTES = 8 * 1024 * 1024
"""Default of ``max_result_bytes``: bytes of one tool result the model may be handed,
counted over every part (text as UTF-8, base64 ``data`` and blobs as sent, structured
content as JSON). One image at :data:`MAX_MEDIA_BYTES` (6.7 MB as base64) fits with its
caption; 8 MiB of text is two million tokens, beyond every model's context, so a result
past it is refused with an error result the model can act on (ask for less)."""

MAX_RESULT_PARTS = 1000
"""Content parts in one tool result: a result is a few parts (text, an image or two); a
million empty parts cost little in bytes but a million objects built and sent."""

MAX_LISTED_TOOLS = 1000
"""Tools taken from one server: servers expose tens (models choose badly past about a
hundred); each tool's schema is checked and compiled when added, so a listing of a
million would be a million compilations before the first call."""

MAX_LIST_PAGES = 100
"""``tools/list`` pages read from one server: servers page by tens or hundreds of tools; a
cursor that never ends is a broken or hostile server, and registration must end."""


def _require_mcp() -> None:
    try:
        import mcp  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the test extra installs it
        raise UsageError(
            "MCP support needs the official SDK: pip install 'sse_toolcalls[mcp]'"
        ) from exc


@dataclass(slots=True, kw_only=True)
class MCPConnection:
    """An open MCP session and the tools it lent to a registry."""

    session: ClientSession
    """The SDK's session (initialized); open until the ``async with`` block ends."""

    registry: ToolRegistry
    """The registry the tools were added to."""

    tools: tuple[Tool, ...] = ()
    """The tools added, in the server's order."""

    skipped: tuple[tuple[str, str], ...] = ()
    """With ``skip_invalid=True``: the server's tools left out, each with the reason."""

    closed: bool = field(default=False)
    """Whether the session has ended (its tools then fail with a clear message)."""


def effect_of(tool: MCPTool, effects: Mapping[str, Effect] | None = None) -> Effect:
    """The effect of an MCP tool: ``effects[name]`` if given, else ``read`` only when the
    server says ``readOnlyHint: true``; otherwise ``write`` (the safe default: a write is
    never run twice for one call and passes through approvals)."""
    if effects is not None and tool.name in effects:
        return effects[tool.name]
    annotations = tool.annotations
    if annotations is not None and annotations.read_only_hint is True:
        return "read"
    return "write"


def result_value(result: CallToolResult) -> str | list[Any] | dict[str, Any]:
    """What the model is told for an MCP tool's result (the module docstring's mapping).

    Returns:
        One text as a string; otherwise a list of JSON parts, with an ``Image`` or
        ``Document`` in place of each image or PDF block (the runtime sends those as the
        result's media, and the text parts as its content: one text part as a string);
        ``structuredContent`` (or an empty string) when there is no content.
    """
    parts = [_media_part(block) or _part(block) for block in result.content]
    texts = [p for p in parts if isinstance(p, dict)]
    if len(texts) == 1 and texts[0].get("type") == "text":
        text = str(texts[0]["text"])
        return text if len(parts) == 1 else [text if p is texts[0] else p for p in parts]
    if parts:
        return parts
    structured = result.structured_content
    if isinstance(structured, dict | list):
        return structured
    return "" if structured is None else str(structured)


def result_too_large(result: CallToolResult, max_bytes: int = MAX_RESULT_BYTES) -> str | None:
    """Why ``result`` is over the budget (``max_bytes``, :data:`MAX_RESULT_PARTS`), in a
    sentence for the model, or ``None``. Stops counting at the first part past the
    limit, so the cost is bounded by the limit, not by the result."""
    blocks = result.content
    if len(blocks) > MAX_RESULT_PARTS:
        return (
            f"the tool's result has {len(blocks)} content parts, over the limit of "
            f"{MAX_RESULT_PARTS}; nothing of it was kept. Ask for less (a narrower query, "
            "one page)"
        )
    total = 0
    for block in blocks:
        total += _block_bytes(block, max_bytes - total + 1)
        if total > max_bytes:
            break
    if not blocks and result.structured_content is not None:
        import orjson

        try:
            total = len(orjson.dumps(result.structured_content))
        except TypeError:  # not JSON: result_value turns it into its text
            total = len(str(result.structured_content).encode("utf-8", "surrogatepass"))
    if total <= max_bytes:
        return None
    return (
        f"the tool's result is more than {max_bytes} bytes (max_result_bytes); nothing of "
        "it was kept. Ask for less (a narrower query, one page, a summary)"
    )


def _text_bytes(text: str, cap: int) -> int:
    """UTF-8 bytes of ``text``, or some number over ``cap`` (without encoding a string
    whose characters alone are over it)."""
    if len(text) > cap:
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def _block_bytes(block: Any, cap: int) -> int:
    kind = getattr(block, "type", None)
    if kind == "text":
        return _text_bytes(str(block.text), cap)
    if kind in ("image", "audio"):
        return len(str(block.data))
    if kind == "resource":
        contents = block.resource
        text = getattr(contents, "text", None)
        if text is not None:
            return _text_bytes(str(text), cap)
        return len(str(getattr(contents, "blob", "")))
    if kind == "resource_link":
        return _text_bytes(str(block.uri), cap) + _text_bytes(str(block.name), cap)
    # A content type from a later revision: its JSON, as _part would pass it on.
    dump = getattr(block, "model_dump_json", None)
    return len(dump()) if callable(dump) else 0


def _media_part(block: Any) -> Image | Document | dict[str, Any] | None:
    """An image block or an embedded PDF as media (or, when it cannot be, a JSON part
    saying why); ``None`` for every other block."""
    kind = getattr(block, "type", None)
    if kind == "image":
        media_type, data, name = str(block.mime_type), str(block.data), None
    elif kind == "resource" and getattr(block.resource, "mime_type", None) == "application/pdf":
        contents = block.resource
        blob = getattr(contents, "blob", None)
        if blob is None:
            return None
        media_type, data = "application/pdf", str(blob)
        name = str(contents.uri).rstrip("/").rsplit("/", 1)[-1] or None
    else:
        return None
    refused = {"type": kind, "mime_type": media_type}
    # base64 is 4 characters per 3 bytes: checked before decoding, so an oversized block
    # is never held twice.
    if len(data) // 4 * 3 > MAX_MEDIA_BYTES:
        refused["omitted"] = f"{len(data)} characters of base64 data, over the media limit"
        return refused
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        refused["omitted"] = "its base64 data does not decode"
        return refused
    if kind == "image":
        return Image(media_type=media_type, data=raw)
    return Document(media_type=media_type, data=raw, name=name)


def _data(out: dict[str, Any], data: str) -> dict[str, Any]:
    if len(data) <= MAX_INLINE_DATA_CHARS:
        out["data"] = data
    else:
        out["omitted"] = f"{len(data)} characters of base64 data, over the inline limit"
    return out


def _part(block: Any) -> dict[str, Any]:
    kind = getattr(block, "type", None)
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind in ("image", "audio"):
        return _data({"type": kind, "mime_type": block.mime_type}, block.data)
    if kind == "resource_link":
        link: dict[str, Any] = {"type": "resource_link", "uri": str(block.uri), "name": block.name}
        if block.mime_type:
            link["mime_type"] = block.mime_type
        return link
    if kind == "resource":
        contents = block.resource
        out: dict[str, Any] = {"type": "resource", "uri": str(contents.uri)}
        if contents.mime_type:
            out["mime_type"] = contents.mime_type
        text = getattr(contents, "text", None)
        if text is not None:
            out["text"] = text
            return out
        return _data(out, str(getattr(contents, "blob", "")))
    # A content type from a later protocol revision: its JSON, whatever it holds.
    dump = getattr(block, "model_dump", None)
    return dict(dump(mode="json", by_alias=True)) if callable(dump) else {"type": str(kind)}


async def register_session_tools(
    session: ClientSession,
    registry: ToolRegistry,
    *,
    prefix: str = "",
    effects: Mapping[str, Effect] | None = None,
    approve_writes: bool = False,
    call_timeout: float | None = DEFAULT_TIMEOUT,
    skip_invalid: bool = False,
    connection: MCPConnection | None = None,
    max_result_bytes: int = MAX_RESULT_BYTES,
) -> list[Tool]:
    """Add every tool of an initialized MCP session to ``registry``.

    Args:
        session: An initialized :class:`mcp.ClientSession`; it must stay open while the
            tools are used.
        registry: Where the tools go.
        prefix: Put before each tool's name (``"github_"``), so two servers' tools
            cannot collide.
        effects: Overrides the annotations' effect per MCP tool name.
        approve_writes: Every ``write`` tool needs a person's approval per call.
        call_timeout: Seconds one call may take (the call is cancelled past it).
        skip_invalid: Leave out a tool the registry refuses (a schema it cannot use,
            a name already taken), logged as a warning on ``sse_toolcalls.runtime.mcp`` and
            listed in ``connection.skipped``, instead of refusing the whole server.
        connection: Set by :func:`connect_stdio` and :func:`connect_http`: its ``closed``
            flag makes a late call fail clearly.
        max_result_bytes: Bytes of one call's result the model may get
            (:func:`result_too_large`); a larger one is an error result saying so.

    Returns:
        The tools added, in the server's order.

    Raises:
        UsageError: a tool's name is taken in ``registry``, its input schema is not a
            valid JSON Schema for an object within the budgets of
            :mod:`sse_toolcalls.runtime.tools.schema_guard`, or its output schema is not, or holds
            a pattern (nothing of this server is added then), unless ``skip_invalid``; the
            server listed more than ``MAX_LIST_PAGES`` pages or ``MAX_LISTED_TOOLS`` tools.
        MCPError: the server refused ``tools/list``.
    """
    _require_mcp()
    check_count("max_result_bytes", max_result_bytes, minimum=1)
    listed: list[MCPTool] = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        from mcp_types import PaginatedRequestParams

        page = await session.list_tools(
            params=PaginatedRequestParams(cursor=cursor) if cursor is not None else None
        )
        listed.extend(page.tools)
        if len(listed) > MAX_LISTED_TOOLS:
            raise UsageError(f"the MCP server listed more than {MAX_LISTED_TOOLS} tools")
        cursor = page.next_cursor
        if cursor is None:
            break
    else:
        raise UsageError(f"the MCP server listed more than {MAX_LIST_PAGES} pages of tools")
    built = [
        _tool(
            mcp_tool,
            session,
            name=prefix + mcp_tool.name,
            effect=effect_of(mcp_tool, effects),
            approve_writes=approve_writes,
            timeout=call_timeout,
            connection=connection,
            max_result_bytes=max_result_bytes,
        )
        for mcp_tool in listed
    ]
    added: list[Tool] = []
    skipped: list[tuple[str, str]] = []
    try:
        for tool, mcp_tool in zip(built, listed, strict=True):
            try:
                _check_output_schema(mcp_tool.output_schema)
                added.append(registry.add(tool))
            except UsageError as exc:
                # The registry's text may not name the tool (a schema problem says
                # where in the schema): with a server's dozens, say which one.
                reason = str(exc) if tool.name in str(exc) else f"{tool.name}: {exc}"
                if not skip_invalid:
                    raise UsageError(f"the MCP server's tool cannot be added: {reason}") from exc
                log(
                    logger,
                    logging.WARNING,
                    "mcp_tool_skipped",
                    f"MCP tool {tool.name!r} left out: {reason}",
                    tool=tool.name,
                    reason=reason,
                )
                skipped.append((tool.name, reason))
    except BaseException:
        for tool in added:
            registry.remove(tool.name)
        raise
    if connection is not None:
        connection.skipped = tuple(skipped)
    return added


def _check_output_schema(schema: dict[str, Any] | None) -> None:
    """Refuse a tool whose ``outputSchema`` the SDK cannot check within a budget.

    The SDK validates every structured result against it with ``jsonschema`` and
    Python's ``re``, before this library sees the result: a catastrophic pattern there
    would stall the event loop, a reference cycle raise ``RecursionError``. So the
    schema must pass the same checks as an input schema, and hold no pattern at all.

    Raises:
        UsageError: it does not.
    """
    if schema is None:
        return
    from ..tools.schema_guard import check_schema, first_pattern

    try:
        check_schema(schema)
    except UsageError as exc:
        raise UsageError(f"its output schema: {exc}") from exc
    where = first_pattern(schema)
    if where is not None:
        raise UsageError(
            f"its output schema has a pattern at {where}, which the MCP SDK would run on "
            "a backtracking engine against every result"
        )


def _tool(
    mcp_tool: MCPTool,
    session: ClientSession,
    *,
    name: str,
    effect: Effect,
    approve_writes: bool,
    timeout: float | None,
    connection: MCPConnection | None,
    max_result_bytes: int,
) -> Tool:
    remote = mcp_tool.name

    async def call_mcp_tool(**arguments: Any) -> Any:
        if connection is not None and connection.closed:
            raise UsageError(
                f"the MCP session of {remote!r} has ended: use its tools inside the "
                "async with block that connected to the server"
            )
        result = await session.call_tool(remote, arguments)
        # Measured before anything is built from it: an oversized result is refused
        # whole, and the model is told to ask for less.
        too_large = result_too_large(result, max_result_bytes)
        if too_large is not None:
            raise ToolErrorReply(too_large)
        value = result_value(result)
        if result.is_error:
            raise ToolErrorReply(value)
        return value

    call_mcp_tool.__qualname__ = call_mcp_tool.__name__ = f"mcp_{remote}"
    schema = dict(mcp_tool.input_schema)
    schema.setdefault("type", "object")
    return Tool(
        name=name,
        description=mcp_tool.description or "",
        parameters=schema,
        handler=call_mcp_tool,
        effect=effect,
        timeout=timeout,
        needs_approval=approve_writes and effect == "write",
    )


@contextlib.contextmanager
def _unwrapped() -> Iterator[None]:
    """Let one exception out as itself, not in the group the SDK's task groups wrap it in.

    The transports and the session run task groups around the block: a ``UsageError``
    from registration, or the application's own exception from inside the block, left
    them as an ``ExceptionGroup`` of one, and ``except UsageError`` missed it.
    """
    try:
        yield
    except BaseExceptionGroup as group:
        leaves = _leaves(group)
        if len(leaves) == 1:
            raise leaves[0] from leaves[0].__cause__
        raise


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        found.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return found


@contextlib.asynccontextmanager
async def _registered(
    session: ClientSession, registry: ToolRegistry, **options: Any
) -> AsyncIterator[MCPConnection]:
    await session.initialize()
    connection = MCPConnection(session=session, registry=registry)
    tools = await register_session_tools(session, registry, connection=connection, **options)
    connection.tools = tuple(tools)
    try:
        yield connection
    finally:
        connection.closed = True
        for tool in tools:
            registry.remove(tool.name)


@contextlib.asynccontextmanager
async def connect_stdio(
    command: str,
    args: Sequence[str] = (),
    *,
    registry: ToolRegistry,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    prefix: str = "",
    effects: Mapping[str, Effect] | None = None,
    approve_writes: bool = False,
    call_timeout: float | None = DEFAULT_TIMEOUT,
    skip_invalid: bool = False,
    max_result_bytes: int = MAX_RESULT_BYTES,
) -> AsyncIterator[MCPConnection]:
    """Start an MCP server as a subprocess (stdio) and lend its tools to ``registry``.

    Example::

        registry = ToolRegistry()
        async with connect_stdio("python", ["-m", "my_server"], registry=registry):
            reply = await Agent(client, registry).run("What's in my calendar?")

    The subprocess is stopped and the tools removed when the block ends. The other
    arguments are :func:`register_session_tools`'; ``env`` is merged over the SDK's
    safe default environment.

    Raises:
        UsageError: see :func:`register_session_tools`; the SDK is not installed.
        OSError: the command cannot be started.
    """
    _require_mcp()
    from mcp import StdioServerParameters, stdio_client

    parameters = StdioServerParameters(
        command=command, args=list(args), env=dict(env) if env is not None else None, cwd=cwd
    )
    async with _session_tools(
        stdio_client(parameters),
        registry,
        prefix=prefix,
        effects=effects,
        approve_writes=approve_writes,
        call_timeout=call_timeout,
        skip_invalid=skip_invalid,
        max_result_bytes=max_result_bytes,
    ) as connection:
        yield connection


@contextlib.asynccontextmanager
async def connect_http(
    url: str,
    *,
    registry: ToolRegistry,
    http_client: httpx2.AsyncClient | None = None,
    prefix: str = "",
    effects: Mapping[str, Effect] | None = None,
    approve_writes: bool = False,
    call_timeout: float | None = DEFAULT_TIMEOUT,
    skip_invalid: bool = False,
    max_result_bytes: int = MAX_RESULT_BYTES,
) -> AsyncIterator[MCPConnection]:
    """Connect to an MCP server over Streamable HTTP and lend its tools to ``registry``.

    ``http_client`` (an ``httpx2.AsyncClient``, the SDK's HTTP stack) carries headers and
    authentication; the SDK makes one otherwise. The session is ended (an HTTP
    ``DELETE``) and the tools removed when the block ends. The other arguments are
    :func:`register_session_tools`'.

    Raises:
        UsageError: see :func:`register_session_tools`; the SDK is not installed.
    """
    _require_mcp()
    from mcp.client.streamable_http import streamable_http_client

    async with _session_tools(
        streamable_http_client(url, http_client=http_client),
        registry,
        prefix=prefix,
        effects=effects,
        approve_writes=approve_writes,
        call_timeout=call_timeout,
        skip_invalid=skip_invalid,
        max_result_bytes=max_result_bytes,
    ) as connection:
        yield connection


@contextlib.asynccontextmanager
async def _session_tools(
    transport: contextlib.AbstractAsyncContextManager[Any], registry: ToolRegistry, **options: Any
) -> AsyncIterator[MCPConnection]:
    """A session over ``transport`` (the SDK's stdio or HTTP client: its first two
    streams are read and write), its tools lent to ``registry`` for the block."""
    from mcp import ClientSession

    with _unwrapped():
        async with (
            transport as streams,
            ClientSession(streams[0], streams[1]) as session,
            _registered(session, registry, **options) as connection,
        ):
            yield connection
