"""Anthropic Messages API."""

from __future__ import annotations

import re

from ...naming import NameRule
from .._common import is_whole_json
from .._spec import DialectSpec
from . import messages
from .stream import AnthropicReassembler

__all__ = ["AnthropicReassembler", "SPEC"]

SPEC = DialectSpec(
    name="anthropic",
    reassembler=AnthropicReassembler,
    format_results=messages.format_results,
    assistant_turn=messages.assistant_turn,
    tool_declarations=messages.tool_declarations,
    build_request=messages.build_request,
    # "Must match the regex ^[a-zA-Z0-9_-]{1,64}$" (the tool guide; the API reference
    # allows 128, we keep the stricter guide).
    name_rule=NameRule(pattern=re.compile(r"[a-zA-Z0-9_-]+"), max_length=64, first_char=None),
    accepts_unterminated=is_whole_json,
)
