"""The simulator's Bedrock: its own AWS event-stream encoder read back by botocore's parser
(both CRCs checked) and by botocore's own Bedrock client, its two dialects' streams equal
to what was scripted, its routes, and each fault doing what it says."""

from __future__ import annotations

import base64
import dataclasses
import itertools
import json
import string
from collections.abc import Iterator
from typing import Any

import pytest
from botocore import eventstream as boto  # type: ignore[import-untyped]
from botocore.exceptions import EventStreamError  # type: ignore[import-untyped]
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls import Dialect
from sse_toolcalls.calls import ReasoningCompleted, StreamFinished, ToolCallCompleted
from sse_toolcalls.errors import ProviderError, StreamError, TruncatedStreamError, UsageError
from sse_toolcalls.framing.eventstream import ChecksumMismatchError
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
    error_headers,
    media_type,
    script_from_json,
)
from sse_toolcalls.tooling.simulator.aws_eventstream import (
    MAX_MESSAGE_BYTES,
    PRELUDE_BYTES,
    encode_message,
    error_message,
    flip_byte,
)
from sse_toolcalls.tooling.simulator.encoders import BEDROCK_EXCEPTIONS
from sse_toolcalls.tooling.simulator.reasoning import signature
from tests.outside import EXTERNAL_STREAMS, outside_corpus, skip_or_fail

BEDROCK: tuple[Dialect, ...] = ("bedrock_converse", "bedrock_anthropic")
HEADERS_ORDER = [":event-type", ":content-type", ":message-type"]
PAD_ALPHABET = string.ascii_lowercase + string.ascii_uppercase + string.digits

TWO_CALLS = Turn(
    text="Let me look both up.",
    thinking="The user wants both.",
    calls=(
        ScriptedCall(name="lookup_demo_value", args={"key": "height"}, call_id="c-h"),
        ScriptedCall(name="lookup_demo_value", args={"key": "weight", "unit": "kg"}),
    ),
    fragment_size=3,
    usage={"input_tokens": 11, "output_tokens": 7},
)


def read(data: bytes) -> list[Any]:
    """Every message botocore reads in ``data`` (it checks both CRCs of each), asserting
    that no byte is left over."""
    buffer = boto.EventStreamBuffer()
    buffer.add_data(data)
    messages = list(buffer)
    assert buffer._data == b""  # the whole body is messages, nothing trailing
    return messages


def payloads(dialect: str, data: bytes) -> list[tuple[str, dict[str, Any]]]:
    """(event type, payload) of each message; for InvokeModel, the Anthropic event inside
    each chunk (decoded here, by the test, not by the library)."""
    out = []
    for message in read(data):
        assert list(message.headers) == HEADERS_ORDER
        assert message.headers[":content-type"] == "application/json"
        assert message.headers[":message-type"] == "event"
        payload = json.loads(message.payload)
        padding = payload.pop("p")
        assert padding and PAD_ALPHABET.startswith(padding)
        # Bedrock's payloads come with their keys sorted (see the captured streams).
        assert list(json.loads(message.payload)) == sorted(json.loads(message.payload))
        if dialect == "bedrock_anthropic":
            assert message.headers[":event-type"] == "chunk"
            assert list(payload) == ["bytes"]
            inner = json.loads(base64.b64decode(payload["bytes"], validate=True))
            out.append((inner["type"], inner))
        else:
            out.append((message.headers[":event-type"], payload))
    return out


