"""Dialect-neutral entry points: results, assistant turns, tool declarations, requests.

Each function finds the dialect (from the calls' ``provider``, or the ``dialect``
argument) and hands over to ``dialects/<dialect>/messages.py``, where each wire format is
documented. Results always go back in the dialect of the calls they answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .calls import DIALECTS, Dialect, ToolCall, ToolResult, ToolSpec
from .conversation import Conversation
from .dialects.anthropic import messages as _anthropic
from .dialects.gemini import messages as _gemini
from .dialects.openai_chat import messages as _openai_chat
from .dialects.openai_responses import messages as _openai_responses
from .errors import UsageError
from .naming import ToolNameMap

__all__ = ["assistant_turn", "build_request", "format_results", "tool_declarations"]

_Formatter = Callable[..., list[dict[str, Any]]]

_RESULTS: dict[str, _Formatter] = {
    "openai_chat": _openai_chat.format_results,
    "openai_responses": _openai_responses.format_results,
    "anthropic": _anthropic.format_results,
    "gemini": _gemini.format_results,
}
_TURNS: dict[str, _Formatter] = {
    "openai_chat": _openai_chat.assistant_turn,
    "openai_responses": _openai_responses.assistant_turn,
    "anthropic": _anthropic.assistant_turn,
    "gemini": _gemini.assistant_turn,
}
_DECLARATIONS: dict[str, _Formatter] = {
    "openai_chat": _openai_chat.tool_declarations,
    "openai_responses": _openai_responses.tool_declarations,
    "anthropic": _anthropic.tool_declarations,
    "gemini": _gemini.tool_declarations,
}
_REQUESTS: dict[str, Callable[..., dict[str, Any]]] = {
    "openai_chat": _openai_chat.build_request,
    "openai_responses": _openai_responses.build_request,
    "anthropic": _anthropic.build_request,
    "gemini": _gemini.build_request,
}


def _check_dialect(dialect: str) -> Dialect:
    if dialect not in DIALECTS:
        raise UsageError(f"unknown dialect {dialect!r}; expected one of {DIALECTS}")
    return dialect


def _dialect_of(calls: Iterable[ToolCall], dialect: str | None) -> Dialect | None:
    found = {call.provider for call in calls}
    if dialect is not None:
        found.add(_check_dialect(dialect))
    if len(found) > 1:
        raise UsageError(
            f"calls from several dialects {sorted(found)}: each goes back in its own dialect"
        )
    return next(iter(found)) if found else None


def format_results(
    results: Iterable[ToolResult], *, names: ToolNameMap | None = None
) -> list[dict[str, Any]]:
    """The provider-native message(s) carrying ``results`` back, in their calls' dialect.

    Chat: one ``role: "tool"`` message per result. Responses: one ``function_call_output``
    item per result. Anthropic: one user message of ``tool_result`` blocks. Gemini: one
    user content of ``functionResponse`` parts. Always in call order (``call.index``),
    whatever order ``results`` come in; each result carries exactly its own call's id.
    Pass ``names`` when the calls were mapped to registry names with it, so Gemini's
    ``functionResponse.name`` is the name the model used.

    Returns:
        The messages or items to append to the next request; ``[]`` for no results.

    Raises:
        UsageError: results answer calls of several dialects, two answer the same call, or
            a dialect that needs ids meets a call without one. Content JSON cannot hold
            (a set, an object, NaN) is written as its nearest JSON value, never refused:
            see :mod:`sse_toolcalls._jsonsafe`.
    """
    items = list(results)
    dialect = _dialect_of((r.call for r in items), None)
    if dialect is None:
        return []
    return _RESULTS[dialect](items, names=names)


def assistant_turn(
    text: str,
    calls: Sequence[ToolCall],
    *,
    dialect: str | None = None,
    names: ToolNameMap | None = None,
) -> list[dict[str, Any]]:
    """The assistant turn (its text and its calls, as the provider sent them) in the
    calls' dialect, to continue a conversation.

    ``dialect`` is needed only for a turn without calls.

    Returns:
        The messages or items of the turn (one message, except Responses: one item per
        text and per call); ``[]`` where the dialect refuses an empty turn.

    Raises:
        UsageError: calls of several dialects (or other than ``dialect``), no calls and no
            ``dialect``, or a dialect that needs ids meets a call without one.
    """
    found = _dialect_of(calls, dialect)
    if found is None:
        raise UsageError("a turn without calls needs its dialect")
    return _TURNS[found](text, calls, names=names)


def tool_declarations(
    dialect: str, tools: Sequence[ToolSpec], *, names: ToolNameMap | None = None
) -> list[dict[str, Any]]:
    """The ``tools`` field of a ``dialect`` request, under legal wire names (``names``, or
    a ``ToolNameMap`` built from the tools).

    Raises:
        UsageError: an unknown dialect, duplicate tool names, or a schema Gemini cannot take.
    """
    return _DECLARATIONS[_check_dialect(dialect)](tools, names=names)


def build_request(
    dialect: str,
    conversation: Conversation,
    tools: Sequence[ToolSpec] = (),
    *,
    model: str,
    stream: bool = True,
    **options: Any,
) -> dict[str, Any]:
    """The JSON request body of ``conversation`` with ``tools`` in ``dialect``.

    Paths and headers are the HTTP client's business; see each dialect's ``build_request``
    for its fields and dialect-specific options.

    Raises:
        UsageError: an unknown dialect, or anything the dialect's ``build_request`` raises.
    """
    return _REQUESTS[_check_dialect(dialect)](
        conversation, tools, model=model, stream=stream, **options
    )
