"""What the dialects' message modules share: the one place where result content becomes
text, arguments become JSON, and results are put in call order (not public)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .. import _json
from .._jsonsafe import dumps_safe
from ..calls import DIALECTS, Image, MediaPart, ReasoningBlock, ToolCall, ToolResult
from ..conversation import Conversation, SystemPrompt
from ..errors import UnknownDialectError, UsageError


def json_text(value: Any) -> str:
    """``value`` as compact JSON text; never raises.

    Tool results and echoed arguments reach here after a tool ran, when an exception
    would leave the user without a reply: what JSON cannot hold is mapped to the nearest
    JSON value by :func:`sse_toolcalls._jsonsafe.dumps_safe` (NaN and infinities as
    ``null``, as orjson writes them; lone surrogates replaced; sets as arrays...).
    """
    return dumps_safe(value).decode("utf-8")


def content_text(content: str | dict[str, Any] | list[Any]) -> str:
    """Result content as text: a string as it is, any other value as JSON."""
    return content if isinstance(content, str) else json_text(content)


def error_object(content: str | dict[str, Any] | list[Any]) -> dict[str, Any]:
    """Error content as a JSON object with an ``"error"`` key (kept as it is when it
    already is one), for dialects that have no error flag."""
    if isinstance(content, dict) and "error" in content:
        return content
    return {"error": content}


def flagless_result_text(result: ToolResult) -> str:
    """The text a dialect without an error flag (Chat, Responses) sends for ``result``.

    An ok result is its content as text. An error result is always a JSON object with an
    ``"error"`` key, so the model can tell a failure from an answer that merely mentions
    one.
    """
    if result.is_error:
        return json_text(error_object(result.content))
    return content_text(result.content)


def base64_data(part: MediaPart) -> str:
    """The part's bytes, base64-encoded (``""`` for a part given by URL)."""
    import base64

    return base64.b64encode(part.data or b"").decode("ascii")


def data_url(part: MediaPart) -> str:
    """The part as a URL: its own, or a ``data:`` URL of its bytes (RFC 2397)."""
    if part.url is not None:
        return part.url
    return f"data:{part.media_type};base64,{base64_data(part)}"


def media_note(part: MediaPart) -> str:
    """The line of text that stands for a part where the dialect takes only text (Chat
    Completions): what it is, so the model can tell the user it exists."""
    kind = "image" if isinstance(part, Image) else "document"
    size = f"{len(part.data)} bytes" if part.data is not None else part.url
    name = f" {part.name!r}" if part.name else ""
    return (
        f"[{kind}{name} ({part.media_type}, {size}) returned by the tool; not shown: "
        "this provider reads only text in tool results]"
    )


def arguments_text(call: ToolCall) -> str:
    """The argument text to send back in an assistant turn: the raw text the provider sent
    when it is valid JSON (byte-for-byte what the model wrote), else the JSON of ``args``
    (``{}`` for a call whose arguments could not be parsed)."""
    raw = call.raw_arguments
    if raw.strip():
        try:
            _json.loads(raw)
        except ValueError:
            pass
        else:
            return raw
    return json_text(call.args)


def _index(call: ToolCall) -> int:
    return call.index


def interleaved(
    calls: Sequence[ToolCall], reasoning: Sequence[ReasoningBlock], dialect: str
) -> tuple[list[ReasoningBlock], list[ReasoningBlock | ToolCall]]:
    """A turn's reasoning blocks of ``dialect`` placed among its calls as they streamed.

    Returns:
        The blocks that came before the first call (they open the turn, before its
        text), and the calls in call order with every later block just before the call
        it preceded (or after the last call). Blocks of another dialect are left out:
        no other provider can read them.
    """
    own = [block for block in reasoning if block.provider == dialect]
    ordered = sorted(calls, key=_index)
    leading = [block for block in own if block.before_call <= 0]
    rest: list[ReasoningBlock | ToolCall] = []
    later = [block for block in own if block.before_call > 0]
    for position, call in enumerate(ordered):
        rest.extend(block for block in later if block.before_call == position)
        rest.append(call)
    rest.extend(block for block in later if block.before_call >= len(ordered))
    return leading, rest


def ordered_results(results: Iterable[ToolResult], dialect: str) -> list[ToolResult]:
    """``results`` checked to answer calls of ``dialect``, sorted by ``call.index``.

    Providers match Anthropic and Gemini results by position as well as by id, and Chat
    wants every ``tool`` message right after its assistant turn, so results always go out
    in call order; the sort is stable, so equal indexes keep the order given.

    Raises:
        UsageError: a result answers a call of another dialect, or two results answer the
            same call (same index and id).
    """
    if dialect not in DIALECTS:
        raise UnknownDialectError(dialect)
    items = list(results)
    seen: set[tuple[int, str | None]] = set()
    for result in items:
        call = result.call
        if call.provider != dialect:
            raise UsageError(
                f"result for call {call.call_id!r} ({call.name!r}) came from dialect "
                f"{call.provider!r}, not {dialect!r}: results go back in their call's dialect"
            )
        key = (call.index, call.call_id)
        if key in seen:
            raise UsageError(
                f"two results answer the same call (index {call.index}, id {call.call_id!r})"
            )
        seen.add(key)
    return sorted(items, key=lambda r: r.call.index)


def system_text(conversation: Conversation) -> str | None:
    """All system prompts of ``conversation`` joined by a blank line, or ``None``."""
    texts = [m.text for m in conversation if isinstance(m, SystemPrompt)]
    return "\n\n".join(texts) if texts else None


def merge_options(body: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """``body`` with the caller's extra request fields added.

    Raises:
        UsageError: an option would replace a field the body builder owns (the messages,
            tools, model or stream flag), which would silently drop part of the request.
    """
    clash = sorted(set(body) & set(options))
    if clash:
        raise UsageError(f"options {clash} clash with fields build_request sets itself")
    body.update(options)
    return body


def require_call_id(call: ToolCall, dialect: str) -> str:
    """The call's id, for dialects where a result cannot be addressed without one.

    Raises:
        UsageError: the call has no id (``None``).
    """
    if call.call_id is None:
        raise UsageError(
            f"call {call.name!r} (index {call.index}) has no id; {dialect} results need one"
        )
    return call.call_id