def converse_reading(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """A deliberately plain reading of ConverseStream events, block by block."""
    blocks: dict[int, dict[str, Any]] = {}
    order: list[int] = []
    seen: dict[str, Any] = {"stop": None, "usage": None, "role": None}
    for kind, payload in events:
        if kind == "messageStart":
            seen["role"] = payload["role"]
        elif kind in ("contentBlockStart", "contentBlockDelta", "contentBlockStop"):
            index = payload["contentBlockIndex"]
            if index not in blocks:
                assert kind != "contentBlockStop"
                order.append(index)
                blocks[index] = {"kind": None, "parts": [], "stopped": False}
            block = blocks[index]
            assert not block["stopped"]
            if kind == "contentBlockStart":
                use = payload["start"]["toolUse"]
                block.update(kind="tool", id=use["toolUseId"], name=use["name"])
            elif kind == "contentBlockStop":
                block["stopped"] = True
            else:
                (key, value), *rest = payload["delta"].items()
                assert rest == []
                if key == "toolUse":
                    assert block["kind"] == "tool"
                    block["parts"].append(value["input"])
                elif key == "text":
                    block["kind"] = "text"
                    block["parts"].append(value)
                else:
                    block["kind"] = block["kind"] or "reasoning"
                    block.setdefault("signature", None)
                    if "text" in value:
                        block["parts"].append(value["text"])
                    elif "signature" in value:
                        block["signature"] = value["signature"]
                    else:
                        block["kind"] = "redacted"
                        block["parts"].append(value["redactedContent"])
        elif kind == "messageStop":
            seen["stop"] = payload["stopReason"]
        elif kind == "metadata":
            seen["usage"] = payload["usage"]
            assert isinstance(payload["metrics"]["latencyMs"], int)
    assert order == sorted(order) == list(range(len(order)))
    assert all(b["stopped"] for b in blocks.values())
    seen["blocks"] = [blocks[i] for i in order]
    return seen


def anthropic_reading(events: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The same, for the Anthropic events inside InvokeModel's chunks."""
    blocks: list[dict[str, Any]] = []
    seen: dict[str, Any] = {"stop": None, "metrics": None}
    for kind, payload in events:
        if kind == "content_block_start":
            assert payload["index"] == len(blocks)
            block = payload["content_block"]
            blocks.append({"start": block, "parts": [], "signature": None})
        elif kind == "content_block_delta":
            delta = payload["delta"]
            target = blocks[payload["index"]]
            if delta["type"] == "signature_delta":
                target["signature"] = delta["signature"]
            else:
                key = {"text_delta": "text", "thinking_delta": "thinking"}.get(
                    delta["type"], "partial_json"
                )
                target["parts"].append(delta[key])
        elif kind == "message_delta":
            seen["stop"] = payload["delta"]["stop_reason"]
        elif kind == "message_stop":
            seen["metrics"] = payload["amazon-bedrock-invocationMetrics"]
    assert events[0][0] == "message_start" and events[-1][0] == "message_stop"
    assert "ping" not in [kind for kind, _ in events]  # Bedrock's chunks carry no ping
    seen["blocks"] = blocks
    return seen


def test_the_encoder_matches_awss_worked_layout() -> None:
    # A message with no headers: 16 bytes of overhead and the payload; both CRCs are
    # CRC32 (zlib's) of the bytes before them.
    import struct
    import zlib

    message = encode_message([], b'{"foo": "bar"}')
    total, headers, prelude_crc = struct.unpack(">III", message[:12])
    assert (total, headers) == (len(message), 0) == (30, 0)
    assert prelude_crc == zlib.crc32(message[:8])
    assert message[-4:] == struct.pack(">I", zlib.crc32(message[:-4]))


@settings(max_examples=200, deadline=None)
@given(
    headers=st.lists(
        st.tuples(
            st.text(min_size=1, max_size=20),
            st.one_of(st.text(max_size=300), st.binary(max_size=300)),
        ),
        max_size=6,
        unique_by=lambda h: h[0],
    ),
    payload=st.binary(max_size=2000),
)
def test_botocore_reads_back_any_message(
    headers: list[tuple[str, str | bytes]], payload: bytes
) -> None:
    (message,) = read(encode_message(headers, payload))
    assert list(message.headers.items()) == headers
    assert message.payload == payload


def test_the_encoder_refuses_what_no_reader_takes() -> None:
    with pytest.raises(UsageError):
        encode_message([("x" * 256, "v")], b"")
    with pytest.raises(UsageError):
        encode_message([("", "v")], b"")
    with pytest.raises(UsageError):
        encode_message([("n", "v" * 65536)], b"")
    with pytest.raises(UsageError):
        encode_message([], b"x" * MAX_MESSAGE_BYTES)


@pytest.mark.parametrize("dialect", BEDROCK)
def test_media_type_and_determinism(dialect: str) -> None:
    assert media_type(dialect) == "application/vnd.amazon.eventstream"
    assert encode_turn(dialect, TWO_CALLS, turn_number=2) == encode_turn(
        dialect, TWO_CALLS, turn_number=2
    )
    # The padding is random (seeded by the turn): two turns differ in it.
    assert encode_turn(dialect, TWO_CALLS, turn_number=2) != encode_turn(
        dialect, TWO_CALLS, turn_number=3
    )


texts = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
turns = st.builds(
    Turn,
    text=texts,
    thinking=texts,
    calls=st.lists(
        st.builds(
            ScriptedCall,
            name=st.from_regex(r"[a-zA-Z][a-zA-Z0-9_-]{0,20}", fullmatch=True),
            args=st.dictionaries(texts, json_values, max_size=4),
            thinking=texts,
        ),
        max_size=3,
    ).map(tuple),
    fragment_size=st.integers(1, 12),
    usage=st.none() | st.fixed_dictionaries({"input_tokens": st.integers(0, 10**6)}),
    stop_reason=st.sampled_from([None, "max_tokens", "end_turn"]),
)


@settings(max_examples=60, deadline=None)
@given(turn=turns, turn_number=st.integers(0, 50))
def test_converse_streams_what_was_scripted(turn: Turn, turn_number: int) -> None:
    data = b"".join(encode_turn("bedrock_converse", turn, turn_number=turn_number))
    events = payloads("bedrock_converse", data)
    assert events[0][0] == "messageStart"
    assert [kind for kind, _ in events[-2:]] == ["messageStop", "metadata"]
    seen = converse_reading(events)
    assert seen["role"] == "assistant"
    stop = turn.stop_reason or ("tool_use" if turn.calls else "end_turn")
    assert seen["stop"] == stop
    prompt = (turn.usage or {}).get("input_tokens", 0)
    assert seen["usage"] == {"inputTokens": prompt, "outputTokens": 0, "totalTokens": prompt}
    expected: list[tuple[Any, ...]] = []
    # The first call's thinking goes out with the turn's, before the text.
    first = [turn.thinking, *(c.thinking for c in turn.calls[:1])]
    expected += [("reasoning", t, signature(t)) for t in first if t]
    if turn.text:
        expected.append(("text", turn.text))
    for i, call in enumerate(turn.calls):
        if i and call.thinking:
            expected.append(("reasoning", call.thinking, signature(call.thinking)))
        expected.append(("tool", f"tooluse_sim_{turn_number}_{i}", call.name, call.args))
    got: list[tuple[Any, ...]] = []
    for block in seen["blocks"]:
        text = "".join(block["parts"])
        if block["kind"] == "tool":
            # Claude's empty first fragment, then the arguments' JSON text.
            assert block["parts"][0] == ""
            got.append(("tool", block["id"], block["name"], json.loads(text)))
        elif block["kind"] == "reasoning":
            got.append(("reasoning", text, block["signature"]))
        else:
            got.append((block["kind"], text))
    assert got == expected


@settings(max_examples=60, deadline=None)
@given(turn=turns, turn_number=st.integers(0, 50))
def test_invoke_streams_anthropic_events_of_what_was_scripted(turn: Turn, turn_number: int) -> None:
    data = b"".join(encode_turn("bedrock_anthropic", turn, turn_number=turn_number))
    seen = anthropic_reading(payloads("bedrock_anthropic", data))
    stop = turn.stop_reason or ("tool_use" if turn.calls else "end_turn")
    assert seen["stop"] == stop
    assert seen["metrics"]["inputTokenCount"] == (turn.usage or {}).get("input_tokens", 0)
    calls = [b for b in seen["blocks"] if b["start"]["type"] == "tool_use"]
    assert [
        (b["start"]["id"], b["start"]["name"], json.loads("".join(b["parts"]))) for b in calls
    ] == [(f"toolu_bdrk_sim_{turn_number}_{i}", c.name, c.args) for i, c in enumerate(turn.calls)]
    thinking = [b for b in seen["blocks"] if b["start"]["type"] == "thinking"]
    assert all(b["signature"] == signature("".join(b["parts"])) for b in thinking)


def test_redacted_reasoning_is_a_base64_blob_on_converse() -> None:
    turn = Turn(thinking="hm", redacted_thinking="opaque\u00e9", calls=TWO_CALLS.calls)
    blocks = converse_reading(
        payloads("bedrock_converse", b"".join(encode_turn("bedrock_converse", turn)))
    )["blocks"]
    assert blocks[1]["kind"] == "redacted"
    assert base64.b64decode("".join(blocks[1]["parts"])) == "opaque\u00e9".encode()


# --------------------------------------------------------------------------------------
# Faults, as bytes.


@pytest.mark.parametrize("dialect", BEDROCK)
def test_a_corrupted_crc_fails_botocores_checksum(dialect: str) -> None:
    good = encode_turn(dialect, TWO_CALLS)
    for offset in (-1, -6, 20, PRELUDE_BYTES - 1, 0):
        bad = encode_corrupted(dialect, TWO_CALLS, CorruptedCRC(after_events=2, offset=offset))
        assert [b for n, b in enumerate(bad) if n != 2] == [b for n, b in enumerate(good) if n != 2]
        assert bad[2] != good[2] and len(bad[2]) == len(good[2])
        buffer = boto.EventStreamBuffer()
        buffer.add_data(b"".join(bad))
        messages = iter(buffer)
        next(messages), next(messages)  # the first two are whole
        with pytest.raises(boto.ChecksumMismatch):
            next(messages)


def test_flip_byte_stays_inside_the_message() -> None:
    assert flip_byte(b"\x00\x0f", -1) == b"\x00\xf0"
    with pytest.raises(UsageError):
        flip_byte(b"ab", 2)
    with pytest.raises(UsageError):
        encode_corrupted("bedrock_converse", TWO_CALLS, CorruptedCRC(offset=10**6))


@pytest.mark.parametrize("dialect", BEDROCK)
@pytest.mark.parametrize("extra", [0, 1, 4, 8, 11, 12, 30])
def test_a_cut_ends_anywhere_even_inside_a_prelude(dialect: str, extra: int) -> None:
    whole = encode_turn(dialect, TWO_CALLS)
    chunks = encode_cut(dialect, TWO_CALLS, Cut(after_events=3, extra_bytes=extra))
    assert chunks[:3] == whole[:3]
    assert chunks[3] == whole[3][:extra]
    buffer = boto.EventStreamBuffer()
    buffer.add_data(b"".join(chunks))
    assert len(list(buffer)) == 3  # the partial message is held, never read
    assert buffer._data == whole[3][:extra]


@pytest.mark.parametrize("dialect", BEDROCK)
def test_a_cut_is_always_a_cut(dialect: str) -> None:
    whole = encode_turn(dialect, TWO_CALLS)
    chunks = encode_cut(dialect, TWO_CALLS, Cut(after_events=10**6, extra_bytes=10**6))
    assert b"".join(chunks) == b"".join(whole)[:-1]


@pytest.mark.parametrize("dialect", BEDROCK)
@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("overloaded_error", "serviceUnavailableException"),
        ("throttlingException", "throttlingException"),
        ("modelStreamErrorException", "modelStreamErrorException"),
        ("rate_limit_error", "throttlingException"),
        ("invalid_request_error", "validationException"),
        ("something_else", "modelStreamErrorException"),
        ("DEADLINE_EXCEEDED", "modelTimeoutException"),
    ],
)
def test_an_error_event_is_an_exception_message(dialect: str, code: str, kind: str) -> None:
    if kind == "modelTimeoutException" and dialect == "bedrock_converse":
        kind = "modelStreamErrorException"  # ConverseStream's stream declares no timeout
    error = ErrorEvent(code=code, message="Nope", after_events=2)
    chunks = encode_error_event(dialect, TWO_CALLS, error)
    assert chunks[:2] == encode_turn(dialect, TWO_CALLS)[:2]
    *_, last = read(b"".join(chunks))
    assert list(last.headers.items()) == [
        (":exception-type", kind),
        (":content-type", "application/json"),
        (":message-type", "exception"),
    ]
    assert json.loads(last.payload) == {"message": "Nope"}


