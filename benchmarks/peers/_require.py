"""Import a peer's package or say it is missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..model import MissingPeer


def require(module: str, package: str) -> ModuleType:
    """Import ``module``, or raise :class:`MissingPeer` naming the pip ``package``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingPeer(f"{package} is not installed ({exc}); pip install {package}") from exc
