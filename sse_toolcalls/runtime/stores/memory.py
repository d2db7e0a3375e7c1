"""Conversations in a dict: one process, gone at exit, bounded (the default store)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

from ..._checks import check_count
from ..._faces import publish
from ...conversation import (
    Message,
)
from .base import (
    DEFAULT_MAX_CONVERSATIONS,
    Exchange,
)

__all__ = ["InMemoryConversationStore"]


class InMemoryConversationStore:
    """Conversations in a dict (one process, gone at exit): the default. Keeps the
    ``max_conversations`` most recently used."""

    def __init__(
        self,
        *,
        max_conversations: int = DEFAULT_MAX_CONVERSATIONS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Args:
        max_conversations: conversations kept (``DEFAULT_MAX_CONVERSATIONS``).
        clock: seconds since the epoch, for ``saved_at``."""
        check_count("max_conversations", max_conversations, minimum=1)
        self.max_conversations = max_conversations
        """Conversations kept."""
        self._clock = clock
        self._lock = threading.Lock()
        self._conversations: OrderedDict[str, list[Exchange]] = OrderedDict()

    def __repr__(self) -> str:
        return f"InMemoryConversationStore(conversations={len(self._conversations)})"

    async def load(self, conversation_id: str) -> list[Exchange]:
        """See :meth:`ConversationStore.load`."""
        with self._lock:
            exchanges = self._conversations.get(conversation_id)
            if exchanges is None:
                return []
            self._conversations.move_to_end(conversation_id)
            return list(exchanges)

    async def save(
        self, conversation_id: str, request_id: str, messages: Sequence[Message]
    ) -> None:
        """See :meth:`ConversationStore.save`."""
        exchange = Exchange(request_id=request_id, messages=tuple(messages), saved_at=self._clock())
        with self._lock:
            exchanges = self._conversations.setdefault(conversation_id, [])
            self._conversations.move_to_end(conversation_id)
            for n, old in enumerate(exchanges):
                if old.request_id == request_id:
                    exchanges[n] = exchange
                    break
            else:
                exchanges.append(exchange)
            while len(self._conversations) > self.max_conversations:
                self._conversations.popitem(last=False)


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