@pytest.mark.parametrize("dialect", BEDROCK)
def test_http_errors_name_their_type_in_a_header(dialect: str) -> None:
    assert json.loads(error_body(dialect, 429)) == {
        "message": "Too many requests, please wait before trying again."
    }
    assert error_headers(dialect, 429) == [
        (
            b"x-amzn-errortype",
            b"ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/",
        )
    ]
    assert error_headers(dialect, 400)[0][1].startswith(b"ValidationException:")
    assert error_headers(dialect, 529)[0][1].startswith(b"ServiceUnavailableException:")
    assert error_headers("anthropic", 429) == []


def test_the_new_faults_in_the_json_script() -> None:
    script = script_from_json(
        {
            "turns": [
                {"fault": {"kind": "cut", "after_events": 2, "extra_bytes": 5}},
                {"fault": {"kind": "corrupted_crc", "after_events": 1, "offset": 3}},
            ]
        }
    )
    assert [t.fault for t in script.turns] == [
        Cut(after_events=2, extra_bytes=5),
        CorruptedCRC(after_events=1, offset=3),
    ]
    with pytest.raises(UsageError):
        script_from_json({"turns": [{"fault": {"kind": "cut", "extra_bytes": -1}}]})
    with pytest.raises(UsageError):
        script_from_json({"turns": [{"fault": {"kind": "corrupted_crc", "offset": True}}]})


