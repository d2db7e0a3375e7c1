"""How deep the JSON of an event may nest, and parsed values written back as text.

The bound is shared by the text path (``_common``) and the parsed-event path
(``_parsed``), which both import it from here: it is neither's to own.
"""

from __future__ import annotations

from typing import Any

from .. import _json
from ..errors import LimitExceededError

__all__ = ["MAX_EVENT_DEPTH", "MAX_PARSED_ARGUMENTS_DEPTH", "check_nesting", "dumps", "nesting"]

MAX_PARSED_ARGUMENTS_DEPTH = 100
"""Bound on the nesting of a call's arguments, in levels of arrays and objects (the
arguments object itself is level 1).

Real tool arguments nest a handful of levels; 100 is far past any schema we have seen,
and far below the depths where recursive code (ours, orjson's 255-level encoder,
jsonschema, the stdlib's json at about 1,000) fails. Deeper arguments make the call
invalid (``arguments_error``), not the stream."""

MAX_EVENT_DEPTH = MAX_PARSED_ARGUMENTS_DEPTH + 28
"""Bound on the nesting of an event that carries arguments as objects (Anthropic's
``content_block_start``, Gemini's ``functionCall`` events, Chat's object arguments), in
levels of arrays and objects.

The arguments limit plus room for the deepest envelope around arguments (Gemini's
``candidates[0].content.parts[0].functionCall.args`` is 6 levels), so arguments at their
limit always arrive. Past it the event is refused: :class:`LimitExceededError`. Other
events are read by orjson alone, whose own limit is 1,024 levels."""


def nesting(value: Any) -> int:
    """The nesting depth of a parsed JSON value, walked without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if type(node) is dict:
            children: Any = node.values()
        elif type(node) is list:
            children = node
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children)
    return deepest


def check_nesting(value: Any, dialect: str | None = None) -> None:
    """Refuse a parsed value (arguments sent as an object) nested past ``MAX_EVENT_DEPTH``.

    Raises:
        LimitExceededError: it is.
    """
    depth = nesting(value)
    if depth > MAX_EVENT_DEPTH:
        raise LimitExceededError(
            f"a JSON value nests {depth} levels, over MAX_EVENT_DEPTH={MAX_EVENT_DEPTH}",
            limit_name="MAX_EVENT_DEPTH",
            limit=MAX_EVENT_DEPTH,
            size=depth,
            provider=dialect,
        )


def dumps(value: Any) -> str:
    """Compact JSON text of a value (argument objects sent as objects by the provider).

    Raises:
        LimitExceededError: the value nests deeper than ``MAX_EVENT_DEPTH``.
    """
    try:
        return _json.dumps(value).decode()
    except TypeError:
        # Integers beyond 64 bits, which orjson refuses and JSON allows; or nesting past
        # orjson's 255 levels, where the stdlib's recursion would fail too.
        check_nesting(value)
        import json

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
