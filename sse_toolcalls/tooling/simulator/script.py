"""The simulator's script: the assistant turns it plays, the faults it injects, the checks
it runs on each request, and the JSON file format the command line reads.

Pure data and pure functions; no I/O except :func:`load_script`, which reads one file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..._checks import check_count, check_quantity
from ..._faces import publish
from ...errors import UsageError

# --------------------------------------------------------------------------------------
# What the assistant says.


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptedCall:
    """One function call the scripted assistant makes."""

    name: str
    """The function name."""

    args: dict[str, Any]
    """The arguments object; streamed as JSON text in fragments."""

    call_id: str | None = None
    """The id to send. ``None`` lets the simulator derive a stable one
    (``call_sim_<turn>_<position>``) for dialects that always send ids; for Gemini, ``None``
    means the ``functionCall`` carries no ``id`` at all, as older Gemini models do."""

    thinking: str = ""
    """Reasoning streamed just before this call (interleaved thinking): an Anthropic
    ``thinking`` block, a Responses ``reasoning`` item; ``""`` for none."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CutInArguments:
    """End the response (cleanly, at the HTTP level) in the middle of the first call's
    arguments, before the dialect's end marker: a client must report a truncated stream.
    (On Bedrock, after a whole message: a cut inside a message is :class:`Cut`.)"""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorEvent:
    """Send the dialect's in-stream error event after the first ``after_events`` events
    of the turn, then end the response."""

    code: str = "overloaded_error"
    """The provider's error type or code. On Bedrock, the ``:exception-type`` of an
    exception message: one its stream declares (``throttlingException``...) as given,
    another provider's code as the declared exception that means the same
    (``overloaded_error``: ``serviceUnavailableException``), anything else as
    ``modelStreamErrorException``."""

    message: str = "Overloaded"
    """The human-readable message."""

    after_events: int = 1
    """How many of the turn's events go out before the error."""

    def __post_init__(self) -> None:
        check_count("after_events", self.after_events, minimum=0)


