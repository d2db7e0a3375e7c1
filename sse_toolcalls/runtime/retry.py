"""When to retry a provider request, and how long to wait first.

Transient (retried): a :class:`ProviderError` marked ``retryable`` (connection errors,
timeouts including :class:`StreamTimeoutError`, 408, 409, 429, every 5xx, 529, and the
overloaded or rate-limit error events, all classified by
:func:`sse_toolcalls.provider_errors.is_retryable`), and a stream cut before its end
marker (:class:`TruncatedStreamError` with reason ``"eof"``: the connection dropped).
Everything else is permanent: an invalid request, authentication, an exhausted quota, a
stream that stopped at the token limit (asking again gives the same cut), a stream that
cannot be understood.

The wait before retry ``n`` (from 1) is ``base_delay * multiplier ** (n - 1)``, capped at
``max_delay``, with "equal jitter": a random point in its upper half, so concurrent
clients spread out but no wait collapses to zero. A ``Retry-After`` the provider sent
replaces that wait when it is longer, capped at ``max_retry_after``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

from .._checks import check_count, check_quantity
from .._faces import publish
from ..errors import ProviderError, SSEToolCallsError, TruncatedStreamError, UsageError

__all__ = ["DEFAULT_ATTEMPTS", "RetryPolicy", "is_transient"]

DEFAULT_ATTEMPTS = 3
"""Requests made for one turn before giving up, the first included: the OpenAI and
Anthropic SDKs also retry twice; more only keeps the user waiting on a provider that is
down, and the user then gets the fallback message."""


def is_transient(error: BaseException) -> bool:
    """Whether ``error`` is a provider or stream failure worth retrying (module docstring)."""
    if isinstance(error, ProviderError):
        return error.retryable
    if isinstance(error, TruncatedStreamError):
        return error.reason == "eof"
    return False


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """How a failed provider request is retried."""

    attempts: int = DEFAULT_ATTEMPTS
    """Requests per turn, the first included (1 disables retries)."""

    base_delay: float = 0.5
    """Seconds before the first retry, before jitter."""

    multiplier: float = 2.0
    """Growth of the wait from one retry to the next."""

    max_delay: float = 8.0
    """Largest computed wait, in seconds."""

    max_retry_after: float = 60.0
    """Largest ``Retry-After`` honoured, in seconds: a provider asking for more is
    waited on for this long (a harness should not hang on a minutes-long hint)."""

    jitter: bool = True
    """Whether to randomise each wait within its upper half."""

    sleep: Callable[[float], Awaitable[None]] = field(default=anyio.sleep)
    """Waits the given seconds (injectable for tests)."""

    random: Callable[[], float] = field(default=random.random)
    """A float in [0, 1) (injectable for tests)."""

    def __post_init__(self) -> None:
        # NaN would pass a plain "< 0" check and then make every wait NaN (and
        # anyio.sleep(nan) raise ValueError mid-run): each field is checked by name.
        check_count("attempts", self.attempts, minimum=1)
        for name in ("base_delay", "max_delay", "max_retry_after"):
            check_quantity(name, getattr(self, name))
        check_quantity("multiplier", self.multiplier, minimum=1.0, unit="times")
        if not isinstance(self.jitter, bool):
            raise UsageError(f"jitter: expected True or False, got {self.jitter!r}")

    def should_retry(self, error: BaseException, attempt: int) -> bool:
        """Whether to retry after ``attempt`` (from 1) failed with ``error``."""
        return (
            attempt < self.attempts and isinstance(error, SSEToolCallsError) and is_transient(error)
        )

    def delay(self, retry: int, error: BaseException | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (from 1) after ``error``."""
        try:
            grown = self.base_delay * self.multiplier ** (retry - 1)
        except OverflowError:  # a large multiplier after many retries: past any cap
            grown = math.inf if self.base_delay else 0.0
        computed = min(self.max_delay, grown)
        if self.jitter:
            computed = computed / 2 + self.random() * computed / 2
        hint = error.retry_after if isinstance(error, ProviderError) else None
        if hint is not None and hint > computed:
            return min(hint, self.max_retry_after)
        return computed


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
