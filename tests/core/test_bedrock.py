"""The Bedrock dialects' own rules (issue 31): what a ConverseStream or an
InvokeModelWithResponseStream body means, event by event, whatever the reads.

The bodies are built by the test-only encoder (tests/wire.py, from AWS's documented
formats); every case is fed whole, byte by byte and at every cut, and read through the
parsed-event path too (boto3 hands the same events already parsed).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import pytest

from sse_toolcalls import (
    FramingError,
    MalformedStreamError,
    ProviderError,
    StreamFinished,
    StreamParser,
    ToolCall,
    ToolCallParser,
    TruncatedStreamError,
)
from sse_toolcalls.framing import EVENTSTREAM, SSE, sniff_framing
from sse_toolcalls.framing.eventstream import ChecksumMismatchError, IncompleteMessageError

from ..wire import Call, aws_message, encode

Event = tuple[str, Any]


def body(events: Sequence[Event]) -> bytes:
    return b"".join(aws_message(name, payload) for name, payload in events)


def exception(name: str, message: str) -> bytes:
    return aws_message(name, {"message": message}, message_type="exception")


def calls_of(raw: bytes, dialect: str | None, cuts: Sequence[int] = ()) -> list[ToolCall]:
    parser = ToolCallParser(dialect)  # type: ignore[arg-type]
    bounds = [0, *cuts, len(raw)]
    out: list[ToolCall] = []
    for start, end in pairwise(bounds):
        out += parser.feed(raw[start:end])
    return out + parser.finish()


def every_split(raw: bytes, dialect: str | None) -> list[list[ToolCall]]:
    """The calls at every single cut and one byte at a time (all must agree)."""
    outcomes = [calls_of(raw, dialect)]
    outcomes += [calls_of(raw, dialect, [cut]) for cut in range(1, len(raw))]
    outcomes.append(calls_of(raw, dialect, list(range(1, len(raw)))))
    return outcomes


def outcome(raw: bytes, dialect: str | None, cuts: Sequence[int] = ()) -> tuple[str, Any]:
    """What the reads returned plus what the error carries (issue 29: each call once,
    however the reads fell), with the error's class and code."""
    parser = ToolCallParser(dialect)  # type: ignore[arg-type]
    bounds = [0, *cuts, len(raw)]
    got: list[ToolCall] = []
    try:
        for start, end in pairwise(bounds):
            got += parser.feed(raw[start:end])
        got += parser.finish()
    except (TruncatedStreamError, ProviderError, MalformedStreamError, FramingError) as exc:
        kept = [(c.name, c.args, c.call_id) for c in got + list(exc.completed)]
        return type(exc).__name__, (getattr(exc, "code", None), kept)
    return "ok", [(c.name, c.args, c.call_id) for c in got]


def same_at_every_cut(raw: bytes, dialect: str | None) -> tuple[str, Any]:
    whole = outcome(raw, dialect)
    for cut in range(1, len(raw)):
        assert outcome(raw, dialect, [cut]) == whole, cut
    return whole


def parsed(events: Sequence[Event], dialect: str) -> list[ToolCall]:
    """The same events as boto3 yields them, through ``feed_event``."""
    parser = ToolCallParser(dialect)  # type: ignore[arg-type]
    out: list[ToolCall] = []
    for name, payload in events:
        out += parser.feed_event(payload, name)
    return out + parser.finish()


def tool_block(index: int, call_id: str, name: str, fragments: Sequence[str]) -> list[Event]:
    start = {"contentBlockIndex": index, "start": {"toolUse": {"toolUseId": call_id, "name": name}}}
    out: list[Event] = [("contentBlockStart", start)]
    for fragment in fragments:
        delta = {"contentBlockIndex": index, "delta": {"toolUse": {"input": fragment}}}
        out.append(("contentBlockDelta", delta))
    out.append(("contentBlockStop", {"contentBlockIndex": index}))
    return out


