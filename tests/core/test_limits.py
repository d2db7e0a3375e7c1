"""Every named limit of the core: a test at the limit, and one just past it."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls import (
    Dialect,
    EventTooLargeError,
    LimitExceededError,
    SSEFramer,
    ToolCall,
    ToolCallParser,
)
from sse_toolcalls.dialects._common import (
    json_depth,
    parse_arguments,
)
from sse_toolcalls.dialects._depth import MAX_EVENT_DEPTH, MAX_PARSED_ARGUMENTS_DEPTH
from sse_toolcalls.dialects.gemini.stream import (
    MAX_PARTIAL_ARRAY_GAP,
    MAX_PARTIAL_ARRAY_INDEX,
    MAX_PARTIAL_PATH_STEPS,
    _steps,
)
from sse_toolcalls.framing.sse import MAX_DATA_LINES_PER_EVENT, MAX_RETRY_DIGITS


def deep_object(depth: int) -> str:
    """JSON text of an object nested ``depth`` levels (the outer object is level 1)."""
    return '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1)


def deep_array(depth: int) -> str:
    return "[" * depth + "]" * depth


# -- the framer ----------------------------------------------------------------------------


def test_max_event_bytes_at_and_past_the_limit() -> None:
    event = b"data: " + b"x" * 94 + b"\n"  # 101 bytes with its line ending
    assert [e.data for e in SSEFramer(max_event_bytes=101).feed(event + b"\n")] == ["x" * 94]
    for chunks in ([event + b"\n"], [event[:50], event[50:] + b"\n"]):
        framer = SSEFramer(max_event_bytes=100)
        with pytest.raises(EventTooLargeError):
            for chunk in chunks:
                framer.feed(chunk)


def _framed_or_too_large(raw: bytes, limit: int, cuts: list[int]) -> list[str] | str:
    framer = SSEFramer(max_event_bytes=limit)
    bounds = [0, *cuts, len(raw)]
    try:
        events = [e for a, b in itertools.pairwise(bounds) for e in framer.feed(raw[a:b])]
    except EventTooLargeError:
        return "too large"
    return [e.data for e in events]


@pytest.mark.parametrize(
    ("raw", "size"),
    [
        # Invalid UTF-8 counts as the bytes received, not as its 3-byte U+FFFD (issue 9).
        (b"data: " + b"\xff" * 10 + b"\n\n", 17),
        (b"event: \x91\x91\ndata: \xe2\x82\n\n", 19),
        # A blank line opening a chunk ends the pending block; it adds nothing to the next.
        (b"data: " + b"x" * 10 + b"\n\ndata: y\n\n", 17),
        (b"data: " + b"x" * 10 + b"\n\n\n\ndata: " + b"y" * 10 + b"\n\n", 17),
        (b"data: a\r\n\r\ndata: " + b"x" * 10 + b"\r\n\r\n", 17),
    ],
)
def test_max_event_bytes_counts_bytes_received_on_every_split(raw: bytes, size: int) -> None:
    splits = [[], list(range(1, len(raw)))] + [[i] for i in range(1, len(raw))]
    splits += [[i, i + 1] for i in range(1, len(raw) - 1)]
    for cuts in splits:
        assert _framed_or_too_large(raw, size, cuts) != "too large", cuts
        assert _framed_or_too_large(raw, size - 1, cuts) == "too large", cuts


@pytest.mark.parametrize("split", [False, True])
def test_data_lines_per_event_at_and_past_the_limit(split: bool) -> None:
    def feed(lines: int) -> list[str]:
        raw = b"data: x\n" * lines + b"\n"
        framer = SSEFramer()
        if not split:
            return [e.data for e in framer.feed(raw)]
        middle = len(raw) // 2
        return [e.data for e in framer.feed(raw[:middle]) + framer.feed(raw[middle:])]

    [data] = feed(MAX_DATA_LINES_PER_EVENT)
    assert data.count("\n") == MAX_DATA_LINES_PER_EVENT - 1
    with pytest.raises(LimitExceededError) as info:
        feed(MAX_DATA_LINES_PER_EVENT + 1)
    assert info.value.limit_name == "MAX_DATA_LINES_PER_EVENT"


def test_retry_digits_at_and_past_the_limit() -> None:
    framer = SSEFramer()
    [event] = framer.feed(b"retry: " + b"9" * MAX_RETRY_DIGITS + b"\ndata: x\n\n")
    assert event.retry == 10**MAX_RETRY_DIGITS - 1
    framer = SSEFramer()
    with pytest.raises(LimitExceededError) as info:
        framer.feed(b"retry: " + b"9" * (MAX_RETRY_DIGITS + 1) + b"\n")
    assert (info.value.limit, info.value.size) == (MAX_RETRY_DIGITS, MAX_RETRY_DIGITS + 1)
    with pytest.raises(Exception, match="takes no more input"):
        framer.feed(b"data: x\n\n")  # an object that raised refuses more input


# -- JSON depth ----------------------------------------------------------------------------


def argument_events(field: str) -> dict[Dialect, bytes]:
    """An event of each dialect that carries arguments as objects, with a deep field."""
    return {
        "anthropic": (
            b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
            b'"content_block":{"type":"tool_use","id":"t","name":"f","input":{},"x":'
            + field.encode()
            + b"}}\n\n"
        ),
        "gemini": (
            b'data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"f"}}]}}],"x":'
            + field.encode()
            + b"}\n\n"
        ),
    }


@pytest.mark.parametrize("long_number", [False, True])
def test_event_depth_at_and_past_the_limit_on_the_fast_and_the_exact_path(
    long_number: bool,
) -> None:
    # The field sits at level 3 (anthropic) or 2 (gemini) of its event.
    fields: tuple[tuple[Dialect, int], ...] = (("anthropic", 2), ("gemini", 1))
    for dialect, levels_above in fields:
        inner = deep_array(MAX_EVENT_DEPTH - levels_above)
        if long_number:
            inner = inner.replace("[]", "[12345678901234567890]")
        ToolCallParser(dialect).feed(argument_events(inner)[dialect])
        with pytest.raises(LimitExceededError) as info:
            ToolCallParser(dialect).feed(argument_events("[" + inner + "]")[dialect])
        assert info.value.limit_name == "MAX_EVENT_DEPTH"
        assert info.value.size == MAX_EVENT_DEPTH + 1


@pytest.mark.parametrize("long_number", [False, True])
def test_chat_object_arguments_at_and_past_the_event_depth_limit(long_number: bool) -> None:
    for depth, refused in ((MAX_EVENT_DEPTH, False), (MAX_EVENT_DEPTH + 1, True)):
        inner = deep_array(depth - 1)
        if long_number:
            # The event is then read again exactly, with room for its envelope.
            inner = inner.replace("[]", "[12345678901234567890123]")
        raw = object_argument_streams(inner.join(['{"a":', "}"]))["openai_chat"]
        if refused:
            with pytest.raises(LimitExceededError) as info:
                parse("openai_chat", raw)
            assert (info.value.limit_name, info.value.size) == ("MAX_EVENT_DEPTH", depth)
        else:
            [call] = parse("openai_chat", raw)
            assert (
                call.arguments_error is not None
                and "MAX_PARSED_ARGUMENTS_DEPTH" in call.arguments_error
            )


@pytest.mark.parametrize("long_number", [False, True])
def test_arguments_depth_at_and_past_the_limit(long_number: bool) -> None:
    text = deep_object(MAX_PARSED_ARGUMENTS_DEPTH)
    if long_number:
        text = text.replace("{}", '{"n":12345678901234567890}')
    args, error = parse_arguments(text)
    assert error is None and args
    args, error = parse_arguments('{"b":' + text + "}")
    assert args == {}
    assert error is not None and "MAX_PARSED_ARGUMENTS_DEPTH" in error


def object_argument_streams(args: str) -> dict[Dialect, bytes]:
    return {
        "anthropic": (
            b"event: message_start\ndata: {}\n\n"
            b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
            b'"content_block":{"type":"tool_use","id":"t","name":"f","input":'
            + args.encode()
            + b'}}\n\nevent: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
            b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"}}\n\n'
            b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
        ),
        "gemini": (
            b'data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":'
            + args.encode()
            + b'}}]},"finishReason":"STOP"}]}\n\n'
        ),
        "openai_chat": (
            b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c",'
            b'"function":{"name":"f","arguments":'
            + args.encode()
            + b'}}]}}]}\n\ndata: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'
            b"data: [DONE]\n\n"
        ),
    }


def parse(dialect: Dialect, raw: bytes) -> list[ToolCall]:
    parser = ToolCallParser(dialect)
    return parser.feed(raw) + parser.finish()


def test_object_arguments_depth_at_and_past_the_limit_in_every_dialect() -> None:
    for dialect, raw in object_argument_streams(deep_object(MAX_PARSED_ARGUMENTS_DEPTH)).items():
        [call] = parse(dialect, raw)
        assert call.arguments_error is None, dialect
    for dialect, raw in object_argument_streams(
        deep_object(MAX_PARSED_ARGUMENTS_DEPTH + 1)
    ).items():
        [call] = parse(dialect, raw)
        assert call.args == {}, dialect
        assert (
            call.arguments_error is not None
            and "MAX_PARSED_ARGUMENTS_DEPTH" in call.arguments_error
        )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab"\\[]{}é', max_size=5),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(alphabet='k"[]{}\\', max_size=3), children, max_size=3)
    ),
    max_leaves=20,
)


def depth_of(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max(map(depth_of, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(depth_of, value.values()), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(value=json_values, ascii_only=st.booleans())
def test_json_depth_measures_the_nesting_of_any_json(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert json_depth(text) == depth_of(value)


# -- Gemini partialArgs --------------------------------------------------------------------


def partial_stream(*entries: dict[str, Any]) -> bytes:
    def event(payload: dict[str, Any]) -> bytes:
        return b"data: " + json.dumps(payload).encode() + b"\n\n"

    out = event(
        {
            "candidates": [
                {"content": {"parts": [{"functionCall": {"name": "f", "willContinue": True}}]}}
            ]
        }
    )
    for entry in entries:
        out += event(
            {
                "candidates": [
                    {
                        "content": {
                            "parts": [
                                {"functionCall": {"partialArgs": [entry], "willContinue": True}}
                            ]
                        }
                    }
                ]
            }
        )
    return out + event(
        {"candidates": [{"content": {"parts": [{"functionCall": {}}]}, "finishReason": "STOP"}]}
    )


def test_partial_args_path_steps_at_and_past_the_limit() -> None:
    path = "$" + ".a" * MAX_PARTIAL_PATH_STEPS
    [call] = ToolCallParser("gemini").feed(partial_stream({"jsonPath": path, "numberValue": 1}))
    assert json_depth(call.raw_arguments) == MAX_PARTIAL_PATH_STEPS
    with pytest.raises(LimitExceededError) as info:
        ToolCallParser("gemini").feed(partial_stream({"jsonPath": path + ".a", "numberValue": 1}))
    assert info.value.limit_name == "MAX_PARTIAL_PATH_STEPS"


def test_partial_args_array_index_at_and_past_the_limit() -> None:
    assert _steps(f"$.a[{MAX_PARTIAL_ARRAY_INDEX}]") == ["a", MAX_PARTIAL_ARRAY_INDEX]
    for index in (str(MAX_PARTIAL_ARRAY_INDEX + 1), "1" + "0" * 5000):
        with pytest.raises(LimitExceededError) as info:
            _steps(f"$.a[{index}]")
        assert info.value.limit_name == "MAX_PARTIAL_ARRAY_INDEX"


def test_partial_args_array_gap_at_and_past_the_limit() -> None:
    entries = [
        {"jsonPath": "$.a[0]", "numberValue": 0},
        {"jsonPath": f"$.a[{1 + MAX_PARTIAL_ARRAY_GAP}]", "numberValue": 1},
    ]
    [call] = ToolCallParser("gemini").feed(partial_stream(*entries))
    assert call.args == {"a": [0] + [None] * MAX_PARTIAL_ARRAY_GAP + [1]}
    entries[1]["jsonPath"] = f"$.a[{2 + MAX_PARTIAL_ARRAY_GAP}]"
    with pytest.raises(LimitExceededError) as info:
        ToolCallParser("gemini").feed(partial_stream(*entries))
    assert info.value.limit_name == "MAX_PARTIAL_ARRAY_GAP"


def test_partial_args_memory_grows_with_bytes_received_only() -> None:
    import tracemalloc

    entries = [
        {"jsonPath": f"$.a[{i * (MAX_PARTIAL_ARRAY_GAP + 1)}]", "nullValue": None}
        for i in range(2000)
    ]
    raw = partial_stream(*entries)
    tracemalloc.start()
    try:
        parser = ToolCallParser("gemini")
        calls = parser.feed(raw)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # What stays is the call: 17 slots of 8 bytes and "null," five bytes each per
    # ~150-byte event (before the fix, $.a[10000] alone held 10,000 slots).
    assert len(calls[0].args["a"]) == 2000 * (MAX_PARTIAL_ARRAY_GAP + 1) - MAX_PARTIAL_ARRAY_GAP
    assert held < 3 * len(raw)
