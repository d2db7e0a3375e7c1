"""Gemini's hot path (text parts and whole ``functionCall`` parts read in ``_candidate``,
h38) answers exactly as ``_part``, which says every rule: the same rich events, the same
calls with the same raw text, the same error, on Hypothesis-generated events of every
shape the reader meets (ids and names of every JSON type, args of every type and past
the depth limit, thoughts, signatures, streamed calls around whole ones, MAX_TOKENS,
other candidates), with the compiled scan and the pure one."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sse_toolcalls import StreamParser
from sse_toolcalls.calls import ToolCallCompleted
from sse_toolcalls.dialects import _common
from sse_toolcalls.dialects.gemini import stream
from sse_toolcalls.errors import SSEToolCallsError

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.text(max_size=4))


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"k": value}
    return value


def _mostly(good: st.SearchStrategy[Any], rare: st.SearchStrategy[Any]) -> Any:
    """``good`` seven times in eight: what would end the stream early (a name that is
    not a string, a part that is not an object) must not hide what comes after it."""
    return st.integers(0, 7).flatmap(lambda n: rare if n == 0 else good)


_ARGS = _mostly(
    st.one_of(
        st.none(),
        st.dictionaries(
            st.text(max_size=3), st.one_of(_SCALARS, st.lists(_SCALARS, max_size=3)), max_size=3
        ),
        st.sampled_from([_nested(100), _nested(101), {"big": 2**80, "n": 1.5}]),
    ),
    st.one_of(st.lists(_SCALARS, max_size=2), st.text(max_size=8)),
)
_NAMES = _mostly(
    st.one_of(st.sampled_from(["f", "get_weather", ""]), st.text(max_size=3)), _SCALARS
)
_IDS = _mostly(st.sampled_from(["c1", "", None]), _SCALARS)


@st.composite
def _function_call(draw: st.DrawFn) -> dict[str, Any]:
    call: dict[str, Any] = {}
    if draw(st.integers(0, 7)):
        call["name"] = draw(_NAMES)
    if draw(st.booleans()):
        call["id"] = draw(_IDS)
    if draw(st.integers(0, 3)):
        call["args"] = draw(_ARGS)
    if draw(st.integers(0, 7)) == 0:
        call["willContinue"] = draw(st.one_of(st.booleans(), st.none()))
    if draw(st.integers(0, 7)) == 0:
        call["partialArgs"] = [{"jsonPath": "$.a", "stringValue": draw(st.text(max_size=3))}]
    return call


@st.composite
def _part(draw: st.DrawFn) -> Any:
    kind = draw(st.integers(0, 11))
    if kind < 3:
        part: dict[str, Any] = {"text": draw(_mostly(st.text(max_size=5), _SCALARS))}
        if draw(st.booleans()):
            part["thought"] = draw(st.booleans())
        return part
    if kind == 11:
        return draw(st.sampled_from([[], "x", None, {"functionCall": [1]}, {}]))
    part = {"functionCall": draw(_function_call())}
    if draw(st.booleans()):
        part["thoughtSignature"] = draw(st.one_of(st.text(max_size=3), _SCALARS))
    return part


@st.composite
def _event(draw: st.DrawFn) -> dict[str, Any]:
    candidates = []
    for position in range(draw(st.integers(1, 2))):
        candidate: dict[str, Any] = {"content": {"parts": draw(st.lists(_part(), max_size=4))}}
        if position or draw(st.integers(0, 3)) == 0:
            candidate["index"] = draw(st.sampled_from([0, 1]))
        if draw(st.booleans()):
            candidate["finishReason"] = draw(
                _mostly(st.sampled_from(["STOP", "MAX_TOKENS"]), st.just("SAFETY"))
            )
        candidates.append(candidate)
    return {"candidates": candidates}


# Shapes each rule of the hot path turns on, always tried: a thought, a call the limit
# may have cut, a streamed call and a whole part after it, a signature that is no string.
_EDGES: dict[str, Any] = {
    "candidates": [
        {
            "content": {
                "parts": [
                    {"text": "why", "thought": True},
                    {"functionCall": {"name": "f", "args": {"a": 1}}, "thoughtSignature": 7},
                    {"functionCall": {"name": "g", "id": "c2"}, "thoughtSignature": "s"},
                    {"functionCall": {"name": "h", "args": {"b": [2**70]}}},
                ]
            },
            "finishReason": "MAX_TOKENS",
        }
    ]
}


def _body(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"data: {json.dumps(e)}\r\n\r\n".encode() for e in events)


def _outcome(body: bytes) -> list[Any]:
    parser = StreamParser("gemini")
    seen: list[Any] = []
    try:
        for chunk in body.split(b"\r\n\r\n"):
            _record(seen, parser.feed(chunk + b"\r\n\r\n"))
        _record(seen, parser.finish())
    except SSEToolCallsError as exc:
        seen.append((type(exc).__name__, str(exc)))
        for field in ("completed", "partial", "text"):
            seen.append(repr(getattr(exc, field, None)))
    return seen


def _record(seen: list[Any], events: list[Any]) -> None:
    for event in events:
        seen.append(repr(event))
        if isinstance(event, ToolCallCompleted):
            # The raw text, made when read.
            seen.append(event.call.raw_arguments)


def _reference_candidate(
    self: stream.GeminiReassembler, candidate: dict[str, Any], where: int = 0
) -> None:
    """``_candidate`` as it was before its hot path: every part to ``_part``."""
    content = candidate.get("content")
    reason = candidate.get("finishReason")
    cut: list[Any] = []
    if isinstance(content, dict):
        parts = content.get("parts") or ()
        last = len(parts) - 1
        limited = reason in stream._TRUNCATING
        for position, part in enumerate(parts):
            call = self._part(
                part, release=not (limited and position == last), where=(where, position)
            )
            if call is not None:
                cut.append(call)
    if isinstance(reason, str) and reason:
        self._finish(reason, candidate, cut)


def _slow(body: bytes) -> list[Any]:
    """The outcome with every part read by the reference (``_part``)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(stream.GeminiReassembler, "_candidate", _reference_candidate)
        return _outcome(body)


@pytest.mark.parametrize("twin", ["compiled", "pure"])
@settings(max_examples=200, deadline=None)
@given(events=st.lists(_event(), min_size=1, max_size=3))
@example(events=[_EDGES])
def test_hot_path_answers_as_part_does(twin: str, events: list[dict[str, Any]]) -> None:
    if twin == "compiled" and _common.C_JSON_SCAN is None:
        pytest.skip("the compiled scan is not built here")
    body = _body(events)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_common, "_c_json_scan", None if twin == "pure" else _common.C_JSON_SCAN)
        assert _outcome(body) == _slow(body)


def test_the_reference_really_goes_through_part(monkeypatch: pytest.MonkeyPatch) -> None:
    parts = [{"text": "a"}, {"functionCall": {"name": "f"}}]
    event = {"candidates": [{"content": {"parts": parts}}]}
    seen: list[Any] = []
    real = stream.GeminiReassembler._part

    def spy(self: stream.GeminiReassembler, part: Any, **kwargs: Any) -> Any:
        seen.append(part)
        return real(self, part, **kwargs)

    monkeypatch.setattr(stream.GeminiReassembler, "_part", spy)
    _outcome(_body([event]))
    assert seen == []  # the hot path took both
    _slow(_body([event]))
    assert seen == parts
