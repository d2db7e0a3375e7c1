"""What every dialect's reassembler shares: argument parsing, pending calls, truncation.

Error objects are read by :mod:`sse_toolcalls.provider_errors`, for streams and HTTP alike.

Protocol knowledge does not live here; each wire format's rules are in its own package.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from itertools import accumulate
from typing import Any, ClassVar, cast

from .. import _json
from ..calls import (
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
    _Deferred,
    defer_raw_arguments,
)
from ..errors import (
    LimitExceededError,
    MalformedStreamError,
    SSEToolCallsError,
    TruncatedStreamError,
)
from ..framing.sse import PURE_PYTHON, ServerSentEvent
from ._depth import MAX_EVENT_DEPTH, MAX_PARSED_ARGUMENTS_DEPTH, dumps, nesting
from ._parsed import PARSED_DATA, ParsedEvent, text_of

# orjson turns integers beyond 64 bits into floats, silently losing digits; JSON text with
# a run of 19 or more digits is handed to the stdlib parser, which keeps them exact. The
# run is found by mapping digits to "0" and the rest to " " with bytes.translate and one
# substring search: 7 us for 2 KB, against 70 us for re.search(r"\d{19}") (timeit, here).
_DIGIT_MAP = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_LONG_RUN = b"0" * 19
# The same pass also marks every opening bracket "[", for the depth test of loads_strict:
# one translate and a bytes.count beat two str.count (0.6 us per 200-byte event, timeit).
_SCAN_MAP = bytes(
    0x30 if 0x30 <= b <= 0x39 else 0x5B if b in (0x5B, 0x7B) else 0x20 for b in range(256)
)


def has_long_number(text: str) -> bool:
    """Whether the text holds 19 digits in a row (a number orjson may not keep exact)."""
    return _LONG_RUN in text.encode("utf-8", "surrogatepass").translate(_DIGIT_MAP)


class _TooDeepError(ValueError):
    def __init__(self, depth: int, limit: int) -> None:
        super().__init__(f"JSON nested {depth} levels deep, over the limit of {limit}")
        self.depth = depth
        self.limit = limit


# Brackets keep their weight, everything else none; strings are cut out first, so the
# running sum of what is left is the nesting depth at each bracket.
_BRACKET_WEIGHT = {"[": 1, "{": 1, "]": -1, "}": -1}
_BRACKETS = str.maketrans({c: None for c in map(chr, range(128)) if c not in "[]{}"})


def _outside_strings(text: str) -> str:
    """Valid JSON text with every string literal cut out (what is left is ASCII:
    brackets, commas, colons, numbers, literals, whitespace).

    Escapes first: in a run of backslashes each pair is one escaped backslash, so the
    pairs go left to right and a backslash left over escapes the next character, of
    which only a quote matters. Every quote left then opens or closes a string, and the
    text between the odd and even ones is outside. Str methods only, each one pass: the
    regex this replaced (``"(?:[^"\\]|\\.)*"``) kept 47 to 120 bytes of matcher state per
    character of a string (tracemalloc: 122 MB for a 1 MB event whose arguments are one
    escaped string) and took 1.8 s at 10 MB, 13x its time at 1 MB; this takes 0.09 s.
    """
    if "\\" in text:
        text = text.replace("\\\\", "").replace('\\"', "")
    return "".join(text.split('"')[::2])


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON text (0 for a scalar).

    Call it on valid JSON only (text already parsed): there it is exact; on any text
    it is linear, a few copies of the text and no matcher state.
    """
    bare = _outside_strings(text).translate(_BRACKETS)
    bare = "".join(c for c in bare if c in _BRACKET_WEIGHT) if not bare.isascii() else bare
    return max(accumulate(map(_BRACKET_WEIGHT.__getitem__, bare)), default=0)


def _check_depth(text: str, limit: int) -> None:
    # As in loads_strict, for text that is already parsed.
    if (
        len(text) > 2 * limit
        and text.count("[") + text.count("{") > limit
        and (depth := json_depth(text)) > limit
    ):
        raise _TooDeepError(depth, limit)


def loads_strict(text: str, *, depth: int = MAX_EVENT_DEPTH) -> Any:
    """Parse JSON text as strictly as orjson does, keeping integers past 64 bits exact.

    One rule wherever the digits are (issue 9): orjson decides what is JSON (no NaN or
    Infinity, no number that overflows a double, no lone surrogate, at most 1,024
    levels), and then no nesting past ``depth`` levels. Text with a run of 19 or more
    digits is parsed again by the stdlib, which keeps big integers exact; orjson turns
    them into floats.

    Raises:
        ValueError: the text is not such JSON.
    """
    return loads_bounded(text, depth=depth)[0]


