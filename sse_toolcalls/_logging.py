"""The library's log records: one helper, so every logger carries the same structure.

Every record of an ``sse_toolcalls`` logger has an ``event`` field (``extra=``), a short
name of what happened, and the fields of its event as further attributes of the record;
the message is ``"{event}: {sentence}"`` for people reading plain logs. The loggers, their
events and fields are listed in the README ("Logging"); ``tests/core/test_logging.py`` holds
them to it. The happy path logs at DEBUG only.

Every record is redacted against the secrets the library knows (the API keys its
provider clients send, :func:`sse_toolcalls._secrets.remember`), in every spelling
:mod:`._secrets` finds: a provider's error message that echoes the key is logged with
``[REDACTED]`` in its place, in the message, in each field and in the traceback.
"""

from __future__ import annotations

import logging
import sys
import traceback
from typing import Any

from ._secrets import known

__all__ = ["LOGGERS", "log"]

LOGGERS = {
    "sse_toolcalls.runtime": "the agent's loop, the dispatcher and every handled failure",
    "sse_toolcalls.runtime.tools": "a tool handler's exception, with its traceback",
    "sse_toolcalls.tooling.simulator": "each request the simulator served",
    "sse_toolcalls.runtime.mcp": "an MCP server's tool left out (skip_invalid=True), and why",
    "sse_toolcalls.dialects": "a provider's stream that contradicted itself and was resolved",
}
"""Each logger of the library and what it reports."""


def log(logger: logging.Logger, level: int, event: str, message: str, **fields: Any) -> None:
    """Log ``message`` as ``event`` with ``fields`` as the record's attributes.

    Nothing is built when the level is off: the happy path's DEBUG records cost one
    ``isEnabledFor`` each in production.
    """
    if logger.isEnabledFor(level):
        exc_info = fields.pop("exc_info", None)
        secrets = known()
        if secrets:
            message = secrets.redact(message)
            fields = {name: secrets.redact_value(value) for name, value in fields.items()}
            trace = _trace(exc_info)
            if trace is not None and secrets.found_in(trace):
                # The handler would format the traceback after us, key and all: it goes
                # into the message instead, redacted.
                message = f"{message}\n{secrets.redact(trace)}"
                exc_info = None
        logger.log(
            level,
            "%s: %s",
            event,
            message,
            extra={"event": event, **fields},
            exc_info=exc_info,
            stacklevel=2,
        )


def _trace(exc_info: Any) -> str | None:
    """The text a handler would print for ``exc_info``, or ``None`` when there is none."""
    if isinstance(exc_info, BaseException):
        return "".join(traceback.format_exception(exc_info)).rstrip("\n")
    if isinstance(exc_info, tuple) and len(exc_info) == 3 and exc_info[1] is not None:
        return "".join(traceback.format_exception(*exc_info)).rstrip("\n")
    if exc_info is True:
        return _trace(sys.exc_info())
    return None
