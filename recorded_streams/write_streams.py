"""Write the hand-made stream corpus: one body (``.sse``, or ``.eventstream`` for Amazon
Bedrock) and one ``.expected.json`` per stream.

Every event payload below was written by hand from the provider's documented wire format
(``DOCS``) and, for the regressions, from the trigger described in the bug report named in
``issue``. This script only frames the payloads (``event:``/``data:`` lines, line endings,
blank lines; for Bedrock, AWS event-stream messages by its own small encoder) and writes
the files, so that the bytes can be regenerated and reviewed in one place. The expected
results are written by hand too; nothing here runs the parser, and nothing here imports
the library (its encoder is not the library's framer, so each checks the other).

Usage, from the repository root::

    python recorded_streams/write_streams.py          # (re)write every stream
    python recorded_streams/make_manifest.py          # then rebuild MANIFEST.json
"""

from __future__ import annotations

import base64
import json
import random
import string
import struct
import sys
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

DOCS = {
    "openai_chat": "the OpenAI Chat Completions streaming reference "
    "(https://platform.openai.com/docs/api-reference/chat-streaming)",
    "openai_compat": "the OpenAI Chat Completions streaming reference "
    "(https://platform.openai.com/docs/api-reference/chat-streaming) plus the vendor quirk "
    "shown in the issue in source_url_or_issue",
    "openai_responses": "the OpenAI Responses streaming events reference "
    "(https://platform.openai.com/docs/api-reference/responses-streaming)",
    "anthropic": "the Anthropic Messages streaming guide "
    "(https://docs.anthropic.com/en/docs/build-with-claude/streaming)",
    "gemini": "the Gemini API streamGenerateContent reference "
    "(https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent) "
    "and function calling guide (https://ai.google.dev/gemini-api/docs/function-calling)",
    "vertex": "the Vertex AI FunctionCall / PartialArg reference "
    "(https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/Content)",
    "bedrock_converse": "the Amazon Bedrock ConverseStream reference "
    "(https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html, "
    "ConverseStreamOutput and its event and exception members) and AWS's event stream "
    "encoding (https://docs.aws.amazon.com/transcribe/latest/dg/event-stream.html)",
    "bedrock_anthropic": "the Amazon Bedrock InvokeModelWithResponseStream reference "
    "(https://docs.aws.amazon.com/bedrock/latest/APIReference/"
    "API_runtime_InvokeModelWithResponseStream.html, PayloadPart.bytes), the Anthropic "
    "Messages streaming guide (https://docs.anthropic.com/en/docs/build-with-claude/streaming) "
    "for the events inside, and AWS's event stream encoding "
    "(https://docs.aws.amazon.com/transcribe/latest/dg/event-stream.html)",
}

CHAT_MODEL = "gpt-4.1-mini-2025-04-14"
RESP_MODEL = "gpt-4.1-2025-04-14"
ANT_MODEL = "claude-sonnet-4-5-20250929"
GEM_MODEL = "gemini-2.5-flash"
CONVERSE_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
NOVA_MODEL = "us.amazon.nova-pro-v1:0"
BEDROCK_ANT_MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"

DEFAULTS: dict[str, tuple[str, str, str]] = {
    "openai_chat": ("openai", CHAT_MODEL, "openai_chat"),
    "openai_responses": ("openai", RESP_MODEL, "openai_responses"),
    "anthropic": ("anthropic", ANT_MODEL, "anthropic"),
    "gemini": ("google", GEM_MODEL, "gemini"),
    "bedrock_converse": ("aws-bedrock", CONVERSE_MODEL, "bedrock_converse"),
    "bedrock_anthropic": ("aws-bedrock", BEDROCK_ANT_MODEL, "bedrock_anthropic"),
}
"""Each directory's vendor, model and documented format: ``(vendor, model, DOCS key)``.
A stream states only where it differs (an OpenAI-compatible server, another model)."""

