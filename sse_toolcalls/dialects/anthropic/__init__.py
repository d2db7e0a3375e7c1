"""Anthropic Messages API."""

from __future__ import annotations

import re

from .._common import is_whole_json
from .._spec import DialectSpec, NameRule, from_messages
from .stream import AnthropicReassembler

__all__ = ["AnthropicReassembler", "SPEC"]

SPEC = DialectSpec(
    name="anthropic",
    reassembler=AnthropicReassembler,
    format_results=from_messages(__name__, "format_results"),
    assistant_turn=from_messages(__name__, "assistant_turn"),
    tool_declarations=from_messages(__name__, "tool_declarations"),
    build_request=from_messages(__name__, "build_request"),
    # "Must match the regex ^[a-zA-Z0-9_-]{1,64}$" (the tool guide; the API reference
    # allows 128, we keep the stricter guide).
    name_rule=NameRule(pattern=re.compile(r"[a-zA-Z0-9_-]+"), max_length=64, first_char=None),
    accepts_unterminated=is_whole_json,
)
