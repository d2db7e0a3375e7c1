"""Format checkers that really check.

``jsonschema`` ignores ``format`` unless it is given a ``FormatChecker``, and its stock
checkers are lenient where it matters for tool arguments: ``email`` only looks for an
``@``, ``date`` accepts the compact ISO forms that ``date.fromisoformat`` takes on Python
3.11 (``20250601``), and ``date-time``/``uri`` silently pass when their optional packages are
missing. This module builds one checker for Draft 2020-12 with strict versions of the
formats a tool argument usually carries:

Each is checked by a parser, not a regular expression: the RFC's fixed layout is checked
position by position, and the values (a real day, an hour below 24, an offset within a
day) by the standard library's own parser.

- ``date``: RFC 3339 ``full-date``, ``YYYY-MM-DD``, a real calendar day (no ``2025-02-30``).
- ``date-time``: RFC 3339 ``date-time``: ``full-date``, ``T`` (or ``t``, or the space that
  section 5.6's note allows), ``HH:MM:SS``, an optional fraction, and the offset (``Z``,
  ``z`` or ``+HH:MM``), required; a leap second (``:60``) only at minute 59; the values by
  ``datetime.fromisoformat``.
- ``time``: RFC 3339 ``full-time`` (``HH:MM:SS[.frac]`` and the offset), as above.
- ``email``: an RFC 5321 mailbox, ``local@domain`` (dot-atom local part of at most 64
  characters, a host name of dot-separated letter-digit-hyphen labels or an address
  literal such as ``[192.0.2.1]``).
- ``uri``: an absolute RFC 3986 URI: ``urllib.parse.urlsplit`` splits it, the scheme is
  required (a letter, then letters, digits, ``+``, ``-``, ``.``), every character is one
  RFC 3986 allows (unreserved, reserved or a ``%XX`` escape: no space, no control, no
  non-ASCII), a ``[...]`` host is an IP literal; ``uri-reference`` allows relative ones.
- ``uuid``: RFC 9562 hyphenated hex form, ``8-4-4-4-12``.
- ``regex``: a regular expression that RE2 compiles, the engine this library runs
  schema patterns on (:mod:`.schema_guard`), at most ``MAX_PATTERN_CHARS`` characters.
  The stock checker compiles with Python's ``re``, which recurses per group
  (``"(" * 5000`` raised ``RecursionError`` out of validation) and warns on some sets.

Every other format known to ``jsonschema`` for Draft 2020-12 keeps its stock checker.
``jsonschema`` itself is imported only when :func:`format_checker` is first called.
"""

from __future__ import annotations

import datetime
import functools
import ipaddress
import re
from typing import TYPE_CHECKING

from .schema_guard import MAX_PATTERN_CHARS, compiles

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
    "regex": "a regular expression in RE2 syntax (no lookarounds or backreferences)",
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


_DIGITS = frozenset("0123456789")


def _digits(text: str) -> bool:
    # str.isdigit() would take "²" and Arabic-Indic digits; RFC 3339 wants ASCII DIGIT.
    return bool(text) and all(c in _DIGITS for c in text)


def _full_time(text: str) -> bool:
    """RFC 3339 ``full-time``: ``HH:MM:SS[.frac]`` then ``Z``/``z`` or ``+HH:MM``/``-HH:MM``."""
    if len(text) < 9 or text[2] != ":" or text[5] != ":":
        return False
    hour, minute, second = text[0:2], text[3:5], text[6:8]
    if not (_digits(hour) and _digits(minute) and _digits(second)):
        return False
    rest = text[8:]
    fraction = ""
    if rest.startswith("."):
        end = 1
        while end < len(rest) and rest[end] in _DIGITS:
            end += 1
        fraction, rest = rest[:end], rest[end:]
        if len(fraction) < 2:
            return False
    if rest in ("Z", "z"):
        offset = "+00:00"
    elif (
        len(rest) == 6
        and rest[0] in "+-"
        and rest[3] == ":"
        and _digits(rest[1:3])
        and _digits(rest[4:6])
    ):
        offset = rest
    else:
        return False
    # Section 5.7: a leap second is 60 at the end of a minute; Python's parser has no
    # second 60, so the values are checked with 59 in its place.
    if second == "60":
        if minute != "59":
            return False
        second = "59"
    try:
        datetime.time.fromisoformat(f"{hour}:{minute}:{second}{fraction[:7]}{offset}")
    except ValueError:
        return False
    return True