Block = list[str]
"""The lines of one SSE event block, without line endings."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Stream:
    """One hand-made response body and what a correct reassembler must make of it."""

    file: str
    """Path under ``recorded_streams/``: ``<dialect>/<name>.sse``."""

    notes: str
    """What the stream shows and why its expectation is what it is."""

    blocks: list[Block]
    """The event blocks, in order."""

    outcome: str
    """``complete``, ``no_calls``, ``truncated`` or ``provider_error``."""

    calls: list[dict[str, Any]]
    """The expected client calls, in order (empty for truncated and error outcomes)."""

    partial_calls: list[dict[str, Any]] | None = None
    """For truncated streams: the call that was cut, with its raw argument text."""

    text: str | None = None
    """The visible assistant text, where it matters."""

    invalid_arguments: tuple[int, ...] = ()
    """Positions (in ``calls``) of the calls that complete with an ``arguments_error``."""

    issue: str | None = None
    """The bug report whose trigger the stream replays."""

    vendor: str | None = None
    """Who would serve such a stream (``None``: the dialect's own, from ``DEFAULTS``)."""

    model: str | None = None
    """The model name written inside the stream (``None``: the dialect's default)."""

    doc: str | None = None
    """Key into ``DOCS``: the documented format the payloads follow (``None``: the
    dialect's)."""

    eol: str = "\n"
    """Line ending used for every line."""

    tail: str = "blank"
    """How the body ends: ``blank`` (blank line after the last block), ``eol`` (the last
    line's line ending only) or ``none`` (right after the last line's text)."""

    prefix: str = ""
    """Text written before the first block (a BOM, a comment)."""

    raw_tail: str = ""
    """Text appended after the last block, verbatim: a cut in the middle of an event."""

    def render(self) -> bytes:
        """Return the body bytes (UTF-8)."""
        out = [self.prefix]
        for n, block in enumerate(self.blocks):
            out.extend(line + self.eol for line in block)
            if n < len(self.blocks) - 1 or self.tail == "blank":
                out.append(self.eol)
        body = "".join(out)
        if self.tail == "none":
            body = body[: -len(self.eol)]
        return (body + self.raw_tail).encode("utf-8")

    def expected(self) -> dict[str, Any]:
        """Return the ``.expected.json`` object."""
        return expected_object(self)


def expected_object(s: Stream | AwsStream) -> dict[str, Any]:
    """The ``.expected.json`` object of a stream of either framing."""
    exp: dict[str, Any] = {"outcome": s.outcome, "calls": s.calls}
    if s.partial_calls is not None:
        exp["partial_calls"] = s.partial_calls
    if s.text is not None:
        exp["text"] = s.text
    exp["invalid_arguments"] = list(s.invalid_arguments)
    error = getattr(s, "error", None)
    if error is not None:
        exp["error"] = error
    exp["notes"] = s.notes
    vendor, model, doc = DEFAULTS[s.file.split("/", 1)[0]]
    exp["meta"] = {
        "vendor": s.vendor or vendor,
        "model": s.model or model,
        "made_by": "hand-written from " + DOCS[s.doc or doc],
        "source_url_or_issue": s.issue,
    }
    return exp


# --------------------------------------------------------------------------------------
# Framing helpers.


def js(obj: Any, *, google: bool = False) -> str:
    """Serialise one payload: compact like OpenAI and Anthropic, or with ``": "`` like Google."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ": ") if google else (",", ":"))


def d(obj: Any) -> Block:
    """A ``data:``-only block (Chat Completions)."""
    return ["data: " + js(obj)]


def ev(obj: dict[str, Any]) -> Block:
    """A named block whose event name is the payload's ``type`` (Anthropic, Responses)."""
    return ["event: " + obj["type"], "data: " + js(obj)]


def g(obj: Any) -> Block:
    """A Gemini block (Google's JSON spacing)."""
    return ["data: " + js(obj, google=True)]


DONE: Block = ["data: [DONE]"]


def call(name: str, args: dict[str, Any], call_id: str | None) -> dict[str, Any]:
    """One expected call."""
    return {"name": name, "args": args, "call_id": call_id}


def partial(name: str, call_id: str | None, prefix: str) -> dict[str, Any]:
    """One expected cut call."""
    return {"name": name, "call_id": call_id, "args_prefix": prefix}


# --------------------------------------------------------------------------------------
# Chat Completions.

_MISSING: Any = object()


def tc(
    index: Any = _MISSING,
    id: Any = _MISSING,
    name: Any = _MISSING,
    arguments: Any = _MISSING,
    type: Any = _MISSING,
) -> dict[str, Any]:
    """One ``delta.tool_calls[]`` entry with only the fields given."""
    entry: dict[str, Any] = {}
    if index is not _MISSING:
        entry["index"] = index
    if id is not _MISSING:
        entry["id"] = id
    if type is not _MISSING:
        entry["type"] = type
    fn: dict[str, Any] = {}
    if name is not _MISSING:
        fn["name"] = name
    if arguments is not _MISSING:
        fn["arguments"] = arguments
    if fn:
        entry["function"] = fn
    return entry


class Chat:
    """Builds the chunks of one Chat Completions stream."""

    def __init__(self, cid: str, model: str = CHAT_MODEL) -> None:
        self.cid = cid
        self.model = model

    def obj(self, choices: Any, **extra: Any) -> dict[str, Any]:
        """The chunk object around ``choices``."""
        out = {
            "id": self.cid,
            "object": "chat.completion.chunk",
            "created": 1767225600,
            "model": self.model,
            "system_fingerprint": "fp_rs0001",
            "choices": choices,
        }
        out.update(extra)
        return out

    def chunk(self, delta: dict[str, Any], finish: str | None = None, index: int = 0) -> Block:
        """A block holding one choice."""
        choice = {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}
        return d(self.obj([choice]))

    def role(self, content: str | None = "") -> Block:
        """The usual first chunk."""
        return self.chunk({"role": "assistant", "content": content, "refusal": None})

    def text(self, text: str) -> Block:
        """A text delta."""
        return self.chunk({"content": text})

    def tools(self, *entries: dict[str, Any], finish: str | None = None) -> Block:
        """A delta carrying tool-call entries."""
        return self.chunk({"tool_calls": list(entries)}, finish)

    def finish(self, reason: str = "tool_calls") -> Block:
        """The empty delta with a finish reason."""
        return self.chunk({}, reason)

    def usage(self) -> Block:
        """The usage-only chunk sent with ``stream_options.include_usage``."""
        usage = {"prompt_tokens": 91, "completion_tokens": 24, "total_tokens": 115}
        return d(self.obj([], usage=usage))


def chat_streams() -> list[Stream]:
    """The Chat Completions and OpenAI-compatible streams."""
    out: list[Stream] = []
    add = out.append
    h = {"person": "Ada Lovelace", "metric": "height"}
    w = {"person": "Ada Lovelace", "metric": "weight"}

    c = Chat("chatcmpl-RS0001")
    add(
        Stream(
            file="openai_chat/no_calls_text.sse",
            notes="Plain text answer in three deltas, finish_reason stop, usage chunk with "
            "choices [], [DONE]. No tool call.",
            blocks=[
                c.role(),
                c.text("Ada Lovelace"),
                c.text(" was born in"),
                c.text(" London in 1815."),
                c.finish("stop"),
                c.usage(),
                DONE,
            ],
            outcome="no_calls",
            calls=[],
            text="Ada Lovelace was born in London in 1815.",
        )
    )

    c = Chat("chatcmpl-RS0002")
    args = '{"person": "Ada Lovelace", "metric": "height"}'
    add(
        Stream(
            file="openai_chat/one_call.sse",
            notes="One call: the first tool delta has index, id, type, name and arguments ''; "
            "arguments follow in five fragments with index only; finish_reason tool_calls; "
            "usage chunk; [DONE].",
            blocks=[
                c.role(None),
                c.tools(
                    tc(0, "call_RS02height", "get_measurement", "", type="function"),
                ),
                c.tools(tc(0, arguments='{"per')),
                c.tools(tc(0, arguments='son": "Ada ')),
                c.tools(tc(0, arguments='Lovelace", "')),
                c.tools(tc(0, arguments='metric": "hei')),
                c.tools(tc(0, arguments='ght"}')),
                c.finish(),
                c.usage(),
                DONE,
            ],
            outcome="complete",
            calls=[call("get_measurement", h, "call_RS02height")],
        )
    )
    assert json.loads(args) == h

    c = Chat("chatcmpl-RS0003")
    add(
        Stream(
            file="openai_chat/two_calls_height_weight.sse",
            notes="The same function twice in one turn (parallel tool calls): height at index 0, "
            "weight at index 1, each opened by a delta with id and name, arguments fragmented. "
            "The two calls must keep their own id and arguments.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS03height", "get_measurement", "", type="function")),
                c.tools(tc(0, arguments='{"person": "Ada Lovelace", ')),
                c.tools(tc(0, arguments='"metric": "height"}')),
                c.tools(tc(1, "call_RS03weight", "get_measurement", "", type="function")),
                c.tools(tc(1, arguments='{"person": "Ada Lovelace", ')),
                c.tools(tc(1, arguments='"metric": "weight"}')),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[
                call("get_measurement", h, "call_RS03height"),
                call("get_measurement", w, "call_RS03weight"),
            ],
        )
    )

    c = Chat("chatcmpl-RS0004")
    add(
        Stream(
            file="openai_chat/truncated_mid_arguments.sse",
            notes="The body stops inside the arguments: the last complete event leaves "
            '\'{"person": "Ada Lovelace", "met\' and a half-written data line follows. No '
            "finish_reason, no [DONE]: truncated, never a call.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS04cut", "get_measurement", "", type="function")),
                c.tools(tc(0, arguments='{"person": "Ada Lovelace", ')),
                c.tools(tc(0, arguments='"met')),
            ],
            raw_tail='data: {"id":"chatcmpl-RS0004","object":"chat.compl',
            outcome="truncated",
            calls=[],
            partial_calls=[
                partial("get_measurement", "call_RS04cut", '{"person": "Ada Lovelace", "met')
            ],
        )
    )

    c = Chat("chatcmpl-RS0005")
    add(
        Stream(
            file="openai_chat/finish_length_mid_arguments.sse",
            notes="max_tokens reached inside the arguments: finish_reason 'length', then usage "
            "and [DONE]. The stream ended normally but the generation was cut: truncated.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS05len", "get_measurement", "", type="function")),
                c.tools(tc(0, arguments='{"person": "Ada')),
                c.finish("length"),
                c.usage(),
                DONE,
            ],
            outcome="truncated",
            calls=[],
            partial_calls=[partial("get_measurement", "call_RS05len", '{"person": "Ada')],
        )
    )

    c = Chat("chatcmpl-RS0006")
    add(
        Stream(
            file="openai_chat/error_object_in_chunk.sse",
            notes="After one text delta the server sends a data chunk whose top-level key is "
            "'error' (server_error) and closes the stream: provider_error, not an empty answer.",
            blocks=[
                c.role(),
                c.text("Let me look"),
                d(
                    {
                        "error": {
                            "message": "The server had an error while processing your request.",
                            "type": "server_error",
                            "param": None,
                            "code": None,
                        }
                    }
                ),
            ],
            outcome="provider_error",
            calls=[],
        )
    )

    c = Chat("chatcmpl-RS0007", "llama-3.3-70b-versatile")
    add(
        Stream(
            file="openai_chat/error_event_named_groq.sse",
            vendor="groq",
            model="llama-3.3-70b-versatile",
            doc="openai_compat",
            issue="https://console.groq.com/docs/errors (event: error mid-stream)",
            notes="OpenAI-compatible server that reports a failure as 'event: error' with an "
            "error object (rate limit) after one tool delta: provider_error.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS07", "get_measurement", '{"person"', type="function")),
                [
                    "event: error",
                    "data: "
                    + js(
                        {
                            "error": {
                                "message": "Rate limit reached for model, please retry in 2s",
                                "type": "tokens",
                                "code": "rate_limit_exceeded",
                            }
                        }
                    ),
                ],
            ],
            outcome="provider_error",
            calls=[],
        )
    )

    c = Chat("chatcmpl-RS0008")
    add(
        Stream(
            file="openai_chat/arguments_whitespace_only.sse",
            notes="A zero-parameter tool whose argument text is only whitespace ('' then ' ' "
            "then '\\n'): at completion that means {}.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS08now", "get_time", "", type="function")),
                c.tools(tc(0, arguments=" ")),
                c.tools(tc(0, arguments="\n")),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[call("get_time", {}, "call_RS08now")],
        )
    )

    c = Chat("chatcmpl-RS0009")
    add(
        Stream(
            file="openai_chat/arguments_json_array_not_object.sse",
            notes="The completed arguments are valid JSON but an array, not an object. The call "
            "is complete and comes out with args {} and an arguments_error (it must not run); "
            "the second call is unaffected.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS09bad", "get_measurement", "", type="function")),
                c.tools(tc(0, arguments='["Ada Lovelace", ')),
                c.tools(tc(0, arguments='"height"]')),
                c.tools(tc(1, "call_RS09good", "get_measurement", "", type="function")),
                c.tools(tc(1, arguments=json.dumps(w))),
                c.finish(),
                DONE,
            ],
            invalid_arguments=(0,),
            outcome="complete",
            calls=[
                call("get_measurement", {}, "call_RS09bad"),
                call("get_measurement", w, "call_RS09good"),
            ],
        )
    )

    c = Chat("chatcmpl-RS0010")
    add(
        Stream(
            file="openai_chat/stray_token_after_arguments_deepseek.sse",
            vendor="deepseek",
            model="deepseek-v4-flash",
            doc="openai_compat",
            issue="nearai/ironclaw#5951",
            notes="The argument text is a complete object followed by a stray token "
            '(\'{"city": "Lyon"}</s>\'). Parsed strictly it is not JSON: the call completes '
            "with args {} and an arguments_error, never a guessed object.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS10", "get_weather", "", type="function")),
                c.tools(tc(0, arguments='{"city": "Lyon"}')),
                c.tools(tc(0, arguments="</s>")),
                c.finish(),
                DONE,
            ],
            invalid_arguments=(0,),
            outcome="complete",
            calls=[call("get_weather", {}, "call_RS10")],
        )
    )

    c = Chat("chatcmpl-RS0011", "gemini-3-flash-preview")
    add(
        Stream(
            file="openai_chat/missing_index_gemini_compat.sse",
            vendor="google",
            model="gemini-3-flash-preview",
            doc="openai_compat",
            issue="openai/openai-python#2806",
            notes="Gemini's OpenAI-compatible endpoint: tool_calls entries carry no 'index' at "
            "all, on the opening delta and on the continuation. The continuation has no id "
            "and no name and belongs to the open call.",
            blocks=[
                c.role(None),
                c.tools(
                    tc(id="call_RS11", type="function", name="get_weather", arguments='{"city":')
                ),
                c.tools(tc(arguments=' "Lyon", "unit": "celsius"}')),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[call("get_weather", {"city": "Lyon", "unit": "celsius"}, "call_RS11")],
        )
    )

    c = Chat("chatcmpl-RS0012", "moonshotai/Kimi-K2.6")
    add(
        Stream(
            file="openai_chat/duplicate_index_first_chunk_vllm.sse",
            vendor="vllm",
            model="moonshotai/Kimi-K2.6",
            doc="openai_compat",
            issue="openai/openai-python#3201",
            notes="vLLM with speculative decoding: the FIRST tool chunk holds two entries with "
            "the same index 0: the header (id, name) and the first argument fragment ' {\"'. "
            "Both belong to one call; the rest of the arguments follow at index 0.",
            blocks=[
                c.role(None),
                c.tools(
                    tc(0, "functions.list_files:0", "list_files", type="function"),
                    tc(0, arguments=' {"'),
                ),
                c.tools(tc(0, arguments='path": "."}')),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[call("list_files", {"path": "."}, "functions.list_files:0")],
        )
    )

    c = Chat("chatcmpl-RS0013", "claude-sonnet-4")
    add(
        Stream(
            file="openai_chat/first_index_one_after_reasoning.sse",
            vendor="bedrock-access-gateway",
            model="claude-sonnet-4",
            doc="openai_compat",
            issue="aws-samples/bedrock-access-gateway#134",
            notes="A gateway that numbers tool calls by content block: after a reasoning block "
            "the only tool call arrives at index 1 (no index 0 ever). One call.",
            blocks=[
                c.role(),
                c.chunk({"reasoning_content": "The user wants Ada's height."}),
                c.tools(tc(1, "toolu_RS13", "get_measurement", "", type="function")),
                c.tools(tc(1, arguments='{"person": "Ada Lovelace",')),
                c.tools(tc(1, arguments=' "metric": "height"}')),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[call("get_measurement", h, "toolu_RS13")],
        )
    )

    c = Chat("chatcmpl-RS0014")
    add(
        Stream(
            file="openai_chat/noncontiguous_index_zero_then_two.sse",
            vendor="openai-compatible",
            model="qwen3-coder",
            doc="openai_compat",
            issue="openai/openai-node#1963",
            notes="Indices 0 then 2 (no 1). Two calls in stream order; the second must not land "
            "in a wrong slot or merge with the first.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS14a", "get_measurement", json.dumps(h), type="function")),
                c.tools(tc(2, "call_RS14b", "get_measurement", '{"person": "Ada Lovelace", ')),
                c.tools(tc(2, arguments='"metric": "weight"}')),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[
                call("get_measurement", h, "call_RS14a"),
                call("get_measurement", w, "call_RS14b"),
            ],
        )
    )

    c = Chat("chatcmpl-RS0015")
    note_text = "Première ligne\u2028deuxième\u2029troisième\u0085fin 🚀 東京"
    add(
        Stream(
            file="openai_chat/u2028_and_non_ascii_in_arguments.sse",
            issue="openai/openai-python#1230",
            notes="Argument and text strings hold raw (unescaped) U+2028, U+2029 and U+0085, "
            "legal inside JSON strings, plus accents, an emoji and CJK. A decoder that splits "
            "lines on Unicode separators breaks the data line; SSE splits only on CR/LF.",
            blocks=[
                c.role(),
                c.text("Je note\u2028ça 📝"),
                c.tools(tc(0, "call_RS15", "save_note", "", type="function")),
                c.tools(tc(0, arguments='{"title": "Café ☕", ')),
                c.tools(tc(0, arguments='"body": "' + note_text + '"}')),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[call("save_note", {"title": "Café ☕", "body": note_text}, "call_RS15")],
            text="Je note\u2028ça 📝",
        )
    )

    c = Chat("chatcmpl-RS0016")
    add(
        Stream(
            file="openai_chat/no_trailing_blank_line_after_done.sse",
            vendor="openai-compatible",
            doc="openai_compat",
            issue="openai/openai-node#2725",
            notes="The body ends right after 'data: [DONE]' with no line ending at all, so a "
            "strict SSE parser drops that last block. finish_reason came before it, so the "
            "turn is still complete.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS16", "get_measurement", json.dumps(h), type="function")),
                c.finish(),
                DONE,
            ],
            tail="none",
            outcome="complete",
            calls=[call("get_measurement", h, "call_RS16")],
        )
    )

    c = Chat("chatcmpl-RS0017")
    first = c.tools(tc(0, "call_RS17", "get_measurement", "", type="function"))[0]
    split_at = first.index('"choices"')
    add(
        Stream(
            file="openai_chat/crlf_multiline_data.sse",
            vendor="openai-compatible",
            doc="openai_compat",
            issue="rexxars/eventsource-parser#17",
            notes="CRLF line endings, and one event whose JSON is split over two 'data:' lines "
            "(joined with LF by SSE, which is JSON whitespace). Cutting between CR and LF must "
            "not create an extra event.",
            blocks=[
                c.role(None),
                [first[:split_at], "data: " + first[split_at:]],
                c.tools(tc(0, arguments='{"person": "Ada Lovelace", "metric": "height"}')),
                c.finish(),
                DONE,
            ],
            eol="\r\n",
            outcome="complete",
            calls=[call("get_measurement", h, "call_RS17")],
        )
    )

    c = Chat("chatcmpl-RS0018")
    add(
        Stream(
            file="openai_chat/cr_only_line_endings.sse",
            vendor="openai-compatible",
            doc="openai_compat",
            issue="rexxars/eventsource-parser#17",
            notes="Bare CR line endings (legal in SSE) throughout, with a comment line first.",
            prefix=": keep-alive\r\r",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS18", "get_measurement", '{"person": "Ada Lovelace", ')),
                c.tools(tc(0, arguments='"metric": "weight"}')),
                c.finish(),
                DONE,
            ],
            eol="\r",
            outcome="complete",
            calls=[call("get_measurement", w, "call_RS18")],
        )
    )

    c = Chat("chatcmpl-RS0019", "moonshotai/kimi-k2-instruct")
    add(
        Stream(
            file="openai_chat/index_zero_reused_distinct_ids_groq.sse",
            vendor="groq",
            model="moonshotai/kimi-k2-instruct",
            doc="openai_compat",
            issue="BerriAI/litellm#7621",
            notes="Three whole calls, each in its own chunk, ALL at index 0 with distinct ids. "
            "Each new id starts a new call; arguments never concatenate.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_785j", "get_weather", '{"location": "San Francisco"}')),
                c.tools(tc(0, "call_9xk2", "get_weather", '{"location": "Tokyo"}')),
                c.tools(tc(0, "call_m3pq", "get_weather", '{"location": "Paris"}')),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[
                call("get_weather", {"location": "San Francisco"}, "call_785j"),
                call("get_weather", {"location": "Tokyo"}, "call_9xk2"),
                call("get_weather", {"location": "Paris"}, "call_m3pq"),
            ],
        )
    )

    c = Chat("chatcmpl-RS0020", "qwen3:8b")
    add(
        Stream(
            file="openai_chat/index_zero_reused_ollama_finish_stop.sse",
            vendor="ollama",
            model="qwen3:8b",
            doc="openai_compat",
            issue="vercel/ai#14277",
            notes="Ollama: two different tools, both at index 0 with distinct ids, whole "
            "arguments each, then finish_reason 'stop' (not tool_calls). Two calls; names "
            "must not concatenate (write_filewrite_file).",
            blocks=[
                c.role(),
                c.tools(
                    tc(
                        0,
                        "call_olla1",
                        "write_file",
                        '{"path": "a.txt", "content": "A"}',
                        "function",
                    )
                ),
                c.tools(tc(0, "call_olla2", "read_file", '{"path": "b.txt"}', "function")),
                c.finish("stop"),
                DONE,
            ],
            outcome="complete",
            calls=[
                call("write_file", {"path": "a.txt", "content": "A"}, "call_olla1"),
                call("read_file", {"path": "b.txt"}, "call_olla2"),
            ],
        )
    )

    c = Chat("chatcmpl-RS0021", "anthropic.claude-sonnet-4")
    add(
        Stream(
            file="openai_chat/same_index_new_id_fragmented.sse",
            vendor="bedrock-compat",
            model="anthropic.claude-sonnet-4",
            doc="openai_compat",
            issue="langchain-ai/langchain#35281",
            notes="Two parallel calls share index 0 but have different ids; each one's "
            "arguments are fragmented. Fragments after the second header belong to the second "
            "call only (no 'read_filesearch_text').",
            blocks=[
                c.role(None),
                c.tools(tc(0, "toolu_RS21a", "read_file", "", "function")),
                c.tools(tc(0, arguments='{"path": ')),
                c.tools(tc(0, arguments='"notes.md"}')),
                c.tools(tc(0, "toolu_RS21b", "search_text", "", "function")),
                c.tools(tc(0, arguments='{"query": ')),
                c.tools(tc(0, arguments='"Ada"}')),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[
                call("read_file", {"path": "notes.md"}, "toolu_RS21a"),
                call("search_text", {"query": "Ada"}, "toolu_RS21b"),
            ],
        )
    )

    c = Chat("chatcmpl-RS0022")
    add(
        Stream(
            file="openai_chat/continuation_index_null.sse",
            vendor="openai-compatible",
            model="mistral-small",
            doc="openai_compat",
            issue="langchain-ai/langchain#34671",
            notes="Continuation entries carry 'index': null, 'id': '' and name '' explicitly. "
            "They continue the open call; the id stays the first real one.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS22", "get_measurement", '{"person": ', "function")),
                c.tools(tc(None, "", "", '"Ada Lovelace", "metric": ')),
                c.tools(tc(None, "", "", '"height"}')),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[call("get_measurement", h, "call_RS22")],
        )
    )

    c = Chat("chatcmpl-RS0023", "gemini-2.5-flash")
    add(
        Stream(
            file="openai_chat/whole_calls_without_index_separate_chunks.sse",
            vendor="google",
            model="gemini-2.5-flash",
            doc="openai_compat",
            issue="langchain-ai/langchain#40392",
            notes="Gemini via OpenAI compat: two complete calls to the same tool, each in its "
            "own chunk, without index, distinct ids. Two calls, the earlier one not "
            "overwritten.",
            blocks=[
                c.role(None),
                c.tools(
                    tc(
                        id="call_RS23h",
                        type="function",
                        name="get_measurement",
                        arguments=json.dumps(h),
                    )
                ),
                c.tools(
                    tc(
                        id="call_RS23w",
                        type="function",
                        name="get_measurement",
                        arguments=json.dumps(w),
                    )
                ),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[
                call("get_measurement", h, "call_RS23h"),
                call("get_measurement", w, "call_RS23w"),
            ],
        )
    )

    c = Chat("chatcmpl-RS0024", "qwen2.5-7b-instruct")
    add(
        Stream(
            file="openai_chat/name_repeated_every_delta_llamacpp.sse",
            vendor="llamacpp",
            model="qwen2.5-7b-instruct",
            doc="openai_compat",
            issue="ggml-org/llama.cpp#13774",
            notes="The full function name (and the id) is repeated in every delta. Kept once: "
            "'final_result', not 'final_resultfinal_resultfinal_result'.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS24", "final_result", '{"answer": ', "function")),
                c.tools(tc(0, "call_RS24", "final_result", '"42"', "function")),
                c.tools(tc(0, "call_RS24", "final_result", "}", "function")),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[call("final_result", {"answer": "42"}, "call_RS24")],
        )
    )

    c = Chat("chatcmpl-RS0025", "gemini-2.5-pro")
    add(
        Stream(
            file="openai_chat/name_split_across_deltas_gemini_compat.sse",
            vendor="google",
            model="gemini-2.5-pro",
            doc="openai_compat",
            issue="continuedev/continue#5849",
            notes="The function name itself arrives in pieces: 'edit_ex' then 'isting_file'. "
            "The pieces are appended: 'edit_existing_file'.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS25", "edit_ex", "", "function")),
                c.tools(tc(0, name="isting_file")),
                c.tools(tc(0, arguments='{"filepath": "src/app.py"}')),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[call("edit_existing_file", {"filepath": "src/app.py"}, "call_RS25")],
        )
    )

    c = Chat("chatcmpl-RS0026", "Qwen/Qwen3-32B")
    add(
        Stream(
            file="openai_chat/name_empty_after_set.sse",
            vendor="huggingface",
            model="Qwen/Qwen3-32B",
            doc="openai_compat",
            issue="huggingface/tau#715",
            notes='Later deltas send "name": "" and "id": ""; an empty name never '
            "overwrites the one already set, and the first real id is kept.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS26", "get_weather", "", "function")),
                c.tools(tc(0, "", "", '{"city": "Oslo"}', "function")),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[call("get_weather", {"city": "Oslo"}, "call_RS26")],
        )
    )

    c = Chat("chatcmpl-RS0027", "command-a-03-2025")
    add(
        Stream(
            file="openai_chat/name_arrives_late.sse",
            vendor="vllm",
            model="command-a-03-2025",
            doc="openai_compat",
            issue="vercel/ai#14722",
            notes="The first delta has id and arguments but no name key; the next has name '' "
            "(the vercel/ai#16507 variant); the real name comes in the third. One call, name "
            "from the late delta, arguments from every fragment.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_123", arguments='{"command"', type="function")),
                c.tools(tc(0, name="")),
                c.tools(tc(0, name="run_shell")),
                c.tools(tc(0, arguments=': "ls -la"}')),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[call("run_shell", {"command": "ls -la"}, "call_123")],
        )
    )

    c = Chat("chatcmpl-RS0028")
    add(
        Stream(
            file="openai_chat/parsable_arguments_then_eof.sse",
            issue="vercel/ai#13137",
            notes='The argument text received so far already parses (\'{"path": "/tmp"}\') '
            "but the stream ends without finish_reason or [DONE]. A parsable prefix is not "
            "completion: truncated, the call is not released.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS28", "delete_path", "", "function")),
                c.tools(tc(0, arguments='{"path": "/tmp"}')),
            ],
            outcome="truncated",
            calls=[],
            partial_calls=[partial("delete_path", "call_RS28", '{"path": "/tmp"}')],
        )
    )

    c = Chat("chatcmpl-RS0029", "Qwen/Qwen3-8B")
    add(
        Stream(
            file="openai_chat/finish_tool_calls_unterminated_arguments_vllm.sse",
            vendor="vllm",
            model="Qwen/Qwen3-8B",
            doc="openai_compat",
            issue="vllm-project/vllm#53269",
            notes="The server hit max_tokens inside the arguments but reports finish_reason "
            "'tool_calls'. The call is complete by the dialect's signal, yet its argument "
            'text \'{"path": "/tmp/log.txt", "content": "\' is not JSON: args {} with '
            "an arguments_error, never a partially repaired object.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "chatcmpl-tool-RS29", "write_file", "", "function")),
                c.tools(tc(0, arguments='{"path": "/tmp/log.txt", ')),
                c.tools(tc(0, arguments='"content": "')),
                c.finish("tool_calls"),
                DONE,
            ],
            invalid_arguments=(0,),
            outcome="complete",
            calls=[call("write_file", {}, "chatcmpl-tool-RS29")],
        )
    )

    c = Chat("chatcmpl-RS0030")
    add(
        Stream(
            file="openai_chat/done_inside_argument_string.sse",
            vendor="openai-compatible",
            doc="openai_compat",
            issue="BerriAI/litellm#31562",
            notes="Text and argument strings contain '[DONE]' and 'data: [DONE]'. Only a data "
            "field that is exactly [DONE] ends the stream; both calls come out.",
            blocks=[
                c.role(),
                c.text("Writing data: [DONE] now"),
                c.tools(tc(0, "call_RS30a", "write_file", "", "function")),
                c.tools(tc(0, arguments='{"path": "[DONE].py", "content": "data: [DONE]"}')),
                c.tools(tc(1, "call_RS30b", "read_file", '{"path": "[DONE]"}', "function")),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[
                call("write_file", {"path": "[DONE].py", "content": "data: [DONE]"}, "call_RS30a"),
                call("read_file", {"path": "[DONE]"}, "call_RS30b"),
            ],
            text="Writing data: [DONE] now",
        )
    )

    c = Chat("chatcmpl-RS0031")
    add(
        Stream(
            file="openai_chat/choices_null_chunk.sse",
            vendor="openai-compatible",
            doc="openai_compat",
            issue="pydantic/pydantic-ai#5165",
            notes='A chunk in the middle has "choices": null (and one has no choices key); '
            "both are skipped.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS31", "get_measurement", '{"person": "Ada Lovelace", ')),
                d(c.obj(None)),
                d({"id": "chatcmpl-RS0031", "object": "chat.completion.chunk", "created": 1}),
                c.tools(tc(0, arguments='"metric": "height"}')),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[call("get_measurement", h, "call_RS31")],
        )
    )

    c = Chat("chatcmpl-RS0032", "gpt-4o-2024-11-20")
    filt = {"hate": {"filtered": False, "severity": "safe"}}
    add(
        Stream(
            file="openai_chat/empty_choices_first_chunk_azure.sse",
            vendor="azure",
            model="gpt-4o-2024-11-20",
            doc="openai_compat",
            issue="pydantic/pydantic-ai#164",
            notes="Azure OpenAI: the first chunk has choices [] and prompt_filter_results; "
            "content_filter_results ride on later choices. One call.",
            blocks=[
                d(
                    {
                        "choices": [],
                        "created": 0,
                        "id": "",
                        "model": "",
                        "object": "",
                        "prompt_filter_results": [
                            {"prompt_index": 0, "content_filter_results": filt}
                        ],
                    }
                ),
                c.role(None),
                c.tools(tc(0, "call_RS32", "get_measurement", "", "function")),
                c.tools(tc(0, arguments=json.dumps(w))),
                d(
                    c.obj(
                        [
                            {
                                "index": 0,
                                "delta": {},
                                "finish_reason": "tool_calls",
                                "content_filter_results": {},
                            }
                        ]
                    )
                ),
                DONE,
            ],
            outcome="complete",
            calls=[call("get_measurement", w, "call_RS32")],
        )
    )

    c = Chat("gen-RS0039", "anthropic/claude-sonnet-4")
    add(
        Stream(
            file="openai_chat/same_index_same_id_new_name_openrouter.sse",
            vendor="openrouter",
            model="anthropic/claude-sonnet-4",
            doc="openai_compat",
            issue="skye-harris/hass_local_openai_llm#92",
            notes="Two parallel calls sent with the same index 0 AND the same id; only the new "
            "name (arriving after the first call's arguments were whole) separates them. Two "
            "calls, both carrying that id as sent; names and arguments never concatenate.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "toolu_RS39", "get_weather", "", "function")),
                c.tools(tc(0, arguments='{"city": "Oslo"}')),
                c.tools(tc(0, "toolu_RS39", "get_time", "", "function")),
                c.tools(tc(0, arguments='{"zone": "Europe/Oslo"}')),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[
                call("get_weather", {"city": "Oslo"}, "toolu_RS39"),
                call("get_time", {"zone": "Europe/Oslo"}, "toolu_RS39"),
            ],
        )
    )

    c = Chat("gen-RS0033", "anthropic/claude-sonnet-4")
    add(
        Stream(
            file="openai_chat/finish_reason_twice_openrouter.sse",
            vendor="openrouter",
            model="anthropic/claude-sonnet-4",
            doc="openai_compat",
            issue="skye-harris/hass_local_openai_llm#92",
            notes="OpenRouter: ': OPENROUTER PROCESSING' comments, then two chunks with "
            "finish_reason 'tool_calls' (the second also carries usage). The call comes out "
            "once.",
            prefix=": OPENROUTER PROCESSING\n\n",
            blocks=[
                c.role(None),
                [": OPENROUTER PROCESSING"],
                c.tools(tc(0, "toolu_RS33", "get_measurement", json.dumps(h), "function")),
                c.finish(),
                d(
                    c.obj(
                        [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
                        usage={"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70},
                    )
                ),
                DONE,
            ],
            outcome="complete",
            calls=[call("get_measurement", h, "toolu_RS33")],
        )
    )

    c = Chat("chatcmpl-RS0034", "gemini-2.0-flash")
    add(
        Stream(
            file="openai_chat/finish_reason_on_every_chunk_gemini_proxy.sse",
            vendor="one-api",
            model="gemini-2.0-flash",
            doc="openai_compat",
            issue="songquanpeng/one-api#1408",
            notes="A proxy puts finish_reason 'stop' on every chunk, including a leading empty "
            "one and the text chunks before the tool call. The stream is not over until the "
            "body ends with [DONE]; the single whole call comes out once.",
            blocks=[
                c.chunk({"role": "assistant", "content": ""}, "stop"),
                c.chunk({"content": "Checking "}, "stop"),
                c.chunk({"content": "both."}, "stop"),
                c.chunk(
                    {
                        "tool_calls": [
                            tc(0, "call_RS34", "get_measurement", json.dumps(w), "function")
                        ]
                    },
                    "stop",
                ),
                DONE,
            ],
            outcome="complete",
            calls=[call("get_measurement", w, "call_RS34")],
            text="Checking both.",
        )
    )

    c = Chat("chatcmpl-RS0035", "mistral-large-latest")
    add(
        Stream(
            file="openai_chat/two_entries_one_delta.sse",
            vendor="mistral",
            model="mistral-large-latest",
            doc="openai_compat",
            notes="Both calls arrive whole in ONE delta (two entries, indices 0 and 1) that also "
            "carries finish_reason tool_calls.",
            blocks=[
                c.chunk({"role": "assistant", "content": ""}),
                c.tools(
                    tc(0, "RS35height", "get_measurement", json.dumps(h), "function"),
                    tc(1, "RS35weight", "get_measurement", json.dumps(w), "function"),
                    finish="tool_calls",
                ),
                DONE,
            ],
            outcome="complete",
            calls=[
                call("get_measurement", h, "RS35height"),
                call("get_measurement", w, "RS35weight"),
            ],
        )
    )

    c = Chat("chatcmpl-RS0036")
    add(
        Stream(
            file="openai_chat/interleaved_fragments_height_weight.sse",
            vendor="openai-compatible",
            doc="openai_compat",
            notes="Fragments of the height call (index 0) and the weight call (index 1) "
            "alternate; continuations carry id '' (id only on the first fragment). Each "
            "fragment goes to its own call by index: the calls never cross.",
            blocks=[
                c.role(None),
                c.tools(tc(0, "call_RS36h", "get_measurement", "", "function")),
                c.tools(tc(1, "call_RS36w", "get_measurement", "", "function")),
                c.tools(tc(0, "", arguments='{"person": "Ada Lovelace", ')),
                c.tools(tc(1, "", arguments='{"person": "Ada Lovelace", ')),
                c.tools(tc(1, "", arguments='"metric": "weight"}')),
                c.tools(tc(0, "", arguments='"metric": "height"}')),
                c.finish(),
                DONE,
            ],
            outcome="complete",
            calls=[
                call("get_measurement", h, "call_RS36h"),
                call("get_measurement", w, "call_RS36w"),
            ],
        )
    )

    c = Chat("chatcmpl-RS0037")
    add(
        Stream(
            file="openai_chat/choice_index_one_not_mixed.sse",
            notes="n=2: choice 0 and choice 1 both call get_measurement, their chunks "
            "interleaved, each with tool index 0. Only choice 0's call is reported; choice 1 "
            "never mixes into it.",
            blocks=[
                c.chunk({"role": "assistant", "content": None}, index=0),
                c.chunk({"role": "assistant", "content": None}, index=1),
                c.chunk({"tool_calls": [tc(0, "call_RS37c0", "get_measurement", "")]}, index=0),
                c.chunk({"tool_calls": [tc(0, "call_RS37c1", "get_measurement", "")]}, index=1),
                c.chunk({"tool_calls": [tc(0, arguments=json.dumps(h))]}, index=0),
                c.chunk({"tool_calls": [tc(0, arguments=json.dumps(w))]}, index=1),
                c.chunk({}, "tool_calls", index=0),
                c.chunk({}, "tool_calls", index=1),
                DONE,
            ],
            outcome="complete",
            calls=[call("get_measurement", h, "call_RS37c0")],
        )
    )

    c = Chat("chatcmpl-RS0038")
    add(
        Stream(
            file="openai_chat/bom_and_data_without_space.sse",
            vendor="openai-compatible",
            doc="openai_compat",
            notes="The body starts with a UTF-8 BOM (stripped by SSE) and every field is written "
            "'data:' without the optional space.",
            prefix="\ufeff",
            blocks=[
                [line.replace("data: ", "data:", 1) for line in block]
                for block in (
                    c.role(None),
                    c.tools(tc(0, "call_RS38", "get_measurement", json.dumps(h), "function")),
                    c.finish(),
                    DONE,
                )
            ],
            outcome="complete",
            calls=[call("get_measurement", h, "call_RS38")],
        )
    )

    return out


# --------------------------------------------------------------------------------------
# Responses.


class Resp:
    """Builds the events of one Responses stream, numbering them."""

    def __init__(self, rid: str) -> None:
        self.rid = rid
        self.seq = 0

    def e(self, type_: str, **fields: Any) -> Block:
        """One named event with the next sequence number."""
        obj: dict[str, Any] = {"type": type_, "sequence_number": self.seq}
        obj.update(fields)
        self.seq += 1
        return ev(obj)

    def response(self, status: str, output: list[Any], **extra: Any) -> dict[str, Any]:
        """The response object carried by lifecycle events."""
        out = {
            "id": self.rid,
            "object": "response",
            "created_at": 1767225600,
            "status": status,
            "error": None,
            "incomplete_details": None,
            "model": RESP_MODEL,
            "output": output,
            "parallel_tool_calls": True,
            "usage": None,
        }
        out.update(extra)
        return out

    def start(self) -> list[Block]:
        """``response.created`` and ``response.in_progress``."""
        return [
            self.e("response.created", response=self.response("in_progress", [])),
            self.e("response.in_progress", response=self.response("in_progress", [])),
        ]

    def fc_item(self, n: int, call_id: str, name: str, args: str, status: str) -> dict[str, Any]:
        """A function_call output item."""
        return {
            "id": f"fc_{self.rid[5:]}{n}",
            "type": "function_call",
            "status": status,
            "arguments": args,
            "call_id": call_id,
            "name": name,
        }

    def added(self, n: int, call_id: str, name: str) -> Block:
        """``response.output_item.added`` for a function call."""
        item = self.fc_item(n, call_id, name, "", "in_progress")
        return self.e("response.output_item.added", output_index=n, item=item)

    def function_call(
        self, n: int, call_id: str, name: str, pieces: list[str], *, done: bool = True
    ) -> list[Block]:
        """The events of one function call at output index ``n``."""
        args = "".join(pieces)
        item_id = f"fc_{self.rid[5:]}{n}"
        out = [self.added(n, call_id, name)]
        out += [
            self.e(
                "response.function_call_arguments.delta",
                item_id=item_id,
                output_index=n,
                delta=p,
            )
            for p in pieces
        ]
        if done:
            out.append(
                self.e(
                    "response.function_call_arguments.done",
                    item_id=item_id,
                    output_index=n,
                    arguments=args,
                )
            )
            out.append(
                self.e(
                    "response.output_item.done",
                    output_index=n,
                    item=self.fc_item(n, call_id, name, args, "completed"),
                )
            )
        return out

    def message(self, n: int, pieces: list[str]) -> list[Block]:
        """The events of one assistant text message at output index ``n``."""
        item_id = f"msg_{self.rid[5:]}{n}"
        text = "".join(pieces)
        part = {"type": "output_text", "annotations": [], "text": ""}
        item = {
            "id": item_id,
            "type": "message",
            "status": "in_progress",
            "content": [],
            "role": "assistant",
        }
        out = [
            self.e("response.output_item.added", output_index=n, item=item),
            self.e(
                "response.content_part.added",
                item_id=item_id,
                output_index=n,
                content_index=0,
                part=part,
            ),
        ]
        out += [
            self.e(
                "response.output_text.delta",
                item_id=item_id,
                output_index=n,
                content_index=0,
                delta=p,
            )
            for p in pieces
        ]
        done_part = dict(part, text=text)
        done_item = dict(item, status="completed", content=[done_part])
        out += [
            self.e(
                "response.output_text.done",
                item_id=item_id,
                output_index=n,
                content_index=0,
                text=text,
            ),
            self.e(
                "response.content_part.done",
                item_id=item_id,
                output_index=n,
                content_index=0,
                part=done_part,
            ),
            self.e("response.output_item.done", output_index=n, item=done_item),
        ]
        return out

    def completed(self, output: list[Any]) -> Block:
        """``response.completed``."""
        usage = {"input_tokens": 80, "output_tokens": 30, "total_tokens": 110}
        return self.e(
            "response.completed", response=self.response("completed", output, usage=usage)
        )


def responses_streams() -> list[Stream]:
    """The Responses API streams."""
    out: list[Stream] = []
    add = out.append
    h = {"person": "Ada Lovelace", "metric": "height"}
    w = {"person": "Ada Lovelace", "metric": "weight"}
    hp = ['{"person": "Ada', ' Lovelace", "metric"', ': "height"}']
    wp = ['{"person": "Ada', ' Lovelace", "metric"', ': "weight"}']

    r = Resp("resp_RS0101")
    blocks = r.start() + r.message(0, ["Ada Lovelace", " was born", " in 1815."])
    blocks.append(r.completed([]))
    add(
        Stream(
            file="openai_responses/no_calls_text.sse",
            notes="A text-only response: message item, content part, three output_text deltas, "
            "done events, response.completed.",
            blocks=blocks,
            outcome="no_calls",
            calls=[],
            text="Ada Lovelace was born in 1815.",
        )
    )

    r = Resp("resp_RS0102")
    blocks = r.start() + r.function_call(0, "call_RS0102", "get_measurement", hp)
    blocks.append(
        r.completed([r.fc_item(0, "call_RS0102", "get_measurement", "".join(hp), "completed")])
    )
    add(
        Stream(
            file="openai_responses/one_call.sse",
            notes="One function_call item: output_item.added (call_id differs from the item id "
            "fc_...), three argument deltas, function_call_arguments.done, output_item.done, "
            "response.completed. call_id is the return address, not the item id.",
            blocks=blocks,
            outcome="complete",
            calls=[call("get_measurement", h, "call_RS0102")],
        )
    )

    r = Resp("resp_RS0103")
    blocks = r.start() + r.function_call(0, "call_RS0103h", "get_measurement", hp)
    blocks += r.function_call(1, "call_RS0103w", "get_measurement", wp)
    blocks.append(r.completed([]))
    add(
        Stream(
            file="openai_responses/two_calls_height_weight.sse",
            notes="Two function_call items for the same function (height at output_index 0, "
            "weight at 1), one after the other.",
            blocks=blocks,
            outcome="complete",
            calls=[
                call("get_measurement", h, "call_RS0103h"),
                call("get_measurement", w, "call_RS0103w"),
            ],
        )
    )

    r = Resp("resp_RS0104")
    blocks = r.start()
    blocks.append(r.added(0, "call_RS0104h", "get_measurement"))
    blocks.append(r.added(1, "call_RS0104w", "get_measurement"))
    for n, piece in ((0, hp[0]), (1, wp[0]), (1, wp[1]), (0, hp[1]), (0, hp[2]), (1, wp[2])):
        blocks.append(
            r.e(
                "response.function_call_arguments.delta",
                item_id=f"fc_RS0104{n}",
                output_index=n,
                delta=piece,
            )
        )
    for n, call_id, pieces in ((1, "call_RS0104w", wp), (0, "call_RS0104h", hp)):
        blocks.append(
            r.e(
                "response.function_call_arguments.done",
                item_id=f"fc_RS0104{n}",
                output_index=n,
                arguments="".join(pieces),
            )
        )
        blocks.append(
            r.e(
                "response.output_item.done",
                output_index=n,
                item=r.fc_item(n, call_id, "get_measurement", "".join(pieces), "completed"),
            )
        )
    blocks.append(r.completed([]))
    add(
        Stream(
            file="openai_responses/interleaved_items_height_weight.sse",
            vendor="openai-compatible",
            notes="Both items are added first, their argument deltas interleave (routed by "
            "item_id / output_index), and the weight item (output_index 1) completes before "
            "the height item. Neither call takes the other's fragments. Calls come out in "
            "completion order (weight, then height).",
            blocks=blocks,
            outcome="complete",
            calls=[
                call("get_measurement", w, "call_RS0104w"),
                call("get_measurement", h, "call_RS0104h"),
            ],
        )
    )

    r = Resp("resp_RS0105")
    blocks = r.start() + r.function_call(0, "call_RS0105", "get_measurement", hp[:2], done=False)
    add(
        Stream(
            file="openai_responses/truncated_mid_arguments.sse",
            notes="The body ends after two argument deltas: no arguments.done, no "
            "output_item.done, no response.completed. Truncated.",
            blocks=blocks,
            outcome="truncated",
            calls=[],
            partial_calls=[
                partial("get_measurement", "call_RS0105", '{"person": "Ada Lovelace", "metric"')
            ],
        )
    )

    r = Resp("resp_RS0106")
    blocks = r.start() + r.function_call(0, "call_RS0106", "get_measurement", hp[:1], done=False)
    blocks.append(
        r.e(
            "error",
            code="server_error",
            message="The server had an error processing your request.",
            param=None,
        )
    )
    add(
        Stream(
            file="openai_responses/error_event.sse",
            notes="An 'error' event in the documented shape (code, message, param at the top "
            "level) in the middle of a function call: provider_error.",
            blocks=blocks,
            outcome="provider_error",
            calls=[],
        )
    )

    r = Resp("resp_RS0107")
    blocks = r.start() + r.message(0, ["Let me "])
    blocks.append(
        r.e(
            "response.failed",
            response=r.response(
                "failed",
                [],
                error={"code": "server_error", "message": "The model failed to respond."},
            ),
        )
    )
    add(
        Stream(
            file="openai_responses/response_failed.sse",
            issue="openai/openai-python#3538",
            notes="The response ends with response.failed (error server_error) instead of "
            "response.completed: provider_error.",
            blocks=blocks,
            outcome="provider_error",
            calls=[],
        )
    )

    r = Resp("resp_RS0108")
    blocks = r.start() + r.function_call(0, "call_RS0108", "get_measurement", hp[:2], done=False)
    blocks.append(
        r.e(
            "response.incomplete",
            response=r.response(
                "incomplete", [], incomplete_details={"reason": "max_output_tokens"}
            ),
        )
    )
    add(
        Stream(
            file="openai_responses/incomplete_max_output_tokens.sse",
            issue="openai/openai-python#3538",
            notes="max_output_tokens reached in the middle of the arguments: "
            "response.incomplete with incomplete_details.reason max_output_tokens. Truncated.",
            blocks=blocks,
            outcome="truncated",
            calls=[],
            partial_calls=[
                partial("get_measurement", "call_RS0108", '{"person": "Ada Lovelace", "metric"')
            ],
        )
    )

    r = Resp("resp_RS0109")
    blocks = r.start() + r.function_call(0, "call_RS0109", "get_time", [])
    blocks.append(r.completed([]))
    add(
        Stream(
            file="openai_responses/arguments_empty_string.sse",
            vendor="openai-compatible",
            notes="A zero-parameter call with no argument deltas and arguments '' in "
            "arguments.done and output_item.done: args {}.",
            blocks=blocks,
            outcome="complete",
            calls=[call("get_time", {}, "call_RS0109")],
        )
    )

    r = Resp("resp_RS0110")
    blocks = r.start()
    blocks.append(r.added(0, "call_RS0110", "get_measurement"))
    blocks.append(
        r.e(
            "response.output_item.done",
            output_index=0,
            item=r.fc_item(0, "call_RS0110", "get_measurement", json.dumps(w), "completed"),
        )
    )
    blocks.append(r.completed([]))
    add(
        Stream(
            file="openai_responses/arguments_only_in_item_done.sse",
            vendor="openai-compatible",
            notes="A Responses-compatible server that sends no argument delta and no "
            "arguments.done: the whole arguments are in output_item.done, which completes the "
            "call.",
            blocks=blocks,
            outcome="complete",
            calls=[call("get_measurement", w, "call_RS0110")],
        )
    )

    r = Resp("resp_RS0111")
    blocks = r.start() + r.function_call(0, "call_RS0111", "get_measurement", hp)
    blocks.append(r.completed([]))
    add(
        Stream(
            file="openai_responses/no_trailing_blank_line_after_completed.sse",
            vendor="openai-compatible",
            issue="openai/openai-node#2725",
            notes="The body ends right after the response.completed data line with its line "
            "ending but no blank line, so strict SSE never dispatches that block. Its data is "
            "whole JSON, and the library accepts such a final event (a cut line could never "
            "pass for whole JSON): complete. Compare completed_event_cut_mid_json.",
            blocks=blocks,
            tail="eol",
            outcome="complete",
            calls=[call("get_measurement", h, "call_RS0111")],
        )
    )

    r = Resp("resp_RS0113")
    blocks = r.start() + r.function_call(0, "call_RS0113", "get_measurement", hp)
    completed = r.completed([])
    add(
        Stream(
            file="openai_responses/completed_event_cut_mid_json.sse",
            issue="openai/openai-node#2725",
            notes="The call completed (arguments.done and output_item.done), then the body "
            "stops in the middle of the response.completed data line. The end marker never "
            "arrived whole: truncated, with the completed call carried by the error.",
            blocks=blocks,
            raw_tail=completed[0] + "\n" + completed[1][:60],
            outcome="truncated",
            calls=[],
        )
    )

    r = Resp("resp_RS0112")
    args = {"city": "東京", "note": "für Zoë 🌸 — naïve café"}
    pieces = ['{"city": "東', '京", "note": "für Zoë 🌸', ' — naïve café"}']
    blocks = r.start() + r.function_call(0, "call_RS0112", "get_weather", pieces)
    blocks.append(r.completed([]))
    add(
        Stream(
            file="openai_responses/non_ascii_arguments.sse",
            notes="Arguments with CJK, accents, an emoji and an em dash, written as raw UTF-8 "
            "and split between deltas at character boundaries.",
            blocks=blocks,
            outcome="complete",
            calls=[call("get_weather", args, "call_RS0112")],
        )
    )

    r = Resp("resp_RS0113")
    reasoning_id = "rs_RS0113reasoning"
    summary = ["Measuring **Ada**:", " the tool takes a person", " and a metric."]
    item = {"id": reasoning_id, "type": "reasoning", "summary": []}
    blocks = r.start()
    blocks.append(r.e("response.output_item.added", output_index=0, item=item))
    blocks.append(
        r.e(
            "response.reasoning_summary_part.added",
            item_id=reasoning_id,
            output_index=0,
            summary_index=0,
            part={"type": "summary_text", "text": ""},
        )
    )
    blocks += [
        r.e(
            "response.reasoning_summary_text.delta",
            item_id=reasoning_id,
            output_index=0,
            summary_index=0,
            delta=piece,
        )
        for piece in summary
    ]
    done_summary = {"type": "summary_text", "text": "".join(summary)}
    blocks.append(
        r.e(
            "response.reasoning_summary_text.done",
            item_id=reasoning_id,
            output_index=0,
            summary_index=0,
            text="".join(summary),
        )
    )
    blocks.append(
        r.e(
            "response.reasoning_summary_part.done",
            item_id=reasoning_id,
            output_index=0,
            summary_index=0,
            part=done_summary,
        )
    )
    done_item = dict(item, summary=[done_summary])
    blocks.append(r.e("response.output_item.done", output_index=0, item=done_item))
    blocks += r.function_call(1, "call_RS0113", "get_measurement", hp)
    blocks.append(
        r.completed(
            [done_item, r.fc_item(1, "call_RS0113", "get_measurement", "".join(hp), "completed")]
        )
    )
    add(
        Stream(
            file="openai_responses/reasoning_then_call.sse",
            notes="A reasoning item (id rs_..., a summary streamed in three "
            "reasoning_summary_text deltas) at output_index 0, then one function_call item. "
            "The reasoning item is kept with its id, to be sent back before the call.",
            blocks=blocks,
            outcome="complete",
            calls=[call("get_measurement", h, "call_RS0113")],
        )
    )
    return out


# --------------------------------------------------------------------------------------
# Anthropic.


class Ant:
    """Builds the events of one Anthropic Messages stream."""

    def __init__(self, mid: str) -> None:
        self.mid = mid

    def start(self) -> Block:
        """``message_start``."""
        msg: dict[str, Any] = {
            "id": self.mid,
            "type": "message",
            "role": "assistant",
            "model": ANT_MODEL,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 410, "output_tokens": 2},
        }
        return ev({"type": "message_start", "message": msg})

    def text(self, index: int, pieces: list[str]) -> list[Block]:
        """A whole text block."""
        out = [
            ev(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                }
            )
        ]
        out += [
            ev(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": p},
                }
            )
            for p in pieces
        ]
        out.append(ev({"type": "content_block_stop", "index": index}))
        return out

    def tool(
        self,
        index: int,
        tool_id: str,
        name: str,
        pieces: list[str],
        *,
        stop: bool = True,
        kind: str = "tool_use",
        start_input: dict[str, Any] | None = None,
    ) -> list[Block]:
        """A tool_use (or server_tool_use) block."""
        block = {"type": kind, "id": tool_id, "name": name, "input": start_input or {}}
        out = [ev({"type": "content_block_start", "index": index, "content_block": block})]
        out += [
            ev(
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": p},
                }
            )
            for p in pieces
        ]
        if stop:
            out.append(ev({"type": "content_block_stop", "index": index}))
        return out

    def end(self, stop_reason: str = "tool_use") -> list[Block]:
        """``message_delta`` and ``message_stop``."""
        return [
            ev(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": 87},
                }
            ),
            ev({"type": "message_stop"}),
        ]


