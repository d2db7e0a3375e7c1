"""A neutral conversation: the turns of an agent loop, in no provider's format.

Each dialect's ``messages`` module turns a ``Conversation`` into its request body
(``build_request``). This module is pure data; the helpers those modules share (result
content as text, arguments as JSON, results in call order) are in
``dialects/_messages.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._faces import publish
from .calls import ReasoningBlock, ToolCall, ToolResult

__all__ = [
    "AssistantMessage",
    "Conversation",
    "Message",
    "SystemPrompt",
    "ToolResultsMessage",
    "UserMessage",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemPrompt:
    """Instructions for the model. Every dialect has one place for them, so all system
    prompts of a conversation are joined (blank line between) and sent there, wherever
    they stand in the conversation."""

    text: str
    """The instructions."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessage:
    """What the user said."""

    text: str
    """The user's text."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage:
    """One assistant turn as the provider produced it: its visible text and its calls.

    The calls must keep the provider's own names (wire names) or be given with the
    ``ToolNameMap`` that maps them back; ids, signatures and raw arguments are sent back
    exactly as received.
    """

    text: str = ""
    """The visible text of the turn (``""`` when the turn was only calls)."""

    calls: tuple[ToolCall, ...] = ()
    """The complete calls of the turn, in order."""

    reasoning: tuple[ReasoningBlock, ...] = ()
    """The turn's reasoning blocks (``StreamFinished.reasoning``), sent back exactly, each
    before the call it preceded, in requests of the dialect they came in; other dialects
    leave them out."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultsMessage:
    """The results of the calls of the assistant turn just before, one per call."""

    results: tuple[ToolResult, ...]
    """The results; they are sent in call order whatever order they are given in."""


Message = SystemPrompt | UserMessage | AssistantMessage | ToolResultsMessage
"""Anything a conversation holds."""

Conversation = Sequence[Message]
"""A conversation: its messages, oldest first (a list or a tuple)."""

# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
