"""The AG-UI mapping (issue 32) on made-up runs: any order of the run's events gives a
well-formed AG-UI stream (every message, reasoning and call opened once and closed
before the end, nothing after it), and what a reader assembles holds the arguments that
ran, whatever the previews streamed; the way in refuses bad bodies with our error."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls.calls import (
    Document,
    Image,
    ReasoningDelta,
    TextDelta,
    ToolCall,
    ToolCallCompleted,
    ToolCallStarted,
    ToolResult,
)
from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime.agent import Agent
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.runtime.diagnostics import Diagnostic
from sse_toolcalls.runtime.events import (
    AgentEvent,
    FallbackShown,
    RequestStarted,
    RetryScheduled,
    RunFinished,
    ToolArgumentsPreview,
    ToolCallResult,
)
from sse_toolcalls.runtime.reply import AgentReply
from sse_toolcalls.runtime.report import CallReport
from sse_toolcalls.runtime.tools import ToolRegistry
from sse_toolcalls.runtime.ui.agui import (
    MAX_BODY_BYTES,
    AguiInputError,
    PausedRuns,
    agui_events,
    agui_response,
    conversation_of,
    parse_run_input,
)
from sse_toolcalls.runtime.ui.sse_out import sse_event
from sse_toolcalls.runtime.usage import Usage

from .js_clients import require_clients, run_script


def reply(text: str = "done", usage: Usage | None = None) -> AgentReply:
    return AgentReply(
        text=text,
        is_fallback=False,
        reason=None,
        diagnostics=(),
        calls=(),
        results=(),
        reports=(),
        conversation=(),
        steps=1,
        requests=1,
        usage=usage or Usage(),
    )


def call(index: int, args: dict[str, Any], call_id: str | None) -> ToolCall:
    return ToolCall(
        name="save",
        args=args,
        provider="gemini" if call_id is None else "openai_chat",
        call_id=call_id,
        index=index,
        raw_arguments=json.dumps(args),
    )


def result(c: ToolCall) -> ToolCallResult:
    r = ToolResult(call=c, content={"ok": c.index})
    return ToolCallResult(
        call=c, result=r, outcome="ok", report=CallReport(call=c, result=r, outcome="ok", runs=1)
    )


async def mapped(events: Iterable[AgentEvent], **kw: Any) -> list[dict[str, Any]]:
    async def source() -> AsyncIterator[AgentEvent]:
        for event in events:
            yield event

    return [e async for e in agui_events(source(), thread_id="t", run_id="r", **kw)]


def check_well_formed(out: list[dict[str, Any]]) -> None:
    """AG-UI's own ordering rules (the client's verifier, in short)."""
    assert out[0]["type"] == "RUN_STARTED"
    assert out[-1]["type"] in ("RUN_FINISHED", "RUN_ERROR")
    text: set[str] = set()
    calls: set[str] = set()
    reasoning: set[str] = set()
    spans: set[str] = set()
    for event in out[1:-1]:
        kind = event["type"]
        assert kind not in ("RUN_STARTED", "RUN_FINISHED", "RUN_ERROR")
        if kind == "TEXT_MESSAGE_START":
            assert event["messageId"] not in text
            text.add(event["messageId"])
        elif kind == "TEXT_MESSAGE_CONTENT":
            assert event["messageId"] in text and event["delta"]
        elif kind == "TEXT_MESSAGE_END":
            text.remove(event["messageId"])
        elif kind == "TOOL_CALL_START":
            assert event["toolCallId"] not in calls
            calls.add(event["toolCallId"])
        elif kind == "TOOL_CALL_ARGS":
            assert event["toolCallId"] in calls
        elif kind == "TOOL_CALL_END":
            calls.remove(event["toolCallId"])
        elif kind == "REASONING_START":
            spans.add(event["messageId"])
        elif kind == "REASONING_MESSAGE_START":
            assert event["messageId"] in spans
            reasoning.add(event["messageId"])
        elif kind == "REASONING_MESSAGE_CONTENT":
            assert event["messageId"] in reasoning
        elif kind == "REASONING_MESSAGE_END":
            reasoning.remove(event["messageId"])
        elif kind == "REASONING_END":
            assert event["messageId"] not in reasoning
            spans.remove(event["messageId"])
    assert not (text or calls or reasoning or spans)


def assembled_calls(out: list[dict[str, Any]]) -> dict[str, str]:
    """Each call's argument text as a reader ends with it (snapshots replace)."""
    args: dict[str, str] = {}
    for event in out:
        if event["type"] == "TOOL_CALL_START":
            args[event["toolCallId"]] = ""
        elif event["type"] == "TOOL_CALL_ARGS":
            args[event["toolCallId"]] += event["delta"]
        elif event["type"] == "MESSAGES_SNAPSHOT":
            args = {
                c["id"]: c["function"]["arguments"]
                for m in event["messages"]
                for c in m.get("toolCalls", ())
            }
    return args


