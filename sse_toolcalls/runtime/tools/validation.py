"""Validating one call's arguments against its tool's JSON Schema, and saying what is wrong.

:class:`ArgumentValidator` compiles a schema once (``jsonschema``, Draft 2020-12 unless the
schema's ``$schema`` names another draft, with the strict format checker of
:mod:`sse_toolcalls.runtime.tools.formats`). :meth:`ArgumentValidator.validate` returns the
arguments (coerced per :mod:`sse_toolcalls.runtime.tools.coercion` where that is
unambiguous), the coercions made, and every :class:`Problem` found: each one has the JSON path
of the offending value
(``$.location.lat``, ``$.items[2]``), a problem kind, and a sentence the model can act on.

Problem kinds: ``unknown_tool``, ``invalid_json``, ``missing_field``, ``unexpected_field``,
``wrong_type``, ``not_in_enum``, ``bad_format``, ``out_of_range``, ``too_short``,
``too_long``, ``pattern_mismatch``, ``not_unique``, ``no_matching_alternative``,
``too_deep`` (nesting past :data:`MAX_VALIDATED_ARGUMENTS_DEPTH`), ``more_problems``
(the count of problems past :data:`MAX_REPORTED_PROBLEMS`) and ``constraint`` (any other
keyword, with ``jsonschema``'s own wording).

Bounded work on hostile arguments: nesting is checked (without recursion) before
``jsonschema`` sees the value, every quoted value is rendered only as far as a message
shows it, and a message is at most :data:`MAX_MESSAGE_CHARS` characters.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..._faces import publish
from ..._json import json_type
from ...errors import UsageError
from .coercion import COERCIBLE_TYPES, coerce_string
from .formats import FORMAT_HINTS, format_checker
from .jsonpath import path_text
from .schema_guard import check_schema, pattern_search, re2_keywords

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

__all__ = [
    "MAX_VALIDATED_ARGUMENTS_DEPTH",
    "MAX_MESSAGE_CHARS",
    "MAX_REPORTED_PROBLEMS",
    "ArgumentValidator",
    "Coercion",
    "Problem",
    "path_text",
    "problem_json",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """One thing wrong with a call, phrased for the model."""

    path: str
    """JSON path of the offending value: ``$`` for the arguments object, ``$.unit``,
    ``$.items[2].name``; for a missing field, the path the field should have had."""

    kind: str
    """What is wrong: ``missing_field``, ``wrong_type``, ``not_in_enum``, ``bad_format``...
    (see the module docstring for the full list)."""

    message: str
    """One sentence about the value at ``path``, such as ``must be one of 'celsius',
    'fahrenheit'; got 'kelvin'``."""

    allowed: tuple[Any, ...] | None = None
    """The allowed values, for ``not_in_enum`` (and the tool names, for ``unknown_tool``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Coercion:
    """A value the registry changed before validation passed (see ``coercion``)."""

    path: str
    """JSON path of the value."""

    original: Any
    """What the model sent (always a string)."""

    value: Any
    """What the tool receives."""


def problem_json(problem: Problem) -> dict[str, Any]:
    """Return ``problem`` as the JSON object sent to the model.

    Returns:
        ``{"path", "problem", "message"}``, plus ``"allowed"`` when the problem has it.
    """
    out: dict[str, Any] = {
        "path": problem.path,
        "problem": problem.kind,
        "message": problem.message,
    }
    if problem.allowed is not None:
        out["allowed"] = list(problem.allowed)
    return out


_SHOWN_CHARS = 80
"""How much of an offending value a message quotes: enough to recognise it, no more."""

_TYPE_PHRASES = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "true or false",
    "array": "an array",
    "object": "an object",
    "null": "null",
}