PING: Block = ["event: ping", 'data: {"type": "ping"}']


def anthropic_streams() -> list[Stream]:
    """The Anthropic Messages streams."""
    out: list[Stream] = []
    add = out.append
    h = {"person": "Ada Lovelace", "metric": "height"}
    w = {"person": "Ada Lovelace", "metric": "weight"}
    hp = ["", '{"person": "Ada', ' Lovelace", "metric"', ': "height"}']
    wp = ["", '{"person": "Ada', ' Lovelace", "metric"', ': "weight"}']

    a = Ant("msg_RS0201")
    add(
        Stream(
            file="anthropic/no_calls_text.sse",
            notes="Text-only message: message_start, ping, one text block in three deltas, "
            "message_delta end_turn, message_stop.",
            blocks=[
                a.start(),
                PING,
                *a.text(0, ["Ada was", " born in", " 1815."]),
                *a.end("end_turn"),
            ],
            outcome="no_calls",
            calls=[],
            text="Ada was born in 1815.",
        )
    )

    a = Ant("msg_RS0202")
    add(
        Stream(
            file="anthropic/one_call.sse",
            notes="A text block then one tool_use block (input {} at start, input_json_delta "
            "fragments starting with ''), stop_reason tool_use.",
            blocks=[
                a.start(),
                *a.text(0, ["I'll look that up."]),
                *a.tool(1, "toolu_RS0202", "get_measurement", hp),
                *a.end(),
            ],
            outcome="complete",
            calls=[call("get_measurement", h, "toolu_RS0202")],
            text="I'll look that up.",
        )
    )

    a = Ant("msg_RS0203")
    add(
        Stream(
            file="anthropic/two_calls_height_weight.sse",
            notes="Two tool_use blocks for the same tool (height at block 0, weight at block 1) "
            "with a ping between them.",
            blocks=[
                a.start(),
                *a.tool(0, "toolu_RS0203h", "get_measurement", hp),
                PING,
                *a.tool(1, "toolu_RS0203w", "get_measurement", wp),
                *a.end(),
            ],
            outcome="complete",
            calls=[
                call("get_measurement", h, "toolu_RS0203h"),
                call("get_measurement", w, "toolu_RS0203w"),
            ],
        )
    )

    a = Ant("msg_RS0204")
    add(
        Stream(
            file="anthropic/truncated_mid_input_json.sse",
            notes="The body ends after two input_json_delta fragments: no content_block_stop, "
            "no message_stop. Truncated.",
            blocks=[a.start(), *a.tool(0, "toolu_RS0204", "get_measurement", hp[:3], stop=False)],
            outcome="truncated",
            calls=[],
            partial_calls=[
                partial("get_measurement", "toolu_RS0204", '{"person": "Ada Lovelace", "metric"')
            ],
        )
    )

    a = Ant("msg_RS0205")
    err = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    add(
        Stream(
            file="anthropic/error_overloaded_mid_stream.sse",
            issue="anthropics/anthropic-sdk-python#1918",
            notes="HTTP 200, then after a text block and a started tool_use an 'event: error' "
            "with overloaded_error: provider_error (retryable).",
            blocks=[
                a.start(),
                *a.text(0, ["Let me check."]),
                *a.tool(1, "toolu_RS0205", "get_measurement", hp[:2], stop=False),
                ev(err),
            ],
            outcome="provider_error",
            calls=[],
        )
    )

    a = Ant("msg_RS0206")
    add(
        Stream(
            file="anthropic/error_first_event_after_message_start.sse",
            issue="vercel/ai#10653",
            notes="The first event after message_start is an overloaded_error: provider_error, "
            "never an empty answer.",
            blocks=[a.start(), ev(err)],
            outcome="provider_error",
            calls=[],
        )
    )

    a = Ant("msg_RS0207")
    add(
        Stream(
            file="anthropic/invalid_json_input_then_valid_call.sse",
            issue="anthropics/anthropic-sdk-python#1265",
            notes="The first tool_use block's input_json_delta holds an invalid token "
            "('{\"city\": INVALID_VALUE}') and is closed by content_block_stop: that call comes "
            "out with args {} and an arguments_error; the stream goes on and the second call is "
            "normal.",
            blocks=[
                a.start(),
                *a.tool(0, "toolu_RS0207bad", "get_weather", ['{"city": ', "INVALID_VALUE}"]),
                *a.tool(1, "toolu_RS0207ok", "get_weather", ['{"city": "Oslo"}']),
                *a.end(),
            ],
            invalid_arguments=(0,),
            outcome="complete",
            calls=[
                call("get_weather", {}, "toolu_RS0207bad"),
                call("get_weather", {"city": "Oslo"}, "toolu_RS0207ok"),
            ],
        )
    )

    a = Ant("msg_RS0208")
    add(
        Stream(
            file="anthropic/no_input_delta_empty_input.sse",
            issue="vercel/ai#10747",
            notes="Two zero-parameter tool_use blocks: the first has no input_json_delta at all, "
            "the second only partial_json ''. Both come out with args {}.",
            blocks=[
                a.start(),
                *a.tool(0, "toolu_RS0208a", "get_time", []),
                *a.tool(1, "toolu_RS0208b", "list_files", [""]),
                *a.end(),
            ],
            outcome="complete",
            calls=[call("get_time", {}, "toolu_RS0208a"), call("list_files", {}, "toolu_RS0208b")],
        )
    )

    a = Ant("msg_RS0209")
    add(
        Stream(
            file="anthropic/input_in_block_start_no_deltas.sse",
            vendor="litellm",
            model="gemini/gemma-4-31b-it",
            issue="BerriAI/litellm#25390",
            notes="A translator puts the whole input in content_block_start.content_block.input "
            "and sends no input_json_delta. The call's args are that input.",
            blocks=[
                a.start(),
                *a.tool(0, "toolu_RS0209", "get_measurement", [], start_input=w),
                *a.end(),
            ],
            outcome="complete",
            calls=[call("get_measurement", w, "toolu_RS0209")],
        )
    )

    a = Ant("msg_RS0210")
    add(
        Stream(
            file="anthropic/max_tokens_mid_tool_use.sse",
            issue="pydantic/pydantic-ai#3118",
            notes="max_tokens reached while streaming a tool_use: Anthropic still closes the "
            "block, then sends message_delta stop_reason max_tokens and message_stop. The input "
            '\'{"title": "example with retry"\' is cut: the outcome is truncated, never a '
            "repaired call. Because content_block_stop comes before the stop reason, input "
            "that does not parse is held until the stop reason arrives; with max_tokens it is "
            "the partial call of the truncation error.",
            blocks=[
                a.start(),
                *a.tool(
                    0, "toolu_RS0210", "create_file", ["", '{"title": "example', ' with retry"']
                ),
                *a.end("max_tokens"),
            ],
            outcome="truncated",
            partial_calls=[
                {
                    "name": "create_file",
                    "call_id": "toolu_RS0210",
                    "args_prefix": '{"title": "example with retry"',
                }
            ],
            calls=[],
        )
    )

    a = Ant("msg_RS0211")
    result_block = {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_RS0211",
        "content": [
            {
                "type": "web_search_result",
                "title": "Ada Lovelace",
                "url": "https://en.wikipedia.org/wiki/Ada_Lovelace",
                "encrypted_content": "EqgfCioIARgB",
                "page_age": None,
            }
        ],
    }
    add(
        Stream(
            file="anthropic/server_tool_use_then_client_call.sse",
            notes="A server_tool_use (web_search) block with its input streamed, its "
            "web_search_tool_result block, then one client tool_use. Only the client call is "
            "reported; the server tool is run by Anthropic.",
            blocks=[
                a.start(),
                *a.tool(
                    0,
                    "srvtoolu_RS0211",
                    "web_search",
                    ['{"query": "Ada Lovelace height"}'],
                    kind="server_tool_use",
                ),
                ev({"type": "content_block_start", "index": 1, "content_block": result_block}),
                ev({"type": "content_block_stop", "index": 1}),
                *a.tool(2, "toolu_RS0211", "get_measurement", hp),
                *a.end(),
            ],
            outcome="complete",
            calls=[call("get_measurement", h, "toolu_RS0211")],
        )
    )

    a = Ant("msg_RS0212")
    body = "第一行\u2028deuxième ligne — Zoë 😀"
    add(
        Stream(
            file="anthropic/u2028_and_non_ascii_in_input.sse",
            issue="openai/openai-python#1230",
            notes="Text and tool input with a raw U+2028, CJK, accents and an emoji, the input "
            "split across deltas in the middle of the CJK run.",
            blocks=[
                a.start(),
                *a.text(0, ["Note\u2028enregistrée ✅"]),
                *a.tool(
                    1,
                    "toolu_RS0212",
                    "save_note",
                    ['{"body": "第一', '行\u2028deuxième ligne — Zoë 😀"}'],
                ),
                *a.end(),
            ],
            outcome="complete",
            calls=[call("save_note", {"body": body}, "toolu_RS0212")],
            text="Note\u2028enregistrée ✅",
        )
    )

    a = Ant("msg_RS0213")
    add(
        Stream(
            file="anthropic/parsable_input_then_eof.sse",
            issue="vercel/ai#13137",
            notes='The input received parses as JSON (\'{"path": "/tmp"}\') but the body ends '
            "before content_block_stop and message_stop: truncated, the call is not released.",
            blocks=[
                a.start(),
                *a.tool(0, "toolu_RS0213", "delete_path", ['{"path": "/tmp"}'], stop=False),
            ],
            outcome="truncated",
            calls=[],
            partial_calls=[partial("delete_path", "toolu_RS0213", '{"path": "/tmp"}')],
        )
    )

    a = Ant("msg_RS0214")
    add(
        Stream(
            file="anthropic/crlf_line_endings.sse",
            vendor="anthropic-compatible",
            notes="The one-call shape framed with CRLF line endings (a proxy re-framing the "
            "stream).",
            blocks=[a.start(), *a.tool(0, "toolu_RS0214", "get_measurement", wp), *a.end()],
            eol="\r\n",
            outcome="complete",
            calls=[call("get_measurement", w, "toolu_RS0214")],
        )
    )

    a = Ant("msg_RS0215")
    thought = [
        "The person asks for Ada Lovelace's height.",
        " The get_measurement tool gives it; the metric is",
        " height. I will make the function call.",
    ]
    thinking_start = {"type": "thinking", "thinking": "", "signature": ""}
    blocks = [a.start(), PING]
    blocks.append(ev({"type": "content_block_start", "index": 0, "content_block": thinking_start}))
    blocks += [
        ev(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": piece},
            }
        )
        for piece in thought
    ]
    blocks.append(
        ev(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": "SigRS0215+handMade/Zm9vYmFy=="},
            }
        )
    )
    blocks.append(ev({"type": "content_block_stop", "index": 0}))
    blocks += a.text(1, ["I'll look", " that up."])
    blocks += [*a.tool(2, "toolu_RS0215", "get_measurement", hp), *a.end()]
    add(
        Stream(
            file="anthropic/thinking_then_tool_use.sse",
            notes="Extended thinking: a thinking block (empty thinking and signature at its "
            "start, three thinking_delta pieces, one signature_delta), a text block, then one "
            "tool_use block. The thinking block must be kept whole with its signature, to be "
            "sent back before the call it preceded.",
            blocks=blocks,
            outcome="complete",
            calls=[call("get_measurement", h, "toolu_RS0215")],
            text="I'll look that up.",
        )
    )
    return out