def turn(*blocks: list[Event], stop: str = "tool_use", usage: bool = True) -> list[Event]:
    events: list[Event] = [("messageStart", {"role": "assistant", "p": "abcdef"})]
    for block in blocks:
        events += block
    events.append(("messageStop", {"stopReason": stop, "p": "ab"}))
    if usage:
        tokens = {"inputTokens": 11, "outputTokens": 7, "totalTokens": 18}
        events.append(("metadata", {"usage": tokens, "metrics": {"latencyMs": 9}, "p": "x"}))
    return events


TEXT: list[Event] = [
    ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Let me look."}}),
    ("contentBlockStop", {"contentBlockIndex": 0}),
]


# -- ConverseStream ------------------------------------------------------------------------


def test_text_then_two_calls_at_every_split_and_parsed() -> None:
    events = turn(
        TEXT,
        tool_block(1, "tooluse_a", "height", ["", '{"person"', ': "Ada"}']),
        tool_block(2, "tooluse_b", "weight", ['{"person": "Ada", "unit": "kg"}']),
    )
    want = [
        ("height", {"person": "Ada"}, "tooluse_a"),
        ("weight", {"person": "Ada", "unit": "kg"}, "tooluse_b"),
    ]
    raw = body(events)
    for calls in every_split(raw, "bedrock_converse"):
        assert [(c.name, c.args, c.call_id) for c in calls] == want
        assert {c.provider for c in calls} == {"bedrock_converse"}
    assert [(c.name, c.args, c.call_id) for c in calls_of(raw, None)] == want
    assert [(c.name, c.args, c.call_id) for c in parsed(events, "bedrock_converse")] == want


def test_a_zero_argument_tool_has_empty_arguments() -> None:
    # Claude's empty first fragment and nothing after it; Nova may send no delta at all.
    for fragments in ([""], [], ["", ""]):
        raw = body(turn(tool_block(0, "t0", "now", fragments)))
        (call,) = calls_of(raw, "bedrock_converse")
        assert (call.args, call.arguments_error) == ({}, None)


def test_the_rich_stream_has_text_reasoning_with_its_signature_and_usage() -> None:
    reasoning = [
        (
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "Hm"}}},
        ),
        (
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"text": "m."}}},
        ),
        (
            "contentBlockDelta",
            {"contentBlockIndex": 0, "delta": {"reasoningContent": {"signature": "EqQBCkYI+/="}}},
        ),
        ("contentBlockStop", {"contentBlockIndex": 0}),
    ]
    redacted = [
        (
            "contentBlockDelta",
            {"contentBlockIndex": 1, "delta": {"reasoningContent": {"redactedContent": "AAEC"}}},
        ),
        ("contentBlockStop", {"contentBlockIndex": 1}),
    ]
    text = [
        ("contentBlockDelta", {"contentBlockIndex": 2, "delta": {"text": "Hi"}}),
        ("contentBlockStop", {"contentBlockIndex": 2}),
    ]
    events = turn(reasoning, redacted, text, tool_block(3, "t", "f", ['{"a": 1}']))
    parser = StreamParser("bedrock_converse")
    out = parser.feed(body(events)) + parser.finish()
    (finished,) = [event for event in out if isinstance(event, StreamFinished)]
    assert finished.text == "Hi"
    assert finished.stop_reason == "tool_use"
    assert finished.usage == {"inputTokens": 11, "outputTokens": 7, "totalTokens": 18}
    first, second = finished.reasoning
    assert (first.kind, first.text, first.signature) == ("thinking", "Hmm.", "EqQBCkYI+/=")
    assert (second.kind, second.data, second.before_call) == ("redacted_thinking", "AAEC", 0)
    assert [call.name for call in finished.calls] == ["f"]


def test_message_stop_without_metadata_is_truncation_with_its_calls_out() -> None:
    # metadata is the body's last event: without it the body was cut, after messageStop
    # released the calls (returned by the read, or carried by the error).
    raw = body(turn(tool_block(0, "t", "f", ["{}"]), usage=False))
    kind, (_, completed) = same_at_every_cut(raw, "bedrock_converse")
    assert (kind, completed) == ("TruncatedStreamError", [("f", {}, "t")])


