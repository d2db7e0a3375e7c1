"""The library's log records: one helper, so every logger carries the same structure.

Every record of an ``sse_toolcalls`` logger has an ``event`` field (``extra=``), a short
name of what happened, and the fields of its event as further attributes of the record;
the message is ``"{event}: {sentence}"`` for people reading plain logs. The loggers, their
events and fields are listed in the README ("Logging"); ``tests/test_logging.py`` holds
them to it. The happy path logs at DEBUG only.
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["LOGGERS", "log"]

LOGGERS = {
    "sse_toolcalls.runtime": "the agent's loop, the dispatcher and every handled failure",
    "sse_toolcalls.tools": "a tool handler's exception, with its traceback",
    "sse_toolcalls.simulator": "each request the simulator served",
    "sse_toolcalls.mcp": "an MCP server's tool left out (skip_invalid=True), with the reason",
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
        logger.log(
            level,
            "%s: %s",
            event,
            message,
            extra={"event": event, **fields},
            exc_info=exc_info,
            stacklevel=2,
        )
