"""The conversation store: what ``Agent.run(text, conversation_id=...)`` continues from.

A conversation is kept as its **exchanges**: one per user request (its
``request_id``), holding the messages that request added (the user's message, the
assistant turns, the tool results), oldest first. Saving is by (conversation id,
request id), so a request re-submitted after a crash or a lost reply *replaces* its own
exchange instead of adding the user's message twice, and it continues from the
exchanges saved before it (:func:`history_before`), exactly as its first attempt did.

Three stores, one protocol (:class:`ConversationStore`), one module each in this package:
:class:`~.memory.InMemoryConversationStore` (the default, one process, bounded),
:class:`~.sqlite.SQLiteConversationStore` (a file, beside the SQLite ledger or in it) and
:class:`~.postgres.PostgresConversationStore`. Messages
are stored as JSON by :func:`messages_to_json` / :func:`messages_from_json`, one codec for
every store; a stored value that does not decode is a
:class:`~sse_toolcalls.runtime.errors.ConversationStoreError`, never another exception.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

import anyio
import anyio.to_thread

from ..._faces import publish
from ..._jsonsafe import dumps_safe
from ...calls import DIALECTS, ToolCall, ToolResult
from ...conversation import (
    AssistantMessage,
    Message,
    SystemPrompt,
    ToolResultsMessage,
    UserMessage,
)
from ..errors import ConversationStoreError

__all__ = [
    "DEFAULT_MAX_CONVERSATIONS",
    "DEFAULT_STORE_TIMEOUT_S",
    "ConversationStore",
    "Exchange",
    "history_before",
    "messages_from_json",
    "messages_to_json",
]

_T = TypeVar("_T")

DEFAULT_STORE_TIMEOUT_S = 20.0
"""How long an agent waits for its store's ``load`` or ``save``, in seconds: past it the
store has failed (a ``load``: the run answers with the ``internal_error`` fallback and
runs nothing; a ``save``: the reply still goes out, with a ``store_error``
diagnostic). As the ledger's ``DEFAULT_LEDGER_TIMEOUT_S``: longer than a working
database takes through a failover, short of a person giving up on the reply."""


async def within_deadline(what: str, seconds: float, op: Callable[[], Awaitable[_T]]) -> _T:
    """``await op()``, a call to a store, or :class:`ConversationStoreError` when it has
    not answered after ``seconds`` (a frozen server must not hold the reply for good).

    Raises:
        ConversationStoreError: no answer in time; whatever ``op`` raises otherwise.
    """
    with anyio.move_on_after(seconds):
        return await op()
    raise ConversationStoreError(
        f"the conversation store's {what} did not answer within {seconds} s"
    )


DEFAULT_MAX_CONVERSATIONS = 10_000
"""Conversations the in-memory store keeps, least recently used dropped first: a
process serving more people than that at once wants a database (the SQLite or Postgres
store), and a bound keeps a long-running process from growing without end."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Exchange:
    """The messages one user request added to a conversation."""

    request_id: str
    """The request's id (``Agent.run(..., request_id=...)``)."""

    messages: tuple[Message, ...]
    """What it added, oldest first: the user's message, assistant turns, results."""

    saved_at: float = 0.0
    """When it was last saved, in seconds since the epoch."""


@runtime_checkable
class ConversationStore(Protocol):
    """Where conversations are kept. Coroutines that must not block the event loop."""

    async def load(self, conversation_id: str) -> list[Exchange]:
        """The conversation's exchanges, oldest first (``[]`` for a new one).

        Raises:
            ConversationStoreError: the store cannot be read, or a stored exchange
                does not decode.
        """
        ...

    async def save(
        self, conversation_id: str, request_id: str, messages: Sequence[Message]
    ) -> None:
        """Set the exchange of ``request_id``: appended when new, replaced in place when
        the request was saved before (a re-submitted or resumed request).

        Raises:
            ConversationStoreError: the store cannot be written.
        """
        ...


