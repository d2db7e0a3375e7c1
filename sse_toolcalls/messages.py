"""Dialect-neutral entry points: results, assistant turns, tool declarations, requests.

Each function finds the dialect (from the calls' ``provider``, or the ``dialect``
argument) and hands over to ``dialects/<dialect>/messages.py``, where each wire format is
documented; the dialect's ``DialectSpec`` (``dialects/<dialect>/__init__.py``) names
them. Results always go back in the dialect of the calls they answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .calls import Dialect, ReasoningBlock, ToolCall, ToolResult, ToolSpec
from .conversation import Conversation
from .dialects import spec_for
from .dialects.naming import ToolNameMap
from .errors import UsageError

__all__ = ["as_dialect", "assistant_turn", "build_request", "format_results", "tool_declarations"]


def as_dialect(name: str) -> Dialect:
    """``name`` as a :data:`~sse_toolcalls.Dialect`, for a name that arrives as plain text
    (a command line, a manifest, an environment variable) before it reaches a typed
    parameter. The dialects' table answers, as it does for every function here.

    Returns:
        The same name, now typed as one of ``DIALECTS``.

    Raises:
        UnknownDialectError: the name is not one of ``DIALECTS``.
    """
    return spec_for(name).name


def _dialect_of(calls: Iterable[ToolCall], dialect: str | None) -> Dialect | None:
    found = {call.provider for call in calls}
    if dialect is not None:
        found.add(as_dialect(dialect))
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
    item per result. Anthropic (and Bedrock's InvokeModel): one user message of
    ``tool_result`` blocks. Gemini: one user content of ``functionResponse`` parts.
    Bedrock Converse: one user message of ``toolResult`` blocks. Always in call order
    (``call.index``), whatever order ``results`` come in; each result carries exactly its
    own call's id.
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
    return spec_for(dialect).format_results(items, names=names)


def assistant_turn(
    text: str,
    calls: Sequence[ToolCall],
    *,
    dialect: Dialect | None = None,
    names: ToolNameMap | None = None,
    reasoning: Sequence[ReasoningBlock] = (),
) -> list[dict[str, Any]]:
    """The assistant turn (its reasoning blocks, its text and its calls, as the provider
    sent them) in the calls' dialect, to continue a conversation. Reasoning blocks go
    back only to the dialect they came from (Anthropic thinking, Responses reasoning).

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
    return spec_for(found).assistant_turn(text, calls, names=names, reasoning=reasoning)


def tool_declarations(
    dialect: Dialect,
    tools: Sequence[ToolSpec],
    *,
    names: ToolNameMap | None = None,
    strict: bool = False,
) -> list[dict[str, Any]]:
    """The ``tools`` field of a ``dialect`` request, under legal wire names (``names``, or
    a ``ToolNameMap`` built from the tools).

    Raises:
        UnknownDialectError: an unknown dialect.
        UsageError: duplicate tool names, or a schema Gemini cannot take.
    """
    return spec_for(dialect).tool_declarations(tools, names=names, strict=strict)


def build_request(
    dialect: Dialect,
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
        UnknownDialectError: an unknown dialect.
        UsageError: anything the dialect's ``build_request`` raises.
    """
    return spec_for(dialect).build_request(
        conversation, tools, model=model, stream=stream, **options
    )
