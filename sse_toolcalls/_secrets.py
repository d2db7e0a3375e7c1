"""Secrets and every spelling of them a transport or a server can give.

One owner for what a credential looks like on the wire: which request headers and query
parameters carry one (:func:`credentials`), and one pattern per secret that matches it as
written, percent-encoded (``%41``, any hex case, ``+`` for a space, ``%2541`` encoded
twice or more), JSON-escaped
(``\\u0041``, ``\\/``), as an HTML character reference, in base64 (standard or URL-safe,
at any alignment inside a longer base64 text), and in any letter case, or any mix of
these character by character. The recorder redacts with it, and the library's log
records are redacted against the secrets the clients registered (:func:`remember`).

What no pattern can find: a secret the server transformed otherwise (reversed, hashed,
encrypted, truncated below :data:`MIN_SECRET_CHARS`). ``docs/threat-model.md``
says what is promised.
"""

from __future__ import annotations

import base64
import dataclasses
import re
import threading
from collections.abc import Iterable, Iterator
from typing import Any, Final
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = [
    "MIN_SECRET_CHARS",
    "REDACTED",
    "SecretSet",
    "credentials",
    "is_secret_header",
    "is_secret_query_key",
    "known",
    "remember",
]

REDACTED: Final = "[REDACTED]"
"""What a secret is replaced with, in every file and log record."""

MIN_SECRET_CHARS: Final = 6
"""Shorter credential values are not searched for: a 3-byte "key" would redact every
match of three ordinary letters and change a stream for nothing."""

MAX_KNOWN_SECRETS: Final = 256
"""How many secrets the process-wide set keeps (the oldest go first): a process holds a
handful of API keys; a bound keeps a client made per request from growing it forever."""

SECRET_HEADERS: Final = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",  # Azure OpenAI
        "x-goog-api-key",
        "cookie",
        "set-cookie",
    }
)
"""Headers whose values are credentials (lower case)."""

SECRET_QUERY_KEYS: Final = frozenset({"key", "api_key", "api-key", "apikey", "access_token"})
"""Query parameters whose values are credentials (Gemini's ``?key=``, among others)."""

_SECRET_WORDS: Final = ("key", "token", "secret", "auth", "password", "passwd", "signature")
"""A header or query parameter whose name holds one of these is taken as a credential
too: vendors invent their own (``x-goog-api-key``, ``X-Amz-Signature``, ``sig``-like
names stay listed above), and redacting a harmless value costs less than keeping a key."""


def _name(name: str) -> str:
    # Odd whitespace and case on the wire mean the same header (RFC 9110 5.1, 5.5).
    return name.strip().lower()


def is_secret_header(name: str) -> bool:
    """Whether a header of this name carries a credential."""
    name = _name(name)
    return name in SECRET_HEADERS or any(word in name for word in _SECRET_WORDS)


def is_secret_query_key(name: str) -> bool:
    """Whether a query parameter of this name carries a credential."""
    name = _name(name)
    return name in SECRET_QUERY_KEYS or name == "sig" or any(w in name for w in _SECRET_WORDS)


def _header_values(value: str) -> Iterator[str]:
    value = value.strip()
    yield value
    # "Bearer sk-...", with any run of spaces or tabs after the scheme: the token may be
    # echoed without it. Each word of the value counts (a cookie's "a=b; c=d" too).
    words = [w for w in re.split(r"[\s;,]+", value) if w]
    # The scheme ("Bearer", "Basic") is no secret: found as one it would redact the word
    # wherever the stream has it.
    scheme = len(words) > 1 and words[0].isalpha()
    for word in words[1:] if scheme else words:
        yield word
        if "=" in word:
            yield word.split("=", 1)[1]
    if len(words) >= 2 and words[0].lower() == "basic":
        # Basic credentials are base64 of "user:password": the password is the secret.
        try:
            decoded = base64.b64decode(words[1], validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return
        yield decoded
        yield decoded.split(":", 1)[-1]


def credentials(headers: Iterable[tuple[str, str]], url: str) -> set[str]:
    """The credential values a request carries, in its headers and its query.

    Query values count as sent (percent-encoded) and decoded, both with ``+`` as a
    space and without: a server may echo either spelling.
    """
    found: set[str] = set()
    for name, value in headers:
        if is_secret_header(name):
            found.update(_header_values(value))
    query = urlsplit(url).query
    for key, value in parse_qsl(query, keep_blank_values=True):
        if is_secret_query_key(key):
            found.add(value)
    for part in query.split("&"):
        key, _, value = part.partition("=")
        if is_secret_query_key(unquote(key)):
            found.update((value, unquote(value)))
    return {v for v in found if len(v) >= MIN_SECRET_CHARS}


def _hex(byte: int) -> bytes:
    # Either case of hex digit matches: the pattern is compiled with IGNORECASE.
    return f"{byte:02x}".encode()


def _char_spellings(char: str) -> list[bytes]:
    """Regex alternatives for one character of a secret."""
    raw = char.encode("utf-8", "surrogatepass")
    out = [re.escape(raw)]
    # Percent-encoded, byte by byte (RFC 3986 2.1: hex in either case), and encoded again
    # any number of times (%2541: a proxy that quotes a URL already quoted).
    out.append(b"".join(b"%(?:25)*" + _hex(b) for b in raw))
    # JSON \uXXXX (RFC 8259 7), a surrogate pair past the BMP.
    code = ord(char)
    units = (
        [code]
        if code < 0x10000
        else [0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)]
    )
    out.append(b"".join(rb"\\[uU]" + _hex(unit >> 8) + _hex(unit & 0xFF) for unit in units))
    # HTML character references, decimal and hex, as an error page may write them.
    out.append(b"&#0*" + str(code).encode() + b";")
    out.append(b"&#[xX]0*" + b"".join(_hex(b) for b in code.to_bytes(3)).lstrip(b"0") + b";")
    if char == " ":
        out.append(rb"\+")
    if char in '/"\\':
        out.append(re.escape(b"\\" + raw))
    return out