def history_before(exchanges: Sequence[Exchange], request_id: str) -> list[Message]:
    """The history a request continues from: every exchange before its own (all of
    them when it is new), joined."""
    messages: list[Message] = []
    for exchange in exchanges:
        if exchange.request_id == request_id:
            break
        messages += exchange.messages
    return messages


# --------------------------------------------------------------------------------------
# The codec.


def _call_json(call: ToolCall) -> dict[str, Any]:
    return {
        "name": call.name,
        "args": call.args,
        "provider": call.provider,
        "call_id": call.call_id,
        "index": call.index,
        "raw_arguments": call.raw_arguments,
        "arguments_error": call.arguments_error,
        "thought_signature": call.thought_signature,
        "item_id": call.item_id,
    }


def _message_json(message: Message) -> dict[str, Any]:
    if isinstance(message, UserMessage):
        return {"type": "user", "text": message.text}
    if isinstance(message, SystemPrompt):
        return {"type": "system", "text": message.text}
    if isinstance(message, AssistantMessage):
        return {
            "type": "assistant",
            "text": message.text,
            "calls": [_call_json(c) for c in message.calls],
        }
    return {
        "type": "results",
        "results": [
            {"call": _call_json(r.call), "content": r.content, "is_error": r.is_error}
            for r in message.results
        ],
    }


def messages_to_json(messages: Sequence[Message]) -> str:
    """The messages as JSON text (never raises: odd values are written as JSON can)."""
    return dumps_safe([_message_json(m) for m in messages]).decode("utf-8")


class _Bad(ValueError):
    pass


def _field(data: dict[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    value = data.get(name)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise _Bad(f"{name} is {type(value).__name__}")
    return value


def _optional_text(data: dict[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is not None and not isinstance(value, str):
        raise _Bad(f"{name} is {type(value).__name__}")
    return value


def _call(data: Any) -> ToolCall:
    if not isinstance(data, dict):
        raise _Bad("a call is not an object")
    provider = _field(data, "provider", str)
    if provider not in DIALECTS:
        raise _Bad(f"unknown provider {provider!r}")
    return ToolCall(
        name=_field(data, "name", str),
        args=_field(data, "args", dict),
        provider=provider,
        call_id=_optional_text(data, "call_id"),
        index=_field(data, "index", int),
        raw_arguments=_field(data, "raw_arguments", str),
        arguments_error=_optional_text(data, "arguments_error"),
        thought_signature=_optional_text(data, "thought_signature"),
        item_id=_optional_text(data, "item_id"),
    )


def _message(data: Any) -> Message:
    if not isinstance(data, dict):
        raise _Bad("a message is not an object")
    kind = data.get("type")
    if kind == "user":
        return UserMessage(text=_field(data, "text", str))
    if kind == "system":
        return SystemPrompt(text=_field(data, "text", str))
    if kind == "assistant":
        calls = _field(data, "calls", list)
        return AssistantMessage(text=_field(data, "text", str), calls=tuple(map(_call, calls)))
    if kind == "results":
        results = []
        for item in _field(data, "results", list):
            if not isinstance(item, dict):
                raise _Bad("a result is not an object")
            results.append(
                ToolResult(
                    call=_call(item.get("call")),
                    content=_field(item, "content", (str, dict, list)),
                    is_error=_field(item, "is_error", bool),
                )
            )
        return ToolResultsMessage(results=tuple(results))
    raise _Bad(f"unknown message type {kind!r}")


def messages_from_json(text: str | bytes) -> tuple[Message, ...]:
    """The messages :func:`messages_to_json` wrote.

    Raises:
        ConversationStoreError: the text is not such a list of messages.
    """
    try:
        data = json.loads(text)
        if not isinstance(data, list):
            raise _Bad("not a list of messages")
        return tuple(_message(item) for item in data)
    except (ValueError, RecursionError) as exc:
        raise ConversationStoreError(f"a stored conversation does not decode: {exc}") from exc


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
