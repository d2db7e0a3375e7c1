"""A neutral conversation: the turns of an agent loop, in no provider's format.

Each dialect's ``messages`` module turns a ``Conversation`` into its request body
(``build_request``). The helpers at the bottom are shared by those modules: the one place
where result content becomes text, arguments become JSON, and results are put in call
order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from . import _adopt
from .calls import DIALECTS, ToolCall, ToolResult
from .errors import UnknownDialectError, UsageError

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


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultsMessage:
    """The results of the calls of the assistant turn just before, one per call."""

    results: tuple[ToolResult, ...]
    """The results; they are sent in call order whatever order they are given in."""


Message = SystemPrompt | UserMessage | AssistantMessage | ToolResultsMessage
"""Anything a conversation holds."""

Conversation = Sequence[Message]
"""A conversation: its messages, oldest first (a list or a tuple)."""


# --------------------------------------------------------------------------------------
# Helpers shared by the dialect modules (not part of the public surface).


def json_text(value: Any) -> str:
    """``value`` as compact JSON text.

    Raises:
        UsageError: ``value`` cannot be encoded as JSON (a set, an arbitrary object...).
            NaN and infinities are written as ``null``, as orjson does.
    """
    try:
        return orjson.dumps(value).decode("utf-8")
    except orjson.JSONEncodeError as exc:
        raise UsageError(f"tool result content is not JSON-encodable: {exc}") from exc


def content_text(content: str | dict[str, Any] | list[Any]) -> str:
    """Result content as text: a string as it is, any other value as JSON."""
    return content if isinstance(content, str) else json_text(content)


def error_object(content: str | dict[str, Any] | list[Any]) -> dict[str, Any]:
    """Error content as a JSON object with an ``"error"`` key (kept as it is when it
    already is one), for dialects that have no error flag."""
    if isinstance(content, dict) and "error" in content:
        return content
    return {"error": content}


def flagless_result_text(result: ToolResult) -> str:
    """The text a dialect without an error flag (Chat, Responses) sends for ``result``.

    An ok result is its content as text. An error result is always a JSON object with an
    ``"error"`` key, so the model can tell a failure from an answer that merely mentions
    one.
    """
    if result.is_error:
        return json_text(error_object(result.content))
    return content_text(result.content)


def arguments_text(call: ToolCall) -> str:
    """The argument text to send back in an assistant turn: the raw text the provider sent
    when it is valid JSON (byte-for-byte what the model wrote), else the JSON of ``args``
    (``{}`` for a call whose arguments could not be parsed)."""
    raw = call.raw_arguments
    if raw.strip():
        try:
            orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
        else:
            return raw
    return json_text(call.args)


def ordered_results(results: Iterable[ToolResult], dialect: str) -> list[ToolResult]:
    """``results`` checked to answer calls of ``dialect``, sorted by ``call.index``.

    Providers match Anthropic and Gemini results by position as well as by id, and Chat
    wants every ``tool`` message right after its assistant turn, so results always go out
    in call order; the sort is stable, so equal indexes keep the order given.

    Raises:
        UsageError: a result answers a call of another dialect, or two results answer the
            same call (same index and id).
    """
    if dialect not in DIALECTS:
        raise UnknownDialectError(dialect)
    items = list(results)
    seen: set[tuple[int, str | None]] = set()
    for result in items:
        call = result.call
        if call.provider != dialect:
            raise UsageError(
                f"result for call {call.call_id!r} ({call.name!r}) came from dialect "
                f"{call.provider!r}, not {dialect!r}: results go back in their call's dialect"
            )
        key = (call.index, call.call_id)
        if key in seen:
            raise UsageError(
                f"two results answer the same call (index {call.index}, id {call.call_id!r})"
            )
        seen.add(key)
    return sorted(items, key=lambda r: r.call.index)


def system_text(conversation: Conversation) -> str | None:
    """All system prompts of ``conversation`` joined by a blank line, or ``None``."""
    texts = [m.text for m in conversation if isinstance(m, SystemPrompt)]
    return "\n\n".join(texts) if texts else None


def merge_options(body: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """``body`` with the caller's extra request fields added.

    Raises:
        UsageError: an option would replace a field the body builder owns (the messages,
            tools, model or stream flag), which would silently drop part of the request.
    """
    clash = sorted(set(body) & set(options))
    if clash:
        raise UsageError(f"options {clash} clash with fields build_request sets itself")
    body.update(options)
    return body


def require_call_id(call: ToolCall, dialect: str) -> str:
    """The call's id, for dialects where a result cannot be addressed without one.

    Raises:
        UsageError: the call has no id (``None``).
    """
    if call.call_id is None:
        raise UsageError(
            f"call {call.name!r} (index {call.index}) has no id; {dialect} results need one"
        )
    return call.call_id


# Last, once the classes exist: they take the path users import them from (see the root).
_adopt(__name__)