@dataclass(frozen=True, slots=True, kw_only=True)
class HTTPError:
    """Answer the request with an HTTP error status and the dialect's error body instead
    of a stream (429 rate limit, 500, Anthropic's 529 overloaded...); on Bedrock, with
    the error's type in ``x-amzn-ErrorType`` (``ThrottlingException`` for 429...)."""

    status: int
    """The HTTP status code."""

    message: str = ""
    """The error message; a per-status default when empty."""

    retry_after: str | None = None
    """The ``Retry-After`` header value (seconds, or an HTTP-date), when set."""

    retry_after_ms: int | None = None
    """The ``retry-after-ms`` header value, when set (OpenAI and Anthropic send it)."""

    def __post_init__(self) -> None:
        # An HTTP status is three digits (RFC 9110, section 15); the server could not
        # send any other.
        if check_count("status", self.status, minimum=100) > 599:
            raise UsageError(f"status: must be at most 599, got {self.status!r}")
        if self.retry_after_ms is not None:
            check_count("retry_after_ms", self.retry_after_ms, minimum=0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Stall:
    """Send the first ``after_events`` events, then go silent for ``seconds`` (keeping
    the connection open), then send the rest."""

    seconds: float
    """How long to stay silent."""

    after_events: int = 1
    """How many of the turn's events go out before the silence."""

    def __post_init__(self) -> None:
        check_quantity("seconds", self.seconds)
        check_count("after_events", self.after_events, minimum=0)


@dataclass(frozen=True, slots=True, kw_only=True)
class OneByteAtATime:
    """Write the response body one byte per write: the client must reassemble anyway."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RawBody:
    """Answer with these bytes as the event stream (status 200, the dialect's content
    type), one write per chunk, instead of the turn's own events: random bytes, invalid
    UTF-8, hand-made events, a mangled copy of an encoded turn. The turn's calls are not
    issued (the client may or may not find calls in the bytes), so give the script
    ``check_results=False`` when a later request may carry results for them. Python
    only: the JSON script format has no bytes."""

    chunks: tuple[bytes, ...]
    """The body, in the writes it goes out in."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Cut:
    """End the response (cleanly, at the HTTP level) after the first ``after_events``
    events of the turn and the first ``extra_bytes`` bytes of the next one: anywhere, in
    an event's text or, on Bedrock, inside a message's 12-byte prelude. Always a cut: at
    most every event but the last goes out whole, and of the next at most all but its
    last byte."""

    after_events: int = 1
    """How many of the turn's events go out whole."""

    extra_bytes: int = 0
    """How many bytes of the next event follow them."""

    def __post_init__(self) -> None:
        check_count("after_events", self.after_events, minimum=0)
        check_count("extra_bytes", self.extra_bytes, minimum=0)


@dataclass(frozen=True, slots=True, kw_only=True)
class CorruptedCRC:
    """Send the turn with one byte of one event inverted (XOR 0xFF): on Bedrock's binary
    event stream, a message whose checksum no longer matches (its message CRC by default;
    the prelude's if the byte is among its first 12), which a client must refuse rather
    than read. On the SSE dialects, which carry no checksum, the byte is inverted all the
    same: a corrupted stream the client may or may not notice."""

    after_events: int = 1
    """Which event is corrupted: the one after the first ``after_events`` (the last one
    when the turn has fewer)."""

    offset: int = -1
    """Which byte of that event: from its start, or negative from its end (``-1``, the
    default, is the last byte of a message's CRC)."""

    def __post_init__(self) -> None:
        check_count("after_events", self.after_events, minimum=0)
        if isinstance(self.offset, bool) or not isinstance(self.offset, int):
            raise UsageError(f"offset: expected a whole number, got {self.offset!r}")


Fault = (
    CutInArguments | Cut | CorruptedCRC | ErrorEvent | HTTPError | Stall | OneByteAtATime | RawBody
)
"""Anything that can go wrong in a turn."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpectedResult:
    """A check on the next request: the result sent for one call of the previous turn."""

    call_position: int
    """Which call of the previous turn (0-based) the result answers."""

    def __post_init__(self) -> None:
        check_count("call_position", self.call_position, minimum=0)

    contains: str = ""
    """Text the result's content must contain (its JSON text when it is not a string)."""

    is_error: bool | None = None
    """Whether the result must be an error (checked only where the dialect marks errors,
    Anthropic ``is_error``); ``None`` skips the check."""

    media: tuple[str, ...] | None = None
    """The MIME types of the images and documents the result must carry, in order
    (``()`` for none); ``None`` skips the check. Their shapes are always checked."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Turn:
    """One assistant turn: what the simulator answers to one request."""

    text: str = ""
    """Visible text, streamed before the calls."""

    thinking: str = ""
    """Reasoning streamed first, as the dialect streams it: an Anthropic ``thinking``
    block with its signature (on Bedrock too; Converse: ``reasoningContent`` text, then
    its signature), a Responses ``reasoning`` item (a summary, and its
    ``encrypted_content`` when the request asked for it), a Gemini thought part with a
    ``thoughtSignature`` on the first call, Chat ``reasoning_content``. The next request
    is checked as the real API checks it (see :mod:`.reasoning`)."""

    redacted_thinking: str = ""
    """Claude only (Anthropic, Bedrock): the ``data`` of a ``redacted_thinking`` block
    sent after the thinking one (Converse: its UTF-8 bytes as ``redactedContent``;
    ``""`` for none)."""

    calls: tuple[ScriptedCall, ...] = ()
    """Function calls, streamed after the text, in order."""

    fragment_size: int = 8
    """How many characters of text or argument JSON go in each delta event."""

    stop_reason: str | None = None
    """The provider's stop reason; ``None`` picks the natural one for the dialect
    (``tool_calls``/``stop``, ``tool_use``/``end_turn``, ``STOP``...)."""

    usage: dict[str, int] | None = None
    """Token usage to report (``input_tokens``/``output_tokens``); ``None`` reports none
    where the dialect allows, or zeros where it requires a usage object."""

    fault: Fault | None = None
    """What goes wrong in this turn, if anything."""

    expect_results: tuple[ExpectedResult, ...] = ()
    """Extra checks on the request that asks for this turn, about the results it carries
    for the previous turn's calls. (That every previous call has a result under its own
    id, in call order, is always checked.)"""

    expect_text_in_request: str = ""
    """Text that must appear somewhere in the request body (a user message...)."""

    def __post_init__(self) -> None:
        # Zero characters per delta would never finish a fragment.
        check_count("fragment_size", self.fragment_size, minimum=1)


@dataclass(frozen=True, slots=True, kw_only=True)
class Script:
    """The whole conversation the simulator plays, one turn per request."""

    turns: tuple[Turn, ...]
    """The turns, in the order requests arrive."""

    model: str = "sim-model-1"
    """The model name the streams report. On Bedrock Converse, a model id naming Amazon
    Nova (``us.amazon.nova-lite-v1:0``) streams each call's input whole, in one fragment,
    as Nova does; any other streams it as Claude does (an empty fragment, then pieces)."""

    check_results: bool = True
    """Whether to check, on each request after the first, that every call of the
    previous turn has a result under its own id, in order."""


# --------------------------------------------------------------------------------------
# The JSON file format (for the command line):
#
# {"model": "sim-model-1", "turns": [
#    {"text": "Let me look.", "calls": [{"name": "f", "args": {"k": 1}, "call_id": "c1"}],
#     "fragment_size": 4, "fault": {"kind": "http_error", "status": 429, "retry_after": "2"},
#     "expect_results": [{"call_position": 0, "contains": "170"}]},
#    {"text": "Done."}]}
#
# A turn may also say "thinking" and "redacted_thinking", a call "thinking", and an
# expectation "media" (the MIME types its result must carry). Fault kinds: "cut_in_arguments",
# "cut" (after_events, extra_bytes), "corrupted_crc" (after_events, offset), "error_event",
# "http_error", "stall", "one_byte_at_a_time".

_FAULT_KINDS: dict[str, type[Any]] = {
    "cut_in_arguments": CutInArguments,
    "cut": Cut,
    "corrupted_crc": CorruptedCRC,
    "error_event": ErrorEvent,
    "http_error": HTTPError,
    "stall": Stall,
    "one_byte_at_a_time": OneByteAtATime,
}


def _build(cls: type[Any], data: Any, where: str) -> Any:
    if not isinstance(data, dict):
        raise UsageError(f"{where}: expected a JSON object, got {type(data).__name__}")
    try:
        return cls(**data)
    except (TypeError, UsageError) as exc:
        raise UsageError(f"{where}: {exc}") from exc


def _fault_from_json(data: Any, where: str) -> Fault:
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        raise UsageError(f"{where}: a fault needs a 'kind' among {sorted(_FAULT_KINDS)}")
    rest = {k: v for k, v in data.items() if k != "kind"}
    cls = _FAULT_KINDS.get(data["kind"])
    if cls is None:
        raise UsageError(f"{where}: unknown fault kind {data['kind']!r}")
    fault: Fault = _build(cls, rest, where)
    return fault


def script_from_json(data: Any) -> Script:
    """Build a :class:`Script` from its JSON form (already parsed).

    Raises:
        UsageError: the data does not describe a script; the message says where.
    """
    if not isinstance(data, dict) or not isinstance(data.get("turns"), list):
        raise UsageError("script: expected an object with a 'turns' list")
    turns: list[Turn] = []
    for i, raw in enumerate(data["turns"]):
        where = f"turns[{i}]"
        if not isinstance(raw, dict):
            raise UsageError(f"{where}: expected a JSON object")
        fields = dict(raw)
        calls = tuple(
            _build(ScriptedCall, c, f"{where}.calls[{j}]")
            for j, c in enumerate(fields.pop("calls", []))
        )
        fault = fields.pop("fault", None)
        expects = tuple(
            _build(ExpectedResult, e, f"{where}.expect_results[{j}]")
            for j, e in enumerate(fields.pop("expect_results", []))
        )
        turn = _build(Turn, fields, where)
        turns.append(
            Turn(
                text=turn.text,
                thinking=turn.thinking,
                redacted_thinking=turn.redacted_thinking,
                calls=calls,
                fragment_size=turn.fragment_size,
                stop_reason=turn.stop_reason,
                usage=turn.usage,
                fault=None if fault is None else _fault_from_json(fault, f"{where}.fault"),
                expect_results=expects,
                expect_text_in_request=turn.expect_text_in_request,
            )
        )
    rest = {k: v for k, v in data.items() if k != "turns"}
    script: Script = _build(Script, {"turns": tuple(turns), **rest}, "script")
    return script


def load_script(path: str | Path) -> Script:
    """Read a script from a JSON file.

    Raises:
        UsageError: the file cannot be read or does not describe a script.
    """
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read script {path}: {exc}") from exc
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"script {path} is not JSON: {exc}") from exc
    return script_from_json(data)


def resolved_call_id(
    call: ScriptedCall, *, dialect: str, turn_number: int, position: int
) -> str | None:
    """The id the simulator sends for ``call``: its own, or a stable derived one.

    Gemini keeps ``None`` (no id on the wire); the other dialects always send an id.
    """
    if call.call_id is not None or dialect == "gemini":
        return call.call_id
    # Each provider's own prefix, so ids look like the real ones in logs and tests.
    prefix = _ID_PREFIXES.get(dialect, "call_sim")
    return f"{prefix}_{turn_number}_{position}"


_ID_PREFIXES = {
    "anthropic": "toolu_sim",
    "bedrock_anthropic": "toolu_bdrk_sim",
    "bedrock_converse": "tooluse_sim",
}


def default_demo_script() -> Script:
    """The two-step demo: look up height and weight, then answer."""
    return Script(
        turns=(
            Turn(
                text="Let me look both up.",
                calls=(
                    ScriptedCall(name="lookup_demo_value", args={"key": "height"}),
                    ScriptedCall(name="lookup_demo_value", args={"key": "weight"}),
                ),
            ),
            Turn(
                text="You are 170 cm tall and weigh 70 kg.",
                expect_results=(
                    ExpectedResult(call_position=0, contains="170"),
                    ExpectedResult(call_position=1, contains="70"),
                ),
            ),
        ),
    )


__all__ = [
    "CorruptedCRC",
    "Cut",
    "CutInArguments",
    "ErrorEvent",
    "ExpectedResult",
    "Fault",
    "HTTPError",
    "OneByteAtATime",
    "Script",
    "ScriptedCall",
    "Stall",
    "Turn",
    "default_demo_script",
    "load_script",
    "resolved_call_id",
    "script_from_json",
]

# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
