"""Bytes to complete tool calls on Amazon Bedrock: ours against the peers and a floor.

``python -m benchmarks.bench_bedrock`` reads Bedrock response bodies (AWS's binary event
stream) into complete tool calls with every contender, in one run:

- ``ours``: ``ToolCallParser("bedrock_converse" | "bedrock_anthropic")``, ``feed`` per
  read, then ``finish`` (a turn cut at the token limit raises ``TruncatedStreamError``,
  whose ``completed`` calls are counted).
- ``boto3``: what a boto3-based framework runs. botocore's modeled parser, as
  ``converse_stream()["stream"]`` / ``invoke_model_with_response_stream()["body"]`` hand
  it over (``botocore.eventstream.EventStream`` with the bedrock-runtime service model's
  output shape and ``EventStreamJSONParser``), then the reassembly pydantic-ai and
  langchain-aws write: ``toolUse.input`` fragments kept per ``contentBlockIndex``,
  joined and ``json.loads``-ed at ``contentBlockStop`` (InvokeModel: each chunk's bytes
  ``json.loads``-ed, ``input_json_delta`` fragments the same way).
- ``botocore-buffer``: the lighter way to the same events: ``EventStreamBuffer`` and one
  ``json.loads`` per payload (the base64 of a chunk decoded), then the same loop.
- ``anthropic-sdk`` (InvokeModel only): the SDK's Bedrock decoder
  (``anthropic.lib.bedrock._stream_decoder.AWSEventStreamDecoder``, botocore underneath),
  ``construct_type``, ``accumulate_event`` and ``build_events`` per event (what
  ``AnthropicBedrock``'s ``messages.stream`` runs, as W2's anthropic-sdk row does).
- ``litellm``: LiteLLM's own Bedrock decoders on the raw bytes
  (``AWSEventStreamDecoder.iter_bytes`` for ConverseStream,
  ``AmazonAnthropicClaudeStreamDecoder`` for InvokeModel), its ``ModelResponseStream``
  chunks rebuilt by ``litellm.stream_chunk_builder`` (LiteLLM's documented way); the
  decoder's ``GChunk`` dicts (``messageStart``, which carries nothing) are left out, and
  ``CustomStreamWrapper``'s own per-chunk work is not run, so this is less than a
  ``litellm.completion(stream=True)`` user pays.
- ``floor``: the least work that gives the same calls: a walk over the messages by the
  two lengths of each prelude, no header read (a ConverseStream event is told by its
  payload's keys), ``orjson.loads`` once per payload (and of each chunk's base64-decoded
  bytes), fragments appended to lists and joined once per call. It checks no CRC, no
  header, no limit, no exception or error message, no stop reason and no order of
  events: it is a bound, not a parser anyone should ship. ``floor+crc``, beside it, is
  the same walk checking both CRC32s (``zlib.crc32``), as every reader of the format
  must: the least cost of the check ours makes, in no ratio but ``ours/floor+crc``.

Inputs: the real recordings of ``../shared/external_streams/bedrock/``
(``SSE_TOOLCALLS_SHARED`` moves it; ``MANIFEST.json`` names each file's dialect and
expected calls), in two groups by dialect, and one synthetic turn per dialect made here
with a small encoder (CRC32 from ``zlib``): some text, then 4 calls whose arguments come in
2,000 fragments of 3 to 8 characters (``--deltas``), so the cost per event shows. Read
sizes: each body whole, 1,024-byte reads, 64-byte reads, and one message per read.

Correct before fast: every contender runs once on every group and read size, and its
calls (id, name, arguments, per body) must equal the expected ones (the manifest's, or the
generator's); a wrong one is reported and not timed, and the run exits 1. A peer that is
not installed is reported and skipped. Timing: ``time.process_time``; a calibration run
fixes how many passes make a sample of at least ``--min-time`` seconds; ``--repeats``
samples per contender, interleaved round-robin with the order rotated each round;
garbage collected between samples. Printed: the median CPU seconds of one pass over the
group, ``ours/floor`` (how many times the floor's time ours takes) and ``peer/ours`` (above
1: ours is faster). ``--fast``: 200 deltas, one sample of one pass (the CI smoke, in
``tests/tooling/test_bench_bedrock.py``). ``--layers``: instead of the contenders, the
share of ours' time in framing messages, in making them events, and in the rest.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import gc
import json
import math
import os
import random
import statistics
import struct
import sys
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

if __package__ in (None, ""):
    # Run as ``python benchmarks/bench_bedrock.py``: make the repository root importable.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "benchmarks"

from benchmarks.inputs import make_args
from benchmarks.model import Call, MissingPeer
from benchmarks.peers._require import require
from sse_toolcalls import ToolCallParser
from sse_toolcalls.calls import Dialect
from sse_toolcalls.errors import TruncatedStreamError

__all__ = [
    "PEERS",
    "READS",
    "ChecksumError",
    "Contender",
    "Group",
    "check",
    "chunked",
    "floor",
    "floor_crc",
    "floor_payloads",
    "main",
    "manifest",
    "message_count",
    "ours",
    "recordings",
    "synthetic_anthropic",
    "synthetic_converse",
]

READS: tuple[int | None, ...] = (None, 1024, 64, 0)
"""Read sizes: ``None`` is each body whole, ``0`` one message per read (AWS writes each
event as it comes, so a client that keeps up with a model reads about one at a time)."""

Streams = Sequence[tuple[Dialect, Sequence[bytes]]]
"""One group's bodies, each cut into reads, with its dialect."""
Run = Callable[[Streams], list[list[Call]]]
"""A contender: every body of a group in, each body's calls out."""

