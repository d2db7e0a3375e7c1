"""Pre-written messages for the user when the assistant cannot answer.

They are local: written here, in the user's language, never produced by the model and
never built from an error (the technical detail goes to diagnostics only, see
:mod:`.diagnostics`). English is the default; Brazilian Portuguese is the first
translation. Add a language with :func:`register_language`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from ..errors import UsageError

__all__ = [
    "DEFAULT_LANGUAGE",
    "FallbackReason",
    "MESSAGES",
    "fallback_message",
    "register_language",
    "resolve_language",
]

FallbackReason = Literal["provider_unavailable", "tool_arguments", "step_limit", "internal_error"]
"""Why the fallback is shown: the provider could not answer (after retries, or with a
permanent error, or an empty answer); the model failed to call a tool correctly twice in
a row; the conversation hit its step limit; an unexpected exception stopped the run (a
bug: :meth:`~.agent.Agent.run` answers anyway, and the diagnostics hold the exception)."""

DEFAULT_LANGUAGE = "en"
"""The language used when the user's has no catalogue."""

MESSAGES: dict[str, dict[FallbackReason, str]] = {
    "en": {
        "provider_unavailable": "I couldn't get a response. Please try again.",
        "tool_arguments": "I couldn't complete that request. Please try again.",
        "step_limit": "I couldn't finish that request in time. Please try again.",
        "internal_error": "Something went wrong on my side. Please try again.",
    },
    "pt-BR": {
        "provider_unavailable": "Não consegui obter uma resposta. Tente novamente.",
        "tool_arguments": "Não consegui concluir esse pedido. Tente novamente.",
        "step_limit": "Não consegui concluir esse pedido a tempo. Tente novamente.",
        "internal_error": "Algo deu errado do meu lado. Tente novamente.",
    },
}
"""The catalogue: language tag (BCP 47) -> reason -> message."""

_REASONS: tuple[FallbackReason, ...] = (
    "provider_unavailable",
    "tool_arguments",
    "step_limit",
    "internal_error",
)
_OPTIONAL: dict[FallbackReason, FallbackReason] = {"internal_error": "provider_unavailable"}
"""Reasons added after the first catalogues: a language registered without one shows its
message for the reason given here (a catalogue written before the reason existed keeps
working)."""


def resolve_language(tag: str) -> str:
    """The catalogue language for a BCP 47 tag: the tag itself (case-insensitive), else
    the first catalogue entry with the same primary language (``pt``, ``pt-PT`` ->
    ``pt-BR``), else :data:`DEFAULT_LANGUAGE`. ``_`` is accepted for ``-`` (``pt_BR``)."""
    wanted = tag.replace("_", "-").strip().lower()
    by_lower = {known.lower(): known for known in MESSAGES}
    if wanted in by_lower:
        return by_lower[wanted]
    primary = wanted.split("-", 1)[0]
    for known in MESSAGES:
        if known.lower().split("-", 1)[0] == primary:
            return known
    return DEFAULT_LANGUAGE


def fallback_message(reason: FallbackReason = "provider_unavailable", lang: str = "en") -> str:
    """The message shown to the user for ``reason``, in ``lang`` (see
    :func:`resolve_language`).

    Raises:
        UsageError: an unknown reason.
    """
    if reason not in _REASONS:
        raise UsageError(f"unknown fallback reason {reason!r}; expected one of {_REASONS}")
    return MESSAGES[resolve_language(lang)][reason]


def register_language(tag: str, messages: Mapping[FallbackReason, str]) -> None:
    """Add (or replace) the messages of one language.

    ``internal_error`` may be left out: that language's ``provider_unavailable`` message
    is used for it.

    Raises:
        UsageError: a reason is missing or a message is empty: a user must never be
            shown nothing.
    """
    missing = [r for r in _REASONS if r not in _OPTIONAL and not messages.get(r, "").strip()]
    if missing:
        raise UsageError(f"the messages for {tag!r} lack {missing}")
    given = {r: messages[r] for r in _REASONS if messages.get(r, "").strip()}
    for reason, instead in _OPTIONAL.items():
        given.setdefault(reason, given[instead])
    MESSAGES[tag] = given