# --------------------------------------------------------------------------------------
# Round trips through the library's parser.


@pytest.mark.parametrize("dialect", BEDROCK)
def test_the_library_reads_every_scripted_call_however_split(dialect: Dialect) -> None:
    data = b"".join(encode_turn(dialect, TWO_CALLS))
    expected = [(c.name, c.args) for c in TWO_CALLS.calls]
    for size in (1, 2, 7, 12, 13, len(data)):
        parser = ToolCallParser(dialect)
        calls = [c for i in range(0, len(data), size) for c in parser.feed(data[i : i + size])]
        calls += parser.finish()
        assert [(c.name, c.args) for c in calls] == expected
        assert {c.provider for c in calls} == {dialect}
    # Detection: the first bytes say event stream, the first event says which dialect.
    detected = ToolCallParser(None)
    calls = detected.feed(data) + detected.finish()
    assert [(c.name, c.args, c.provider) for c in calls] == [(*e, dialect) for e in expected]


@pytest.mark.parametrize("dialect", BEDROCK)
def test_a_cut_anywhere_is_our_error_and_never_a_half_call(dialect: Dialect) -> None:
    turn = Turn(
        text="Hi.",
        calls=(ScriptedCall(name="f", args={"k": 1}), ScriptedCall(name="g", args={"a": "bb"})),
        fragment_size=3,
    )
    events = encode_turn(dialect, turn)
    data = b"".join(events)
    # Converse's last message is its metadata, after messageStop, which ends the turn: a
    # cut at or inside it may leave a finished turn (without its usage).
    finished_at = len(data) - len(events[-1]) if dialect == "bedrock_converse" else len(data)
    scripted = [(c.name, c.args) for c in turn.calls]
    for cut in range(len(data)):
        parser = ToolCallParser(dialect)
        calls = parser.feed(data[:cut])
        try:
            calls += parser.finish()
        except StreamError as error:
            calls += getattr(error, "completed", ())
        else:
            assert cut >= finished_at, f"a stream cut at byte {cut} read as whole"
        # Whatever was released is whole: the first calls of the script, exactly.
        assert [(c.name, c.args) for c in calls] == scripted[: len(calls)]