ARGS = st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=6), max_size=3)


@st.composite
def turns(draw: st.DrawFn) -> tuple[list[AgentEvent], dict[str, Any]]:
    """A run: turns of text, reasoning and calls in any order, retries, results."""
    events: list[AgentEvent] = []
    ran: dict[str, Any] = {}
    steps = draw(st.integers(1, 3))
    for step in range(1, steps + 1):
        attempts = draw(st.integers(1, 2))
        for attempt in range(1, attempts + 1):
            events.append(RequestStarted(step=step, attempt=attempt))
            n_calls = draw(st.integers(0, 2))
            shared = draw(st.booleans())  # a proxy reusing one id, or none (Gemini)
            made = [
                call(
                    i,
                    draw(ARGS),
                    None if shared and step == 1 else (f"id{step}" if shared else f"id{step}{i}"),
                )
                for i in range(n_calls)
            ]
            pieces: list[AgentEvent] = []
            for c in made:
                pieces.append(ToolCallStarted(index=c.index, call_id=c.call_id, name=c.name))
                raw = c.raw_arguments
                # The previews: the real text in fragments, or anything at all.
                how = draw(st.sampled_from(["real", "junk", "none"]))
                frags = {"real": [raw[:3], raw[3:]], "junk": ["[1,", "x"], "none": []}[how]
                pieces += [
                    ToolArgumentsPreview(index=c.index, name=c.name, delta=f, arguments=None)
                    for f in frags
                ]
                pieces.append(ToolCallCompleted(call=c))
            # Text and reasoning anywhere, before, between and inside the calls.
            for piece in draw(st.lists(st.sampled_from(["t", "r"]), max_size=4)):
                text = draw(st.text(max_size=5))
                at = draw(st.integers(0, len(pieces)))
                pieces.insert(
                    at, TextDelta(text=text) if piece == "t" else ReasoningDelta(text=text)
                )
            events += pieces
            if attempt < attempts:
                diag = Diagnostic(kind="provider_retry", message="503")
                events.append(RetryScheduled(attempt=attempt, delay=0.0, diagnostic=diag))
                continue
            for c in made:
                events.append(result(c))
                ran[f"{step}/{c.index}"] = c.args
    if draw(st.booleans()):
        events.append(FallbackShown(reason="step_limit", text="Sorry."))
    events.append(RunFinished(reply=reply()))
    return events, ran


@settings(max_examples=150, deadline=None)
@given(run=turns())
def test_any_run_maps_to_a_well_formed_stream_holding_the_arguments_that_ran(
    run: tuple[list[AgentEvent], dict[str, Any]],
) -> None:
    events, ran = run
    out = anyio.run(mapped, events)
    check_well_formed(out)
    finals = assembled_calls(out)
    results = {e["toolCallId"] for e in out if e["type"] == "TOOL_CALL_RESULT"}
    # Every result is under a call the reader has, whose arguments read as those run.
    assert results <= finals.keys()
    assert sorted(json.dumps(json.loads(finals[i]), sort_keys=True) for i in results) == sorted(
        json.dumps(a, sort_keys=True) for a in ran.values()
    )


@pytest.mark.anyio
async def test_usage_is_carried_in_agui_accounting() -> None:
    usage = Usage(input_tokens=10, output_tokens=4, cache_read_tokens=3, reasoning_tokens=1)
    out = await mapped([RunFinished(reply=reply(usage=usage))], model="m1")
    assert out[-1]["usage"] == [
        {
            "model": "m1",
            "inputTokens": 10,
            "outputTokens": 4,
            "reasoningTokens": 1,
            "cachedInputTokens": 3,
            "totalTokens": 14,
        }
    ]
    assert "usage" not in (await mapped([RunFinished(reply=reply())]))[-1]