# --------------------------------------------------------------------------------------
# Gemini.


class Gem:
    """Builds the events of one Gemini ``streamGenerateContent?alt=sse`` stream."""

    def __init__(self, rid: str, model: str = GEM_MODEL) -> None:
        self.rid = rid
        self.model = model

    def obj(
        self, parts: list[Any] | None, finish: str | None = None, **cand: Any
    ) -> dict[str, Any]:
        """One GenerateContentResponse with one candidate."""
        candidate: dict[str, Any] = {}
        if parts is not None:
            candidate["content"] = {"parts": parts, "role": "model"}
        if finish is not None:
            candidate["finishReason"] = finish
        candidate.update(cand)
        candidate["index"] = 0
        usage = {"promptTokenCount": 60, "candidatesTokenCount": 12, "totalTokenCount": 72}
        return {
            "candidates": [candidate],
            "usageMetadata": usage,
            "modelVersion": self.model,
            "responseId": self.rid,
        }

    def ev(self, parts: list[Any] | None, finish: str | None = None, **cand: Any) -> Block:
        """One block."""
        return g(self.obj(parts, finish, **cand))


def fcall(name: str, args: Any = _MISSING, id: Any = _MISSING, **more: Any) -> dict[str, Any]:
    """A ``functionCall`` part."""
    fc: dict[str, Any] = {"name": name}
    if args is not _MISSING:
        fc["args"] = args
    if id is not _MISSING:
        fc["id"] = id
    fc.update(more)
    return {"functionCall": fc}


