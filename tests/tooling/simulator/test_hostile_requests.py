"""Hostile requests to the simulator: whatever the body, on every route, the app answers
(200, or a 400 naming the problem) and never crashes."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls.tooling.simulator import ExpectedResult, Script, ScriptedCall, SimulatorApp, Turn

TWO_CALLS = Turn(
    text="Let me look both up.",
    thinking="The user wants both.",
    calls=(
        ScriptedCall(name="lookup_demo_value", args={"key": "height"}, call_id="c-h"),
        ScriptedCall(name="lookup_demo_value", args={"key": "weight", "unit": "kg"}),
    ),
)

_KEYS = st.sampled_from(
    [
        "messages", "role", "content", "text", "toolUse", "toolUseId", "name", "input",
        "toolResult", "status", "reasoningContent", "reasoningText", "signature",
        "redactedContent", "image", "document", "format", "source", "bytes", "json",
        "toolConfig", "tools", "toolSpec", "inputSchema", "description",
        "additionalModelRequestFields", "thinking", "type", "anthropic_version",
        "max_tokens", "tool_use_id", "id", "is_error", "data", "s3Location", "uri", "user",
        "assistant", "tool_use", "tool_result", "error", "png", "pdf",
        # The other dialects' words: the app is one, and every route must hold.
        "tool_calls", "function", "arguments", "tool_call_id", "call_id", "function_call",
        "function_call_output", "output", "reasoning", "encrypted_content", "contents",
        "parts", "model", "functionCall", "functionResponse", "response", "args",
        "thoughtSignature", "inlineData", "mimeType", "fileData", "fileUri", "image_url",
        "file_data", "filename", "store", "include", "reasoning_content", "thought",
    ]
)  # fmt: skip
_SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | _KEYS | st.text(max_size=5)
hostile = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=30,
)


async def _post(app: SimulatorApp, path: str, body: bytes) -> int:
    sent: list[dict[str, Any]] = []
    request = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return request.pop() if request else {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    path, _, query = path.partition("?")
    scope = {
        "type": "http",
        "method": "POST",
        "path": path,
        "headers": [],
        "query_string": query.encode(),
    }
    await app(scope, receive, send)
    return int(sent[0]["status"])


_NESTED = st.dictionaries(_KEYS, hostile, max_size=4)
_BLOCKS = st.lists(
    _NESTED
    | st.builds(lambda k, v: {k: v}, _KEYS, _NESTED)
    | st.builds(lambda k, v: {"type": k, **v}, _KEYS, _NESTED),
    max_size=4,
)
_MESSAGES = st.lists(
    st.builds(
        lambda shaped, extra: {**extra, **shaped},
        st.fixed_dictionaries(
            {
                "role": st.sampled_from(["user", "assistant", "tool", "model"]) | _SCALARS,
                "content": _BLOCKS | hostile,
            }
        ),
        st.dictionaries(_KEYS, _BLOCKS | hostile, max_size=3),
    ),
    max_size=4,
)


_HI: list[dict[str, Any]] = [{"role": "user", "content": [{"text": "hi"}]}]
_ROUTES: dict[str, tuple[str, dict[str, Any]]] = {
    "bedrock_converse": ("/model/m/converse-stream", {"messages": _HI}),
    "bedrock_anthropic": (
        "/model/m/invoke-with-response-stream",
        {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 5, "messages": _HI},
    ),
    "anthropic": ("/v1/messages", {"stream": True, "messages": _HI}),
    "openai_chat": ("/v1/chat/completions", {"stream": True, "messages": _HI}),
    "openai_responses": ("/v1/responses", {"stream": True, "input": _HI}),
    "gemini": ("/v1beta/models/m:streamGenerateContent?alt=sse", {"contents": []}),
}
_SSE_ROUTES = ("anthropic", "openai_chat", "openai_responses", "gemini")


@settings(max_examples=200, deadline=None)
@given(
    dialect=st.sampled_from(sorted(_ROUTES)),
    body=hostile | _NESTED,
    messages=st.none() | _MESSAGES,
    tools=st.none() | _NESTED,
    model=st.sampled_from(["sim-model-1", "gemini-3-pro"]),  # Gemini 3 has checks of its own
)
def test_any_request_body_gets_an_answer(
    dialect: str, body: Any, messages: Any, tools: Any, model: str
) -> None:
    if isinstance(body, dict):
        body = {**body, **({} if messages is None else {"messages": messages})}
        body = {**body, **({} if tools is None else {"toolConfig": tools})}
    path, opening = _ROUTES[dialect]
    if isinstance(body, dict) and dialect in _SSE_ROUTES:
        body = {**body, "stream": True, "input": body.get("input", messages)}
        body = {**body, "contents": body.get("contents", messages)}
    app = SimulatorApp(Script(turns=(TWO_CALLS, Turn(text="done")), model=model))
    assert anyio.run(_post, app, path, json.dumps(opening).encode()) == 200
    status = anyio.run(_post, app, path, json.dumps(body).encode())
    assert status in (200, 400)
    assert (status == 400) == bool(app.problems)


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/model/m/converse-stream",
            {
                "messages": [
                    {"role": "assistant", "content": [{"toolUse": {"toolUseId": [1]}}]},
                    {"role": "user", "content": [{"toolResult": {"toolUseId": {"a": 1}}}]},
                ]
            },
        ),
        (
            "/model/m/invoke-with-response-stream",
            {
                "messages": [
                    {"role": "assistant", "content": [{"type": "tool_use", "id": [1]}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": [2]}]},
                ]
            },
        ),
        (
            "/v1/messages",
            {
                "stream": True,
                "messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": []}]}],
            },
        ),
        ("/v1/responses", {"stream": True, "input": [{"type": "function_call", "call_id": {}}]}),
        (
            "/v1/chat/completions",
            {"stream": True, "messages": [{"role": "tool", "tool_call_id": [3]}]},
        ),
    ],
)
def test_an_id_that_is_not_a_string_is_refused_not_a_crash(path: str, body: Any) -> None:
    # Found by the property above: a list or an object where an id goes crashed the app
    # (unhashable in the checks' sets) for every dialect.
    app = SimulatorApp(Script(turns=(Turn(calls=TWO_CALLS.calls), Turn(text="done"))))
    assert anyio.run(_post, app, path, json.dumps(body).encode()) == 400


@pytest.mark.parametrize("dialect", sorted(_ROUTES))
def test_a_scalar_where_a_list_belongs_is_answered(dialect: str) -> None:
    # Found by the property above: "messages": true crashed the result readers.
    path, opening = _ROUTES[dialect]
    app = SimulatorApp(Script(turns=(TWO_CALLS, Turn(text="done"))))
    assert anyio.run(_post, app, path, json.dumps(opening).encode()) == 200
    body = {"stream": True, "messages": True, "input": 5, "contents": "x", "tools": 1}
    assert anyio.run(_post, app, path, json.dumps(body).encode()) in (200, 400)


def test_a_chat_call_whose_function_is_not_an_object_is_answered() -> None:
    # Found by probing the checks by hand: "function": 5 crashed the pairing reader.
    body = {
        "stream": True,
        "messages": [
            {"role": "assistant", "tool_calls": [{"id": "x", "function": 5}]},
            {"role": "tool", "tool_call_id": "x", "content": "1"},
        ],
    }
    app = SimulatorApp(Script(turns=(Turn(text="done"),)))
    assert anyio.run(_post, app, "/v1/chat/completions", json.dumps(body).encode()) in (200, 400)


@pytest.mark.parametrize(
    "contents",
    [
        [5, {"role": "model", "parts": [{"functionCall": {"name": "f"}}]}],
        [{"role": "model", "parts": [{"functionCall": {"name": "f"}, "thoughtSignature": [1]}]}],
    ],
)
def test_gemini_3_checks_read_any_contents(contents: list[Any]) -> None:
    # Found by probing by hand: a content that is not an object, and a signature that is
    # a list, crashed Gemini 3's signature check.
    app = SimulatorApp(Script(turns=(Turn(text="done"),), model="gemini-3-pro"))
    path = "/v1beta/models/gemini-3-pro:streamGenerateContent?alt=sse"
    assert anyio.run(_post, app, path, json.dumps({"contents": contents}).encode()) == 400


@pytest.mark.parametrize(
    ("dialect", "result"),
    [
        (
            "anthropic",
            {
                "type": "tool_result",
                "tool_use_id": "toolu_sim_0_0",
                "content": [{"type": "image", "source": {"type": "base64", "media_type": [1]}}],
            },
        ),
        (
            "bedrock_converse",
            {
                "toolResult": {
                    "toolUseId": "tooluse_sim_0_0",
                    "content": [{"image": {"format": [1], "source": {"bytes": "AA=="}}}],
                }
            },
        ),
    ],
)
def test_a_media_type_that_is_not_a_string_is_refused(dialect: str, result: Any) -> None:
    # Found by probing by hand: a list as an image's media type (Anthropic) or format
    # (Converse) crashed the media check.
    path, opening = _ROUTES[dialect]
    app = SimulatorApp(Script(turns=(TWO_CALLS, Turn(text="done")), check_results=False))
    assert anyio.run(_post, app, path, json.dumps(opening).encode()) == 200
    body = {**opening, "messages": [*opening["messages"], {"role": "user", "content": [result]}]}
    assert anyio.run(_post, app, path, json.dumps(body).encode()) == 400


@pytest.mark.parametrize("dialect", ["anthropic", "bedrock_anthropic", "bedrock_converse"])
def test_a_thinking_type_that_is_not_a_string_is_answered(dialect: str) -> None:
    # Found by replacing each field of full requests with odd values: a list or an object
    # as the thinking option's type crashed the reasoning check.
    path, opening = _ROUTES[dialect]
    thinking: dict[str, Any] = {"thinking": {"type": []}}
    if dialect == "bedrock_converse":
        thinking = {"additionalModelRequestFields": thinking}
    body = {**opening, **thinking}
    app = SimulatorApp(Script(turns=(Turn(text="done"),)))
    assert anyio.run(_post, app, path, json.dumps(body).encode()) in (200, 400)


# Full requests, every feature each dialect's checks read, answering TWO_CALLS's first
# call: each field in turn is replaced by an odd value below.
_PNG = "iVBORw0KGgo="
_FULL: dict[str, dict[str, Any]] = {
    "openai_chat": {
        "stream": True,
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "reasoning_content": "r",
                "tool_calls": [
                    {
                        "id": "call_sim_0_0",
                        "type": "function",
                        "function": {"name": "lookup_demo_value", "arguments": "{}"},
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_sim_0_0",
                "name": "lookup_demo_value",
                "content": [{"type": "text", "text": "x"}],
            },
        ],
    },
    "openai_responses": {
        "stream": True,
        "store": False,
        "include": ["reasoning.encrypted_content"],
        "input": [
            {"role": "user", "content": "hi"},
            {"type": "reasoning", "id": "rs_sim0_0", "encrypted_content": "e"},
            {"type": "function_call", "call_id": "call_sim_0_0", "name": "f", "arguments": "{}"},
            {
                "type": "function_call_output",
                "call_id": "call_sim_0_0",
                "output": [
                    {"type": "input_text", "text": "x"},
                    {"type": "input_image", "image_url": "data:image/png;base64," + _PNG},
                    {
                        "type": "input_file",
                        "file_data": "data:application/pdf;base64,AA==",
                        "filename": "a.pdf",
                    },
                ],
            },
        ],
    },
    "anthropic": {
        "stream": True,
        "thinking": {"type": "enabled"},
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "t", "signature": "s"},
                    {"type": "redacted_thinking", "data": "d"},
                    {"type": "tool_use", "id": "toolu_sim_0_0", "name": "f", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_sim_0_0",
                        "is_error": False,
                        "content": [
                            {"type": "text", "text": "x"},
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": _PNG,
                                },
                            },
                            {"type": "document", "source": {"type": "url", "url": "https://x"}},
                        ],
                    }
                ],
            },
        ],
    },
    "gemini": {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "t", "thought": True},
                    {"functionCall": {"name": "f", "args": {}, "id": "i"}, "thoughtSignature": "s"},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "name": "f",
                            "id": "i",
                            "response": {"r": 1},
                            "parts": [
                                {"inlineData": {"mimeType": "image/png", "data": _PNG}},
                                {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://x"}},
                            ],
                        }
                    }
                ],
            },
        ]
    },
    "bedrock_converse": {
        "additionalModelRequestFields": {"thinking": {"type": "enabled"}},
        "toolConfig": {
            "tools": [{"toolSpec": {"name": "f", "description": "d", "inputSchema": {"json": {}}}}]
        },
        "messages": [
            {"role": "user", "content": [{"text": "hi"}]},
            {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"reasoningText": {"text": "t", "signature": "s"}}},
                    {"reasoningContent": {"redactedContent": "AA=="}},
                    {"toolUse": {"toolUseId": "tooluse_sim_0_0", "name": "f", "input": {}}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "toolResult": {
                            "toolUseId": "tooluse_sim_0_0",
                            "status": "error",
                            "content": [
                                {"text": "x"},
                                {"json": {"a": 1}},
                                {"image": {"format": "png", "source": {"bytes": _PNG}}},
                                {
                                    "document": {
                                        "format": "pdf",
                                        "name": "a b",
                                        "source": {"bytes": "AA=="},
                                    }
                                },
                                {
                                    "image": {
                                        "format": "png",
                                        "source": {"s3Location": {"uri": "s3://x"}},
                                    }
                                },
                            ],
                        }
                    }
                ],
            },
        ],
    },
    "bedrock_anthropic": {
        "anthropic_version": "bedrock-2023-05-31",
        "max_tokens": 5,
        "thinking": {"type": "enabled"},
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "t", "signature": "s"},
                    {"type": "tool_use", "id": "toolu_bdrk_sim_0_0", "name": "f", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "toolu_bdrk_sim_0_0",
                        "content": [
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": _PNG,
                                },
                            }
                        ],
                    }
                ],
            },
        ],
    },
}
_ODD: list[Any] = [5, None, True, [], {}, [[1]], {"a": [1]}, "", 1.5]


def _leaf_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, inner in items:
        found += _leaf_paths(inner, (*prefix, key))
    return found


def _replaced(value: Any, path: tuple[Any, ...], odd: Any) -> Any:
    copy = json.loads(json.dumps(value))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = odd
    return copy


@pytest.mark.parametrize("dialect", sorted(_FULL))
def test_every_field_of_a_full_request_may_be_odd(dialect: str) -> None:
    path, opening = _ROUTES[dialect]
    expect = ExpectedResult(call_position=0, contains="x", media=("image/png",), is_error=True)
    script = Script(turns=(TWO_CALLS, Turn(text="done", expect_results=(expect,))))
    for field in _leaf_paths(_FULL[dialect]):
        for odd in _ODD:
            for model in ("sim-model-1", "gemini-3-pro"):
                app = SimulatorApp(dataclasses.replace(script, model=model))
                assert anyio.run(_post, app, path, json.dumps(opening).encode()) == 200
                body = json.dumps(_replaced(_FULL[dialect], field, odd)).encode()
                assert anyio.run(_post, app, path, body) in (200, 400), (field, odd, model)
