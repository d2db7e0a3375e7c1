"""OpenAI Responses API."""

from __future__ import annotations

import re

from .._common import is_whole_json
from .._spec import DialectSpec, NameRule, from_messages
from .stream import ResponsesReassembler

__all__ = ["ResponsesReassembler", "SPEC"]

SPEC = DialectSpec(
    name="openai_responses",
    reassembler=ResponsesReassembler,
    format_results=from_messages(__name__, "format_results"),
    assistant_turn=from_messages(__name__, "assistant_turn"),
    tool_declarations=from_messages(__name__, "tool_declarations"),
    build_request=from_messages(__name__, "build_request"),
    # "a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64"
    # (the function tool's name in the Responses reference: Chat Completions' words).
    name_rule=NameRule(pattern=re.compile(r"[a-zA-Z0-9_-]+"), max_length=64, first_char=None),
    accepts_unterminated=is_whole_json,
    framing="sse",
    usage={
        "input_tokens": (("input_tokens",),),
        "output_tokens": (("output_tokens",),),
        "cache_read_tokens": (("input_tokens_details", "cached_tokens"),),
        "reasoning_tokens": (("output_tokens_details", "reasoning_tokens"),),
    },
    # Chat and Responses are both OpenAI's, under one well-known value.
    telemetry_name="openai",
    endpoint="/responses",
    carried_call_ids=True,
    carried_signature=None,
    json_argument_deltas=True,
)
