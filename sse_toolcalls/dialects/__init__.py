"""The wire formats: one package per dialect, and recognising a dialect from its stream."""

from __future__ import annotations

from typing import Any

from .. import _json
from ..calls import DIALECTS, Dialect
from ..errors import UsageError
from ..sse import ServerSentEvent
from ._common import Reassembler
from .anthropic import AnthropicReassembler
from .gemini import GeminiReassembler
from .openai_chat import ChatReassembler
from .openai_responses import ResponsesReassembler

__all__ = ["DIALECTS", "detect_dialect", "reassembler_for"]

_REASSEMBLERS: dict[str, type[Reassembler]] = {
    "openai_chat": ChatReassembler,
    "openai_responses": ResponsesReassembler,
    "anthropic": AnthropicReassembler,
    "gemini": GeminiReassembler,
}

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


def reassembler_for(dialect: str, *, rich: bool = True) -> Reassembler:
    """A fresh reassembler for a dialect name.

    Raises:
        UsageError: the name is not one of ``DIALECTS``.
    """
    try:
        factory = _REASSEMBLERS[dialect]
    except KeyError:
        raise UsageError(f"unknown dialect {dialect!r}; expected one of {DIALECTS}") from None
    return factory(rich=rich)


def detect_dialect(event: ServerSentEvent) -> Dialect | None:
    """Recognise the dialect from one event, or ``None`` if this event does not tell.

    Each provider's first meaningful event is unmistakable: Responses types start with
    ``response.``, Anthropic's are the Messages event types, a Chat chunk has
    ``choices``, a Gemini response has ``candidates`` (or ``promptFeedback``). An error
    object is attributed by its shape (Google's carries an RPC ``status``).
    """
    name = event.event
    if name.startswith("response."):
        return "openai_responses"
    if name in _ANTHROPIC_TYPES:
        return "anthropic"
    data = event.data
    if not data or data.isspace() or data == "[DONE]":
        return None
    try:
        payload: Any = _json.loads(data)
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
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
