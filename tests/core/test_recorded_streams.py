"""Replay the hand-made corpus in ``recorded_streams/`` through the parser, however split.

Each stream must give its expected outcome and calls when fed whole, one byte at a time,
and at split points chosen by Hypothesis (biased towards the middle of multi-byte UTF-8
characters and the gap between CR and LF for SSE; towards the 12 bytes of each message's
prelude and the edges of its CRCs for AWS's event stream), with its dialect named and with
the dialect left to detection. The manifest and the files must match the scripts that make
them.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sse_toolcalls import (
    DIALECTS,
    Dialect,
    ProviderError,
    StreamFinished,
    StreamParser,
    TextDelta,
    ToolCall,
    ToolCallParser,
    TruncatedStreamError,
)

ROOT = Path(__file__).resolve().parent.parent.parent / "recorded_streams"


def _load(name: str) -> ModuleType:
    """Import one of the corpus scripts, which live outside any package."""
    spec = importlib.util.spec_from_file_location(f"recorded_streams_{name}", ROOT / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses resolve string annotations through sys.modules, so register it first.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


MANIFEST: list[dict[str, Any]] = json.loads((ROOT / "MANIFEST.json").read_text(encoding="utf-8"))
FILES = [entry["file"] for entry in MANIFEST]
ENTRIES = {entry["file"]: entry for entry in MANIFEST}


@cache
def raw_of(file: str) -> bytes:
    return (ROOT / file).read_bytes()


@cache
def expected_of(file: str) -> dict[str, Any]:
    path = ROOT / (file.rsplit(".", 1)[0] + ".expected.json")
    result: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return result


def run(dialect: Dialect | None, chunks: list[bytes]) -> tuple[str, Any, ToolCallParser]:
    """Feed the chunks; return the outcome, the calls or the error, and the parser."""
    parser = ToolCallParser(dialect)
    calls: list[ToolCall] = []
    try:
        for chunk in chunks:
            calls.extend(parser.feed(chunk))
        calls.extend(parser.finish())
    except TruncatedStreamError as exc:
        return "truncated", exc, parser
    except ProviderError as exc:
        return "provider_error", exc, parser
    return ("complete" if calls else "no_calls"), calls, parser


def check(file: str, chunks: list[bytes], *, detect: bool = False) -> None:
    """Assert that feeding ``chunks`` gives what the stream's expected file says."""
    entry = ENTRIES[file]
    exp = expected_of(file)
    dialect = entry["provider"]
    outcome, got, parser = run(None if detect else dialect, chunks)
    assert outcome == exp["outcome"], f"{file}: {got!r}"
    if outcome in ("complete", "no_calls"):
        assert parser.dialect == dialect
        assert [(c.name, c.args, c.call_id) for c in got] == [
            (c["name"], c["args"], c["call_id"]) for c in exp["calls"]
        ]
        # index is the call's position in the turn, which may differ from release order.
        assert sorted(c.index for c in got) == list(range(len(got)))
        assert all(c.provider == dialect for c in got)
        invalid = [n for n, c in enumerate(got) if c.arguments_error is not None]
        assert invalid == exp["invalid_arguments"]
    elif outcome == "truncated" and "partial_calls" in exp:
        assert [(p.name, p.call_id, p.raw_arguments) for p in got.partial] == [
            (p["name"], p["call_id"], p["args_prefix"]) for p in exp["partial_calls"]
        ]
    elif outcome == "provider_error" and "error" in exp:
        assert (got.code, got.retryable) == (exp["error"]["code"], exp["error"]["retryable"])


def split(raw: bytes, cuts: list[int]) -> list[bytes]:
    bounds = [0, *sorted(set(cuts)), len(raw)]
    return [raw[a:b] for a, b in itertools.pairwise(bounds)]


def is_event_stream(file: str) -> bool:
    return file.endswith(".eventstream")


def message_bounds(raw: bytes) -> list[tuple[int, int]]:
    """Where each AWS event-stream message begins and ends, read from the total length
    that opens it (no CRC checked: the parser's job); a cut last message ends at the body's
    end."""
    bounds = []
    at = 0
    while at < len(raw):
        end = at + int.from_bytes(raw[at : at + 4], "big") if len(raw) - at >= 4 else len(raw)
        bounds.append((at, min(end, len(raw))))
        at = end
    return bounds


def awkward_cuts(raw: bytes, *, event_stream: bool = False) -> list[int]:
    """Offsets inside a multi-byte UTF-8 character or between a CR and its LF; for an
    event stream, every offset inside a message's 12-byte prelude (its two lengths and
    their CRC) and around the 4-byte message CRC that closes it."""
    if event_stream:
        cuts: set[int] = set()
        for start, end in message_bounds(raw):
            cuts.update(range(start + 1, start + 13))
            cuts.update(range(end - 5, end + 2))
        return sorted(i for i in cuts if 0 < i < len(raw))
    return [
        i
        for i in range(1, len(raw))
        if 0x80 <= raw[i] <= 0xBF or (raw[i - 1] == 0x0D and raw[i] == 0x0A)
    ]