def test_a_server_tool_is_not_a_client_call() -> None:
    server = [
        (
            "contentBlockStart",
            {
                "contentBlockIndex": 0,
                "start": {
                    "toolUse": {
                        "toolUseId": "s",
                        "name": "nova_code_interpreter",
                        "type": "server_tool_use",
                    }
                },
            },
        ),
        ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"code"'}}}),
        ("contentBlockStop", {"contentBlockIndex": 0}),
    ]
    raw = body(turn(server, tool_block(1, "c", "client", ["{}"])))
    assert [c.call_id for c in calls_of(raw, "bedrock_converse")] == ["c"]


@pytest.mark.parametrize("reason", ["max_tokens", "model_context_window_exceeded"])
def test_a_limit_inside_a_tool_block_is_truncation_with_the_cut_call_partial(reason: str) -> None:
    events = turn(
        tool_block(0, "done", "first", ['{"a": 1}']),
        tool_block(1, "cut", "second", ['{"b": ']),
        stop=reason,
    )
    raw = body(events)
    kind, (_, completed) = same_at_every_cut(raw, "bedrock_converse")
    assert (kind, completed) == ("TruncatedStreamError", [("first", {"a": 1}, "done")])
    with pytest.raises(TruncatedStreamError) as caught:
        calls_of(raw, "bedrock_converse")
    assert caught.value.reason == "max_tokens"
    assert [p.call_id for p in caught.value.partial] == ["cut"]


@pytest.mark.parametrize(
    "events",
    [
        # The body ends before messageStop: inside a call, and between blocks.
        turn(tool_block(0, "t", "f", ['{"a"']))[:3],
        turn(tool_block(0, "t", "f", ["{}"]))[:-2],
        [("messageStart", {"role": "assistant"})],
    ],
)
def test_no_message_stop_is_truncation(events: list[Event]) -> None:
    with pytest.raises(TruncatedStreamError):
        calls_of(body(events), "bedrock_converse")


def test_a_guardrail_stop_ends_the_turn_normally() -> None:
    raw = body(turn(TEXT, stop="guardrail_intervened"))
    assert calls_of(raw, "bedrock_converse") == []


@pytest.mark.parametrize(
    ("name", "retryable"),
    [
        ("throttlingException", True),
        ("modelStreamErrorException", True),
        ("internalServerException", True),
        ("serviceUnavailableException", True),
        ("validationException", False),
    ],
)
@pytest.mark.parametrize("dialect", ["bedrock_converse", "bedrock_anthropic", None])
def test_in_stream_exceptions_are_provider_errors(
    name: str, retryable: bool, dialect: str | None
) -> None:
    raw = exception(name, "Too many requests, please wait.")
    with pytest.raises(ProviderError) as caught:
        calls_of(raw, dialect)
    error = caught.value
    assert error.code == name[0].upper() + name[1:]
    assert error.retryable is retryable
    assert str(error) == "Too many requests, please wait."


def test_an_exception_after_a_call_keeps_the_call_at_every_cut() -> None:
    events = turn(TEXT, tool_block(1, "t", "f", ['{"a": 1}']))[:-2]
    # The call is released by the next block's start; the exception comes instead.
    events += tool_block(2, "u", "g", ["{"])[:1]
    raw = body(events) + exception("modelStreamErrorException", "stream broke")
    kind, (code, completed) = same_at_every_cut(raw, "bedrock_converse")
    assert (kind, code) == ("ProviderError", "ModelStreamErrorException")
    assert completed == [("f", {"a": 1}, "t")]