def loads_bounded(text: str, *, depth: int = MAX_EVENT_DEPTH) -> tuple[Any, int]:
    """:func:`loads_strict`, and a bound on the value's nesting (at least its depth, in
    levels): a caller that must bound a part of the value (Gemini's args) skips its own
    measurement when the bound is already within its limit.

    Raises:
        ValueError: as :func:`loads_strict`.
    """
    # orjson first, also on the exact path: the stdlib alone took 1e400 as inf and
    # "\ud800" as a lone surrogate, and would recurse past its limit near 1,000 levels.
    value = _json.loads(text)
    if _c_json_scan is not None:
        # The compiled twin: the exact depth and the digit run in one pass.
        bound, long_run = _c_json_scan(text)
        if bound > depth:
            raise _TooDeepError(bound, depth)
        if not long_run:
            return value, bound
    else:
        scan = text.encode("utf-8", "surrogatepass").translate(_SCAN_MAP)
        # Valid JSON deeper than ``depth`` needs 2 * depth characters and more than
        # ``depth`` opening brackets: two cheap tests that skip the measurement for nearly
        # every text (which, the text being valid JSON, is linear in it).
        bound = scan.count(b"[")
        if len(scan) > 2 * depth and bound > depth:
            bound = json_depth(text)
            if bound > depth:
                raise _TooDeepError(bound, depth)
        if _LONG_RUN not in scan:
            return value, bound
    import json  # the rare exact path; kept out of the import of the core

    return json.loads(text), bound


def json_scan_py(text: str) -> tuple[int, bool]:
    """The pure twin of the compiled ``json_scan``: the nesting depth of valid JSON
    text, and whether it holds 19 ASCII digits in a row (the reference the compiled one
    is held to; :func:`loads_bounded` takes cheaper bounds when it runs pure)."""
    scan = text.encode("utf-8", "surrogatepass").translate(_SCAN_MAP)
    return json_depth(text), _LONG_RUN in scan


def _load_c_json_scan() -> Callable[[str], tuple[int, bool]] | None:
    try:
        from .._sse_c import json_scan
    except ImportError:
        return None  # not built: the pure twin, as the install said
    return json_scan


C_JSON_SCAN = _load_c_json_scan()
"""The compiled twin of :func:`json_scan_py`, or ``None`` where it was not built (the
tests compare the two)."""

# The one in use: the compiled twin unless the pure one is forced, by the framer's
# switch (framing/sse.py).
_c_json_scan = None if PURE_PYTHON else C_JSON_SCAN


def is_whole_json(data: str) -> bool:
    """Whether ``data`` is whole JSON text: the test for a final event that lacks its
    blank line (a cut line can never pass for whole JSON)."""
    try:
        _json.loads(data)
    except ValueError:
        return False
    return True


def load_json(
    event: ServerSentEvent, dialect: str, *, exact: bool = False, depth: int = MAX_EVENT_DEPTH
) -> Any:
    """Parse an event's data as JSON, or raise :class:`MalformedStreamError`.

    ``exact`` keeps integers beyond 64 bits exact: needed where the event carries
    arguments as objects (Anthropic's start input, Gemini's args, Chat's object
    arguments), and bounds the event's nesting to ``depth`` levels
    (:class:`LimitExceededError`). Blank data is ``None``.
    """
    if event.data is PARSED_DATA:
        # Already parsed, exact and within every depth bound (dialects._parsed).
        return cast(ParsedEvent, event).payload
    try:
        return loads_strict(event.data, depth=depth) if exact else _json.loads(event.data)
    except _TooDeepError as exc:
        raise _event_too_deep(exc, dialect, event.data) from exc
    except ValueError as exc:
        if event.data.isspace():
            return None
        raise MalformedStreamError(
            f"{dialect}: event data is not JSON ({exc})", provider=dialect, data=event.data
        ) from exc


def event_object(
    event: ServerSentEvent, dialect: str, *, exact: bool = False
) -> dict[str, Any] | None:
    """The event's data as a JSON object, or ``None`` for empty or blank data (and JSON
    ``null``): keep-alives with nothing to read.

    ``exact`` as in :func:`load_json`.

    Raises:
        MalformedStreamError: the data is not JSON, or not a JSON object.
    """
    # Only events read ``exact`` carry arguments as objects; the others are read by
    # orjson alone (its own limit is 1,024 levels) and nothing recurses over them.
    # Measuring every event's depth cost 0.6 us of its 2 us (two str.count, timeit).
    return _event_object(event, dialect, exact)[0]


