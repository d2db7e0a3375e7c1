"""The fuzz properties in the default test run, without atheris.

Every input in ``tests/tooling/fuzz/regressions/<target>/`` (a finding that was fixed) is
replayed through the same checker the fuzzer uses; the checker itself is shown to catch
each kind of defect, on deliberately broken stand-ins for the parser and the framer.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path
from typing import Any

import pytest
from botocore.eventstream import EventStreamBuffer  # type: ignore[import-untyped]

from sse_toolcalls import (
    MalformedStreamError,
    PartialToolCall,
    ServerSentEvent,
    SSEFramer,
    SSEToolCallsError,
    ToolCall,
    ToolCallParser,
    TruncatedStreamError,
    UsageError,
)
from sse_toolcalls.framing.eventstream import (
    EventStreamEventFramer,
    EventStreamFramer,
    EventStreamMessage,
)
from sse_toolcalls.tooling.corpus import invariants
from sse_toolcalls.tooling.corpus.invariants import (
    BYTE_AT_A_TIME_MAX,
    HEADER_BYTES,
    TARGETS,
    InvariantError,
    check,
    decode,
    encode,
    feedings,
)
from sse_toolcalls.tooling.corpus.mutators import event_stream_message, string_headers
from tests.outside import outside_corpus
from tests.tooling.fuzz.corpus import (
    TOKENS,
    seed_inputs,
    seed_streams,
    write_dictionary,
    write_seeds,
)
from tests.tooling.fuzz.mutators import mutate_event_stream, mutate_json, repeat_bytes

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
REGRESSIONS = HERE / "regressions"
FINDINGS = HERE / "findings"

CHAT = (
    b'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function",'
    b'"function":{"name":"f","arguments":"{\\"a\\": 1}"}}]}}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'
    b"data: [DONE]\n\n"
)


def regression_inputs() -> list[tuple[str, Path]]:
    return sorted(
        (folder.name, path)
        for folder in REGRESSIONS.iterdir()
        if folder.is_dir()
        for path in folder.glob("*.bin")
    )


def test_every_regression_input_still_holds() -> None:
    # One test for the whole folder: an empty folder is a pass, not a skipped test.
    for target, path in regression_inputs():
        assert target in TARGETS, f"{path}: its folder names no fuzz target"
        check(target, path.read_bytes())


def test_findings_and_regressions_are_filed_by_target() -> None:
    for root in (REGRESSIONS, FINDINGS):
        for path in root.iterdir():
            if path.name == "README.md":
                continue
            assert path.is_dir() and path.name in TARGETS, f"{path} is not a target's folder"
            for item in path.iterdir():
                assert item.suffix in (".bin", ".txt"), f"{item}: inputs are .bin, notes .txt"


def test_a_clean_stream_passes_every_target() -> None:
    for target in ("openai_chat", "detect", "framer"):
        check(target, encode(CHAT, [5, 90, 200]))


def test_inputs_decode_to_the_stream_and_inner_cuts() -> None:
    data = encode(CHAT, [0, 17, len(CHAT) + 1 + 40])
    stream, cuts = decode(data)
    assert stream == CHAT and cuts == [17, 40]
    assert decode(b"\x01\x02") == (b"\x01\x02", [])
    labels = [label for label, _ in feedings(b"x" * 10, [3])]
    assert labels == ["whole", "cut at [3]", "byte at a time"]
    long = b"x" * (BYTE_AT_A_TIME_MAX + 1)
    assert [label for label, _ in feedings(long, [])] == ["whole"]
    for _, chunks in feedings(CHAT, [7, 99]):
        assert b"".join(chunks) == CHAT


@outside_corpus
def test_seeds_come_from_both_corpora_and_decode_back(tmp_path: Path) -> None:
    for target in TARGETS:
        streams = dict(seed_streams(target))
        folders = {name.split("/", 1)[0] for name in streams}
        assert folders == {"recorded_streams", "external_streams"}, target
        for name, data in seed_inputs(target):
            stream, _ = decode(data)
            original = streams[name.removesuffix(" (CRLF)")]
            assert stream == (original.replace(b"\n", b"\r\n") if "(CRLF)" in name else original)
    assert write_seeds("anthropic", tmp_path / "seeds") == len(list(seed_inputs("anthropic")))
    write_dictionary(tmp_path / "dict")
    assert len((tmp_path / "dict").read_text().splitlines()) == len(TOKENS)
    with pytest.raises(ValueError, match="unknown fuzz target"):
        list(seed_streams("nope"))


# --------------------------------------------------------------------------------------
# The checker catches each kind of defect. The stand-ins wrap the real classes and break
# one promise each.


class SplitDependentParser:
    """Forgets a call when its bytes came in more than one piece."""

    def __init__(self, dialect: Any) -> None:
        self.inner = ToolCallParser(dialect)
        self.pieces = 0
        self.dialect = dialect

    def feed(self, data: bytes) -> list[ToolCall]:
        self.pieces += 1
        calls = self.inner.feed(data)
        return calls if self.pieces == 1 else []

    def finish(self) -> list[ToolCall]:
        return self.inner.finish()


class LeakyParser(SplitDependentParser):
    """Lets a foreign exception out of ``feed``."""

    def feed(self, data: bytes) -> list[ToolCall]:
        raise KeyError("choices")


class ReusableParser(SplitDependentParser):
    """Answers a second ``finish()`` instead of refusing it."""

    def finish(self) -> list[ToolCall]:
        try:
            return self.inner.finish()
        except UsageError:
            return []


class BadArgsParser(SplitDependentParser):
    """Releases a call whose arguments are not strict JSON."""

    def __init__(self, dialect: Any, value: Any) -> None:
        super().__init__(dialect)
        self.value = value

    def finish(self) -> list[ToolCall]:
        return [
            ToolCall(
                name="f", args={"v": [self.value]}, provider="openai_chat", call_id="c", index=0
            )
        ]


class TypedErrorParser(SplitDependentParser):
    """Raises a different error class depending on the split."""

    def finish(self) -> list[ToolCall]:
        self.inner.finish()
        if self.pieces > 1:
            raise MalformedStreamError("made up")
        return []


@pytest.mark.parametrize(
    ("stand_in", "kind"),
    [
        (SplitDependentParser, "split-calls-vs-calls"),
        (ReusableParser, "refusal-missing"),
        (TypedErrorParser, "split-calls-vs-MalformedStreamError"),
    ],
)
def test_the_checker_catches_broken_parsers(
    monkeypatch: pytest.MonkeyPatch, stand_in: type[SplitDependentParser], kind: str
) -> None:
    monkeypatch.setattr(invariants, "ToolCallParser", stand_in)
    with pytest.raises(InvariantError) as info:
        check("openai_chat", encode(CHAT, [40]))
    assert info.value.kind == kind


def test_the_checker_lets_foreign_exceptions_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(invariants, "ToolCallParser", LeakyParser)
    with pytest.raises(KeyError):
        check("detect", encode(CHAT))


@pytest.mark.parametrize("value", [float("inf"), float("nan"), "\ud800", b"x", (1,)])
def test_the_checker_refuses_arguments_that_are_not_strict_json(
    monkeypatch: pytest.MonkeyPatch, value: Any
) -> None:
    monkeypatch.setattr(invariants, "ToolCallParser", lambda d: BadArgsParser(d, value))
    with pytest.raises(InvariantError) as info:
        check("openai_chat", encode(CHAT))
    assert info.value.kind in ("args-not-strict-json", "lone-surrogate")


def test_the_checker_catches_a_split_dependent_framer(monkeypatch: pytest.MonkeyPatch) -> None:
    class Framer(SSEFramer):
        __slots__ = ()

        def feed(self, data: bytes) -> list[ServerSentEvent]:
            # Forgets the id of an event completed by a one-byte read.
            events = super().feed(data)
            return [e._replace(id="") for e in events] if len(data) == 1 else events

    stream = b"id: 7\ndata: a\n\n"
    check("framer", encode(stream, [4]))  # the real framer agrees with itself
    monkeypatch.setattr(invariants, "SSEFramer", Framer)
    with pytest.raises(InvariantError) as info:
        check("framer", encode(stream, [4]))
    assert info.value.kind == "split-events-vs-events"


def test_the_checker_walks_deep_arguments_without_recursing() -> None:
    deep: Any = 1
    for _ in range(50_000):
        deep = [deep]
    call = ToolCall(name="f", args={"a": deep}, provider="openai_chat", call_id="c", index=0)
    invariants._check_calls([call], "openai_chat")
    assert len(invariants._call_key(call)[-1]) == 2 * 50_000 + 4


# --------------------------------------------------------------------------------------
# The structure-aware mutations (used by the atheris target, testable without it).


def test_json_mutations_keep_the_header_and_reach_hostile_values() -> None:
    data = encode(CHAT, [10, 20, 30])
    rng = random.Random(7)
    outputs = [mutate_json(data, rng, 1 << 16) for _ in range(400)]
    made = [out for out in outputs if out is not None]
    assert len(made) > 250
    assert all(out[:HEADER_BYTES] == data[:HEADER_BYTES] and out != data for out in made)
    # Inside the arguments string (JSON in JSON) as well as in the event itself.
    inner = [out for out in made if b'"arguments": "{\\"a\\": ' in out]
    assert any(b'\\"a\\": 1}' not in out for out in inner)
    assert any(b"1e400" in out and b'"arguments"' in out for out in made)
    rerun = random.Random(7)
    assert [mutate_json(data, rerun, 1 << 16) for _ in range(400)] == outputs


def test_json_mutations_leave_what_they_cannot_read_alone() -> None:
    rng = random.Random(1)
    assert mutate_json(encode(b"data: [DONE]\n\n"), rng, 1 << 16) is None
    assert mutate_json(encode(b"data: " + b"[" * 5000 + b"\n\n"), rng, 1 << 16) is None
    assert mutate_json(encode(CHAT), rng, 40) is None  # no room


def test_repeated_bytes_stay_within_the_size_limit() -> None:
    rng = random.Random(3)
    data = encode(b"retry: 9\n\n")
    grown = [repeat_bytes(data, rng, 5000) for _ in range(200)]
    assert all(g is None or HEADER_BYTES < len(data) < len(g) <= 5000 for g in grown)
    assert any(g is not None and len(g) > 4000 for g in grown)
    assert repeat_bytes(data[:HEADER_BYTES], rng, 5000) is None


def test_the_checker_describes_deep_hostile_fields_without_recursing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]

    class DeepIdParser(SplitDependentParser):
        def finish(self) -> list[ToolCall]:
            self.inner.finish()
            partial = PartialToolCall(name="f", call_id=deep, index=0, raw_arguments="")
            raise TruncatedStreamError(
                "cut", reason="eof", provider="openai_chat", partial=[partial]
            )

    monkeypatch.setattr(invariants, "ToolCallParser", DeepIdParser)
    with pytest.raises(InvariantError) as info:
        check("openai_chat", encode(CHAT))
    assert info.value.kind == "partial-id"
    assert "<list of 1>" in str(info.value)


# --------------------------------------------------------------------------------------
# AWS's event stream: the framer target, and the whole-message mutations.

CONVERSE = ROOT / "recorded_streams" / "bedrock_converse" / "two_calls_height_weight.eventstream"


def test_a_clean_event_stream_passes_its_targets() -> None:
    raw = CONVERSE.read_bytes()
    for target in ("eventstream", "bedrock_converse", "detect"):
        check(target, encode(raw, [5, 13, len(raw) - 3]))
    # A cut inside the last message is an outcome of its own, the same at every split.
    check("eventstream", encode(raw[:-7], [1, 12, 200]))


def test_the_checker_catches_a_split_dependent_event_stream_framer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Framer(EventStreamFramer):
        __slots__ = ()

        def feed(self, data: bytes) -> list[EventStreamMessage]:
            # Loses the payload of a message completed by a one-byte read.
            messages = super().feed(data)
            if len(data) == 1:
                return [EventStreamMessage(headers=m.headers, payload=b"") for m in messages]
            return messages

    raw = CONVERSE.read_bytes()
    monkeypatch.setattr(invariants, "EventStreamFramer", Framer)
    with pytest.raises(InvariantError) as info:
        check("eventstream", encode(raw[:400], [100]))
    # The seam (the real framer inside) tells it first: the same read gave other events.
    assert info.value.kind == "eventstream-seam-events"


def test_the_checker_catches_a_message_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    class Framer(EventStreamFramer):
        __slots__ = ()

        def __init__(self, *, max_message_bytes: int = 1 << 30) -> None:
            # Forgets the limit it was given: a 300-byte message passes a 256-byte one.
            super().__init__()
            self.max_message_bytes = max_message_bytes

        def feed(self, data: bytes) -> list[EventStreamMessage]:
            limit, self.max_message_bytes = self.max_message_bytes, 1 << 30
            try:
                return super().feed(data)
            finally:
                self.max_message_bytes = limit

    class Seam(EventStreamEventFramer):
        __slots__ = ()

        def __init__(self, *, max_event_bytes: int = 1 << 30) -> None:
            super().__init__(max_event_bytes=1 << 30)

    big = event_stream_message(
        string_headers([(":event-type", "contentBlockDelta"), (":message-type", "event")]),
        b'{"contentBlockIndex":0,"delta":{"text":"' + b"x" * 300 + b'"}}',
    )
    monkeypatch.setattr(invariants, "EventStreamFramer", Framer)
    monkeypatch.setattr(invariants, "EventStreamEventFramer", Seam)
    with pytest.raises(InvariantError) as info:
        check("eventstream", encode(big))
    assert info.value.kind == "eventstream-message-past-limit"


def test_the_event_stream_checker_lets_foreign_exceptions_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Framer(EventStreamFramer):
        __slots__ = ()

        def feed(self, data: bytes) -> list[EventStreamMessage]:
            raise struct.error("unpack requires a buffer of 4 bytes")

    monkeypatch.setattr(invariants, "EventStreamFramer", Framer)
    with pytest.raises(struct.error):
        check("eventstream", encode(CONVERSE.read_bytes()))


def test_event_stream_mutations_keep_every_crc_valid_and_reach_the_dialects() -> None:
    raw = CONVERSE.read_bytes()
    data = encode(raw, [10, 20, 30])
    rng = random.Random(5)
    made = [m for m in (mutate_event_stream(data, rng, 1 << 20) for _ in range(300)) if m]
    assert len(made) > 200
    outcomes = set()
    for out in made:
        assert out[:HEADER_BYTES] == data[:HEADER_BYTES]
        # botocore's own parser checks both CRCs of every message.
        buffer = EventStreamBuffer()
        buffer.add_data(out[HEADER_BYTES:])
        assert sum(1 for _ in buffer) >= 1
        parser = ToolCallParser("bedrock_converse")
        try:
            parser.feed(out[HEADER_BYTES:])
            parser.finish()
            outcomes.add("whole")
        except SSEToolCallsError as exc:
            outcomes.add(type(exc).__name__)
    # The mutations get past the framer: the dialect decides, in each of its ways.
    assert {"whole", "MalformedStreamError", "TruncatedStreamError", "ProviderError"} <= outcomes
    assert "ChecksumMismatchError" not in outcomes
    rerun = random.Random(5)
    assert [m for m in (mutate_event_stream(data, rerun, 1 << 20) for _ in range(300)) if m] == made
    assert mutate_event_stream(encode(CHAT), rng, 1 << 20) is None
    assert mutate_event_stream(data, rng, 50) is None  # no room
