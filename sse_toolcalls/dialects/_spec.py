"""What a dialect is: one frozen description per wire format, and its table's type."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..calls import Dialect
    from ..naming import NameRule
    from ._common import Reassembler


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
    never pass."""
