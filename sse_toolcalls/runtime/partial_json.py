"""The arguments parsed so far: a best-effort, incremental reader of a growing JSON text.

For display only, never for execution: a call runs on the arguments its dialect parsed
strictly once the call was complete. :class:`PartialJSON` takes the argument text in
fragments as they stream and keeps a *live* value (the same dicts and lists, grown in
place), so that each fragment costs time in its own length, never in the length of the
prefix: a 10 MB argument is read once, not re-parsed per delta (the quadratic trap of
"close the brackets and ``json.loads`` the prefix"; ``benchmarks/bench_partial_json.py``
measures the growth).

What the value shows of an unfinished text:

- containers as soon as they open, with the members complete so far;
- a string as soon as it opens, growing; a string longer than :data:`EXACT_STRING_CHARS`
  is brought up to date each time its unshown part reaches a quarter of its shown part,
  so that the copies a Python ``str`` needs stay linear overall (it is exact again when
  it closes);
- an object key once its string is closed *and* its value has begun;
- a number, ``true``, ``false`` and ``null`` once they are complete (a delimiter came):
  ``12`` of ``123`` is never shown.

Text that is not JSON stops the preview where it went wrong (``stopped`` says why); it
never raises: the strict parser, not this one, judges the call.
"""

from __future__ import annotations

import json.decoder
import re
from collections.abc import Callable
from typing import Any, Final, Literal

__all__ = ["EXACT_STRING_CHARS", "MAX_PREVIEW_DEPTH", "MAX_SCALAR_CHARS", "PartialJSON"]

MAX_PREVIEW_DEPTH: Final = 64
"""Nesting the preview follows, in containers: the core's own argument-depth bound is of
this order, and a display has no use for deeper; past it the preview stops."""

MAX_SCALAR_CHARS: Final = 1000
"""Length of one number or literal the preview reads, in characters: far above any real
number (Python's own ``int`` conversion stops at 4,300 digits); past it the preview stops,
so a hostile run of digits is never converted."""

EXACT_STRING_CHARS: Final = 1024
"""An open string up to this many characters (of its raw JSON text) is refreshed on
every fragment: the copy costs at most this much per fragment, a constant."""

# The stdlib's own JSON string decoder (C-accelerated), given the text after the opening
# quote; typeshed does not list it.
_scanstring: Callable[[str, int, bool], tuple[str, int]] = vars(json.decoder)["scanstring"]

_SPECIAL = re.compile(r'["\\]')
_SPACE = re.compile(r"[ \t\r\n]+")
_SCALAR_CHARS = re.compile(r"[-+.0-9A-Za-z]+")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS: Final[dict[str, Any]] = {"true": True, "false": False, "null": None}
_ESCAPES: Final = frozenset('"\\/bfnrtu')
_HEX: Final = frozenset("0123456789abcdefABCDEF")

_AFTER_BACKSLASH: Final = 5  # escape state: a backslash read, its next character not

_State = Literal["value", "first_key", "key", "colon", "after", "string", "scalar", "done"]


