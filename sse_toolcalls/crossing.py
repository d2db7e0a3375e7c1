"""A conversation moved to another provider: the one rule for what carries over.

Each dialect's ``build_request`` sends only its own calls and results (a result goes
back in its call's dialect), so a conversation that another provider started is first
carried over: :func:`carry_over` returns the same conversation with every assistant turn
and result re-addressed to the target dialect. Pure data in, pure data out; no I/O.

The rule (docs/design.md, "Conversations across providers"):

- **Text, calls, arguments and results carry over**: each call becomes a call of the
  target dialect, with its name, its arguments (the raw text too, so the model reads what
  it wrote) and its place in the turn; each result follows its call.
- **Ids are kept where the target can take them, and re-mapped where it cannot**: an id
  of letters, digits, ``_`` and ``-``, at most 40 characters (the narrowest of the
  dialects: Anthropic's ``tool_use.id`` pattern, Chat's 40-character ``tool_call_id``)
  is kept, so a result already sent under it stays true; any other id, and a call
  without one (Gemini may send none), gets a stable one, ``call_`` and 24 hex digits of a
  SHA-256 of its turn, its place and its original id, the same every time the same
  conversation is carried over. The call and its result get the same id. Carried to
  Gemini, calls have no id: Gemini pairs responses with calls by order and name, and
  some of its endpoints refuse ids they did not send.
- **Another provider's reasoning is dropped**: thinking signatures, encrypted reasoning
  and Gemini thought signatures are valid only for the provider that made them (and a
  Responses ``fc_`` item id only for Responses). Reasoning blocks of the target dialect
  stay, so a conversation that comes back home keeps its own.
- **Carried to Gemini, each turn's first call gets the documented bypass signature**
  (:data:`GEMINI_CARRIED_SIGNATURE`): Gemini 3 refuses the current turn's function calls
  without a ``thoughtSignature`` on the first call of each step, and Google's guide says
  to fill the field with a dummy string for a trace transferred from another model.
  Earlier turns are not validated; they carry it too, so a turn stays the same whether
  or not it is the current one.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Iterable

from .calls import DIALECTS, Dialect, ToolCall, ToolResult
from .conversation import AssistantMessage, Conversation, Message, ToolResultsMessage
from .dialects import spec_for
from .dialects.gemini import CARRIED_SIGNATURE as _GEMINI_CARRIED_SIGNATURE
from .errors import UnknownDialectError

__all__ = ["GEMINI_CARRIED_SIGNATURE", "carry_over", "portable_call_id"]

GEMINI_CARRIED_SIGNATURE = _GEMINI_CARRIED_SIGNATURE
"""The ``thoughtSignature`` of a call carried to Gemini (its folder's
``CARRIED_SIGNATURE``, ``DialectSpec.carried_signature``)."""

_PORTABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")
"""An id every dialect takes as it is (Anthropic ``^[a-zA-Z0-9_-]+$``; Chat at most 40
characters)."""


def portable_call_id(call_id: str | None, *, turn: int, index: int) -> str:
    """``call_id`` when every dialect takes it, else a stable id for the call at
    ``index`` of assistant turn ``turn`` (0-based, counting assistant turns only)."""
    if call_id is not None and _PORTABLE_ID.fullmatch(call_id):
        return call_id
    seed = f"{turn}\x00{index}\x00{call_id if call_id is not None else ''}"
    digest = hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()
    return f"call_{digest[:24]}"


def _key(call: ToolCall) -> tuple[str, str | None, int, str]:
    return (call.provider, call.call_id, call.index, call.name)


def _carried(call: ToolCall, dialect: Dialect, turn: int, *, first: bool = False) -> ToolCall:
    # Both by the target's rules (DialectSpec): Gemini takes no foreign id and wants a
    # signature on the first call.
    spec = spec_for(dialect)
    signature = spec.carried_signature if first else None
    call_id = (
        portable_call_id(call.call_id, turn=turn, index=call.index)
        if spec.carried_call_ids
        else None
    )
    return dataclasses.replace(
        call,
        provider=dialect,
        call_id=call_id,
        thought_signature=signature,
        item_id=None,
    )


def carry_over(conversation: Conversation, dialect: str) -> list[Message]:
    """``conversation`` re-addressed to ``dialect`` (the rule is in the module's docs).

    Turns and results of ``dialect`` itself are returned unchanged (the same objects), so
    carrying a conversation to the provider that made it changes nothing.

    Raises:
        UnknownDialectError: an unknown dialect.
    """
    if dialect not in DIALECTS:
        raise UnknownDialectError(dialect, expected=DIALECTS)
    target: Dialect = dialect
    out: list[Message] = []
    turn = -1
    moved: dict[tuple[str, str | None, int, str], ToolCall] = {}
    for message in conversation:
        if isinstance(message, AssistantMessage):
            turn += 1
            moved = {}
            foreign = [call for call in message.calls if call.provider != target]
            reasoning = tuple(b for b in message.reasoning if b.provider == target)
            if not foreign and len(reasoning) == len(message.reasoning):
                out.append(message)
                continue
            calls = []
            # The first call of the turn (the one a signature rides on), by place.
            first = min(message.calls, key=lambda c: c.index, default=None)
            for call in message.calls:
                if call.provider == target:
                    calls.append(call)
                    continue
                new = _carried(call, target, turn, first=call is first)
                moved[_key(call)] = new
                calls.append(new)
            out.append(AssistantMessage(text=message.text, calls=tuple(calls), reasoning=reasoning))
        elif isinstance(message, ToolResultsMessage):
            out.append(_results(message, moved, target, turn))
        else:
            out.append(message)
    return out


def _results(
    message: ToolResultsMessage,
    moved: dict[tuple[str, str | None, int, str], ToolCall],
    target: Dialect,
    turn: int,
) -> ToolResultsMessage:
    results: Iterable[ToolResult] = message.results
    if all(r.call.provider == target for r in results):
        return message
    carried = []
    for result in message.results:
        call = result.call
        if call.provider == target:
            carried.append(result)
            continue
        # Results answer the turn just before; one given without it (a conversation kept
        # from the middle) still gets the id that turn would have given its call.
        new = moved.get(_key(call)) or _carried(call, target, max(turn, 0))
        carried.append(dataclasses.replace(result, call=new))
    return ToolResultsMessage(results=tuple(carried))
