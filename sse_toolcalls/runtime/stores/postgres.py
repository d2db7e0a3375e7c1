"""The conversation store on PostgreSQL, so that a conversation continues on whichever
worker its next message lands (same pool and migrations as the ledger's, ``runtime/_pg.py``;
its own table and schema version)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from ..._faces import publish
from ...conversation import Message
from .._pg import DEFAULT_ATTEMPTS, DEFAULT_MAX_SIZE, DEFAULT_TIMEOUT_S, Migration, PgPool
from ..errors import ConversationStoreError
from ..stores.base import Exchange, messages_from_json, messages_to_json

__all__ = ["CONVERSATIONS_TABLE", "CONVERSATION_MIGRATIONS", "PostgresConversationStore"]


CONVERSATIONS_TABLE = "sse_toolcalls_conversations"
"""The conversation store's table: one row per (conversation, request)."""

CONVERSATION_MIGRATIONS: tuple[Migration, ...] = (
    (
        1,
        (
            f"CREATE TABLE {CONVERSATIONS_TABLE} ("
            "seq bigserial PRIMARY KEY, "
            "conversation_id text NOT NULL, "
            "request_id text NOT NULL, "
            "messages text NOT NULL, "
            "saved_at double precision NOT NULL, "
            "UNIQUE (conversation_id, request_id))",
        ),
    ),
)


class PostgresConversationStore:
    """A :class:`~.base.ConversationStore` on PostgreSQL, so that a conversation
    continues on whichever worker its next message lands. Same pool rules as
    :class:`PostgresLedger`; its own table and schema version."""

    def __init__(
        self,
        dsn: str,
        *,
        min_size: int = 1,
        max_size: int = DEFAULT_MAX_SIZE,
        timeout: float = DEFAULT_TIMEOUT_S,
        attempts: int = DEFAULT_ATTEMPTS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Args: as :class:`PostgresLedger`'s.

        Raises:
            UsageError: a size, ``attempts`` or ``timeout`` that is not a number in
                range (``min_size`` at least 1 and at most ``max_size``).
        """
        self._pg = PgPool(
            dsn,
            what="Postgres conversation store",
            error=ConversationStoreError,
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            attempts=attempts,
            component="conversations",
            migrations=CONVERSATION_MIGRATIONS,
        )
        self._clock = clock

    def __repr__(self) -> str:
        return f"PostgresConversationStore(max_size={self._pg.max_size})"

    async def load(self, conversation_id: str) -> list[Exchange]:
        """See :meth:`~.base.ConversationStore.load`."""
        _, rows = await self._pg.run(
            "load a conversation",
            lambda s: s.execute(
                f"SELECT request_id, messages, saved_at FROM {CONVERSATIONS_TABLE} "
                "WHERE conversation_id = %s ORDER BY seq",
                (conversation_id,),
            ),
        )
        return [
            Exchange(request_id=r[0], messages=messages_from_json(r[1]), saved_at=float(r[2]))
            for r in rows
        ]

    async def save(
        self, conversation_id: str, request_id: str, messages: Sequence[Message]
    ) -> None:
        """See :meth:`~.base.ConversationStore.save` (an upsert: safe to try again)."""
        text = messages_to_json(messages)
        now = self._clock()
        await self._pg.run(
            "save a conversation",
            lambda s: s.execute(
                f"INSERT INTO {CONVERSATIONS_TABLE} "
                "(conversation_id, request_id, messages, saved_at) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (conversation_id, request_id) DO UPDATE SET "
                "messages = excluded.messages, saved_at = excluded.saved_at",
                (conversation_id, request_id, text, now),
            ),
        )

    async def aclose(self) -> None:
        """Close the pool."""
        await self._pg.close()

    async def __aenter__(self) -> PostgresConversationStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
