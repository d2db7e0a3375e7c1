"""The properties every fuzz input must keep, checked without atheris.

The fuzz targets (tests/tooling/fuzz and ``sse-toolcalls fuzz``), the seed check, ``sse-toolcalls
check`` and the regression replay all call :func:`check`, so a
finding replays exactly as the fuzzer saw it. One input is a stream plus where to cut it:

    bytes 0..5   three little-endian uint16 cut positions, each taken modulo len(stream)+1
    bytes 6..    the stream, as the network would deliver it

For a parser target (a dialect, or ``detect`` for ``ToolCallParser(None)``) the stream is
fed whole, cut at those positions, and byte by byte when it is short; each feeding must
give the same calls, or the same error class (and the same truncation reason). Only our
exceptions (``SSEToolCallsError``) may escape, every released call must be well formed
(str name, str or absent id, a dict of strict JSON values as arguments), and a finished
or failed parser must refuse ``finish()`` and ``feed()`` with ``UsageError``. The framer
target holds ``SSEFramer`` to the same rules, at the default limit and a small one; the
``eventstream`` target holds AWS's event-stream framer (``EventStreamFramer``) and its
seam (``EventStreamEventFramer``, what the Bedrock dialects read) to them too, each read of
the seam giving exactly the framer's messages as events, and no message past the limits
(its bytes, its header count, the bytes held between reads).

Anything but our exceptions is left to propagate with its own traceback (the finding);
a broken property raises :class:`InvariantError`.
"""

from __future__ import annotations

import functools
import itertools
import math
import struct
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

# From the defining modules, not the root face: a leaf that imports a face ties itself to
# everything the face names (issue 30, item 7).
from ...calls import (
    DIALECTS,
    Dialect,
    PartialToolCall,
    ReasoningBlock,
    ReasoningCompleted,
    ReasoningDelta,
    StreamEvent,
    StreamFinished,
    TextDelta,
    ToolCall,
    ToolCallArgumentsDelta,
    ToolCallCompleted,
    ToolCallStarted,
)
from ...errors import SSEToolCallsError, TruncatedStreamError, UsageError
from ...framing import sse
from ...framing.eventstream import (
    MAX_HEADERS_PER_MESSAGE,
    MESSAGE_OVERHEAD_BYTES,
    EventStreamError,
    EventStreamEventFramer,
    EventStreamFramer,
    EventStreamLimitError,
    EventStreamMessage,
    IncompleteMessageError,
    MessageTooLargeError,
    message_event,
)
from ...framing.sse import ServerSentEvent, SSEFramer
from ...messages import as_dialect
from ...parser import StreamParser, ToolCallParser
from .walk_target import walk_disagreement

__all__ = [
    "BYTE_AT_A_TIME_MAX",
    "HEADER_BYTES",
    "SMALL_EVENT_LIMIT",
    "STREAM_TARGETS",
    "TARGETS",
    "InvariantError",
    "check",
    "decode",
    "encode",
    "feedings",
]

TARGETS: Final[tuple[str, ...]] = (*DIALECTS, "detect", "framer", "eventstream", "walk")
"""Every fuzz target: each dialect (``DIALECTS``, in order), detection
(``ToolCallParser(None)``), the SSE framer, AWS's event-stream framer, and the
parsed-event walk (objects made from the input, :mod:`.walk_target`)."""

STREAM_TARGETS: Final[tuple[str, ...]] = (*DIALECTS, "detect")
"""The targets that parse the input as a stream of calls (the corpus mode's)."""

HEADER_BYTES: Final = 6
"""Bytes of cut positions in front of the stream (three uint16)."""

BYTE_AT_A_TIME_MAX: Final = 512
"""Streams up to this many bytes are also fed one byte per ``feed``, in bytes.

Byte-at-a-time feeding reaches every split state of the framer, but costs one call per
byte; past 512 bytes it would dominate the run and starve the mutations."""

SMALL_EVENT_LIMIT: Final = 256
"""The framer target's second ``max_event_bytes``, in bytes: small enough that the
fuzzer crosses it often, so the limit's own accounting is held split-independent too."""

_PROBE = b'data: {"x": 1}\n\n'
"""Bytes fed to a finished or failed object, which must refuse them."""


