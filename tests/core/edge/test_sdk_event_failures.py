"""An SDK event that cannot give its JSON (its ``model_dump()`` raises, a mapping whose
iteration raises) is our ``MalformedStreamError``, chained to what it raised, from every
entry point that reads parsed events: never the foreign exception (STYLE 6)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any

import anyio
import pytest

from sse_toolcalls import MalformedStreamError, StreamParser
from sse_toolcalls.edge.responses import (
    aparse_events,
    aparse_tool_calls,
    parse_events,
    parse_tool_calls,
)

FAILURES: list[BaseException] = [
    RuntimeError("serializer crashed"),
    ValueError("Circular reference detected (id repeated)"),
    TypeError("model_dump() got an unexpected keyword argument 'by_alias'"),
    RecursionError("maximum recursion depth exceeded"),
    KeyError("type"),
]

START = {"type": "message_start", "message": {"usage": {"input_tokens": 1}}}


class BrokenModel:
    """An SDK model whose dump fails."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def model_dump(self, **options: Any) -> dict[str, Any]:
        raise self.error


class BrokenMapping(Mapping[str, Any]):
    """A mapping that fails when read."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __getitem__(self, key: str) -> Any:
        raise self.error

    def __iter__(self) -> Iterator[str]:
        raise self.error

    def __len__(self) -> int:
        return 1


def _sync(kind: str, events: list[object]) -> None:
    reader = parse_tool_calls if kind == "calls" else parse_events
    list(reader(events, "anthropic"))


def _async(kind: str, events: list[object]) -> None:
    async def source() -> AsyncIterator[object]:
        for event in events:
            yield event

    async def main() -> None:
        reader = aparse_tool_calls if kind == "calls" else aparse_events
        async for _ in reader(source(), "anthropic"):
            pass

    anyio.run(main)


@pytest.mark.parametrize("error", FAILURES, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("make", [BrokenModel, BrokenMapping], ids=["model_dump", "mapping"])
@pytest.mark.parametrize("first", [True, False], ids=["first-event", "later-event"])
@pytest.mark.parametrize("kind", ["calls", "events"])
@pytest.mark.parametrize("run", [_sync, _async], ids=["sync", "async"])
def test_an_event_that_cannot_give_its_json_is_our_error(
    run: Any, kind: str, first: bool, make: Any, error: BaseException
) -> None:
    events: list[object] = [make(error)] if first else [START, make(error)]
    with pytest.raises(MalformedStreamError) as caught:
        run(kind, events)
    assert caught.value.__cause__ is error
    assert type(error).__name__ in str(caught.value)


@pytest.mark.parametrize("error", FAILURES, ids=lambda e: type(e).__name__)
def test_feed_event_with_a_mapping_that_fails_is_our_error(error: BaseException) -> None:
    parser = StreamParser("anthropic")
    with pytest.raises(MalformedStreamError) as caught:
        parser.feed_event(BrokenMapping(error))
    assert caught.value.__cause__ is error


class Unprintable(RuntimeError):
    def __str__(self) -> str:
        raise ValueError("no text")


def test_an_exception_that_cannot_be_printed_is_still_our_error() -> None:
    error = Unprintable()
    with pytest.raises(MalformedStreamError) as caught:
        _sync("calls", [BrokenModel(error)])
    assert caught.value.__cause__ is error
    assert "Unprintable" in str(caught.value)


def test_feed_event_with_an_unprintable_failure_is_still_our_error() -> None:
    error = Unprintable()
    with pytest.raises(MalformedStreamError) as caught:
        StreamParser("anthropic").feed_event(BrokenMapping(error))
    assert caught.value.__cause__ is error
