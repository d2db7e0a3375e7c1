"""The ``walk`` fuzz target: parsed objects made from fuzz bytes, through both walks.

``StreamParser.feed_event`` takes objects, not bytes, so this target makes objects from
the fuzz input: each ``data:`` line (or the whole input, when it has none) is read by
the stdlib's JSON parser, as an SDK reads the wire, which lets NaN, Infinity, integers
of any size and lone surrogates (``\\ud800``) through. A one-member object whose key is
a marker becomes what no JSON text can carry, so that mutations reach those branches
too: ``{"$set": [...]}`` a set, ``{"$bytes": "..."}`` bytes, ``{"$tuple": [...]}`` a
tuple, ``{"$text": "..."}`` a str subclass, ``{"$table": {...}}`` a dict subclass,
``{"$row": [...]}`` a list subclass, ``{"$real": 1.5}`` a float subclass, ``{"$level": 0}``
an IntEnum, ``{"$key": [k, v]}`` the object ``{k: v}`` with any hashable key.

Each object must get the same verdict from the compiled walk (``_walk_c``) as from the
pure walk, the same event or error (message included) from ``parsed_event`` on either
twin at two limits, and nothing but our exceptions from a parser's ``feed_event``.
"""

from __future__ import annotations

import enum
import json
from typing import Any

from ...dialects import _parsed
from ...errors import SSEToolCallsError
from ...framing.sse import DEFAULT_MAX_EVENT_BYTES
from ...parser import StreamParser

__all__ = ["objects", "walk_disagreement"]

_LIMITS = (DEFAULT_MAX_EVENT_BYTES, 256)
"""The two ``max_event_bytes`` each object is measured against: the default, and one
small enough that the fuzzer crosses it."""


class _Text(str):
    pass


class _Table(dict[Any, Any]):
    pass


class _Row(list[Any]):
    pass


class _Real(float):
    pass


class _Level(enum.IntEnum):
    LOW = 0


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _marked(pairs: list[tuple[str, Any]]) -> Any:
    if len(pairs) != 1:
        return dict(pairs)
    key, value = pairs[0]
    if key == "$set" and isinstance(value, list):
        return {_hashable(item) for item in value}
    if key == "$bytes" and isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if key == "$tuple" and isinstance(value, list):
        return tuple(value)
    if key == "$text" and isinstance(value, str):
        return _Text(value)
    if key == "$table" and isinstance(value, dict):
        return _Table(value)
    if key == "$row" and isinstance(value, list):
        return _Row(value)
    if key == "$real" and isinstance(value, float):
        return _Real(value)
    if key == "$level":
        return _Level.LOW
    if key == "$key" and isinstance(value, list) and len(value) == 2:
        return {_hashable(value[0]): value[1]}
    return dict(pairs)


def objects(stream: bytes) -> list[Any]:
    """The parsed values the stream's ``data:`` lines (or the whole stream) hold."""
    text = stream.decode("utf-8", "replace")
    lines = [line[5:] for line in text.splitlines() if line.startswith("data:")]
    found = []
    for line in lines or [text]:
        try:
            found.append(json.loads(line, object_pairs_hook=_marked))
        except (ValueError, RecursionError):
            continue  # not JSON the stdlib reads (or nested past its recursion): no object
    return found


def _measured(payload: Any, limit: int) -> tuple[Any, ...]:
    try:
        return ("ok", _parsed._measure_py(payload, None, limit))
    except SSEToolCallsError as exc:
        return ("error", type(exc).__name__, str(exc))


def _event(payload: Any, limit: int) -> tuple[Any, ...]:
    try:
        event = _parsed.parsed_event(payload, max_event_bytes=limit)
    except SSEToolCallsError as exc:
        return ("error", type(exc).__name__, str(exc), type(exc.__cause__).__name__)
    return ("event", type(event).__name__, event.event, event.data)


def walk_disagreement(stream: bytes) -> tuple[str, str] | None:
    """Hold every object of one fuzz input to the walk's properties.

    Returns:
        The first property that broke, as its kind and what happened (the twins
        disagree), which :func:`.invariants.check` raises as its ``InvariantError``;
        ``None`` when every object passed.

    Raises:
        Exception: whatever non-library exception escaped (the finding).
    """
    compiled = _parsed.C_MEASURE
    for payload in objects(stream):
        if compiled is not None and type(payload) is dict:
            for limit in _LIMITS:
                pure = _measured(payload, limit)
                answer = compiled(payload, limit)
                taken = pure[0] == "ok" and pure[1][1] <= limit
                if answer != (pure[1] if taken else None):
                    return (
                        "walk-twins",
                        f"the compiled walk said {answer!r}, the pure one {pure!r}",
                    )
        saved = _parsed._c_measure
        try:
            outcomes = []
            for which in (None, compiled) if compiled is not None else (None,):
                _parsed._c_measure = which
                outcomes.append([_event(payload, limit) for limit in _LIMITS])
        finally:
            _parsed._c_measure = saved
        if outcomes[-1] != outcomes[0]:
            return (
                "walk-event-twins",
                f"parsed_event on the pure walk gave {outcomes[0]!r}, on the compiled one "
                f"{outcomes[-1]!r}",
            )
        parser = StreamParser(None)
        try:
            parser.feed_event(payload)
            parser.finish()
        except SSEToolCallsError:
            pass
    return None
