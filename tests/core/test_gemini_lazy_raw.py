"""Gemini's raw argument text is made when it is read, never before, and is the same text
the eager encoding gave (issue 16, item 2): the encoding of the args as they arrived."""

from __future__ import annotations

import dataclasses
import json
import pickle
from typing import Any

import pytest

from sse_toolcalls import ToolCall, ToolCallParser, _json

ARGS: dict[str, Any] = {"path": "/tmp/a b.py", "n": [1, 2.5, None, True], "big": 2**70, "s": "é"}


def gemini_body(*calls: dict[str, Any]) -> bytes:
    parts = [{"functionCall": {"name": f"f{i}", "args": a}} for i, a in enumerate(calls)]
    event = {"candidates": [{"content": {"parts": parts}, "finishReason": "STOP", "index": 0}]}
    return f"data: {json.dumps(event)}\r\n\r\n".encode()


def parse(body: bytes) -> list[ToolCall]:
    parser = ToolCallParser("gemini")
    return parser.feed(body) + parser.finish()


def expected_raw(args: dict[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"))


def test_no_encoding_until_read(monkeypatch: pytest.MonkeyPatch) -> None:
    _json.loads("1")  # orjson bound, so the counter below sees every encoding
    made: list[object] = []
    real = _json.dumps

    def counting(value: Any) -> bytes:
        made.append(value)
        return real(value)

    monkeypatch.setattr(_json, "dumps", counting)
    small = {"a": 1}
    calls = parse(gemini_body(small, {"b": [1]}))
    assert [c.args for c in calls] == [small, {"b": [1]}]
    assert made == []
    assert calls[0].raw_arguments == '{"a":1}'
    assert len(made) == 1
    assert calls[0].raw_arguments == '{"a":1}'  # made once, then kept
    assert len(made) == 1


def test_raw_is_what_arrived_whatever_the_caller_did_to_args() -> None:
    (call,) = parse(gemini_body(ARGS))
    assert call.args == ARGS  # the big integer exact
    call.args["path"] = "changed"
    call.args["n"].append("x")
    assert json.loads(call.raw_arguments) == ARGS
    assert call.raw_arguments == expected_raw(ARGS)


def test_a_deferred_call_equals_and_copies_as_a_stored_one() -> None:
    (call,) = parse(gemini_body({"a": [1, {"b": None}]}))
    stored = ToolCall(
        name="f0",
        args={"a": [1, {"b": None}]},
        provider="gemini",
        call_id=None,
        index=0,
        raw_arguments='{"a":[1,{"b":null}]}',
    )
    assert call == stored
    (again,) = parse(gemini_body({"a": [1, {"b": None}]}))
    assert repr(again) == repr(stored)
    (again,) = parse(gemini_body({"a": [1, {"b": None}]}))
    assert pickle.loads(pickle.dumps(again)) == stored
    (again,) = parse(gemini_body({"a": [1, {"b": None}]}))
    assert dataclasses.replace(again, name="g").raw_arguments == stored.raw_arguments
    (again,) = parse(gemini_body({"a": [1, {"b": None}]}))
    assert dataclasses.asdict(again) == dataclasses.asdict(stored)
    with pytest.raises(dataclasses.FrozenInstanceError):
        again.raw_arguments = "x"  # type: ignore[misc]


def test_two_candidates_and_parts_each_read_their_own_args() -> None:
    parts = [
        {"text": "hi"},
        {"functionCall": {"name": "a", "args": {"x": 1}}},
        {"functionCall": {"name": "b", "args": {"y": [2]}}},
        {"functionCall": {"name": "c"}},
    ]
    other = {"content": {"parts": [{"functionCall": {"name": "z", "args": {"no": 0}}}]}, "index": 1}
    event = {
        "candidates": [other, {"content": {"parts": parts}, "finishReason": "STOP", "index": 0}]
    }
    calls = parse(f"data: {json.dumps(event)}\r\n\r\n".encode())
    assert [(c.name, c.raw_arguments) for c in calls] == [
        ("a", '{"x":1}'),
        ("b", '{"y":[2]}'),
        ("c", "{}"),
    ]


def nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"k": value}
    return value


@pytest.mark.parametrize("levels", [100, 101])
def test_depth_limit_as_before(levels: int) -> None:
    (call,) = parse(gemini_body(nested(levels)))
    if levels == 100:
        assert call.arguments_error is None
        assert call.args == nested(100)
    else:
        assert call.args == {}
        assert call.arguments_error == (
            "arguments nest 101 levels, over MAX_PARSED_ARGUMENTS_DEPTH=100"
        )
    assert call.raw_arguments == expected_raw(nested(levels))
