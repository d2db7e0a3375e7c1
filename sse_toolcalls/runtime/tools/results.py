"""Every result text the model reads, in one place.

A call always gets an answer under its own id; when the answer is not the handler's own
return value, its content is a JSON object the model can act on::

    {"error": "invalid_arguments", "tool": "get_weather",
     "message": "The arguments for 'get_weather' have 2 problems; fix each one and call the tool again.",
     "problems": [
        {"path": "$.unit", "problem": "not_in_enum",
         "message": "must be one of 'celsius', 'fahrenheit'; got 'kelvin'",
         "allowed": ["celsius", "fahrenheit"]},
        {"path": "$.days", "problem": "missing_field",
         "message": "required field 'days' (an integer) is missing"}]}

``error`` is one of:

- ``unknown_tool`` (with ``available_tools``) and ``invalid_arguments`` (with
  ``problems``): the call was refused when it was checked, nothing ran;
- ``tool_failed`` and ``tool_timeout``: the handler raised or overran; a *write* that
  overran gets its own text (it may still have happened: do not repeat it);
- ``sandbox_violation`` (with ``violation``, and ``path`` or ``address`` when known): a
  sandboxed tool was stopped by its sandbox (a denied path, the network, a memory, CPU,
  process or file-size limit, its timeout, a crash);
- ``tool_unavailable``: an open circuit, or a write the ledger could not reserve;
- ``declined``: a person declined the call, or the application's policy denied it
  (with ``reason`` when the policy gave one); it did not run;
- ``write_unconfirmed``: a write started earlier and never confirmed, not repeated;
- ``too_many_calls``: the turn asked for more calls than allowed, none ran;
- ``tool_retry``: the handler refused the call with its own reason
  (:class:`~sse_toolcalls.runtime.errors.ToolRetry`), for the model to correct;
- ``tool_error``: the tool ran and answered with an error worded for the model
  (:class:`~sse_toolcalls.runtime.errors.ToolErrorReply`: an MCP server's ``isError`` result),
  its text as ``message`` and, when it was more than one text, its parts as ``content``.

A write the ledger already holds is answered with its recorded content wrapped in
``{"replayed": true, "ran_at": ..., "message": ..., "result": ...}``
(:func:`replayed_result`). The tools layer (:class:`~.registry.ToolRegistry`) and the
runtime (:mod:`sse_toolcalls.runtime.dispatch`) both answer through here, so a text is
written once and the two can never disagree. Nothing here raises for any value: results
are made after a tool may have run, when an exception would lose its answer.
"""  # noqa: E501

from __future__ import annotations

import datetime
import difflib
import logging
import math
from collections.abc import Sequence
from typing import Any

from ..._jsonsafe import clean_text, dumps_safe, json_value, safe_repr, safe_str
from ..._logging import log
from ...calls import Document, Image, MediaPart, ToolCall, ToolResult
from ...errors import UsageError
from ..errors import (
    CircuitOpenError,
    InvalidArgumentsError,
    SandboxViolationError,
    ToolError,
    ToolTimeoutError,
    UnknownToolError,
)
from .validation import Problem, problem_json

__all__ = [
    "NO_TOOL_FITS_REPLY",
    "declined_result",
    "error_result",
    "ledger_refusal_result",
    "ok_result",
    "replayed_result",
    "too_many_calls_result",
    "tool_error_result",
    "tool_retry_result",
    "write_timeout_result",
    "write_unconfirmed_result",
]

logger = logging.getLogger("sse_toolcalls.runtime.tools")

NO_TOOL_FITS_REPLY = (
    "Noted: no tool fits this request. Answer the user directly, without calling a tool."
)
"""What the built-in no-tool-fits tool answers (see ``ToolRegistry.enable_no_tool_fits``)."""

MAX_DETAIL_CHARS = 300
"""Characters of a handler's exception message shown to the model, when shown at all:
the first line says what went wrong; a traceback's worth would crowd the context."""


def ok_result(call: ToolCall, value: Any) -> ToolResult:
    """Make the ok result of ``call`` from its handler's return value; never raises.

    Strings are sent as they are; ``dict`` and ``list`` as JSON values; dataclasses,
    pydantic models, enums, dates, UUIDs, tuples and sets are turned into JSON first;
    numbers, booleans and ``None`` are sent as their JSON text. What JSON cannot hold is
    mapped to the nearest JSON value (:mod:`sse_toolcalls._jsonsafe`: lone surrogates
    replaced, bytes decoded, NaN as ``null``, cycles cut, any other object as its
    ``str``): the handler has run by now, so the model must hear what it answered, and an
    error result would invite it to run the tool again. An ``Image`` or ``Document``, or a
    list or tuple holding some, becomes the result's ``media`` (the other items its
    content).

    Returns:
        A :class:`ToolResult` addressed to ``call``.
    """
    media = _media(value)
    if media is not None:
        parts, rest = media
        return ToolResult(call=call, content=_content(rest) if rest != "" else "", media=parts)
    return ToolResult(call=call, content=_content(value))


