"""Events whose JSON is already parsed (an SDK's events, plain dicts), read without text.

A caller who iterates the openai or anthropic SDK's own stream holds each event as
objects the SDK parsed from the wire. Writing them back as JSON text for the dialects to
parse again cost a serialisation, the SSE framing and a second parse per event; instead
:func:`parsed_event` checks the object once against the limits its text would have met
and hands the dict itself to the dialect (``StreamParser.feed_event``).

The limits are the text path's (``_common.loads_strict``, the framer):

- only JSON values: dicts with string keys, lists, strings, ints, finite floats, bools
  and ``None``. A value no JSON text can carry (a set, bytes, a non-string key, any other
  object) is the caller's, a :class:`UsageError`; a value JSON text can carry but the
  text path refuses (NaN or Infinity, which the stdlib's parser accepts; an integer that
  overflows a double; a lone surrogate) is a :class:`MalformedStreamError`, as for text.
- ``max_event_bytes`` bounds the event's JSON size (counted as a lower bound: the UTF-8
  bytes of its strings and keys with their quotes, one byte per other value and per
  separator): :class:`EventTooLargeError`, as from the framer.
- nesting: an event nested past ``MAX_EVENT_DEPTH`` (no provider's is; the limit exists
  for arguments sent as objects) is written out once as text and read by the text path,
  so that the dialect's own depth rule decides exactly as it does for text. Every other
  event goes to the dialect as it is: its integers are already exact (the stdlib's, or
  pydantic's) and its depth within every dialect's bound.

Outside arguments a number past 64 bits stays an int here, where the text path's orjson
makes it a float; arguments are exact either way (issue 9).

The walk has a compiled twin (``sse_toolcalls/_walk_c.c``, STYLE.md item 18), used when
it was built and ``SSE_TOOLCALLS_PURE_PYTHON`` does not force the pure twins: it answers
the depth and the size of an object the pure walk :func:`_measure_py` takes, and ``None``
for one it refuses, which the pure walk then walks again to raise its own error (one
owner per message; a refused event ends its stream). ``tests/core/test_walk_twins.py`` holds
the two equal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import EventTooLargeError, MalformedStreamError, UsageError
from ..framing.sse import PURE_PYTHON, ServerSentEvent
from ._depth import MAX_EVENT_DEPTH, dumps

PARSED_DATA = "\x00(parsed)"
"""The ``data`` of a :class:`ParsedEvent`: no text, a marker the readers test by identity
(``data is PARSED_DATA``); a framed event with the same characters is another object.
It answers the dialects' per-event text tests as an ordinary event would: not empty,
not ``[DONE]``, short, no long run of digits."""

# Nested past this many levels an object is looked at once for a container that holds
# itself, which no JSON text can write and which the walk would otherwise never finish
# (the compiled twin's MAX_FRAMES: past it, it leaves the object to this walk).
_SELF_CHECK_DEPTH = 65_536

# The most characters the walk joins into one string to measure (64 MiB at most).
_JOIN_MAX = 1 << 24

# Past 2**1023 an integer may round to infinity as a double, which the text path's
# orjson refuses ("number is infinity when parsed as double"); float() tells exactly.
_DOUBLE_SAFE = 2**1023


class ParsedEvent(ServerSentEvent):
    """An event whose JSON object is already parsed: ``payload`` is read, ``data`` is
    :data:`PARSED_DATA`. Built by :func:`parsed_event` only (it checked ``payload``)."""

    payload: dict[str, Any]
    """The event's JSON object."""


def text_of(event: ServerSentEvent) -> str:
    """The event's data as text: a parsed event's JSON written out (for error reports:
    the rare paths that carry the text along)."""
    data = event.data
    if data is not PARSED_DATA:
        return data
    return dumps(getattr(event, "payload", None))


