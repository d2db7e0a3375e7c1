"""Tool names each dialect accepts, and a two-way map between registry and wire names.

A registry may name a tool ``files.read`` or ``search web``; the providers refuse such
names in a request. ``ToolNameMap`` gives every registry name a legal *wire name* for one
dialect, deterministically and without collisions, and maps the name a call comes back
with to the tool the registry knows.

Legal names, as each provider documents them (each rule is in its dialect's
``DialectSpec.name_rule``, ``dialects/<dialect>/__init__.py``):

- OpenAI Chat Completions and Responses: "a-z, A-Z, 0-9, or contain underscores and
  dashes, with a maximum length of 64" (``^[a-zA-Z0-9_-]{1,64}$``).
- Anthropic Messages: "Must match the regex ``^[a-zA-Z0-9_-]{1,64}$``" (the tool guide;
  the API reference allows 128, we keep the stricter guide).
- Gemini: "Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain
  underscores, dots, colons and dashes, with a maximum length of 64." (Older Gemini SDK docs
  allow only underscores and dashes besides letters and digits; names we *generate* use only
  those, and names a registry already spells with ``.`` or ``:`` are kept.)
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable

from .._faces import publish
from ..calls import Dialect, ToolCall
from ..errors import UsageError
from . import spec_for
from ._spec import NameRule

__all__ = ["NameRule", "ToolNameMap", "is_legal_name", "name_rule"]


# Generated names use only the characters every dialect accepts, so a wire name never
# depends on a character one provider might start refusing.
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_HASH_CHARS = 8
"""Hex digits of SHA-256 appended to a changed name: 32 bits keep two different registry
names from sharing a suffix in practice; a clash that still happens is resolved below."""


def name_rule(dialect: str) -> NameRule:
    """The naming rule of ``dialect``.

    Raises:
        UnknownDialectError: ``dialect`` is not one of the library's dialects.
    """
    return spec_for(dialect).name_rule


def is_legal_name(dialect: str, name: str) -> bool:
    """Whether ``dialect`` accepts ``name`` as a function name as it is.

    Raises:
        UnknownDialectError: ``dialect`` is unknown.
    """
    rule = name_rule(dialect)
    if not name or len(name) > rule.max_length or rule.pattern.fullmatch(name) is None:
        return False
    return rule.first_char is None or rule.first_char.match(name) is not None


def _digest(name: str, length: int) -> str:
    # Imported here: only a name too long or illegal for its provider is hashed, and
    # hashlib (OpenSSL) was 3.4 ms of `import sse_toolcalls` (-X importtime, issue 16).
    import hashlib

    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def _candidates(name: str, rule: NameRule) -> Iterable[str]:
    """Legal wire names for an illegal ``name``, most readable first, each one longer in hash."""
    base = _UNSAFE.sub("_", name)
    if rule.first_char is not None and (not base or rule.first_char.match(base) is None):
        base = "_" + base
    if base and len(base) <= rule.max_length:
        yield base
    stem = base or "tool"
    # Longer hashes for the (astronomically rare) case that a shorter one is taken; the
    # final counter makes the sequence endless, so a free name is always found.
    for digits in (_HASH_CHARS, 16, 32, 64):
        suffix = "_" + _digest(name, digits)
        yield stem[: rule.max_length - len(suffix)] + suffix
    counter = 0
    while True:
        counter += 1
        suffix = f"_{_digest(name, 16)}_{counter}"
        yield stem[: rule.max_length - len(suffix)] + suffix


class ToolNameMap:
    """The registry names of a set of tools and their legal wire names in one dialect.

    Rules, so that the map is the same whatever order the names come in:

    - a name the dialect accepts is its own wire name;
    - an illegal name gets its illegal characters replaced by ``_`` (and a leading ``_``
      where the dialect needs one); if that is too long or already taken, a short stable
      hash of the original name is appended instead, so different names never share a
      wire name.
    """

    __slots__ = ("_from_wire", "_to_wire", "dialect")

    def __init__(self, dialect: str, names: Iterable[str]) -> None:
        """Build the map for ``names`` (the registry's tool names) in ``dialect``.

        Raises:
            UnknownDialectError: ``dialect`` is unknown.
            UsageError: a name appears twice.
        """
        rule = name_rule(dialect)
        self.dialect: Dialect = dialect  # type: ignore[assignment]
        """The dialect whose rules the wire names follow."""
        unique: list[str] = []
        seen: set[str] = set()
        for name in names:
            if name in seen:
                raise UsageError(f"tool name {name!r} is registered twice")
            seen.add(name)
            unique.append(name)
        to_wire: dict[str, str] = {}
        taken: set[str] = set()
        for name in unique:
            if is_legal_name(dialect, name):
                to_wire[name] = name
                taken.add(name)
        # Sorted, so that which of two clashing names keeps the readable form does not
        # depend on registration order.
        for name in sorted(n for n in unique if n not in to_wire):
            for candidate in _candidates(name, rule):
                if candidate not in taken:
                    to_wire[name] = candidate
                    taken.add(candidate)
                    break
        self._to_wire: dict[str, str] = {name: to_wire[name] for name in unique}
        self._from_wire: dict[str, str] = {wire: name for name, wire in to_wire.items()}

    def __repr__(self) -> str:
        return f"ToolNameMap({self.dialect!r}, {list(self._to_wire)!r})"

    def __len__(self) -> int:
        return len(self._to_wire)

    def __contains__(self, name: object) -> bool:
        return name in self._to_wire

    def items(self) -> list[tuple[str, str]]:
        """Every ``(registry name, wire name)`` pair, in registration order."""
        return list(self._to_wire.items())

    def to_wire(self, name: str) -> str:
        """The wire name for registry name ``name``; a name the map does not know (one the
        model invented, say) is returned unchanged, as the model sent it."""
        return self._to_wire.get(name, name)

    def from_wire(self, wire_name: str) -> str:
        """The registry name behind ``wire_name``; an unknown wire name is returned
        unchanged, so the tools layer can answer it as an unknown tool."""
        return self._from_wire.get(wire_name, wire_name)

    def call_from_wire(self, call: ToolCall) -> ToolCall:
        """``call`` with its name mapped back to the registry name (a copy; ``call`` is
        returned as it is when the name needs no change)."""
        name = self.from_wire(call.name)
        return call if name == call.name else dataclasses.replace(call, name=name)

    def call_to_wire(self, call: ToolCall) -> ToolCall:
        """``call`` with its registry name mapped to the wire name, as the provider sent it."""
        name = self.to_wire(call.name)
        return call if name == call.name else dataclasses.replace(call, name=name)


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