PROVIDERS: dict[str, Dialect] = {
    "bedrock_converse": "bedrock_converse",
    "bedrock_invoke_anthropic": "bedrock_anthropic",
}
"""The manifest's ``provider`` -> our dialect."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Group:
    """Bodies of one dialect, and the calls each must give."""

    name: str
    dialect: Dialect
    bodies: list[bytes]
    expected: list[list[Call]]
    events: int
    """Event-stream messages in all the bodies."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Contender:
    """One way from bytes to calls."""

    name: str
    role: str
    """``ours``, ``floor``, ``floor+crc`` (shown, in no ratio but its own), ``peer``, or
    ``part`` (a piece of ours, for ``--layers``)."""
    dialects: tuple[Dialect, ...]
    run: Run


# --------------------------------------------------------------------------------------
# Inputs


def shared_folder() -> Path:
    root = Path(__file__).resolve().parents[1]
    shared = Path(os.environ.get("SSE_TOOLCALLS_SHARED", root.parent / "shared"))
    return shared / "external_streams"


def message_count(body: bytes) -> int:
    """The messages in a whole body, by their total lengths."""
    count = pos = 0
    while pos < len(body):
        pos += int.from_bytes(body[pos : pos + 4], "big")
        count += 1
    return count


def manifest() -> list[dict[str, Any]]:
    """The recordings' entries in ``bedrock/MANIFEST.json`` (file, provider, expected)."""
    folder = shared_folder() / "bedrock"
    try:
        entries: list[dict[str, Any]] = json.loads((folder / "MANIFEST.json").read_bytes())
    except OSError:
        sys.exit(f"no recordings in {folder} (set SSE_TOOLCALLS_SHARED)")
    return entries


def recordings() -> list[Group]:
    """The recorded bodies, one group per dialect, with the manifest's expected calls."""
    folder = shared_folder()
    by_dialect: dict[Dialect, list[tuple[bytes, list[Call]]]] = {}
    for entry in manifest():
        calls = [(c["call_id"], c["name"], c["args"]) for c in entry["expected"].get("calls", [])]
        body = (folder / entry["file"]).read_bytes()
        by_dialect.setdefault(PROVIDERS[entry["provider"]], []).append((body, calls))
    return [
        Group(
            name=f"recordings, {dialect} ({len(items)} files)",
            dialect=dialect,
            bodies=[body for body, _ in items],
            expected=[calls for _, calls in items],
            events=sum(message_count(body) for body, _ in items),
        )
        for dialect, items in sorted(by_dialect.items())
    ]


_PAD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _header(name: str, value: str) -> bytes:
    """A string header (value type 7): name length, name, type, value length, value."""
    raw_name, raw_value = name.encode(), value.encode()
    return (
        bytes([len(raw_name)]) + raw_name + b"\x07" + struct.pack(">H", len(raw_value)) + raw_value
    )


