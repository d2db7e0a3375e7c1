"""What the UI protocols share on the server: the bound on a request body, and the
paused runs whose approval states wait there (never in the browser) for their answers."""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from ...errors import UsageError
from ..approval import ApprovalState

__all__ = ["MAX_BODY_BYTES", "MAX_PAUSED_RUNS", "PausedRuns"]

MAX_BODY_BYTES: Final = 8 * 1024 * 1024
"""The largest request body a UI stream reads, in bytes: a chat UI posts the whole
conversation on every run, and 8 MiB holds a long one (tool outputs included) while
keeping one request's memory bounded."""

MAX_PAUSED_RUNS: Final = 10_000
"""Paused runs a :class:`PausedRuns` keeps, the oldest dropped first: each holds its
conversation, so the count bounds the memory; an answer to a dropped pause is refused
(the user asks again)."""


class PausedRuns:
    """The paused runs of this process, by their pause token (bounded, oldest out)."""

    def __init__(self, *, limit: int = MAX_PAUSED_RUNS) -> None:
        if limit < 1:
            raise UsageError(f"PausedRuns needs a limit of at least 1, not {limit}")
        self._limit = limit
        self._states: OrderedDict[str, ApprovalState] = OrderedDict()

    def put(self, state: ApprovalState) -> None:
        """Keep ``state`` under its token."""
        self._states[state.token] = state
        self._states.move_to_end(state.token)
        while len(self._states) > self._limit:
            self._states.popitem(last=False)

    def get(self, token: str) -> ApprovalState | None:
        """The state paused under ``token``, or ``None``."""
        return self._states.get(token)

    def __len__(self) -> int:
        return len(self._states)
