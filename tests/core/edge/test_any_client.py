"""Any HTTP client, any SDK (issue 12, item 3): httpx and httpx2 responses alike, the
openai and anthropic SDKs' raw responses and parsed events, their status errors as
ProviderError, a sync response given to the async reader (and the reverse) named as such.

Real SDKs over real loopback HTTP against the simulator: nothing here is mocked but the
two look-alikes that test what a response without ``aclose`` (or a failing one) does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, ClassVar

import anthropic
import httpx
import httpx2
import openai
import pytest

from sse_toolcalls import (
    aiter_tool_calls,
    aparse_tool_calls,
    iter_events,
    iter_tool_calls,
    parse_events,
    parse_tool_calls,
    provider_error_from_sdk,
    translate_sdk_errors,
)
from sse_toolcalls.calls import ToolCall
from sse_toolcalls.conversation import UserMessage
from sse_toolcalls.edge.transport import classify
from sse_toolcalls.errors import (
    ProviderError,
    StreamTimeoutError,
    TruncatedStreamError,
    UsageError,
)
from sse_toolcalls.runtime.clients import client_for
from sse_toolcalls.tooling.simulator import HTTPError, Script, ScriptedCall, Simulator, Stall, Turn
from sse_toolcalls.tooling.simulator.pytest_plugin import simulator

__all__ = ["simulator"]  # the fixture, imported to be found

pytestmark = [
    pytest.mark.anyio,
    # As in tests/tooling/simulator: the HTTP stacks' nested body generators, abandoned early
    # (a timeout), warn under trio when finalised (encode/httpx#3686).
    pytest.mark.filterwarnings("ignore:Async generator 'httpx2?\\.:ResourceWarning"),
    pytest.mark.filterwarnings("ignore:Async generator 'httpcore2?\\.:ResourceWarning"),
]

CALLS = Turn(
    calls=(
        ScriptedCall(name="lookup", args={"key": "height"}),
        ScriptedCall(name="lookup", args={"key": "weight"}),
    ),
    fragment_size=4,
)
EXPECTED = [{"key": "height"}, {"key": "weight"}]
TOOL = {
    "type": "function",
    "function": {
        "name": "lookup",
        "parameters": {"type": "object", "properties": {"key": {"type": "string"}}},
    },
}
MESSAGES: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]
URL = "/v1/chat/completions"
BODY = {"model": "sim-model-1", "stream": True, "messages": MESSAGES}


def args_of(calls: list[ToolCall]) -> list[dict[str, Any]]:
    return [call.args for call in calls]


def sync_openai(sim: Simulator) -> openai.OpenAI:
    return openai.OpenAI(api_key="k", base_url=sim.base_url_for("openai_chat"), max_retries=0)


def async_openai(sim: Simulator) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key="k", base_url=sim.base_url_for("openai_chat"), max_retries=0)


def sync_anthropic(sim: Simulator) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="k", base_url=sim.base_url_for("anthropic"), max_retries=0)


def async_anthropic(sim: Simulator) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        api_key="k", base_url=sim.base_url_for("anthropic"), max_retries=0
    )


# -- httpx and httpx2 --------------------------------------------------------------------


@pytest.mark.parametrize("stack", [httpx, httpx2], ids=["httpx", "httpx2"])
async def test_both_http_stacks_stream_calls(stack: Any, simulator: Simulator) -> None:
    simulator.play([CALLS])
    async with stack.AsyncClient(timeout=10.0) as http:
        request = http.build_request("POST", simulator.base_url + URL, json=BODY)
        response = await http.send(request, stream=True)
        calls = [call async for call in aiter_tool_calls(response, "openai_chat")]
    assert args_of(calls) == EXPECTED


@pytest.mark.parametrize("stack", [httpx, httpx2], ids=["httpx", "httpx2"])
async def test_a_read_timeout_of_either_stack_is_a_timeout(
    stack: Any, simulator: Simulator
) -> None:
    # Before: httpx2.ReadTimeout was not recognised, so the stream read as cut short
    # (TruncatedStreamError, reason "eof") instead of timed out.
    simulator.play([Turn(calls=CALLS.calls, fault=Stall(seconds=3.0, after_events=2))])
    async with stack.AsyncClient(timeout=stack.Timeout(10.0, read=0.3)) as http:
        request = http.build_request("POST", simulator.base_url + URL, json=BODY)
        response = await http.send(request, stream=True)
        with pytest.raises(StreamTimeoutError) as caught:
            [call async for call in aiter_tool_calls(response, "openai_chat")]
    assert caught.value.code == "timeout"
    assert caught.value.retryable
    assert isinstance(caught.value.__cause__, stack.ReadTimeout)


@pytest.mark.parametrize("stack", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_a_sync_read_timeout_of_either_stack_is_a_timeout(stack: Any, simulator: Simulator) -> None:
    simulator.play([Turn(calls=CALLS.calls, fault=Stall(seconds=3.0, after_events=2))])
    with (
        stack.Client(timeout=stack.Timeout(10.0, read=0.3)) as http,
        http.stream("POST", simulator.base_url + URL, json=BODY) as response,
        pytest.raises(StreamTimeoutError),
    ):
        list(iter_tool_calls(response, "openai_chat"))


def test_transport_failures_are_classified_by_hierarchy_not_module() -> None:
    request = httpx2.Request("GET", "http://127.0.0.1/")
    assert classify(httpx2.ReadTimeout("t", request=request)) == "timeout"
    assert classify(httpx.ConnectTimeout("t")) == "timeout"
    assert classify(httpx2.ConnectError("refused", request=request)) == "connection"
    assert classify(httpx.RemoteProtocolError("bad")) == "connection"
    assert classify(openai.APITimeoutError(request=request)) == "timeout"
    assert classify(anthropic.APIConnectionError(request=request)) == "connection"
    assert classify(TimeoutError()) == "timeout"
    assert classify(ValueError("a bug")) is None

    class TransportError(Exception):
        """Same name as httpx's, another library's: not a transport failure of ours."""

    assert classify(TransportError()) is None


@pytest.mark.parametrize("stack", [httpx, httpx2], ids=["httpx", "httpx2"])
async def test_a_sync_response_given_to_the_async_reader_names_the_sync_one(
    stack: Any, simulator: Simulator
) -> None:
    simulator.play([CALLS])
    with (
        stack.Client(timeout=10.0) as http,
        http.stream("POST", simulator.base_url + URL, json=BODY) as response,
    ):
        # Before: httpx's RuntimeError ("Attempted to call an async iterator on a sync
        # stream") at the first read.
        with pytest.raises(UsageError, match=r"iter_tool_calls\(\)"):
            aiter_tool_calls(response, "openai_chat")
        assert args_of(list(iter_tool_calls(response, "openai_chat"))) == EXPECTED


@pytest.mark.parametrize("stack", [httpx, httpx2], ids=["httpx", "httpx2"])
async def test_an_async_response_given_to_the_sync_reader_names_the_async_one(
    stack: Any, simulator: Simulator
) -> None:
    simulator.play([CALLS])
    async with stack.AsyncClient(timeout=10.0) as http:
        request = http.build_request("POST", simulator.base_url + URL, json=BODY)
        response = await http.send(request, stream=True)
        with pytest.raises(UsageError, match=r"aiter_events\(\)"):
            iter_events(response, "openai_chat")
        calls = [call async for call in aiter_tool_calls(response, "openai_chat")]
    assert args_of(calls) == EXPECTED


def test_something_that_is_no_response_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="aiter_bytes"):
        aiter_tool_calls(object(), "openai_chat")
    with pytest.raises(UsageError, match="iter_bytes"):
        iter_tool_calls("not a response", "openai_chat")


# -- closing never hides the real error ------------------------------------------------


class NoAclose:
    """A response with a body and nothing to close it by (an SDK wrapper's shape)."""

    status_code = 200
    headers: ClassVar[dict[str, str]] = {"content-type": "text/event-stream"}

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        yield b"data: {}\n\n"


class FailingClose:
    """A response whose body is cut short and whose close fails as well."""

    status_code = 200
    headers: ClassVar[dict[str, str]] = {"content-type": "text/event-stream"}

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        yield b'data: {"choices": []}\n\n'

    async def aclose(self) -> None:
        raise OSError("close failed")


async def test_a_response_without_aclose_is_refused_before_reading() -> None:
    # Before: the edge's finally raised AttributeError('aclose'), hiding what was wrong.
    with pytest.raises(UsageError, match="aclose"):
        aiter_tool_calls(NoAclose(), "openai_chat")


async def test_a_failing_close_does_not_hide_the_real_error() -> None:
    with pytest.raises(TruncatedStreamError) as caught:
        [call async for call in aiter_tool_calls(FailingClose(), "openai_chat")]
    assert any("close failed" in note for note in caught.value.__notes__)


# -- the SDKs' raw responses -------------------------------------------------------------


async def test_openai_async_streaming_response(simulator: Simulator) -> None:
    # Before: AttributeError 'aclose' from the edge's finally (AsyncAPIResponse has an
    # async close() and an async iter_bytes(), not httpx's names).
    simulator.play([CALLS])
    sdk = async_openai(simulator)
    async with sdk.chat.completions.with_streaming_response.create(
        model="sim-model-1", messages=MESSAGES, tools=[TOOL], stream=True
    ) as response:
        calls = [call async for call in aiter_tool_calls(response, "openai_chat")]
    await sdk.close()
    assert args_of(calls) == EXPECTED


def test_openai_sync_streaming_response_and_stream(simulator: Simulator) -> None:
    simulator.play(Script(turns=(CALLS, CALLS), check_results=False))
    with sync_openai(simulator) as sdk:
        with sdk.chat.completions.with_streaming_response.create(
            model="sim-model-1", messages=MESSAGES, tools=[TOOL], stream=True
        ) as response:
            assert args_of(list(iter_tool_calls(response, "openai_chat"))) == EXPECTED
        stream = sdk.chat.completions.create(
            model="sim-model-1", messages=MESSAGES, tools=[TOOL], stream=True
        )
        assert args_of(list(iter_tool_calls(stream.response, "openai_chat"))) == EXPECTED


async def test_anthropic_async_streaming_response(simulator: Simulator) -> None:
    simulator.play([CALLS])
    sdk = async_anthropic(simulator)
    async with sdk.messages.with_streaming_response.create(
        model="sim-model-1", max_tokens=100, messages=MESSAGES, stream=True
    ) as response:
        calls = [call async for call in aiter_tool_calls(response, "anthropic")]
    await sdk.close()
    assert args_of(calls) == EXPECTED


def test_anthropic_sync_streaming_response(simulator: Simulator) -> None:
    simulator.play([CALLS])
    with (
        sync_anthropic(simulator) as sdk,
        sdk.messages.with_streaming_response.create(
            model="sim-model-1", max_tokens=100, messages=MESSAGES, stream=True
        ) as response,
    ):
        assert args_of(list(iter_tool_calls(response, "anthropic"))) == EXPECTED


async def test_a_sync_sdk_response_given_to_the_async_reader(simulator: Simulator) -> None:
    simulator.play([CALLS])
    with (
        sync_openai(simulator) as sdk,
        sdk.chat.completions.with_streaming_response.create(
            model="sim-model-1", messages=MESSAGES, stream=True
        ) as response,
        pytest.raises(UsageError, match=r"iter_tool_calls\(\)"),
    ):
        aiter_tool_calls(response, "openai_chat")


# -- the SDKs' parsed events -------------------------------------------------------------


def test_openai_parsed_chunks(simulator: Simulator) -> None:
    simulator.play([CALLS])
    with sync_openai(simulator) as sdk:
        stream = sdk.chat.completions.create(
            model="sim-model-1", messages=MESSAGES, tools=[TOOL], stream=True
        )
        with stream:
            calls = list(parse_tool_calls(stream, "openai_chat"))
    assert args_of(calls) == EXPECTED


async def test_anthropic_parsed_events_async(simulator: Simulator) -> None:
    simulator.play([CALLS])
    sdk = async_anthropic(simulator)
    stream = await sdk.messages.create(
        model="sim-model-1", max_tokens=100, messages=MESSAGES, stream=True
    )
    async with stream:
        calls = [call async for call in aparse_tool_calls(stream, "anthropic")]
    await sdk.close()
    assert args_of(calls) == EXPECTED


def test_plain_dicts_are_parsed_events() -> None:
    dicts: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "m", "content": [], "usage": {}}},
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"n": 1}'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
        {"type": "message_stop"},
    ]
    calls = list(parse_tool_calls(dicts))
    assert [(c.call_id, c.name, c.args) for c in calls] == [("t1", "f", {"n": 1})]
    assert list(parse_events(dicts, "anthropic"))[-1].__class__.__name__ == "StreamFinished"
    with pytest.raises(UsageError, match="parsed event"):
        list(parse_events([b"bytes"], "anthropic"))


