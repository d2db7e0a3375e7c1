"""The Vercel UI message stream's mapping and its way in, without node (issue 32): the
chunks for each event, part bookkeeping over any order of deltas (hypothesis), the
retry's voiding, the ``useChat`` body's reading and its typed refusals."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls.calls import ReasoningDelta, TextDelta, ToolCallStarted
from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.diagnostics import Diagnostic
from sse_toolcalls.runtime.events import (
    AgentEvent,
    RequestStarted,
    RetryScheduled,
    ToolArgumentsPreview,
)
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.runtime.ui.vercel import (
    MAX_BODY_BYTES,
    VOID_TEXT,
    UIRequestError,
    parse_chat_request,
    request_id_for,
    ui_message_chunks,
    vercel_response,
)
from tests.runtime.test_agent import FakeClient, answer

pytestmark = pytest.mark.anyio


async def chunks_of(events: Sequence[AgentEvent], **kw: Any) -> list[dict[str, Any]]:
    async def gen() -> AsyncIterator[AgentEvent]:
        for event in events:
            yield event

    return [c async for c in ui_message_chunks(gen(), **kw)]


def check_parts(chunks: list[dict[str, Any]]) -> None:
    """Each text or reasoning part starts once, gets deltas only while open, ends once."""
    open_: dict[str, str] = {}
    done: set[str] = set()
    for chunk in chunks:
        kind, _, phase = chunk["type"].rpartition("-")
        if kind not in ("text", "reasoning"):
            continue
        ident = chunk["id"]
        if phase == "start":
            assert ident not in open_ and ident not in done
            open_[ident] = kind
        elif phase == "delta":
            assert open_.get(ident) == kind
        else:
            assert open_.pop(ident) == kind
            done.add(ident)
    assert open_ == {}


async def test_text_then_reasoning_then_text_are_three_parts_closed_in_turn() -> None:
    chunks = await chunks_of(
        [
            RequestStarted(step=1, attempt=1),
            TextDelta(text="a"),
            ReasoningDelta(text="b"),
            TextDelta(text="c"),
            TextDelta(text=""),
        ],
        message_id="m1",
    )
    assert chunks[0] == {"type": "start", "messageId": "m1"}
    assert [c["type"] for c in chunks[1:]] == [
        "start-step",
        "text-start",
        "text-delta",
        "text-end",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "text-start",
        "text-delta",
    ]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.builds(TextDelta, text=st.text(max_size=3)),
            st.builds(ReasoningDelta, text=st.text(max_size=3)),
            st.builds(RequestStarted, step=st.integers(1, 3), attempt=st.just(1)),
            st.builds(
                ToolCallStarted,
                index=st.integers(0, 2),
                call_id=st.one_of(st.none(), st.sampled_from(["c1", "c2"])),
                name=st.just("t"),
            ),
            st.just(
                RetryScheduled(attempt=1, delay=0.0, diagnostic=Diagnostic(kind="x", message="y"))
            ),
        ),
        max_size=25,
    )
)
def test_parts_open_and_close_in_pairs_whatever_the_order(events: list[AgentEvent]) -> None:
    async def go() -> list[dict[str, Any]]:
        chunks = await chunks_of(events)
        # The run's end closes what is open: a RetryScheduled does, as does end_step.
        chunks += await chunks_of(
            [
                *events,
                RetryScheduled(attempt=9, delay=0.0, diagnostic=Diagnostic(kind="x", message="y")),
            ]
        )
        return chunks

    chunks = anyio.run(go)
    last_start = max(i for i, c in enumerate(chunks) if c["type"] == "start")
    check_parts(chunks[last_start:])
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert "".join(c["delta"] for c in chunks[:last_start] if c["type"] == "text-delta") == text


async def test_a_retry_voids_the_attempt_s_parts_and_unfinished_calls() -> None:
    chunks = await chunks_of(
        [
            RequestStarted(step=1, attempt=1),
            TextDelta(text="half an ans"),
            ToolCallStarted(index=0, call_id=None, name="save"),
            ToolArgumentsPreview(index=0, name="save", delta='{"a"', arguments=None),
            RetryScheduled(attempt=1, delay=0.5, diagnostic=Diagnostic(kind="x", message="y")),
            RequestStarted(step=1, attempt=2),
            TextDelta(text="whole"),
        ]
    )
    types = [c["type"] for c in chunks]
    assert types.count("start-step") == 2 and types.count("finish-step") == 1
    call = "call-1-0"
    assert {"type": "tool-input-delta", "toolCallId": call, "inputTextDelta": '{"a"'} in chunks
    assert {"type": "tool-output-error", "toolCallId": call, "errorText": VOID_TEXT} in chunks
    [retry] = [c for c in chunks if c["type"] == "data-retry"]
    assert retry["data"] == {"attempt": 1, "delay": 0.5, "voidedToolCallIds": [call]}
    # The voided text part is closed before the next attempt shows its own.
    assert types.index("text-end") < types.index("data-retry") < types.index("finish-step")
    assert chunks[-1] == {"type": "text-delta", "id": "text-2", "delta": "whole"}


async def test_an_error_from_the_run_ends_the_stream_with_an_error_chunk() -> None:
    async def gen() -> AsyncIterator[AgentEvent]:
        yield RequestStarted(step=1, attempt=1)
        yield TextDelta(text="x")
        raise UsageError("nope")

    out: list[dict[str, Any]] = []
    with pytest.raises(UsageError):
        async for chunk in ui_message_chunks(gen()):
            out.append(chunk)
    assert out[-3:] == [
        {"type": "text-end", "id": "text-1"},
        {"type": "finish-step"},
        {"type": "error", "errorText": "nope"},
    ]


def body(**over: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": "chat",
        "trigger": "submit-message",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
    }
    out.update(over)
    return out


def test_a_user_message_is_a_run_whose_request_id_is_the_message_s() -> None:
    request = parse_chat_request(json.dumps(body()).encode())
    assert request.text == "hi" and request.chat_id == "chat"
    assert request.request_id == request_id_for("chat", "u1")
    assert request_id_for("chat", "u2") != request.request_id
    assert request_id_for("chat2", "u1") != request.request_id


@pytest.mark.parametrize(
    "bad",
    [
        b"not json",
        b"[]",
        json.dumps(body(id="")).encode(),
        json.dumps(body(messages=[])).encode(),
        json.dumps(body(messages=[{"id": "u", "role": "user", "parts": []}])).encode(),
        json.dumps(body(messages=[{"id": "u", "role": "system", "parts": []}])).encode(),
        json.dumps(body(messages=[{"id": "a", "role": "assistant", "parts": []}])).encode(),
        json.dumps(
            body(
                messages=[
                    {
                        "id": "a",
                        "role": "assistant",
                        "parts": [{"state": "approval-responded", "approval": {"id": "t.x"}}],
                    }
                ]
            )
        ).encode(),
        b"[" * 100_000,
        b" " * (MAX_BODY_BYTES + 1),
    ],
)
def test_a_bad_body_is_a_typed_error(bad: bytes) -> None:
    with pytest.raises(UIRequestError):
        parse_chat_request(bad)


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.text(max_size=4),
        lambda c: (
            st.lists(c)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "id",
                        "messages",
                        "role",
                        "parts",
                        "type",
                        "text",
                        "state",
                        "approval",
                        "approved",
                    ]
                ),
                c,
            )
        ),
        max_leaves=30,
    )
)
def test_any_json_is_a_request_or_our_error(value: Any) -> None:
    try:
        parse_chat_request(json.dumps(value).encode())
    except UIRequestError:
        pass


async def test_a_bad_body_or_an_unknown_approval_is_a_400() -> None:
    agent = Agent(FakeClient([answer("x")]), ToolRegistry())
    status, headers, chunks = await vercel_response(agent, b"{")
    assert status == 400 and headers["content-type"] == "application/json"
    assert "not JSON" in json.loads(b"".join([c async for c in chunks]))["error"]
    answered = {
        "id": "a",
        "role": "assistant",
        "parts": [
            {
                "type": "tool-t",
                "state": "approval-responded",
                "approval": {"id": "tok.c1", "approved": True},
            }
        ],
    }
    status, _, _ = await vercel_response(agent, body(messages=[answered]))
    assert status == 400


async def test_a_call_id_reused_after_a_retry_is_renamed_so_the_void_part_stays_void() -> None:
    retry = RetryScheduled(attempt=1, delay=0.0, diagnostic=Diagnostic(kind="x", message="y"))
    again = RetryScheduled(attempt=2, delay=0.0, diagnostic=Diagnostic(kind="x", message="y"))
    chunks = await chunks_of(
        [
            RequestStarted(step=1, attempt=1),
            ToolCallStarted(index=0, call_id="c1", name="t"),
            retry,
            RequestStarted(step=1, attempt=2),
            ToolCallStarted(index=0, call_id="c1", name="t"),
            again,
            RequestStarted(step=1, attempt=3),
            ToolCallStarted(index=0, call_id="c1", name="t"),
        ]
    )
    started = [c["toolCallId"] for c in chunks if c["type"] == "tool-input-start"]
    assert started == ["c1", "c1~1", "c1~2"]


async def test_values_json_cannot_carry_are_text_and_the_stream_stays_json() -> None:
    from tests.runtime.test_agent import calling

    registry = ToolRegistry()

    def measure() -> dict[str, Any]:
        """Measure."""
        return {"ratio": float("nan"), "limit": float("inf")}

    registry.register(measure)
    agent = Agent(FakeClient([calling(("measure", {})), answer("done")]), registry)
    status, _, chunks = await vercel_response(agent, body())
    assert status == 200
    stream = b"".join([c async for c in chunks]).decode()
    datas = [line[6:] for line in stream.split("\n") if line.startswith("data: ")]
    assert datas[-1] == "[DONE]"
    # Strict JSON, as JSON.parse reads it: no NaN or Infinity tokens.
    parsed = [json.loads(d, parse_constant=pytest.fail) for d in datas[:-1]]
    [output] = [c for c in parsed if c["type"].startswith("tool-output")]
    # What the model was sent, too.
    assert output["output"] == {"ratio": None, "limit": None}


def test_a_chunk_json_cannot_carry_goes_out_with_its_odd_fields_as_text() -> None:
    from sse_toolcalls.runtime.ui.vercel import _json

    cyclic: list[Any] = []
    cyclic.append(cyclic)
    for odd in (float("nan"), cyclic, {"x": float("inf")}):
        chunk = {"type": "tool-output-available", "toolCallId": "c", "output": odd}
        back = json.loads(_json(chunk), parse_constant=pytest.fail)
        assert back["type"] == "tool-output-available" and back["toolCallId"] == "c"
        assert back["output"] == str(odd)


async def test_closing_the_body_early_ends_the_run_cleanly() -> None:
    from tests.runtime.test_agent import calling

    ran: list[str] = []
    registry = ToolRegistry()

    def touch() -> str:
        """Touch."""
        ran.append("touch")
        return "ok"

    registry.register(touch, effect="write")
    agent = Agent(FakeClient([calling(("touch", {})), answer("done")]), registry)
    status, _, chunks = await vercel_response(agent, body())
    assert status == 200
    first = await chunks.__anext__()
    assert b'"type":"start"' in first
    await chunks.aclose()
    # The server stopped reading before the turn's calls: nothing ran.
    assert ran == []


async def paused_chat() -> tuple[Agent, list[str], list[dict[str, Any]]]:
    """An agent whose chat "chat" paused on two writes; the chunks it streamed."""
    from tests.runtime.test_agent import calling

    ran: list[str] = []
    registry = ToolRegistry()

    def touch(what: str) -> str:
        """Touch.

        Args:
            what: what.
        """
        ran.append(what)
        return "ok"

    registry.register(touch, effect="write", needs_approval=True)
    agent = Agent(
        FakeClient([calling(("touch", {"what": "a"}), ("touch", {"what": "b"})), answer("x")]),
        registry,
    )
    _, _, stream = await vercel_response(agent, body())
    text = b"".join([c async for c in stream]).decode()
    chunks = [
        json.loads(line[6:])
        for line in text.split("\n")
        if line.startswith("data: {")  # the JSON chunks, not [DONE]
    ]
    return agent, ran, chunks


def answering(*answers: tuple[str, bool]) -> dict[str, Any]:
    parts = [
        {"type": "tool-touch", "state": "approval-responded", "approval": {"id": i, "approved": a}}
        for i, a in answers
    ]
    return body(messages=[{"id": "a1", "role": "assistant", "parts": parts}])


async def test_answers_that_do_not_match_the_pause_are_a_400_and_run_nothing() -> None:
    agent, ran, chunks = await paused_chat()
    asked = [c["approvalId"] for c in chunks if c["type"] == "tool-approval-request"]
    assert len(asked) == 2 and ran == []
    token = asked[0].partition(".")[0]
    for answers in (
        [(asked[0], True)],  # one of two
        [(asked[0], True), (asked[0], False)],  # the same twice
        [(asked[0], True), (f"{token}.nosuch", True)],  # a call not pending
        [(asked[0], True), ("other-token." + asked[1].partition(".")[2], True)],  # two pauses
        [("no-dot", True), (asked[1], True)],
    ):
        status, _, _ = await vercel_response(agent, answering(*answers))
        assert status == 400, answers
    assert ran == []
    status, _, stream = await vercel_response(agent, answering((asked[0], True), (asked[1], True)))
    assert status == 200
    assert b"[DONE]" in b"".join([c async for c in stream])
    assert sorted(ran) == ["a", "b"]  # each once (they may run side by side)
