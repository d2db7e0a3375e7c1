"""The prefix property over the corpora, and over the ways real servers vary them.

For every stream in ``recorded_streams/`` and ``../shared/external_streams/``, each
transformed as real servers differ (a ``finish_reason`` on every chunk, no ``[DONE]``,
CRLF framing, comments and pings between events, each event in its own chunk, one byte
at a time), every byte prefix fed the same way must either

- raise :class:`TruncatedStreamError` whose ``completed`` are the first calls of the
  whole stream, with identical arguments, or
- yield exactly the whole stream's calls,

or, when the whole stream is a provider's error, raise that same kind of error. A cut
stream never yields a call the whole stream does not, nor fewer calls without saying so.

Every cut is checked for the small streams; a Hypothesis sample of cuts for the rest.
Transforms that keep the end marker must also give the stream's own outcome when whole.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sse_toolcalls import (
    Dialect,
    SSEToolCallsError,
    ToolCall,
    ToolCallParser,
    TruncatedStreamError,
    as_dialect,
)
from sse_toolcalls.tooling.corpus.transforms import KEEPS_END
from sse_toolcalls.tooling.corpus.transforms import transforms as variants
from tests.outside import EXTERNAL_STREAMS, outside_corpus

ROOT = Path(__file__).resolve().parent.parent.parent
CORPORA = [ROOT / "recorded_streams", EXTERNAL_STREAMS]
SMALL_BYTES = 1200
"""Streams up to this size get every cut of every transform (about 15 s here)."""


@dataclass(frozen=True)
class Stream:
    file: str
    dialect: Dialect
    raw: bytes


def load_streams() -> list[Stream]:
    streams = []
    for corpus in CORPORA:
        manifest = corpus / "MANIFEST.json"
        if not manifest.exists():
            continue
        for entry in json.loads(manifest.read_text()):
            provider = entry["provider"]
            dialect = (
                "openai_chat" if provider.startswith("openai_compat_") else as_dialect(provider)
            )
            raw = (corpus / entry["file"]).read_bytes()
            streams.append(Stream(f"{corpus.name}/{entry['file']}", dialect, raw))
    return streams


STREAMS = load_streams()


@outside_corpus
def test_the_outside_corpus_is_among_the_streams() -> None:
    """Without ``../shared/`` the streams above are the project's own only: this test
    makes that visible (skipped, or failed when the outside corpus is required)."""
    assert any(s.file.startswith("external_streams/") for s in STREAMS)


# -- transforms: the library's own (sse_toolcalls.tooling.corpus.transforms, which
# ``sse-toolcalls check`` uses too); the property below is this test's own oracle.


def transforms(stream: Stream) -> dict[str, list[bytes]]:
    return variants(stream.raw, stream.dialect)


# -- the property ----------------------------------------------------------------------


Brief = tuple[str, str, str | None]


def brief(calls: list[ToolCall] | tuple[ToolCall, ...]) -> list[Brief]:
    return [(c.name, json.dumps(c.args, sort_keys=True), c.call_id) for c in calls]


@dataclass(frozen=True)
class Outcome:
    kind: str
    """"ok", "truncated", or the class name of the error."""
    calls: tuple[Brief, ...]
    """The calls (ok), or the completed calls (truncated, and calls released before an error)."""


def finish(parser: ToolCallParser, released: list[ToolCall]) -> Outcome:
    try:
        calls = released + parser.finish()
    except TruncatedStreamError as exc:
        return Outcome("truncated", tuple(brief(released + list(exc.completed))))
    except SSEToolCallsError as exc:
        return Outcome(type(exc).__name__, tuple(brief(released)))
    return Outcome("ok", tuple(brief(calls)))


def feed(parser: ToolCallParser, released: list[ToolCall], chunk: bytes) -> Outcome | None:
    try:
        released += parser.feed(chunk)
    except TruncatedStreamError as exc:
        return Outcome("truncated", tuple(brief(released + list(exc.completed))))
    except SSEToolCallsError as exc:
        return Outcome(type(exc).__name__, tuple(brief(released)))
    return None


def run(dialect: Dialect, chunks: list[bytes], cut: int) -> Outcome:
    """Feed the chunks as far as byte ``cut``, then end the stream."""
    parser = ToolCallParser(dialect)
    released: list[ToolCall] = []
    for chunk in chunks:
        if cut <= 0:
            break
        outcome = feed(parser, released, chunk[:cut])
        if outcome is not None:
            return outcome
        cut -= len(chunk)
    return finish(parser, released)


def check(whole: Outcome, prefix: Outcome, where: str) -> None:
    if prefix.kind == "ok":
        assert whole.kind == "ok", f"{where}: a prefix yielded calls, the whole stream {whole.kind}"
        assert prefix.calls == whole.calls, f"{where}: a prefix yielded other calls"
        return
    if prefix.kind == "truncated":
        assert prefix.calls == whole.calls[: len(prefix.calls)], (
            f"{where}: a truncated prefix completed calls the whole stream does not"
        )
        return
    assert prefix.kind == whole.kind, (
        f"{where}: a prefix raised {prefix.kind}, the whole {whole.kind}"
    )
    assert prefix.calls == whole.calls[: len(prefix.calls)], (
        f"{where}: calls before the error differ"
    )


def every_cut(stream: Stream, name: str, chunks: list[bytes]) -> int:
    """Check every byte prefix, feeding a copy of the parser for each; return the count."""
    whole = run(stream.dialect, chunks, sum(map(len, chunks)))
    parser = ToolCallParser(stream.dialect)
    released: list[ToolCall] = []
    position = 0
    checked = 0
    for chunk in chunks:
        for k in range(1 if position else 0, len(chunk)):
            trial, trial_released = copy.deepcopy((parser, released))
            outcome = feed(trial, trial_released, chunk[:k]) if k else None
            prefix = outcome or finish(trial, trial_released)
            check(whole, prefix, f"{stream.file} [{name}] cut at {position + k}")
            checked += 1
        outcome = feed(parser, released, chunk)
        position += len(chunk)
        if outcome is not None:
            check(whole, outcome, f"{stream.file} [{name}] whole")
            return checked + 1
    check(whole, finish(parser, released), f"{stream.file} [{name}] whole")
    return checked + 1


@functools.cache
def identity_outcome(stream: Stream) -> Outcome:
    return run(stream.dialect, [stream.raw], len(stream.raw))


def check_liveness(stream: Stream, name: str, chunks: list[bytes]) -> None:
    if name in KEEPS_END:
        got = run(stream.dialect, chunks, sum(map(len, chunks)))
        assert got == identity_outcome(stream), f"{stream.file} [{name}]: the whole stream changed"


SMALLEST_PER_DIALECT = 5
"""Also every cut for each dialect's five smallest streams (Responses events are large:
none of its streams is under SMALL_BYTES)."""


def is_small(stream: Stream) -> bool:
    same = sorted(len(s.raw) for s in STREAMS if s.dialect == stream.dialect)
    return len(stream.raw) <= max(SMALL_BYTES, same[min(SMALLEST_PER_DIALECT, len(same)) - 1])


SMALL = [s for s in STREAMS if is_small(s)]
LARGE = [s for s in STREAMS if not is_small(s)]


def test_the_corpora_are_there() -> None:
    assert len(SMALL) > 20 and len(LARGE) > 20


def test_an_event_stream_gets_its_own_variants_never_the_line_rewrites() -> None:
    # CRLF or pings spliced into AWS's binary messages would break their CRCs: a Bedrock
    # stream is varied by message, never by line.
    binary = [s for s in STREAMS if s.dialect.startswith("bedrock_")]
    assert {s.dialect for s in binary} == {"bedrock_converse", "bedrock_anthropic"}
    for stream in binary:
        variants = transforms(stream)
        assert set(variants) == {
            "as recorded",
            "unknown events between messages",
            "event per chunk",
            "one byte at a time",
        }
        per_message = variants["event per chunk"]
        assert b"".join(per_message) == stream.raw
        whole = [m for m in per_message if int.from_bytes(m[:4], "big") == len(m)]
        assert len(whole) >= len(per_message) - 1, stream.file


@pytest.mark.parametrize("stream", SMALL, ids=[s.file for s in SMALL])
def test_every_prefix_of_every_transform_of_a_small_stream(stream: Stream) -> None:
    for name, chunks in transforms(stream).items():
        check_liveness(stream, name, chunks)
        every_cut(stream, name, chunks)


@functools.cache
def cached_transforms(index: int) -> tuple[tuple[str, tuple[bytes, ...], Outcome], ...]:
    stream = LARGE[index]
    out = []
    for name, chunks in transforms(stream).items():
        whole = run(stream.dialect, chunks, sum(map(len, chunks)))
        out.append((name, tuple(chunks), whole))
    return tuple(out)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, len(LARGE) - 1), which=st.integers(0, 7), cut=st.integers(0))
def test_sampled_prefixes_of_every_transform_of_a_large_stream(
    index: int, which: int, cut: int
) -> None:
    stream = LARGE[index]
    name, chunks, whole = cached_transforms(index)[which % len(cached_transforms(index))]
    total = sum(map(len, chunks))
    prefix = run(stream.dialect, list(chunks), cut % (total + 1))
    check(whole, prefix, f"{stream.file} [{name}] cut at {cut % (total + 1)}")


@pytest.mark.parametrize("stream", LARGE, ids=[s.file for s in LARGE])
def test_large_streams_keep_their_outcome_under_every_transform(stream: Stream) -> None:
    for name, chunks in transforms(stream).items():
        if name != "one byte at a time":  # the sampled test covers it; whole it is slow
            check_liveness(stream, name, chunks)


def test_a_proxy_stream_cut_after_a_call_name_fails_the_property_on_the_old_rule() -> None:
    # The property's own check catches issue 9's hole 1: a prefix releasing a call with
    # its name only would yield other calls than the whole stream.
    whole = Outcome("ok", (("f", '{"a": 1}', "c"),))
    prefix = Outcome("ok", (("f", "{}", "c"),))
    with pytest.raises(AssertionError):
        check(whole, prefix, "example")


if os.environ.get("SSE_TOOLCALLS_PREFIX_FIGURES"):

    def test_print_figures() -> None:  # pragma: no cover - a report for the closing note
        counts: dict[str, list[int]] = {}
        for stream in SMALL:
            for name, chunks in transforms(stream).items():
                entry = counts.setdefault(stream.dialect, [0, 0])
                entry[0] += every_cut(stream, name, chunks)
                entry[1] += 1
        print(json.dumps(counts))  # noqa: T201 - this test is a report, run by hand
