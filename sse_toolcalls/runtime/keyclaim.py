"""A caller's idempotency key, checked against what it names.

A key the caller chose (an MCP client's ``_meta`` key, an application's own
:data:`~.dispatch.KeyFunction`) names one call: one tool with one set of arguments. The
first call under a key *claims* it: an entry in the idempotency ledger, under a key
derived from the caller's, whose ``tool`` field holds the tool and a digest of the
canonical arguments. A later call under the same key compares: the same tool and
arguments are the same call (it replays as usual); anything else is refused with
:class:`KeyConflict`, as a payment API answers a key reused with other parameters with
an error, never with a second action (or, worse, with the first action's receipt).

The claim uses only the ledger's own methods: ``reserve`` is its compare-and-set, so
workers sharing a ledger agree on what a key names, and the claim is recorded at once so
the ledger's sweep ages it out with the writes. No change to the ledger protocol.
"""

from __future__ import annotations

import hashlib

import anyio

from ..errors import UsageError
from .errors import LedgerError
from .ledgers.base import DEFAULT_LEDGER_TIMEOUT_S, IdempotencyLedger

__all__ = ["KeyConflict", "claim_key", "claim_text"]


class KeyConflict(UsageError):
    """A caller's idempotency key cannot name this call: it was claimed for another
    tool or other arguments (or is not a usable key). The text is for the model."""


def _claim_of(key: str) -> str:
    """The ledger key of the claim on ``key``: a SHA-256 of a text no write key is made
    of, so claims and writes never share an entry; fixed length whatever the key."""
    text = f"sse-toolcalls/key-claim\x00{key}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def claim_text(tool: str, arguments: str) -> str:
    """What a key is claimed for: the tool and a SHA-256 of the arguments' canonical
    text (``ledger.key_arguments``: key order and number spelling do not change it)."""
    digest = hashlib.sha256(arguments.encode("utf-8", "surrogatepass")).hexdigest()
    return f"key-claim {tool} {digest}"


async def claim_key(
    ledger: IdempotencyLedger,
    key: str,
    tool: str,
    arguments: str,
    *,
    deadline: float = DEFAULT_LEDGER_TIMEOUT_S,
) -> str | None:
    """Claim ``key`` for ``tool`` and ``arguments`` (canonical text), or check the
    earlier claim.

    Returns:
        The claim's ledger key when this call made the claim (give it back with
        ``ledger.forget`` if the call then ran nothing); ``None`` when an earlier call
        with the same tool and arguments had made it.

    Raises:
        KeyConflict: the key was claimed for another tool or other arguments.
        LedgerError: the ledger failed, or did not answer within ``deadline`` seconds
            (a frozen ledger must not hold the call for good).
    """
    claim, wanted = _claim_of(key), claim_text(tool, arguments)
    try:
        with anyio.fail_after(deadline):
            entry = await ledger.get(claim)
            if entry is None:
                entry = await ledger.reserve(claim, tool=wanted)
                if entry is None:
                    await ledger.record(claim, wanted, is_error=False)
                    return claim
    except LedgerError:
        raise
    except TimeoutError as exc:
        raise LedgerError(f"the ledger did not answer a key claim within {deadline} s") from exc
    except Exception as exc:
        raise LedgerError(f"the ledger failed a key claim: {type(exc).__name__}") from exc
    if entry.tool != wanted:
        raise KeyConflict(
            "This idempotency key was already used for another call (other arguments or "
            "another tool): a key names one call. Send a new key for a new call."
        )
    return None