def gemini_streams() -> list[Stream]:
    """The Gemini streams (CRLF between lines and events, as Gemini sends)."""
    out: list[Stream] = []
    add = out.append
    h = {"person": "Ada Lovelace", "metric": "height"}
    w = {"person": "Ada Lovelace", "metric": "weight"}
    crlf = "\r\n"

    m = Gem("RS0301")
    add(
        Stream(
            file="gemini/no_calls_text.sse",
            notes="Three text chunks, the last with finishReason STOP. CRLF framing.",
            blocks=[
                m.ev([{"text": "Ada Lovelace"}]),
                m.ev([{"text": " was born in"}]),
                m.ev([{"text": " 1815."}], "STOP"),
            ],
            eol=crlf,
            outcome="no_calls",
            calls=[],
            text="Ada Lovelace was born in 1815.",
        )
    )

    m = Gem("RS0302")
    add(
        Stream(
            file="gemini/one_call_no_id.sse",
            notes="One whole functionCall part without an id (call_id null), with a "
            "thoughtSignature, in the same chunk as finishReason STOP.",
            blocks=[
                m.ev([dict(fcall("get_measurement", h), thoughtSignature="CiRSUzAzMDI=")], "STOP")
            ],
            eol=crlf,
            outcome="complete",
            calls=[call("get_measurement", h, None)],
        )
    )

    m = Gem("RS0303")
    add(
        Stream(
            file="gemini/two_calls_height_weight_one_event.sse",
            notes="Two functionCall parts with the same name in ONE chunk, no ids: two calls, "
            "height then weight, each with call_id null.",
            blocks=[m.ev([fcall("get_measurement", h), fcall("get_measurement", w)], "STOP")],
            eol=crlf,
            outcome="complete",
            calls=[call("get_measurement", h, None), call("get_measurement", w, None)],
        )
    )

    m = Gem("RS0304", "gemini-3-pro-preview")
    add(
        Stream(
            file="gemini/same_name_calls_separate_chunks_with_ids.sse",
            model="gemini-3-pro-preview",
            issue="NousResearch/hermes-agent#57939",
            notes="Gemini 3: each call to the same tool in its own chunk, each with its own "
            "functionCall.id (kept exactly, echoed back in functionResponse), then a final "
            "chunk with only finishReason. Two calls; args never concatenate.",
            blocks=[
                m.ev([fcall("get_measurement", h, id="u5rk0d1h")]),
                m.ev([fcall("get_measurement", w, id="9qz3vx2m")]),
                m.ev(None, "STOP"),
            ],
            eol=crlf,
            outcome="complete",
            calls=[
                call("get_measurement", h, "u5rk0d1h"),
                call("get_measurement", w, "9qz3vx2m"),
            ],
        )
    )

    m = Gem("RS0305")
    add(
        Stream(
            file="gemini/same_name_calls_separate_chunks_no_id.sse",
            issue="NousResearch/hermes-agent#57939",
            notes="Each call to the same tool in its own chunk, no ids: two calls with call_id "
            "null (no synthetic id), not one merged call and not a truncation.",
            blocks=[
                m.ev([{"text": "Looking both up."}]),
                m.ev([fcall("get_measurement", h)]),
                m.ev([fcall("get_measurement", w)], "STOP"),
            ],
            eol=crlf,
            outcome="complete",
            calls=[call("get_measurement", h, None), call("get_measurement", w, None)],
            text="Looking both up.",
        )
    )

    m = Gem("RS0306")
    add(
        Stream(
            file="gemini/truncated_no_finish_reason.sse",
            notes="A functionCall chunk without finishReason, then the body stops in the middle "
            "of the next data line. No candidate finishReason ever arrived: truncated.",
            blocks=[m.ev([fcall("get_measurement", h)])],
            raw_tail='data: {"candidates": [{"content": {"parts": [{"functionCall": {"na',
            eol=crlf,
            outcome="truncated",
            calls=[],
        )
    )

    m = Gem("RS0307")
    add(
        Stream(
            file="gemini/max_tokens.sse",
            notes="Text chunks, then finishReason MAX_TOKENS: truncated.",
            blocks=[
                m.ev([{"text": "Let me think about the"}]),
                m.ev([{"text": " measure"}], "MAX_TOKENS"),
            ],
            eol=crlf,
            outcome="truncated",
            calls=[],
        )
    )

    m = Gem("RS0308")
    add(
        Stream(
            file="gemini/error_object_mid_stream.sse",
            notes="After a text chunk the stream carries a google.rpc error object "
            '({"error": {code 503, status UNAVAILABLE}}): provider_error.',
            blocks=[
                m.ev([{"text": "Checking"}]),
                g(
                    {
                        "error": {
                            "code": 503,
                            "message": "The model is overloaded. Please try again later.",
                            "status": "UNAVAILABLE",
                        }
                    }
                ),
            ],
            eol=crlf,
            outcome="provider_error",
            calls=[],
        )
    )

    m = Gem("RS0309")
    add(
        Stream(
            file="gemini/malformed_function_call.sse",
            notes="The candidate ends with finishReason MALFORMED_FUNCTION_CALL and a "
            "finishMessage, no parts: provider_error.",
            blocks=[
                m.ev(
                    None,
                    "MALFORMED_FUNCTION_CALL",
                    finishMessage="Malformed function call: get_measurement(person=Ada",
                )
            ],
            eol=crlf,
            outcome="provider_error",
            calls=[],
        )
    )

    m = Gem("RS0310")
    add(
        Stream(
            file="gemini/finish_reason_safety.sse",
            notes="A text chunk, then the candidate stops with finishReason SAFETY and "
            "safetyRatings: provider_error.",
            blocks=[
                m.ev([{"text": "Sure"}]),
                m.ev(
                    None,
                    "SAFETY",
                    safetyRatings=[
                        {
                            "category": "HARM_CATEGORY_DANGEROUS_CONTENT",
                            "probability": "HIGH",
                            "blocked": True,
                        }
                    ],
                ),
            ],
            eol=crlf,
            outcome="provider_error",
            calls=[],
        )
    )

    add(
        Stream(
            file="gemini/prompt_blocked.sse",
            notes="The prompt itself is blocked: one chunk with promptFeedback.blockReason "
            "SAFETY and no candidates: provider_error.",
            blocks=[
                g(
                    {
                        "promptFeedback": {"blockReason": "SAFETY"},
                        "usageMetadata": {"promptTokenCount": 9, "totalTokenCount": 9},
                        "modelVersion": GEM_MODEL,
                        "responseId": "RS0311",
                    }
                )
            ],
            eol=crlf,
            outcome="provider_error",
            calls=[],
        )
    )

    m = Gem("RS0312")
    add(
        Stream(
            file="gemini/args_as_json_string.sse",
            vendor="google-compatible",
            notes="A proxy sends functionCall.args as a JSON-encoded string instead of an "
            "object; tolerated: parsed into the object.",
            blocks=[m.ev([fcall("get_measurement", json.dumps(w))], "STOP")],
            eol=crlf,
            outcome="complete",
            calls=[call("get_measurement", w, None)],
        )
    )

    m = Gem("RS0313")
    add(
        Stream(
            file="gemini/data_without_space_after_colon.sse",
            vendor="google-compatible",
            issue="googleapis/python-genai#2584",
            notes="Every line is 'data:{...}' with no space after the colon (valid SSE).",
            blocks=[
                ["data:" + line[len("data: ") :] for line in b]
                for b in (
                    m.ev([{"text": "One moment."}]),
                    m.ev([fcall("get_measurement", h)], "STOP"),
                )
            ],
            eol=crlf,
            outcome="complete",
            calls=[call("get_measurement", h, None)],
            text="One moment.",
        )
    )

    m = Gem("RS0314")
    tricky = {"pattern": '}{"a": 1}', "code": 'if (x) { return "}"; }', "path": "C:\\tmp\\{x}"}
    add(
        Stream(
            file="gemini/braces_and_quotes_inside_strings.sse",
            issue="googleapis/python-genai#2042",
            notes="Argument strings full of braces, escaped quotes and backslashes, which fool "
            "brace-counting readers; the non-SSE JSON-array framing of that bug does not apply "
            "to alt=sse, the string content does.",
            blocks=[m.ev([fcall("search_code", tricky)], "STOP")],
            eol=crlf,
            outcome="complete",
            calls=[call("search_code", tricky, None)],
        )
    )

    m = Gem("RS0315")
    args = {"city": "São Paulo", "query": "天気 🌦️", "ascii": "plain"}
    add(
        Stream(
            file="gemini/non_ascii_args.sse",
            notes="Non-ASCII argument values (accents, CJK, an emoji with a variation selector) "
            "as raw UTF-8; the last chunk has only finishReason and no content.parts.",
            issue="agentjido/req_llm#638",
            blocks=[
                m.ev([{"text": "Voilà "}]),
                m.ev([fcall("get_weather", args)]),
                m.ev(None, "STOP"),
            ],
            eol=crlf,
            outcome="complete",
            calls=[call("get_weather", args, None)],
            text="Voilà ",
        )
    )

    m = Gem("RS0316", "gemini-3-flash-preview")

    def pa(path: str, cont: bool = False, **value: Any) -> dict[str, Any]:
        arg: dict[str, Any] = {"jsonPath": path}
        arg.update(value)
        if cont:
            arg["willContinue"] = True
        return arg

    def partial_part(*args: dict[str, Any]) -> Block:
        return m.ev([{"functionCall": {"partialArgs": list(args), "willContinue": True}}])

    opening = {"functionCall": {"name": "get_measurement", "willContinue": True}}
    add(
        Stream(
            file="gemini/vertex_partial_args_height_weight.sse",
            vendor="google-vertex",
            model="gemini-3-flash-preview",
            doc="vertex",
            notes="Vertex streamFunctionCallArguments: two calls to the same tool, each opened "
            "by a part with name and willContinue, arguments streamed as partialArgs (string "
            "values in pieces with willContinue, closed by a piece without it), each call "
            "closed by an empty functionCall {}. No ids.",
            blocks=[
                m.ev([opening]),
                partial_part(pa("$.person", True, stringValue="Ada ")),
                partial_part(pa("$.person", stringValue="Lovelace")),
                partial_part(
                    pa("$.metric", True, stringValue="hei"), pa("$.metric", stringValue="ght")
                ),
                m.ev([{"functionCall": {}}]),
                m.ev([opening]),
                partial_part(pa("$.person", stringValue="Ada Lovelace")),
                partial_part(
                    pa("$.metric", True, stringValue="weight"), pa("$.metric", stringValue="")
                ),
                m.ev([{"functionCall": {}}]),
                m.ev(None, "STOP"),
            ],
            eol=crlf,
            outcome="complete",
            calls=[call("get_measurement", h, None), call("get_measurement", w, None)],
        )
    )
    return out


