"""sseclient-py's ``SSEClient.events()`` over the chunks (it only needs an iterable)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..model import Impl
from ._require import require

__all__ = ["impls"]


def impls() -> list[Impl]:
    """sseclient-py as a framer."""
    client = require("sseclient", "sseclient-py").SSEClient

    def run(dialect: str, chunks: Sequence[bytes]) -> list[Any]:
        return list(client(iter(chunks)).events())

    def normalize(events: list[Any]) -> list[tuple[str, str]]:
        return [(e.event or "message", e.data) for e in events]

    return [
        Impl(
            name="sseclient-py",
            kind="framer",
            role="peer",
            dialects=("openai_chat", "openai_responses", "anthropic"),
            run=run,
            normalize=normalize,
        )
    ]
