"""Digests and signatures of values that leave the process and come back.

A paused run's state goes through an application, often a browser, before it is
resumed; a call a person approved must be the call that runs. Both are checked by a
digest of their *canonical* form: equal values, equal digest, and any edit (a number,
a name, the order of two calls, a field's type) a different one.

The digest is a hash tree: each container (list, tuple, dict, dataclass) is hashed
once, from the encodings of its items, and memoised by identity during one walk, so a
state whose parts are shared (a call appears in ``calls``, in ``pending`` and in its
assistant message) costs its distinct objects, never the size of its unshared
expansion. Every encoding is tagged by kind and prefixed by its length, so no two
values share one (``[1, 2]`` and ``["1,2"]``, a tuple of one string and the string).

A value of a kind we never put in a state (an arbitrary object) has no canonical form:
the state was not made here, and is refused
(:class:`~sse_toolcalls.runtime.errors.ApprovalStateError`).
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import hmac
from typing import Any

from .._jsonsafe import MAX_DEPTH
from ..calls import ToolCall
from .errors import ApprovalStateError

__all__ = ["MAX_SEAL_DEPTH", "call_digest", "sign", "signature_ok", "value_digest"]

MAX_SEAL_DEPTH = MAX_DEPTH + 16
"""Nesting a digested value may have, in containers: a call's arguments may be nested
``MAX_DEPTH`` deep (the deepest JSON we read), and a state wraps them in a handful of
levels (state, messages, message, calls, call); a cycle, which no state of ours holds,
ends here too."""

_STATE_CONTEXT = b"sse_toolcalls approval state v1\x00"
_CALL_CONTEXT = b"sse_toolcalls approved call v1\x00"


def _length(data: bytes) -> bytes:
    return str(len(data)).encode("ascii") + b":"


def _text(value: str) -> bytes:
    # surrogatepass: a lone surrogate (valid in a JSON string) is encoded, never a failure.
    data = value.encode("utf-8", "surrogatepass")
    return _length(data) + data


class _Walk:
    """One digest: the memo of containers already hashed, by identity."""

    def __init__(self) -> None:
        self.memo: dict[int, bytes] = {}
        # The memo holds ids; keeping the objects alive keeps the ids theirs.
        self.alive: list[Any] = []

    def encode(self, value: Any, depth: int) -> bytes:
        if value is None:
            return b"n"
        if value is True:
            return b"t"
        if value is False:
            return b"f"
        if isinstance(value, enum.Enum):
            return b"e" + _text(type(value).__qualname__) + self.encode(value.value, depth)
        if isinstance(value, int):
            # hex: exact for any size (decimal str() refuses past 4,300 digits).
            return b"i" + _text(hex(value))
        if isinstance(value, float):
            return b"d" + _text(value.hex())
        if isinstance(value, str):
            return b"s" + _text(value)
        if isinstance(value, bytes | bytearray | memoryview):
            data = bytes(value)
            return b"b" + _length(data) + data
        return b"h" + self.container(value, depth)

    def container(self, value: Any, depth: int) -> bytes:
        known = self.memo.get(id(value))
        if known is not None:
            return known
        if depth <= 0:
            raise ApprovalStateError(
                f"the state is nested deeper than {MAX_SEAL_DEPTH} levels", reason="tampered"
            )
        h = hashlib.sha256()
        if isinstance(value, list | tuple):
            h.update(b"[" + _text(str(len(value))))
            for item in value:
                h.update(self.encode(item, depth - 1))
        elif isinstance(value, dict):
            pairs = sorted(
                (self.encode(k, depth - 1), self.encode(v, depth - 1)) for k, v in value.items()
            )
            h.update(b"{" + _text(str(len(pairs))))
            for key, item in pairs:
                h.update(key + item)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            cls = type(value)
            fields = dataclasses.fields(value)
            h.update(b"D" + _text(f"{cls.__module__}.{cls.__qualname__}"))
            h.update(_text(str(len(fields))))
            for field in fields:
                h.update(_text(field.name) + self.encode(getattr(value, field.name), depth - 1))
        else:
            raise ApprovalStateError(
                f"the state holds a {type(value).__name__}, which no paused state has",
                reason="tampered",
            )
        digest = h.digest()
        self.memo[id(value)] = digest
        self.alive.append(value)
        return digest


def value_digest(value: Any) -> bytes:
    """The SHA-256 of ``value``'s canonical form (32 bytes).

    Raises:
        ApprovalStateError: ``value`` holds an object of a kind no state holds, or is
            nested deeper than :data:`MAX_SEAL_DEPTH` (``reason="tampered"``).
    """
    try:
        return hashlib.sha256(_Walk().encode(value, MAX_SEAL_DEPTH)).digest()
    except RecursionError as exc:  # called from deep in a stack already
        raise ApprovalStateError("the state is nested too deep", reason="tampered") from exc


def call_digest(call: ToolCall, *, request_id: str) -> str:
    """The digest that names one call of one request for an approval: its name, its
    arguments (their canonical form), its id, its place in its turn and every other
    field of the call, and the request it serves. Give it to
    :meth:`~.dispatch.Dispatcher.dispatch` as ``approved`` to run a ``needs_approval``
    tool's call; a call edited in any way, or the same call in another request, has
    another digest.

    Returns:
        64 hexadecimal characters.

    Raises:
        ApprovalStateError: the call's arguments hold an object with no canonical form
            (no call a provider sent does).
    """
    inner = _Walk()
    body = inner.encode(request_id, MAX_SEAL_DEPTH) + inner.encode(call, MAX_SEAL_DEPTH)
    return hashlib.sha256(_CALL_CONTEXT + body).hexdigest()


def sign(key: bytes, digest: bytes) -> str:
    """The HMAC-SHA256 of a state's digest under the application's key, in hex."""
    return hmac.new(key, _STATE_CONTEXT + digest, hashlib.sha256).hexdigest()


def signature_ok(key: bytes, digest: bytes, signature: object) -> bool:
    """Whether ``signature`` is :func:`sign` of ``digest`` under ``key`` (compared in
    constant time; anything but a string of the right text is not)."""
    if not isinstance(signature, str) or not signature.isascii():
        return False
    return hmac.compare_digest(sign(key, digest), signature)
