"""Say what went wrong (issue 12, item 6): a body that is not an event stream (a JSON
error, an HTML page) and a stream of another dialect than the one given are reported as
what they are, not as a truncated stream; at every split of the body, async and sync,
over a real server and over the parsed-event and framed-event interop paths."""

from __future__ import annotations

import base64
import struct
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from contextlib import aclosing
from typing import Any

import httpx2
import orjson
import pytest
from botocore.eventstream import EventStreamBuffer  # type: ignore[import-untyped]

from sse_toolcalls import (
    Dialect,
    aiter_tool_calls,
    aiter_tool_calls_from_sse,
    iter_tool_calls,
    parse_tool_calls,
)
from sse_toolcalls.calls import DIALECTS
from sse_toolcalls.dialects import spec_for
from sse_toolcalls.edge.responses import NOT_AN_EVENT_STREAM_CODE
from sse_toolcalls.errors import MalformedStreamError, ProviderError
from sse_toolcalls.framing import EVENTSTREAM, framing_for
from sse_toolcalls.framing.sse import ServerSentEvent, SSEFramer
from sse_toolcalls.tooling.simulator import RawBody, ScriptedCall, Simulator, Turn, encode_turn
from sse_toolcalls.tooling.simulator.pytest_plugin import simulator
from tests import wire

__all__ = ["simulator"]  # the fixture, imported to be found

pytestmark = pytest.mark.anyio

TURN = Turn(calls=(ScriptedCall(name="f", args={"k": 1}, call_id="c1"),), fragment_size=3)
HTML = b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head></html>\n"
JSON_ERROR = b'{"error": {"message": "model not found", "type": "invalid_request_error", "code": "model_not_found"}}'


def event_stream(dialect: Dialect) -> bool:
    return spec_for(dialect).framing == EVENTSTREAM


def events_of(dialect: Dialect) -> list[bytes]:
    """TURN as the dialect's stream, one item per event (per message of an event
    stream). The simulator's encoder for the SSE dialects; tests/wire.py's, written
    apart from it, for the Bedrock ones."""
    if not event_stream(dialect):
        return encode_turn(dialect, TURN)
    body = wire.encode(dialect, [wire.Call("f", {"k": 1}, "c1")], fragment=3)
    out = []
    while body:
        (length,) = struct.unpack(">I", body[:4])
        out.append(body[:length])
        body = body[length:]
    return out


def media_type(dialect: Dialect) -> str:
    return framing_for(spec_for(dialect).framing).media_type


def parsed_items(dialect: Dialect) -> list[Any]:
    """TURN's events as an SDK hands them over: JSON objects; boto3's
    ``{event type: payload}`` (a chunk's bytes decoded) for the Bedrock dialects."""
    if not event_stream(dialect):
        events = SSEFramer().feed(b"".join(encode_turn(dialect, TURN)))
        return [orjson.loads(e.data) for e in events if e.data.startswith("{")]
    buffer = EventStreamBuffer()
    buffer.add_data(b"".join(events_of(dialect)))
    items = []
    for message in buffer:
        payload = orjson.loads(message.payload)
        if "bytes" in payload:
            payload["bytes"] = base64.b64decode(payload["bytes"])
        items.append({message.headers[":event-type"]: payload})
    return items


class Body:
    """A response look-alike: a status, headers and a body in given chunks."""

    def __init__(self, chunks: list[bytes], content_type: str | None) -> None:
        self.status_code = 200
        self.headers = {} if content_type is None else {"content-type": content_type}
        self.chunks = chunks
        self.closed = False

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk

    async def aclose(self) -> None:
        self.closed = True

    def iter_bytes(self) -> Iterator[bytes]:
        yield from self.chunks

    def close(self) -> None:
        self.closed = True


