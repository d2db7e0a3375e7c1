"""OpenAI Responses API."""

from __future__ import annotations

from .._common import is_whole_json
from .._spec import DialectSpec, from_messages
from ..openai_chat import SPEC as _CHAT
from .stream import ResponsesReassembler

__all__ = ["ResponsesReassembler", "SPEC"]

SPEC = DialectSpec(
    name="openai_responses",
    reassembler=ResponsesReassembler,
    format_results=from_messages(__name__, "format_results"),
    assistant_turn=from_messages(__name__, "assistant_turn"),
    tool_declarations=from_messages(__name__, "tool_declarations"),
    build_request=from_messages(__name__, "build_request"),
    # The same rule as Chat Completions, in the same words.
    name_rule=_CHAT.name_rule,
    accepts_unterminated=is_whole_json,
)
