"""Gemini streamed arguments (Vertex ``partialArgs``) never give a guessed call (issue 29,
item 10): a part whose arguments come as ``partialArgs`` outside a streamed call, and a
string still marked to continue when its call closes, are a malformed stream, at every
split and through the parsed-event path alike."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sse_toolcalls import MalformedStreamError, StreamParser, ToolCallParser

pytestmark = pytest.mark.parametrize("rich", [False, True])


def _parts(*items: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(items)}}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate]}


def _body(*events: dict[str, Any]) -> bytes:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()


def _run_bytes(events: list[dict[str, Any]], rich: bool, size: int) -> list[Any]:
    raw = _body(*events)
    parser: Any = StreamParser("gemini") if rich else ToolCallParser("gemini")
    out: list[Any] = []
    for start in range(0, len(raw), size):
        out.extend(parser.feed(raw[start : start + size]))
    out.extend(parser.finish())
    return out


def _run_parsed(events: list[dict[str, Any]], rich: bool) -> list[Any]:
    parser: Any = StreamParser("gemini") if rich else ToolCallParser("gemini")
    out: list[Any] = []
    for event in events:
        out.extend(parser.feed_event(event))
    out.extend(parser.finish())
    return out


def _refused(events: list[dict[str, Any]], rich: bool, match: str) -> None:
    raw_len = len(_body(*events))
    for size in (raw_len, 1, 7):
        with pytest.raises(MalformedStreamError, match=match):
            _run_bytes(events, rich, size)
    with pytest.raises(MalformedStreamError, match=match):
        _run_parsed(events, rich)


_CITY = [{"jsonPath": "$.city", "stringValue": "Oslo"}]


def test_partial_args_on_a_part_that_opens_no_streamed_call_is_refused(rich: bool) -> None:
    # Before: released as weather({}), the arguments dropped without a word.
    events = [
        _parts({"functionCall": {"name": "weather", "partialArgs": _CITY}}),
        _parts({"text": ""}, finish="STOP"),
    ]
    _refused(events, rich, "partialArgs")


def test_partial_args_without_a_name_or_an_open_call_is_refused(rich: bool) -> None:
    # A continuation with no streamed call to continue: before, a call named "" with {}.
    events = [
        _parts({"functionCall": {"partialArgs": _CITY}}),
        _parts({"text": ""}, finish="STOP"),
    ]
    _refused(events, rich, "partialArgs")


def test_partial_args_in_the_max_tokens_part_is_refused_too(rich: bool) -> None:
    # The last part of a MAX_TOKENS event is held as a partial call, never released; a
    # part that breaks the protocol is still reported as what it is.
    events = [
        _parts({"functionCall": {"name": "weather", "partialArgs": _CITY}}, finish="MAX_TOKENS")
    ]
    _refused(events, rich, "partialArgs")


def test_a_string_still_continuing_when_its_call_closes_is_refused(rich: bool) -> None:
    # Before: released as weather({"city": "Os"}), a cut value passed off as whole.
    events = [
        _parts({"functionCall": {"name": "weather", "willContinue": True}}),
        _parts(
            {
                "functionCall": {
                    "partialArgs": [
                        {"jsonPath": "$.city", "stringValue": "Os", "willContinue": True}
                    ],
                    "willContinue": True,
                }
            }
        ),
        _parts({"functionCall": {}}),
        _parts({"text": ""}, finish="STOP"),
    ]
    _refused(events, rich, "still continuing")


def test_the_closing_part_itself_may_not_leave_a_string_open(rich: bool) -> None:
    events = [
        _parts({"functionCall": {"name": "weather", "willContinue": True}}),
        _parts(
            {
                "functionCall": {
                    "partialArgs": [
                        {"jsonPath": "$.city", "stringValue": "Os", "willContinue": True}
                    ]
                }
            }
        ),
        _parts({"text": ""}, finish="STOP"),
    ]
    _refused(events, rich, "still continuing")


def test_well_formed_streamed_and_whole_calls_still_pass(rich: bool) -> None:
    # The refusals above are not a refusal of the protocol: the same values, well formed.
    events = [
        _parts({"functionCall": {"name": "weather", "willContinue": True, "partialArgs": []}}),
        _parts(
            {
                "functionCall": {
                    "partialArgs": [
                        {"jsonPath": "$.city", "stringValue": "Os", "willContinue": True}
                    ],
                    "willContinue": True,
                }
            }
        ),
        _parts({"functionCall": {"partialArgs": [{"jsonPath": "$.city", "stringValue": "lo"}]}}),
        _parts({"functionCall": {"name": "time", "args": {"zone": "CET"}, "partialArgs": []}}),
        _parts({"text": ""}, finish="STOP"),
    ]
    for out in (_run_bytes(events, rich, 5), _run_parsed(events, rich)):
        calls = [getattr(item, "call", item) for item in out]
        calls = [c for c in calls if hasattr(c, "args")]
        assert [(c.name, c.args) for c in calls] == [
            ("weather", {"city": "Oslo"}),
            ("time", {"zone": "CET"}),
        ]
