"""OpenAI Chat Completions and OpenAI-compatible servers."""

from __future__ import annotations

import re

from .._spec import DialectSpec, NameRule, from_messages
from .stream import ChatReassembler, is_done_or_whole

__all__ = ["ChatReassembler", "SPEC"]

SPEC = DialectSpec(
    name="openai_chat",
    reassembler=ChatReassembler,
    format_results=from_messages(__name__, "format_results"),
    assistant_turn=from_messages(__name__, "assistant_turn"),
    tool_declarations=from_messages(__name__, "tool_declarations"),
    build_request=from_messages(__name__, "build_request"),
    # "a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64"
    name_rule=NameRule(pattern=re.compile(r"[a-zA-Z0-9_-]+"), max_length=64, first_char=None),
    accepts_unterminated=is_done_or_whole,
    framing="sse",
    usage={
        "input_tokens": (("prompt_tokens",),),
        "output_tokens": (("completion_tokens",),),
        "cache_read_tokens": (("prompt_tokens_details", "cached_tokens"),),
        "reasoning_tokens": (("completion_tokens_details", "reasoning_tokens"),),
    },
    telemetry_name="openai",
    endpoint="/chat/completions",
    carried_call_ids=True,
    carried_signature=None,
    json_argument_deltas=True,
)