def event_object_bounded(event: ServerSentEvent, dialect: str) -> tuple[dict[str, Any] | None, int]:
    """:func:`event_object` read ``exact``, and a bound on the payload's nesting as
    :func:`loads_bounded` gives it.

    Raises:
        MalformedStreamError: as :func:`event_object`.
    """
    return _event_object(event, dialect, True)


def _event_object(
    event: ServerSentEvent, dialect: str, exact: bool
) -> tuple[dict[str, Any] | None, int]:
    data = event.data
    if data is PARSED_DATA:
        # An SDK's event, checked by dialects._parsed: no text to read. Its nesting is
        # within MAX_EVENT_DEPTH (a deeper one is framed as text), the bound said.
        return cast(ParsedEvent, event).payload, MAX_EVENT_DEPTH
    if not data:
        return None, 0
    bound = 0
    try:
        if exact:
            payload, bound = loads_bounded(data)
        else:
            payload = _json.loads(data)
    except _TooDeepError as exc:
        raise _event_too_deep(exc, dialect, data) from exc
    except ValueError as exc:
        if data.isspace():
            return None, 0
        raise MalformedStreamError(
            f"{dialect}: event data is not JSON ({exc})", provider=dialect, data=data
        ) from exc
    if type(payload) is dict:
        return payload, bound
    if payload is None:
        return None, 0
    raise MalformedStreamError(
        f"{dialect}: an event must be a JSON object", provider=dialect, data=data
    )


def _event_too_deep(exc: _TooDeepError, dialect: str, data: str) -> LimitExceededError:
    return LimitExceededError(
        f"{dialect}: an event's JSON nests {exc.depth} levels, over MAX_EVENT_DEPTH={exc.limit}",
        limit_name="MAX_EVENT_DEPTH",
        limit=exc.limit,
        size=exc.depth,
        provider=dialect,
        data=data,
    )


def parse_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    """Parse complete argument text strictly.

    Returns the arguments object and ``None``, or ``{}`` and the reason the text is not a
    JSON object. Empty or blank text is ``{}``: a call without parameters.
    """
    try:
        value = loads_strict(text, depth=MAX_PARSED_ARGUMENTS_DEPTH)
    except _TooDeepError as exc:
        return {}, _too_deep_arguments(exc)
    except ValueError as exc:
        if not text.strip():
            return {}, None
        return {}, f"arguments are not valid JSON: {exc}"
    if not isinstance(value, dict):
        return {}, f"arguments must be a JSON object, got {_json_kind(value)}"
    repeated = _repeated_key(text, value)
    if repeated is not None:
        # Parsers disagree on which of two values wins (orjson and the stdlib keep the
        # last, others the first: CVE-2017-12635), so whatever logged or checked the text
        # may have seen another call than the handler would run. The model is asked again.
        return {}, f"arguments have a repeated key {repeated!r} in one object"
    return value, None


def _repeated_key(text: str, value: dict[str, Any]) -> str | None:
    """A key that occurs twice in one object of ``text`` (valid JSON, parsed as ``value``),
    or ``None``.

    Each key is followed by one colon, so when the parsed objects hold as many keys as the
    text has colons no key was repeated (nearly every call: one ``str.count`` and a walk
    that stops there). Colons in strings (URLs, times) make the text's count too high:
    then the colons outside strings are counted, exactly one per key written, and only
    text that really repeats a key is read again to name it. That second reading (the
    stdlib's parser with a Python hook per object) had been every such call's: 0.43 s
    of a 10 MB call's arguments, ten times orjson's parse (W3).
    """
    colons = text.count(":")
    if colons == 0:
        return None
    keys = 0
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if type(item) is dict:
            keys += len(item)
            if keys >= colons:
                return None
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
    if _outside_strings(text).count(":") == keys:
        return None
    import json  # the rare exact path; kept out of the import of the core

    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        if not found:
            seen: set[str] = set()
            for key, _ in items:
                if key in seen:
                    found.append(key)
                    break
                seen.add(key)
        return dict(items)

    try:
        json.loads(text, object_pairs_hook=pairs)
    except (ValueError, RecursionError):  # orjson read it; the stdlib should too
        return None
    return found[0] if found else None


