"""Format checkers that really check.

``jsonschema`` ignores ``format`` unless it is given a ``FormatChecker``, and its stock
checkers are lenient where it matters for tool arguments: ``email`` only looks for an
``@``, ``date`` accepts the compact ISO forms that ``date.fromisoformat`` takes on Python
3.11 (``20250601``), and ``date-time``/``uri`` silently pass when their optional packages are
missing. This module builds one checker for Draft 2020-12 with strict versions of the
formats a tool argument usually carries:

- ``date``: RFC 3339 ``full-date``, ``YYYY-MM-DD``, a real calendar day (no ``2025-02-30``).
- ``date-time``: RFC 3339 ``date-time`` with its offset (``2025-06-01T10:00:00Z``).
- ``time``: RFC 3339 ``full-time`` with its offset.
- ``email``: an RFC 5321 mailbox, ``local@domain`` (dot-atom local part of at most 64
  characters, a host name of dot-separated letter-digit-hyphen labels or an address
  literal such as ``[192.0.2.1]``).
- ``uri``: an absolute RFC 3986 URI (with a scheme); ``uri-reference`` allows relative ones.
- ``uuid``: RFC 9562 hyphenated hex form, ``8-4-4-4-12``.

Every other format known to ``jsonschema`` for Draft 2020-12 keeps its stock checker.
``jsonschema`` itself is imported only when :func:`format_checker` is first called.
"""

from __future__ import annotations

import datetime
import functools
import ipaddress
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from jsonschema import FormatChecker

__all__ = ["FORMAT_HINTS", "format_checker"]

FORMAT_HINTS: dict[str, str] = {
    "date": "a calendar date written YYYY-MM-DD, such as 2025-06-01",
    "date-time": "a date and time with its offset, such as 2025-06-01T14:30:00Z",
    "time": "a time with its offset, such as 14:30:00Z",
    "email": "an email address such as name@example.com",
    "uri": "an absolute URI with its scheme, such as https://example.com/page",
    "uri-reference": "a URI or relative reference, such as /path?q=1",
    "uuid": "a UUID such as 123e4567-e89b-12d3-a456-426614174000",
    "ipv4": "an IPv4 address such as 192.0.2.1",
    "ipv6": "an IPv6 address such as 2001:db8::1",
    "hostname": "a host name such as example.com",
    "duration": "an ISO 8601 duration such as P3DT4H",
}
"""How each format is described to the model when a value does not match it."""

_FULL_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", re.ASCII)
_UUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}", re.ASCII)
# RFC 5322 section 3.2.3 atext, the characters of a dot-atom.
_DOT_ATOM = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*")
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?", re.ASCII)


def is_date(value: object) -> bool:
    """Return whether ``value`` is an RFC 3339 ``full-date`` naming a real day (non-strings
    pass: ``type`` judges them)."""
    if not isinstance(value, str):
        return True
    if not _FULL_DATE.fullmatch(value):
        return False
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def is_uuid(value: object) -> bool:
    """Return whether ``value`` is a hyphenated UUID (non-strings pass)."""
    return not isinstance(value, str) or _UUID.fullmatch(value) is not None


def is_hostname(value: str) -> bool:
    """Return whether ``value`` is a host name of letter-digit-hyphen labels (RFC 1123)."""
    if not value or len(value) > 253:
        return False
    return all(_LABEL.fullmatch(label) for label in value.split("."))


def is_email(value: object) -> bool:
    """Return whether ``value`` is an RFC 5321 mailbox (non-strings pass)."""
    if not isinstance(value, str):
        return True
    local, at, domain = value.rpartition("@")
    if not at or not local or len(local) > 64 or not _DOT_ATOM.fullmatch(local):
        return False
    if domain.startswith("[") and domain.endswith("]"):
        literal = domain[1:-1]
        if literal.startswith("IPv6:"):
            literal = literal[5:]
        try:
            ipaddress.ip_address(literal)
        except ValueError:
            return False
        return True
    return is_hostname(domain)


@functools.cache
def format_checker() -> FormatChecker:
    """Return the shared Draft 2020-12 format checker with the strict formats above.

    Returns:
        A ``jsonschema.FormatChecker`` (built once, then shared: it holds no state).
    """
    from jsonschema import Draft202012Validator
    from jsonschema import FormatChecker as _FormatChecker
    from rfc3339_validator import validate_rfc3339  # type: ignore[import-untyped]
    from rfc3986_validator import validate_rfc3986  # type: ignore[import-untyped]

    checker = _FormatChecker(formats=())
    checker.checkers = dict(Draft202012Validator.FORMAT_CHECKER.checkers)

    # RFC 3339 section 5.6: "T" and "Z" may be written in lower case; the validator
    # package only takes upper case, and upper-casing changes nothing else in a valid value.
    def is_date_time(value: object) -> bool:
        return not isinstance(value, str) or bool(validate_rfc3339(value.upper()))

    def is_time(value: object) -> bool:
        # RFC 3339 full-time, checked by prefixing a known-good full-date.
        return not isinstance(value, str) or bool(validate_rfc3339("2000-01-01T" + value.upper()))

    def is_uri(value: object) -> bool:
        return not isinstance(value, str) or bool(validate_rfc3986(value, rule="URI"))

    def is_uri_reference(value: object) -> bool:
        return not isinstance(value, str) or bool(validate_rfc3986(value, rule="URI_reference"))

    checker.checks("date")(is_date)
    checker.checks("date-time")(is_date_time)
    checker.checks("time")(is_time)
    checker.checks("email")(is_email)
    checker.checks("uri")(is_uri)
    checker.checks("uri-reference")(is_uri_reference)
    checker.checks("uuid")(is_uuid)
    return checker