def encode_message(event_type: str, payload: dict[str, Any]) -> bytes:
    """One event message as Bedrock frames it: three string headers in Bedrock's order, the
    JSON payload (sorted keys, compact, as Bedrock writes it), both CRC32s."""
    headers = (
        _header(":event-type", event_type)
        + _header(":content-type", "application/json")
        + _header(":message-type", "event")
    )
    body = json.dumps(payload, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()
    prelude = struct.pack(">II", 16 + len(headers) + len(body), len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + body
    return message + struct.pack(">I", zlib.crc32(message))


def _pieces(rng: random.Random, text: str) -> Iterator[str]:
    """``text`` in pieces of 3 to 8 characters, as model tokens come."""
    i = 0
    while i < len(text):
        n = rng.randint(3, 8)
        yield text[i : i + n]
        i += n


def _ident(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(_PAD) for _ in range(n))


def _turn(
    rng: random.Random, deltas: int, n_calls: int
) -> tuple[list[str], list[tuple[str, str, dict[str, Any]]]]:
    """The text pieces and the calls of one turn whose arguments come in about ``deltas``
    fragments in all (5.5 characters a fragment on average)."""
    calls = [
        (_ident(rng, 22), f"tool_{k}", make_args(rng, int(deltas * 5.5 / n_calls)))
        for k in range(n_calls)
    ]
    text = "Let me look that up in the records before I answer; one moment please."
    return list(_pieces(rng, text)), calls


def synthetic_converse(deltas: int, *, seed: int = 0xB5D) -> Group:
    """A ConverseStream turn: a text block (no ``contentBlockStart``, as Claude sends it),
    then 4 ``toolUse`` blocks, each with Claude's empty first input fragment."""
    rng = random.Random(seed)
    texts, calls = _turn(rng, deltas, 4)
    out: list[bytes] = []

    def send(event: str, payload: dict[str, Any]) -> None:
        out.append(encode_message(event, {**payload, "p": _PAD[: rng.randint(1, len(_PAD))]}))

    send("messageStart", {"role": "assistant"})
    for piece in texts:
        send("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": piece}})
    send("contentBlockStop", {"contentBlockIndex": 0})
    expected: list[Call] = []
    for index, (suffix, name, args) in enumerate(calls, start=1):
        call_id = "tooluse_" + suffix
        send(
            "contentBlockStart",
            {
                "contentBlockIndex": index,
                "start": {"toolUse": {"name": name, "toolUseId": call_id, "type": "tool_use"}},
            },
        )
        arguments = json.dumps(args, ensure_ascii=False)
        for piece in ["", *_pieces(rng, arguments)]:
            send(
                "contentBlockDelta",
                {"contentBlockIndex": index, "delta": {"toolUse": {"input": piece}}},
            )
        send("contentBlockStop", {"contentBlockIndex": index})
        expected.append((call_id, name, args))
    send("messageStop", {"stopReason": "tool_use"})
    usage = {"inputTokens": 812, "outputTokens": len(out), "totalTokens": 812 + len(out)}
    send("metadata", {"metrics": {"latencyMs": 4321}, "usage": usage})
    return Group(
        name=f"synthetic, bedrock_converse ({deltas:,} deltas)",
        dialect="bedrock_converse",
        bodies=[b"".join(out)],
        expected=[expected],
        events=len(out),
    )