class InvariantError(AssertionError):
    """A fuzz input broke a property of the library (not a crash: a wrong answer)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        """Which property broke, in a few words (it names the finding's file)."""


def decode(data: bytes) -> tuple[bytes, list[int]]:
    """Split one fuzz input into the stream and its sorted, distinct inner cut positions."""
    if len(data) < HEADER_BYTES:
        return data, []
    stream = data[HEADER_BYTES:]
    raw = struct.unpack("<3H", data[:HEADER_BYTES])
    cuts = sorted({c % (len(stream) + 1) for c in raw} - {0, len(stream)})
    return stream, cuts


def encode(stream: bytes, cuts: Sequence[int] = ()) -> bytes:
    """The fuzz input for ``stream`` cut at ``cuts`` (at most three, each below 65,536)."""
    padded = [*cuts, 0, 0, 0][:3]
    return struct.pack("<3H", *(c & 0xFFFF for c in padded)) + stream


def feedings(stream: bytes, cuts: Sequence[int]) -> Iterator[tuple[str, list[bytes]]]:
    """The ways one stream is fed: whole, at the cuts, byte by byte when short."""
    yield "whole", [stream]
    if cuts:
        bounds = [0, *cuts, len(stream)]
        yield f"cut at {list(cuts)}", [stream[a:b] for a, b in itertools.pairwise(bounds)]
    if 1 < len(stream) <= BYTE_AT_A_TIME_MAX:
        yield "byte at a time", [stream[i : i + 1] for i in range(len(stream))]


def check(target: str, data: bytes) -> None:
    """Hold one fuzz input to every property of ``target``.

    Raises:
        InvariantError: a property broke.
        Exception: whatever non-library exception the code under test let out.
    """
    stream, cuts = decode(data)
    if target == "framer":
        # The other twin too (STYLE.md 18): the compiled framer must give what the pure one
        # gives on every feeding, so the fuzzer runs C code under both limits.
        classes: list[type[SSEFramer] | None] = [None, *_other_twin()]
        for limit in (None, SMALL_EVENT_LIMIT):
            twins = [functools.partial(_run_framer, limit=limit, cls=cls) for cls in classes]
            _same_everywhere(stream, cuts, twins, names=_TWIN_NAMES)
    elif target == "eventstream":
        for limit in (None, SMALL_EVENT_LIMIT):
            _same_everywhere(stream, cuts, [functools.partial(_run_event_stream, limit=limit)])
    elif target == "walk":
        # Objects, not bytes: the compiled walk against the pure one (STYLE.md 18).
        broken = walk_disagreement(stream)
        if broken is not None:
            raise InvariantError(*broken)
    elif target in TARGETS:
        # ToolCallParser skips the delta objects that StreamParser builds (the Agent's
        # path): the two must agree on every input, not only on the recorded streams.
        dialect = None if target == "detect" else as_dialect(target)
        runners = [functools.partial(_run_parser, dialect), functools.partial(_run_rich, dialect)]
        _same_everywhere(stream, cuts, runners)
    else:
        raise ValueError(f"unknown fuzz target {target!r}; expected one of {TARGETS}")


# --------------------------------------------------------------------------------------


Outcome = tuple[Any, ...]


Runner = Callable[[list[bytes]], Outcome]


def _same_everywhere(
    stream: bytes,
    cuts: Sequence[int],
    runners: Sequence[Callable[..., Outcome]],
    names: dict[int, str] | None = None,
) -> None:
    """Every runner, on every feeding, gives the first one's outcome (the byte-at-a-time
    feeding is given to the first runner only, the one it is cheapest for)."""
    first: tuple[str, Outcome] | None = None
    for label, chunks in feedings(stream, cuts):
        for number, run in enumerate(runners):
            if number and label == "byte at a time":
                continue
            outcome = run(chunks)
            runner_names = _RUNNER_NAMES if names is None else names
            name = label if number == 0 else f"{label} ({runner_names.get(number, number)})"
            if first is None:
                first = (name, outcome)
            elif outcome != first[1]:
                raise InvariantError(
                    f"split-{_kind(first[1])}-vs-{_kind(outcome)}",
                    f"the result depends on the split: fed {first[0]} -> {_show(first[1])}; "
                    f"fed {name} -> {_show(outcome)}",
                )


_RUNNER_NAMES = {1: "StreamParser"}
_TWIN_NAMES = {1: "the other framer twin"}


def _other_twin() -> list[type[SSEFramer]]:
    """The framer twin that ``SSEFramer`` is not (none when the C twin was not built)."""
    if sse._CSSEFramer is None:
        return []
    return [sse._PySSEFramer if SSEFramer is sse._CSSEFramer else sse._CSSEFramer]


def _kind(outcome: Outcome) -> str:
    return "-".join(str(part) for part in outcome[1:]) if outcome[0] == "error" else outcome[0]


def _show(outcome: Outcome) -> str:
    text = repr(outcome)
    return text if len(text) <= 600 else text[:600] + "..."


def _run_parser(dialect: Dialect | None, chunks: list[bytes]) -> Outcome:
    parser = ToolCallParser(dialect)
    calls: list[ToolCall] = []
    try:
        for chunk in chunks:
            calls.extend(parser.feed(chunk))
        calls.extend(parser.finish())
    except SSEToolCallsError as exc:
        return _failed(exc, parser.finish, parser.feed, parser.dialect)
    _check_calls(calls, parser.dialect)
    _refuses_more(parser.finish, parser.feed, "parser that finished")
    return ("calls", tuple(_call_key(c) for c in calls))


def _run_rich(dialect: Dialect | None, chunks: list[bytes]) -> Outcome:
    parser = StreamParser(dialect)
    events: list[StreamEvent] = []
    try:
        for chunk in chunks:
            events.extend(parser.feed(chunk))
        events.extend(parser.finish())
    except SSEToolCallsError as exc:
        return _failed(exc, parser.finish, parser.feed, parser.dialect)
    calls = [e.call for e in events if isinstance(e, ToolCallCompleted)]
    _check_calls(calls, parser.dialect)
    _check_stream_events(events, calls)
    _refuses_more(parser.finish, parser.feed, "parser that finished")
    return ("calls", tuple(_call_key(c) for c in calls))


def _failed(
    exc: SSEToolCallsError,
    finish: Callable[[], object],
    feed: Callable[[bytes], object],
    dialect: str | None,
) -> Outcome:
    _refuses_more(finish, feed, "parser that failed")
    if isinstance(exc, TruncatedStreamError):
        _check_calls(exc.completed, dialect)
        _check_partials(exc.partial)
        if not isinstance(exc.text, str):
            raise InvariantError("truncated-text", f"the error's text is {_brief(exc.text)}")
        return ("error", type(exc).__name__, exc.reason)
    return ("error", type(exc).__name__)


def _check_stream_events(events: Sequence[StreamEvent], calls: Sequence[ToolCall]) -> None:
    finished = [e for e in events if isinstance(e, StreamFinished)]
    if len(finished) != 1 or events[-1] is not finished[0]:
        raise InvariantError("rich-finished", "a finished stream must end with one StreamFinished")
    end = finished[0]
    if [_call_key(c) for c in end.calls] != [_call_key(c) for c in calls]:
        raise InvariantError(
            "rich-finished", "StreamFinished.calls differ from the completed calls"
        )
    if not isinstance(end.text, str) or not (
        end.stop_reason is None or isinstance(end.stop_reason, str)
    ):
        raise InvariantError(
            "rich-finished",
            f"StreamFinished text {_brief(end.text)}, stop_reason {_brief(end.stop_reason)}",
        )
    _check_text(end.text, "StreamFinished.text")
    for event in events:
        if isinstance(event, TextDelta | ReasoningDelta):
            fields: dict[str, bool] = {"text": isinstance(event.text, str)}
        elif isinstance(event, ToolCallStarted):
            fields = {
                "index": type(event.index) is int,
                "name": isinstance(event.name, str),
                "id": event.call_id is None or isinstance(event.call_id, str),
            }
        elif isinstance(event, ToolCallArgumentsDelta):
            fields = {"index": type(event.index) is int, "delta": isinstance(event.delta, str)}
        elif isinstance(event, ReasoningCompleted):
            block = event.block
            fields = {
                "block": isinstance(block, ReasoningBlock) and block in end.reasoning,
                "text": isinstance(block.text, str),
            }
        elif isinstance(event, ToolCallCompleted | StreamFinished):
            continue
        else:
            raise InvariantError("rich-event-type", f"StreamParser yielded {type(event).__name__}")
        for field, ok in fields.items():
            if not ok:
                raise InvariantError(
                    f"rich-{type(event).__name__}-{field}",
                    f"{type(event).__name__}.{field} has the wrong type",
                )


def _run_framer(
    chunks: list[bytes], limit: int | None, cls: type[SSEFramer] | None = None
) -> Outcome:
    make = SSEFramer if cls is None else cls
    framer = make() if limit is None else make(max_event_bytes=limit)
    events: list[ServerSentEvent] = []
    try:
        for chunk in chunks:
            events.extend(framer.feed(chunk))
    except SSEToolCallsError as exc:
        _refuses_more(framer.finish, framer.feed, "framer that failed")
        # A limit's error carries the events its read completed before it: with those
        # returned before, the same events whatever the split (issue 29).
        carried = [*events, *getattr(exc, "events", ())]
        return ("error", type(exc).__name__, tuple(tuple(e) for e in carried))
    tail = framer.finish()
    if tail != []:
        raise InvariantError(
            "framer-finish-returned-events",
            f"SSEFramer.finish() returned {_brief(tail)}; the spec discards the rest",
        )
    _refuses_more(framer.finish, framer.feed, "framer that finished")
    for event in events:
        _check_event(event)
    state = (framer.last_event_id, framer.retry)
    return ("events", tuple(tuple(e) for e in events), state)


def _run_event_stream(chunks: list[bytes], limit: int | None) -> Outcome:
    """Feed the event-stream framer and its seam the same reads, side by side: each read
    of the seam must give the framer's messages as events (or the same error, with the
    same earlier messages as events); the outcome is the framer's messages, or its error
    and the messages before it, and whether the body ended inside a message."""
    framer = EventStreamFramer() if limit is None else EventStreamFramer(max_message_bytes=limit)
    seam = (
        EventStreamEventFramer() if limit is None else EventStreamEventFramer(max_event_bytes=limit)
    )
    messages: list[EventStreamMessage] = []
    for chunk in chunks:
        try:
            read = framer.feed(chunk)
        except EventStreamError as exc:
            _event_stream_error(exc, framer, seam, chunk)
            carried = [*messages, *exc.messages]
            _check_messages(carried, framer.max_message_bytes)
            return ("error", type(exc).__name__, exc.problem, _message_keys(carried))
        _same_events(seam.feed(chunk), read)
        messages.extend(read)
        # Bounded memory: between reads only the unfinished message is held, and no
        # message is longer than the limit (its 12-byte prelude is held before it is read).
        held = len(framer._pending)
        if held > max(framer.max_message_bytes, 12):
            raise InvariantError(
                "eventstream-held-past-limit",
                f"{held} bytes held between reads, past max_message_bytes="
                f"{framer.max_message_bytes}",
            )
    _check_messages(messages, framer.max_message_bytes)
    cut = False
    try:
        tail = framer.finish()
    except IncompleteMessageError:
        cut = True
        tail = []
    if tail != []:
        raise InvariantError("eventstream-finish-returned", "finish() returned messages")
    # The seam drops a cut message (the dialect's end check then truncates the stream).
    if seam.finish() != []:
        raise InvariantError("eventstream-finish-returned", "the seam's finish() returned events")
    _refuses_more(framer.finish, framer.feed, "framer that finished")
    _refuses_more(seam.finish, seam.feed, "framer that finished")
    return ("messages", _message_keys(messages), cut)


def _event_stream_error(
    exc: EventStreamError, framer: EventStreamFramer, seam: EventStreamEventFramer, chunk: bytes
) -> None:
    """The framer's error on one read: its limits' numbers are the real ones, and the
    seam fails on the same read with the same error."""
    if (
        isinstance(exc, MessageTooLargeError)
        and not exc.size > exc.limit == framer.max_message_bytes
    ):
        raise InvariantError(
            "eventstream-limit-numbers",
            f"MessageTooLargeError size {exc.size}, limit {exc.limit}, framer's "
            f"{framer.max_message_bytes}",
        )
    if isinstance(exc, EventStreamLimitError) and not exc.size > exc.limit:
        raise InvariantError(
            "eventstream-limit-numbers", f"{exc.limit_name}: size {exc.size} within {exc.limit}"
        )
    try:
        seam.feed(chunk)
    except EventStreamError as seam_exc:
        if (type(seam_exc), seam_exc.problem) != (type(exc), exc.problem):
            raise InvariantError(
                "eventstream-seam-error",
                f"the framer raised {type(exc).__name__} ({exc.problem}), the seam "
                f"{type(seam_exc).__name__} ({seam_exc.problem})",
            ) from None
        _same_events(seam_exc.events, exc.messages)
    else:
        raise InvariantError(
            "eventstream-seam-error", f"the framer raised {type(exc).__name__}, the seam did not"
        )
    _refuses_more(framer.finish, framer.feed, "framer that failed")
    _refuses_more(seam.finish, seam.feed, "framer that failed")


def _same_events(events: Sequence[ServerSentEvent], messages: Sequence[EventStreamMessage]) -> None:
    expected = [message_event(m) for m in messages]
    if list(events) != expected:
        raise InvariantError(
            "eventstream-seam-events",
            f"the seam gave {_brief(list(events))} for {len(messages)} messages of the framer",
        )
    for event in events:
        _check_event(event)


def _check_messages(messages: Sequence[EventStreamMessage], limit: int) -> None:
    for message in messages:
        if not isinstance(message.payload, bytes) or not isinstance(message.headers, dict):
            raise InvariantError(
                "eventstream-message-type", "a message's fields have the wrong type"
            )
        if len(message.payload) + MESSAGE_OVERHEAD_BYTES > limit:
            raise InvariantError(
                "eventstream-message-past-limit",
                f"a {len(message.payload)}-byte payload passed max_message_bytes={limit}",
            )
        if len(message.headers) > MAX_HEADERS_PER_MESSAGE:
            raise InvariantError(
                "eventstream-headers-past-limit", f"{len(message.headers)} headers in one message"
            )
        for name, value in message.headers.items():
            if not isinstance(name, str) or not isinstance(value, _HEADER_TYPES):
                raise InvariantError(
                    "eventstream-header-type", f"header {_brief(name)}: {type(value).__name__}"
                )


def _message_keys(messages: Sequence[EventStreamMessage]) -> tuple[Any, ...]:
    # Typed values: a long header and a timestamp of the same number differ, as True and 1.
    return tuple(
        (tuple((n, type(v).__name__, v) for n, v in m.headers.items()), m.payload) for m in messages
    )


def _header_types() -> tuple[type, ...]:
    from uuid import UUID

    return (bool, int, bytes, str, UUID)


_HEADER_TYPES: Final = _header_types()


def _refuses_more(finish: Callable[[], object], feed: Callable[[bytes], object], what: str) -> None:
    for name, attempt in (("finish()", finish), ("feed()", lambda: feed(_PROBE))):
        try:
            attempt()
        except UsageError:
            continue
        except SSEToolCallsError as exc:
            raise InvariantError(
                "refusal-wrong-error",
                f"{name} on a {what} raised {type(exc).__name__}, not UsageError",
            ) from exc
        raise InvariantError("refusal-missing", f"{name} on a {what} did not raise UsageError")


def _check_event(event: ServerSentEvent) -> None:
    if not isinstance(event, ServerSentEvent):
        raise InvariantError(
            "event-field", f"the framer yielded {type(event).__name__}, not ServerSentEvent"
        )
    kind, data, last_id, retry = event
    if not (isinstance(kind, str) and kind):
        raise InvariantError("event-field", f"event type {_brief(kind)} is not a non-empty str")
    if not isinstance(data, str):
        raise InvariantError("event-field", f"event data {_brief(data)} is not a str")
    if not isinstance(last_id, str) or "\x00" in last_id:
        raise InvariantError("event-field", f"event id {_brief(last_id)} is not a str without NUL")
    if retry is not None and not (type(retry) is int and retry >= 0):
        raise InvariantError(
            "event-field", f"event retry {_brief(retry)} is not None or a non-negative int"
        )
    for text in (kind, data, last_id):
        _check_text(text, "event field")


def _check_calls(calls: Sequence[ToolCall], dialect: str | None) -> None:
    seen: set[int] = set()
    for call in calls:
        if not isinstance(call, ToolCall):
            raise InvariantError("call-type", f"released {type(call).__name__}, not ToolCall")
        where = f"call {_brief(call.index)} ({_brief(call.name)})"
        if not isinstance(call.name, str):
            raise InvariantError("call-name", f"{where}: name {_brief(call.name)} is not a str")
        if call.call_id is not None and not isinstance(call.call_id, str):
            raise InvariantError(
                "call-id", f"{where}: call_id {_brief(call.call_id)} is not a str (or None)"
            )
        if not isinstance(call.args, dict):
            raise InvariantError(
                "call-args", f"{where}: args {type(call.args).__name__} is not a dict"
            )
        _check_json(call.args, where)
        if call.provider != dialect:
            raise InvariantError(
                "call-provider",
                f"{where}: provider {_brief(call.provider)}, parser says {dialect!r}",
            )
        if type(call.index) is not int or call.index < 0 or call.index in seen:
            raise InvariantError("call-index", f"{where}: index is not a fresh non-negative int")
        seen.add(call.index)
        if not isinstance(call.raw_arguments, str):
            raise InvariantError("call-raw-arguments", f"{where}: raw_arguments is not a str")
        if call.arguments_error is not None:
            if not isinstance(call.arguments_error, str):
                raise InvariantError(
                    "call-arguments-error", f"{where}: arguments_error is not a str"
                )
            if call.args:
                raise InvariantError(
                    "call-arguments-error", f"{where}: arguments_error set but args not empty"
                )
        for name in ("thought_signature", "item_id"):
            value = getattr(call, name)
            if value is not None and not isinstance(value, str):
                raise InvariantError(
                    f"call-{name}", f"{where}: {name} {_brief(value)} is not a str (or None)"
                )
        for text in (call.name, call.call_id or "", call.raw_arguments):
            _check_text(text, where)


def _check_partials(partials: Sequence[PartialToolCall]) -> None:
    for partial in partials:
        if not isinstance(partial, PartialToolCall):
            raise InvariantError(
                "partial-type", f"partial {type(partial).__name__} is not PartialToolCall"
            )
        fields = {
            "name": isinstance(partial.name, str),
            "id": partial.call_id is None or isinstance(partial.call_id, str),
            "index": type(partial.index) is int,
            "raw-arguments": isinstance(partial.raw_arguments, str),
        }
        for field, ok in fields.items():
            if not ok:
                raise InvariantError(
                    f"partial-{field}",
                    f"partial call {_brief(getattr(partial, _FIELDS[field]))}: "
                    f"{field} has the wrong type",
                )


_FIELDS = {"name": "name", "id": "call_id", "index": "index", "raw-arguments": "raw_arguments"}


def _brief(value: object) -> str:
    """A short repr that cannot recurse: a hostile stream can nest a value deeper than
    ``repr`` can go, and the message about it must still be built."""
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        text = repr(value)
        return text if len(text) <= 80 else text[:80] + "..."
    size = len(value) if isinstance(value, list | dict | tuple) else "?"
    return f"<{type(value).__name__} of {size}>"


def _check_text(text: str, where: str) -> None:
    # A lone surrogate cannot be encoded back to UTF-8: a handler, a log or the next
    # request would fail on it, far from the stream that carried it.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvariantError(
            "lone-surrogate", f"{where}: {text[:80]!r} holds a lone surrogate"
        ) from None


