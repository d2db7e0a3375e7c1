"""Google Gemini (AI Studio and Vertex AI)."""

from __future__ import annotations

import re

from .._common import is_whole_json
from .._spec import DialectSpec, NameRule, from_messages
from .stream import GeminiReassembler

__all__ = ["CARRIED_SIGNATURE", "GeminiReassembler", "SPEC"]

CARRIED_SIGNATURE = "skip_thought_signature_validator"
"""The ``thoughtSignature`` of a call carried to Gemini: one of the two dummy strings the
thought signatures guide documents for a trace from another model ("populate the field
with these specific dummy strings": this one, or ``context_engineering_is_the_way_to_go``)."""

SPEC = DialectSpec(
    name="gemini",
    reassembler=GeminiReassembler,
    format_results=from_messages(__name__, "format_results"),
    assistant_turn=from_messages(__name__, "assistant_turn"),
    tool_declarations=from_messages(__name__, "tool_declarations"),
    build_request=from_messages(__name__, "build_request"),
    # "Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain
    # underscores, dots, colons and dashes, with a maximum length of 64."
    name_rule=NameRule(
        pattern=re.compile(r"[a-zA-Z0-9_.:-]+"),
        max_length=64,
        first_char=re.compile(r"[a-zA-Z_]"),
    ),
    accepts_unterminated=is_whole_json,
    framing="sse",
    # Gemini reports thoughts apart from the candidates: output counts both, as the
    # other providers' output counts reasoning.
    usage={
        "input_tokens": (("promptTokenCount",),),
        "output_tokens": (("candidatesTokenCount",), ("thoughtsTokenCount",)),
        "cache_read_tokens": (("cachedContentTokenCount",),),
        "reasoning_tokens": (("thoughtsTokenCount",),),
    },
    telemetry_name="gcp.gemini",
    # partialArgs are path updates (stream.py), not pieces of a JSON text.
    endpoint=":streamGenerateContent",
    json_argument_deltas=False,
    # Gemini pairs responses with calls by order and name, and some of its endpoints
    # refuse an id they did not send (messages.py).
    carried_call_ids=False,
    # Gemini 3 refuses the current turn's calls without a thoughtSignature on the first.
    carried_signature=CARRIED_SIGNATURE,
)
