"""Every formatted result carries exactly its own call's id, in every dialect.

The property the issue asks for: in a turn with several calls of the same function,
height's result never lands on weight's call. Checked on arbitrary turns (Hypothesis)
and on every complete call of the recorded real streams.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sse_toolcalls.calls import DIALECTS, Dialect, ToolCall, ToolResult
from sse_toolcalls.messages import assistant_turn, format_results
from sse_toolcalls.parser import ToolCallParser
from tests.outside import EXTERNAL_STREAMS, corpus_params, manifest_entries

OWN = Path(__file__).resolve().parents[2] / "recorded_streams"


def addressed(dialect: Dialect, formatted: list[dict[str, Any]]) -> list[tuple[str | None, Any]]:
    """(id, payload) of each formatted result, in the order they were formatted."""
    if dialect == "openai_chat":
        return [(m.get("tool_call_id"), m["content"]) for m in formatted]
    if dialect == "openai_responses":
        return [(m["call_id"], m["output"]) for m in formatted]
    if dialect in ("anthropic", "bedrock_anthropic"):
        (message,) = formatted
        return [(b["tool_use_id"], b["content"]) for b in message["content"]]
    if dialect == "bedrock_converse":
        (message,) = formatted
        return [
            (b["toolResult"]["toolUseId"], b["toolResult"]["content"][0]["text"])
            for b in message["content"]
        ]
    (content,) = formatted
    return [
        (p["functionResponse"].get("id"), p["functionResponse"]["response"]["output"])
        for p in content["parts"]
    ]


def addressed_calls(dialect: Dialect, turn: list[dict[str, Any]]) -> list[str | None]:
    """The ids of the calls in a formatted assistant turn, in order."""
    if dialect == "openai_chat":
        return [c.get("id") for c in turn[0]["tool_calls"]]
    if dialect == "openai_responses":
        return [i["call_id"] for i in turn if i["type"] == "function_call"]
    if dialect in ("anthropic", "bedrock_anthropic"):
        return [b["id"] for b in turn[0]["content"] if b["type"] == "tool_use"]
    if dialect == "bedrock_converse":
        return [b["toolUse"]["toolUseId"] for b in turn[0]["content"] if "toolUse" in b]
    return [p["functionCall"].get("id") for p in turn[0]["parts"] if "functionCall" in p]


def payload_of(call: ToolCall) -> str:
    """A result that names its own call, so a misrouted result is visible."""
    return f"result-of-{call.index}-{call.call_id}"


@st.composite
def turns(draw: st.DrawFn) -> tuple[Dialect, list[ToolCall]]:
    dialect = draw(st.sampled_from(DIALECTS))
    count = draw(st.integers(min_value=1, max_value=8))
    # Few distinct names, so several calls of the same function are the common case.
    names = draw(st.lists(st.sampled_from(["height", "weight"]), min_size=count, max_size=count))
    ids = draw(
        st.lists(
            st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=1, max_size=12),
            min_size=count,
            max_size=count,
            unique=True,
        )
    )
    calls = [
        ToolCall(
            name=name,
            args={"person": i},
            provider=dialect,
            call_id=call_id,
            index=i,
            raw_arguments=json.dumps({"person": i}),
        )
        for i, (name, call_id) in enumerate(zip(names, ids, strict=True))
    ]
    return dialect, calls


@given(turn=turns(), data=st.data())
def test_each_result_carries_its_own_calls_id(
    turn: tuple[Dialect, list[ToolCall]], data: st.DataObject
) -> None:
    dialect, calls = turn
    results = [ToolResult(call=c, content=payload_of(c)) for c in calls]
    shuffled = data.draw(st.permutations(results))
    out = addressed(dialect, format_results(shuffled))
    # In call order, and each payload sits under the id of the call it answers.
    assert out == [(c.call_id, payload_of(c)) for c in calls]
    # The replayed assistant turn lists the same ids in the same order, so results and
    # calls pair up by position too (Anthropic and Gemini check both).
    assert addressed_calls(dialect, assistant_turn("", calls)) == [c.call_id for c in calls]


def _complete_streams() -> list[Any]:
    """Every complete stream of the project's corpus, then of the outside one (each a
    ``(folder, entry)`` pair; the outside ones skip without ``../shared/``)."""
    own = json.loads((OWN / "MANIFEST.json").read_text())
    outside = [e for e in manifest_entries() if e["expected"]["outcome"] == "complete"]
    return [
        pytest.param((OWN, entry), id=f"recorded_streams/{entry['file']}")
        for entry in own
        if entry["expected"]["outcome"] == "complete"
    ] + corpus_params(
        [(EXTERNAL_STREAMS, e) for e in outside], [f"external_streams/{e['file']}" for e in outside]
    )


@pytest.mark.parametrize("stream", _complete_streams())
def test_streams_results_go_to_their_own_calls(stream: tuple[Path, dict[str, Any]]) -> None:
    folder, entry = stream
    provider = entry["provider"]
    dialect: Dialect = "openai_chat" if provider.startswith("openai_compat_") else provider
    parser = ToolCallParser(dialect)
    data = (folder / entry["file"]).read_bytes()
    calls = parser.feed(data) + parser.finish()
    assert [c.call_id for c in calls if c.call_id is not None] == [
        c["call_id"] for c in entry["expected"]["calls"] if c.get("call_id") is not None
    ]
    results = [ToolResult(call=c, content=payload_of(c)) for c in reversed(calls)]
    out = addressed(dialect, format_results(results))
    # Both are written in the model's order (the calls' indexes), whatever order the calls
    # completed in (Responses items may finish out of order: interleaved_items_*).
    calls = sorted(calls, key=lambda c: c.index)
    assert out == [(c.call_id, payload_of(c)) for c in calls]
    assert addressed_calls(dialect, assistant_turn("", calls)) == [c.call_id for c in calls]
    if dialect == "gemini":
        # Gemini: one content, one part per call, named after the call it answers; the
        # first call's thought signature goes back on its part.
        (content,) = format_results(results)
        assert [p["functionResponse"]["name"] for p in content["parts"]] == [c.name for c in calls]
        (turn,) = assistant_turn("", calls)
        assert [p.get("thoughtSignature") for p in turn["parts"]] == [
            c.thought_signature for c in calls
        ]
