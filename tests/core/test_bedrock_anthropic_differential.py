"""``bedrock_anthropic`` is the ``anthropic`` dialect behind one unwrapping step.

Every Anthropic stream of the corpora (the project's own and, when it is there, the
outside one), its events each base64-encoded in a ``chunk`` message as Bedrock's
``InvokeModelWithResponseStream`` sends them, must give what the ``anthropic`` dialect
gives on the SSE body: the same outcome, the same calls (with their arguments errors),
the same partial calls of a truncation, the same provider error; fed whole and split
anywhere, named and detected. Only the calls' ``provider`` differs.
"""

from __future__ import annotations

import base64
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls import (
    Dialect,
    ProviderError,
    SSEFramer,
    SSEToolCallsError,
    ToolCall,
    ToolCallParser,
    TruncatedStreamError,
)
from sse_toolcalls.dialects import accepts_unterminated
from tests.core.test_eventstream_wire import bedrock_event
from tests.outside import EXTERNAL_STREAMS, corpus_params, manifest_entries

ROOT = Path(__file__).resolve().parents[2]
OWN = sorted((ROOT / "recorded_streams" / "anthropic").glob("*.sse"))
OUTSIDE = [
    EXTERNAL_STREAMS / entry["file"]
    for entry in manifest_entries()
    if entry["provider"] == "anthropic"
]


def wrapped(sse: bytes) -> bytes:
    """The SSE body's events as Bedrock sends them: one chunk message per event, its
    JSON base64-encoded in ``bytes`` (a final event without its blank line is read as
    the anthropic dialect reads it)."""
    framer = SSEFramer()
    events = framer.feed(sse)
    events += framer.finish(unterminated=lambda data: accepts_unterminated("anthropic", data))
    return b"".join(
        bedrock_event(
            "chunk", json.dumps({"bytes": base64.b64encode(e.data.encode()).decode()}).encode()
        )
        for e in events
        if e.data
    )


def outcome(dialect: Dialect | None, chunks: list[bytes]) -> tuple[Any, ...]:
    parser = ToolCallParser(dialect)
    calls: list[ToolCall] = []
    extra: tuple[Any, ...] = ()
    try:
        for chunk in chunks:
            calls += parser.feed(chunk)
        calls += parser.finish()
        kind = "ok"
    except TruncatedStreamError as exc:
        kind = f"truncated ({exc.reason})"
        calls += exc.completed
        extra = tuple((p.name, p.call_id, p.raw_arguments) for p in exc.partial)
    except ProviderError as exc:
        kind = "provider_error"
        calls += exc.completed
        extra = (exc.code, exc.retryable)
    except SSEToolCallsError as exc:
        kind = type(exc).__name__
        calls += getattr(exc, "completed", ())
    brief = [(c.name, c.args, c.call_id, c.arguments_error is None) for c in calls]
    return kind, brief, extra


def check(path: Path, chunks_of: Any = None) -> None:
    sse = path.read_bytes()
    body = wrapped(sse)
    want = outcome("anthropic", [sse])
    chunks = [body] if chunks_of is None else chunks_of(body)
    assert outcome("bedrock_anthropic", chunks) == want, path.name
    assert outcome(None, chunks) == want, path.name


@pytest.mark.parametrize("path", OWN, ids=[p.name for p in OWN])
def test_each_own_anthropic_stream_reads_the_same_through_bedrock(path: Path) -> None:
    check(path)
    check(path, lambda body: [body[i : i + 1] for i in range(len(body))])


@pytest.mark.parametrize("path", corpus_params(OUTSIDE, [p.name for p in OUTSIDE]))
def test_each_outside_anthropic_stream_reads_the_same_through_bedrock(path: Path | None) -> None:
    assert path is not None  # None only where the corpus is absent: the mark skips it
    check(path)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_split_anywhere(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(OWN))

    def chunks_of(body: bytes) -> list[bytes]:
        cuts = data.draw(st.lists(st.integers(1, len(body) - 1), max_size=20))
        bounds = [0, *sorted(set(cuts)), len(body)]
        return [body[a:b] for a, b in itertools.pairwise(bounds)]

    check(path, chunks_of)
