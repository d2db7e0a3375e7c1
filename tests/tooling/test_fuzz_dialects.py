"""Structured fuzzing of the dialects: real envelopes, hostile values anywhere inside.

``test_parser.py`` feeds arbitrary bytes, which rarely get past JSON parsing. Here each
event is a dialect's real shape with any JSON value (deep, wrong-typed, huge numbers,
surrogate escapes) put in place of any field: whatever arrives, only our exceptions may
leave the core, from ``feed`` and from ``finish``, and never a call whose arguments
are not a JSON object without its ``arguments_error``.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls import Dialect, SSEToolCallsError, StreamParser, ToolCallCompleted

hostile_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**18, max_value=10**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.sampled_from(["", "{", '{"a": 1}', "[DONE]", "\\ud800", "1e400", "NaN"]),
)
hostile = st.recursive(
    hostile_scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=4), children, max_size=3)
    ),
    max_leaves=12,
)


PLACEHOLDER = "\x00deep:"


def deep(depth: int) -> str:
    """A marker replaced by JSON text nested ``depth`` levels once the event is encoded
    (the stdlib encoder itself cannot nest past about 1,000 levels)."""
    return f"{PLACEHOLDER}{depth}"


def expand(text: str) -> str:
    marker = '"\\u0000deep:'
    while (start := text.find(marker)) >= 0:
        end = text.index('"', start + 1)
        depth = int(text[start + len(marker) : end])
        text = text[:start] + '{"a":' * depth + "{}" + "}" * depth + text[end + 1 :]
    return text


anything = st.one_of(hostile, st.integers(1, 1100).map(deep))

TEMPLATES: dict[Dialect, list[tuple[str | None, dict[str, Any]]]] = {
    "openai_chat": [
        (None, {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}}]}),
        (
            None,
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "c",
                                    "function": {"name": "f", "arguments": '{"a"'},
                                }
                            ]
                        },
                    }
                ]
            },
        ),
        (
            None,
            {
                "choices": [
                    {
                        "index": 0,
                        "delta": {"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]},
                        "finish_reason": None,
                    }
                ]
            },
        ),
        (
            None,
            {
                "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
                "usage": {"total_tokens": 1},
            },
        ),
    ],
    "anthropic": [
        ("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 1}}}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "hi"},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": '{"a": 1}'},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 1},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ],
    "openai_responses": [
        (
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {
                    "type": "function_call",
                    "id": "fc",
                    "call_id": "c",
                    "name": "f",
                    "arguments": "",
                    "status": "in_progress",
                },
            },
        ),
        (
            "response.function_call_arguments.delta",
            {
                "type": "response.function_call_arguments.delta",
                "item_id": "fc",
                "output_index": 0,
                "delta": "{}",
            },
        ),
        (
            "response.function_call_arguments.done",
            {
                "type": "response.function_call_arguments.done",
                "item_id": "fc",
                "output_index": 0,
                "arguments": "{}",
            },
        ),
        (
            "response.output_item.done",
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {
                    "type": "function_call",
                    "id": "fc",
                    "call_id": "c",
                    "name": "f",
                    "arguments": "{}",
                    "status": "completed",
                },
            },
        ),
        (
            "response.completed",
            {
                "type": "response.completed",
                "response": {"status": "completed", "output": [], "usage": {}},
            },
        ),
    ],
    "gemini": [
        (None, {"candidates": [{"content": {"parts": [{"text": "hi"}]}}]}),
        (
            None,
            {
                "candidates": [
                    {"content": {"parts": [{"functionCall": {"name": "f", "willContinue": True}}]}}
                ]
            },
        ),
        (
            None,
            {
                "candidates": [
                    {
                        "content": {
                            "parts": [
                                {
                                    "functionCall": {
                                        "partialArgs": [
                                            {
                                                "jsonPath": "$.a[0]",
                                                "stringValue": "x",
                                                "willContinue": True,
                                            }
                                        ],
                                        "willContinue": True,
                                    }
                                }
                            ]
                        }
                    }
                ]
            },
        ),
        (None, {"candidates": [{"content": {"parts": [{"functionCall": {}}]}}]}),
        (
            None,
            {
                "candidates": [
                    {
                        "content": {
                            "parts": [
                                {
                                    "functionCall": {"name": "g", "args": {"b": 2}, "id": "i"},
                                    "thoughtSignature": "s",
                                }
                            ]
                        },
                        "finishReason": "STOP",
                    }
                ],
                "usageMetadata": {},
            },
        ),
    ],
}


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            out += paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out += paths(child, (*prefix, index))
    return out


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = replaced(value[path[0]], path[1:], new)
    return copy


@st.composite
def hostile_stream(draw: st.DrawFn) -> tuple[Dialect, list[bytes]]:
    dialect = draw(st.sampled_from(sorted(TEMPLATES)))
    events = []
    for name, template in TEMPLATES[dialect]:
        payload = template
        if draw(st.integers(0, 3)) == 0:
            path = draw(st.sampled_from(paths(template)))
            payload = replaced(template, path, draw(anything))
        text = expand(json.dumps(payload, ensure_ascii=draw(st.booleans())))
        head = f"event: {name}\n" if name else ""
        events.append(f"{head}data: {text}\n\n".encode())
    keep = draw(st.integers(0, len(events)))
    return dialect, events[:keep]


@settings(max_examples=1500, deadline=None)
@given(stream=hostile_stream(), detect=st.booleans())
def test_hostile_values_anywhere_in_real_envelopes_raise_only_our_errors(
    stream: tuple[Dialect, list[bytes]], detect: bool
) -> None:
    dialect, events = stream
    parser = StreamParser(None if detect else dialect)
    out = []
    try:
        for event in events:
            out += parser.feed(event)
        out += parser.finish()
    except SSEToolCallsError:
        return
    for item in out:
        if isinstance(item, ToolCallCompleted):
            call = item.call
            assert isinstance(call.args, dict)
            assert (
                call.arguments_error is not None
                or json.loads(call.raw_arguments or "{}") == call.args
                or call.raw_arguments.strip() == ""
            )
