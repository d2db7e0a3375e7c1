"""Conversations in a SQLite file (WAL), beside the SQLite ledger or in the same file."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import anyio.to_thread

from ..._faces import publish
from ...conversation import (
    Message,
)
from ..errors import ConversationStoreError
from ..ledgers.sqlite import BUSY_TIMEOUT_S
from .base import (
    Exchange,
    messages_from_json,
    messages_to_json,
)

__all__ = ["SQLiteConversationStore"]

_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversation_exchanges (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL,
    request_id TEXT NOT NULL,
    messages TEXT NOT NULL,
    saved_at REAL NOT NULL,
    UNIQUE (conversation_id, request_id)
)
"""


class SQLiteConversationStore:
    """Conversations in a SQLite file (WAL), off the event loop like the SQLite ledger;
    the same file as the ledger's works (its own table)."""

    def __init__(self, path: str | Path, *, clock: Callable[[], float] = time.time) -> None:
        """Open (creating if needed) the store at ``path``.

        Raises:
            ConversationStoreError: the file cannot be opened or is not a database.
        """
        self.path = str(path)
        """The database file."""
        self._clock = clock
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute(_SQLITE_SCHEMA)
        except sqlite3.Error as exc:
            raise ConversationStoreError(f"cannot open the store at {self.path}: {exc}") from exc

    def __repr__(self) -> str:
        return f"SQLiteConversationStore({self.path!r})"

    def _load(self, conversation_id: str) -> list[Exchange]:
        with self._lock:
            try:
                rows = self._db.execute(
                    "SELECT request_id, messages, saved_at FROM conversation_exchanges "
                    "WHERE conversation_id = ? ORDER BY seq",
                    (conversation_id,),
                ).fetchall()
            except sqlite3.Error as exc:
                raise ConversationStoreError(f"cannot read the store: {exc}") from exc
        return [
            Exchange(request_id=r[0], messages=messages_from_json(r[1]), saved_at=r[2])
            for r in rows
        ]

    def _save(self, conversation_id: str, request_id: str, text: str) -> None:
        with self._lock:
            try:
                self._db.execute(
                    "INSERT INTO conversation_exchanges "
                    "(conversation_id, request_id, messages, saved_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (conversation_id, request_id) DO UPDATE SET "
                    "messages = excluded.messages, saved_at = excluded.saved_at",
                    (conversation_id, request_id, text, self._clock()),
                )
            except sqlite3.Error as exc:
                raise ConversationStoreError(f"cannot write the store: {exc}") from exc

    async def load(self, conversation_id: str) -> list[Exchange]:
        """See :meth:`ConversationStore.load`."""
        return await anyio.to_thread.run_sync(self._load, conversation_id)

    async def save(
        self, conversation_id: str, request_id: str, messages: Sequence[Message]
    ) -> None:
        """See :meth:`ConversationStore.save`."""
        text = messages_to_json(messages)
        await anyio.to_thread.run_sync(self._save, conversation_id, request_id, text)

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> SQLiteConversationStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