def chunkings(raw: bytes, *, event_stream: bool = False) -> st.SearchStrategy[list[bytes]]:
    anywhere = st.integers(min_value=1, max_value=len(raw) - 1)
    awkward = awkward_cuts(raw, event_stream=event_stream)
    point = st.one_of(st.sampled_from(awkward), anywhere) if awkward else anywhere
    return st.lists(point, max_size=40).map(lambda cuts: split(raw, cuts))


# --------------------------------------------------------------------------------------
# The corpus is current.


def test_manifest_is_rebuilt_from_the_files() -> None:
    make_manifest = _load("make_manifest")
    assert (ROOT / "MANIFEST.json").read_text(encoding="utf-8") == make_manifest.render()


def test_files_are_what_write_streams_makes() -> None:
    rendered: dict[str, bytes] = _load("write_streams").render_files()
    on_disk = {
        p.relative_to(ROOT).as_posix()
        for pattern in ("*/*.sse", "*/*.eventstream", "*/*.expected.json")
        for p in ROOT.glob(pattern)
    }
    assert on_disk == set(rendered)
    for rel, data in rendered.items():
        assert (ROOT / rel).read_bytes() == data, rel


def test_manifest_entries_describe_their_bytes() -> None:
    for entry in MANIFEST:
        raw = raw_of(entry["file"])
        assert entry["bytes"] == len(raw)
        assert entry["provider"] == entry["file"].split("/")[0]
        assert entry["made_by"].startswith("hand-written from ")
        assert entry["expected"]["outcome"] in (
            "complete",
            "no_calls",
            "truncated",
            "provider_error",
        )
        assert (entry["expected"]["outcome"] == "complete") == bool(entry["expected"]["calls"])


def test_corpus_covers_each_dialect_and_awkward_text() -> None:
    for dialect in DIALECTS:
        outcomes = {e["expected"]["outcome"] for e in MANIFEST if e["provider"] == dialect}
        assert outcomes == {"complete", "no_calls", "truncated", "provider_error"}, dialect
        counts = {len(e["expected"]["calls"]) for e in MANIFEST if e["provider"] == dialect}
        assert {0, 1, 2} <= counts, dialect
    arg_texts = [json.dumps(e["expected"]["calls"], ensure_ascii=False) for e in MANIFEST]
    assert sum(any(ord(ch) > 0x7F for ch in text) for text in arg_texts) >= 2
    assert any("\u2028" in text for text in arg_texts)
    assert any(awkward_cuts(raw_of(f)) and b"\r\n" in raw_of(f) for f in FILES)


def test_event_stream_bodies_are_whole_messages_or_say_where_they_are_cut() -> None:
    # The split bias reads message boundaries from the bodies: they must tile each body,
    # and only the streams written to be cut may end inside a message.
    for file in filter(is_event_stream, FILES):
        raw = raw_of(file)
        bounds = message_bounds(raw)
        assert bounds[0][0] == 0 and bounds[-1][1] == len(raw)
        whole = (
            int.from_bytes(raw[bounds[-1][0] : bounds[-1][0] + 4], "big")
            if len(raw) - bounds[-1][0] >= 4
            else None
        )
        cut = whole != bounds[-1][1] - bounds[-1][0]
        assert cut == ("cut_inside" in file), file


# --------------------------------------------------------------------------------------
# Every stream, every way of splitting it.


@pytest.mark.parametrize("file", FILES)
def test_whole(file: str) -> None:
    check(file, [raw_of(file)])


@pytest.mark.parametrize("file", FILES)
def test_byte_by_byte(file: str) -> None:
    raw = raw_of(file)
    check(file, [raw[i : i + 1] for i in range(len(raw))])


@pytest.mark.parametrize("file", FILES)
def test_detected_dialect(file: str) -> None:
    raw = raw_of(file)
    check(file, [raw], detect=True)
    check(file, [raw[i : i + 1] for i in range(len(raw))], detect=True)


@pytest.mark.parametrize("file", FILES)
@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_split_anywhere(file: str, data: st.DataObject) -> None:
    chunks = data.draw(chunkings(raw_of(file), event_stream=is_event_stream(file)), label="chunks")
    check(file, chunks, detect=data.draw(st.booleans(), label="detect"))


# --------------------------------------------------------------------------------------
# The visible text, where the expected file states it.

TEXT_FILES = [f for f in FILES if "text" in expected_of(f)]


@pytest.mark.parametrize("file", TEXT_FILES)
def test_visible_text(file: str) -> None:
    raw = raw_of(file)
    parser = StreamParser(ENTRIES[file]["provider"])
    events = [e for i in range(len(raw)) for e in parser.feed(raw[i : i + 1])]
    events += parser.finish()
    finished = [e for e in events if isinstance(e, StreamFinished)]
    assert len(finished) == 1
    assert finished[0].text == expected_of(file)["text"]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == finished[0].text