def is_date_time(value: object) -> bool:
    """Return whether ``value`` is an RFC 3339 ``date-time`` (non-strings pass)."""
    if not isinstance(value, str):
        return True
    return len(value) > 11 and value[10] in "Tt " and is_date(value[:10]) and _full_time(value[11:])


def is_time(value: object) -> bool:
    """Return whether ``value`` is an RFC 3339 ``full-time`` (non-strings pass)."""
    return not isinstance(value, str) or _full_time(value)


_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.")
# RFC 3986 section 2: unreserved and reserved characters; "%" only as an escape.
_URI_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/?#[]@!$&'()*+,;="
)
_HEX = frozenset("0123456789abcdefABCDEF")


def _uri_chars(text: str) -> bool:
    i = 0
    while i < len(text):
        c = text[i]
        if c == "%":
            escape = text[i + 1 : i + 3]
            if len(escape) != 2 or not set(escape) <= _HEX:
                return False
            i += 3
            continue
        if c not in _URI_CHARS:
            return False
        i += 1
    return True


def is_uri_reference(value: object) -> bool:
    """Return whether ``value`` is an RFC 3986 URI or relative reference (non-strings
    pass)."""
    if not isinstance(value, str):
        return True
    if not _uri_chars(value):
        return False
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value)
    except ValueError:  # an unbalanced "[" in the host, a bad port...
        return False
    netloc = parts.netloc.rpartition("@")[2]
    if netloc.startswith("["):
        literal = netloc[1 : netloc.find("]")] if "]" in netloc else ""
        if not literal.startswith(("v", "V")):
            try:
                ipaddress.IPv6Address(literal)
            except ValueError:
                return False
    if parts.scheme and parts.scheme[0].isalpha():
        return all(c in _SCHEME_CHARS for c in parts.scheme)
    # No scheme: a colon in the first segment would have made one (section 4.2).
    return ":" not in value.split("/", 1)[0] or value.startswith("//")


def is_uri(value: object) -> bool:
    """Return whether ``value`` is an absolute RFC 3986 URI, with its scheme (non-strings
    pass)."""
    if not isinstance(value, str):
        return True
    from urllib.parse import urlsplit

    if not is_uri_reference(value):
        return False
    scheme = urlsplit(value).scheme
    # urlsplit lower-cases the scheme and returns "" for none.
    return bool(scheme) and value[: len(scheme)].lower() == scheme and value[len(scheme)] == ":"


def is_regex(value: object) -> bool:
    """Whether a string is a regular expression RE2 compiles (see the module docstring);
    anything that is not a string passes, as for every format."""
    if not isinstance(value, str):
        return True
    return len(value) <= MAX_PATTERN_CHARS and compiles(value)


@functools.cache
def format_checker() -> FormatChecker:
    """Return the shared Draft 2020-12 format checker with the strict formats above.

    Returns:
        A ``jsonschema.FormatChecker`` (built once, then shared: it holds no state).
    """
    from jsonschema import Draft202012Validator
    from jsonschema import FormatChecker as _FormatChecker

    checker = _FormatChecker(formats=())
    checker.checkers = dict(Draft202012Validator.FORMAT_CHECKER.checkers)
    checker.checks("date")(is_date)
    checker.checks("date-time")(is_date_time)
    checker.checks("time")(is_time)
    checker.checks("email")(is_email)
    checker.checks("uri")(is_uri)
    checker.checks("uri-reference")(is_uri_reference)
    checker.checks("uuid")(is_uuid)
    checker.checks("regex")(is_regex)
    return checker
