"""The wire formats: one package per dialect, the one table of them, and recognising a
dialect from its stream."""

from __future__ import annotations

from typing import Any, cast

from .. import _json
from ..calls import DIALECTS, Dialect
from ..errors import UnknownDialectError
from ..framing.sse import ServerSentEvent
from . import anthropic, bedrock_anthropic, bedrock_converse, gemini, openai_chat, openai_responses
from ._common import Reassembler
from ._parsed import PARSED_DATA, ParsedEvent
from ._spec import DialectSpec

__all__ = ["DIALECTS", "DialectSpec", "detect_dialect", "reassembler_for", "spec_for"]

SPECS: dict[str, DialectSpec] = {
    spec.name: spec
    for spec in (
        openai_chat.SPEC,
        openai_responses.SPEC,
        anthropic.SPEC,
        gemini.SPEC,
        bedrock_converse.SPEC,
        bedrock_anthropic.SPEC,
    )
}
"""The one table of dialects, in the order of ``DIALECTS``."""

_ANTHROPIC_TYPES = frozenset(
    {
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "ping",
    }
)


_CONVERSE_TYPES = frozenset(
    {
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
    }
)


def spec_for(dialect: str) -> DialectSpec:
    """The description of a dialect.

    Raises:
        UnknownDialectError: the name is not one of ``DIALECTS``.
    """
    try:
        return SPECS[dialect]
    except (KeyError, TypeError):
        # TypeError: an unhashable value given as the name is as unknown as any other.
        raise UnknownDialectError(dialect) from None


def reassembler_for(dialect: str, *, rich: bool = True) -> Reassembler:
    """A fresh reassembler for a dialect name.

    Raises:
        UnknownDialectError: the name is not one of ``DIALECTS``.
    """
    return spec_for(dialect).reassembler(rich=rich)


def accepts_unterminated(dialect: str | None, data: str) -> bool:
    """Whether a final event without its blank line, with this data, is read: by the
    dialect's own rule, or by any dialect's while it is not yet known."""
    if dialect is not None:
        return spec_for(dialect).accepts_unterminated(data)
    return any(spec.accepts_unterminated(data) for spec in SPECS.values())


def detect_dialect(event: ServerSentEvent) -> Dialect | None:
    """Recognise the dialect from one event, or ``None`` if this event does not tell.

    Each provider's first meaningful event is unmistakable: Responses types start with
    ``response.``, Anthropic's are the Messages event types, a Chat chunk has
    ``choices``, a Gemini response has ``candidates`` (or ``promptFeedback``). An error
    object is attributed by its shape (Google's carries an RPC ``status``).
    """
    name = event.event
    # Bedrock's event types name themselves (event-stream messages, never SSE events);
    # an AWS exception before any event is Converse's, the dialect that says less.
    if name in _CONVERSE_TYPES:
        return "bedrock_converse"
    if name == "chunk":
        return "bedrock_anthropic"
    if name.endswith(("Exception", "exception")):
        # "exception": an exception message without its :exception-type.
        return "bedrock_converse"
    if name.startswith("response."):
        return "openai_responses"
    if name in _ANTHROPIC_TYPES:
        return "anthropic"
    data = event.data
    payload: Any
    if data is PARSED_DATA:
        payload = cast(ParsedEvent, event).payload
    elif not data or data.isspace() or data == "[DONE]":
        return None
    else:
        try:
            payload = _json.loads(data)
        except ValueError:
            return None
    if not isinstance(payload, dict):
        return None
    if name == "error" and "errorCode" in payload:
        # An event-stream error message, as the framing writes it ({"errorCode",
        # "message"}): AWS's, and no SSE provider's error has that shape.
        return "bedrock_converse"
    kind = payload.get("type")
    if isinstance(kind, str):
        if kind.startswith("response."):
            return "openai_responses"
        if kind in _ANTHROPIC_TYPES:
            return "anthropic"
        if kind == "error":
            # Anthropic nests {"type", "message"} under "error"; Responses puts the code
            # and message beside "type".
            error = payload.get("error")
            return (
                "anthropic" if isinstance(error, dict) and "type" in error else "openai_responses"
            )
    if "choices" in payload or payload.get("object") == "chat.completion.chunk":
        return "openai_chat"
    if "candidates" in payload or "promptFeedback" in payload or "usageMetadata" in payload:
        return "gemini"
    error = payload.get("error")
    if isinstance(error, dict):
        return "gemini" if isinstance(error.get("status"), str) else "openai_chat"
    return None