@pytest.mark.parametrize("dialect", BEDROCK)
def test_a_cut_in_the_arguments_ends_after_a_whole_message(dialect: Dialect) -> None:
    chunks = encode_cut_in_arguments(dialect, TWO_CALLS)
    assert chunks == encode_turn(dialect, TWO_CALLS)[: len(chunks)]
    kinds = [kind for kind, _ in payloads(dialect, b"".join(chunks))]  # no byte left over
    last = payloads(dialect, chunks[-1])[0][1]
    # The block's start, its empty first fragment, its first text; nothing closes it.
    if dialect == "bedrock_converse":
        assert kinds[-3:] == ["contentBlockStart", "contentBlockDelta", "contentBlockDelta"]
        assert last["delta"]["toolUse"]["input"] == '{"k'
    else:
        assert kinds[-3:] == ["content_block_start", "content_block_delta", "content_block_delta"]
        assert last["delta"]["partial_json"] == '{"k'


# --------------------------------------------------------------------------------------
# Fidelity: the simulator's messages have the shapes of the real service's.


def key_paths(value: Any, prefix: str = "") -> set[str]:
    """Every key path of a JSON object (``delta.toolUse.input``...), lists ignored."""
    if not isinstance(value, dict):
        return set()
    paths = set()
    for key, inner in value.items():
        path = f"{prefix}{key}"
        paths |= {path} | key_paths(inner, path + ".")
    return paths


