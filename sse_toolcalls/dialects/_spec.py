"""What a dialect is: one frozen description per wire format, and its table's type."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..calls import Dialect
    from ._common import Reassembler


@dataclass(frozen=True, slots=True, kw_only=True)
class NameRule:
    """What one dialect accepts as a function name."""

    pattern: re.Pattern[str]
    """The whole name must match this (anchored with ``fullmatch``)."""

    max_length: int
    """The most characters a name may have."""

    first_char: re.Pattern[str] | None
    """When set, the first character must match it (Gemini: a letter or underscore)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DialectSpec:
    """One wire format, described once (``dialects/<dialect>/__init__.py``); every
    dialect-dependent job of the library looks its dialect up here."""

    name: Dialect
    """The dialect's name (``ToolCall.provider`` of its calls)."""
    reassembler: type[Reassembler]
    """Fragments to calls: one instance per streamed response."""
    format_results: Callable[..., list[dict[str, Any]]]
    """Results to the messages or items that carry them back."""
    assistant_turn: Callable[..., list[dict[str, Any]]]
    """An assistant turn (text and calls) as the provider sent it."""
    tool_declarations: Callable[..., list[dict[str, Any]]]
    """The ``tools`` field of a request."""
    build_request: Callable[..., dict[str, Any]]
    """The JSON body of a request."""
    name_rule: NameRule
    """The function names the provider accepts."""
    accepts_unterminated: Callable[[str], bool]
    """Whether a final event that lacks its blank line (openai-node#2725) is whole and
    should be read, given its data. The SSE spec discards such an event; a cut line must
    never pass: the end check the parser hands to its framer's ``finish``."""
    framing: str
    """The name of the framing its bytes come in (``sse_toolcalls.framing.FRAMINGS``):
    the parser and the edge build the framer from it."""
    usage: Mapping[str, tuple[tuple[str, ...], ...]]
    """Where the provider's raw usage object (``StreamFinished.usage``) reports each
    count of ``sse_toolcalls.runtime.Usage``, by the count's field name: the sum of the
    counts found at these key paths (a count reported in parts, as Anthropic's input)."""
    telemetry_name: str
    """``gen_ai.provider.name`` of the OpenTelemetry GenAI conventions (a well-known value
    where the conventions list one)."""
    endpoint: str
    """A piece of the URL path that names the provider's streaming endpoint and no other
    dialect's (``"/chat/completions"``): a recorded exchange's dialect is read from it."""
    carried_call_ids: bool
    """Whether calls carried over from another provider keep (portable) ids: not where
    the provider pairs results with calls by order and name and refuses ids it did not
    send (Gemini; ``sse_toolcalls.crossing``)."""
    carried_signature: str | None
    """The thought signature the first call of a carried-over turn gets, where the
    provider refuses a turn's calls without one (Gemini 3's documented bypass value)."""
    json_argument_deltas: bool
    """Whether the pieces of ``ToolCallArgumentsDelta.delta`` join into the arguments' JSON
    text (a preview can parse them as they come); Gemini's are path updates instead."""


def from_messages(dialect_package: str, name: str) -> Callable[..., Any]:
    """``name`` of ``<dialect_package>.messages``, imported on its first call.

    A stream needs only the reassembler: the request and result builders (with the
    conversation, naming and JSON-safety modules behind them) cost a third of
    ``import sse_toolcalls`` (``python -X importtime``, issue 16), so they load when a
    request or result is first built.
    """
    target: list[Callable[..., Any]] = []

    def call(*args: Any, **kwargs: Any) -> Any:
        if not target:
            target.append(getattr(import_module(f"{dialect_package}.messages"), name))
        return target[0](*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"``{dialect_package}.messages.{name}``, imported on first call."
    return call
