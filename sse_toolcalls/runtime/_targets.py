"""``module:attribute`` names, as the command line takes them (``--registry``, ``mcp serve``).

One reader for every such name, so that each command accepts the same spelling (dots after
the colon walk attributes) and fails the same way: a :class:`~.errors.UsageError` of one
line, whatever importing the module raised (a missing module, a syntax error, an exception
at its top level), never a traceback.
"""

from __future__ import annotations

import importlib
from typing import Any

from .._jsonsafe import safe_str
from ..errors import UsageError

__all__ = ["resolve"]


def resolve(spec: str, *, what: str) -> Any:
    """The object ``spec`` (``package.module:name.attribute``) names.

    Args:
        spec: The name, as the user wrote it.
        what: What it should name, for the error (``"the registry"``).

    Raises:
        UsageError: the spec is malformed, its module cannot be imported, or its
            attribute is missing (one line, the cause chained).
    """
    module, _, attribute = spec.partition(":")
    if not module or not attribute:
        raise UsageError(f"{what} is named as module:attribute, not {spec!r}")
    try:
        value: Any = importlib.import_module(module)
        for part in attribute.split("."):
            value = getattr(value, part)
    except Exception as exc:  # whatever the module's import raised: the user's code
        detail = " ".join(safe_str(exc).split())  # one line: a SyntaxError spans several
        raise UsageError(f"cannot load {what} {spec!r}: {type(exc).__name__}: {detail}") from exc
    return value