def _too_deep_arguments(exc: _TooDeepError) -> str:
    return f"arguments nest {exc.depth} levels, over MAX_PARSED_ARGUMENTS_DEPTH={exc.limit}"


def wire_string(value: Any, field: str, dialect: str) -> str | None:
    """A wire field that names or identifies a call (its name, its id, its item id): the
    string, or ``None`` for JSON ``null`` or an absent field.

    One rule for every dialect (issue 9): any other JSON value makes the event malformed,
    not the call invalid. An invalid call still goes out to be answered under its id and
    name, and a call with a number for either could not be answered, nor its result sent
    home; turning the number into text would invent a name or an id the server never sent.

    Raises:
        MalformedStreamError: the value is neither a string nor ``null``.
    """
    if value is None or type(value) is str:
        return value
    raise MalformedStreamError(
        f"{dialect}: a call's {field} must be a string, got {_json_kind(value)}",
        provider=dialect,
    )


def _json_kind(value: Any) -> str:
    kind = _json.json_type(value)
    return _json.JSON_TYPE_PHRASES.get(kind, kind)


def _tool_call_builder() -> Callable[..., ToolCall]:
    """A function that makes a :class:`ToolCall` from its fields given in order, as
    ``ToolCall(**fields)`` does, without the frozen dataclass's ``__init__``.

    That ``__init__`` (keywords gathered into a dict, then ``object.__setattr__`` per
    field) was 19,700 instructions a call, a ninth of a Gemini W4 feed; the slots'
    own setters take 8,300 (callgrind, issue 16). The fields are read from the dataclass,
    so a field added there is set here too, or the builder is not used at all.
    """
    names = tuple(f.name for f in dataclasses.fields(ToolCall))
    expected = (
        "name",
        "args",
        "provider",
        "call_id",
        "index",
        "raw_arguments",
        "arguments_error",
        "thought_signature",
        "item_id",
    )
    if names != expected or hasattr(ToolCall, "__post_init__"):
        return lambda *values: ToolCall(**dict(zip(expected, values, strict=True)))
    # raw_arguments' class attribute is calls._DeferredText (made on first read), with
    # the slot itself under it.
    slots = {n: vars(ToolCall)[n] for n in names}
    slots["raw_arguments"] = getattr(slots["raw_arguments"], "slot", slots["raw_arguments"])
    setters = [slots[n].__set__ for n in names]
    s_name, s_args, s_provider, s_id, s_index, s_raw, s_error, s_sig, s_item = setters
    new = object.__new__

    def build(  # noqa: PLR0917 - positional on purpose: keywords are what cost
        name: str,
        args: dict[str, Any],
        provider: Dialect,
        call_id: str | None,
        index: int,
        raw_arguments: str,
        arguments_error: str | None,
        thought_signature: str | None,
        item_id: str | None,
    ) -> ToolCall:
        done = new(ToolCall)
        s_name(done, name)
        s_args(done, args)
        s_provider(done, provider)
        s_id(done, call_id)
        s_index(done, index)
        s_raw(done, raw_arguments)
        s_error(done, arguments_error)
        s_sig(done, thought_signature)
        s_item(done, item_id)
        return done

    return build


_new_tool_call = _tool_call_builder()

# The same for the two small objects around a released call, set through their slots
# (completed_event for every dialect; _Deferred inline in Gemini's whole parts):
# ToolCallCompleted's frozen __init__ and _Deferred's were two more Python frames a call
# (callgrind, issue 16, h38).
# Where either class gains a field (or a __post_init__) this is None and the hot path
# calls the class as before; tests/core/test_event_fast_paths.py holds the two ways equal.
_new_object = object.__new__


def _only_slot(cls: type, name: str) -> Callable[[Any, Any], None] | None:
    slots = getattr(cls, "__slots__", ())
    if tuple(slots) != (name,) or hasattr(cls, "__post_init__"):
        return None
    if dataclasses.is_dataclass(cls) and [f.name for f in dataclasses.fields(cls)] != [name]:
        return None
    setter: Callable[[Any, Any], None] = vars(cls)[name].__set__
    return setter


_set_completed_call = _only_slot(ToolCallCompleted, "call")
_set_deferred_make = _only_slot(_Deferred, "make")