# -- the SDKs' status errors -------------------------------------------------------------


def test_openai_rate_limit_error_is_a_provider_error(simulator: Simulator) -> None:
    simulator.play([Turn(fault=HTTPError(status=429, retry_after="7"))])
    with (
        sync_openai(simulator) as sdk,
        pytest.raises(ProviderError) as caught,
        translate_sdk_errors("openai_chat"),
    ):
        sdk.chat.completions.create(model="sim-model-1", messages=MESSAGES, stream=True)
    error = caught.value
    assert isinstance(error.__cause__, openai.RateLimitError)
    assert (error.status, error.retryable, error.retry_after) == (429, True, 7.0)
    assert error.provider == "openai_chat"
    assert error.code is not None


async def test_anthropic_status_error_is_a_provider_error(simulator: Simulator) -> None:
    simulator.play([Turn(fault=HTTPError(status=400, message="bad request body"))])
    sdk = async_anthropic(simulator)
    try:
        with pytest.raises(ProviderError) as caught:
            async with translate_sdk_errors("anthropic"):
                await sdk.messages.create(
                    model="sim-model-1", max_tokens=10, messages=MESSAGES, stream=True
                )
    finally:
        await sdk.close()
    assert isinstance(caught.value.__cause__, anthropic.BadRequestError)
    assert caught.value.status == 400
    assert not caught.value.retryable
    assert "bad request body" in str(caught.value)


