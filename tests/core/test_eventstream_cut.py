"""A Bedrock body cut inside a message ends as a cut SSE body does.

The connection drops, a proxy truncates the body: the bytes of the last message stop
short. The parser must then say what a cut SSE stream says, :class:`TruncatedStreamError`
from the dialect's end check, with the call that was being streamed as its partial call,
so that ``except TruncatedStreamError`` (the documented way to see a cut) sees it. The
framer's own :class:`IncompleteMessageError` is for the framer's direct callers; through
the parser it was a FramingError that no caller of ``ToolCallParser`` expects.
"""

from __future__ import annotations

import base64
import json

import pytest

from sse_toolcalls import Dialect, ToolCall, ToolCallParser, TruncatedStreamError
from tests.core.test_eventstream_wire import bedrock_event


def converse(name: str, payload: dict[str, object]) -> bytes:
    return bedrock_event(name, json.dumps(payload).encode())


CONVERSE = [
    converse("messageStart", {"role": "assistant"}),
    converse(
        "contentBlockStart",
        {"contentBlockIndex": 0, "start": {"toolUse": {"toolUseId": "t1", "name": "f"}}},
    ),
    converse(
        "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"a":'}}}
    ),
    converse("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "1}"}}}),
    converse("contentBlockStop", {"contentBlockIndex": 0}),
    converse("messageStop", {"stopReason": "tool_use"}),
    converse("metadata", {"usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}}),
]


def chunk(event: dict[str, object]) -> bytes:
    inner = base64.b64encode(json.dumps(event).encode()).decode()
    return bedrock_event("chunk", json.dumps({"bytes": inner}).encode())


INVOKE = [
    chunk({"type": "message_start", "message": {"id": "m", "role": "assistant", "content": []}}),
    chunk(
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
        }
    ),
    chunk(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"a":'},
        }
    ),
    chunk(
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": "1}"},
        }
    ),
    chunk({"type": "content_block_stop", "index": 0}),
    chunk({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
    chunk({"type": "message_stop"}),
]

CASES = {"bedrock_converse": CONVERSE, "bedrock_anthropic": INVOKE}
"""Each dialect's body; its last message is the one after the turn is decided."""


def run(dialect: Dialect | None, body: bytes) -> tuple[list[ToolCall], TruncatedStreamError | None]:
    parser = ToolCallParser(dialect)
    calls: list[ToolCall] = []
    try:
        calls += parser.feed(body)
        calls += parser.finish()
    except TruncatedStreamError as exc:
        return calls, exc
    return calls, None


@pytest.mark.parametrize("detect", [False, True])
@pytest.mark.parametrize("dialect", sorted(CASES))
def test_every_cut_before_the_turn_is_decided_is_a_truncation(
    dialect: Dialect, detect: bool
) -> None:
    messages = CASES[dialect]
    body = b"".join(messages)
    decided = len(body) - len(messages[-1])
    # Inside the last input fragment's message: the call is partial with the first one.
    second_delta = sum(map(len, messages[:3]))
    for cut in range(decided):
        calls, exc = run(None if detect else dialect, body[:cut])
        assert calls == [] and exc is not None, cut
        if second_delta < cut < second_delta + len(messages[3]):
            assert [(p.name, p.call_id, p.raw_arguments) for p in exc.partial] == [
                ("f", "t1", '{"a":')
            ], cut


@pytest.mark.parametrize("dialect", sorted(CASES))
def test_a_cut_inside_the_last_message_is_truncation_that_loses_no_call(dialect: Dialect) -> None:
    # The last message is each dialect's end marker (Converse's metadata, InvokeModel's
    # message_stop chunk): a body cut inside it was cut, as an SSE body cut inside its
    # last event is, and the call the turn completed is returned or carried, once.
    messages = CASES[dialect]
    body = b"".join(messages)
    for cut in range(len(body) - len(messages[-1]) + 1, len(body)):
        calls, exc = run(dialect, body[:cut])
        assert exc is not None and [(c.name, c.args) for c in calls + list(exc.completed)] == [
            ("f", {"a": 1})
        ], cut