def _check_json(args: dict[str, Any], where: str) -> None:
    """The arguments hold only strict JSON values (walked without recursion, since a
    hostile stream may nest deeper than the interpreter's recursion limit)."""
    stack: list[Any] = [args]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise InvariantError(
                        "args-not-strict-json", f"{where}: key {_brief(key)} is not a str"
                    )
                _check_text(key, where)
                stack.append(item)
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str):
            _check_text(value, where)
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise InvariantError(
                    "args-not-strict-json", f"{where}: {_brief(value)} in the arguments is not JSON"
                )
        elif value is not None and not isinstance(value, int):  # bool is an int
            raise InvariantError(
                "args-not-strict-json", f"{where}: {type(value).__name__} in the arguments"
            )


def _call_key(call: ToolCall) -> tuple[Any, ...]:
    """Everything a call says, comparable without recursion (see :func:`_check_json`)."""
    return (
        call.name,
        call.call_id,
        call.index,
        call.provider,
        call.raw_arguments,
        call.arguments_error,
        call.thought_signature,
        call.item_id,
        _flat(call.args),
    )


def _flat(value: Any) -> tuple[Any, ...]:
    """A JSON value as a flat token tuple: equal exactly when the values are equal with
    their types (``1``, ``1.0`` and ``True`` differ; key order counts)."""
    out: list[Any] = []
    stack: list[Any] = [value]
    close = object()
    while stack:
        item = stack.pop()
        if item is close:
            out.append(")")
        elif isinstance(item, dict):
            out.append("{")
            stack.append(close)
            for key, sub in reversed(list(item.items())):
                stack.append(sub)
                stack.append(("key", key))
        elif isinstance(item, list):
            out.append("[")
            stack.append(close)
            stack.extend(reversed(item))
        elif isinstance(item, tuple):
            out.append(item)
        else:
            out.append((type(item).__name__, repr(item)))
    return tuple(out)