def test_sdk_connection_errors_and_bugs() -> None:
    request = httpx2.Request("POST", "http://127.0.0.1:9/")
    timeout = provider_error_from_sdk(openai.APITimeoutError(request=request), "openai_chat")
    assert isinstance(timeout, StreamTimeoutError)
    refused = provider_error_from_sdk(anthropic.APIConnectionError(request=request))
    assert (refused.code, refused.retryable) == ("connection_error", True)
    with pytest.raises(UsageError):
        provider_error_from_sdk(KeyError("a bug"))
    with pytest.raises(KeyError), translate_sdk_errors():
        raise KeyError("a bug passes through")


# -- our clients over either stack ---------------------------------------------------------


@pytest.mark.parametrize("stack", [httpx, httpx2], ids=["httpx", "httpx2"])
async def test_our_client_over_either_stack(stack: Any, simulator: Simulator) -> None:
    simulator.play([CALLS])
    async with stack.AsyncClient(timeout=10.0) as http:
        client = client_for(
            "openai_chat",
            model="sim-model-1",
            api_key="k",
            base_url=simulator.base_url_for("openai_chat"),
            http_client=http,
        )
        calls = [c async for c in client.stream_tool_calls([UserMessage(text="hi")])]
    assert args_of(calls) == EXPECTED


@pytest.mark.parametrize("stack", [httpx, httpx2], ids=["httpx", "httpx2"])
async def test_our_client_maps_either_stacks_connection_error(
    stack: Any, free_tcp_port: int
) -> None:
    # Before: an httpx2 client's ConnectError escaped raw (only httpx's was caught).
    async with stack.AsyncClient(timeout=5.0) as http:
        client = client_for(
            "anthropic",
            model="m",
            api_key="k",
            base_url=f"http://127.0.0.1:{free_tcp_port}",
            http_client=http,
        )
        with pytest.raises(ProviderError) as caught:
            [c async for c in client.stream_tool_calls([UserMessage(text="hi")])]
    assert (caught.value.code, caught.value.retryable) == ("connection_error", True)
    assert isinstance(caught.value.__cause__, stack.ConnectError)
