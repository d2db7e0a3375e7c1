"""The simulator's reasoning: what a scripted turn's thinking becomes on each wire, and
the checks the real APIs run on the request that continues a tool turn.

One owner: the encoders stream exactly the blocks :func:`issued_blocks` lists, and the
app checks the next request against that same list. Pure and deterministic: signatures
and encrypted payloads are hashes of what they sign, so a block changed on the way back
(its text edited, its signature swapped, its order moved) is caught, as the real APIs
catch it.

What each API checks, and the simulator with it:

- **Anthropic** ("Preserving thinking blocks", extended thinking with tool use): with
  ``thinking`` enabled, the assistant message of the tool turn being continued must begin
  with a ``thinking`` or ``redacted_thinking`` block (else 400, the API's message); its
  thinking blocks must be the ones the model produced, in order and unchanged (a changed
  text fails its signature).
- **Responses** (reasoning guide, "Keeping reasoning items in context"): a
  ``function_call`` of a reasoning model needs the ``reasoning`` item that preceded it;
  with ``store: false`` that item exists only as its ``encrypted_content``, which the API
  returns only under ``include: ["reasoning.encrypted_content"]``; an unstored item sent
  by id alone is "not found".
- **Bedrock** (Claude through ConverseStream or InvokeModelWithResponseStream): Anthropic's
  rules, Converse's ``reasoningContent`` blocks (``reasoningText`` with its
  ``signature``, ``redactedContent``) read as ``thinking`` and ``redacted_thinking``
  blocks, its ``additionalModelRequestFields.thinking`` as the request's ``thinking``.
- **Gemini** (thought signatures): the first ``functionCall`` part of a thinking model's
  step must come back with its ``thoughtSignature``.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import Any

from .pairing import listed
from .script import Turn

_ANTHROPIC_THINKING = {"enabled", "adaptive"}

# Claude's thinking blocks and their signatures, on Anthropic's API and on Bedrock's two.
_SIGNED_THINKING = frozenset({"anthropic", "bedrock_anthropic", "bedrock_converse"})
_ENCRYPTED = "reasoning.encrypted_content"


def _digest(*parts: str) -> str:
    hasher = hashlib.sha256(b"sse-toolcalls simulator")
    for part in parts:
        hasher.update(b"\x00" + part.encode("utf-8", "surrogatepass"))
    return hasher.hexdigest()


def signature(text: str) -> str:
    """The signature of an Anthropic thinking block with this text."""
    return "EsimSig" + _digest("thinking", text)[:48]


def thought_signature(turn_number: int) -> str:
    """Gemini's ``thoughtSignature`` on the first call of a thinking turn."""
    return "CsimThought" + _digest("gemini", str(turn_number))[:40]


GEMINI_BYPASS_SIGNATURES = frozenset(
    {"context_engineering_is_the_way_to_go", "skip_thought_signature_validator"}
)
"""The dummy signatures Google documents for function calls Gemini 3 did not make (a
trace transferred from another model, an injected call): "populate the field with these
specific dummy strings" (thought signatures guide, FAQ)."""


def is_gemini_3(model: str) -> bool:
    """Whether ``model`` names a Gemini 3 model, which signs every step with calls and
    refuses the current turn's calls without their signatures."""
    return model.removeprefix("models/").startswith("gemini-3")


def step_signature(model: str, turn: Turn, turn_number: int) -> str | None:
    """The ``thoughtSignature`` on the first call of ``turn``: a thinking turn's always;
    on Gemini 3 every step with calls has one, thinking shown or not."""
    if turn.thinking or any(call.thinking for call in turn.calls):
        return thought_signature(turn_number)
    if turn.calls and is_gemini_3(model):
        return thought_signature(turn_number)
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class IssuedBlock:
    """One reasoning block as the simulator streamed it."""

    kind: str
    """``thinking``, ``redacted_thinking``, ``reasoning`` (Responses), ``thought``
    (Gemini) or ``reasoning_content`` (Chat)."""

    text: str
    """The reasoning text (the data of a redacted block)."""

    before_call: int
    """How many of the turn's calls precede it."""

    signature: str | None = None
    """Anthropic: the thinking block's signature; Gemini: the thought signature."""

    item_id: str | None = None
    """Responses: the ``rs_...`` id."""

    encrypted: str | None = None
    """Responses: the ``encrypted_content`` sent (``None`` when not asked for)."""


