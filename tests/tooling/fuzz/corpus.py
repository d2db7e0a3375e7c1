"""Seeds for the fuzz targets, read in place from the two stream corpora.

``recorded_streams/`` (this repository) and ``../shared/external_streams/`` (beside the
clone) each list their streams in a ``MANIFEST.json`` whose ``provider`` names the
dialect (``openai_compat_*`` servers speak ``openai_chat``, ``bedrock_invoke_anthropic``
is ``bedrock_anthropic``, as the shared ``check_streams.py`` reads them); a folder of the
external corpus may have its own (``bedrock/MANIFEST.json``, files named from the corpus
root). Nothing is copied into the repository: the seeds are written into a directory at
run time.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Final

from sse_toolcalls.tooling.corpus import atheris_engine
from sse_toolcalls.tooling.corpus.invariants import TARGETS, encode

from ...outside import EXTERNAL_STREAMS

__all__ = ["CORPORA", "TOKENS", "seed_inputs", "seed_streams", "write_dictionary", "write_seeds"]

ROOT: Final = Path(__file__).resolve().parents[3]

CORPORA: Final = (
    ROOT / "recorded_streams",
    Path(os.environ.get("SSE_TOOLCALLS_EXTERNAL_STREAMS", EXTERNAL_STREAMS)),
)
"""The corpora, each a folder with a ``MANIFEST.json``; the external one is found where
``tests/outside.py`` says (``SSE_TOOLCALLS_SHARED``), or moved alone with
``SSE_TOOLCALLS_EXTERNAL_STREAMS``."""

TOKENS: Final = (
    # The framer's grammar.
    b"data: ", b"data:", b"event: ", b"id: ", b"retry: ", b": ping", b"\n\n", b"\r\n", b"\r",
    b"\xef\xbb\xbf", b"[DONE]",
    # JSON that reaches the limits: depth, numbers past 64 bits and past a double, escapes.
    b"[[[[[[[[", b"{\"a\":{\"a\":", b"1e400", b"-0", b"12345678901234567890", b"\\ud800",
    b"\\u0000", b"NaN", b"Infinity", b"null", b"true", b"\"\"",
    # Chat Completions.
    b"\"choices\"", b"\"delta\"", b"\"tool_calls\"", b"\"function\"", b"\"arguments\"",
    b"\"finish_reason\"", b"\"index\"", b"\"id\"", b"\"name\"", b"\"function_call\"",
    b"\"length\"", b"\"content\"",
    # Responses.
    b"response.output_item.added", b"response.output_item.done",
    b"response.function_call_arguments.delta", b"response.function_call_arguments.done",
    b"response.completed", b"response.incomplete", b"response.failed", b"\"call_id\"",
    b"\"item_id\"", b"\"output_index\"", b"\"status\"",
    b"\"incomplete\"",
    # Anthropic.
    b"message_start", b"content_block_start", b"content_block_delta", b"content_block_stop",
    b"message_delta", b"message_stop", b"input_json_delta", b"\"partial_json\"",
    b"\"tool_use\"", b"\"input\"", b"\"stop_reason\"", b"\"max_tokens\"", b"\"text\"",
    b"text_delta", b"overloaded_error",
    # Gemini.
    b"\"candidates\"", b"\"parts\"", b"\"functionCall\"", b"\"args\"", b"\"partialArgs\"",
    b"\"jsonPath\"", b"\"willContinue\"", b"\"finishReason\"", b"\"MAX_TOKENS\"",
    b"\"STOP\"", b"\"thoughtSignature\"", b"\"promptFeedback\"", b"\"stringValue\"",
    b"\"numberValue\"", b"$.a[99999]", b"$.a.b.c",
    # Amazon Bedrock: AWS's event-stream headers, ConverseStream's events, InvokeModel's chunk.
    b":event-type", b":message-type", b":exception-type", b":content-type", b"exception",
    b"application/json", b"messageStart", b"contentBlockStart", b"contentBlockDelta",
    b"contentBlockStop", b"messageStop", b"metadata", b"\"contentBlockIndex\"",
    b"\"toolUse\"", b"\"toolUseId\"", b"\"stopReason\"", b"\"reasoningContent\"",
    b"\"redactedContent\"", b"\"signature\"", b"server_tool_use", b"throttlingException",
    b"modelStreamErrorException", b"\"bytes\"", b"chunk",
    # Errors.
    b"\"error\"", b"\"type\":\"error\"", b"\"code\"", b"\"message\"",
    # The walk target's markers for what no JSON carries (sse_toolcalls/tooling/corpus/walk_target.py).
    b"{\"$set\":[", b"{\"$bytes\":\"", b"{\"$tuple\":[", b"{\"$text\":\"", b"{\"$table\":{",
    b"{\"$row\":[", b"{\"$real\":", b"{\"$level\":0}", b"{\"$key\":[", b"\"\\udfff\"",
)  # fmt: skip
"""A libFuzzer dictionary: the words the parsers branch on, so that mutations can splice
them in whole instead of guessing them byte by byte."""


def _dialect_of(provider: str) -> str:
    if provider.startswith("openai_compat_"):
        return "openai_chat"
    return {"bedrock_invoke_anthropic": "bedrock_anthropic"}.get(provider, provider)


def _manifests(folder: Path) -> list[Path]:
    """The corpus's manifest, then its folders' own (the external Bedrock corpus)."""
    return [folder / "MANIFEST.json", *sorted(folder.glob("*/MANIFEST.json"))]


def _takes(target: str, provider: str, stream: bytes) -> bool:
    """Whether a stream seeds a target: a dialect's own streams; every stream for
    detection, the SSE framer and the walk; every event stream for its framer."""
    if target == "eventstream":
        return stream[:1] == b"\x00"
    return target in ("detect", "framer", "walk") or _dialect_of(provider) == target


def seed_streams(target: str) -> Iterator[tuple[str, bytes]]:
    """``(name, bytes)`` of every corpus stream that seeds ``target``.

    A dialect's target takes that dialect's streams; detection and the SSE framer take
    all, the event-stream framer every event stream.

    Raises:
        FileNotFoundError: a corpus is missing (a fuzz run must not quietly lose seeds).
    """
    if target not in TARGETS:
        raise ValueError(f"unknown fuzz target {target!r}; expected one of {TARGETS}")
    for folder in CORPORA:
        if not (folder / "MANIFEST.json").is_file():
            raise FileNotFoundError(f"seed corpus {folder / 'MANIFEST.json'} is missing")
        for manifest in _manifests(folder):
            for entry in json.loads(manifest.read_text(encoding="utf-8")):
                stream = (folder / entry["file"]).read_bytes()
                if _takes(target, entry["provider"], stream):
                    yield f"{folder.name}/{entry['file']}", stream


def seed_inputs(target: str) -> Iterator[tuple[str, bytes]]:
    """The fuzz inputs made from the seeds: each stream cut in thirds, and its CRLF
    variant (an SSE stream with bare LFs) cut where its digest says."""
    for name, stream in seed_streams(target):
        n = len(stream)
        yield name, encode(stream, [n // 3, n // 2, 2 * n // 3])
        # Line endings are SSE's: an event stream's 0x0A bytes are lengths and CRCs.
        if b"\n" in stream and b"\r\n" not in stream and stream[:1] != b"\x00":
            crlf = stream.replace(b"\n", b"\r\n")
            digest = hashlib.sha256(crlf).digest()
            cuts = [int.from_bytes(digest[i : i + 2], "little") for i in (0, 2, 4)]
            yield name + " (CRLF)", encode(crlf, cuts)


def write_seeds(target: str, directory: Path) -> int:
    """Write ``target``'s seed inputs into ``directory``; return how many."""
    directory.mkdir(parents=True, exist_ok=True)
    count = 0
    for _, data in seed_inputs(target):
        (directory / f"seed-{hashlib.sha1(data).hexdigest()}").write_bytes(data)
        count += 1
    return count


def write_dictionary(path: Path) -> None:
    """Write :data:`TOKENS` as a libFuzzer dictionary file."""
    atheris_engine.write_dictionary(path, TOKENS)
