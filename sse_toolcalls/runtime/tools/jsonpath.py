"""Where in a JSON value something is, as text: ``$.a[0]['odd key']``. Used by the
schema checks, the validator and the registry alike (one spelling of a place)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

__all__ = ["path_text"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)


def path_text(parts: Iterable[str | int]) -> str:
    """Return the JSON path (``$.a[0]['odd key']``) of a sequence of keys and indexes."""
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENTIFIER.fullmatch(part):
            out.append(f".{part}")
        else:
            out.append(f"[{json.dumps(part, ensure_ascii=False)}]")
    return "".join(out)
