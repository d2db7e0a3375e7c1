"""Checks of the numbers a public configuration is given (one owner for all of them).

A count or a duration is compared with ``<`` and ``>`` everywhere it is used, and every
comparison with NaN is false: a ``RetryPolicy(attempts=nan)`` or a breaker whose cool-down
is NaN would have passed a plain ``value < 1`` check and then behaved as no limit at all.
``True`` is an ``int`` to Python and 1 to arithmetic, so a bool given for a number is
almost always a slip of the caller's (a flag passed in the wrong place). So: a count is
an ``int`` that is not a ``bool``; a quantity is an ``int`` or ``float`` that is not a
``bool``, is finite (infinity is "no limit", which every such setting spells ``None``
where it allows it), and is in range. Each refusal is a :class:`UsageError` (or the
caller's subclass of it) whose message starts with the field's name.
"""

from __future__ import annotations

import math

from .errors import UsageError

__all__ = ["check_count", "check_quantity"]


def check_count(
    field: str, value: object, *, minimum: int, error: type[UsageError] = UsageError
) -> int:
    """``value`` if it is a whole number (an ``int``, not a ``bool``) of at least ``minimum``.

    Raises:
        UsageError: (or ``error``) naming ``field``, for anything else.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(f"{field}: expected a whole number, got {value!r}")
    if value < minimum:
        raise error(f"{field}: must be at least {minimum}, got {value!r}")
    return value


def check_quantity(
    field: str,
    value: object,
    *,
    minimum: float = 0.0,
    positive: bool = False,
    unit: str = "seconds",
    error: type[UsageError] = UsageError,
) -> float:
    """``value`` if it is a finite real number (an ``int`` or ``float``, not a ``bool``)
    of at least ``minimum``, and above it when ``positive``.

    Raises:
        UsageError: (or ``error``) naming ``field``, for anything else: NaN, an infinity,
            an int too large for a float, a value out of range, another type.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise error(f"{field}: expected a number of {unit}, got {value!r}")
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int past the float range
        finite = False
    if not finite:
        raise error(f"{field}: must be a finite number of {unit}, got {value!r}")
    if value < minimum or (positive and value <= minimum):
        relation = "above" if positive else "at least"
        raise error(f"{field}: must be {relation} {minimum:g} {unit}, got {value!r}")
    return float(value)