def test_an_unmodeled_error_message_is_a_provider_error() -> None:
    header = b""
    for key, value in (
        (":message-type", "error"),
        (":error-code", "InternalFailure"),
        (":error-message", "boom"),
    ):
        header += (
            bytes([len(key)])
            + key.encode()
            + b"\x07"
            + len(value).to_bytes(2, "big")
            + value.encode()
        )
    import struct
    import zlib

    prelude = struct.pack(">II", 16 + len(header), len(header))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + header
    raw = message + struct.pack(">I", zlib.crc32(message))
    with pytest.raises(ProviderError) as caught:
        calls_of(raw, "bedrock_converse")
    assert (caught.value.code, str(caught.value)) == ("InternalFailure", "boom")


@pytest.mark.parametrize(
    "payload",
    [
        # A delta for a tool block that never started: no name or id to answer.
        {"contentBlockIndex": 4, "delta": {"toolUse": {"input": "{}"}}},
        {"contentBlockIndex": "0", "delta": {"text": "x"}},
        {"contentBlockIndex": 0, "delta": "text"},
        {"contentBlockIndex": 0, "delta": {"toolUse": {"input": 5}}},
    ],
)
def test_malformed_deltas_are_malformed_streams(payload: dict[str, Any]) -> None:
    raw = body([("messageStart", {"role": "assistant"}), ("contentBlockDelta", payload)])
    with pytest.raises(MalformedStreamError):
        calls_of(raw, "bedrock_converse")


def test_a_second_start_over_an_open_block_is_malformed() -> None:
    events = turn(tool_block(0, "a", "f", ["{"])[:2] + tool_block(0, "b", "g", ["{}"]))
    with pytest.raises(MalformedStreamError):
        calls_of(body(events), "bedrock_converse")


def test_unknown_events_are_skipped_and_nothing_after_metadata_is_read() -> None:
    events = turn(tool_block(0, "t", "f", ["{}"]))
    events.insert(1, ("someFutureEvent", {"x": 1}))
    raw = body(events) + body(tool_block(5, "late", "h", ["{}"]))
    assert [c.call_id for c in calls_of(raw, "bedrock_converse")] == ["t"]


# -- framing faults, through the parser ------------------------------------------------------


def test_a_corrupted_crc_is_a_framing_error_with_the_earlier_calls_carried() -> None:
    events = turn(TEXT, tool_block(1, "t", "f", ['{"a": 1}']), tool_block(2, "u", "g", ["{}"]))
    raw = bytearray(body(events))
    # Corrupt the last message (metadata): the calls were all released before it.
    raw[-6] ^= 0xFF
    kind, (_, completed) = outcome(bytes(raw), "bedrock_converse")
    assert (kind, [c[2] for c in completed]) == ("ChecksumMismatchError", ["t", "u"])
    for cut in range(1, len(raw)):
        parser = ToolCallParser("bedrock_converse")
        got: list[ToolCall] = []
        with pytest.raises(ChecksumMismatchError) as caught:
            got += parser.feed(bytes(raw[:cut]))
            got += parser.feed(bytes(raw[cut:]))
        assert [c.call_id for c in got + list(caught.value.completed)] == ["t", "u"], cut


def test_a_body_cut_inside_a_message_is_an_incomplete_message() -> None:
    raw = body(turn(tool_block(0, "t", "f", ["{}"])))
    for cut in (1, 5, 11, 12, 20, len(raw) - 1):
        with pytest.raises((IncompleteMessageError, TruncatedStreamError)):
            calls_of(raw[:cut], "bedrock_converse")


def test_an_sse_body_for_a_bedrock_dialect_is_a_framing_error() -> None:
    with pytest.raises(FramingError):
        calls_of(b'data: {"choices": []}\n\n', "bedrock_converse")


def test_the_first_byte_tells_the_framing() -> None:
    assert sniff_framing(aws_message("messageStart", {})) == EVENTSTREAM
    for head in (b"data: x", b"event: y", b":", b"\n", b"\r", b"\xef\xbb\xbf", b"{"):
        assert sniff_framing(head) == SSE


# -- InvokeModelWithResponseStream (Anthropic models) -------------------------------------------


def chunk(event: dict[str, Any]) -> Event:
    raw = json.dumps(event).encode()
    return ("chunk", {"bytes": base64.b64encode(raw).decode(), "p": "abc"})


