"""What an HTTP client's exception means, whichever client raised it.

httpx and httpx2 (the fork the openai, anthropic and mcp SDKs depend on today) share
their exception tree but not their module, and the SDKs wrap both in their own
(``APITimeoutError`` under ``APIConnectionError``). So an exception is recognised by the
names of the classes it derives from, looked up along its MRO, never by one module:
the edge stays free of imports of any HTTP stack (STYLE 10, 11).
"""

from __future__ import annotations

from typing import Literal

TransportFailure = Literal["timeout", "connection"]

# httpx's tree (httpx._exceptions), which httpx2 keeps name for name: TimeoutException
# covers Connect/Read/Write/PoolTimeout; TransportError covers NetworkError (ConnectError,
# ReadError...), ProtocolError (RemoteProtocolError...), ProxyError and the timeouts.
# The SDKs': openai/anthropic APITimeoutError derives from APIConnectionError.
# botocore's (boto3's): ReadTimeoutError and ConnectTimeoutError; ConnectionError
# (EndpointConnectionError, ProxyConnectionError...) and HTTPClientError (a connection
# closed early, ResponseStreamingError while a stream is iterated).
_TIMEOUT_CLASSES = frozenset(
    {"TimeoutException", "APITimeoutError", "ReadTimeoutError", "ConnectTimeoutError"}
)
_CONNECTION_CLASSES = frozenset(
    {"TransportError", "APIConnectionError", "ConnectionError", "HTTPClientError"}
)
_HTTP_FAMILIES = frozenset(
    {"httpx", "httpx2", "httpcore", "httpcore2", "openai", "anthropic", "botocore"}
)


def _family(module: str) -> str:
    return module.split(".", 1)[0]


def classify(exc: BaseException) -> TransportFailure | None:
    """``"timeout"`` for a read/connect/write/pool timeout, ``"connection"`` for any
    other transport failure, ``None`` for anything else (a bug, a status error).

    The stdlib's ``TimeoutError`` counts as a timeout; class names count only from the
    HTTP families above, so an unrelated library's ``TransportError`` is not mistaken.
    """
    if isinstance(exc, TimeoutError):
        return "timeout"
    kind: TransportFailure | None = None
    for cls in type(exc).__mro__:
        if _family(cls.__module__) not in _HTTP_FAMILIES:
            continue
        if cls.__name__ in _TIMEOUT_CLASSES:
            return "timeout"
        if cls.__name__ in _CONNECTION_CLASSES:
            kind = "connection"
    return kind


__all__ = ["TransportFailure", "classify"]