def _base64_cores(secret: bytes) -> list[bytes]:
    """The part of the secret's base64 that does not depend on its neighbours, at each
    of the three alignments it can have inside a longer base64 text."""
    out = []
    for shift in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(b"\0" * shift + secret)
            front = -(-8 * shift // 6)  # characters holding bits of the padding bytes
            back = (shift + len(secret)) // 3 * 4  # characters of whole groups only
            core = text[front:back]
            if len(core) >= 8:
                out.append(core)
    return out


def spelling_pattern(secret: str) -> bytes:
    """A regex (bytes) that matches ``secret`` in every spelling this module promises,
    when compiled with ``re.IGNORECASE`` (hex digits and the secret's letters in any case)."""
    chars = b"".join(b"(?:" + b"|".join(_char_spellings(c)) + b")" for c in secret)
    cores = [re.escape(core) for core in _base64_cores(secret.encode("utf-8", "surrogatepass"))]
    return b"|".join([chars, *cores])


class SecretSet:
    """Secrets to find, each in every spelling; thread-safe."""

    def __init__(self, secrets: Iterable[str] = (), *, limit: int | None = None) -> None:
        self._lock = threading.Lock()
        self._limit = limit
        self._secrets: dict[str, None] = {}  # ordered: the oldest is dropped first
        self._pattern: re.Pattern[bytes] | None = None
        for secret in secrets:
            self.add(secret)

    def add(self, secret: str) -> None:
        """Find ``secret`` from now on (ignored when shorter than :data:`MIN_SECRET_CHARS`)."""
        secret = secret.strip()
        if len(secret) < MIN_SECRET_CHARS:
            return
        with self._lock:
            if secret in self._secrets:
                return
            self._secrets[secret] = None
            if self._limit is not None and len(self._secrets) > self._limit:
                del self._secrets[next(iter(self._secrets))]
            self._pattern = None

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def pattern(self) -> re.Pattern[bytes] | None:
        """One pattern for every secret, or ``None`` when there is none."""
        with self._lock:
            if self._pattern is None and self._secrets:
                # Longest first, so a secret that contains another is redacted whole.
                ordered = sorted(self._secrets, key=len, reverse=True)
                self._pattern = re.compile(
                    b"|".join(b"(?:" + spelling_pattern(s) + b")" for s in ordered),
                    re.IGNORECASE,
                )
            return self._pattern

    def spans(self, data: bytes) -> list[tuple[int, int]]:
        """Where a secret is spelled in ``data``, in order, without overlap."""
        pattern = self.pattern()
        if pattern is None:
            return []
        return [m.span() for m in pattern.finditer(data) if m.end() > m.start()]

    def found_in(self, text: str) -> bool:
        """Whether ``text`` holds a secret in any spelling."""
        return bool(self.spans(text.encode("utf-8", "surrogatepass")))

    def redact(self, text: str) -> str:
        """``text`` with every spelling of a secret replaced by :data:`REDACTED`."""
        pattern = self.pattern()
        if pattern is None:
            return text
        data = text.encode("utf-8", "surrogatepass")
        out = pattern.sub(REDACTED.encode(), data)
        return text if out == data else out.decode("utf-8", "replace")

    def redact_value(self, value: Any, *, depth: int = 0) -> Any:
        """``value`` with its strings redacted, through dicts, lists and tuples (a
        provider's error body); other values as they are."""
        if depth > 50 or not self:
            return value
        if isinstance(value, str):
            return self.redact(value)
        if isinstance(value, dict):
            return {
                self.redact_value(k, depth=depth + 1): self.redact_value(v, depth=depth + 1)
                for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return type(value)(self.redact_value(v, depth=depth + 1) for v in value)
        return value


def strings_of(value: Any, *, depth: int = 0) -> Iterator[str]:
    """Every string inside ``value``: through dataclasses (the parser's events and
    calls), an exception's attributes, dicts, lists and tuples."""
    if depth > 50:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, bytes):
        yield value.decode("utf-8", "replace")
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings_of(k, depth=depth + 1)
            yield from strings_of(v, depth=depth + 1)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings_of(v, depth=depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from strings_of(getattr(value, f.name, None), depth=depth + 1)
    elif isinstance(value, BaseException):
        yield str(value)
        yield from strings_of(dict(vars(value)), depth=depth + 1)


_KNOWN: Final = SecretSet(limit=MAX_KNOWN_SECRETS)


def remember(secret: str) -> None:
    """Redact ``secret`` from the library's log records from now on (the provider
    clients call it with their API key)."""
    _KNOWN.add(secret)


def known() -> SecretSet:
    """The process-wide secrets the library's logs are redacted against."""
    return _KNOWN
