"""One answer to "what JSON kind is this value" (issue 10, item 5), for the core's
messages about arguments and the tools' validation messages alike."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sse_toolcalls import ToolCallParser
from sse_toolcalls._json import JSON_TYPE_PHRASES, json_type


@pytest.mark.parametrize(
    ("value", "kind"),
    [(None, "null"), (True, "boolean"), (0, "integer"), (2**70, "integer"), (1.5, "number"),
     ("", "string"), ([], "array"), ((), "array"), ({}, "object"), ({1}, "set")],
)  # fmt: skip
def test_each_value_has_its_json_schema_type(value: Any, kind: str) -> None:
    assert json_type(value) == kind


@pytest.mark.parametrize(
    ("arguments", "phrase"),
    [("[1]", "an array"), ('"x"', "a string"), ("true", "a boolean"), ("null", "null"),
     ("7", "an integer"), ("7.5", "a number")],
)  # fmt: skip
def test_arguments_that_are_no_object_are_named_by_their_kind(arguments: str, phrase: str) -> None:
    call = {"index": 0, "id": "c", "function": {"name": "f", "arguments": arguments}}
    chunk = json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
    (done,) = ToolCallParser("openai_chat").feed(f"data: {chunk}\n\ndata: [DONE]\n\n".encode())
    assert done.arguments_error == f"arguments must be a JSON object, got {phrase}"
    assert phrase in JSON_TYPE_PHRASES.values()
