"""What the Bedrock dialects share: AWS's exception messages, read as provider errors."""

from __future__ import annotations

from typing import Any, cast

from .. import _json
from ..errors import ProviderError
from ..framing.sse import ServerSentEvent
from ..provider_errors import aws_error
from ._parsed import PARSED_DATA, ParsedEvent, text_of


def is_exception(name: str) -> bool:
    """Whether an event of this name is an AWS exception message (``throttlingException``)
    or an unmodeled error (``error``): no Bedrock event type ends so."""
    return name.endswith(("Exception", "exception")) or name == "error"


def exception_error(dialect: str, event: ServerSentEvent) -> ProviderError:
    """The :class:`ProviderError` an exception event stands for (an error message's
    code is its ``errorCode``)."""
    raw = text_of(event)
    body: Any
    if event.data is PARSED_DATA:
        body = cast(ParsedEvent, event).payload
    else:
        try:
            body = _json.loads(raw) if raw else None
        except ValueError:
            body = None
    name = event.event
    if name == "error" and type(body) is dict and isinstance(body.get("errorCode"), str):
        name = body["errorCode"]
    return aws_error(dialect, name, body, raw)