def completed_event(done: ToolCall) -> ToolCallCompleted:
    """``ToolCallCompleted(call=done)``, set through its slot where it has only that one."""
    if _set_completed_call is None:
        return ToolCallCompleted(call=done)
    completed: ToolCallCompleted = _new_object(ToolCallCompleted)
    _set_completed_call(completed, done)
    return completed


class PendingCall:
    """A call being assembled: its id, name and argument fragments so far."""

    __slots__ = (
        "call_id",
        "final",
        "fragments",
        "has_args",
        "index",
        "item_id",
        "key",
        "name",
        "started",
        "thought_signature",
        "value",
    )

    def __init__(self, index: int, call_id: str | None = None, name: str = "") -> None:
        self.index = index
        self.call_id = call_id
        self.name = name
        self.fragments: list[str] = []
        self.has_args = False
        """True once a non-blank argument fragment arrived."""
        self.started = False
        """True once ToolCallStarted was emitted for it."""
        self.thought_signature: str | None = None
        self.item_id: str | None = None
        self.key: Any = None
        """The dialect's own key for the call (Chat's wire ``index``), when it has one."""
        self.value: Any = None
        """Arguments given whole as an object (Anthropic start input, Gemini args)."""
        self.final: str | None = None
        """The authoritative final argument text, once a done event gave it (Responses)."""

    def text(self) -> str:
        """The argument text so far (joined once, then kept joined)."""
        if len(self.fragments) > 1:
            self.fragments = ["".join(self.fragments)]
        return self.fragments[0] if self.fragments else ""

    def partial(self) -> PartialToolCall:
        """This call as cut off."""
        return PartialToolCall(
            name=self.name, call_id=self.call_id, index=self.index, raw_arguments=self.text()
        )