def asks_encrypted(body: Any) -> bool:
    """Whether a Responses request asked for ``reasoning.encrypted_content``."""
    include = body.get("include") if isinstance(body, dict) else None
    return isinstance(include, list) and _ENCRYPTED in include


def issued_blocks(
    dialect: str, turn: Turn, *, turn_number: int, encrypted: bool = True
) -> list[IssuedBlock]:
    """The reasoning blocks ``turn`` streams in ``dialect``, in stream order."""
    texts = [(turn.thinking, 0)] if turn.thinking else []
    texts += [(call.thinking, i) for i, call in enumerate(turn.calls) if call.thinking]
    out: list[IssuedBlock] = []
    for k, (text, before) in enumerate(texts):
        if dialect in _SIGNED_THINKING:
            out.append(
                IssuedBlock(
                    kind="thinking", text=text, before_call=before, signature=signature(text)
                )
            )
            if k == 0 and turn.thinking and turn.redacted_thinking:
                data = turn.redacted_thinking
                if dialect == "bedrock_converse":
                    # Converse's redactedContent is a blob: base64 in the JSON, both ways.
                    data = base64.b64encode(data.encode("utf-8", "surrogatepass")).decode()
                out.append(IssuedBlock(kind="redacted_thinking", text=data, before_call=0))
        elif dialect == "openai_responses":
            item_id = f"rs_sim{turn_number}_{k}"
            out.append(
                IssuedBlock(
                    kind="reasoning",
                    text=text,
                    before_call=before,
                    item_id=item_id,
                    encrypted="gAAAAsim" + _digest(item_id, text) if encrypted else None,
                )
            )
        elif dialect == "gemini":
            sig = thought_signature(turn_number) if k == 0 else None
            out.append(IssuedBlock(kind="thought", text=text, before_call=before, signature=sig))
        else:
            out.append(IssuedBlock(kind="reasoning_content", text=text, before_call=before))
    return out


# --------------------------------------------------------------------------------------
# The checks on the next request.


def _last_assistant(messages: Any, role: str) -> tuple[int, list[Any]] | None:
    if not isinstance(messages, list):
        return None
    for n in range(len(messages) - 1, -1, -1):
        message = messages[n]
        if isinstance(message, dict) and message.get("role") == role:
            content = message.get("content", message.get("parts"))
            return n, content if isinstance(content, list) else []
    return None


def _anthropic(
    body: dict[str, Any], blocks: list[IssuedBlock], call_ids: list[str | None]
) -> list[str]:
    problems: list[str] = []
    messages = body.get("messages")
    for n, message in enumerate(messages if isinstance(messages, list) else ()):
        content = message.get("content") if isinstance(message, dict) else None
        for k, block in enumerate(content if isinstance(content, list) else ()):
            if isinstance(block, dict) and block.get("type") == "thinking":
                text = block.get("thinking")
                if not isinstance(text, str) or block.get("signature") != signature(text):
                    problems.append(
                        f"messages.{n}.content.{k}: Invalid `signature` in `thinking` block"
                    )
    thinking = body.get("thinking")
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if not (isinstance(kind, str) and kind in _ANTHROPIC_THINKING):
        return problems
    found = _last_assistant(messages, "assistant")
    if found is None:
        return problems
    n, content = found
    kinds = [b.get("type") if isinstance(b, dict) else None for b in content]
    if "tool_use" in kinds and kinds[0] not in ("thinking", "redacted_thinking"):
        problems.append(
            f"messages.{n}.content.0.type: Expected `thinking` or `redacted_thinking`, but "
            f"found `{kinds[0]}`. When `thinking` is enabled, a final `assistant` message "
            "must start with a thinking block (preceeding the lastmost set of `tool_use` and "
            "`tool_result` blocks). We recommend you include thinking blocks from previous "
            "turns. To avoid this requirement, disable `thinking`."
        )
        return problems
    if not blocks or not call_ids:
        return problems
    # The sequence the model produced: its thinking blocks, each before its call.
    expected: list[tuple[Any, ...]] = []
    for position, call_id in enumerate([*call_ids, None]):
        for block in blocks:
            if block.before_call == position:
                if block.kind == "redacted_thinking":
                    expected.append(("redacted_thinking", block.text))
                else:
                    expected.append(("thinking", block.text, block.signature))
        if position < len(call_ids):
            expected.append(("tool_use", call_id))
    actual: list[tuple[Any, ...]] = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "thinking":
            actual.append(("thinking", block.get("thinking"), block.get("signature")))
        elif kind == "redacted_thinking":
            actual.append(("redacted_thinking", block.get("data")))
        elif kind == "tool_use":
            actual.append(("tool_use", block.get("id")))
    if actual != expected:
        problems.append(
            f"messages.{n}.content: the thinking blocks of the assistant turn are not the ones "
            "the model produced, in order and unchanged, before their tool_use blocks "
            f"(expected {[e[0] for e in expected]}, got {[a[0] for a in actual]})"
        )
    return problems