@pytest.mark.anyio
async def test_an_error_of_ours_from_the_run_closes_what_is_open_and_is_a_run_error() -> None:
    async def failing() -> AsyncIterator[AgentEvent]:
        yield RequestStarted(step=1, attempt=1)
        yield TextDelta(text="Hal")
        raise UsageError("the conversation cannot be encoded")

    out = [e async for e in agui_events(failing(), thread_id="t", run_id="r")]
    check_well_formed(out)
    assert out[-1] == {
        "type": "RUN_ERROR",
        "message": "the conversation cannot be encoded",
        "code": "UsageError",
    }


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[]",
        b'{"threadId": "t", "runId": "r"}',
        b'{"threadId": "", "runId": "r", "messages": []}',
        b'{"threadId": "t", "runId": "r", "messages": [], "resume": {}}',
        b'{"threadId": "t", "runId": "r\\n1", "messages": []}',
        b'{"threadId": "t", "runId": "r\\u0000", "messages": []}',
        b"{" + b" " * MAX_BODY_BYTES + b"}",
        b'{"threadId": "t", "runId": "r", "messages": [], "resume": [{"interruptId": "x/y"}]}',
    ],
)
@pytest.mark.anyio
async def test_a_bad_body_is_a_400_with_one_run_error_or_a_run_error(body: bytes) -> None:
    # Nothing reaches the provider: the loopback address is never dialled.
    provider = client_for("openai_chat", model="m", api_key="k", base_url="http://127.0.0.1:9")
    status, headers, chunks = agui_response(
        Agent(provider, ToolRegistry()), body, paused=PausedRuns()
    )
    data = b"".join([c async for c in chunks]).decode()
    events = [json.loads(line[6:]) for line in data.split("\n") if line.startswith("data: ")]
    assert headers["content-type"].startswith("text/event-stream")
    assert events[-1]["type"] == "RUN_ERROR"
    assert status == 400


@pytest.mark.parametrize(
    "messages",
    [
        [{"role": "tool", "toolCallId": "nope", "content": "x"}],
        [{"role": "wizard", "content": "x"}],
        [{"role": "user", "content": [{"type": "image", "url": "x"}]}],
        [
            {
                "role": "assistant",
                "toolCalls": [{"id": "a", "function": {"name": "f", "arguments": "[1]"}}],
            }
        ],
        ["a string"],
        [{"role": "assistant", "toolCalls": 5}],
        [{"role": "assistant", "toolCalls": True}],
    ],
)
def test_messages_that_are_no_conversation_are_refused(messages: list[Any]) -> None:
    with pytest.raises(AguiInputError):
        conversation_of(messages, "openai_chat")


