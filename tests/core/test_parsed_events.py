"""Parsed events (``StreamParser.feed_event``) against the text path, event by event.

The oracle is the text path: each parsed object written as an SSE event by a test-only
encoder (compact JSON, non-ASCII escaped, without recursion, NaN written as ``NaN``) and
fed as bytes. For every event of the corpora, and for hostile objects (too deep, NaN and
Infinity, integers past 64 bits and past a double, lone surrogates, events too large),
both ways must give the same stream events, or the same kind of error (and the same
limit). Values no JSON text can carry (sets, bytes, non-string keys, other objects) have
no text to compare with: they are a ``UsageError``, and the parser takes no more input.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sse_toolcalls import (
    Dialect,
    LimitExceededError,
    SSEToolCallsError,
    StreamEvent,
    StreamParser,
    UsageError,
    as_dialect,
)
from sse_toolcalls.dialects import spec_for
from sse_toolcalls.dialects._parsed import ParsedEvent, parsed_event
from sse_toolcalls.framing.sse import DEFAULT_MAX_EVENT_BYTES
from sse_toolcalls.parser import new_framer
from tests.core.test_eventstream_wire import STRING, bedrock_event
from tests.core.test_eventstream_wire import encode as encode_message
from tests.outside import EXTERNAL_STREAMS, outside_corpus

ROOT = Path(__file__).resolve().parent.parent.parent
CORPORA = [ROOT / "recorded_streams", EXTERNAL_STREAMS]

Events = list[tuple[str, dict[str, Any]]]


def load() -> list[tuple[str, Dialect, Events]]:
    streams = []
    for corpus in CORPORA:
        manifest = corpus / "MANIFEST.json"
        if not manifest.exists():
            continue
        for entry in json.loads(manifest.read_text()):
            provider = entry["provider"]
            dialect = (
                "openai_chat" if provider.startswith("openai_compat_") else as_dialect(provider)
            )
            # Each stream in its dialect's framing (Bedrock's: AWS's event stream).
            framer = new_framer(spec_for(dialect).framing, DEFAULT_MAX_EVENT_BYTES)
            raw = (corpus / entry["file"]).read_bytes()
            events: Events = []
            for event in framer.feed(raw) + framer.finish(unterminated=lambda _: True):
                try:
                    # As the SDKs parse the wire: the stdlib's json.loads.
                    payload = json.loads(event.data)
                except ValueError:
                    continue
                if isinstance(payload, dict):
                    events.append((event.event, payload))
            if events:
                streams.append((f"{corpus.name}/{entry['file']}", dialect, events))
    return streams


STREAMS = load()


def test_every_stream_of_the_own_corpus_is_read() -> None:
    # A stream framed in the wrong framing gives no events and would drop out unseen
    # (Bedrock's binary bodies through the SSE framer did).
    manifest = json.loads((ROOT / "recorded_streams" / "MANIFEST.json").read_text())
    read = {name for name, _, _ in STREAMS}
    assert {f"recorded_streams/{entry['file']}" for entry in manifest} <= read


@outside_corpus
def test_the_outside_corpus_is_among_the_streams() -> None:
    """Without ``../shared/`` the streams above are the project's own only: this test
    makes that visible (skipped, or failed when the outside corpus is required)."""
    assert any(s[0].startswith("external_streams/") for s in STREAMS)


def encode(value: Any) -> str:
    """Compact JSON text, written without recursion (a test-only oracle, issue 12)."""
    out: list[str] = []
    todo: list[Any] = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, _Text):
            out.append(item.text)
        elif isinstance(item, dict):
            out.append("{")
            todo.append(_Text("}"))
            for position, (key, child) in reversed(list(enumerate(item.items()))):
                todo.append(child)
                todo.append(_Text(("," if position else "") + json.dumps(key) + ":"))
        elif isinstance(item, list):
            out.append("[")
            todo.append(_Text("]"))
            for position, child in reversed(list(enumerate(item))):
                todo.append(child)
                if position:
                    todo.append(_Text(","))
        else:
            out.append(json.dumps(item))  # NaN as NaN, surrogates as \ud800
    return "".join(out)


class _Text:
    def __init__(self, text: str) -> None:
        self.text = text


Outcome = tuple[str, list[StreamEvent], str | None]


def as_message(name: str, payload: dict[str, Any]) -> bytes:
    """One event as the event-stream message it was read from: an ``exception`` message
    (AWS's exception names end in "Exception"), an ``error`` message, or an event."""
    if name.endswith("Exception"):
        headers = [(":exception-type", STRING, name), (":message-type", STRING, "exception")]
        return encode_message(headers, encode(payload).encode())
    if name == "error" and "errorCode" in payload:
        headers = [
            (":message-type", STRING, "error"),
            (":error-code", STRING, payload["errorCode"]),
            (":error-message", STRING, payload["message"]),
        ]
        return encode_message(headers, b"")
    return bedrock_event(name, encode(payload).encode())


def via_text(
    dialect: Dialect | None, events: Events, max_event_bytes: int, *, framing: str = "sse"
) -> Outcome:
    parser = StreamParser(dialect, max_event_bytes=max_event_bytes)
    out: list[StreamEvent] = []
    try:
        for name, payload in events:
            if framing == "eventstream":
                out += parser.feed(as_message(name, payload))
                continue
            head = "" if name == "message" else f"event: {name}\n"
            out += parser.feed(f"{head}data: {encode(payload)}\n\n".encode())
        out += parser.finish()
    except SSEToolCallsError as exc:
        return type(exc).__name__, out, getattr(exc, "limit_name", None)
    return "ok", out, None


def via_objects(dialect: Dialect | None, events: Events, max_event_bytes: int) -> Outcome:
    parser = StreamParser(dialect, max_event_bytes=max_event_bytes)
    out: list[StreamEvent] = []
    try:
        for name, payload in events:
            out += parser.feed_event(payload, name)
        out += parser.finish()
    except SSEToolCallsError as exc:
        return type(exc).__name__, out, getattr(exc, "limit_name", None)
    return "ok", out, None


@pytest.mark.parametrize(("name", "dialect", "events"), STREAMS, ids=[s[0] for s in STREAMS])
def test_every_corpus_stream_reads_the_same_as_objects(
    name: str, dialect: Dialect, events: Events
) -> None:
    framing = spec_for(dialect).framing
    for given_dialect in (dialect, None):
        text = via_text(given_dialect, events, DEFAULT_MAX_EVENT_BYTES, framing=framing)
        objects = via_objects(given_dialect, events, DEFAULT_MAX_EVENT_BYTES)
        assert objects == text, name


# -- hostile objects ----------------------------------------------------------------------


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


HOSTILE_VALUES = st.one_of(
    st.integers(min_value=1, max_value=140).map(nested),
    st.sampled_from([1030, 1100]).map(nested),
    st.sampled_from([math.nan, math.inf, -math.inf]),
    st.sampled_from([2**64, 2**70, -(2**90), 10**30, 10**308, 10**309, 2**1024, -(10**400)]),
    st.sampled_from(["\ud800", "a\udfffb", "é\ud83d"]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)


def _anthropic(value: Any) -> Events:
    return [
        ("message_start", {"type": "message_start", "message": {"id": "m", "usage": {}}}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {
                    "type": "tool_use",
                    "id": "t",
                    "name": "f",
                    "input": {"v": value},
                },
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        ("message_stop", {"type": "message_stop"}),
    ]


def _gemini(value: Any) -> Events:
    part = {"functionCall": {"name": "f", "args": {"v": value}}}
    return [
        (
            "message",
            {"candidates": [{"content": {"parts": [part]}, "finishReason": "STOP"}]},
        )
    ]


def _chat(value: Any) -> Events:
    function = {"name": "f", "arguments": {"v": value}}
    chunk = {"tool_calls": [{"index": 0, "id": "c", "function": function}]}
    return [
        ("message", {"choices": [{"index": 0, "delta": chunk, "finish_reason": None}]}),
        ("message", {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ]


def _elsewhere(value: Any) -> Events:
    # The value in a field no dialect reads (a Responses event's extra key).
    return [
        ("response.created", {"type": "response.created", "extra": value, "response": {}}),
        ("response.completed", {"type": "response.completed", "response": {"output": []}}),
    ]


SHAPES = {
    "anthropic": _anthropic,
    "gemini": _gemini,
    "openai_chat": _chat,
    "openai_responses": _elsewhere,
}


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    dialect=st.sampled_from(sorted(SHAPES)),
    value=HOSTILE_VALUES,
    detect=st.booleans(),
)
def test_hostile_objects_read_the_same_as_their_text(
    dialect: Dialect, value: Any, detect: bool
) -> None:
    events = SHAPES[dialect](value)
    given_dialect = None if detect else dialect
    text = via_text(given_dialect, events, DEFAULT_MAX_EVENT_BYTES)
    objects = via_objects(given_dialect, events, DEFAULT_MAX_EVENT_BYTES)
    assert objects == text


@pytest.mark.parametrize("size", [100, 10_000])
def test_an_event_too_large_is_refused_as_its_text_is(size: int) -> None:
    events = _anthropic("x" * size)
    # Far from the limit either way: the object path counts a lower bound of the size.
    for limit in (size // 4, size * 4):
        text = via_text("anthropic", events, limit)
        assert via_objects("anthropic", events, limit) == text
    assert via_objects("anthropic", events, size // 4)[0] == "EventTooLargeError"


class Opaque:
    pass


@pytest.mark.parametrize(
    "value",
    [{1, 2}, b"bytes", {1: "int key"}, {None: 1}, Opaque(), (1, 2), 1j],
    ids=["set", "bytes", "int-key", "none-key", "object", "tuple", "complex"],
)
def test_values_no_json_can_carry_are_a_usage_error(value: Any) -> None:
    parser = StreamParser("anthropic")
    parser.feed_event({"type": "message_start", "message": {"id": "m", "usage": {}}})
    with pytest.raises(UsageError, match="is not JSON"):
        parser.feed_event(_anthropic(value)[1][1])
    with pytest.raises(UsageError, match="failed"):
        parser.feed_event({"type": "message_stop"})


def test_a_parsed_event_is_read_as_it_is_not_as_text() -> None:
    payload = {"type": "message_start", "message": {"id": "m", "usage": {"n": 2**70}}}
    event = parsed_event(payload, max_event_bytes=DEFAULT_MAX_EVENT_BYTES)
    assert isinstance(event, ParsedEvent)
    assert event.payload is payload
    assert event.event == "message_start"
    # Nested past MAX_EVENT_DEPTH: written out once, for the dialect's own depth rule.
    deep = parsed_event({"x": nested(200)}, max_event_bytes=DEFAULT_MAX_EVENT_BYTES)
    assert not isinstance(deep, ParsedEvent)
    assert json.loads(deep.data) == {"x": nested(200)}


def test_a_parsed_error_event_is_reported_with_its_text() -> None:
    parser = StreamParser("openai_chat")
    with pytest.raises(SSEToolCallsError) as caught:
        parser.feed_event({"error": {"message": "overloaded", "code": "busy"}})
    assert "overloaded" in str(caught.value)


def test_limits_name_themselves_on_both_paths() -> None:
    events = _anthropic(nested(140))
    outcome = via_objects("anthropic", events, DEFAULT_MAX_EVENT_BYTES)
    assert outcome[0] == LimitExceededError.__name__
    assert outcome[2] == "MAX_EVENT_DEPTH"
