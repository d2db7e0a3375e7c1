"""Amazon Bedrock ConverseStream (every model Bedrock serves, one wire)."""

from __future__ import annotations

import re

from .._common import is_whole_json
from .._spec import DialectSpec, NameRule, from_messages
from .stream import BedrockConverseReassembler

__all__ = ["SPEC", "BedrockConverseReassembler"]

SPEC = DialectSpec(
    name="bedrock_converse",
    reassembler=BedrockConverseReassembler,
    format_results=from_messages(__name__, "format_results"),
    assistant_turn=from_messages(__name__, "assistant_turn"),
    tool_declarations=from_messages(__name__, "tool_declarations"),
    build_request=from_messages(__name__, "build_request"),
    # ToolSpecification.name: "Length Constraints: Minimum length of 1. Maximum length of
    # 64. Pattern: ^[a-zA-Z0-9_-]{1,64}$" (Bedrock API reference).
    name_rule=NameRule(pattern=re.compile(r"[a-zA-Z0-9_-]+"), max_length=64, first_char=None),
    accepts_unterminated=is_whole_json,
    framing="eventstream",
    # TokenUsage: inputTokens leaves out the prompt tokens read from or written to the
    # cache, reported apart; input counts them all, as the other providers' input does.
    usage={
        "input_tokens": (
            ("inputTokens",),
            ("cacheReadInputTokens",),
            ("cacheWriteInputTokens",),
        ),
        "output_tokens": (("outputTokens",),),
        "cache_read_tokens": (("cacheReadInputTokens",),),
        "cache_write_tokens": (("cacheWriteInputTokens",),),
    },
    # gen_ai.provider.name's well-known value for Bedrock.
    telemetry_name="aws.bedrock",
    endpoint="/converse-stream",
    carried_call_ids=True,
    carried_signature=None,
    json_argument_deltas=True,
)
