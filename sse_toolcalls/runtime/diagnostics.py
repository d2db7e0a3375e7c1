"""Diagnostics: the technical detail of what went wrong, for developers only.

Each failure the runtime handles becomes a :class:`Diagnostic` (returned with the reply)
and a log record on the ``sse_toolcalls.runtime`` logger whose ``extra`` fields carry
the structure: ``event`` (the kind, as every record of the library has one; also as
``diagnostic_kind``), ``status``, ``code``, ``body``, ``exception``, ``provider``,
``attempt``, ``tool`` and ``call_id``. None of it is ever put in the text shown to the
user (that is :mod:`.fallback`'s job).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from .._faces import publish
from .._logging import log
from ..errors import ProviderError, TruncatedStreamError

__all__ = ["LOGGER_NAME", "Diagnostic", "from_exception", "logger", "report"]

LOGGER_NAME = "sse_toolcalls.runtime"
"""The logger the runtime reports on."""

logger = logging.getLogger(LOGGER_NAME)

MAX_BODY_CHARS = 4000
"""How much of an error body a diagnostic keeps, in characters: real error bodies are
well under 2,000; a bound keeps a misbehaving proxy's HTML page out of the logs."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnostic:
    """One handled failure, as a developer needs to see it."""

    kind: str
    """What happened: ``provider_error``, ``stream_truncated``, ``stream_error``,
    ``tool_failed``, ``tool_timeout``, ``tool_unavailable``, ``write_unconfirmed``,
    ``write_replayed``, ``ledger_error``, ``tool_arguments``, ``step_limit``,
    ``empty_answer``, ``calls_over_limit``, ``store_error`` (the conversation store could
    not be read or written), ``internal_error`` (an unexpected exception; its traceback
    is in ``body``)."""

    message: str
    """A sentence for the developer."""

    provider: str | None = None
    """The dialect, when it concerns the provider."""

    status: int | None = None
    """The HTTP status, when there was one."""

    code: str | None = None
    """The provider's error code or type, when it gave one."""

    body: Any = None
    """The raw error body (bounded), when there was one."""

    exception: str | None = None
    """``repr`` of the exception, when there was one."""

    attempt: int | None = None
    """Which attempt of the request failed (from 1), for provider failures."""

    retried: bool = False
    """Whether the runtime retried after it."""

    tool: str | None = None
    """The tool, for tool failures."""

    call_id: str | None = None
    """The call, for tool failures."""


def _bounded(body: Any) -> Any:
    if isinstance(body, str) and len(body) > MAX_BODY_CHARS:
        return body[:MAX_BODY_CHARS] + "…"
    return body


def from_exception(
    error: BaseException, *, attempt: int | None = None, retried: bool = False
) -> Diagnostic:
    """The diagnostic of a failed provider request."""
    if isinstance(error, ProviderError):
        return Diagnostic(
            kind="provider_error",
            message=error.message,
            provider=error.provider,
            status=error.status,
            code=error.code,
            body=_bounded(error.body),
            exception=repr(error),
            attempt=attempt,
            retried=retried,
        )
    if isinstance(error, TruncatedStreamError):
        return Diagnostic(
            kind="stream_truncated",
            message=f"{error} (reason {error.reason}; {len(error.completed)} completed "
            f"call(s) not yet returned, {len(error.partial)} cut)",
            provider=error.provider,
            exception=repr(error),
            attempt=attempt,
            retried=retried,
        )
    return Diagnostic(
        kind="stream_error",
        message=str(error),
        provider=getattr(error, "provider", None),
        exception=repr(error),
        attempt=attempt,
        retried=retried,
    )


def report(diagnostic: Diagnostic, *, level: int = logging.WARNING) -> Diagnostic:
    """Log ``diagnostic`` on the runtime logger with its fields as ``extra``; return it."""
    log(
        logger,
        level,
        diagnostic.kind,
        diagnostic.message,
        diagnostic_kind=diagnostic.kind,
        provider=diagnostic.provider,
        status=diagnostic.status,
        code=diagnostic.code,
        body=diagnostic.body,
        exception=diagnostic.exception,
        attempt=diagnostic.attempt,
        tool=diagnostic.tool,
        call_id=diagnostic.call_id,
    )
    return diagnostic


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
