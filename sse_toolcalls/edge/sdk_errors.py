"""The openai, anthropic and botocore (boto3) SDKs' exceptions as our :class:`ProviderError`.

An SDK raises its own status errors (``openai.RateLimitError``,
``anthropic.APIStatusError``...) before any byte of a stream reaches the edge. They are
read here by what they carry (``status_code``, ``response``, ``body``), not by their
classes, and the error object in the body by the one reader the edge uses
(:func:`~.http_errors.provider_error_from_http`, over :mod:`sse_toolcalls.provider_errors`):
the same answer gives the same ``ProviderError`` whichever client received it.

botocore raises ``ClientError`` for an AWS error answer, its ``response`` a dict that
holds the error's name (``Error.Code``) and the HTTP facts (``ResponseMetadata``), and
``EventStreamError`` (a ``ClientError``) while a stream is iterated, for an
``exception`` message inside it. Both are read by their shape, never by importing
botocore, through :func:`~sse_toolcalls.provider_errors.aws_error`: the table the
Bedrock dialects read their in-stream exceptions with.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any

from .. import _json
from .._faces import publish
from .._secrets import SecretSet, credentials, remember
from ..errors import ProviderError, SSEToolCallsError, StreamTimeoutError, UsageError
from ..provider_errors import aws_error
from .http_errors import MAX_ERROR_BODY_BYTES, parse_retry_after, provider_error_from_http
from .transport import classify

CONNECTION_CODE = "connection_error"
"""The ``ProviderError.code`` of a request that failed before any answer arrived (the
clients' ``CONNECTION_CODE``)."""


def _body(exc: BaseException) -> bytes:
    response = getattr(exc, "response", None)
    try:
        # The SDKs read an error response in full before raising (its text is their
        # message), so this never touches the network.
        content = getattr(response, "content", None)
    except Exception:
        content = None
    if isinstance(content, bytes):
        return content[:MAX_ERROR_BODY_BYTES]
    body = getattr(exc, "body", None)
    if body is None:
        return b""
    try:
        return _json.dumps(body)[:MAX_ERROR_BODY_BYTES]
    except TypeError:
        return str(body).encode("utf-8", "replace")[:MAX_ERROR_BODY_BYTES]


def provider_error_from_sdk(exc: BaseException, dialect: str | None = None) -> ProviderError:
    """The :class:`ProviderError` for an SDK's exception.

    A status error (anything with an integer ``status_code``) is read from its response's
    status, headers (``Retry-After``, ``x-should-retry``) and body; botocore's
    ``ClientError`` and ``EventStreamError`` from the error's name (``Error.Code``), its
    message and status, by AWS's table of retryable errors; a timeout becomes a
    :class:`StreamTimeoutError`; any other connection failure a retryable
    ``ProviderError`` with code ``"connection_error"``. Our own errors come back as
    they are.

    Raises:
        UsageError: ``exc`` is none of these (a bug is not a provider's error).
    """
    if isinstance(exc, ProviderError):
        return exc
    return _scrubbed(_translate(exc, dialect), exc)


def _request_credentials(exc: BaseException) -> set[str]:
    """The credentials of the request behind an SDK's exception (its response's request
    or its own): an SDK sends the key itself, so no client of ours knows it."""
    for holder in (getattr(exc, "response", None), exc):
        try:
            request = getattr(holder, "request", None)  # httpx raises when it has none
        except Exception:
            continue
        headers: Any = getattr(request, "headers", None)
        if request is not None and hasattr(headers, "items"):
            pairs = [(str(k), str(v)) for k, v in headers.items()]
            return credentials(pairs, str(getattr(request, "url", "")))
    return set()


def _scrubbed(error: ProviderError, exc: BaseException) -> ProviderError:
    """``error`` with the request's credentials redacted, in place: a provider's error
    that echoes the key must not carry it into the application's logs; the library's
    own log records are redacted against it from now on."""
    found = _request_credentials(exc)
    if found:
        for secret in found:
            remember(secret)
        secrets = SecretSet(found)
        error.message = secrets.redact(error.message)
        error.body = secrets.redact_value(error.body)
        error.args = tuple(secrets.redact_value(a) for a in error.args)
    return error


def _aws_response(exc: BaseException) -> Mapping[str, Any] | None:
    """botocore's parsed error response of ``exc`` (``{"Error": {"Code", "Message"},
    "ResponseMetadata": {...}}``), or ``None`` when ``exc`` is not a ``ClientError``."""
    response = getattr(exc, "response", None)
    if not isinstance(response, Mapping):
        return None
    error = response.get("Error")
    if not isinstance(error, Mapping) or not isinstance(error.get("Code"), str):
        return None
    return response


def _from_aws(response: Mapping[str, Any], dialect: str | None) -> ProviderError:
    error = response["Error"]
    metadata = response.get("ResponseMetadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    status = metadata.get("HTTPStatusCode")
    headers = metadata.get("HTTPHeaders")
    headers = headers if isinstance(headers, Mapping) else None
    message = error.get("Message")
    # The members besides Error and ResponseMetadata are the exception's own fields
    # (message; ModelStreamErrorException's originalStatusCode...): the body as sent.
    body = {k: v for k, v in response.items() if k not in ("Error", "ResponseMetadata")}
    if isinstance(message, str) and message and "message" not in body:
        body["message"] = message
    return aws_error(
        dialect,
        error["Code"],
        body,
        message if isinstance(message, str) else "",
        status=status if type(status) is int and not isinstance(status, bool) else None,
        retry_after=parse_retry_after(headers),
    )


def _translate(exc: BaseException, dialect: str | None) -> ProviderError:
    aws = _aws_response(exc)
    if aws is not None:
        return _from_aws(aws, dialect)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and not isinstance(status, bool):
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
        return provider_error_from_http(
            status,
            _body(exc),
            headers if isinstance(headers, Mapping) else None,
            provider=dialect,
        )
    kind = classify(exc)
    if kind == "timeout":
        return StreamTimeoutError(
            f"the request timed out: {exc!r}", provider=dialect, code="timeout"
        )
    if kind == "connection":
        return ProviderError(
            f"the request failed: {exc!r}",
            provider=dialect,
            code=CONNECTION_CODE,
            retryable=True,
        )
    raise UsageError(f"not an SDK status or connection error: {type(exc).__name__}: {exc}") from exc


class translate_sdk_errors:
    """``with translate_sdk_errors("openai_chat"):`` (or ``async with``): an SDK status,
    timeout or connection error raised inside becomes our :class:`ProviderError`
    (chained to it); everything else passes through untouched."""

    def __init__(self, dialect: str | None = None) -> None:
        self.dialect = dialect
        """The dialect named in the errors raised."""

    def __enter__(self) -> translate_sdk_errors:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None or isinstance(exc, SSEToolCallsError) or not isinstance(exc, Exception):
            return
        status = getattr(exc, "status_code", None)
        if (
            (isinstance(status, int) and not isinstance(status, bool))
            or classify(exc)
            or _aws_response(exc) is not None
        ):
            raise provider_error_from_sdk(exc, self.dialect) from exc

    async def __aenter__(self) -> translate_sdk_errors:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)


__all__ = ["CONNECTION_CODE", "provider_error_from_sdk", "translate_sdk_errors"]

# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