class Reassembler:
    """Base of the per-dialect reassemblers: one instance per streamed response.

    A subclass implements ``on_event`` (its own table maps event types to handlers) and
    ``finish``. ``handle`` returns the rich stream events a batch of SSE events produced;
    with ``rich=False`` only completed calls and the finish are produced (the fast path
    the complete-calls API uses).
    """

    dialect: ClassVar[Dialect]

    def __init__(self, *, rich: bool = True) -> None:
        self.rich = rich
        self.out: list[StreamEvent] = []
        self.completed: list[ToolCall] = []
        self.text_parts: list[str] = []
        self.next_index = 0
        self.stop_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.ended = False
        """True once the dialect's end marker arrived."""
        self.reasoning: list[ReasoningBlock] = []
        """The turn's whole reasoning blocks so far, in stream order."""

    # -- the interface the parser uses ---------------------------------------------------

    def handle(self, events: list[ServerSentEvent]) -> list[StreamEvent]:
        """Take SSE events (a chunk's worth, in order); return the stream events produced.

        Raises:
            ProviderError: an event is an error report.
            TruncatedStreamError: an event ends the turn early (a token limit).
            MalformedStreamError: an event cannot be read in this dialect.
        """
        on_event = self.on_event
        event = None
        try:
            for event in events:
                if self.ended:
                    # After the end marker the turn is whole, its calls released and its
                    # StreamFinished out: nothing later can change it, so nothing later is
                    # read (proxies send a second [DONE], usage chunks, keep-alives). One
                    # rule for every dialect, here (issue 9).
                    break
                on_event(event)
        except SSEToolCallsError:
            raise
        except Exception as exc:
            # Payloads are read with plain dict access; a payload of the wrong shape
            # (a list where an object belongs...) is a malformed stream, not our crash.
            # Any other exception is caught too: only our exceptions leave the core
            # (STYLE 6), each root cause also being fixed where it arose.
            raise MalformedStreamError(
                f"{self.dialect}: event has an unexpected shape ({type(exc).__name__}: {exc})",
                provider=self.dialect,
                data=text_of(event) if event is not None else "",
            ) from exc
        out, self.out = self.out, []
        return out

    def on_event(self, event: ServerSentEvent) -> None:
        """Route one event to its handler (subclasses define the routing)."""
        raise NotImplementedError

    def finish(self) -> list[StreamEvent]:
        """End of stream: the remaining events, or raise for a truncated stream."""
        raise NotImplementedError

    # -- helpers for subclasses ----------------------------------------------------------

    def new_call(self, call_id: str | None = None, name: str = "") -> PendingCall:
        """Open a call at the next position of the turn."""
        call = PendingCall(self.next_index, call_id, name)
        self.next_index += 1
        return call

    def add_text(self, text: str) -> None:
        """Record visible text (a payload's non-string "text" is not text: ignored)."""
        if text and type(text) is str:
            self.text_parts.append(text)
            if self.rich:
                self.out.append(TextDelta(text=text))

    def add_reasoning(self, text: str) -> None:
        """Record reasoning text (shown only in the rich stream)."""
        if text and self.rich and type(text) is str:
            self.out.append(ReasoningDelta(text=text))

    def add_block(self, block: ReasoningBlock) -> None:
        """Record a whole reasoning block (kept in both modes: the turn must carry it back)."""
        self.reasoning.append(block)
        if self.rich:
            self.out.append(ReasoningCompleted(block=block))

    def add_arguments(self, call: PendingCall, fragment: str) -> None:
        """Append an argument fragment to a pending call."""
        if not fragment:
            return
        call.fragments.append(fragment)
        if not call.has_args and not fragment.isspace():
            call.has_args = True
        if self.rich:
            if not call.started:
                self.announce(call)
            self.out.append(ToolCallArgumentsDelta(index=call.index, delta=fragment))

    def announce(self, call: PendingCall) -> None:
        """Emit ToolCallStarted for a call (once)."""
        if not call.started:
            call.started = True
            if self.rich:
                self.out.append(
                    ToolCallStarted(index=call.index, call_id=call.call_id, name=call.name)
                )

    def complete(self, call: PendingCall, text: str | None = None) -> ToolCall:
        """Release a call: parse its arguments strictly and emit ToolCallCompleted.

        ``text`` overrides the joined fragments (a dialect's authoritative final text).
        """
        if call.value is not None and text is None and not call.has_args:
            value = call.value
            if isinstance(value, dict):
                raw = dumps(value)
                try:
                    _check_depth(raw, MAX_PARSED_ARGUMENTS_DEPTH)
                    args, error = value, None
                except _TooDeepError as exc:
                    args, error = {}, _too_deep_arguments(exc)
            elif isinstance(value, str):
                raw = value
                args, error = parse_arguments(value)
            else:
                raw = dumps(value)
                args, error = {}, f"arguments must be a JSON object, got {_json_kind(value)}"
        else:
            raw = call.text() if text is None else text
            args, error = parse_arguments(raw)
        return self._emit_call(call, args, raw, error)

    def complete_object(
        self, call: PendingCall, value: dict[str, Any], bound: int, make_raw: Callable[[], str]
    ) -> ToolCall:
        """Release a call whose arguments came whole as an object, as :meth:`complete`
        does, with its raw text made by ``make_raw()`` only when it is read.

        ``bound`` is at least the object's nesting (the event's, from
        :func:`loads_bounded`): within ``MAX_PARSED_ARGUMENTS_DEPTH`` nothing is
        measured; past it the object is walked. ``make_raw`` must return
        ``dumps(value)`` of the value as it arrived, whatever the caller did to ``args``
        since.
        """
        if bound > MAX_PARSED_ARGUMENTS_DEPTH:
            depth = nesting(value)
            if depth > MAX_PARSED_ARGUMENTS_DEPTH:
                error = _too_deep_arguments(_TooDeepError(depth, MAX_PARSED_ARGUMENTS_DEPTH))
                return self._emit_call(call, {}, make_raw(), error)
        done = self._emit_call(call, value, "", None)
        defer_raw_arguments(done, make_raw)
        return done

    def _emit_call(
        self, call: PendingCall, args: dict[str, Any], raw: str, error: str | None
    ) -> ToolCall:
        if self.rich:
            self.announce(call)
        done = _new_tool_call(
            call.name,
            args,
            self.dialect,
            call.call_id,
            call.index,
            raw,
            error,
            call.thought_signature,
            call.item_id,
        )
        self.completed.append(done)
        self.out.append(completed_event(done))
        return done

    def finished(self) -> None:
        """Emit StreamFinished for a turn that ended normally."""
        self.out.append(
            StreamFinished(
                stop_reason=self.stop_reason,
                usage=self.usage,
                text="".join(self.text_parts),
                calls=tuple(self.completed),
                reasoning=tuple(self.reasoning),
            )
        )

    def truncated(
        self, reason: str, message: str, pending: list[PendingCall] | None = None
    ) -> TruncatedStreamError:
        """Build the error for a turn that was cut (the caller raises it)."""
        return TruncatedStreamError(
            f"{self.dialect}: {message}",
            reason=reason,
            provider=self.dialect,
            completed=self.completed,
            partial=[call.partial() for call in pending or ()],
            text="".join(self.text_parts),
        )