def shapes(provider: str, data: bytes) -> tuple[dict[str, set[str]], set[tuple[str, ...]]]:
    """Per event type (InvokeModel: per Anthropic event inside a chunk), the key paths its
    payloads use; and the header name lists seen."""
    found: dict[str, set[str]] = {}
    headers = set()
    for message in read(data):
        headers.add(tuple(message.headers))
        payload = json.loads(message.payload)
        payload.pop("p", None)
        if provider == "bedrock_anthropic":
            payload = json.loads(base64.b64decode(payload["bytes"]))
            kind = payload["type"]
        else:
            kind = message.headers[":event-type"]
        found.setdefault(kind, set()).update(key_paths(payload))
    return found, headers


@outside_corpus
@pytest.mark.parametrize("dialect", BEDROCK)
def test_the_simulators_messages_have_the_recordings_shapes(dialect: Dialect) -> None:
    skip_or_fail()
    recorded: dict[str, set[str]] = {}
    recorded_headers: set[tuple[str, ...]] = set()
    wanted = "bedrock_invoke_anthropic" if dialect == "bedrock_anthropic" else dialect
    entries = json.loads((EXTERNAL_STREAMS / "bedrock" / "MANIFEST.json").read_text())
    for entry in entries:
        if entry["provider"] == wanted:
            got, names = shapes(dialect, (EXTERNAL_STREAMS / entry["file"]).read_bytes())
            recorded_headers |= names
            for kind, paths in got.items():
                recorded.setdefault(kind, set()).update(paths)
    assert recorded, "no recording of this dialect"
    # No InvokeModel recording streams thinking, and none has redacted reasoning: the
    # turn leaves out what no recording shows.
    turn = Turn(
        text=TWO_CALLS.text,
        thinking=TWO_CALLS.thinking if dialect == "bedrock_converse" else "",
        calls=TWO_CALLS.calls,
        fragment_size=3,
        usage=TWO_CALLS.usage,
    )
    ours, our_headers = shapes(dialect, b"".join(encode_turn(dialect, turn)))
    assert our_headers == recorded_headers == {tuple(HEADERS_ORDER)}
    for kind, paths in ours.items():
        assert kind in recorded, f"{kind} is in no recording"
        assert paths <= recorded[kind], (kind, paths - recorded[kind])


