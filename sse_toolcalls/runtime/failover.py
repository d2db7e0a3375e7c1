"""Provider fallback: a turn moves to the next provider when the current one cannot
answer, as one :class:`~.agent.StreamingClient`.

``FallbackClient([primary, secondary, ...])`` asks each provider in order for each turn:
the primary first, retrying its transient failures (its :class:`~.retry.RetryPolicy`);
once they are used up, or at a permanent failure, the next provider gets the same turn.
The conversation is carried over to each provider's dialect first
(:func:`sse_toolcalls.crossing.carry_over`: results under the ids the reading provider
knows, another provider's reasoning dropped). Every turn starts again at the primary, so a
provider that is back is used again, and a conversation may move back and forth.

The runtime's guarantees hold because this wrapper only fetches turns: calls run after a
turn's stream ended cleanly (the Agent), so no failure here re-runs a tool, and writes
keep their request-scoped idempotency keys (the ledger) whichever provider asks for them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from .._faces import publish
from ..calls import StreamEvent, StreamFinished, ToolSpec
from ..conversation import Conversation
from ..crossing import carry_over
from ..dialects.anthropic import messages as anthropic_messages
from ..dialects.bedrock_anthropic import messages as invoke_messages
from ..dialects.bedrock_converse import messages as converse_messages
from ..errors import ProviderError, StreamError, TruncatedStreamError, UsageError
from .retry import RetryPolicy

if TYPE_CHECKING:
    from .agent import StreamingClient

__all__ = ["EXHAUSTED_CODE", "FallbackClient"]

_THINKING: dict[str, tuple[Callable[[Conversation], bool], str | None]] = {
    "anthropic": (anthropic_messages.thinking_refused, None),
    "bedrock_anthropic": (invoke_messages.thinking_refused, None),
    "bedrock_converse": (converse_messages.thinking_refused, "additionalModelRequestFields"),
}
"""The dialects that can run Claude with Anthropic's ``thinking`` option: each one's own
reading of the refusal (it reads only its own dialect's thinking blocks), and the request
field that holds the option (InvokeModel's body is Anthropic's own; Converse passes it in
``additionalModelRequestFields``; ``None``: the body's top level)."""


def _without_refused_thinking(
    dialect: str, carried: Conversation, request: dict[str, Any]
) -> dict[str, Any]:
    """``request`` without the ``thinking`` option where the provider would refuse the
    carried conversation with it on; the caller's nested objects are left untouched."""
    entry = _THINKING.get(dialect)
    if entry is None:
        return request
    refused, parent = entry
    holder = request if parent is None else request.get(parent)
    if not isinstance(holder, dict) or "thinking" not in holder or not refused(carried):
        return request
    rest = {k: v for k, v in holder.items() if k != "thinking"}
    if parent is None:
        return rest
    out = {k: v for k, v in request.items() if k != parent}
    if rest:
        out[parent] = rest
    return out


EXHAUSTED_CODE = "all_providers_failed"
"""The ``ProviderError.code`` raised when every provider failed the same turn."""


class FallbackClient:
    """Several provider clients as one: each turn goes to the first that answers."""

    def __init__(
        self,
        clients: Sequence[StreamingClient],
        *,
        options: Sequence[Mapping[str, Any] | None] | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        """Args:
            clients: the providers, primary first; each needs a ``dialect`` attribute
                (every :class:`~.clients.ProviderClient` has one).
            options: request options per client, in the same order (what only that
                provider takes: Anthropic's ``thinking``, Responses' ``store``...),
                added to the options each request is given.
            retry: how each provider's transient failures are retried before the turn
                moves on (the default policy: 3 attempts).

        Raises:
            UsageError: no clients, a client without a known dialect, or an options
                list of another length.
        """
        if not clients:
            raise UsageError("FallbackClient needs at least one client")
        dialects: list[str] = []
        for client in clients:
            # Read once and checked here: the agent's protocol (StreamingClient) does not
            # promise a dialect, every ProviderClient has one.
            dialect = getattr(client, "dialect", None)
            if not isinstance(dialect, str):
                raise UsageError(
                    f"{client!r} has no dialect: FallbackClient carries the conversation "
                    "over to each client's dialect"
                )
            dialects.append(dialect)
        self._dialects = tuple(dialects)
        if options is not None and len(options) != len(clients):
            raise UsageError(f"{len(options)} options for {len(clients)} clients")
        self.clients = tuple(clients)
        """The providers, primary first."""
        self.options = tuple(dict(o or {}) for o in (options or [None] * len(clients)))
        """Each provider's own request options."""
        self.retry = retry or RetryPolicy()
        """How each provider's transient failures are retried."""
        self.served_by: int | None = None
        """Which client (its position) answered the last turn; ``None`` before any."""

    @property
    def dialect(self) -> str:
        """The dialect of the client that answered last (the primary's before any)."""
        return self._dialects[self.served_by or 0]

    async def stream_events(
        self, conversation: Conversation, tools: Sequence[ToolSpec] = (), **options: Any
    ) -> AsyncIterator[StreamEvent]:
        """Send the conversation to each provider in turn; yield the rich stream events
        of the first answer that ends with its ``StreamFinished``.

        Events of an attempt that failed midway have been yielded already: a consumer
        that shows deltas sees the next attempt's from its start (the Agent reads only
        ``StreamFinished``).

        Raises:
            ProviderError: every provider failed (``code`` ``all_providers_failed``, not
                retryable: each provider's retries are spent); the message names each
                provider's last error, and the last one is the cause.
        """
        failures: list[str] = []
        last: StreamError | None = None
        for position, (client, dialect) in enumerate(
            zip(self.clients, self._dialects, strict=True)
        ):
            carried = carry_over(conversation, dialect)
            # The API refuses a tool turn without its thinking blocks while thinking is
            # on, and names the way out: "To avoid this requirement, disable thinking" (a
            # turn carried over from another provider has none).
            request = _without_refused_thinking(
                dialect, carried, {**options, **self.options[position]}
            )
            for attempt in range(1, self.retry.attempts + 1):
                try:
                    finished = False
                    events = client.stream_events(carried, tools, **request)
                    try:
                        async for event in events:
                            finished = finished or isinstance(event, StreamFinished)
                            yield event
                    finally:
                        # Closed here, also when the consumer stops early (STYLE 11).
                        closer = getattr(events, "aclose", None)
                        if closer is not None:
                            with anyio.CancelScope(shield=True):
                                await closer()
                    if not finished:
                        raise TruncatedStreamError(
                            f"{dialect}: the stream ended without its end event",
                            reason="eof",
                            provider=dialect,
                        )
                except StreamError as error:
                    last = error
                    if self.retry.should_retry(error, attempt):
                        await self.retry.sleep(self.retry.delay(attempt, error))
                        continue
                    failures.append(f"{position} ({dialect}): {type(error).__name__}: {error}")
                    break
                self.served_by = position
                return
        exhausted = ProviderError(
            f"every provider failed this turn: {'; '.join(failures)}",
            provider=None,
            code=EXHAUSTED_CODE,
            retryable=False,
        )
        raise exhausted from last


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
