"""The wire core's exceptions, and the root of every exception the library raises.

Remote errors (the stream or the provider is wrong) derive from ``StreamError``; local
misuse derives from ``UsageError``. The agent runtime's own errors (tools, ledgers,
approvals, the sandbox) derive from these in :mod:`sse_toolcalls.runtime.errors`. Each
carries the state a caller needs to recover.
"""

from __future__ import annotations

import copyreg
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ._faces import publish

if TYPE_CHECKING:
    from ._event import ServerSentEvent
    from .calls import PartialToolCall, ToolCall


class SSEToolCallsError(Exception):
    """Base of every exception this library raises."""

    def __reduce__(self) -> tuple[Any, ...]:
        # BaseException pickles as cls(*args) plus __dict__, and args holds only the
        # message: the classes with required keyword-only arguments (limit=, provider=,
        # reason=...) could not be unpickled. Rebuild with __new__ (no __init__) and
        # restore the attributes, which are all of an error's state.
        # copyreg.__newobj__ is the NEWOBJ opcode's own function (cls.__new__(cls, *args));
        # typeshed does not list it.
        newobj = copyreg.__newobj__  # type: ignore[attr-defined]
        return (newobj, (type(self), *self.args), self.__dict__)


class UsageError(SSEToolCallsError):
    """The library was used wrongly (feeding a parser after it finished or failed, an
    unknown dialect name...). Fix the calling code; retrying will not help."""


class UnknownDialectError(UsageError):
    """A dialect name that is not one of the known ones (``sse_toolcalls.DIALECTS``)."""

    def __init__(self, dialect: object, *, expected: Sequence[str] | None = None) -> None:
        # Imported here: calls.py and its dataclasses are not needed by the framer, whose
        # errors these are too (issue 16: import time).
        from .calls import DIALECTS

        self.dialect = dialect
        """The name given."""
        self.expected: tuple[str, ...] = DIALECTS if expected is None else tuple(expected)
        """The names that would have been accepted."""
        super().__init__(f"unknown dialect {dialect!r}; expected one of {self.expected}")


# --------------------------------------------------------------------------------------
# Remote: the stream or the provider.


class StreamError(SSEToolCallsError):
    """The bytes or events received from the provider cannot be used as they are."""

    completed: tuple[ToolCall, ...] = ()
    """The calls that completed before the error and that no ``feed`` (or ``finish``, or
    iterator) returned: the parser sets it on every error it raises. What the reads
    returned, then these, is every call completed before the error, the same however
    the reads fell; ``()`` when there are none."""


class FramingError(StreamError):
    """The byte stream broke a limit of the SSE framer."""


class EventTooLargeError(FramingError):
    """One pending event (or line) grew past ``max_event_bytes``."""

    def __init__(
        self, message: str, *, limit: int, size: int, events: Sequence[ServerSentEvent] = ()
    ) -> None:
        super().__init__(message)
        self.limit = limit
        """The configured limit, in bytes."""
        self.size = size
        """How many bytes were pending when the limit was crossed."""
        self.events: list[ServerSentEvent] = list(events)
        """The events the failing read completed before the limit was crossed, in stream
        order (the framer returns none from that read): the parser reads them before it
        fails, so the outcome does not depend on where the reads split (issue 29)."""


class MalformedStreamError(StreamError):
    """An event could not be understood in its dialect (data that is not JSON where the
    dialect requires JSON, a stream whose dialect cannot be recognised...)."""

    def __init__(self, message: str, *, provider: str | None = None, data: str = "") -> None:
        super().__init__(message)
        self.provider = provider
        """The dialect being parsed, when known."""
        self.data = data[:2000]
        """The offending event data (at most 2,000 characters)."""