MAX_VALIDATED_ARGUMENTS_DEPTH = 64
"""Deepest nesting of arrays and objects a tool's validation accepts in one call's
arguments, in levels (the arguments object itself is level 1): stricter than what the
parser decodes (``MAX_PARSED_ARGUMENTS_DEPTH``, 100). Real tool arguments nest a handful of levels;
``jsonschema`` validates recursively (several frames per level) and so does any handler
walking the value, so a hostile 1,000-level value would raise ``RecursionError`` there.
Deeper arguments are refused with one ``too_deep`` problem before validation."""

MAX_REPORTED_PROBLEMS = 20
"""Problems listed in one refusal: a model fixes a call from its first few problems, and
an array of 100,000 wrong items must not become a 100,000-entry result; the rest are
counted in one ``more_problems`` entry."""

MAX_MESSAGE_CHARS = 300
"""Longest problem message, in characters (``jsonschema``'s own wording quotes whole
values)."""


def _tokens(value: Any, depth: int) -> Iterator[str]:
    """JSON text of ``value`` in pieces, lazily, so a caller can stop after a few."""
    if isinstance(value, str):
        yield json.dumps(value[: _SHOWN_CHARS + 1], ensure_ascii=False)
    elif isinstance(value, list | tuple | dict):
        if depth <= 0:
            yield "..."
            return
        if isinstance(value, dict):
            yield "{"
            for n, (key, item) in enumerate(value.items()):
                yield ", " if n else ""
                yield from _tokens(str(key), depth - 1)
                yield ": "
                yield from _tokens(item, depth - 1)
            yield "}"
            return
        yield "["
        for n, item in enumerate(value):
            yield ", " if n else ""
            yield from _tokens(item, depth - 1)
        yield "]"
    else:
        try:
            yield json.dumps(value)
        except (TypeError, ValueError):
            yield f"<{type(value).__name__}>"


def _show(value: Any) -> str:
    """Render a value for a message: strings single-quoted, the rest as JSON; at most
    about ``_SHOWN_CHARS`` characters, whatever the size or depth of the value."""
    if isinstance(value, str):
        return repr(value) if len(value) <= _SHOWN_CHARS else repr(value[:_SHOWN_CHARS]) + "..."
    pieces: list[str] = []
    size = 0
    for piece in _tokens(value, _SHOWN_CHARS):
        pieces.append(piece)
        size += len(piece)
        if size > _SHOWN_CHARS:
            break
    text = "".join(pieces)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "..."


def too_deep(value: Any, limit: int = MAX_VALIDATED_ARGUMENTS_DEPTH) -> list[str | int] | None:
    """The path of the first array or object nested deeper than ``limit`` levels in
    ``value`` (``value`` itself at level 1), or ``None``. Iterative: any depth is safe."""
    stack: list[tuple[Any, int, list[str | int]]] = [(value, 1, [])]
    while stack:
        node, level, parts = stack.pop()
        if not isinstance(node, dict | list):
            continue
        if level > limit:
            return parts
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, item in items:
            if isinstance(item, dict | list):
                stack.append((item, level + 1, [*parts, key]))
    return None


def _describe(value: Any) -> str:
    """Say what a value is, for ``got ...``: ``the string '5'``, ``the number 2.7``."""
    kind = json_type(value)
    if kind in {"null", "boolean"}:
        return _show(value)
    if kind == "integer":
        return f"the integer {_show(value)}"
    if kind == "number":
        return f"the number {_show(value)}"
    if kind == "string":
        return f"the string {_show(value)}"
    if kind == "array":
        return f"an array {_show(value)}"
    if kind == "object":
        return f"an object {_show(value)}"
    return _show(value)


def _types_phrase(types: Sequence[str]) -> str:
    return " or ".join(_TYPE_PHRASES.get(t, t) for t in types)