@settings(max_examples=150, deadline=None)
@given(
    dialect=st.sampled_from(BEDROCK),
    turn=turns,
    after_events=st.integers(0, 60),
    offset=st.integers(-2000, 2000),
)
def test_every_corrupted_byte_is_a_checksum_error_to_the_library(
    dialect: Dialect, turn: Turn, after_events: int, offset: int
) -> None:
    # A max_tokens stop ends the read before the corrupted message: not what is tested.
    turn = dataclasses.replace(turn, stop_reason=None)
    events = encode_turn(dialect, turn)
    at = min(after_events, len(events) - 1)
    offset = offset % len(events[at])  # a byte of that message, wherever it is
    chunks = encode_corrupted(dialect, turn, CorruptedCRC(after_events=at, offset=offset))
    parser = ToolCallParser(dialect)
    released = parser.feed(b"".join(chunks[:at]))
    with pytest.raises(ChecksumMismatchError):
        parser.feed(chunks[at])
    scripted = [(c.name, c.args) for c in turn.calls]
    assert [(c.name, c.args) for c in released] == scripted[: len(released)]


@pytest.mark.parametrize("dialect", BEDROCK)
def test_an_error_message_in_a_raw_body_is_a_provider_error(dialect: Dialect) -> None:
    head = encode_turn(dialect, TWO_CALLS)[:3]
    data = b"".join([*head, error_message("InternalFailure", "The service broke")])
    *_, last = read(data)
    assert dict(last.headers) == {
        ":error-code": "InternalFailure",
        ":error-message": "The service broke",
        ":message-type": "error",
    }
    assert last.payload == b""
    with pytest.raises(ProviderError) as caught:
        parse_all_bytes(dialect, data)
    assert "The service broke" in str(caught.value)


def parse_all_bytes(dialect: Dialect, data: bytes) -> list[Any]:
    parser = ToolCallParser(dialect)
    return parser.feed(data) + parser.finish()


def test_nova_sends_each_input_whole() -> None:
    nova = "us.amazon.nova-lite-v1:0"
    data = b"".join(encode_turn("bedrock_converse", TWO_CALLS, model=nova))
    blocks = converse_reading(payloads("bedrock_converse", data))["blocks"]
    tools = [b for b in blocks if b["kind"] == "tool"]
    assert [b["parts"] for b in tools] == [
        [json.dumps(c.args, separators=(",", ":"))] for c in TWO_CALLS.calls
    ]
    parser = ToolCallParser("bedrock_converse")
    calls = parser.feed(data) + parser.finish()
    assert [(c.name, c.args) for c in calls] == [(c.name, c.args) for c in TWO_CALLS.calls]
    # Cut in the arguments: the whole input came, the block never closed.
    cut = b"".join(encode_cut_in_arguments("bedrock_converse", TWO_CALLS, model=nova))
    parser = ToolCallParser("bedrock_converse")
    with pytest.raises(TruncatedStreamError) as caught:
        parser.feed(cut)
        parser.finish()
    assert [p.raw_arguments for p in caught.value.partial] == ['{"key":"height"}']


@settings(max_examples=80, deadline=None)
@given(
    dialect=st.sampled_from(BEDROCK),
    turn=turns,
    model=st.sampled_from(["sim-model-1", "us.amazon.nova-micro-v1:0"]),
    cuts=st.lists(st.integers(0, 10**5), max_size=6),
)
def test_the_library_reads_any_scripted_turn_at_any_split(
    dialect: Dialect, turn: Turn, model: str, cuts: list[int]
) -> None:
    data = b"".join(encode_turn(dialect, turn, model=model, turn_number=4))
    bounds = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    parser = StreamParser(dialect)
    events: list[Any] = []
    try:
        for start, end in itertools.pairwise(bounds):
            events += parser.feed(data[start:end])
        events += parser.finish()
    except TruncatedStreamError as error:
        # A max_tokens stop is a truncation, even after whole blocks (as on Anthropic's
        # API): the calls its read did not return are partial, with their whole text.
        assert turn.stop_reason == "max_tokens"
        calls = [e.call for e in events if isinstance(e, ToolCallCompleted)]
        calls += error.completed
        held = [(c.name, c.raw_arguments) for c in calls]
        held += [(p.name, p.raw_arguments) for p in error.partial]
        assert [(name, json.loads(raw)) for name, raw in held] == [
            (c.name, c.args) for c in turn.calls
        ]
        turn = dataclasses.replace(turn, calls=turn.calls[: len(calls)])
    else:
        assert turn.stop_reason != "max_tokens"
        (finished,) = [e for e in events if isinstance(e, StreamFinished)]
        assert finished.text == turn.text
        calls = list(finished.calls)
        thinking = [e.block for e in events if isinstance(e, ReasoningCompleted)]
        assert [(b.text, b.signature) for b in thinking] == [
            (t, signature(t)) for t in [turn.thinking, *(c.thinking for c in turn.calls)] if t
        ]
    prefix = "tooluse_sim" if dialect == "bedrock_converse" else "toolu_bdrk_sim"
    assert [(c.call_id, c.name, c.args, c.provider) for c in calls] == [
        (f"{prefix}_4_{i}", c.name, c.args, dialect) for i, c in enumerate(turn.calls)
    ]