class LimitExceededError(MalformedStreamError):
    """The stream crossed one of the core's named limits: JSON nesting depth, ``retry``
    digits, data lines in one event, a ``partialArgs`` path's steps or array index.

    Each limit is a module-level constant (listed in ``docs/design.md`` with its unit);
    ``limit_name`` names it, so a caller can tell which one was crossed.
    """

    def __init__(
        self,
        message: str,
        *,
        limit_name: str,
        limit: int,
        size: int,
        provider: str | None = None,
        data: str = "",
        events: Sequence[ServerSentEvent] = (),
    ) -> None:
        super().__init__(message, provider=provider, data=data)
        self.limit_name = limit_name
        """The name of the constant that holds the limit (``MAX_EVENT_DEPTH``...)."""
        self.limit = limit
        """The limit, in the unit its constant documents."""
        self.size = size
        """The size that crossed it, in the same unit (a lower bound where counting
        further would cost work the limit exists to avoid)."""
        self.events: list[ServerSentEvent] = list(events)
        """For a framer's limit (``MAX_RETRY_DIGITS``, ``MAX_DATA_LINES_PER_EVENT``): the
        events the failing read completed before the limit was crossed, as
        :attr:`EventTooLargeError.events`; empty for the other limits."""


class ProviderError(StreamError):
    """The provider reported an error: inside the stream, or as an HTTP error status."""

    def __init__(
        self,
        message: str,
        *,
        provider: str | None,
        code: str | None = None,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        body: Any = None,
        completed: Sequence[ToolCall] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        """The provider's human-readable message."""
        self.provider = provider
        """The dialect (or ``None`` when it could not be told)."""
        self.code = code
        """The provider's error type or code (``overloaded_error``, ``rate_limit_exceeded``...)."""
        self.status = status
        """The HTTP status, when the error came as one (or the one the error implies)."""
        self.retryable = retryable
        """True for transient failures (overload, rate limit, 5xx, timeouts)."""
        self.retry_after = retry_after
        """Seconds the provider asked us to wait, when it said."""
        self.body = body
        """The raw error payload, for diagnostics only: never show it as the answer."""
        self.completed: tuple[ToolCall, ...] = tuple(completed)
        """The calls completed before the error that no read returned (see
        :attr:`StreamError.completed`). For diagnostics and recovery: the turn failed,
        so an agent does not run them."""

    def __repr__(self) -> str:
        return (
            f"ProviderError({self.message!r}, provider={self.provider!r}, code={self.code!r}, "
            f"status={self.status!r}, retryable={self.retryable!r})"
        )


class StreamTimeoutError(ProviderError):
    """The provider did not answer, or stopped sending, within the time allowed."""

    def __init__(self, message: str, *, provider: str | None, **kwargs: Any) -> None:
        kwargs.setdefault("code", "timeout")
        kwargs.setdefault("retryable", True)
        super().__init__(message, provider=provider, **kwargs)


class TruncatedStreamError(StreamError):
    """The stream ended before its dialect's end marker, or stopped at a token limit.

    Nothing partial is ever released as a call: the calls that did complete and that no
    read returned are in ``completed``; the ones that were cut are in ``partial`` with
    their raw text.
    """

    def __init__(
        self,
        message: str,
        *,
        reason: str,
        provider: str | None,
        completed: Sequence[ToolCall] = (),
        partial: Sequence[PartialToolCall] = (),
        text: str = "",
    ) -> None:
        super().__init__(message)
        self.reason = reason
        """``"eof"`` (no end marker), ``"max_tokens"`` (the provider's limit), or the
        provider's own stop reason that ended the turn early."""
        self.provider = provider
        """The dialect being parsed."""
        self.completed: tuple[ToolCall, ...] = tuple(completed)
        """The calls that completed before the cut and that no read returned."""
        self.partial: tuple[PartialToolCall, ...] = tuple(partial)
        """The calls that were cut, with the argument text received."""
        self.text = text
        """The visible text received so far."""

    def __str__(self) -> str:
        # What happened, in one line: the reason and what arrived, beside the message.
        message = super().__str__()
        names = [c.name for c in self.completed]
        parts = [
            f"reason {self.reason}",
            f"{len(self.completed)} completed call(s) not yet returned"
            + (f" ({', '.join(names)})" if names else ""),
            f"{len(self.partial)} partial",
        ]
        return f"{message} [{'; '.join(parts)}]"


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
