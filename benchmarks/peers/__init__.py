"""Adapters for the peers we compare against, one small module each.

Each module has ``impls() -> list[Impl]`` and raises :class:`~benchmarks.model.MissingPeer`
when its package is not installed. Each adapter drives the peer the way its own SDK or a
typical user does, from the same chunks of bytes, and reports the same calls.
"""

from __future__ import annotations

import importlib

from ..model import Impl, MissingPeer

__all__ = ["PEER_MODULES", "load"]

PEER_MODULES = (
    "httpx_sse_peer",
    "openai_peer",
    "anthropic_peer",
    "sseclient_peer",
    "handwritten",
    "langchain_peer",
    "litellm_peer",
)


def load(skip: frozenset[str] = frozenset()) -> tuple[list[Impl], list[str]]:
    """Import every peer adapter.

    Returns the available implementations, and one line per peer that could not load.
    """
    impls: list[Impl] = []
    missing: list[str] = []
    for name in PEER_MODULES:
        if name in skip:
            continue
        try:
            module = importlib.import_module(f"{__name__}.{name}")
            impls.extend(module.impls())
        except (MissingPeer, ImportError) as exc:
            missing.append(f"{name}: {exc}")
        except Exception as exc:  # an incompatible peer version: report it, go on
            missing.append(f"{name}: cannot be driven ({type(exc).__name__}: {exc})")
    return impls, missing
