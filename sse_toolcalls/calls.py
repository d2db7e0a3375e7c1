"""The data that flows out of the core: tool calls, results and stream events.

Everything here is small, frozen and behaviour-free (h11's ``_events.py`` style):
the dialect modules build these values, the tools layer and the runtime consume them.
"""

# No "from __future__ import annotations": string annotations are evaluated again by the
# root when it adopts these classes (typing.get_type_hints, one compile() per field), 6.6 M
# of this module's 57 M instructions to import (callgrind, issue 16). Every name an
# annotation uses is defined above it.
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ._faces import publish

Dialect = Literal[
    "openai_chat",
    "openai_responses",
    "anthropic",
    "gemini",
    "bedrock_converse",
    "bedrock_anthropic",
]
"""The four wire formats the library speaks."""

DIALECTS: tuple[Dialect, ...] = (
    "openai_chat",
    "openai_responses",
    "anthropic",
    "gemini",
    "bedrock_converse",
    "bedrock_anthropic",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One complete function call, as the provider asked for it."""

    name: str
    """The function to run, exactly as the provider sent it."""

    args: dict[str, Any]
    """The parsed arguments object; ``{}`` when ``arguments_error`` is set."""

    provider: Dialect
    """The dialect the call came in: results must go back in the same one."""

    call_id: str | None
    """The id the result must carry, exactly as sent (``""`` included); ``None`` only
    where the provider sent no id at all (Gemini may)."""

    index: int
    """Position of the call among the client calls of its turn, from 0."""

    raw_arguments: str = ""
    """The argument text as received (for object-valued dialects, its JSON encoding)."""

    arguments_error: str | None = None
    """Why the arguments are not a JSON object, or ``None`` when they are. A call with an
    error must not run; the tools layer answers it with an error result."""

    thought_signature: str | None = None
    """Gemini's opaque ``thoughtSignature`` of the part, to be sent back unchanged."""

    item_id: str | None = None
    """The provider's own item id where it differs from ``call_id`` (Responses ``fc_...``)."""


class _Deferred:
    """Argument text not made yet: ``make()`` returns it (see ``_DeferredText``)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], str]) -> None:
        self.make = make


class _DeferredText:
    """``ToolCall.raw_arguments``: the slot, except that a :class:`_Deferred` in it is
    made into its text on first read, and the text kept.

    Gemini sends arguments as an object, so its raw text is an encoding made by us;
    making it for every call was a fifth of a Gemini event's time while almost no
    caller reads it (issue 16; orjson.dumps and the decode, 8 of 24 us per 2 KB call
    under cProfile). Every read (attribute, ``==``, ``repr``, pickling,
    ``dataclasses.replace``) goes through here, so none can tell a deferred text from a
    stored one.
    """

    __slots__ = ("slot",)

    def __init__(self, slot: Any) -> None:
        self.slot = slot

    def __get__(self, call: ToolCall | None, owner: type | None = None) -> Any:
        if call is None:
            return self
        value = self.slot.__get__(call, owner)
        if type(value) is _Deferred:
            value = value.make()
            self.slot.__set__(call, value)
        return value

    def __set__(self, call: ToolCall, value: str) -> None:
        self.slot.__set__(call, value)

    def __delete__(self, call: ToolCall) -> None:
        self.slot.__delete__(call)


# The frozen dataclass sets fields with object.__setattr__, which goes through this
# descriptor into the slot.
_RAW_SLOT = ToolCall.__dict__["raw_arguments"]
type.__setattr__(ToolCall, "raw_arguments", _DeferredText(_RAW_SLOT))


def defer_raw_arguments(call: ToolCall, make: Callable[[], str]) -> None:
    """Have ``call.raw_arguments`` made by ``make()`` when first read (a dialect's own
    helper for calls whose raw text is an encoding of ours; ``make`` must return the
    same text whenever it runs)."""
    _RAW_SLOT.__set__(call, _Deferred(make))


ReasoningKind = Literal["thinking", "redacted_thinking", "reasoning", "reasoning_content"]
"""What a reasoning block is on its wire: Anthropic ``thinking`` and ``redacted_thinking``
blocks, or a Responses ``reasoning`` item."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningBlock:
    """One whole piece of the model's reasoning, as the provider sent it, to be sent back
    unchanged in the same provider's next request (Anthropic refuses a tool turn with
    thinking on without its thinking blocks; a Responses reasoning model's calls need
    their reasoning items when responses are not stored). Another provider cannot read
    it: it is dropped when a conversation moves (docs/design.md, "Conversations across
    providers")."""

    provider: Dialect
    """The dialect it came in; only that dialect's requests carry it back."""

    kind: ReasoningKind
    """The wire type: ``thinking``, ``redacted_thinking`` (Anthropic), ``reasoning``
    (Responses) or ``reasoning_content`` (Chat Completions servers that stream it, such as
    DeepSeek's thinking mode, which must have it back in a tool turn)."""

    text: str = ""
    """The reasoning text (Anthropic's ``thinking``, Responses' ``reasoning_text``
    content), exactly as streamed."""

    summary: tuple[str, ...] = ()
    """Responses: the texts of the item's ``summary_text`` parts, in order."""

    signature: str | None = None
    """Anthropic: the ``signature`` that proves the thinking text unchanged."""

    data: str | None = None
    """The opaque payload: Anthropic ``redacted_thinking.data``, Responses
    ``encrypted_content`` (present when the request asked for
    ``include: ["reasoning.encrypted_content"]``)."""

    item_id: str | None = None
    """Responses: the item's ``id`` (``rs_...``)."""

    before_call: int = 0
    """How many of the turn's calls came before it: it goes back just before the call
    at this position (interleaved thinking between calls), after the last call when it
    equals the number of calls."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PartialToolCall:
    """A call that was cut off before its dialect said it was complete."""

    name: str
    """The function name received so far (may be empty)."""

    call_id: str | None
    """The id received so far, or ``None``."""

    index: int
    """Position among the client calls of its turn."""

    raw_arguments: str
    """The argument text received before the cut."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Image:
    """An image a tool returns, sent with its result where the dialect takes images
    (Anthropic, Responses, Gemini); Chat Completions gets a line of text instead."""

    media_type: str = "image/png"
    """The MIME type (``image/png``, ``image/jpeg``, ``image/gif``, ``image/webp``)."""

    data: bytes | None = None
    """The image's bytes (sent base64-encoded), or ``None`` when ``url`` is given."""

    url: str | None = None
    """Where the provider can fetch it (Gemini: a file URI), instead of ``data``."""

    name: str | None = None
    """A name for it (Gemini's ``displayName``), when it has one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Document:
    """A document a tool returns (a PDF...), sent with its result where the dialect takes
    documents (Anthropic, Responses, Gemini); Chat Completions gets a line of text."""

    media_type: str = "application/pdf"
    """The MIME type."""

    data: bytes | None = None
    """The document's bytes (sent base64-encoded), or ``None`` when ``url`` is given."""

    url: str | None = None
    """Where the provider can fetch it, instead of ``data``."""

    name: str | None = None
    """Its file name (Responses ``filename``, Gemini ``displayName``)."""


MediaPart = Image | Document
"""Anything a result may carry besides its text."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """The answer to one call, ok or error, addressed to that call."""

    call: ToolCall
    """The call this result answers; its dialect and id are the return address."""

    content: str | dict[str, Any] | list[Any]
    """Text, or a JSON value, as the tool returned it (or the error description)."""

    is_error: bool = False
    """True when the call failed or was refused: the model should see an error."""

    media: tuple[MediaPart, ...] = ()
    """Images and documents sent with ``content``, after it (docs/design.md,
    "Multimodal results")."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSpec:
    """A tool as the model sees it: the neutral form every dialect's declaration is built from."""

    name: str
    """The tool's name in the registry (dialect-legal names are derived from it)."""

    description: str
    """What the tool does, for the model."""

    parameters: dict[str, Any]
    """A JSON Schema (Draft 2020-12) object schema for the arguments."""


# --------------------------------------------------------------------------------------
# The rich stream: what a UI shows while a turn is being generated.


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    """A piece of the assistant's visible text."""

    text: str
    """The new text."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDelta:
    """A piece of the model's reasoning or thinking text, where the provider shows it."""

    text: str
    """The new reasoning text."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningCompleted:
    """A reasoning block is whole (its text, signature or encrypted content); the same
    block is in ``StreamFinished.reasoning``."""

    block: ReasoningBlock
    """The whole block."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStarted:
    """A call has begun and its name is known; arguments follow."""

    index: int
    """Position of the call in its turn (the same as the completed call's ``index``)."""

    call_id: str | None
    """The id, when the provider has sent it by now."""

    name: str
    """The function name."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallArgumentsDelta:
    """A fragment of a call's argument text, for progress display only (never run it)."""

    index: int
    """Position of the call in its turn."""

    delta: str
    """The new argument text."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallCompleted:
    """The dialect says this call is complete; it may now be validated and run."""

    call: ToolCall
    """The complete call."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamFinished:
    """The provider ended the turn normally."""

    stop_reason: str | None
    """The provider's own stop or finish reason (``tool_calls``, ``end_turn``, ``STOP``...)."""

    usage: dict[str, Any] | None = None
    """Token usage as the provider reported it, when it did."""

    text: str = ""
    """The whole visible text of the turn."""

    calls: tuple[ToolCall, ...] = field(default=())
    """Every complete call of the turn, in order."""

    reasoning: tuple[ReasoningBlock, ...] = field(default=())
    """Every whole reasoning block of the turn that must go back to the provider, in
    stream order (Anthropic thinking, Responses reasoning items); keep them in the
    ``AssistantMessage`` of the turn."""


StreamEvent = (
    TextDelta
    | ReasoningDelta
    | ReasoningCompleted
    | ToolCallStarted
    | ToolCallArgumentsDelta
    | ToolCallCompleted
    | StreamFinished
)
"""Anything the rich stream yields."""

# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
