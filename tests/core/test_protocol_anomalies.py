"""Provider-protocol contradictions are never resolved by a guess the user cannot see.

Anthropic: a ``content_block_delta`` or ``content_block_stop`` for a block that is not
open (never started, or already stopped) is a ``MalformedStreamError``, as a second
start over an open block is (the API never sends one: anthropic-sdk-python#1273, whose
accumulator fails on it too; proxies do, and their arguments went nowhere, so the call
was released with its start's empty input).

Responses: two final texts of one call (``function_call_arguments.done`` and the item of
``output_item.done`` or of the completed response) that differ are a
``MalformedStreamError``; streamed deltas that differ from the final text are replaced
by it, as the protocol says (the final text is authoritative; providers send corrected
final JSON, kimi-code#1455), with a WARNING record saying so.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from sse_toolcalls import MalformedStreamError, StreamParser, ToolCall, ToolCallParser
from tests.core.test_hostile_streams import sse


def _anthropic(*middle: dict[str, Any]) -> bytes:
    return sse(
        {"type": "message_start", "message": {"usage": {"input_tokens": 1}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t1", "name": "pay", "input": {}},
        },
        *middle,
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
        names=True,
    )


def _delta(index: int, fragment: Any = '{"to": "bob"}') -> dict[str, Any]:
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "input_json_delta", "partial_json": fragment},
    }


def _stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def _parse(dialect: Any, raw: bytes, *, rich: bool) -> list[ToolCall]:
    if rich:
        parser: Any = StreamParser(dialect)
        events = parser.feed(raw) + parser.finish()
        return [e.call for e in events if type(e).__name__ == "ToolCallCompleted"]
    calls = ToolCallParser(dialect)
    released: list[ToolCall] = calls.feed(raw) + calls.finish()
    return released


@pytest.mark.parametrize("rich", [True, False], ids=["rich", "calls"])
@pytest.mark.parametrize(
    "middle",
    [
        pytest.param((_delta(1), _stop(0)), id="delta-for-a-block-never-started"),
        pytest.param((_stop(0), _delta(0)), id="delta-after-the-block-stopped"),
        pytest.param((_delta(0), _stop(1)), id="stop-for-a-block-never-started"),
        pytest.param((_delta(0), _stop(0), _stop(0)), id="stop-twice"),
        pytest.param((_delta(0, 5), _stop(0)), id="partial-json-not-a-string"),
    ],
)
def test_anthropic_events_for_a_block_that_is_not_open_are_malformed(
    middle: tuple[dict[str, Any], ...], rich: bool
) -> None:
    with pytest.raises(MalformedStreamError, match="anthropic: ") as caught:
        _parse("anthropic", _anthropic(*middle), rich=rich)
    assert caught.value.provider == "anthropic"


@pytest.mark.parametrize("rich", [True, False], ids=["rich", "calls"])
def test_anthropic_well_formed_blocks_still_parse(rich: bool) -> None:
    text = {"type": "content_block_start", "index": 1, "content_block": {"type": "text"}}
    text_delta = {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta"}}
    raw = _anthropic(_delta(0), _stop(0), text, {**text_delta, "delta": {"text": "ok"}}, _stop(1))
    assert [c.args for c in _parse("anthropic", raw, rich=rich)] == [{"to": "bob"}]


def _responses(
    deltas: list[str], done: str | None, item: str | None, *, completed: bool = True
) -> bytes:
    base = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "pay"}
    events: list[dict[str, Any]] = [
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**base, "arguments": "", "status": "in_progress"},
        }
    ]
    events += [
        {"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": d}
        for d in deltas
    ]
    if done is not None:
        events.append(
            {"type": "response.function_call_arguments.done", "item_id": "fc_1", "arguments": done}
        )
    if item is not None:
        events.append(
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": {**base, "arguments": item, "status": "completed"},
            }
        )
    if completed:
        events.append(
            {"type": "response.completed", "response": {"status": "completed", "output": []}}
        )
    return sse(*events, names=True)


@pytest.mark.parametrize("rich", [True, False], ids=["rich", "calls"])
def test_responses_two_final_texts_that_differ_are_malformed(rich: bool) -> None:
    raw = _responses(['{"to": "bob"}'], '{"to": "bob"}', '{"to": "eve"}')
    with pytest.raises(MalformedStreamError, match=r"openai_responses: .*call_1") as caught:
        _parse("openai_responses", raw, rich=rich)
    assert caught.value.provider == "openai_responses"


@pytest.mark.parametrize("rich", [True, False], ids=["rich", "calls"])
def test_responses_arguments_done_against_the_completed_output_that_differs_is_malformed(
    rich: bool,
) -> None:
    base = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "pay"}
    raw = _responses([], '{"to": "bob"}', None, completed=False) + sse(
        {
            "type": "response.completed",
            "response": {
                "status": "completed",
                "output": [{**base, "arguments": '{"to": "eve"}', "status": "completed"}],
            },
        },
        names=True,
    )
    with pytest.raises(MalformedStreamError, match="call_1"):
        _parse("openai_responses", raw, rich=rich)


@pytest.mark.parametrize("rich", [True, False], ids=["rich", "calls"])
@pytest.mark.parametrize(
    ("done", "item"),
    [('{"to": "eve"}', '{"to": "eve"}'), ('{"to": "eve"}', None), (None, '{"to": "eve"}')],
)
def test_responses_deltas_replaced_by_the_final_text_are_said(
    done: str | None, item: str | None, rich: bool, caplog: pytest.LogCaptureFixture
) -> None:
    raw = _responses(['{"to": ', '"bob"}'], done, item)
    with caplog.at_level(logging.WARNING, logger="sse_toolcalls.dialects"):
        calls = _parse("openai_responses", raw, rich=rich)
    assert [c.args for c in calls] == [{"to": "eve"}]
    (record,) = [r for r in caplog.records if r.name == "sse_toolcalls.dialects"]
    assert getattr(record, "event", None) == "arguments_replaced"
    assert getattr(record, "provider", None) == "openai_responses"
    assert getattr(record, "call_id", None) == "call_1"
    assert getattr(record, "streamed", None) == '{"to": "bob"}'
    assert getattr(record, "final", None) == '{"to": "eve"}'


@pytest.mark.parametrize(
    ("deltas", "done", "item"),
    [
        (['{"to": ', '"bob"}'], '{"to": "bob"}', '{"to": "bob"}'),
        ([], '{"to": "bob"}', '{"to": "bob"}'),  # done-only streams (no deltas)
        ([], None, '{"to": "bob"}'),
    ],
)
def test_responses_texts_that_agree_are_quiet(
    deltas: list[str], done: str | None, item: str | None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="sse_toolcalls"):
        calls = _parse("openai_responses", _responses(deltas, done, item), rich=False)
    assert [c.args for c in calls] == [{"to": "bob"}]
    assert [r for r in caplog.records if r.name.startswith("sse_toolcalls")] == []
