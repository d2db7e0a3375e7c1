"""An image or a document as a JSON object, and back: the one form for every place that
must carry a result's media as JSON (a ledger entry's replay, a sandboxed child's reply).

``{"kind": "image"|"document", "media_type", "data" (base64)?, "url"?, "name"?}``, a key
left out when its value is ``None``. Reading is strict: anything else (another kind, a
field of the wrong type, base64 that does not decode) is ``None``, for the caller to say
what that means where it reads (a part left out of a replay, a malformed sandbox reply).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ..calls import Document, Image, MediaPart

__all__ = ["part_from_json", "part_json"]

_FIELDS = ("media_type", "data", "url", "name")


def part_json(part: MediaPart) -> dict[str, Any]:
    """``part`` as its JSON object."""
    out: dict[str, Any] = {
        "kind": "image" if isinstance(part, Image) else "document",
        "media_type": part.media_type,
    }
    if part.data is not None:
        out["data"] = base64.b64encode(part.data).decode("ascii")
    if part.url is not None:
        out["url"] = part.url
    if part.name is not None:
        out["name"] = part.name
    return out


def part_from_json(value: Any) -> MediaPart | None:
    """The part a JSON object stands for, or ``None`` when it is not one (see above)."""
    if not isinstance(value, dict) or value.get("kind") not in ("image", "document"):
        return None
    fields = {key: value.get(key) for key in _FIELDS}
    if not isinstance(fields["media_type"], str) or not all(
        v is None or isinstance(v, str) for v in fields.values()
    ):
        return None
    try:
        data = None if fields["data"] is None else base64.b64decode(fields["data"], validate=True)
    except (binascii.Error, ValueError):
        return None
    kind = Image if value["kind"] == "image" else Document
    return kind(media_type=fields["media_type"], data=data, url=fields["url"], name=fields["name"])
