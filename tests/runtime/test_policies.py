"""Circuit breaker, retry policy and fallback messages, on injected clocks and dice."""

from __future__ import annotations

import pytest

from sse_toolcalls.edge.http_errors import provider_error_from_http
from sse_toolcalls.errors import (
    MalformedStreamError,
    ProviderError,
    StreamTimeoutError,
    TruncatedStreamError,
    UsageError,
)
from sse_toolcalls.runtime.breaker import CircuitBreaker
from sse_toolcalls.runtime.fallback import (
    MESSAGES,
    fallback_message,
    register_language,
    resolve_language,
)
from sse_toolcalls.runtime.retry import RetryPolicy, is_transient


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# --------------------------------------------------------------------------------------
# Circuit breaker


def test_the_circuit_opens_after_three_consecutive_failures() -> None:
    clock = Clock()
    breaker = CircuitBreaker(clock=clock)
    for _ in range(2):
        assert breaker.allow("t")
        breaker.failure("t")
    assert breaker.status("t").state == "closed"
    assert breaker.allow("t")
    breaker.failure("t")
    status = breaker.status("t")
    assert (status.state, status.failures, status.retry_at) == ("open", 3, 1060.0)
    assert not breaker.allow("t")
    assert breaker.allow("other tool")


def test_a_success_resets_the_count() -> None:
    breaker = CircuitBreaker(clock=Clock())
    for _ in range(5):
        breaker.failure("t")
        breaker.failure("t")
        breaker.success("t")
    assert breaker.status("t").state == "closed"
    assert breaker.allow("t")


def test_half_open_lets_one_probe_through_and_its_success_closes() -> None:
    clock = Clock()
    breaker = CircuitBreaker(threshold=2, cooldown=30.0, clock=clock)
    breaker.failure("t")
    breaker.failure("t")
    clock.now += 29.9
    assert not breaker.allow("t")
    clock.now += 0.1
    assert breaker.status("t").state == "half_open"
    assert breaker.allow("t")
    assert not breaker.allow("t"), "only one probe at a time"
    breaker.success("t")
    assert breaker.status("t").state == "closed"
    assert breaker.allow("t") and breaker.allow("t")


def test_a_failed_probe_opens_the_circuit_for_another_cooldown() -> None:
    clock = Clock()
    breaker = CircuitBreaker(threshold=3, cooldown=60.0, clock=clock)
    for _ in range(3):
        breaker.failure("t")
    clock.now += 60
    assert breaker.allow("t")
    breaker.failure("t")
    assert breaker.status("t").state == "open"
    clock.now += 59
    assert not breaker.allow("t")
    clock.now += 1
    assert breaker.allow("t")


def test_a_released_probe_slot_can_be_taken_again() -> None:
    clock = Clock()
    breaker = CircuitBreaker(threshold=1, cooldown=1.0, clock=clock)
    breaker.failure("t")
    clock.now += 1
    assert breaker.allow("t")
    breaker.release("t")
    assert breaker.allow("t")


def test_breaker_settings_are_checked() -> None:
    with pytest.raises(UsageError):
        CircuitBreaker(threshold=0)
    with pytest.raises(UsageError):
        CircuitBreaker(cooldown=-1)


# --------------------------------------------------------------------------------------
# Retry


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (provider_error_from_http(429, b"{}", provider="openai_chat"), True),
        (provider_error_from_http(500, b"{}", provider="openai_chat"), True),
        (provider_error_from_http(529, b"{}", provider="anthropic"), True),
        (provider_error_from_http(408, b"{}", provider="gemini"), True),
        (provider_error_from_http(409, b"{}", provider="anthropic"), True),
        (provider_error_from_http(400, b"{}", provider="openai_chat"), False),
        (provider_error_from_http(401, b"{}", provider="anthropic"), False),
        (
            provider_error_from_http(
                429, b'{"error":{"code":"insufficient_quota"}}', provider="openai_chat"
            ),
            False,
        ),
        (ProviderError("Overloaded", provider="anthropic", retryable=True), True),
        (StreamTimeoutError("silent", provider="gemini"), True),
        (TruncatedStreamError("cut", reason="eof", provider="openai_chat"), True),
        (TruncatedStreamError("cut", reason="max_tokens", provider="anthropic"), False),
        (MalformedStreamError("garbage", provider="openai_chat"), False),
        (ValueError("not ours"), False),
    ],
)
def test_only_transient_failures_are_retried(error: Exception, transient: bool) -> None:
    assert is_transient(error) is transient
    assert RetryPolicy().should_retry(error, 1) is transient


