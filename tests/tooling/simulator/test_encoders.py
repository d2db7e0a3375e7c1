"""The dialect encoders: what they emit is what each provider sends, and the library's own
parser reads it back exactly, however the bytes are split."""

from __future__ import annotations

import json

import pytest

from sse_toolcalls import Dialect
from sse_toolcalls.calls import DIALECTS, StreamFinished, TextDelta, ToolCall
from sse_toolcalls.edge.http_errors import provider_error_from_http
from sse_toolcalls.errors import (
    FramingError,
    ProviderError,
    SSEToolCallsError,
    TruncatedStreamError,
    UsageError,
)
from sse_toolcalls.parser import StreamParser, ToolCallParser
from sse_toolcalls.tooling.simulator import (
    CorruptedCRC,
    Cut,
    ErrorEvent,
    ScriptedCall,
    Turn,
    encode_corrupted,
    encode_cut,
    encode_cut_in_arguments,
    encode_error_event,
    encode_turn,
    error_body,
)

TWO_CALLS = Turn(
    text="Let me look both up.",
    calls=(
        ScriptedCall(name="lookup_demo_value", args={"key": "height"}, call_id="c-h"),
        ScriptedCall(name="lookup_demo_value", args={"key": "weight", "unit": "kg"}),
    ),
    fragment_size=3,
    usage={"input_tokens": 11, "output_tokens": 7},
)


def parse_all(
    dialect: Dialect, chunks: list[bytes], *, byte_by_byte: bool = False
) -> list[ToolCall]:
    parser = ToolCallParser(dialect)
    calls = []
    data = b"".join(chunks)
    pieces = [data[i : i + 1] for i in range(len(data))] if byte_by_byte else chunks
    for piece in pieces:
        calls += parser.feed(piece)
    return calls + parser.finish()


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("byte_by_byte", [False, True])
def test_the_parser_reads_back_every_call(dialect: Dialect, byte_by_byte: bool) -> None:
    calls = parse_all(dialect, encode_turn(dialect, TWO_CALLS), byte_by_byte=byte_by_byte)
    assert [(c.name, c.args, c.index) for c in calls] == [
        ("lookup_demo_value", {"key": "height"}, 0),
        ("lookup_demo_value", {"key": "weight", "unit": "kg"}, 1),
    ]
    assert {c.provider for c in calls} == {dialect}
    expected_second = {
        "openai_chat": "call_sim_0_1",
        "openai_responses": "call_sim_0_1",
        "anthropic": "toolu_sim_0_1",
        "gemini": None,  # no id given: Gemini sends none
        "bedrock_converse": "tooluse_sim_0_1",
        "bedrock_anthropic": "toolu_bdrk_sim_0_1",
    }[dialect]
    assert [c.call_id for c in calls] == ["c-h", expected_second]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_text_and_stop_reason_reach_the_rich_stream(dialect: Dialect) -> None:
    parser = StreamParser(dialect)
    events = []
    for chunk in encode_turn(dialect, Turn(text="You are 170 cm tall.", fragment_size=4)):
        events += parser.feed(chunk)
    events += parser.finish()
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "You are 170 cm tall."
    finished = [e for e in events if isinstance(e, StreamFinished)]
    assert len(finished) == 1
    assert finished[0].calls == ()
    assert (
        finished[0].stop_reason
        == {
            "openai_chat": "stop",
            "openai_responses": "completed",
            "anthropic": "end_turn",
            "gemini": "STOP",
            "bedrock_converse": "end_turn",
            "bedrock_anthropic": "end_turn",
        }[dialect]
    )


@pytest.mark.parametrize("dialect", DIALECTS)
def test_encoding_is_deterministic(dialect: str) -> None:
    assert encode_turn(dialect, TWO_CALLS, turn_number=3) == encode_turn(
        dialect, TWO_CALLS, turn_number=3
    )


def test_gemini_frames_with_crlf_and_one_whole_call_per_event() -> None:
    chunks = encode_turn("gemini", TWO_CALLS)
    assert all(c.startswith(b"data: ") and c.endswith(b"\r\n\r\n") for c in chunks)
    assert all(c.count(b"\n") == 2 for c in chunks)  # only the CRLF CRLF terminator
    payloads = [json.loads(c[6:]) for c in chunks]
    calls = [
        p["candidates"][0]["content"]["parts"][0]["functionCall"]
        for p in payloads
        if "functionCall" in p["candidates"][0]["content"]["parts"][0]
    ]
    assert calls == [
        {"name": "lookup_demo_value", "args": {"key": "height"}, "id": "c-h"},
        {"name": "lookup_demo_value", "args": {"key": "weight", "unit": "kg"}},
    ]
    assert [p["candidates"][0].get("finishReason") for p in payloads][-1] == "STOP"
    assert all("finishReason" not in p["candidates"][0] for p in payloads[:-1])


def test_responses_events_carry_their_type_and_sequence_numbers() -> None:
    chunks = encode_turn("openai_responses", TWO_CALLS)
    types = []
    for n, chunk in enumerate(chunks):
        event_line, data_line, blank, end = chunk.split(b"\n")
        assert (blank, end) == (b"", b"")
        payload = json.loads(data_line.removeprefix(b"data: "))
        assert event_line == b"event: " + payload["type"].encode()
        assert payload["sequence_number"] == n
        types.append(payload["type"])
    assert types[:2] == ["response.created", "response.in_progress"]
    assert types[-1] == "response.completed"
    assert types.count("response.function_call_arguments.done") == 2