def _media(value: Any) -> tuple[tuple[MediaPart, ...], Any] | None:
    """The images and documents of a return value and what is left of it, or ``None``
    when it holds none: an ``Image`` or ``Document``, or a list or tuple holding some
    (the rest of the items is the text: one string as it is, several as a list)."""
    if isinstance(value, Image | Document):
        return (value,), ""
    if not isinstance(value, list | tuple) or not any(
        isinstance(v, Image | Document) for v in value
    ):
        return None
    parts = tuple(v for v in value if isinstance(v, Image | Document))
    rest = [v for v in value if not isinstance(v, Image | Document)]
    return parts, ("" if not rest else rest[0] if len(rest) == 1 else rest)


def error_result(
    exc: ToolError, *, available_tools: Sequence[str] = (), show_error_details: bool = False
) -> ToolResult:
    """Turn a refusal or a failure into the error result the model sees.

    Args:
        exc: the refusal (:class:`UnknownToolError`, :class:`InvalidArgumentsError`) or
            failure (:class:`ToolTimeoutError`, :class:`CircuitOpenError`, any other
            :class:`ToolError` as ``tool_failed``).
        available_tools: the names the model may call, listed for an unknown tool.
        show_error_details: put the first line of a failing handler's exception in the
            message (off by default: it may hold internals). It is logged either way.

    Returns:
        A :class:`ToolResult` with ``is_error=True`` addressed to ``exc.call``, its
        content the JSON object of the module docstring.

    Raises:
        UsageError: ``exc`` carries no call.
    """
    call = exc.call
    if call is None:
        raise UsageError("an error result needs the call it answers (exc.call is None)")
    name = call.name
    content: dict[str, Any]
    if isinstance(exc, UnknownToolError):
        available = list(available_tools)
        close = difflib.get_close_matches(name, available, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        listed = ", ".join(repr(n) for n in available) or "none"
        message = f"There is no tool named {name!r}.{hint} The available tools are: {listed}."
        problem = Problem(path="$", kind="unknown_tool", message=message, allowed=tuple(available))
        content = {
            "error": "unknown_tool",
            "tool": name,
            "message": message,
            "available_tools": available,
            "problems": [problem_json(problem)],
        }
    elif isinstance(exc, InvalidArgumentsError):
        problems = [p for p in exc.problems if isinstance(p, Problem)]
        content = {
            "error": "invalid_arguments",
            "tool": name,
            "message": (
                f"The arguments for {name!r} have {count(len(problems), 'problem')}; "
                "fix each one and call the tool again."
            ),
            "problems": [problem_json(p) for p in problems],
        }
    elif isinstance(exc, ToolTimeoutError):
        content = {
            "error": "tool_timeout",
            "tool": name,
            "message": f"The tool {name!r} did not finish in time; it may be retried later.",
        }
    elif isinstance(exc, SandboxViolationError):
        content = _violation_content(name, exc.violation)
    elif isinstance(exc, CircuitOpenError):
        content = {
            "error": "tool_unavailable",
            "tool": name,
            "message": (
                f"The tool {name!r} is unavailable for now after repeated failures; "
                "do without it or try again later."
            ),
        }
    else:
        cause = exc.__cause__
        detail = type(cause).__name__ if cause is not None else "error"
        if show_error_details and cause is not None and safe_str(cause):
            detail += f": {first_line(cause)}"
        log(
            logger,
            logging.WARNING,
            "tool_failed",
            f"tool {name!r} failed: {safe_str(exc)}",
            tool=name,
            call_id=call.call_id,
            exception=safe_repr(cause or exc),
            exc_info=cause or exc,
        )
        content = {
            "error": "tool_failed",
            "tool": name,
            "message": (
                f"The tool {name!r} failed while running ({detail}). Check the arguments; "
                "if they are right, tell the user the tool is failing."
            ),
        }
    return ToolResult(call=call, content=content, is_error=True)


# What the model is told for each kind of violation: what happened and what to do next.
# Keyed by ViolationKind's values (plain strings: the tools layer does not import the
# sandbox engine).
_VIOLATION_TEXTS = {
    "denied_path": "The tool {name!r} tried to use {path}, which it is not allowed to "
    "touch; it was stopped. Use only the paths the tool is meant for.",
    "network_refused": "The tool {name!r} tried to reach the network{address}, which it "
    "is not allowed to do; it was stopped.",
    "memory_limit": "The tool {name!r} ran out of its memory limit and was stopped. "
    "Try a smaller request.",
    "cpu_limit": "The tool {name!r} used more than its CPU time limit and was stopped. "
    "Try a smaller request.",
    "process_limit": "The tool {name!r} tried to start more processes than it may and was stopped.",
    "file_size_limit": "The tool {name!r} tried to write a file larger than it may and "
    "was stopped. Try a smaller request.",
    "timeout": "The tool {name!r} did not finish within its time limit and was stopped; "
    "it may be retried later with a smaller request.",
    "crash": "The tool {name!r} crashed while running. Tell the user the tool is failing.",
    "handler_error": "The tool {name!r} failed while running ({exception}). Check the "
    "arguments; if they are right, tell the user the tool is failing.",
    "bad_result": "The tool {name!r} gave an answer that could not be read. Tell the "
    "user the tool is failing.",
}


def _violation_content(name: str, violation: Any) -> dict[str, Any]:
    kind = str(getattr(violation, "kind", "crash"))
    path = getattr(violation, "path", None)
    address = getattr(violation, "address", None)
    template = _VIOLATION_TEXTS.get(kind, _VIOLATION_TEXTS["crash"])
    message = template.format(
        name=name,
        path=repr(path) if path else "a path outside its allowed ones",
        address=f" ({address})" if address else "",
        exception=getattr(violation, "exception", None) or "an error",
    )
    content: dict[str, Any] = {
        "error": "sandbox_violation",
        "tool": name,
        "violation": kind,
        "message": message,
    }
    if path:
        content["path"] = clean_text(str(path))
    if address:
        content["address"] = clean_text(str(address))
    return content


def declined_result(call: ToolCall, *, reason: str | None = None) -> ToolResult:
    """The result of a call that did not run because it was declined: by a person
    (``reason`` ``None``: "the user declined") or by the application's policy (its
    ``reason``, which the model reads)."""
    if reason is None:
        message = (
            f"The user declined the call to {call.name!r}; it did not run. Do not call it "
            "again for this request; ask the user how to go on."
        )
        return _error(call, "declined", message)
    message = f"The call to {call.name!r} was not allowed and did not run: {clean_text(reason)}"
    content: dict[str, Any] = {
        "error": "declined",
        "tool": call.name,
        "message": message,
        "reason": clean_text(reason),
    }
    return ToolResult(call=call, content=content, is_error=True)


def write_timeout_result(call: ToolCall) -> ToolResult:
    """The result of a *write* that overran its timeout.

    Not the read's "it may be retried later": a write that overran may still finish in
    its abandoned thread or on the remote side, and a retry would be a second action.
    """
    return _error(
        call,
        "tool_timeout",
        f"The action {call.name!r} did not finish in time and may still have happened. "
        "Do not repeat it; tell the user it is unconfirmed.",
    )


def replayed_result(
    call: ToolCall,
    content: str | dict[str, Any] | list[Any],
    *,
    is_error: bool,
    ran_at: float | None,
) -> ToolResult:
    """A write's recorded answer, re-addressed to the call that asks for it again.

    Wrapped, not bare: a model shown only the recorded answer takes it for a new run
    ("sent Bob another 10"), so it is told this is a replay and when the action ran
    (``ran_at``, seconds since the epoch, as ISO 8601 UTC; ``None`` when unknown).
    """
    when = _iso(ran_at)
    at = f" at {when}" if when else ""
    wrapped: dict[str, Any] = {
        "replayed": True,
        "tool": call.name,
        "ran_at": when,
        "message": (
            f"The action {call.name!r} already ran{at} for this request; this is its "
            "recorded result, not a new run. Do not call it again for this request; "
            "tell the user what it did then."
        ),
        "result": content,
    }
    return ToolResult(call=call, content=wrapped, is_error=is_error)


def _iso(when: float | None) -> str | None:
    if when is None or not math.isfinite(when):
        return None
    try:
        stamp = datetime.datetime.fromtimestamp(when, tz=datetime.UTC)
    except (OverflowError, OSError, ValueError):
        return None  # a ledger row from a strange clock: the replay still says it is one
    return stamp.isoformat(timespec="seconds").replace("+00:00", "Z")


def write_unconfirmed_result(call: ToolCall) -> ToolResult:
    """The result of a write whose earlier run was reserved and never confirmed."""
    return _error(
        call,
        "write_unconfirmed",
        f"The action {call.name!r} was started earlier and never confirmed: it may have "
        "run. It is not being repeated. Tell the user it is unconfirmed and that it "
        "should be checked before trying again.",
    )


def key_conflict_result(call: ToolCall, reason: str) -> ToolResult:
    """The result of a write refused because its idempotency key cannot name it (reused
    with other arguments or for another tool, or empty): nothing ran."""
    return _error(call, "idempotency_key_conflict", f"{reason} Nothing was run.")


def ledger_refusal_result(call: ToolCall) -> ToolResult:
    """The result of a write that did not run because its key could not be reserved."""
    return _error(
        call,
        "tool_unavailable",
        f"The action {call.name!r} could not be run safely right now and was not run. "
        "Tell the user to try again later.",
    )


def too_many_calls_result(call: ToolCall, *, count: int, cap: int) -> ToolResult:
    """The result of each call of a turn that asked for ``count`` calls, over ``cap``."""
    return _error(
        call,
        "too_many_calls",
        f"This turn asked for {count} tool calls; at most {cap} are allowed in one "
        "turn, so none of them ran. Ask again with fewer calls per turn.",
    )


MAX_RETRY_CHARS = 1000
"""Characters of a :class:`~sse_toolcalls.runtime.errors.ToolRetry` text sent to the model: a
reason is a sentence or two; a handler pasting a whole document would flood the context."""


def tool_retry_result(call: ToolCall, reason: BaseException) -> ToolResult:
    """The result of a call whose handler raised ``ToolRetry(reason)``: the handler's own
    text (cleaned, cut at :data:`MAX_RETRY_CHARS`) for the model to act on; never raises."""
    text = clean_text(safe_str(reason)).strip()[:MAX_RETRY_CHARS]
    return _error(
        call,
        "tool_retry",
        f"The tool {call.name!r} refused this call: {text or 'no reason given'}. "
        "Correct the call and try again.",
    )


def tool_error_result(call: ToolCall, content: Any) -> ToolResult:
    """The result of a call whose handler raised ``ToolErrorReply(content)``: the tool's
    own error, for the model; never raises.

    ``message`` is the text of the reply (its text parts joined, or a placeholder when it
    has none); parts other than one text (an image, a resource) are kept under
    ``content`` as JSON, so nothing the tool said is lost.
    """
    data = _content(content)
    if isinstance(data, str):
        text, parts = data, None
    else:
        text = "\n".join(_texts(data))
        parts = data
    message = clean_text(text).strip()[:MAX_RETRY_CHARS] or "it gave no reason"
    out: dict[str, Any] = {
        "error": "tool_error",
        "tool": call.name,
        "message": f"The tool {call.name!r} answered with an error: {message}",
    }
    if parts is not None and not (len(_texts(parts)) == 1 and _only_texts(parts)):
        out["content"] = parts
    return ToolResult(call=call, content=out, is_error=True)


def _texts(data: dict[str, Any] | list[Any]) -> list[str]:
    items = data if isinstance(data, list) else [data]
    return [
        str(item["text"])
        for item in items
        if isinstance(item, dict) and item.get("type") == "text" and "text" in item
    ]


def _only_texts(data: dict[str, Any] | list[Any]) -> bool:
    items = data if isinstance(data, list) else [data]
    return all(isinstance(item, dict) and item.get("type") == "text" for item in items)


def count(n: int, noun: str) -> str:
    """``"1 problem"``, ``"2 problems"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def first_line(exc: BaseException) -> str:
    """The first line of an exception's text, cut at :data:`MAX_DETAIL_CHARS`; never raises."""
    text = safe_str(exc).strip().splitlines()
    return text[0][:MAX_DETAIL_CHARS] if text else type(exc).__name__


def _error(call: ToolCall, error: str, message: str) -> ToolResult:
    content: dict[str, Any] = {"error": error, "tool": call.name, "message": message}
    return ToolResult(call=call, content=content, is_error=True)


def _content(value: Any) -> str | dict[str, Any] | list[Any]:
    if isinstance(value, str):
        return clean_text(value)
    data = json_value(value)
    if isinstance(data, dict | list | str):
        return data  # a str here is the text of a value JSON cannot hold (bytes, objects)
    return dumps_safe(data).decode("utf-8")