# --------------------------------------------------------------------------------------
# Amazon Bedrock: AWS's binary event stream, encoded here on its own.

Message = tuple[str, str, dict[str, Any]]
"""One event-stream message before encoding: its ``:message-type`` (``event`` or
``exception``), its ``:event-type`` or ``:exception-type``, and its JSON payload."""

PAD_ALPHABET = string.ascii_lowercase + string.ascii_uppercase + string.digits
"""Bedrock pads each event's payload with a ``"p"`` field of random length (a prefix of
this alphabet), so that the size of a message does not tell its content."""

STRING_HEADER = 7
"""The value type of a string header ("Event stream encoding": 7 = string, with a 2-byte
length before its UTF-8 bytes)."""


def es_header(name: str, value: str) -> bytes:
    """One string header: name length (1 byte), name, type 7, value length (2 bytes), value."""
    raw_name, raw_value = name.encode(), value.encode()
    return (
        bytes([len(raw_name)])
        + raw_name
        + bytes([STRING_HEADER])
        + struct.pack(">H", len(raw_value))
        + raw_value
    )


def es_message(headers: list[tuple[str, str]], payload: bytes) -> bytes:
    """One whole message: the prelude (total length, headers length, the CRC32 of those 8
    bytes), the headers, the payload, then the CRC32 of everything before it."""
    section = b"".join(es_header(n, v) for n, v in headers)
    lengths = struct.pack(">II", 16 + len(section) + len(payload), len(section))
    head = lengths + struct.pack(">I", zlib.crc32(lengths))
    body = head + section + payload
    return body + struct.pack(">I", zlib.crc32(body))