# --------------------------------------------------------------------------------------
# botocore's modeled reading: the bedrock-runtime service model's own event shapes.


class _Body:
    """A response body for botocore's ``EventStream``, in reads of ``size`` bytes."""

    def __init__(self, data: bytes, size: int) -> None:
        self._data, self._size = data, size

    def stream(self) -> Iterator[bytes]:
        for start in range(0, len(self._data), self._size):
            yield self._data[start : start + self._size]

    def close(self) -> None:
        pass


def botocore_events(dialect: Dialect, data: bytes, size: int) -> list[dict[str, Any]]:
    from botocore.parsers import EventStreamJSONParser  # type: ignore[import-untyped]
    from botocore.session import Session  # type: ignore[import-untyped]

    model = Session().get_service_model("bedrock-runtime")
    operation, member = {
        "bedrock_converse": ("ConverseStream", "stream"),
        "bedrock_anthropic": ("InvokeModelWithResponseStream", "body"),
    }[dialect]
    shape = model.operation_model(operation).output_shape.members[member]
    stream = boto.EventStream(_Body(data, size), shape, EventStreamJSONParser(), operation)
    return list(stream)


@settings(max_examples=60, deadline=None)
@given(dialect=st.sampled_from(BEDROCK), turn=turns, size=st.integers(1, 64))
def test_botocores_modeled_parser_reads_every_turn(dialect: Dialect, turn: Turn, size: int) -> None:
    turn = dataclasses.replace(turn, redacted_thinking="opaque" if turn.thinking else "")
    data = b"".join(encode_turn(dialect, turn))
    events = botocore_events(dialect, data, size)
    raw = [(m.headers[":event-type"], json.loads(m.payload)) for m in read(data)]
    assert len(events) == len(raw)
    for event, (kind, payload) in zip(events, raw, strict=True):
        payload.pop("p")
        if dialect == "bedrock_anthropic":
            assert event == {"chunk": {"bytes": base64.b64decode(payload["bytes"])}}
        else:
            # The one blob, redacted reasoning, comes decoded; everything else as sent.
            reasoning = payload.get("delta", {}).get("reasoningContent", {})
            if "redactedContent" in reasoning:
                reasoning["redactedContent"] = base64.b64decode(reasoning["redactedContent"])
            assert event == {kind: payload}


@pytest.mark.parametrize(
    ("dialect", "kind"),
    [(dialect, kind) for dialect in BEDROCK for kind in sorted(BEDROCK_EXCEPTIONS[dialect])],
)
def test_botocore_raises_each_exception_the_simulator_sends(dialect: Dialect, kind: str) -> None:
    error = ErrorEvent(code=kind, message="Nope", after_events=2)
    data = b"".join(encode_error_event(dialect, TWO_CALLS, error))
    with pytest.raises(EventStreamError) as caught:
        botocore_events(dialect, data, 13)
    assert caught.value.response["Error"] == {"Code": kind, "Message": "Nope"}
