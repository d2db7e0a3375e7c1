"""What the idempotency ledger records of a write's result: its content, and its media.

A write whose tool returned images or documents (``ToolResult.media``) must replay with
them: a model asked again for the chart it drew gets the chart, not only its caption.
Every ledger keeps one JSON value per key (``LedgerEntry.content``; a JSON column in
SQLite and PostgreSQL), so the media travel inside it, in a marked envelope, and no
backend or schema changes:

``{"sse_toolcalls.recorded": 1, "content": ..., "media": [...], "not_kept": [...]}``

Each part is ``{"kind": "image"|"document", "media_type", "data" (base64) | "url",
"name"?}``. A result without media is recorded as its content alone, as before, so
entries written by earlier versions replay unchanged; a content that happens to look
like the envelope is wrapped too, so reading is never ambiguous.

The media kept are bounded by :data:`MAX_RECORDED_MEDIA_BYTES`; a part that would pass
it (in result order) is not kept, and its replay carries a line of text in its place
(``not_kept``, the wording of the text-only dialects' fallback), so the model still
knows what the action returned.
"""

from __future__ import annotations

from typing import Any

from ..calls import Image, MediaPart
from ._media_json import part_from_json, part_json

__all__ = ["MAX_RECORDED_MEDIA_BYTES", "recorded_content", "replayed_parts"]

MAX_RECORDED_MEDIA_BYTES = 8 * 1024 * 1024
"""Bound on the media a ledger entry keeps for its replay, in bytes of the parts' raw
data together (base64 makes it a third more in the store). 8 MiB holds a few images at
the providers' own limits (5 MB per image on Anthropic) and keeps one entry a small
fraction of a database row's practical size; a part given by URL counts nothing."""

_MARK = "sse_toolcalls.recorded"
_KEYS = frozenset({_MARK, "content", "media", "not_kept"})

Content = str | dict[str, Any] | list[Any]


def recorded_content(content: Content, media: tuple[MediaPart, ...] = ()) -> Content:
    """The JSON value a ledger records for a result with ``content`` and ``media``."""
    if not media and not _is_envelope(content):
        return content
    kept: list[dict[str, Any]] = []
    not_kept: list[str] = []
    total = 0
    for part in media:
        size = len(part.data) if part.data is not None else 0
        if total + size > _limit():
            not_kept.append(_note(part))
            continue
        total += size
        kept.append(part_json(part))
    return {_MARK: 1, "content": content, "media": kept, "not_kept": not_kept}


def replayed_parts(recorded: Content) -> tuple[Content, tuple[MediaPart, ...], list[str]]:
    """What a recorded value stands for: the content, the media kept, and the lines of
    text for the media not kept (``([], [])`` for a value recorded without media)."""
    if not _is_envelope(recorded):
        return recorded, (), []
    assert isinstance(recorded, dict)
    media = tuple(
        part for part in (_from_json(p) for p in recorded["media"] or ()) if part is not None
    )
    notes = [n for n in recorded["not_kept"] or () if isinstance(n, str)]
    content = recorded["content"]
    if not isinstance(content, str | dict | list):
        content = "" if content is None else str(content)
    return content, media, notes


def _limit() -> int:
    # Read at call time, so a test (or an operator) may set the module's bound.
    return MAX_RECORDED_MEDIA_BYTES


def _is_envelope(value: object) -> bool:
    return isinstance(value, dict) and value.get(_MARK) == 1 and set(value) == _KEYS


def _from_json(value: Any) -> MediaPart | None:
    # What we wrote, read back; a hand-edited entry's unreadable part (or one with neither
    # bytes nor a URL) is left out rather than failing the replay of a write that did run.
    part = part_from_json(value)
    return part if part is not None and (part.data is not None or part.url is not None) else None


def _note(part: MediaPart) -> str:
    kind = "image" if isinstance(part, Image) else "document"
    name = f" {part.name!r}" if part.name else ""
    size = len(part.data) if part.data is not None else 0
    return (
        f"[{kind}{name} ({part.media_type}, {size} bytes) returned when the action ran; "
        f"not kept for its replay: over MAX_RECORDED_MEDIA_BYTES={_limit()}]"
    )