def event(name: str, payload: dict[str, Any]) -> Message:
    """An ``event`` message of type ``name``."""
    return ("event", name, payload)


def exception(name: str, message: str, **more: Any) -> Message:
    """An ``exception`` message: a modeled error, its kind in ``:exception-type``."""
    return ("exception", name, {"message": message, **more})


@dataclass(frozen=True, slots=True, kw_only=True)
class AwsStream:
    """One hand-made Bedrock response body (an event stream) and its expected result."""

    file: str
    """Path under ``recorded_streams/``: ``<dialect>/<name>.eventstream``."""

    notes: str
    """What the stream shows and why its expectation is what it is."""

    messages: list[Message]
    """The messages, in order."""

    outcome: str
    """``complete``, ``no_calls``, ``truncated`` or ``provider_error``."""

    calls: list[dict[str, Any]]
    """The expected client calls, in order."""

    partial_calls: list[dict[str, Any]] | None = None
    """For truncated streams: the call that was cut, with its raw argument text."""

    text: str | None = None
    """The visible assistant text, where it matters."""

    invalid_arguments: tuple[int, ...] = ()
    """Positions (in ``calls``) of the calls that complete with an ``arguments_error``."""

    error: dict[str, Any] | None = None
    """For ``provider_error``: the error's ``code`` and whether it is ``retryable``."""

    issue: str | None = None
    """The bug report or documented behaviour the stream replays."""

    vendor: str | None = None
    """Who would serve such a stream (``None``: ``aws-bedrock``)."""

    model: str | None = None
    """The model id of the request (ConverseStream never names it in the stream)."""

    doc: str | None = None
    """Key into ``DOCS`` (``None``: the dialect's)."""

    cut: int | None = None
    """Keep only this many bytes of the last message: a body cut inside a message."""

    def render(self) -> bytes:
        """Return the body bytes. The padding is drawn from a generator seeded by the file
        name, so the bytes are the same at every run."""
        rng = random.Random(self.file)
        out = []
        for kind, name, payload in self.messages:
            if kind == "event":
                # "p" is written last, as Bedrock writes it after the event's own fields.
                body = {**payload, "p": PAD_ALPHABET[: rng.randint(1, len(PAD_ALPHABET))]}
                headers = [(":event-type", name)]
            else:
                body = payload
                headers = [(":exception-type", name)]
            headers += [(":content-type", "application/json"), (":message-type", kind)]
            out.append(es_message(headers, js(body).encode("utf-8")))
        if self.cut is not None:
            out[-1] = out[-1][: self.cut]
        return b"".join(out)

    def expected(self) -> dict[str, Any]:
        """Return the ``.expected.json`` object."""
        return expected_object(self)


USAGE = {"inputTokens": 412, "outputTokens": 61, "totalTokens": 473}


class Conv:
    """Builds the messages of one ConverseStream response."""

    def start(self) -> Message:
        """``messageStart``."""
        return event("messageStart", {"role": "assistant"})

    def text(self, index: int, pieces: list[str], *, stop: bool = True) -> list[Message]:
        """A text block: no ``contentBlockStart`` (a text block opens with its first
        delta), a ``delta.text`` per piece, ``contentBlockStop``."""
        out = [
            event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": p}})
            for p in pieces
        ]
        if stop:
            out.append(self.stop(index))
        return out

    def tool(
        self,
        index: int,
        tool_id: str,
        name: str,
        pieces: list[str],
        *,
        stop: bool = True,
        kind: str | None = "tool_use",
    ) -> list[Message]:
        """A toolUse block: ``contentBlockStart`` with ``start.toolUse`` (its ``type``
        only when ``kind`` is given, as Nova leaves it out), one ``delta.toolUse.input``
        string per piece, ``contentBlockStop``."""
        start: dict[str, Any] = {"toolUseId": tool_id, "name": name}
        if kind is not None:
            start["type"] = kind
        out = [
            event("contentBlockStart", {"contentBlockIndex": index, "start": {"toolUse": start}})
        ]
        out += [
            event(
                "contentBlockDelta",
                {"contentBlockIndex": index, "delta": {"toolUse": {"input": p}}},
            )
            for p in pieces
        ]
        if stop:
            out.append(self.stop(index))
        return out

    def reasoning(self, index: int, **members: Any) -> Message:
        """One ``delta.reasoningContent`` (``text``, ``signature`` or ``redactedContent``)."""
        return event(
            "contentBlockDelta",
            {"contentBlockIndex": index, "delta": {"reasoningContent": members}},
        )

    def stop(self, index: int) -> Message:
        """``contentBlockStop``."""
        return event("contentBlockStop", {"contentBlockIndex": index})

    def end(self, reason: str = "tool_use", *, metadata: bool = True) -> list[Message]:
        """``messageStop`` with its ``stopReason``, then ``metadata`` (usage and latency)."""
        out = [event("messageStop", {"stopReason": reason})]
        if metadata:
            out.append(event("metadata", {"usage": USAGE, "metrics": {"latencyMs": 1834}}))
        return out


def converse_streams() -> list[AwsStream]:
    """The ConverseStream streams."""
    out: list[AwsStream] = []
    add = out.append
    h = {"person": "Ada Lovelace", "metric": "height"}
    w = {"person": "Ada Lovelace", "metric": "weight"}
    # Claude through Converse: an empty first input fragment, then the JSON in pieces.
    hp = ["", '{"person": "Ada', ' Lovelace", "metric"', ': "height"}']
    wp = ["", '{"person": "Ada', ' Lovelace", "metric"', ': "weight"}']
    c = Conv()

    add(
        AwsStream(
            file="bedrock_converse/text_only.eventstream",
            notes="A text-only turn: messageStart, three text deltas at block 0 with no "
            "contentBlockStart (Converse opens a text block with its first delta), "
            "contentBlockStop, messageStop end_turn, metadata with the usage.",
            messages=[c.start(), *c.text(0, ["Ada was", " born in", " 1815."]), *c.end("end_turn")],
            outcome="no_calls",
            calls=[],
            text="Ada was born in 1815.",
        )
    )

    add(
        AwsStream(
            file="bedrock_converse/text_then_tool_empty_first_fragment.eventstream",
            notes="Text at block 0, then a toolUse block at 1 whose input starts with an "
            "empty fragment and arrives in three more, as Claude sends it; stopReason "
            "tool_use. The call is released whole with the toolUseId as its id.",
            messages=[
                c.start(),
                *c.text(0, ["I'll look", " that up."]),
                *c.tool(1, "tooluse_RS0601aBcDeFgHiJkLmNo", "get_measurement", hp),
                *c.end(),
            ],
            outcome="complete",
            calls=[call("get_measurement", h, "tooluse_RS0601aBcDeFgHiJkLmNo")],
            text="I'll look that up.",
        )
    )

    add(
        AwsStream(
            file="bedrock_converse/two_calls_height_weight.eventstream",
            notes="Two toolUse blocks for the same tool (height at block 0, weight at block "
            "1), each with its own toolUseId; released in block order.",
            messages=[
                c.start(),
                *c.tool(0, "tooluse_RS0602height0000000", "get_measurement", hp),
                *c.tool(1, "tooluse_RS0602weight0000000", "get_measurement", wp),
                *c.end(),
            ],
            outcome="complete",
            calls=[
                call("get_measurement", h, "tooluse_RS0602height0000000"),
                call("get_measurement", w, "tooluse_RS0602weight0000000"),
            ],
        )
    )

    add(
        AwsStream(
            file="bedrock_converse/zero_argument_tools.eventstream",
            notes="Two tools without parameters: the first toolUse block has no input delta "
            "at all, the second only an empty fragment. Both are calls with args {}.",
            messages=[
                c.start(),
                *c.tool(0, "tooluse_RS0603time0000000000", "get_time", []),
                *c.tool(1, "tooluse_RS0603date0000000000", "get_date", [""]),
                *c.end(),
            ],
            outcome="complete",
            calls=[
                call("get_time", {}, "tooluse_RS0603time0000000000"),
                call("get_date", {}, "tooluse_RS0603date0000000000"),
            ],
        )
    )

    add(
        AwsStream(
            file="bedrock_converse/message_stop_without_metadata.eventstream",
            notes="The body ends after messageStop, without the metadata event that AWS "
            "sends last in every ConverseStream body: it was cut, as an SSE body cut before "
            "its last event is. The outcome is truncated; the call messageStop released "
            "went out with a read or rides on the error, never a partial call.",
            messages=[
                c.start(),
                *c.tool(0, "tooluse_RS0603nometa00000000", "get_time", ["{}"]),
                *c.end(metadata=False),
            ],
            outcome="truncated",
            calls=[],
        )
    )

    nova_args = {"city": "São Paulo", "units": "celsius", "days": 3}
    add(
        AwsStream(
            file="bedrock_converse/nova_whole_input_one_fragment.eventstream",
            model=NOVA_MODEL,
            notes="Nova's shape: a <thinking> preamble as text, then a toolUse block whose "
            "start has no type and whose whole input (with a non-ASCII value) arrives in one "
            "fragment.",
            messages=[
                c.start(),
                *c.text(0, ["<thinking>The user wants", " the forecast.</thinking>\n"]),
                *c.tool(
                    1,
                    "tooluse_RS0604nova000000000",
                    "get_forecast",
                    [json.dumps(nova_args, ensure_ascii=False)],
                    kind=None,
                ),
                *c.end(),
            ],
            outcome="complete",
            calls=[call("get_forecast", nova_args, "tooluse_RS0604nova000000000")],
            text="<thinking>The user wants the forecast.</thinking>\n",
        )
    )

    add(
        AwsStream(
            file="bedrock_converse/reasoning_signature_then_call.eventstream",
            notes="Extended thinking through Converse: reasoningContent text in three deltas "
            "then one signature delta at block 0, then a toolUse block. The reasoning is not "
            "visible text; the call is complete.",
            messages=[
                c.start(),
                c.reasoning(0, text="The user asks"),
                c.reasoning(0, text=" for Ada's height;"),
                c.reasoning(0, text=" call the tool."),
                c.reasoning(0, signature="SigRS0605+handMade/Q29udmVyc2U="),
                c.stop(0),
                *c.tool(1, "tooluse_RS0605afterThought0", "get_measurement", hp),
                *c.end(),
            ],
            outcome="complete",
            calls=[call("get_measurement", h, "tooluse_RS0605afterThought0")],
            text="",
        )
    )

    add(
        AwsStream(
            file="bedrock_converse/redacted_reasoning_then_call.eventstream",
            notes="A reasoning block whose content was redacted by the provider "
            "(reasoningContent.redactedContent, a base64 blob in two deltas), then text, then "
            "a toolUse block. The redacted block is no text and no call.",
            messages=[
                c.start(),
                c.reasoning(0, redactedContent="UmVkYWN0ZWRSUzA2MDZ"),
                c.reasoning(0, redactedContent="oYW5kTWFkZQ=="),
                c.stop(0),
                *c.text(1, ["Checking."]),
                *c.tool(2, "tooluse_RS0606redacted00000", "get_measurement", wp),
                *c.end(),
            ],
            outcome="complete",
            calls=[call("get_measurement", w, "tooluse_RS0606redacted00000")],
            text="Checking.",
        )
    )

    add(
        AwsStream(
            file="bedrock_converse/max_tokens_mid_tool_use.eventstream",
            notes="maxTokens reached inside a toolUse block: Bedrock closes the block, then "
            'messageStop stopReason max_tokens. The input \'{"title": "example with retry"\' '
            "is cut: truncated, the cut call given as the partial call, never repaired.",
            messages=[
                c.start(),
                *c.text(0, ["Writing the file."]),
                *c.tool(
                    1,
                    "tooluse_RS0607maxTokens000",
                    "create_file",
                    ["", '{"title": "example', ' with retry"'],
                ),
                *c.end("max_tokens"),
            ],
            outcome="truncated",
            partial_calls=[
                partial(
                    "create_file", "tooluse_RS0607maxTokens000", '{"title": "example with retry"'
                )
            ],
            calls=[],
        )
    )

    cut_messages = [
        c.start(),
        *c.tool(0, "tooluse_RS0608cutMessage00", "get_measurement", hp[:3], stop=False),
    ]
    add(
        AwsStream(
            file="bedrock_converse/cut_inside_a_message.eventstream",
            notes="The connection drops inside the payload of a toolUse input delta (the last "
            "message keeps 40 of its bytes): no messageStop, so the stream is truncated, and "
            "the call whose input was being streamed is the partial call with the input of "
            "the whole messages before the cut.",
            messages=cut_messages,
            cut=40,
            outcome="truncated",
            partial_calls=[
                partial("get_measurement", "tooluse_RS0608cutMessage00", '{"person": "Ada')
            ],
            calls=[],
        )
    )

    add(
        AwsStream(
            file="bedrock_converse/cut_inside_a_prelude.eventstream",
            notes="A first call completes, a second one streams two fragments and closes, "
            "then the body ends seven bytes into the next message's 12-byte prelude (inside "
            "its CRC): truncated. The first call was released when the second block started "
            "(generation went on, so the limit did not cut it); the second, closed but not "
            "proven whole (no later block, no stop reason), is the partial call.",
            messages=[
                c.start(),
                *c.tool(0, "tooluse_RS0609first0000000", "get_measurement", hp),
                *c.tool(1, "tooluse_RS0609second000000", "get_measurement", wp[:2]),
            ],
            cut=7,
            outcome="truncated",
            partial_calls=[
                partial("get_measurement", "tooluse_RS0609second000000", '{"person": "Ada')
            ],
            calls=[],
        )
    )

    add(
        AwsStream(
            file="bedrock_converse/throttling_exception_mid_stream.eventstream",
            notes="A throttlingException message (:message-type exception) after two text "
            "deltas: the provider's error, retryable.",
            messages=[
                c.start(),
                *c.text(0, ["Ada was", " born"], stop=False),
                exception(
                    "throttlingException",
                    "Too many tokens, please wait before trying again.",
                ),
            ],
            outcome="provider_error",
            calls=[],
            error={"code": "ThrottlingException", "retryable": True},
        )
    )

    add(
        AwsStream(
            file="bedrock_converse/model_stream_error_mid_tool_use.eventstream",
            notes="A modelStreamErrorException (the model's own stream failed; the payload "
            "has originalStatusCode and originalMessage) in the middle of a toolUse block's "
            "input: the provider's error, retryable, and the half call is never released.",
            messages=[
                c.start(),
                *c.tool(0, "tooluse_RS0611streamError0", "get_measurement", hp[:2], stop=False),
                exception(
                    "modelStreamErrorException",
                    "The model stream encountered an error.",
                    originalStatusCode=500,
                    originalMessage="Internal error while generating.",
                ),
            ],
            outcome="provider_error",
            calls=[],
            error={"code": "ModelStreamErrorException", "retryable": True},
        )
    )

    add(
        AwsStream(
            file="bedrock_converse/validation_exception_first.eventstream",
            notes="A validationException as the only message (before messageStart): the "
            "request was at fault, so the error is not retryable; the dialect is still "
            "detected from it.",
            messages=[
                exception(
                    "validationException",
                    "The model returned the following errors: messages: "
                    "text content blocks must be non-empty",
                ),
            ],
            outcome="provider_error",
            calls=[],
            error={"code": "ValidationException", "retryable": False},
        )
    )

    add(
        AwsStream(
            file="bedrock_converse/guardrail_intervened.eventstream",
            notes="A guardrail replaced the answer: the text block holds the guardrail's "
            "blocked message and messageStop has stopReason guardrail_intervened. The turn "
            "ends normally with no call.",
            messages=[
                c.start(),
                *c.text(0, ["Sorry, the model cannot answer this question."]),
                *c.end("guardrail_intervened"),
            ],
            outcome="no_calls",
            calls=[],
            text="Sorry, the model cannot answer this question.",
        )
    )

    result_start = {"toolResult": {"toolUseId": "tooluse_RS0614codeInterp00", "status": "success"}}
    add(
        AwsStream(
            file="bedrock_converse/server_tool_use_then_client_call.eventstream",
            model=NOVA_MODEL,
            notes="A toolUse block with type server_tool_use (a tool Bedrock runs itself, the "
            "code interpreter) with its input streamed, its toolResult block, text, then one "
            "client toolUse. Only the client call is reported.",
            messages=[
                c.start(),
                *c.tool(
                    0,
                    "tooluse_RS0614codeInterp00",
                    "nova_code_interpreter",
                    ['{"snippet": "print(1.65 * 100)"}'],
                    kind="server_tool_use",
                ),
                event("contentBlockStart", {"contentBlockIndex": 1, "start": result_start}),
                event(
                    "contentBlockDelta",
                    {"contentBlockIndex": 1, "delta": {"toolResult": [{"text": "165.0"}]}},
                ),
                c.stop(1),
                *c.text(2, ["165 cm. Now the weight."]),
                *c.tool(3, "tooluse_RS0614clientCall00", "get_measurement", wp),
                *c.end(),
            ],
            outcome="complete",
            calls=[call("get_measurement", w, "tooluse_RS0614clientCall00")],
            text="165 cm. Now the weight.",
        )
    )

    cited = {
        "title": "Ada Lovelace",
        "sourceContent": [{"text": "born 10 December 1815 in London"}],
        "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 31}},
    }
    add(
        AwsStream(
            file="bedrock_converse/citations_in_text.eventstream",
            notes="A text block answered from a document: text deltas with a citation delta "
            "(delta.citation: title, sourceContent, documentChar location) between them at "
            "the same block index. The citation is no text and no call.",
            messages=[
                c.start(),
                *c.text(0, ["Ada was born in 1815"], stop=False),
                event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"citation": cited}}),
                *c.text(0, [", in London."]),
                *c.end("end_turn"),
            ],
            outcome="no_calls",
            calls=[],
            text="Ada was born in 1815, in London.",
        )
    )

    add(
        AwsStream(
            file="bedrock_converse/internal_server_exception_after_a_closed_call.eventstream",
            notes="An internalServerException after a toolUse block closed and before "
            "messageStop: the provider's error, retryable. The closed call was not yet "
            "proven whole (no later block, no stop reason), so the error carries no call.",
            messages=[
                c.start(),
                *c.tool(0, "tooluse_RS0616closedThen500", "get_measurement", hp),
                exception(
                    "internalServerException",
                    "The server encountered an internal error while processing the request.",
                ),
            ],
            outcome="provider_error",
            calls=[],
            error={"code": "InternalServerException", "retryable": True},
        )
    )
    return out