def splits(body: bytes) -> list[list[bytes]]:
    """The body whole, byte by byte, and cut in two at a few places."""
    cuts = [[body], [body[i : i + 1] for i in range(len(body))]]
    cuts += [[body[:n], body[n:]] for n in (1, 2, len(body) // 2) if 0 < n < len(body)]
    return cuts


async def first_error(body: Body, dialect: Dialect | None) -> BaseException:
    with pytest.raises(Exception) as caught:
        [call async for call in aiter_tool_calls(body, dialect)]
    assert body.closed
    return caught.value


def first_error_sync(body: Body, dialect: Dialect | None) -> BaseException:
    with pytest.raises(Exception) as caught:
        list(iter_tool_calls(body, dialect))
    assert body.closed
    return caught.value


# -- not an event stream ----------------------------------------------------------------


@pytest.mark.parametrize("content_type", ["text/event-stream", None])
async def test_an_html_page_said_to_be_a_stream_is_reported_as_a_page(
    content_type: str | None,
) -> None:
    # Before: the framer read "<!DOCTYPE html>" as a field line and ignored it, so the
    # report was TruncatedStreamError("the stream ended before any event").
    for chunks in splits(b"\r\n" + HTML):
        error = await first_error(Body(chunks, content_type), "openai_chat")
        assert isinstance(error, ProviderError), error
        assert error.code == NOT_AN_EVENT_STREAM_CODE
        assert "an HTML page" in str(error)
        assert "502 Bad Gateway" in str(error)
        assert not error.retryable


async def test_a_json_error_said_to_be_a_stream_is_the_provider_error() -> None:
    for chunks in splits(JSON_ERROR):
        for error in (
            await first_error(Body(chunks, "text/event-stream"), "openai_chat"),
            first_error_sync(Body(chunks, None), None),
        ):
            assert isinstance(error, ProviderError), error
            assert error.code == "model_not_found"
            assert "model not found" in str(error)


async def test_a_json_document_that_is_no_error_is_not_an_event_stream() -> None:
    # Gemini's streamGenerateContent without alt=sse answers a JSON array.
    error = await first_error(Body([b'[{"candidates": []}]'], None), "gemini")
    assert isinstance(error, ProviderError)
    assert error.code == NOT_AN_EVENT_STREAM_CODE
    assert "a JSON document" in str(error)


async def test_an_html_page_under_its_own_content_type_says_so() -> None:
    error = await first_error(Body([HTML], "text/html; charset=utf-8"), "anthropic")
    assert isinstance(error, ProviderError)
    assert error.code == "unexpected_content_type"
    assert "an HTML page" in str(error)


async def test_over_a_real_server(simulator: Simulator) -> None:
    simulator.play([Turn(fault=RawBody(chunks=(HTML[:5], HTML[5:])))])
    async with httpx2.AsyncClient(timeout=10.0) as http:
        request = http.build_request(
            "POST", simulator.base_url + "/v1/messages", json={"stream": True}
        )
        response = await http.send(request, stream=True)
        with pytest.raises(ProviderError, match="not an event stream"):
            [call async for call in aiter_tool_calls(response, "anthropic")]


# -- another dialect's stream -----------------------------------------------------------

PAIRS = [(given, actual) for given in DIALECTS for actual in DIALECTS if given != actual]


@pytest.mark.parametrize(("given", "actual"), PAIRS)
async def test_another_dialects_stream_is_named(given: Dialect, actual: Dialect) -> None:
    # Before: reported as truncation (or, Gemini read as Chat, as no calls at all). An
    # event stream given to an SSE dialect (or the reverse) was "unexpected content
    # type", or a framing error, at best: it is named by its first event too.
    body = b"".join(events_of(actual))
    for chunks in [*splits(body)[:1], [body[i : i + 7] for i in range(0, len(body), 7)]]:
        for error in (
            await first_error(Body(chunks, media_type(actual)), given),
            first_error_sync(Body(chunks, media_type(actual)), given),
        ):
            assert isinstance(error, MalformedStreamError), error
            assert f"looks like {actual}" in str(error)
            assert f"expected a stream of dialect {given}" in str(error)


@pytest.mark.parametrize(("given", "actual"), PAIRS)
async def test_another_dialect_is_named_when_a_framer_limit_follows(
    given: Dialect, actual: Dialect
) -> None:
    # The telling event, then a retry past MAX_RETRY_DIGITS: in one chunk, the head's
    # framer failed before it framed the event, and the stream was reported as the
    # limit; in two, as the other dialect's. Now the limit's error hands the head the
    # events before it (issue 29).
    first = events_of(actual)[0]
    body = first + b"retry: " + b"9" * 65 + b"\n\n"
    cuts = [len(first) + d for d in (-2, -1, 0, 1, 2)]
    for chunks in [*splits(body), *([body[:n], body[n:]] for n in cuts)]:
        for error in (
            await first_error(Body(chunks, media_type(actual)), given),
            first_error_sync(Body(chunks, media_type(actual)), given),
        ):
            assert isinstance(error, MalformedStreamError), error
            assert f"looks like {actual}" in str(error)


@pytest.mark.parametrize(("given", "actual"), PAIRS)
def test_another_dialects_parsed_events_are_named(given: Dialect, actual: Dialect) -> None:
    with pytest.raises(MalformedStreamError, match=f"looks like {actual}"):
        list(parse_tool_calls(parsed_items(actual), given))


@pytest.mark.parametrize(("given", "actual"), [pair for pair in PAIRS if not event_stream(pair[1])])
async def test_another_dialects_framed_events_are_named(given: Dialect, actual: Dialect) -> None:
    events = SSEFramer().feed(b"".join(encode_turn(actual, TURN)))

    async def framed() -> AsyncGenerator[ServerSentEvent, None]:
        for event in events:
            yield event

    # The caller owns (and closes) what it hands over.
    async with aclosing(framed()) as source:
        with pytest.raises(MalformedStreamError, match=f"looks like {actual}"):
            [call async for call in aiter_tool_calls_from_sse(source, given)]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_the_right_dialect_and_detection_are_untouched(dialect: Dialect) -> None:
    body = b"".join(events_of(dialect))
    for given in (dialect, None):
        for chunks in splits(body):
            calls = [c async for c in aiter_tool_calls(Body(chunks, media_type(dialect)), given)]
            assert [(c.name, c.args) for c in calls] == [("f", {"k": 1})]


async def test_an_error_in_another_vendors_shape_is_still_this_streams_error() -> None:
    # A proxy in front of Chat that reports errors in Anthropic's shape: the error is
    # what matters, reported as this stream's error, not as "looks like anthropic".
    error_event = (
        b'data: {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}\n\n'
    )
    error = await first_error(Body([error_event], "text/event-stream"), "openai_chat")
    assert not (isinstance(error, MalformedStreamError) and "looks like" in str(error)), error