def _responses(
    body: dict[str, Any], blocks: list[IssuedBlock], call_ids: list[str | None]
) -> list[str]:
    items = body.get("input")
    if not blocks or not isinstance(items, list):
        return []
    problems: list[str] = []
    stored = body.get("store") is not False
    for position, call_id in enumerate(call_ids):
        needed = [b for b in blocks if b.before_call <= position]
        if not needed:
            continue
        required = needed[-1]
        at = next(
            (
                n
                for n, item in enumerate(items)
                if isinstance(item, dict)
                and item.get("type") == "function_call"
                and item.get("call_id") == call_id
            ),
            None,
        )
        if at is None:
            continue  # the results check reports a call that is missing
        earlier = [
            item
            for item in items[:at]
            if isinstance(item, dict)
            and item.get("type") == "reasoning"
            and item.get("id") == required.item_id
        ]
        if not earlier:
            problems.append(
                f"Item for call {call_id!r} of type 'function_call' was provided without its "
                f"required 'reasoning' item: {required.item_id!r}."
            )
            continue
        sent = earlier[-1].get("encrypted_content")
        if not stored and (required.encrypted is None or sent != required.encrypted):
            problems.append(
                f"Item with id {required.item_id!r} not found. Items are not persisted when "
                "`store` is set to false. Try again with `store` set to true, or remove this "
                "item from your input (or send it with its encrypted_content)."
            )
    return problems


def _gemini(
    body: dict[str, Any], blocks: list[IssuedBlock], call_ids: list[str | None]
) -> list[str]:
    if not blocks or not call_ids:
        return []
    found = _last_assistant(body.get("contents"), "model")
    if found is None:
        return []
    n, parts = found
    calls = [p for p in parts if isinstance(p, dict) and "functionCall" in p]
    if not calls or calls[0].get("thoughtSignature") != blocks[0].signature:
        return [
            f"contents[{n}]: Function call is missing a thought_signature in functionCall "
            "parts. This is required for tools to work correctly, and missing "
            "thought_signature may lead to degraded model performance."
        ]
    return []


def gemini_3_problems(model: str, body: dict[str, Any], signed: set[str]) -> list[str]:
    """What Gemini 3 refuses about the current turn's calls: the steps since the last
    user content that is not only function responses, each ``model`` content with calls
    needing a signature on its first ``functionCall`` part, one the model issued
    (``signed``) or a documented bypass (:data:`GEMINI_BYPASS_SIGNATURES`). Earlier
    turns are not checked, as the API does not check them."""
    contents = body.get("contents")
    if not is_gemini_3(model) or not isinstance(contents, list):
        return []
    start = 0
    for n, content in enumerate(contents):
        if not isinstance(content, dict):
            continue
        parts = content.get("parts")
        if content.get("role", "user") == "user" and any(
            isinstance(part, dict) and "functionResponse" not in part
            for part in (parts if isinstance(parts, list) else ())
        ):
            start = n + 1
    problems = []
    for n in range(start, len(contents)):
        content = contents[n]
        parts = content.get("parts") if isinstance(content, dict) else None
        if not isinstance(parts, list) or content.get("role") != "model":
            continue
        calls = [(k, p) for k, p in enumerate(parts) if isinstance(p, dict) and "functionCall" in p]
        if not calls:
            continue
        k, first = calls[0]
        sent = first.get("thoughtSignature")
        if sent is None:
            function = first["functionCall"]
            name = function.get("name") if isinstance(function, dict) else None
            problems.append(
                f"Function call `{name}` in the {n + 1}. content block is missing a "
                "`thought_signature`."
            )
        elif not isinstance(sent, str) or (
            sent not in signed and sent not in GEMINI_BYPASS_SIGNATURES
        ):
            problems.append(f"contents[{n}].parts[{k}]: Thought signature is not valid.")
    return problems


