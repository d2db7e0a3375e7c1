"""Anthropic models through Amazon Bedrock's InvokeModelWithResponseStream."""

from __future__ import annotations

from .._common import is_whole_json
from .._spec import DialectSpec, from_messages
from ..anthropic import SPEC as ANTHROPIC
from .stream import BedrockAnthropicReassembler

__all__ = ["SPEC", "BedrockAnthropicReassembler"]

SPEC = DialectSpec(
    name="bedrock_anthropic",
    reassembler=BedrockAnthropicReassembler,
    format_results=from_messages(__name__, "format_results"),
    assistant_turn=from_messages(__name__, "assistant_turn"),
    tool_declarations=from_messages(__name__, "tool_declarations"),
    build_request=from_messages(__name__, "build_request"),
    # The model's own API takes the names (the body is Anthropic's).
    name_rule=ANTHROPIC.name_rule,
    accepts_unterminated=is_whole_json,
    framing="eventstream",
    # The usage of Anthropic's own events (message_start, message_delta).
    usage=ANTHROPIC.usage,
    telemetry_name="aws.bedrock",
    endpoint="/invoke-with-response-stream",
    carried_call_ids=True,
    carried_signature=None,
    json_argument_deltas=True,
)