def test_a_thread_reads_as_the_conversation_with_results_under_their_calls() -> None:
    got = conversation_of(
        [
            {"id": "s", "role": "system", "content": "be brief"},
            {"id": "u", "role": "user", "content": [{"type": "text", "text": "hi"}]},
            {
                "id": "a",
                "role": "assistant",
                "content": "",
                "toolCalls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"id": "r", "role": "reasoning", "content": "hmm"},
            {"id": "t", "role": "tool", "toolCallId": "c1", "content": "ok"},
        ],
        "openai_chat",
    )
    kinds = [type(m).__name__ for m in got]
    assert kinds == ["SystemPrompt", "UserMessage", "AssistantMessage", "ToolResultsMessage"]
    assert got[-1].results[0].call.call_id == "c1"  # type: ignore[union-attr]


def test_the_input_is_checked_and_the_paused_runs_are_bounded() -> None:
    assert parse_run_input({"threadId": "t", "runId": "r", "messages": []})["runId"] == "r"
    with pytest.raises(AguiInputError):
        parse_run_input({"threadId": "t", "runId": 3, "messages": []})
    with pytest.raises(UsageError):
        PausedRuns(limit=0)


@pytest.mark.anyio
async def test_a_results_media_are_parts_the_client_keeps_and_read_back_the_same() -> None:
    c = call(0, {"q": 1}, "c1")
    media = (
        Image(data=b"\x89PNG\r\n\x1a\n\x00\xff", media_type="image/png"),
        Document(url="https://example.invalid/a.pdf", media_type="application/pdf"),
    )
    r = ToolResult(call=c, content="two files", media=media)
    events: list[AgentEvent] = [
        RequestStarted(step=1, attempt=1),
        ToolCallStarted(index=0, call_id="c1", name="save"),
        ToolCallCompleted(call=c),
        ToolCallResult(
            call=c,
            result=r,
            outcome="ok",
            report=CallReport(call=c, result=r, outcome="ok", runs=1),
        ),
        RunFinished(reply=reply()),
    ]
    out = await mapped(events)
    [shown] = [e for e in out if e["type"] == "TOOL_CALL_RESULT"]
    assert [p["type"] for p in shown["content"]] == ["text", "image", "document"]
    require_clients()
    stream = b"".join(sse_event(json.dumps(e), id=str(n)) for n, e in enumerate(out, 1))
    got = run_script(
        "agui_read.mjs",
        json.dumps(
            {"stream": stream.decode(), "messages": [], "threadId": "t", "runId": "r"}
        ).encode(),
    )
    assert got["error"] is None, got
    assistant, tool = got["messages"]
    assert tool["content"] == shown["content"]
    [back] = conversation_of([assistant, tool], "anthropic")[1].results  # type: ignore[union-attr]
    assert back.content == "two files" and back.media == media


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
ROLE = st.sampled_from(["user", "assistant", "tool", "system", "developer", "reasoning", "x"])
MESSAGE = st.fixed_dictionaries(
    {"id": st.text(max_size=3), "role": ROLE},
    optional={
        "content": JSON
        | st.lists(
            st.fixed_dictionaries(
                {"type": st.sampled_from(["text", "image", "document"])},
                optional={"text": JSON, "source": JSON},
            )
        ),
        "toolCallId": st.sampled_from(["c1", "c2"]) | JSON,
        "toolCalls": st.integers()
        | st.booleans()
        | st.lists(
            st.fixed_dictionaries(
                {"id": st.sampled_from(["c1", "c2"]) | JSON},
                optional={
                    "function": st.fixed_dictionaries(
                        {},
                        optional={
                            "name": JSON,
                            "arguments": st.sampled_from(["{}", '{"a": 1}', "[", ""]) | JSON,
                        },
                    )
                },
            ),
            max_size=2,
        )
        | JSON,
        "error": JSON,
    },
)


@settings(max_examples=300, deadline=None)
@given(messages=st.lists(MESSAGE | JSON, max_size=5), body=JSON)
def test_any_input_is_a_run_or_our_error(messages: list[Any], body: Any) -> None:
    try:
        conversation_of(messages, "anthropic")
    except AguiInputError:
        pass
    for raw in (body, {"threadId": "t", "runId": "r", "messages": messages}):
        try:
            parse_run_input(json.dumps(raw).encode())
        except AguiInputError:
            pass


@pytest.mark.anyio
async def test_a_calls_signature_goes_to_the_client_and_comes_back_with_the_call() -> None:
    c = dataclasses.replace(call(0, {"q": 1}, None), thought_signature="c2lnbmF0dXJl")
    events: list[AgentEvent] = [
        RequestStarted(step=1, attempt=1),
        ToolCallStarted(index=0, call_id=None, name="save"),
        ToolCallCompleted(call=c),
        result(c),
        RunFinished(reply=reply()),
    ]
    out = await mapped(events)
    require_clients()
    stream = b"".join(sse_event(json.dumps(e), id=str(n)) for n, e in enumerate(out, 1))
    got = run_script(
        "agui_read.mjs",
        json.dumps(
            {"stream": stream.decode(), "messages": [], "threadId": "t", "runId": "r"}
        ).encode(),
    )
    assert got["error"] is None, got
    [shown] = got["messages"][0]["toolCalls"]
    assert shown["encryptedValue"] == "c2lnbmF0dXJl"
    back = conversation_of(got["messages"], "gemini")
    assert back[0].calls[0].thought_signature == "c2lnbmF0dXJl"  # type: ignore[union-attr]
    assert back[1].results[0].call.thought_signature == "c2lnbmF0dXJl"  # type: ignore[union-attr]


@settings(max_examples=15, deadline=None)
@given(run=turns())
def test_any_run_passes_the_clients_own_verifier(
    run: tuple[list[AgentEvent], dict[str, Any]],
) -> None:
    # The official client checks every ordering rule as it reads (a break is a run
    # error) and assembles the calls: the ones that ran, with the arguments that ran.
    require_clients()
    events, ran = run
    out = anyio.run(mapped, events)
    stream = b"".join(sse_event(json.dumps(e), id=str(n)) for n, e in enumerate(out, 1))
    got = run_script(
        "agui_read.mjs",
        json.dumps(
            {"stream": stream.decode(), "messages": [], "threadId": "t", "runId": "r"}
        ).encode(),
    )
    assert got["error"] is None, got
    results = {m["toolCallId"] for m in got["messages"] if m["role"] == "tool"}
    shown = {
        c["id"]: json.loads(c["function"]["arguments"])
        for m in got["messages"]
        for c in m.get("toolCalls") or ()
    }
    assert sorted(json.dumps(shown[i], sort_keys=True) for i in results) == sorted(
        json.dumps(a, sort_keys=True) for a in ran.values()
    )
