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
    framing="sse",
    # Anthropic reports the prompt in three parts (uncached, read from the cache, written
    # to it): input counts them all, as the other providers' input does; it does not
    # report reasoning tokens apart.
    usage={
        "input_tokens": (
            ("input_tokens",),
            ("cache_read_input_tokens",),
            ("cache_creation_input_tokens",),
        ),
        "output_tokens": (("output_tokens",),),
        "cache_read_tokens": (("cache_read_input_tokens",),),
        "cache_write_tokens": (("cache_creation_input_tokens",),),
    },
    telemetry_name="anthropic",
    endpoint="/messages",
    carried_call_ids=True,
    carried_signature=None,
    json_argument_deltas=True,
)