def test_anthropic_events_in_chunks_give_the_anthropic_calls() -> None:
    calls = [Call("height", {"person": "Ada"}, "toolu_1"), Call("weight", {}, "toolu_2")]
    raw = encode("bedrock_anthropic", calls, text="Checking.")
    want = [(c.name, c.args, c.call_id) for c in calls]
    for got in every_split(raw, "bedrock_anthropic"):
        assert [(c.name, c.args, c.call_id) for c in got] == want
        assert {c.provider for c in got} == {"bedrock_anthropic"}
    assert [(c.name, c.args, c.call_id) for c in calls_of(raw, None)] == want


@pytest.mark.parametrize("encoded", ["not base64!", "QUJD=", "QU JD", "/w=="])
def test_a_chunk_that_is_not_base64_of_text_is_malformed(encoded: str) -> None:
    raw = aws_message("chunk", {"bytes": encoded})
    with pytest.raises(MalformedStreamError):
        calls_of(raw, "bedrock_anthropic")


def test_an_anthropic_error_event_inside_a_chunk_is_a_provider_error() -> None:
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    raw = body([chunk({"type": "message_start", "message": {"usage": {}}}), chunk(error)])
    with pytest.raises(ProviderError) as caught:
        calls_of(raw, "bedrock_anthropic")
    assert (caught.value.code, caught.value.retryable) == ("overloaded_error", True)


def test_max_tokens_through_invoke_is_truncation() -> None:
    events = [
        chunk({"type": "message_start", "message": {"usage": {}}}),
        chunk(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}},
            }
        ),
        chunk(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"a'},
            }
        ),
        chunk({"type": "content_block_stop", "index": 0}),
        chunk({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}}),
        chunk({"type": "message_stop", "amazon-bedrock-invocationMetrics": {"inputTokenCount": 1}}),
    ]
    with pytest.raises(TruncatedStreamError) as caught:
        calls_of(body(events), "bedrock_anthropic")
    assert [p.call_id for p in caught.value.partial] == ["t"]


def test_parsed_chunks_read_as_the_wire_does() -> None:
    calls = [Call("f", {"x": [1, 2]}, "toolu_9")]
    raw = encode("bedrock_anthropic", calls)
    from sse_toolcalls.framing.eventstream import EventStreamFramer

    messages = EventStreamFramer().feed(raw)
    events = [(m.event_type or "", json.loads(m.payload)) for m in messages]
    assert [(c.name, c.args) for c in parsed(events, "bedrock_anthropic")] == [("f", {"x": [1, 2]})]


@pytest.mark.parametrize(
    "headers",
    [
        {":event-type": "contentBlockDelta", ":message-type": "event"},
        {":event-type": "contentBlockDelta"},
        {":event-type": "", ":message-type": "event"},
        {":event-type": 7, ":message-type": "event"},
        {":event-type": "x", ":message-type": 1},
        {
            ":event-type": "x",
            ":message-type": "exception",
            ":exception-type": "throttlingException",
        },
        {":message-type": "exception"},
        {":message-type": "error", ":error-code": "Boom", ":error-message": "m"},
        {":message-type": "surprise"},
        {},
    ],
)
def test_a_message_reads_as_the_same_event_on_the_fast_path_and_the_general_one(
    headers: dict[str, Any],
) -> None:
    # The general rule, written plainly from the properties (what message_event does for
    # a message off its fast path).
    from sse_toolcalls.framing.eventstream import EventStreamMessage, message_event

    message = EventStreamMessage(headers=headers, payload=b'{"a": 1}')
    kind = message.message_type
    if kind == "event":
        want = (message.event_type or "message", '{"a": 1}')
    elif kind == "exception":
        want = (message.exception_type or "exception", '{"a": 1}')
    else:
        body = {"errorCode": message.error_code or kind, "message": message.error_message or ""}
        want = ("error", json.dumps(body, separators=(",", ":")))
    got = message_event(message)
    assert (got.event, got.data) == want