class Invoke:
    """Builds the messages of one InvokeModelWithResponseStream response of an Anthropic
    model: each Anthropic Messages event (as :class:`Ant` writes it) base64-encoded in a
    ``chunk`` event's ``bytes``."""

    def __init__(self, mid: str) -> None:
        self.ant = Ant(mid)

    @staticmethod
    def chunks(blocks: list[Block], *, metrics: bool = True) -> list[Message]:
        """The ``chunk`` events of SSE blocks: each block's ``data:`` JSON, as bytes.
        Bedrock adds ``amazon-bedrock-invocationMetrics`` to ``message_stop``."""
        out = []
        for block in blocks:
            obj = json.loads(next(line for line in block if line.startswith("data: "))[6:])
            if obj["type"] == "message_stop" and metrics:
                obj["amazon-bedrock-invocationMetrics"] = {
                    "inputTokenCount": 412,
                    "outputTokenCount": 61,
                    "invocationLatency": 1834,
                    "firstByteLatency": 402,
                }
            raw = js(obj).encode("utf-8")
            out.append(event("chunk", {"bytes": base64.b64encode(raw).decode("ascii")}))
        return out


def invoke_anthropic_streams() -> list[AwsStream]:
    """The InvokeModelWithResponseStream streams of Anthropic models."""
    out: list[AwsStream] = []
    add = out.append
    h = {"person": "Ada Lovelace", "metric": "height"}
    w = {"person": "Ada Lovelace", "metric": "weight"}
    hp = ["", '{"person": "Ada', ' Lovelace", "metric"', ': "height"}']
    wp = ["", '{"person": "Ada', ' Lovelace", "metric"', ': "weight"}']

    v = Invoke("msg_bdrk_RS0701")
    a = v.ant
    add(
        AwsStream(
            file="bedrock_anthropic/text_only.eventstream",
            notes="A text-only turn: message_start, a text block in three deltas, "
            "message_delta end_turn, message_stop with Bedrock's invocation metrics.",
            messages=v.chunks(
                [a.start(), *a.text(0, ["Ada was", " born in", " 1815."]), *a.end("end_turn")]
            ),
            outcome="no_calls",
            calls=[],
            text="Ada was born in 1815.",
        )
    )

    v = Invoke("msg_bdrk_RS0702")
    a = v.ant
    add(
        AwsStream(
            file="bedrock_anthropic/text_then_tool_use.eventstream",
            notes="A text block then one tool_use block (input {} at its start, "
            "input_json_delta fragments starting with ''), stop_reason tool_use, every event "
            "base64 in a chunk's bytes.",
            messages=v.chunks(
                [
                    a.start(),
                    *a.text(0, ["I'll look that up."]),
                    *a.tool(1, "toolu_bdrk_RS0702", "get_measurement", hp),
                    *a.end(),
                ]
            ),
            outcome="complete",
            calls=[call("get_measurement", h, "toolu_bdrk_RS0702")],
            text="I'll look that up.",
        )
    )

    v = Invoke("msg_bdrk_RS0703")
    a = v.ant
    add(
        AwsStream(
            file="bedrock_anthropic/two_calls_height_weight.eventstream",
            notes="Two tool_use blocks for the same tool, released in block order.",
            messages=v.chunks(
                [
                    a.start(),
                    *a.tool(0, "toolu_bdrk_RS0703h", "get_measurement", hp),
                    *a.tool(1, "toolu_bdrk_RS0703w", "get_measurement", wp),
                    *a.end(),
                ]
            ),
            outcome="complete",
            calls=[
                call("get_measurement", h, "toolu_bdrk_RS0703h"),
                call("get_measurement", w, "toolu_bdrk_RS0703w"),
            ],
        )
    )

    v = Invoke("msg_bdrk_RS0704")
    a = v.ant
    add(
        AwsStream(
            file="bedrock_anthropic/max_tokens_mid_tool_use.eventstream",
            notes="max_tokens reached inside a tool_use: the block is closed, then "
            "message_delta stop_reason max_tokens. Truncated, the cut input as the partial "
            "call.",
            messages=v.chunks(
                [
                    a.start(),
                    *a.tool(
                        0, "toolu_bdrk_RS0704", "create_file", ["", '{"title": "example', " with"]
                    ),
                    *a.end("max_tokens"),
                ]
            ),
            outcome="truncated",
            partial_calls=[partial("create_file", "toolu_bdrk_RS0704", '{"title": "example with')],
            calls=[],
        )
    )

    v = Invoke("msg_bdrk_RS0705")
    a = v.ant
    add(
        AwsStream(
            file="bedrock_anthropic/throttling_exception_mid_stream.eventstream",
            notes="A throttlingException message between two input fragments of a tool_use: "
            "the provider's error, retryable; no half call.",
            messages=[
                *v.chunks(
                    [
                        a.start(),
                        *a.tool(0, "toolu_bdrk_RS0705", "get_measurement", hp[:2], stop=False),
                    ]
                ),
                exception(
                    "throttlingException", "Too many requests, please wait before trying again."
                ),
            ],
            outcome="provider_error",
            calls=[],
            error={"code": "ThrottlingException", "retryable": True},
        )
    )

    v = Invoke("msg_bdrk_RS0706")
    a = v.ant
    overloaded = ev(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    add(
        AwsStream(
            file="bedrock_anthropic/overloaded_error_inside_chunk.eventstream",
            notes="Anthropic's own error event (overloaded_error) inside a chunk after a text "
            "delta: the provider's error, retryable.",
            messages=v.chunks([a.start(), *a.text(0, ["Ada"])[:2], overloaded]),
            outcome="provider_error",
            calls=[],
            error={"code": "overloaded_error", "retryable": True},
        )
    )

    v = Invoke("msg_bdrk_RS0707")
    a = v.ant
    add(
        AwsStream(
            file="bedrock_anthropic/cut_inside_a_message.eventstream",
            notes="The body ends 20 bytes into the chunk after the first input fragment of a "
            "tool_use: no message_stop, truncated, the partial call holding the input of the "
            "whole chunks.",
            messages=v.chunks(
                [a.start(), *a.tool(0, "toolu_bdrk_RS0707", "get_measurement", hp[:3], stop=False)]
            ),
            cut=20,
            outcome="truncated",
            partial_calls=[partial("get_measurement", "toolu_bdrk_RS0707", '{"person": "Ada')],
            calls=[],
        )
    )

    add(
        AwsStream(
            file="bedrock_anthropic/service_unavailable_exception_first.eventstream",
            notes="A serviceUnavailableException as the only message: the provider's error, "
            "retryable, whether the dialect is named or detected (detection cannot tell the "
            "two Bedrock dialects apart from an exception and names bedrock_converse; the "
            "error is the same).",
            messages=[exception("serviceUnavailableException", "The service is unavailable.")],
            outcome="provider_error",
            calls=[],
            error={"code": "ServiceUnavailableException", "retryable": True},
        )
    )
    return out


STREAMS: list[Callable[[], Sequence[Stream | AwsStream]]] = [
    chat_streams,
    responses_streams,
    anthropic_streams,
    gemini_streams,
    converse_streams,
    invoke_anthropic_streams,
]


def all_streams() -> list[Stream | AwsStream]:
    """Every stream, in manifest order."""
    return [s for group in STREAMS for s in group()]


def render_files() -> dict[str, bytes]:
    """Map each file path under ``recorded_streams/`` to the bytes it must hold."""
    files: dict[str, bytes] = {}
    for s in all_streams():
        files[s.file] = s.render()
        exp = json.dumps(s.expected(), ensure_ascii=False, indent=2) + "\n"
        stem = s.file.rsplit(".", 1)[0]
        files[stem + ".expected.json"] = exp.encode("utf-8")
    return files


def main() -> int:
    """Write every file; return the process exit status."""
    for rel, data in render_files().items():
        path = HERE / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