def synthetic_anthropic(deltas: int, *, seed: int = 0xB5E) -> Group:
    """An InvokeModelWithResponseStream turn of an Anthropic model: each ``chunk`` message's
    payload is ``{"bytes": <base64 of one Messages event>, "p": <padding>}``."""
    rng = random.Random(seed)
    texts, calls = _turn(rng, deltas, 4)
    out: list[bytes] = []

    def send(event: dict[str, Any]) -> None:
        raw = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()
        pad = _PAD[: rng.randint(1, len(_PAD))]
        out.append(encode_message("chunk", {"bytes": base64.b64encode(raw).decode(), "p": pad}))

    message: dict[str, Any] = {
        "id": "msg_bdrk_01" + _ident(rng, 22),
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-20250514",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 812, "output_tokens": 1},
    }
    send({"type": "message_start", "message": message})
    send({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    for piece in texts:
        delta = {"type": "text_delta", "text": piece}
        send({"type": "content_block_delta", "index": 0, "delta": delta})
    send({"type": "content_block_stop", "index": 0})
    expected: list[Call] = []
    for index, (suffix, name, args) in enumerate(calls, start=1):
        call_id = "toolu_bdrk_01" + suffix
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        send({"type": "content_block_start", "index": index, "content_block": block})
        for piece in ["", *_pieces(rng, json.dumps(args, ensure_ascii=False))]:
            delta = {"type": "input_json_delta", "partial_json": piece}
            send({"type": "content_block_delta", "index": index, "delta": delta})
        send({"type": "content_block_stop", "index": index})
        expected.append((call_id, name, args))
    stop = {"stop_reason": "tool_use", "stop_sequence": None}
    send({"type": "message_delta", "delta": stop, "usage": {"output_tokens": len(out)}})
    metrics = {
        "inputTokenCount": 812,
        "outputTokenCount": len(out),
        "invocationLatency": 4321,
        "firstByteLatency": 321,
    }
    send({"type": "message_stop", "amazon-bedrock-invocationMetrics": metrics})
    return Group(
        name=f"synthetic, bedrock_anthropic ({deltas:,} deltas)",
        dialect="bedrock_anthropic",
        bodies=[b"".join(out)],
        expected=[expected],
        events=len(out),
    )


def chunked(data: bytes, size: int | None) -> list[bytes]:
    """``data`` in reads of ``size`` bytes (see :data:`READS`)."""
    if size is None:
        return [data]
    if size == 0:
        reads, pos = [], 0
        while pos < len(data):
            end = pos + int.from_bytes(data[pos : pos + 4], "big")
            reads.append(data[pos:end])
            pos = end
        return reads
    return [data[i : i + size] for i in range(0, len(data), size)]


# --------------------------------------------------------------------------------------
# Ours


def ours(streams: Streams) -> list[list[Call]]:
    out = []
    for dialect, chunks in streams:
        parser = ToolCallParser(dialect)
        calls = []
        try:
            for chunk in chunks:
                calls += parser.feed(chunk)
            calls += parser.finish()
        except TruncatedStreamError as exc:
            # Cut at the token limit: the calls that did complete are still calls.
            calls += exc.completed
        out.append([(c.call_id, c.name, c.args) for c in calls])
    return out


# --------------------------------------------------------------------------------------
# The floor


_PRELUDE = struct.Struct(">II")
_WORD = struct.Struct(">I")


class ChecksumError(Exception):
    """A CRC of the ``floor+crc`` walk did not match (never raised on the inputs here)."""


def floor_payloads(chunks: Sequence[bytes], *, crc: bool = False) -> list[memoryview]:
    """Each message's payload: a walk by the prelude's two lengths, no header read. The
    unfinished tail is kept as a list of pieces, joined only once the next message (or
    prelude) is whole, so a message longer than a read is still copied once. ``crc``:
    check both CRC32s as well (the ``floor+crc`` row: what the integrity check ours
    must make costs at the least)."""
    out: list[memoryview] = []
    pending: list[bytes] = []
    have = 0
    need = 12
    unpack = _PRELUDE.unpack_from
    crc32, word = zlib.crc32, _WORD.unpack_from
    for chunk in chunks:
        have += len(chunk)
        if have < need:
            pending.append(chunk)
            continue
        if pending:
            pending.append(chunk)
            buf = b"".join(pending)
            pending = []
        else:
            buf = chunk
        view = memoryview(buf)
        pos, end = 0, len(buf)
        while True:
            if end - pos < 12:
                need = 12
                break
            total, headers = unpack(buf, pos)
            if end - pos < total:
                need = total
                break
            if crc and (
                crc32(view[pos : pos + 8]) != word(buf, pos + 8)[0]
                or crc32(view[pos : pos + total - 4]) != word(buf, pos + total - 4)[0]
            ):
                raise ChecksumError(f"message at {pos}")
            out.append(view[pos + 12 + headers : pos + total - 4])
            pos += total
        if pos < end:
            pending = [buf[pos:]]
        have = end - pos
    return out


def _floor_converse(chunks: Sequence[bytes], crc: bool) -> list[Call]:
    # The event type is told by the payload's keys, as LiteLLM's decoder tells it: reading
    # the :event-type header instead (one find, one slice) made the floor 1.5-1.7x slower
    # (2.2 against 1.3 us a message in the synthetic turn, whole, on the loaded machine).
    loads = orjson.loads
    calls: list[Call] = []
    open_calls: dict[int, tuple[str, str, list[str]]] = {}
    for payload in floor_payloads(chunks, crc=crc):
        obj = loads(payload)
        delta = obj.get("delta")
        if delta is not None:
            tool = delta.get("toolUse")
            if tool is not None:
                open_calls[obj["contentBlockIndex"]][2].append(tool["input"])
            continue
        start = obj.get("start")
        if start is not None:
            tool = start.get("toolUse")
            if tool is not None:
                open_calls[obj["contentBlockIndex"]] = (tool["toolUseId"], tool["name"], [])
        elif "contentBlockIndex" in obj:
            entry = open_calls.pop(obj["contentBlockIndex"], None)
            if entry is not None:
                text = "".join(entry[2])
                calls.append((entry[0], entry[1], loads(text) if text else {}))
    return calls


def _floor_anthropic(chunks: Sequence[bytes], crc: bool) -> list[Call]:
    loads = orjson.loads
    a2b = binascii.a2b_base64
    calls: list[Call] = []
    open_calls: dict[int, tuple[str, str, list[str]]] = {}
    for payload in floor_payloads(chunks, crc=crc):
        event = loads(a2b(loads(payload)["bytes"]))
        kind = event["type"]
        if kind == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "input_json_delta":
                open_calls[event["index"]][2].append(delta["partial_json"])
        elif kind == "content_block_start":
            block = event["content_block"]
            if block["type"] == "tool_use":
                open_calls[event["index"]] = (block["id"], block["name"], [])
        elif kind == "content_block_stop":
            entry = open_calls.pop(event["index"], None)
            if entry is not None:
                text = "".join(entry[2])
                calls.append((entry[0], entry[1], loads(text) if text else {}))
    return calls


def floor(streams: Streams) -> list[list[Call]]:
    return [
        _floor_converse(chunks, False)
        if dialect == "bedrock_converse"
        else _floor_anthropic(chunks, False)
        for dialect, chunks in streams
    ]


def floor_crc(streams: Streams) -> list[list[Call]]:
    """The floor with both CRCs checked."""
    return [
        _floor_converse(chunks, True)
        if dialect == "bedrock_converse"
        else _floor_anthropic(chunks, True)
        for dialect, chunks in streams
    ]


# --------------------------------------------------------------------------------------
# The reassembly boto3-based frameworks write (pydantic-ai, langchain-aws)


def converse_calls(events: Iterator[tuple[str, dict[str, Any]]]) -> list[Call]:
    """ConverseStream events (name, member) to calls: ``toolUse.input`` fragments kept per
    ``contentBlockIndex``, joined and ``json.loads``-ed at ``contentBlockStop``."""
    calls: list[Call] = []
    blocks: dict[int, tuple[str, str, list[str]]] = {}
    for name, event in events:
        if name == "contentBlockDelta":
            tool = event["delta"].get("toolUse")
            if tool is not None:
                blocks[event["contentBlockIndex"]][2].append(tool["input"])
        elif name == "contentBlockStart":
            tool = event["start"].get("toolUse")
            if tool is not None:
                blocks[event["contentBlockIndex"]] = (tool["toolUseId"], tool["name"], [])
        elif name == "contentBlockStop":
            block = blocks.pop(event["contentBlockIndex"], None)
            if block is not None:
                text = "".join(block[2])
                calls.append((block[0], block[1], json.loads(text) if text else {}))
    return calls


def anthropic_calls(events: Iterator[dict[str, Any]]) -> list[Call]:
    """Anthropic Messages events (parsed) to calls, the same way."""
    calls: list[Call] = []
    blocks: dict[int, tuple[str, str, list[str]]] = {}
    for event in events:
        kind = event["type"]
        if kind == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "input_json_delta":
                blocks[event["index"]][2].append(delta["partial_json"])
        elif kind == "content_block_start":
            block = event["content_block"]
            if block["type"] == "tool_use":
                blocks[event["index"]] = (block["id"], block["name"], [])
        elif kind == "content_block_stop":
            entry = blocks.pop(event["index"], None)
            if entry is not None:
                text = "".join(entry[2])
                calls.append((entry[0], entry[1], json.loads(text) if text else {}))
    return calls


class _Body:
    """What ``EventStream`` reads: an object whose ``stream()`` yields the body's reads
    (urllib3's response in boto3)."""

    __slots__ = ("_chunks",)

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self._chunks = chunks

    def stream(self) -> Iterator[bytes]:
        return iter(self._chunks)


def boto3_peer() -> Contender:
    """botocore's modeled event-stream parser, as boto3 hands it to a framework."""
    require("botocore", "botocore")
    from botocore.eventstream import EventStream  # type: ignore[import-untyped]
    from botocore.loaders import Loader  # type: ignore[import-untyped]
    from botocore.model import ServiceModel  # type: ignore[import-untyped]
    from botocore.parsers import EventStreamJSONParser  # type: ignore[import-untyped]

    # Loaded once, as a client does when it is created: not part of reading a response.
    model = ServiceModel(Loader().load_service_model("bedrock-runtime", "service-2"))
    converse = model.operation_model("ConverseStream").output_shape.members["stream"]
    invoke = model.operation_model("InvokeModelWithResponseStream").output_shape.members["body"]

    def run(streams: Streams) -> list[list[Call]]:
        out = []
        for dialect, chunks in streams:
            # A parser and an EventStream per response, as botocore's endpoint makes them.
            if dialect == "bedrock_converse":
                stream = EventStream(
                    _Body(chunks), converse, EventStreamJSONParser(), "ConverseStream"
                )
                # Each event a one-key dict, {"contentBlockDelta": {...}}, matched by its key.
                out.append(converse_calls(next(iter(e.items())) for e in stream))
            else:
                stream = EventStream(
                    _Body(chunks), invoke, EventStreamJSONParser(), "InvokeModelWithResponseStream"
                )
                out.append(anthropic_calls(json.loads(e["chunk"]["bytes"]) for e in stream))
        return out

    return Contender(
        name="boto3",
        role="peer",
        dialects=("bedrock_converse", "bedrock_anthropic"),
        run=run,
    )


def botocore_buffer_peer() -> Contender:
    """``EventStreamBuffer`` and one ``json.loads`` per payload, then the same loop."""
    require("botocore", "botocore")
    from botocore.eventstream import EventStreamBuffer

    def messages(chunks: Sequence[bytes]) -> Iterator[Any]:
        buffer = EventStreamBuffer()
        for chunk in chunks:
            buffer.add_data(chunk)
            yield from buffer

    def run(streams: Streams) -> list[list[Call]]:
        out = []
        for dialect, chunks in streams:
            if dialect == "bedrock_converse":
                events = (
                    (m.headers[":event-type"], json.loads(m.payload)) for m in messages(chunks)
                )
                out.append(converse_calls(events))
            else:
                out.append(
                    anthropic_calls(
                        json.loads(base64.b64decode(json.loads(m.payload)["bytes"]))
                        for m in messages(chunks)
                    )
                )
        return out

    return Contender(
        name="botocore-buffer",
        role="peer",
        dialects=("bedrock_converse", "bedrock_anthropic"),
        run=run,
    )


def anthropic_sdk_peer() -> Contender:
    """The anthropic SDK's Bedrock decoder and its message accumulation."""
    require("anthropic", "anthropic")
    require("botocore", "botocore")
    from anthropic._models import construct_type
    from anthropic.lib.bedrock._stream_decoder import AWSEventStreamDecoder
    from anthropic.lib.streaming._messages import accumulate_event, build_events
    from anthropic.types import RawMessageStreamEvent

    def run(streams: Streams) -> list[list[Call]]:
        out = []
        for _, chunks in streams:
            snapshot: Any = None
            json_bufs: dict[int, bytes] = {}
            for sse in AWSEventStreamDecoder().iter_bytes(iter(chunks)):
                event: Any = construct_type(type_=RawMessageStreamEvent, value=json.loads(sse.data))
                snapshot = accumulate_event(
                    event=event, current_snapshot=snapshot, json_bufs=json_bufs
                )
                for _ in build_events(event=event, message_snapshot=snapshot):
                    pass
            blocks = [b for b in snapshot.content if b.type == "tool_use"]
            out.append([(b.id, b.name, b.input) for b in blocks])
        return out

    return Contender(name="anthropic-sdk", role="peer", dialects=("bedrock_anthropic",), run=run)


def litellm_peer() -> Contender:
    """LiteLLM's Bedrock decoders on the raw bytes, then ``stream_chunk_builder``."""
    # Without this LiteLLM fetches its model price map at import time; the benchmark must
    # send nothing off the host.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    litellm: Any = require("litellm", "litellm")
    handler = require("litellm.llms.bedrock.chat.invoke_handler", "litellm")
    # stream_chunk_builder prints a banner of providers to stdout for a model it cannot
    # price; it is not an error, and it would be timed as printing.
    litellm.suppress_debug_info = True
    response_stream = litellm.ModelResponseStream

    def run(streams: Streams) -> list[list[Call]]:
        out = []
        for dialect, chunks in streams:
            if dialect == "bedrock_converse":
                decoder = handler.AWSEventStreamDecoder(model="amazon.nova-lite-v1:0")
            else:
                decoder = handler.AmazonAnthropicClaudeStreamDecoder(
                    model="anthropic.claude-sonnet-4-20250514-v1:0", sync_stream=True
                )
            collected = [
                c for c in decoder.iter_bytes(iter(chunks)) if isinstance(c, response_stream)
            ]
            message = litellm.stream_chunk_builder(collected).choices[0].message
            out.append(
                [
                    (t.id, t.function.name, json.loads(t.function.arguments))
                    for t in message.tool_calls or []
                ]
            )
        return out

    return Contender(
        name="litellm",
        role="peer",
        dialects=("bedrock_converse", "bedrock_anthropic"),
        run=run,
    )


PEERS: tuple[Callable[[], Contender], ...] = (
    boto3_peer,
    botocore_buffer_peer,
    anthropic_sdk_peer,
    litellm_peer,
)


def peer_name(make: Callable[[], Contender]) -> str:
    """The name a peer's table column (and ``--peers``) gives it."""
    return make.__name__.removesuffix("_peer").replace("_", "-")


def contenders(only: frozenset[str] | None = None) -> tuple[list[Contender], list[str]]:
    """Ours, the floor and every peer that loads (of ``only``, when given: names as
    :func:`peer_name` gives them); and one line per peer that did not."""
    both: tuple[Dialect, ...] = ("bedrock_converse", "bedrock_anthropic")
    found = [
        Contender(name="ours", role="ours", dialects=both, run=ours),
        Contender(name="floor", role="floor", dialects=both, run=floor),
        Contender(name="floor+crc", role="floor+crc", dialects=both, run=floor_crc),
    ]
    missing = []
    for make in PEERS:
        if only is not None and peer_name(make) not in only:
            continue
        try:
            found.append(make())
        except (MissingPeer, ImportError) as exc:
            missing.append(f"{make.__name__}: {exc}")
    return found, missing


# --------------------------------------------------------------------------------------
# Checking and timing


def check(contender: Contender, streams: Streams, expected: list[list[Call]]) -> str | None:
    """Run once; the way the output differs from ``expected``, or ``None``."""
    try:
        got = contender.run(streams)
    except Exception as exc:  # a peer failing is a result to report
        return f"raised {type(exc).__name__}: {str(exc)[:200]}"
    if got == expected:
        return None
    for body, (mine, theirs) in enumerate(zip(got, expected, strict=False)):
        if mine != theirs:
            return f"body {body}: {str(mine)[:160]} != {str(theirs)[:160]}"
    return f"{len(got)} bodies, expected {len(expected)}"


def measure(
    timed: Sequence[Contender], streams: Streams, *, repeats: int, min_time: float
) -> dict[str, float]:
    """Median CPU seconds of one pass per contender: calibrated passes per sample,
    ``repeats`` samples taken round-robin, the order rotated each round."""
    loops = {}
    for contender in timed:
        gc.collect()
        start = time.process_time()
        contender.run(streams)
        once = max(time.process_time() - start, 1e-6)
        loops[contender.name] = max(1, math.ceil(min_time / once)) if min_time > 0 else 1
    samples: dict[str, list[float]] = {c.name: [] for c in timed}
    for round_ in range(repeats):
        shift = round_ % len(timed)
        for contender in [*timed[shift:], *timed[:shift]]:
            n = loops[contender.name]
            run = contender.run
            gc.collect()
            start = time.process_time()
            for _ in range(n):
                run(streams)
            samples[contender.name].append((time.process_time() - start) / n)
    return {name: statistics.median(times) for name, times in samples.items()}


def layers(group: Group, read: int | None, *, repeats: int, min_time: float) -> dict[str, float]:
    """Where ours spends its time: each part's share of a pass of ``ours``, timed as the
    contenders are. ``messages``: ``EventStreamFramer`` alone (bytes to checked messages);
    ``events``: the framing the parser runs (``EventStreamEventFramer``: the messages made
    events, each payload decoded to ``str``) less ``messages``; ``calls``: the rest, the
    dialect's reassembler and the parser around it."""
    from sse_toolcalls.framing.eventstream import EventStreamEventFramer, EventStreamFramer

    def framing(make: Callable[[], EventStreamFramer | EventStreamEventFramer]) -> Run:
        def run(streams: Streams) -> list[list[Call]]:
            for _, chunks in streams:
                framer = make()
                for chunk in chunks:
                    framer.feed(chunk)
                framer.finish()
            return []

        return run

    both: tuple[Dialect, ...] = ("bedrock_converse", "bedrock_anthropic")
    parts = [
        Contender(name="ours", role="ours", dialects=both, run=ours),
        Contender(name="messages", role="part", dialects=both, run=framing(EventStreamFramer)),
        Contender(name="events", role="part", dialects=both, run=framing(EventStreamEventFramer)),
    ]
    streams = [(group.dialect, chunked(body, read)) for body in group.bodies]
    seconds = measure(parts, streams, repeats=repeats, min_time=min_time)
    total = seconds["ours"]
    return {
        "messages": seconds["messages"] / total,
        "events": (seconds["events"] - seconds["messages"]) / total,
        "calls": (total - seconds["events"]) / total,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=7, help="samples per contender")
    parser.add_argument("--min-time", type=float, default=0.2, help="CPU seconds a sample")
    parser.add_argument("--deltas", type=int, default=2000, help="fragments of the synthetic turns")
    parser.add_argument("--fast", action="store_true", help="200 deltas, one pass (CI smoke)")
    parser.add_argument(
        "--peers",
        help="comma-separated: " + ",".join(peer_name(make) for make in PEERS) + " (default: all)",
    )
    parser.add_argument(
        "--layers",
        action="store_true",
        help="ours' time by part (synthetic turns, 1,024 B reads) instead of the contenders",
    )
    args = parser.parse_args(argv)
    if args.layers:
        for group in (synthetic_converse(args.deltas), synthetic_anthropic(args.deltas)):
            shares = layers(
                group,
                1024,
                repeats=1 if args.fast else args.repeats,
                min_time=0.0 if args.fast else args.min_time,
            )
            row = ", ".join(f"{name} {share:.0%}" for name, share in shares.items())
            print(f"{group.name}, 1,024 B reads: {row}")
        return 0
    repeats, min_time, deltas = (
        (1, 0.0, 200) if args.fast else (args.repeats, args.min_time, args.deltas)
    )
    only = None if args.peers is None else frozenset(args.peers.split(","))
    unknown = sorted((only or frozenset()) - {peer_name(make) for make in PEERS})
    if unknown:
        parser.error(f"unknown peers: {', '.join(unknown)}")
    found, missing = contenders(only)
    # The peers' import-time objects (litellm's are many) out of every collection.
    gc.collect()
    gc.freeze()
    groups = [*recordings(), synthetic_converse(deltas), synthetic_anthropic(deltas)]
    print(f"Bedrock, bytes to complete calls: median CPU s of one pass, {repeats} samples")
    print(
        "floor: length walk + orjson + one join per call; it skips both CRCs, the headers, "
        "limits, exception messages, stop reasons and event order"
    )
    if missing:
        print(f"PEERS MISSING ({len(missing)}): not run")
        for line in missing:
            print(f"  {line}")
    wrong: list[str] = []
    for group in groups:
        eligible = [c for c in found if group.dialect in c.dialects]
        peers = [c for c in eligible if c.role == "peer"]
        size = sum(map(len, group.bodies))
        print()
        print(f"{group.name}: {size:,} bytes, {group.events:,} messages")
        widths = [max(10, len(c.name) + 2) for c in eligible]
        head = "".join(f"{c.name:>{w}}" for c, w in zip(eligible, widths, strict=True))
        ratios = f"{'ours/floor':>12}{'ours/floor+crc':>16}{'ours us/msg':>13}" + "".join(
            f"{c.name + '/ours':>{len(c.name) + 7}}" for c in peers
        )
        print(f"{'reads':>8}{head}{ratios}")
        for read in READS:
            streams = [(group.dialect, chunked(body, read)) for body in group.bodies]
            label = "whole" if read is None else "1 msg" if read == 0 else f"{read} B"
            # Correct before fast: every contender's calls equal the expected ones.
            timed = []
            for contender in eligible:
                problem = check(contender, streams, group.expected)
                if problem is None:
                    timed.append(contender)
                else:
                    wrong.append(f"{contender.name}, {group.name}, {label}: {problem}")
            seconds = measure(timed, streams, repeats=repeats, min_time=min_time)
            cells = "".join(
                f"{seconds[c.name]:>{w}.6f}" if c.name in seconds else f"{'WRONG':>{w}}"
                for c, w in zip(eligible, widths, strict=True)
            )
            mine = seconds.get("ours")
            base = seconds.get("floor")
            cells += f"{mine / base:>12.2f}" if mine and base else f"{'-':>12}"
            checked = seconds.get("floor+crc")
            cells += f"{mine / checked:>16.2f}" if mine and checked else f"{'-':>16}"
            # The cost of one message, where a synthetic turn's deltas make it the cost.
            cells += f"{mine / group.events * 1e6:>13.2f}" if mine else f"{'-':>13}"
            for peer in peers:
                theirs = seconds.get(peer.name)
                w = len(peer.name) + 7
                cells += f"{theirs / mine:>{w}.2f}" if mine and theirs else f"{'-':>{w}}"
            print(f"{label:>8}{cells}")
    if wrong:
        print()
        print(f"WRONG OUTPUT ({len(wrong)}): not timed")
        for line in wrong:
            print(f"  {line}")
        return 1
    print()
    print("outputs checked: every contender gave the expected calls at every read size")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
