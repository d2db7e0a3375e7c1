"""The dialects' hot paths read an event's JSON themselves and build calls without the
dataclass's ``__init__`` (issue 16, W2 and W4); they must answer exactly as the general
readers do (``event_object``, ``event_object_bounded``, ``ToolCall(...)``).

Every data that is not a JSON object within the limits goes to the general reader: its
error (the same message, the same class) or its "nothing to read" (``None``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from sse_toolcalls.calls import DIALECTS, Dialect, ToolCall, ToolCallCompleted, _Deferred
from sse_toolcalls.dialects import _common, reassembler_for
from sse_toolcalls.errors import SSEToolCallsError
from sse_toolcalls.framing.sse import ServerSentEvent

_DEEP = "[" * 200 + "]" * 200
_NOT_OBJECTS = [
    "null",
    " null ",
    "   ",
    "[1]",
    '"x"',
    "1",
    "true",
    "{bad",
    '{"a":1}}',
    "NaN",
    '{"n": 1e400}',
    '"\\ud800"',
    _DEEP,
    '{"functionCall": ' + _DEEP + "}",
    '["functionCall"]',
    '{"functionCall": nope}',
    "null " + '"functionCall"',
]


# The event each dialect reads its payload from: the Bedrock dialects name their events
# by type (event-stream messages), the others read any name.
_EVENT_NAME = {"bedrock_converse": "contentBlockDelta", "bedrock_anthropic": "chunk"}


def _outcome(run: Any) -> tuple[str, ...]:
    try:
        result = run()
    except SSEToolCallsError as exc:
        return ("error", type(exc).__name__, str(exc))
    return ("value", repr(result))


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("data", _NOT_OBJECTS)
def test_what_is_not_an_object_gets_the_general_readers_answer(dialect: Dialect, data: str) -> None:
    event = ServerSentEvent(_EVENT_NAME.get(dialect, "message"), data, "", None)
    # Gemini reads an event with a functionCall exact and bounded, the others plainly.
    bounded = dialect == "gemini" and "functionCall" in data
    reader = _common.event_object_bounded if bounded else _common.event_object
    expected = _outcome(lambda: reader(event, dialect))
    got = _outcome(lambda: reassembler_for(dialect, rich=False).handle([event]))
    if expected[0] == "error":
        # The handler's error is the reader's (MalformedStreamError, LimitExceededError).
        assert got == expected
    elif dialect in _EVENT_NAME and data.lstrip().startswith("{"):
        # A Bedrock event is named by its type, so an object without that type's fields
        # (a contentBlockDelta without its index, a chunk without its bytes) is malformed.
        assert got[:2] == ("error", "MalformedStreamError")
    else:
        # Nothing to read: the event is skipped (None, or a JSON object of nothing).
        assert got == ("value", "[]")


def test_calls_are_built_as_the_dataclass_builds_them() -> None:
    values: dict[str, Any] = {
        "name": "get_weather",
        "args": {"city": "Zürich"},
        "provider": "gemini",
        "call_id": "call_1",
        "index": 3,
        "raw_arguments": '{"city":"Zürich"}',
        "arguments_error": None,
        "thought_signature": "sig",
        "item_id": "fc_1",
    }
    names = [f.name for f in dataclasses.fields(ToolCall)]
    assert names == list(values), "a ToolCall field changed: update _tool_call_builder"
    # The fast builder is the one in use (it falls back to ToolCall(**...) otherwise).
    assert _common._new_tool_call.__name__ == "build"
    built = _common._new_tool_call(*values.values())
    reference = ToolCall(**values)
    assert type(built) is ToolCall
    assert built == reference
    assert repr(built) == repr(reference)
    for name in names:
        assert getattr(built, name) == values[name]
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.name = "other"  # type: ignore[misc]


def test_completed_events_and_deferred_texts_are_built_as_their_classes_build_them() -> None:
    # The slots set inline by Gemini's hot path and by _emit_call (h38).
    assert _common._set_completed_call is not None
    assert _common._set_deferred_make is not None
    call = ToolCall(name="f", args={}, provider="gemini", call_id=None, index=0)
    built = _common._new_object(ToolCallCompleted)
    _common._set_completed_call(built, call)
    reference = ToolCallCompleted(call=call)
    assert type(built) is ToolCallCompleted
    assert built == reference
    assert repr(built) == repr(reference)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.call = call  # type: ignore[misc]
    deferred = _common._new_object(_Deferred)
    _common._set_deferred_make(deferred, str)
    assert deferred.make is str


def test_a_class_with_more_than_its_one_slot_is_built_by_the_class() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Two:
        call: int
        other: int = 0

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        call: int

        def __post_init__(self) -> None:
            pass

    assert _common._only_slot(Two, "call") is None
    assert _common._only_slot(Checked, "call") is None
    assert _common._only_slot(ToolCallCompleted, "call") is not None