def check_request(
    dialect: str, body: dict[str, Any], blocks: list[IssuedBlock], call_ids: list[str | None]
) -> list[str]:
    """What the real API would refuse in a request that continues the turn whose
    reasoning ``blocks`` and calls (``call_ids``, in order) the simulator streamed."""
    if dialect in ("anthropic", "bedrock_anthropic"):
        return _anthropic(body, blocks, call_ids)
    if dialect == "bedrock_converse":
        return _anthropic(_converse_as_anthropic(body), blocks, call_ids)
    if dialect == "openai_responses":
        return _responses(body, blocks, call_ids)
    if dialect == "gemini":
        return _gemini(body, blocks, call_ids)
    return _chat(body, blocks, call_ids)


def _converse_block(block: Any) -> Any:
    """One Converse content block in Anthropic's shape (the same rules apply to both:
    Bedrock hands a Claude conversation to the model as Anthropic's API would)."""
    if not isinstance(block, dict):
        return block
    reasoning = block.get("reasoningContent")
    if isinstance(reasoning, dict):
        text = reasoning.get("reasoningText")
        if isinstance(text, dict):
            return {
                "type": "thinking",
                "thinking": text.get("text"),
                "signature": text.get("signature"),
            }
        return {"type": "redacted_thinking", "data": reasoning.get("redactedContent")}
    tool_use = block.get("toolUse")
    if isinstance(tool_use, dict):
        return {"type": "tool_use", "id": tool_use.get("toolUseId")}
    if "toolResult" in block:
        return {"type": "tool_result"}
    return {"type": "text" if "text" in block else next(iter(block), None)}


def _converse_as_anthropic(body: dict[str, Any]) -> dict[str, Any]:
    """A Converse request as the Anthropic body the thinking checks read: its messages'
    blocks at the same places, and the ``thinking`` of ``additionalModelRequestFields``
    (where Converse takes Claude's own request fields)."""
    messages = body.get("messages")
    converted = [
        {
            **message,
            "content": [_converse_block(b) for b in message.get("content") or ()]
            if isinstance(message.get("content"), list)
            else message.get("content"),
        }
        if isinstance(message, dict)
        else message
        for message in (messages if isinstance(messages, list) else ())
    ]
    extra = body.get("additionalModelRequestFields")
    thinking = extra.get("thinking") if isinstance(extra, dict) else None
    return {"messages": converted, "thinking": thinking}


def _chat(body: dict[str, Any], blocks: list[IssuedBlock], call_ids: list[str | None]) -> list[str]:
    """DeepSeek's thinking mode: the assistant message of a turn with tool calls whose
    ``reasoning_content`` was streamed must carry it back, unchanged."""
    streamed = "".join(b.text for b in blocks if b.kind == "reasoning_content")
    if not streamed or not call_ids:
        return []
    messages = body.get("messages")
    for n, message in enumerate(messages if isinstance(messages, list) else ()):
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        ids = [c.get("id") for c in listed(message.get("tool_calls")) if isinstance(c, dict)]
        if ids == call_ids:
            if message.get("reasoning_content") != streamed:
                return [
                    f"messages[{n}]: The reasoning_content in the thinking mode must be "
                    "passed back to the API."
                ]
            return []
    return []


__all__ = [
    "GEMINI_BYPASS_SIGNATURES",
    "IssuedBlock",
    "asks_encrypted",
    "check_request",
    "gemini_3_problems",
    "is_gemini_3",
    "issued_blocks",
    "signature",
    "step_signature",
]
