"""MCP (the Model Context Protocol), in and out, with the official ``mcp`` SDK
(``pip install 'sse_toolcalls[mcp]'``; imported only here, when used).

- **In** (:mod:`.client`): every tool of an MCP server, over stdio or Streamable HTTP,
  registered into a :class:`~sse_toolcalls.runtime.tools.ToolRegistry`, validated, with effects
  from the server's annotations, for the session's ``async with`` block.
- **Out** (:mod:`.server`): a registry served as an MCP server, every call through the
  registry's validation and the runtime's dispatcher (ledger, breaker, sandbox), as
  ``sse-toolcalls mcp serve module:registry [--http PORT]``.
"""

from __future__ import annotations

from .client import (
    MAX_INLINE_DATA_CHARS,
    MAX_MEDIA_BYTES,
    MAX_RESULT_BYTES,
    MAX_RESULT_PARTS,
    MCPConnection,
    connect_http,
    connect_stdio,
    effect_of,
    register_session_tools,
    result_value,
)
from .server import (
    IDEMPOTENCY_KEY_META,
    MAX_IDEMPOTENCY_KEY_CHARS,
    build_server,
    http_app,
    load_registry,
    serve_http,
    serve_stdio,
)

__all__ = [
    "IDEMPOTENCY_KEY_META",
    "MAX_IDEMPOTENCY_KEY_CHARS",
    "MAX_INLINE_DATA_CHARS",
    "MAX_MEDIA_BYTES",
    "MAX_RESULT_BYTES",
    "MAX_RESULT_PARTS",
    "MCPConnection",
    "build_server",
    "connect_http",
    "connect_stdio",
    "effect_of",
    "http_app",
    "load_registry",
    "register_session_tools",
    "result_value",
    "serve_http",
    "serve_stdio",
]