def test_attempts_are_bounded() -> None:
    error = StreamTimeoutError("silent", provider="gemini")
    policy = RetryPolicy(attempts=3)
    assert [policy.should_retry(error, n) for n in (1, 2, 3)] == [True, True, False]
    assert not RetryPolicy(attempts=1).should_retry(error, 1)


def test_backoff_grows_and_is_capped() -> None:
    policy = RetryPolicy(base_delay=0.5, multiplier=2.0, max_delay=3.0, jitter=False)
    assert [policy.delay(n) for n in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_jitter_stays_in_the_upper_half() -> None:
    low = RetryPolicy(base_delay=1.0, random=lambda: 0.0)
    high = RetryPolicy(base_delay=1.0, random=lambda: 0.999999)
    assert low.delay(2) == 1.0
    assert 1.99 < high.delay(2) < 2.0


def test_retry_after_is_honoured_and_capped() -> None:
    policy = RetryPolicy(base_delay=0.5, jitter=False, max_retry_after=20.0)
    asked = provider_error_from_http(429, b"{}", {"retry-after": "7"}, provider="openai_chat")
    greedy = provider_error_from_http(429, b"{}", {"retry-after": "3600"}, provider="anthropic")
    shorter = provider_error_from_http(429, b"{}", {"retry-after-ms": "10"}, provider="anthropic")
    assert policy.delay(1, asked) == 7.0
    assert policy.delay(1, greedy) == 20.0
    assert policy.delay(1, shorter) == 0.5, "a shorter hint never shortens our own backoff"


def test_retry_settings_are_checked() -> None:
    with pytest.raises(UsageError):
        RetryPolicy(attempts=0)
    with pytest.raises(UsageError):
        RetryPolicy(base_delay=-1)
    with pytest.raises(UsageError):
        RetryPolicy(multiplier=0.5)


# --------------------------------------------------------------------------------------
# Fallback messages


def test_the_fallback_messages_in_english_and_brazilian_portuguese() -> None:
    assert fallback_message() == "I couldn't get a response. Please try again."
    assert (
        fallback_message("provider_unavailable", "pt-BR")
        == "Não consegui obter uma resposta. Tente novamente."
    )


@pytest.mark.parametrize(
    ("tag", "resolved"),
    [
        ("en", "en"),
        ("en-GB", "en"),
        ("pt-BR", "pt-BR"),
        ("pt_br", "pt-BR"),
        ("pt", "pt-BR"),
        ("PT-pt", "pt-BR"),
        ("fr-FR", "en"),
        ("", "en"),
    ],
)
def test_language_tags_resolve_to_the_nearest_catalogue(tag: str, resolved: str) -> None:
    assert resolve_language(tag) == resolved


def test_every_language_has_every_message() -> None:
    for messages in MESSAGES.values():
        assert set(messages) == {
            "provider_unavailable",
            "tool_arguments",
            "step_limit",
            "internal_error",
        }
        assert all(text.strip() for text in messages.values())


def test_a_language_must_be_complete(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "sse_toolcalls.runtime.fallback.MESSAGES", {k: dict(v) for k, v in MESSAGES.items()}
    )
    with pytest.raises(UsageError):
        register_language("es", {"provider_unavailable": "No obtuve respuesta."})
    register_language(
        "es",
        {
            "provider_unavailable": "No obtuve una respuesta. Inténtalo de nuevo.",
            "tool_arguments": "No pude completar la solicitud. Inténtalo de nuevo.",
            "step_limit": "No pude terminar a tiempo. Inténtalo de nuevo.",
        },
    )
    assert fallback_message(lang="es-MX") == "No obtuve una respuesta. Inténtalo de nuevo."
    # A catalogue written before internal_error existed shows its provider message.
    assert fallback_message("internal_error", "es") == fallback_message(lang="es")
    with pytest.raises(UsageError):
        fallback_message("nonsense", "en")  # type: ignore[arg-type]