def parsed_event(
    payload: Mapping[str, Any],
    event: str | None = None,
    *,
    max_event_bytes: int,
    dialect: str | None = None,
) -> ServerSentEvent:
    """The event a parsed JSON object stands for, checked as its text would have been.

    ``event`` is the SSE event name; ``None`` takes the payload's ``"type"`` when it is a
    string (Anthropic, Responses), else ``"message"``. A :class:`ParsedEvent` for nearly
    every object; a text event for one nested past ``MAX_EVENT_DEPTH`` (module docstring).

    Raises:
        UsageError: ``payload`` is not a mapping, or holds a value no JSON can carry.
        MalformedStreamError: it holds JSON the text path refuses (NaN, Infinity, an
            integer that overflows a double, a lone surrogate).
        EventTooLargeError: its JSON is larger than ``max_event_bytes``.
    """
    if type(payload) is not dict:
        if not isinstance(payload, Mapping):
            raise UsageError(
                f"expected a parsed event (a JSON object as a dict), got {type(payload).__name__}"
            )
        payload = dict(payload)
    if event is None:
        kind = payload.get("type")
        event = kind if type(kind) is str and kind else "message"
    found = _c_measure(payload, max_event_bytes) if _c_measure is not None else None
    depth, size = found if found is not None else _measure_py(payload, dialect, max_event_bytes)
    if size > max_event_bytes:
        raise EventTooLargeError(
            f"a parsed event's JSON holds at least {size} bytes, over "
            f"max_event_bytes={max_event_bytes}",
            limit=max_event_bytes,
            size=size,
        )
    if depth > MAX_EVENT_DEPTH:
        return ServerSentEvent(event, _deep_text(payload), "", None)
    # tuple.__new__ directly: the NamedTuple's own __new__ is a Python function around
    # it, 1,300 of this function's instructions per event (callgrind, Chat).
    parsed = _new_tuple(ParsedEvent, (event, PARSED_DATA, "", None))
    parsed.payload = payload
    return parsed


_new_tuple = tuple.__new__


def _measure_py(
    payload: dict[str, Any], dialect: str | None, limit: int | None = None
) -> tuple[int, int]:
    """The nesting depth of a JSON object and a lower bound of its JSON size, in bytes;
    refuses what is not JSON (see :func:`parsed_event`). One walk, level by level,
    without recursion.

    The size is counted as the walk goes (a string by its characters at once, its
    UTF-8 bytes beyond them once the walk is done) and checked against ``limit`` after
    each container's own count and after its values: past it the walk stops and answers
    the depth and size so far, as the text of such an event is refused for its size
    before it is parsed. So the work is bounded by the limit, whatever the object:
    every value looked at was counted first, in its container's count, and an object
    whose containers are shared (a DAG, small in memory and huge as JSON) stops within
    about ``limit`` values, where a check at the end of each level walked a whole level
    first (73 times the work of an object at the limit, issue 29)."""
    # Level by level, so no (node, level) pair is built per container; keys are checked
    # and measured by one join per object (a TypeError from the join is a key that is
    # not a string), strings kept for one measure of their UTF-8 bytes at the end.
    bound: float = float("inf") if limit is None else limit
    strings: list[str] = []
    keep = strings.append
    size = 0
    depth = 0
    level: list[Any] = [payload]
    while level:
        depth += 1
        if depth == _SELF_CHECK_DEPTH + 1:
            _check_acyclic(payload, dialect)
        below: list[Any] = []
        push = below.append
        for node in level:
            if type(node) is dict:
                try:
                    keys = "".join(node)
                except TypeError:
                    key = next(k for k in node if type(k) is not str)
                    raise _not_json(key, "an object key", dialect) from None
                keep(keys)
                # Braces, and per member its key's quotes, a colon and a comma.
                size += 2 + 4 * len(node) + len(keys)
                values: Any = node.values()
            else:
                size += 2 + len(node)
                values = node
            if size > bound:
                # Before its values: their number is in the count already.
                return depth, size
            for value in values:
                kind = type(value)
                if kind is str:
                    keep(value)
                    size += 2 + len(value)
                elif value is None or kind is bool:
                    size += 1
                elif kind is int:
                    size += 1
                    if not -_DOUBLE_SAFE < value < _DOUBLE_SAFE:
                        _check_double(value, dialect)
                elif kind is dict or kind is list:
                    push(value)
                elif kind is float:
                    size += 1
                    if value - value != 0.0:
                        # Only NaN and the infinities give anything but 0.0.
                        raise MalformedStreamError(
                            f"{dialect or 'parsed event'}: {value!r} is not a JSON number",
                            provider=dialect,
                        )
                else:
                    raise _not_json(value, "a value", dialect)
            if size > bound:
                return depth, size
        level = below
    # The UTF-8 bytes beyond one per character. The characters were counted, so within
    # the limit one join measures them all, unless references repeat strings past
    # _JOIN_MAX characters in all ({"a": [s] * 10_000} would build 10,000 copies of s):
    # then each distinct string once, by itself.
    if sum(map(len, strings)) <= _JOIN_MAX:
        text = "".join(strings)
        return depth, size + (0 if text.isascii() else _utf8(text, dialect) - len(text))
    measured: dict[int, int] = {}
    for text in strings:
        extra = measured.get(id(text))
        if extra is None:
            extra = measured[id(text)] = 0 if text.isascii() else _utf8(text, dialect) - len(text)
        size += extra
    return depth, size