class PartialJSON:
    """Reads one JSON text in fragments; ``value`` is what it holds so far."""

    __slots__ = (
        "_escape",
        "_is_key",
        "_key",
        "_keys",
        "_pieces",
        "_raw_chars",
        "_scalar",
        "_scalar_chars",
        "_shown_chars",
        "_slot",
        "_stack",
        "_state",
        "chars",
        "stopped",
        "value",
    )

    def __init__(self) -> None:
        self.value: Any = None
        """The value so far: the live root container (grown in place by later
        fragments: copy it to keep a snapshot), a complete scalar, or ``None``."""
        self.stopped: str | None = None
        """Why the preview stopped (the text is not JSON, or crossed a limit), or ``None``."""
        self.chars = 0
        """Characters fed so far."""
        self._state: _State = "value"
        self._stack: list[dict[str, Any] | list[Any]] = []
        self._keys: list[str | None] = []  # the pending key of each open object
        self._key: str | None = None
        self._pieces: list[str] = []  # the open string's raw text
        self._raw_chars = 0
        self._shown_chars = 0
        self._escape = 0  # characters left in the escape being read (0: none)
        self._is_key = False
        self._slot: tuple[dict[str, Any] | list[Any], str | int] | None = None
        self._scalar: list[str] = []
        self._scalar_chars = 0

    def __repr__(self) -> str:
        state = f"stopped={self.stopped!r}" if self.stopped else f"state={self._state}"
        return f"<PartialJSON {self.chars} chars, depth {len(self._stack)}, {state}>"

    def feed(self, text: str) -> Any:
        """Read the next fragment; return ``value``. Never raises for bad text."""
        self.chars += len(text)
        if self.stopped is None:
            try:
                self._feed(text)
            except (ValueError, RecursionError) as exc:
                # A number past Python's conversion limit, a string scanstring refuses:
                # the preview stops; the strict parser reports the text.
                self._stop(f"unreadable: {exc}")
            if self._state == "string" and not self._is_key and self.stopped is None:
                self._refresh()
        return self.value

    # -- the reader -------------------------------------------------------------------

    def _feed(self, text: str) -> None:
        i, n = 0, len(text)
        while i < n and self.stopped is None:
            state = self._state
            if state == "string":
                i = self._string(text, i, n)
                continue
            if state == "scalar":
                match = _SCALAR_CHARS.match(text, i)
                if match is not None:
                    self._scalar.append(match.group())
                    self._scalar_chars += match.end() - i
                    if self._scalar_chars > MAX_SCALAR_CHARS:
                        self._stop(f"a number or literal longer than {MAX_SCALAR_CHARS} chars")
                        return
                    i = match.end()
                    if i == n:
                        return  # the token may go on in the next fragment
                self._end_scalar()
                continue
            space = _SPACE.match(text, i)
            if space is not None:
                i = space.end()
                continue
            char = text[i]
            i += 1
            if state == "value":
                self._begin_value(char)
            elif state in ("first_key", "key"):
                if char == '"':
                    self._open_string(is_key=True)
                elif char == "}" and state == "first_key":
                    self._close("}")
                else:
                    self._stop(f"expected a key, got {char!r}")
            elif state == "colon":
                if char == ":":
                    self._state = "value"
                else:
                    self._stop(f"expected ':', got {char!r}")
            elif state == "after":
                self._after(char)
            else:  # done: only whitespace may follow
                self._stop(f"text after the value: {char!r}")

    def _begin_value(self, char: str) -> None:
        if char in "{[":
            if len(self._stack) >= MAX_PREVIEW_DEPTH:
                self._stop(f"nested deeper than {MAX_PREVIEW_DEPTH}")
                return
            container: dict[str, Any] | list[Any] = {} if char == "{" else []
            self._attach(container)
            self._stack.append(container)
            self._keys.append(self._key)
            self._key = None
            self._state = "first_key" if char == "{" else "value"
        elif char == '"':
            self._open_string(is_key=False)
        elif char == "]" and self._stack and isinstance(self._stack[-1], list):
            if self._stack[-1]:
                self._stop("a value expected after ','")
            else:
                self._close("]")
        elif _SCALAR_CHARS.match(char):
            self._scalar = [char]
            self._scalar_chars = 1
            self._state = "scalar"
        else:
            self._stop(f"expected a value, got {char!r}")

    def _after(self, char: str) -> None:
        top = self._stack[-1]
        if char == ",":
            self._state = "key" if isinstance(top, dict) else "value"
        elif char == ("}" if isinstance(top, dict) else "]"):
            self._close(char)
        else:
            self._stop(f"expected ',' or a closing bracket, got {char!r}")

    def _close(self, char: str) -> None:
        self._stack.pop()
        self._key = self._keys.pop()
        self._state = "after" if self._stack else "done"

    def _attach(self, value: Any) -> tuple[dict[str, Any] | list[Any], str | int] | None:
        """Put a value that has begun into its place; return the place."""
        if not self._stack:
            self.value = value
            return None
        top = self._stack[-1]
        if isinstance(top, dict):
            key = self._key if self._key is not None else ""
            top[key] = value
            return top, key
        top.append(value)
        return top, len(top) - 1

    def _completed(self, value: Any) -> None:
        self._attach(value)
        self._state = "after" if self._stack else "done"

    def _end_scalar(self) -> None:
        token = "".join(self._scalar)
        self._scalar = []
        if token in _LITERALS:
            self._completed(_LITERALS[token])
            return
        match = _NUMBER.fullmatch(token)
        if match is None:
            self._stop(f"not a JSON value: {token[:40]!r}")
            return
        number: int | float = (
            int(token) if match.group(1) is None and match.group(2) is None else float(token)
        )
        self._completed(number)

    # -- strings ----------------------------------------------------------------------

    def _open_string(self, *, is_key: bool) -> None:
        self._state = "string"
        self._is_key = is_key
        self._pieces = []
        self._raw_chars = self._shown_chars = 0
        self._escape = 0
        self._slot = None if is_key else self._attach("")

    def _string(self, text: str, i: int, n: int) -> int:
        """Read string text from ``i``; return where reading stopped."""
        while self._escape and i < n:
            char = text[i]
            if self._escape == _AFTER_BACKSLASH:
                if char not in _ESCAPES:
                    self._stop(f"a bad escape: \\{char}")
                    return n
                # After '\' come one character, or 'u' and 4 hex digits.
                self._escape = 4 if char == "u" else 0
            elif char in _HEX:
                self._escape -= 1
            else:
                self._stop(f"a bad \\u escape digit: {char!r}")
                return n
            self._pieces.append(char)
            self._raw_chars += 1
            i += 1
        if self._escape:
            return i
        match = _SPECIAL.search(text, i)
        end = n if match is None else match.start()
        if end > i:
            self._pieces.append(text[i:end])
            self._raw_chars += end - i
        if match is None:
            return n
        if text[end] == "\\":
            self._pieces.append("\\")
            self._raw_chars += 1
            self._escape = _AFTER_BACKSLASH
            return end + 1
        self._close_string()
        return end + 1

    def _decoded(self, raw: str) -> str:
        return _scanstring(raw + '"', 0, False)[0]

    def _close_string(self) -> None:
        raw = "".join(self._pieces)
        self._pieces = []
        value = self._decoded(raw)
        if self._is_key:
            self._key = value
            self._state = "colon"
            return
        slot = self._slot
        if slot is None:
            self.value = value
        else:
            slot[0][slot[1]] = value  # type: ignore[index]
        self._state = "after" if self._stack else "done"

    def _refresh(self) -> None:
        """Bring the open string's shown value up to date, when that is cheap enough."""
        unshown = self._raw_chars - self._shown_chars
        if unshown == 0 or (
            self._raw_chars > EXACT_STRING_CHARS and unshown * 4 < self._shown_chars
        ):
            return
        raw = "".join(self._pieces)
        self._pieces = [raw]  # joined once: the next refresh joins two pieces
        shown = raw
        if self._escape:
            # The escape being read is left out until it is whole.
            shown = raw[: raw.rindex("\\")]
        if _ends_in_high_surrogate(shown):
            shown = shown[:-6]  # half a surrogate pair: wait for the other half
        value = self._decoded(shown)
        self._shown_chars = self._raw_chars
        slot = self._slot
        if slot is None:
            self.value = value
        else:
            slot[0][slot[1]] = value  # type: ignore[index]

    def _stop(self, reason: str) -> None:
        self.stopped = reason


def _ends_in_high_surrogate(raw: str) -> bool:
    """Whether the raw string text ends in a ``\\uD8xx``-``\\uDBxx`` escape."""
    if len(raw) < 6 or raw[-6:-4] != "\\u":
        return False
    slashes = len(raw[:-5]) - len(raw[:-5].rstrip("\\"))
    if slashes % 2 == 0:  # the backslash is itself escaped: a literal "uD83D"
        return False
    return 0xD800 <= int(raw[-4:], 16) <= 0xDBFF
