"""OpenAI Responses API."""

from __future__ import annotations

from .._common import is_whole_json
from .._spec import DialectSpec
from ..openai_chat import SPEC as _CHAT
from . import messages
from .stream import ResponsesReassembler

__all__ = ["ResponsesReassembler", "SPEC"]

SPEC = DialectSpec(
    name="openai_responses",
    reassembler=ResponsesReassembler,
    format_results=messages.format_results,
    assistant_turn=messages.assistant_turn,
    tool_declarations=messages.tool_declarations,
    build_request=messages.build_request,
    # The same rule as Chat Completions, in the same words.
    name_rule=_CHAT.name_rule,
    accepts_unterminated=is_whole_json,
)
