"""The request's own pairing of calls and results, as each API checks it: the results
that follow an assistant turn answer that turn's calls, under the ids the turn itself
gave them ("tool_result block(s) provided without a corresponding tool_use", a
``tool_call_id`` no call had, a ``function_call_output`` without its ``function_call``,
a Gemini content whose response parts do not match its call parts). A conversation
carried over from another provider must still pair up in the dialect it is sent in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class WireCall:
    """A call as the request's last assistant turn carries it."""

    call_id: str | None
    name: Any
    args: Any


def listed(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one: a request may hold anything where
    a list belongs (``"messages": true``), which the checks read as nothing."""
    return value if isinstance(value, list) else []


def _parse(text: Any) -> Any:
    import orjson

    try:
        return orjson.loads(text) if isinstance(text, str) else text
    except orjson.JSONDecodeError:
        return text


def _chat(body: dict[str, Any]) -> tuple[list[WireCall], list[Any]]:
    messages = [m for m in listed(body.get("messages")) if isinstance(m, dict)]
    last = max((n for n, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    if last < 0:
        return [], []
    calls = [
        WireCall(call_id=c.get("id"), name=f.get("name"), args=_parse(f.get("arguments")))
        for c in listed(messages[last].get("tool_calls"))
        if isinstance(c, dict)
        for f in [c["function"] if isinstance(c.get("function"), dict) else {}]
    ]
    ids = [m.get("tool_call_id") for m in messages[last + 1 :] if m.get("role") == "tool"]
    return calls, ids


def _responses(body: dict[str, Any]) -> tuple[list[WireCall], list[Any]]:
    items = [i for i in listed(body.get("input")) if isinstance(i, dict)]
    calls: list[WireCall] = []
    fresh = True
    for item in items:
        if item.get("type") == "function_call":
            # A call after outputs or a user message opens a new assistant turn.
            if fresh:
                calls, fresh = [], False
            calls.append(
                WireCall(
                    call_id=item.get("call_id"),
                    name=item.get("name"),
                    args=_parse(item.get("arguments")),
                )
            )
        elif item.get("type") == "function_call_output" or item.get("role") == "user":
            fresh = True
    ids = [i.get("call_id") for i in items if i.get("type") == "function_call_output"]
    return calls, ids


def _blocks(message: Any) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _anthropic(body: dict[str, Any]) -> tuple[list[WireCall], list[Any]]:
    messages = [m for m in listed(body.get("messages")) if isinstance(m, dict)]
    last = max((n for n, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    if last < 0:
        return [], []
    calls = [
        WireCall(call_id=b.get("id"), name=b.get("name"), args=b.get("input"))
        for b in _blocks(messages[last])
        if b.get("type") == "tool_use"
    ]
    ids = [
        b.get("tool_use_id")
        for m in messages[last + 1 : last + 2]
        for b in _blocks(m)
        if b.get("type") == "tool_result"
    ]
    return calls, ids


def _converse(body: dict[str, Any]) -> tuple[list[WireCall], list[Any]]:
    # Bedrock Converse: toolUse blocks in the assistant message, toolResult blocks under
    # their toolUseId in the next (user) message.
    messages = [m for m in listed(body.get("messages")) if isinstance(m, dict)]
    last = max((n for n, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    if last < 0:
        return [], []
    uses = [b["toolUse"] for b in _blocks(messages[last]) if isinstance(b.get("toolUse"), dict)]
    calls = [
        WireCall(call_id=u.get("toolUseId"), name=u.get("name"), args=u.get("input")) for u in uses
    ]
    ids = [
        b["toolResult"].get("toolUseId")
        for m in messages[last + 1 : last + 2]
        for b in _blocks(m)
        if isinstance(b.get("toolResult"), dict)
    ]
    return calls, ids


def _gemini(body: dict[str, Any]) -> tuple[list[WireCall], list[Any]]:
    contents = [c for c in listed(body.get("contents")) if isinstance(c, dict)]
    last = max((n for n, c in enumerate(contents) if c.get("role") == "model"), default=-1)
    if last < 0:
        return [], []
    parts = [p for p in listed(contents[last].get("parts")) if isinstance(p, dict)]
    calls = [
        WireCall(
            call_id=p["functionCall"].get("id"),
            name=p["functionCall"].get("name"),
            args=p["functionCall"].get("args"),
        )
        for p in parts
        if isinstance(p.get("functionCall"), dict)
    ]
    names = [
        p["functionResponse"].get("name")
        for c in contents[last + 1 : last + 2]
        for p in listed(c.get("parts"))
        if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
    ]
    return calls, names


_READERS = {
    "openai_chat": _chat,
    "openai_responses": _responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "bedrock_converse": _converse,
    # InvokeModel takes Anthropic's own body.
    "bedrock_anthropic": _anthropic,
}


def last_turn(dialect: str, body: dict[str, Any]) -> tuple[list[WireCall], list[Any]]:
    """The calls of the request's last assistant turn, and the ids (Gemini: the names)
    of the results that follow it."""
    return _READERS[dialect](body)


def pairing_problems(dialect: str, body: dict[str, Any]) -> list[str]:
    """What the API would refuse about how the request's results answer its calls."""
    calls, answers = last_turn(dialect, body)
    if dialect == "gemini":
        if answers and [c.name for c in calls] != answers:
            return [
                "the number or names of function response parts do not match the function "
                f"call parts of the model turn (calls {[c.name for c in calls]}, responses "
                f"{answers})"
            ]
        return []
    # An id is a string (each API's schema says so, and answers 400 for anything else);
    # the others are reported, and kept out of the sets below, where a list or an object
    # cannot go.
    problems = [
        f"an id must be a string, got {value!r}"
        for value in [*(c.call_id for c in calls), *answers]
        if value is not None and not isinstance(value, str)
    ]
    answers = [a for a in answers if a is None or isinstance(a, str)]
    known = {c.call_id for c in calls if isinstance(c.call_id, str)}
    if dialect == "openai_responses":
        # Every output needs its function_call somewhere in the input, not only in the
        # last turn.
        known = {
            i["call_id"]
            for i in listed(body.get("input"))
            if isinstance(i, dict)
            and i.get("type") == "function_call"
            and isinstance(i.get("call_id"), str)
        }
        return problems + [
            f"No tool call found for function call output with call_id {a!r}."
            for a in answers
            if a not in known
        ]
    return problems + [
        f"a tool result answers id {a!r}, which the assistant turn before it has no call for"
        for a in answers
        if a not in known
    ]


__all__ = ["WireCall", "last_turn", "listed", "pairing_problems"]
