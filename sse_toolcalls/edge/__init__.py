"""The core's edge: reading a streamed HTTP response (or an SDK's stream) into calls and
events (:mod:`~sse_toolcalls.edge.responses`), and reading a provider's failure into a
:class:`~sse_toolcalls.errors.ProviderError` (:mod:`~sse_toolcalls.edge.http_errors`,
:mod:`~sse_toolcalls.edge.sdk_errors`, :mod:`~sse_toolcalls.edge.transport`).

Any HTTP client or SDK is reached through protocols and class names, never imported;
anyio is imported by the async pumps when they first run, not at load.
"""
