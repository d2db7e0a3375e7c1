"""Parsed error objects handed in without an event name are told as errors (issue 29,
item 12): by the dialect detection when no dialect is given, and by the edge's check of
a stream's first events when another dialect's shape arrives (a proxy's error in another
vendor's shape is still this stream's error, never "a stream of another dialect"). The
same objects as bytes give the same outcome."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sse_toolcalls import (
    MalformedStreamError,
    ProviderError,
    ToolCallParser,
    as_dialect,
    parse_tool_calls,
)

SHAPES: dict[str, dict[str, Any]] = {
    "openai_chat": {"error": {"message": "overloaded", "type": "server_error", "code": None}},
    "gemini": {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}},
    "openai_responses": {
        "type": "error",
        "code": "server_error",
        "message": "overloaded",
        "param": None,
        "sequence_number": 1,
    },
    "anthropic": {"type": "error", "error": {"type": "overloaded_error", "message": "Over"}},
}

# (the dialect given, the shape's dialect): the shapes a dialect reads as its error. The
# given dialect differs from the detected one in the crossed pairs, where only the edge's
# error test lets the object through to the dialect.
READ_AS_ERRORS = [
    *((None, shape) for shape in SHAPES),
    *((shape, shape) for shape in SHAPES),
    ("openai_chat", "gemini"),
    ("gemini", "openai_chat"),
    ("openai_chat", "anthropic"),
    ("gemini", "anthropic"),
    ("openai_responses", "anthropic"),
    ("anthropic", "openai_responses"),
]


def _bytes_outcome(dialect: str | None, payload: dict[str, Any]) -> str:
    parser = ToolCallParser(None if dialect is None else as_dialect(dialect))
    try:
        parser.feed(b"data: " + json.dumps(payload).encode() + b"\n\n")
        parser.finish()
    except (ProviderError, MalformedStreamError) as exc:
        return type(exc).__name__
    return "ok"


@pytest.mark.parametrize(("given", "shape"), READ_AS_ERRORS)
def test_a_parsed_error_object_without_event_name_is_a_provider_error(
    given: str | None, shape: str
) -> None:
    payload = SHAPES[shape]
    dialect = None if given is None else as_dialect(given)
    with pytest.raises(ProviderError) as caught:
        list(parse_tool_calls([payload], dialect))
    assert "overloaded" in caught.value.message.lower() or caught.value.message == "Over"
    # Detection without the edge (the parser's own feed_event) agrees.
    parser = ToolCallParser(dialect)
    with pytest.raises(ProviderError):
        parser.feed_event(payload)
    # And the error comes after a good first event too, as the stream's error.
    if given is not None and given != shape and shape != "anthropic":
        assert _bytes_outcome(given, payload) == "ProviderError"


def test_a_parsed_object_of_another_dialect_that_is_no_error_is_refused() -> None:
    # The other side of the rule: the check that lets errors through still refuses a
    # stream of another dialect (so an always-true error test would fail here).
    chunk = {"choices": [{"index": 0, "delta": {"content": "hi"}}]}
    with pytest.raises(MalformedStreamError, match="looks like openai_chat"):
        list(parse_tool_calls([chunk], "gemini"))


def _parsed_outcome(dialect: str | None, payload: dict[str, Any]) -> str:
    try:
        list(parse_tool_calls([payload], None if dialect is None else as_dialect(dialect)))
    except (ProviderError, MalformedStreamError) as exc:
        return type(exc).__name__
    except Exception as exc:  # a truncation, or anything else: recorded as what it is
        return type(exc).__name__
    return "ok"


# Chat reads an error by its "error" key only: a Responses-shaped object ({"type":
# "error", "code", "message"}) as bytes has no event name to tell it, and one more dict
# lookup on every chunk of the hottest dialect was not taken for it (reported).
_CHAT_KEEPS = {("openai_chat", "openai_responses")}


@pytest.mark.parametrize("given", ["openai_chat", "openai_responses", "anthropic", "gemini"])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_dialect_reads_every_vendors_error_object_as_its_error(
    given: str, shape: str
) -> None:
    # A proxy in front of one vendor answers in another's shape: before, Responses and
    # Anthropic skipped {"error": {...}} as an unknown event and the stream ended as
    # "truncated" (retried as a dropped connection), Gemini skipped the Responses shape.
    first = {
        "openai_chat": {"choices": [{"index": 0, "delta": {"content": "hi"}}]},
        "openai_responses": {"type": "response.created", "response": {"id": "r"}},
        "anthropic": {"type": "message_start", "message": {"id": "m", "content": []}},
        "gemini": {"candidates": [{"content": {"parts": [{"text": "hi"}]}}]},
    }[given]
    payload = SHAPES[shape]
    parser = ToolCallParser(as_dialect(given))
    try:
        for item in (first, payload):
            parser.feed(b"data: " + json.dumps(item).encode() + b"\n\n")
        parser.finish()
        as_bytes = "ok"
    except Exception as exc:
        as_bytes = type(exc).__name__
    if (given, shape) in _CHAT_KEEPS:
        assert as_bytes == "TruncatedStreamError"
        return
    assert as_bytes == "ProviderError"
    assert _parsed_outcome(given, payload) == "ProviderError"
