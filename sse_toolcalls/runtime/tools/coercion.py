"""Narrow, documented coercion of tool arguments.

Models sometimes quote a number (``{"days": "5"}``). Refusing such a call costs a model
round trip for no gain, because there is only one thing the model can have meant. Guessing
where several readings exist (is ``"yes"`` true? is ``2.7`` the integer 2 or 3?) runs the
tool with arguments nobody asked for. So the registry coerces a value only when the text is
*exactly the JSON spelling of a value of the type the schema wants*, at the place the schema
wants it, and validates the coerced arguments again from the start (so ``"99"`` for an
integer with ``maximum: 14`` is still refused, as ``99``). Every coercion made is reported
in ``ValidatedCall.coercions``.

Coercion is attempted only at a path where validation failed with a type error whose
wanted types include the target (a ``type`` keyword, or an ``anyOf``/``oneOf`` of type
alternatives such as ``integer | None``). A value that is already valid is never touched.

| The schema wants | The model sent | Result | Why |
|---|---|---|---|
| ``integer`` | ``"5"``, ``"-3"``, ``"0"`` | ``5``, ``-3``, ``0`` | the JSON spelling of one integer |
| ``integer`` | ``"05"``, ``"+5"``, ``" 5"``, ``"5.0"``, ``"1e3"``, ``"1_000"``, ``"0x10"`` | refused | not canonical JSON integer text (leading zero: a code, not a count?) |
| ``integer`` | ``2.7`` | refused | rounding would invent a value |
| ``integer`` | ``5.0`` | accepted as is | JSON Schema (Draft 6 on) already counts ``5.0`` as an integer; a function tool with an ``int`` hint receives ``5`` |
| ``integer`` | ``1e300``, ``9007199254740993.0`` (a float of 2**53 or more) | refused | the float is not the integer written (``...993.0`` parses as ``...992``); the digits alone are exact |
| ``integer``, ``number`` | ``true`` / ``false`` | refused | a boolean is not a count |
| an ``enum`` / ``const`` with an int member | ``1.0`` for the member ``1`` | ``1`` | the same JSON value; the handler gets the member itself (``ArgumentValidator``) |
| ``number`` | ``"2.5"``, ``"-0.5"``, ``"5"``, ``"1e3"`` | ``2.5``, ``-0.5``, ``5``, ``1000.0`` | the JSON spelling of one number |
| ``number`` | ``"nan"``, ``"inf"``, ``"1e999"``, ``".5"``, ``"5."``, ``"2,5"`` | refused | not JSON, or not finite |
| ``boolean`` | ``"true"`` / ``"false"`` (lower case, exactly) | ``true`` / ``false`` | the JSON spelling of one boolean |
| ``boolean`` | ``"yes"``, ``"True"``, ``"1"``, ``"on"``, ``1``, ``0`` | refused | several readings |
| ``string`` | ``5``, ``2.5``, ``true``, ``null`` | refused | ``5.0`` or ``"5"``? ``"05"``? the digits a string needs are lost |
| ``array`` / ``object`` | a string holding JSON (``"[1, 2]"``) | refused | the error tells the model to send the value itself |
| ``array`` | a single item (``"a"`` for ``["a"]``) | refused | wrapping changes meaning |
| ``null`` | ``"null"``, ``""`` | refused | an empty or ``"null"`` string may be meant literally |
| anything | ``null`` | refused | null and a missing field are different requests |
"""  # noqa: E501

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["COERCIBLE_TYPES", "coerce_string"]

COERCIBLE_TYPES = frozenset({"integer", "number", "boolean"})
"""The JSON Schema types a string may be coerced to (see the table above)."""

# RFC 8259 section 6: int = zero / ( digit1-9 *DIGIT ), with an optional minus sign.
_JSON_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
# RFC 8259 section 6: number = [ minus ] int [ frac ] [ exp ].
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_JSON_BOOLEANS = {"true": True, "false": False}
_MAX_NUMBER_TEXT = 400
"""Longest string (in characters) considered for a number; far above any real argument."""


def coerce_string(text: str, wanted: tuple[str, ...]) -> tuple[bool, Any]:
    """Coerce ``text`` to the first of the ``wanted`` JSON types it spells exactly.

    Args:
        text: The string the model sent.
        wanted: The JSON Schema type names the schema accepts at that place, in order.

    Returns:
        ``(True, value)`` with the coerced value, or ``(False, None)`` when no coercion in
        the table applies.
    """
    # Python refuses to convert more than 4,300 digits (sys.int_info.str_digits_check_threshold
    # guards against quadratic conversion); text that long is no count a model meant anyway.
    if len(text) > _MAX_NUMBER_TEXT:
        return False, None
    # Integer before number: "5" for ["integer", "number"] must stay an int.
    if "integer" in wanted and _JSON_INTEGER.fullmatch(text):
        return True, int(text)
    if "number" in wanted and _JSON_NUMBER.fullmatch(text):
        # Integer text for a number stays an int (JSON has one number type; 5 == 5.0).
        if _JSON_INTEGER.fullmatch(text):
            return True, int(text)
        value = float(text)
        if math.isfinite(value):
            return True, value
    if "boolean" in wanted and text in _JSON_BOOLEANS:
        return True, _JSON_BOOLEANS[text]
    return False, None