def _check_acyclic(payload: dict[str, Any], dialect: str | None) -> None:
    """Refuse an object that holds itself (at any depth), searched depth first without
    recursion; every other object, however deep, passes."""
    on_path: set[int] = {id(payload)}
    finished: set[int] = set()
    stack: list[tuple[Any, Any]] = [(payload, iter(payload.values()))]
    while stack:
        node, children = stack[-1]
        for child in children:
            kind = type(child)
            if kind is not dict and kind is not list:
                continue
            if id(child) in on_path:
                raise UsageError(
                    f"{dialect or 'parsed event'}: a {kind.__name__} holds itself (no JSON "
                    "text can: it would never end)"
                )
            if id(child) not in finished:
                on_path.add(id(child))
                stack.append((child, iter(child.values() if kind is dict else child)))
                break
        else:
            stack.pop()
            on_path.discard(id(node))
            finished.add(id(node))


def _utf8(text: str, dialect: str | None) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise MalformedStreamError(
            f"{dialect or 'parsed event'}: a string holds a lone surrogate ({exc.reason})",
            provider=dialect,
        ) from exc


def _check_double(value: int, dialect: str | None) -> None:
    try:
        float(value)
    except OverflowError as exc:
        raise MalformedStreamError(
            f"{dialect or 'parsed event'}: an integer of {_digits(value)} digits is "
            "infinity when parsed as double",
            provider=dialect,
        ) from exc


def _digits(value: int) -> int:
    """The decimal digits of an integer, without ``str()``: past
    ``sys.get_int_max_str_digits()`` (4,300 by default) ``str()`` raises ValueError."""
    value = abs(value)
    # The bit length times log10(2) rounded down is at most a digit or two short.
    digits = max(1, (value.bit_length() - 1) * 30102999 // 100000000)
    while value >= 10**digits:
        digits += 1
    return digits


def _not_json(value: object, what: str, dialect: str | None) -> UsageError:
    return UsageError(
        f"{dialect or 'parsed event'}: {what} of type {type(value).__name__} is not JSON "
        "(a parsed event holds only dicts with str keys, lists, str, int, finite float, "
        "bool and None)"
    )


def _deep_text(payload: dict[str, Any]) -> str:
    """Compact JSON text of a checked object nested deeper than the serialisers recurse
    (orjson stops at 255 levels, the stdlib near 1,000): written without recursion."""
    import json

    parts: list[str] = []
    # Each entry is a value to write, or a closing bracket / separator already as text.
    todo: list[Any] = [payload]
    while todo:
        item = todo.pop()
        if type(item) is _Raw:
            parts.append(item.text)
        elif type(item) is dict:
            parts.append("{")
            pending: list[Any] = [_Raw("}")]
            for position, (key, value) in enumerate(reversed(item.items())):
                pending.append(value)
                sep = "," if position < len(item) - 1 else ""
                pending.append(_Raw(sep + json.dumps(key, ensure_ascii=False) + ":"))
            todo.extend(pending)
        elif type(item) is list:
            parts.append("[")
            pending = [_Raw("]")]
            for position, value in enumerate(reversed(item)):
                pending.append(value)
                if position < len(item) - 1:
                    pending.append(_Raw(","))
            todo.extend(pending)
        else:
            parts.append(json.dumps(item, ensure_ascii=False))
    return "".join(parts)


class _Raw:
    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _load_compiled() -> Callable[[dict[str, Any], int], tuple[int, int] | None] | None:
    try:
        from .._walk_c import measure
    except ImportError:
        return None  # not built (no compiler at install): the pure twin, as the install said
    return measure


C_MEASURE = _load_compiled()
"""The compiled twin of :func:`_measure_py` (``None`` for an object that walk refuses),
or ``None`` where it was not built (the tests compare the two)."""

# The one in use: the compiled twin unless the framer's switch forces the pure ones.
_c_measure = None if PURE_PYTHON else C_MEASURE