def _as_types(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(str(t) for t in value)
    return ()


def _only_type_alternatives(error: ValidationError) -> tuple[str, ...]:
    """For an ``anyOf``/``oneOf`` that failed only because no alternative had the right
    type, return the types the alternatives want; otherwise ``()``."""
    if error.validator not in {"anyOf", "oneOf"} or not error.context:
        return ()
    wanted: list[str] = []
    for sub in error.context:
        if sub.validator != "type" or sub.relative_path:
            return ()
        for t in _as_types(sub.validator_value):
            if t not in wanted:
                wanted.append(t)
    return tuple(wanted)


def _wanted_types(error: ValidationError) -> tuple[str, ...]:
    if error.validator == "type":
        return _as_types(error.validator_value)
    return _only_type_alternatives(error)


def _json_container_hint(value: Any, wanted: Sequence[str]) -> str:
    """Tell a model that stringified a structure to send the structure itself."""
    if not isinstance(value, str) or value.lstrip()[:1] not in ("[", "{"):
        return ""
    import orjson

    try:
        # orjson, not json: it refuses nesting past 1,024 levels with its own error,
        # where the stdlib recurses ("[" * 100_000 raised RecursionError here).
        parsed = orjson.loads(value)
    except orjson.JSONDecodeError:
        return ""
    if isinstance(parsed, list) and "array" in wanted:
        return "; send the array itself, not a string containing it"
    if isinstance(parsed, dict) and "object" in wanted:
        return "; send the object itself, not a string containing it"
    return ""


def _field_phrase(schema: Any, name: str) -> str:
    """``'lon' (a number)`` when the schema says the field's type, else ``'lon'``."""
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    sub = props.get(name) if isinstance(props, dict) else None
    types = _as_types(sub.get("type")) if isinstance(sub, dict) else ()
    if types:
        return f"{name!r} ({_types_phrase(types)})"
    return repr(name)


def _unexpected_fields(error: ValidationError) -> list[str]:
    instance = error.instance
    schema = error.schema if isinstance(error.schema, dict) else {}
    if not isinstance(instance, dict):
        return []
    props = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    return [
        key
        for key in instance
        if key not in props and not any(pattern_search(p, key) for p in patterns)
    ]


_RANGE_WORDS = {
    "minimum": "at least",
    "maximum": "at most",
    "exclusiveMinimum": "greater than",
    "exclusiveMaximum": "less than",
}
_LENGTH_KEYWORDS = {
    "minLength": ("too_short", "at least", "characters"),
    "maxLength": ("too_long", "at most", "characters"),
    "minItems": ("too_short", "at least", "items"),
    "maxItems": ("too_long", "at most", "items"),
    "minProperties": ("too_short", "at least", "fields"),
    "maxProperties": ("too_long", "at most", "fields"),
}


_Reader = Callable[["ValidationError", list[str | int], str], list[Problem]]
"""Reads one ``jsonschema`` error (the error, its path as parts and as text) into the
problems the model is told about."""


def _problems_of(error: ValidationError) -> list[Problem]:
    """Translate one ``jsonschema`` error into the problems the model is told about: the
    reader of its keyword in :data:`_READERS`, else ``jsonschema``'s own message."""
    parts = list(error.absolute_path)
    path = path_text(parts)
    reader = _READERS.get(str(error.validator))
    if reader is None:
        return [_constraint(error, path)]
    return reader(error, parts, path)


def _constraint(error: ValidationError, path: str) -> Problem:
    return Problem(path=path, kind="constraint", message=error.message)


def _required(error: ValidationError, parts: list[str | int], path: str) -> list[Problem]:
    value = error.instance
    rule: Any = error.validator_value
    missing = [n for n in rule if isinstance(value, dict) and n not in value]
    return [
        Problem(
            path=path_text([*parts, name]),
            kind="missing_field",
            message=f"required field {_field_phrase(error.schema, name)} is missing",
        )
        for name in missing
    ]


def _unexpected(error: ValidationError, parts: list[str | int], path: str) -> list[Problem]:
    schema = error.schema if isinstance(error.schema, dict) else {}
    accepted = list(schema.get("properties", {}))
    if accepted:
        tail = "the accepted fields are " + ", ".join(repr(a) for a in accepted)
    else:
        tail = "this object takes no fields"
    return [
        Problem(
            path=path_text([*parts, name]),
            kind="unexpected_field",
            message=f"{name!r} is not an accepted field; {tail}",
        )
        for name in _unexpected_fields(error)
    ] or [Problem(path=path, kind="unexpected_field", message=error.message)]


def _wrong_type(error: ValidationError, parts: list[str | int], path: str) -> list[Problem]:
    wanted = _wanted_types(error)
    if not wanted:  # a "type" whose value names no type: jsonschema's own words
        return [_constraint(error, path)]
    value = error.instance
    hint = _json_container_hint(value, wanted)
    if "integer" in wanted and isinstance(value, float) and value.is_integer():
        hint = (
            ", which a float cannot hold exactly; send the integer's digits, with no"
            " decimal point or exponent"
        )
    return [
        Problem(
            path=path,
            kind="wrong_type",
            message=f"must be {_types_phrase(wanted)}; got {_describe(value)}{hint}",
        )
    ]


def _alternatives(error: ValidationError, parts: list[str | int], path: str) -> list[Problem]:
    # Alternatives that differ only in type read as one wrong type ("a string or null").
    if _only_type_alternatives(error):
        return _wrong_type(error, parts, path)
    optional = _optional_problems(error)
    if optional:
        return optional
    return [_alternatives_problem(error, path)]


_NULL_ONLY = {"type": "null"}


def _optional_problems(error: ValidationError) -> list[Problem]:
    """For ``X | None`` and a value that is not null: X's own problems, saying that null
    is allowed too. ``best_match`` would pick the null alternative ("closest: must be
    null") and steer the model to send null, which is seldom what it meant."""
    members: Any = error.validator_value
    if error.instance is None or not isinstance(members, list) or len(members) != 2:
        return []
    if _NULL_ONLY not in members or not error.context:
        return []
    other = 1 - members.index(_NULL_ONLY)
    here = path_text(list(error.absolute_path))
    problems: list[Problem] = []
    for sub in error.context:
        if sub.relative_schema_path and sub.relative_schema_path[0] == other:
            problems.extend(_problems_of(sub))
    # Only a problem with the value itself may say "or null": inside an array or object,
    # null is no option for the one item that is wrong.
    return [_or_null(p) if p.path == here else p for p in problems]


def _or_null(problem: Problem) -> Problem:
    head, sep, tail = problem.message.partition("; got ")
    message = f"{head}, or null{sep}{tail}" if sep else f"{problem.message} (or null)"
    allowed = None if problem.allowed is None else (*problem.allowed, None)
    return replace(problem, message=message, allowed=allowed)


def _enum(error: ValidationError, parts: list[str | int], path: str) -> list[Problem]:
    rule: Any = error.validator_value
    allowed = tuple(rule)
    shown = ", ".join(_show(a) for a in allowed)
    return [
        Problem(
            path=path,
            kind="not_in_enum",
            message=f"must be one of {shown}; got {_show(error.instance)}",
            allowed=allowed,
        )
    ]


def _const(error: ValidationError, parts: list[str | int], path: str) -> list[Problem]:
    rule = error.validator_value
    return [
        Problem(
            path=path,
            kind="not_in_enum",
            message=f"must be exactly {_show(rule)}; got {_show(error.instance)}",
            allowed=(rule,),
        )
    ]


def _format(error: ValidationError, parts: list[str | int], path: str) -> list[Problem]:
    fmt = str(error.validator_value)
    hint = FORMAT_HINTS.get(fmt, f"a valid {fmt}")
    message = f"must be {hint}; got {_show(error.instance)}"
    return [Problem(path=path, kind="bad_format", message=message)]


def _range(error: ValidationError, parts: list[str | int], path: str) -> list[Problem]:
    word = _RANGE_WORDS[str(error.validator)]
    message = f"must be {word} {_show(error.validator_value)}; got {_show(error.instance)}"
    return [Problem(path=path, kind="out_of_range", message=message)]


def _multiple(error: ValidationError, parts: list[str | int], path: str) -> list[Problem]:
    message = f"must be a multiple of {_show(error.validator_value)}; got {_show(error.instance)}"
    return [Problem(path=path, kind="out_of_range", message=message)]


def _length(error: ValidationError, parts: list[str | int], path: str) -> list[Problem]:
    kind, word, unit = _LENGTH_KEYWORDS[str(error.validator)]
    value = error.instance
    size = len(value) if isinstance(value, str | list | dict) else 0
    message = f"must have {word} {error.validator_value} {unit}; it has {size}"
    return [Problem(path=path, kind=kind, message=message)]


def _pattern(error: ValidationError, parts: list[str | int], path: str) -> list[Problem]:
    message = f"must match the pattern {error.validator_value!r}; got {_show(error.instance)}"
    return [Problem(path=path, kind="pattern_mismatch", message=message)]


def _unique(error: ValidationError, parts: list[str | int], path: str) -> list[Problem]:
    return [Problem(path=path, kind="not_unique", message="must not repeat an item")]


_READERS: dict[str, _Reader] = {
    "required": _required,
    "additionalProperties": _unexpected,
    "unevaluatedProperties": _unexpected,
    "type": _wrong_type,
    "anyOf": _alternatives,
    "oneOf": _alternatives,
    "enum": _enum,
    "const": _const,
    "format": _format,
    **dict.fromkeys(_RANGE_WORDS, _range),
    "multipleOf": _multiple,
    **dict.fromkeys(_LENGTH_KEYWORDS, _length),
    "pattern": _pattern,
    "uniqueItems": _unique,
}
"""The keyword table: each JSON Schema keyword the model is told about in its own words,
with its reader; any other keyword (``not``, ``if``/``then``, ``dependentRequired``...)
gets ``jsonschema``'s message as a ``constraint`` problem."""


def _alternatives_problem(error: ValidationError, path: str) -> Problem:
    from jsonschema.exceptions import best_match

    if error.validator == "oneOf" and not error.context:
        return Problem(
            path=path,
            kind="no_matching_alternative",
            message=f"matches more than one of the allowed forms; got {_show(error.instance)}",
        )
    closest = best_match(error.context) if error.context else None
    detail = ""
    if closest is not None:
        sub = _problems_of(closest)
        if sub:
            detail = f" (closest: {sub[0].path} {sub[0].message})"
    return Problem(
        path=path,
        kind="no_matching_alternative",
        message=f"does not match any of the allowed forms; got {_show(error.instance)}{detail}",
    )


def _set_at(root: Any, parts: Sequence[str | int], value: Any) -> None:
    target = root
    for part in parts[:-1]:
        target = target[part]
    target[parts[-1]] = value


class ArgumentValidator:
    """One tool's compiled schema: validates argument objects, coercing narrowly.

    Compiling is the costly step; do it once per tool and reuse the object (it holds no
    per-call state, so it may be shared between threads).
    """

    __slots__ = ("_validator", "schema")

    def __init__(self, schema: dict[str, Any]) -> None:
        """Check and compile ``schema``.

        Args:
            schema: A JSON Schema for the arguments object (Draft 2020-12 unless its
                ``$schema`` says otherwise).

        Raises:
            UsageError: the schema itself is not a valid JSON Schema, or it is over a
                budget of :mod:`.schema_guard` (size, depth, a pattern RE2 cannot run, a
                reference outside itself or one that does not resolve).
        """
        cls = check_schema(schema)
        self.schema = schema
        """The schema, as given."""
        self._validator: Validator = _exact_integers(cls)(schema, format_checker=format_checker())

    def validate(
        self, args: dict[str, Any]
    ) -> tuple[dict[str, Any], tuple[Coercion, ...], tuple[Problem, ...]]:
        """Validate ``args``, coercing where the coercion table allows.

        Args:
            args: The arguments object the model sent (not modified).

        Returns:
            ``(arguments, coercions, problems)``: ``problems`` is empty when the call is
            valid, and then ``arguments`` is what the tool should receive (a coerced copy
            when ``coercions`` is not empty, a copy with an integral float accepted by an
            ``enum`` or ``const`` of integers replaced by that member, else ``args``
            itself).
        """
        found: dict[int, tuple[float, int]] = {}
        token = _ENUM_FLOATS.set(found)
        try:
            arguments, coercions, problems = self._validate(args)
        finally:
            _ENUM_FLOATS.reset(token)
        if found and not problems:
            arguments = _with_members(arguments, found)
        return arguments, coercions, problems

    def _errors(self, args: dict[str, Any]) -> list[ValidationError]:
        from referencing.exceptions import Unresolvable

        try:
            return list(self._validator.iter_errors(args))
        except Unresolvable as exc:
            # Registration resolves every reference (schema_guard); this is the belt to
            # it, so jsonschema's own error never leaves a public function.
            raise UsageError(
                f"the tool's schema has a reference that does not resolve: {exc}"
            ) from exc

    def _validate(
        self, args: dict[str, Any]
    ) -> tuple[dict[str, Any], tuple[Coercion, ...], tuple[Problem, ...]]:
        deep = too_deep(args)
        if deep is not None:
            problem = Problem(
                path=path_text(deep),
                kind="too_deep",
                message=(
                    "nests arrays and objects more than "
                    f"{MAX_VALIDATED_ARGUMENTS_DEPTH} levels deep; send a flatter value"
                ),
            )
            return args, (), (problem,)
        errors = self._errors(args)
        if not errors:
            return args, (), ()
        fixes: list[tuple[list[str | int], str, Any]] = []
        for error in errors:
            value = error.instance
            if not isinstance(value, str) or not error.absolute_path:
                continue
            wanted = tuple(t for t in _wanted_types(error) if t in COERCIBLE_TYPES)
            ok, coerced = coerce_string(value, wanted) if wanted else (False, None)
            if ok:
                fixes.append((list(error.absolute_path), value, coerced))
        if fixes:
            fixed = copy.deepcopy(args)
            for parts, _, coerced in fixes:
                _set_at(fixed, parts, coerced)
            # Validate the coerced copy from the start: a coerced value must still meet
            # every other rule (range, enum) at its place.
            errors = self._errors(fixed)
            if not errors:
                coercions = tuple(
                    Coercion(path=path_text(parts), original=original, value=coerced)
                    for parts, original, coerced in fixes
                )
                return fixed, coercions, ()
        return args, (), _collect(errors)


_ENUM_FLOATS: ContextVar[dict[int, tuple[float, int]] | None] = ContextVar(
    "_ENUM_FLOATS", default=None
)
"""During one :meth:`ArgumentValidator.validate`: the floats of the arguments that an
``enum`` or ``const`` accepted as equal to an ``int`` member, by ``id`` (with the float,
kept alive so the id stays its own), and that member. Per call and per thread, while the
compiled validator is shared."""


def _narrowing(check: Callable[..., Iterator[ValidationError]], many: bool) -> Any:
    """The ``enum`` (``many``) or ``const`` keyword ``check`` that also records an
    integral float it accepted as an ``int`` member in :data:`_ENUM_FLOATS`.

    ``Literal[1, 2]`` given ``1.0``: JSON Schema compares numbers by value, so ``1.0``
    is the member ``1``, and the handler must get the member, as an ``int`` parameter
    gets ``125`` for ``125.0`` (the decoder's ``_to_int``). Only the keyword itself knows
    that a value was matched against its members, wherever it sits (``anyOf``, ``items``,
    ``$ref``), so it records, and the validator replaces after a valid verdict.
    """

    def narrowing(validator: Any, expected: Any, instance: Any, schema: Any) -> Any:
        failed = False
        for error in check(validator, expected, instance, schema):
            failed = True
            yield error
        found = _ENUM_FLOATS.get()
        if failed or found is None or type(instance) is not float:
            return
        for member in expected if many and isinstance(expected, list) else (expected,):
            if type(member) is int and member == instance:
                found[id(instance)] = (instance, member)
                return

    return narrowing


def _with_members(node: Any, found: dict[int, tuple[float, int]]) -> Any:
    """``node`` with each float recorded in ``found`` replaced by its member: copies
    where something changes, the caller's objects untouched. JSON Schema has one
    number, so every keyword that accepted ``1.0`` accepts ``1``: the result stays
    valid. Recursive, within the depth :func:`too_deep` already allowed."""
    if type(node) is float:
        hit = found.get(id(node))
        return hit[1] if hit is not None and hit[0] is node else node
    if type(node) is dict:
        items = {key: _with_members(value, found) for key, value in node.items()}
        return node if all(items[k] is v for k, v in node.items()) else items
    if type(node) is list:
        values = [_with_members(value, found) for value in node]
        return node if all(a is b for a, b in zip(values, node, strict=True)) else values
    return node


EXACT_FLOAT_INTEGERS = 2**53
"""Below this magnitude every integral float is one integer exactly; past it a float
stands for several (``9007199254740993.0`` parses as ``2**53``), so an ``integer``
parameter refuses it rather than hand the tool an integer the model did not write."""

_EXACT_CLASSES: dict[type, type] = {}


def _exact_integers(cls: Any) -> Any:
    """``cls`` with an ``integer`` type check that refuses floats past
    :data:`EXACT_FLOAT_INTEGERS`, and ``enum`` and ``const`` that record the integral
    floats they accept as ``int`` members (:func:`_narrowing`); one subclass per draft,
    made once."""
    exact = _EXACT_CLASSES.get(cls)
    if exact is None:
        from jsonschema import validators

        plain = cls.TYPE_CHECKER

        def is_integer(checker: Any, instance: Any) -> bool:
            if isinstance(instance, float) and not abs(instance) < EXACT_FLOAT_INTEGERS:
                return False
            return bool(plain.is_type(instance, "integer"))

        checker = plain.redefine("integer", is_integer)
        extend: Callable[..., Any] = validators.extend  # jsonschema leaves it unannotated
        keywords = {  # Draft 4 has no const
            name: _narrowing(cls.VALIDATORS[name], many=name == "enum")
            for name in ("enum", "const")
            if name in cls.VALIDATORS
        }
        # Patterns on RE2, never on a backtracking engine (schema_guard).
        keywords.update(re2_keywords(cls))
        exact = _EXACT_CLASSES[cls] = extend(cls, validators=keywords, type_checker=checker)
    return exact


def _collect(errors: Iterable[ValidationError]) -> tuple[Problem, ...]:
    seen: set[tuple[str, str, str]] = set()
    out: list[Problem] = []
    more = 0
    for error in errors:
        for found in _problems_of(error):
            problem = found
            if len(found.message) > MAX_MESSAGE_CHARS:
                problem = replace(found, message=found.message[:MAX_MESSAGE_CHARS] + "...")
            key = (problem.path, problem.kind, problem.message)
            if key in seen:
                continue
            seen.add(key)
            if len(out) < MAX_REPORTED_PROBLEMS:
                out.append(problem)
            else:
                more += 1
    if more:
        out.append(
            Problem(
                path="$",
                kind="more_problems",
                message=f"and {more} more problems like these; fix the ones listed first",
            )
        )
    return tuple(out)


# Last, once the classes exist: they take their face's path (see _faces).
publish(__name__, globals())
