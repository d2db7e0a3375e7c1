"""A sandboxed handler's ToolRetry and ToolErrorReply come back as the same exceptions,
on both backends, cold and warm: the handler's answer for the model, not a violation; and
a value plain JSON cannot hold (images, documents, dataclasses...) comes back so that the
model is told what it would be told of the same value returned unsandboxed."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from sse_toolcalls.calls import Document, Image, ToolCall
from sse_toolcalls.runtime.errors import ToolErrorReply, ToolRetry
from sse_toolcalls.runtime.sandbox import (
    Backend,
    Sandbox,
    SandboxResult,
    WarmPool,
    _exchange,
    run_in_sandbox,
)
from sse_toolcalls.runtime.sandbox.results import ViolationKind
from sse_toolcalls.runtime.tools.results import ok_result
from tests.runtime.sandbox import tools

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def _pool(warm: bool) -> AsyncIterator[WarmPool | None]:
    if not warm:
        yield None
        return
    async with WarmPool() as pool:
        yield pool


async def _call(
    pool: WarmPool | None, handler: Callable[..., Any], backend: Backend, **arguments: Any
) -> SandboxResult:
    result = await run_in_sandbox(Sandbox(), handler, arguments, backend=backend, pool=pool)
    assert result.warm == (pool is not None)
    assert result.violation is None and result.value is None
    return result


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
async def test_a_tool_retry_comes_back_as_itself(backend: Backend, warm: bool) -> None:
    async with _pool(warm) as pool:
        result = await _call(pool, tools.refuse, backend, reason="the date must be in the past")
        assert type(result.answer) is ToolRetry
        assert result.answer.message == "the date must be in the past"
        if pool is not None:
            # The handler's answer is no violation: the zygote that gave it serves again.
            zygotes = [z.process.pid for t in pool._tools.values() for z in t.idle]
            again = await _call(pool, tools.refuse, backend, reason="again")
            assert isinstance(again.answer, ToolRetry) and again.answer.message == "again"
            assert [z.process.pid for t in pool._tools.values() for z in t.idle] == zygotes


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
async def test_a_tool_error_reply_keeps_its_content(backend: Backend, warm: bool) -> None:
    parts = [{"type": "text", "text": "rate limited"}, {"type": "image", "data": "AAAA"}]
    async with _pool(warm) as pool:
        result = await _call(pool, tools.answer_error, backend, content=parts)
        assert type(result.answer) is ToolErrorReply
        assert result.answer.content == parts


async def test_content_json_cannot_hold_is_rendered_as_unsandboxed(backend: Backend) -> None:
    result = await _call(None, tools.answer_unencodable, backend)
    assert isinstance(result.answer, ToolErrorReply)
    # NaN as null and bytes as text: what json_value makes of them in this process too.
    assert result.answer.content == [
        {"type": "text", "text": "over"},
        {"score": None, "at": "\\xff"},
    ]


@pytest.mark.parametrize(
    "reply",
    [
        b'{"answer": {"kind": "tool_retry", "message": 3}}',
        b'{"answer": {"kind": "tool_retry"}}',
        b'{"answer": {"kind": "tool_error"}}',
        b'{"answer": {"kind": "shrug", "message": "x"}}',
        b'{"answer": "tool_retry"}',
    ],
)
def test_a_malformed_answer_is_a_bad_result(reply: bytes) -> None:
    value, violation = _exchange.decode(reply, 0, "")
    assert value is None
    assert violation is not None and violation.kind is ViolationKind.BAD_RESULT
    assert "malformed" in violation.message


def test_a_well_formed_answer_is_rebuilt() -> None:
    value, violation = _exchange.decode(
        b'{"answer": {"kind": "tool_error", "content": null}}', 0, ""
    )
    assert violation is None and isinstance(value, ToolErrorReply) and value.content is None


CALL = ToolCall(name="t", args={}, provider="anthropic", call_id="toolu_1", index=0)


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
@pytest.mark.parametrize(
    "handler", [tools.chart, tools.picture, tools.dated], ids=lambda h: h.__name__
)
async def test_a_value_json_cannot_hold_is_the_result_it_would_be_unsandboxed(
    backend: Backend, warm: bool, handler: Callable[..., Any]
) -> None:
    arguments: dict[str, Any] = {"title": "sales"} if handler is tools.chart else {}
    async with _pool(warm) as pool:
        result = await run_in_sandbox(Sandbox(), handler, arguments, backend=backend, pool=pool)
    assert result.violation is None, result.violation
    assert ok_result(CALL, result.value) == ok_result(CALL, handler(**arguments))


def test_the_media_of_a_chart_cross_intact() -> None:
    sandboxed = ok_result(
        CALL,
        _exchange.decode(
            b'{"value": ["chart", {"points": 3}], "media": [{"kind": "image", "media_type": '
            b'"image/png", "data": "AAAA", "url": null, "name": null}, {"kind": "document", '
            b'"media_type": "application/pdf", "data": null, "url": "https://f/r.pdf", "name": "r.pdf"}]}',
            0,
            "",
        )[0],
    )
    assert sandboxed.content == ["chart", {"points": 3}]
    assert sandboxed.media == (
        Image(media_type="image/png", data=b"\0\0\0"),
        Document(media_type="application/pdf", url="https://f/r.pdf", name="r.pdf"),
    )


@pytest.mark.parametrize(
    "reply",
    [
        b'{"value": "x", "media": []}',
        b'{"value": [], "media": {}}',
        b'{"value": [], "media": [{"kind": "video", "media_type": "video/mp4", "data": "AAAA"}]}',
        b'{"value": [], "media": [{"kind": "image", "media_type": 3, "data": "AAAA"}]}',
        b'{"value": [], "media": [{"kind": "image", "media_type": "image/png", "data": "!!"}]}',
        b'{"value": [], "media": [{"kind": "image", "media_type": "image/png", "url": 7}]}',
        b'{"value": [], "media": ["image"]}',
    ],
)
def test_malformed_media_are_a_bad_result(reply: bytes) -> None:
    value, violation = _exchange.decode(reply, 0, "")
    assert value is None
    assert violation is not None and violation.kind is ViolationKind.BAD_RESULT
    assert "malformed" in violation.message