def test_chat_ends_with_finish_reason_usage_and_done() -> None:
    chunks = encode_turn("openai_chat", TWO_CALLS)
    assert chunks[-1] == b"data: [DONE]\n\n"
    usage = json.loads(chunks[-2][6:])
    assert usage["choices"] == []
    assert usage["usage"] == {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    assert json.loads(chunks[-3][6:])["choices"][0]["finish_reason"] == "tool_calls"
    first_call = json.loads(chunks[8][6:])["choices"][0]["delta"]["tool_calls"][0]
    assert first_call == {
        "index": 0,
        "id": "c-h",
        "type": "function",
        "function": {"name": "lookup_demo_value", "arguments": ""},
    }


def test_anthropic_blocks_are_indexed_and_end_with_message_stop() -> None:
    payloads = [json.loads(c.split(b"\ndata: ")[1]) for c in encode_turn("anthropic", TWO_CALLS)]
    types = [p["type"] for p in payloads]
    assert types[0] == "message_start"
    assert "ping" in types
    assert types[-2:] == ["message_delta", "message_stop"]
    assert payloads[-2]["delta"]["stop_reason"] == "tool_use"
    starts = [p for p in payloads if p["type"] == "content_block_start"]
    assert [(s["index"], s["content_block"]["type"]) for s in starts] == [
        (0, "text"),
        (1, "tool_use"),
        (2, "tool_use"),
    ]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_cut_in_the_arguments_is_reported_as_truncated(dialect: Dialect) -> None:
    with pytest.raises(TruncatedStreamError) as caught:
        parse_all(dialect, encode_cut_in_arguments(dialect, TWO_CALLS))
    assert caught.value.completed == ()
    if dialect != "gemini":  # Gemini's call is cut inside its one event: nothing arrived
        (partial,) = caught.value.partial
        assert partial.name == "lookup_demo_value"
        assert '{"key":"height"}'.startswith(partial.raw_arguments)
        assert 0 < len(partial.raw_arguments) < len('{"key":"height"}')


def test_a_cut_needs_a_call() -> None:
    with pytest.raises(UsageError):
        encode_cut_in_arguments("anthropic", Turn(text="no calls"))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_error_event_becomes_a_provider_error(dialect: Dialect) -> None:
    error = ErrorEvent(code="overloaded_error", message="Overloaded", after_events=2)
    chunks = encode_error_event(dialect, TWO_CALLS, error)
    assert len(chunks) == 3
    with pytest.raises(ProviderError) as caught:
        parse_all(dialect, chunks)
    assert "Overloaded" in str(caught.value)
    assert caught.value.retryable


@pytest.mark.parametrize(
    ("dialect", "status", "code"),
    [
        ("openai_chat", 429, "rate_limit_exceeded"),
        ("openai_responses", 500, "server_error"),
        ("anthropic", 529, "overloaded_error"),
        ("anthropic", 400, "invalid_request_error"),
        ("gemini", 429, "RESOURCE_EXHAUSTED"),
        ("gemini", 503, "UNAVAILABLE"),
    ],
)
def test_error_bodies_have_each_providers_shape(dialect: str, status: int, code: str) -> None:
    body = error_body(dialect, status, "nope")
    error = provider_error_from_http(status, body, provider=dialect)
    assert (error.code, error.message, error.status) == (code, "nope", status)
    if dialect == "anthropic":
        assert json.loads(body)["type"] == "error"


def test_unknown_dialects_and_bad_fragment_sizes_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        encode_turn("cohere", TWO_CALLS)
    with pytest.raises(UsageError):
        encode_turn("openai_chat", Turn(text="x", fragment_size=0))


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(("after", "extra"), [(0, 0), (1, 5), (2, 11), (10**6, 10**6)])
def test_a_cut_is_a_strict_prefix_and_a_truncated_stream(
    dialect: Dialect, after: int, extra: int
) -> None:
    whole = b"".join(encode_turn(dialect, TWO_CALLS))
    cut = b"".join(encode_cut(dialect, TWO_CALLS, Cut(after_events=after, extra_bytes=extra)))
    assert len(cut) < len(whole)
    assert whole.startswith(cut)
    if after == 10**6 and dialect != "bedrock_anthropic":
        # All but the last byte: SSE's last event lacks only part of its blank line,
        # which a reader may forgive (DialectSpec.accepts_unterminated); Converse's is
        # the metadata after messageStop, which already ended the turn.
        return
    # Ours, whatever the framing: the end marker never arrived (Bedrock's half message
    # is a framing error).
    with pytest.raises((TruncatedStreamError, FramingError)):
        parse_all(dialect, [cut])


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("offset", [0, 3, -1, -3])
def test_a_corrupted_event_differs_by_one_inverted_byte(dialect: Dialect, offset: int) -> None:
    whole = encode_turn(dialect, TWO_CALLS)
    bad = encode_corrupted(dialect, TWO_CALLS, CorruptedCRC(after_events=1, offset=offset))
    assert [len(e) for e in bad] == [len(e) for e in whole]
    differ = [
        (n, i)
        for n, (a, b) in enumerate(zip(whole, bad, strict=True))
        for i in range(len(a))
        if a[i] != b[i]
    ]
    assert len(differ) == 1
    n, i = differ[0]
    assert n == 1 and whole[n][i] ^ bad[n][i] == 0xFF
    # No checksum on SSE: the client may or may not notice, but answers with our own.
    try:
        parse_all(dialect, bad)
    except SSEToolCallsError:
        pass
