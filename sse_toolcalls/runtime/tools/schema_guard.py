"""Work budgets for a tool's JSON Schema, which may come from a peer (an MCP server).

A schema is checked here before ``jsonschema`` sees it, and its regular expressions run
on a linear-time engine afterwards:

- **size and depth**: at most :data:`MAX_SCHEMA_BYTES` of JSON and
  :data:`MAX_SCHEMA_DEPTH` levels of nesting, checked without recursion (the
  metaschema check and validation both recurse per level, and a huge ``enum`` is
  compared member by member on every call);
- **references stay inside the schema**: every ``$ref``, ``$dynamicRef`` and
  ``$recursiveRef`` is a fragment (``#...``) of the schema itself and resolves there.
  Nothing is ever fetched; a schema that refers to another document is refused when it
  is added instead of failing on its first call;
- **no reference cycle on one value**: a chain of ``$ref`` (or ``allOf``, ``anyOf``,
  ``oneOf``, ``not``, ``if``/``then``/``else``) that comes back to where it started
  without stepping into the value (``{"allOf": [{"$ref": "#"}]}``) would make
  validation recurse until ``RecursionError``; it is refused. A reference that steps
  in first (a tree: ``properties.children.items.$ref: "#"``) is fine, bounded by the
  arguments' own depth;
- **patterns run on RE2** (Google's linear-time engine, the ``google-re2`` package):
  every ``pattern`` and ``patternProperties`` key is compiled with it when the schema is
  added, and validation matches with it, so no pattern and no argument can make a match
  backtrack (``^(a+)+$`` against ``"aaaa...!"`` took minutes with Python's ``re``). A
  pattern RE2 cannot run (a backreference, a lookaround) is refused when it is added:
  there is no budgeted fallback to a backtracking engine, because Python's ``re`` cannot
  be stopped mid-match. ``unevaluatedProperties`` beside ``patternProperties`` is
  refused too, since ``jsonschema`` evaluates that pair with ``re`` internally.

Each refusal is a :class:`~sse_toolcalls.errors.UsageError` saying where and why.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urljoin

from ...errors import UsageError
from .jsonpath import path_text

__all__ = [
    "MAX_PATTERN_CHARS",
    "MAX_SCHEMA_PATTERNS",
    "MAX_SCHEMA_BYTES",
    "MAX_SCHEMA_DEPTH",
    "check_schema",
    "check_schema_budget",
    "check_schema_references",
    "compiles",
    "first_pattern",
    "path_text",
    "pattern_search",
    "re2_keywords",
]

MAX_SCHEMA_BYTES = 256 * 1024
"""Bytes of one tool's schema as compact JSON: the largest tool schemas of public MCP
servers are a few tens of KB; a megabyte-sized ``enum`` would be walked on every call
and sent to the model on every request."""

MAX_SCHEMA_DEPTH = 64
"""Deepest nesting of objects and arrays in one tool's schema: real schemas nest a dozen
levels at most; ``jsonschema`` checks and validates recursively, several frames per
level, so a 5,000-level schema from a peer would raise ``RecursionError``."""

MAX_SCHEMA_PATTERNS = 256
"""Patterns (``pattern`` values and ``patternProperties`` keys) in one tool's schema: a
schema has a handful; each key of an object is searched with every
``patternProperties`` pattern of its level, and compiled patterns are cached (4,096
across tools), so thousands in one schema would be recompiled on every call."""

MAX_PATTERN_CHARS = 4096
"""Longest ``pattern`` or ``patternProperties`` key: a field's pattern is a line or two;
RE2's compiled program grows with it, within RE2's own memory budget."""

# Keywords whose value is data, not a schema: their members are never walked as schemas
# (``{"default": {"pattern": "(a)\\1"}}`` holds no pattern to run).
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
_REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")


def check_schema(schema: Any) -> Any:
    """Check a tool's schema whole: the budgets, the metaschema of its draft (2020-12
    unless its ``$schema`` names another), its patterns and its references.

    Returns:
        The ``jsonschema`` validator class of its draft.

    Raises:
        UsageError: any of it fails, saying where.
    """
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import SchemaError

    # Budgets first: the metaschema check recurses per level of the schema.
    check_schema_budget(schema)
    if not isinstance(schema, dict):
        raise UsageError(f"a tool's schema is a JSON object, not {type(schema).__name__}")
    cls = validators.validator_for(schema, default=Draft202012Validator)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        path = path_text(list(exc.absolute_path))
        raise UsageError(f"invalid JSON Schema at {path}: {exc.message}") from exc
    check_schema_references(schema)
    return cls


def check_schema_budget(schema: Any) -> None:
    """Refuse a schema over the size or depth budget.

    Raises:
        UsageError: nested deeper than :data:`MAX_SCHEMA_DEPTH`, larger than
            :data:`MAX_SCHEMA_BYTES` as JSON, or not a JSON value.
    """
    import orjson

    stack: list[tuple[Any, int]] = [(schema, 1)]
    while stack:
        node, level = stack.pop()
        if level > MAX_SCHEMA_DEPTH:
            raise UsageError(f"the schema nests deeper than {MAX_SCHEMA_DEPTH} levels")
        if isinstance(node, dict):
            stack.extend((value, level + 1) for value in node.values())
        elif isinstance(node, list | tuple):
            stack.extend((value, level + 1) for value in node)
    try:
        size = len(orjson.dumps(schema))
    except TypeError as exc:  # orjson.JSONEncodeError is a TypeError
        raise UsageError(f"the schema is not a JSON value: {exc}") from exc
    if size > MAX_SCHEMA_BYTES:
        raise UsageError(
            f"the schema is {size} bytes as JSON, over the {MAX_SCHEMA_BYTES}-byte limit"
        )


def _subschemas(schema: Any, path: str, base: str) -> Iterator[tuple[dict[str, Any], str, str]]:
    """Every schema object inside ``schema`` (itself included) with its path and base
    URI, skipping data keywords. Iterative; depth is already bounded."""
    stack: list[tuple[Any, str, str]] = [(schema, path, base)]
    while stack:
        node, where, uri = stack.pop()
        if isinstance(node, list):
            stack.extend((item, f"{where}[{n}]", uri) for n, item in enumerate(node))
            continue
        if not isinstance(node, dict):
            continue
        ident = node.get("$id")
        if isinstance(ident, str):
            uri = urljoin(uri, ident)
        yield node, where, uri
        for key, value in node.items():
            if key not in _DATA_KEYWORDS and isinstance(value, dict | list):
                stack.append((value, f"{where}.{key}", uri))


def check_schema_references(schema: dict[str, Any]) -> None:
    """Refuse a schema whose patterns RE2 cannot run, or that refers outside itself.

    Call after :func:`check_schema_budget` (the walk trusts the depth) and after the
    metaschema check (keywords have their types), before compiling a validator.

    Raises:
        UsageError: more than :data:`MAX_SCHEMA_PATTERNS` patterns; a pattern over
            :data:`MAX_PATTERN_CHARS` or that RE2 refuses; a
            reference that is not a fragment of this schema, or one that does not
            resolve in it; ``unevaluatedProperties`` together with ``patternProperties``.
    """
    base = "urn:sse-toolcalls:schema"
    unevaluated = patterned = False
    refs: list[tuple[str, str, str, dict[str, Any]]] = []
    patterns = 0
    for node, where, uri in _subschemas(schema, "$", base):
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            patterns += 1
            _compile_checked(pattern, f"{where}.pattern")
        properties = node.get("patternProperties")
        if isinstance(properties, dict):
            patterned = True
            patterns += len(properties)
            for key in properties:
                _compile_checked(str(key), f"{where}.patternProperties")
        if patterns > MAX_SCHEMA_PATTERNS:
            raise UsageError(
                f"the schema has more than {MAX_SCHEMA_PATTERNS} patterns (at {where})"
            )
        unevaluated = unevaluated or "unevaluatedProperties" in node
        for keyword in _REF_KEYWORDS:
            ref = node.get(keyword)
            if isinstance(ref, str):
                refs.append((ref, f"{where}.{keyword}", uri, node))
    if unevaluated and patterned:
        raise UsageError(
            "the schema uses unevaluatedProperties together with patternProperties, "
            "whose evaluation runs patterns on a backtracking engine; use "
            "additionalProperties instead"
        )
    if refs:
        _check_refs(schema, refs, base)


def first_pattern(schema: Any) -> str | None:
    """The path of the first ``pattern`` or ``patternProperties`` in ``schema``, or
    ``None``: for a schema that someone else's code validates with Python's ``re`` (the
    MCP SDK checks a tool's ``outputSchema`` that way), so it must hold none.
    Call after :func:`check_schema_budget`."""
    for node, where, _ in _subschemas(schema, "$", ""):
        if isinstance(node.get("pattern"), str):
            return f"{where}.pattern"
        if isinstance(node.get("patternProperties"), dict):
            return f"{where}.patternProperties"
    return None


def _check_refs(
    schema: dict[str, Any], refs: list[tuple[str, str, str, dict[str, Any]]], base: str
) -> None:
    from jsonschema import Draft202012Validator, validators
    from referencing import Registry
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012, specification_with

    for ref, where, _, _ in refs:
        if not ref.startswith("#"):
            raise UsageError(
                f"the schema refers outside itself at {where} ({ref[:200]!r}): only "
                "references to its own parts (#...) are accepted; nothing is fetched"
            )
    cls = validators.validator_for(schema, default=Draft202012Validator)
    dialect = str(getattr(cls, "META_SCHEMA", {}).get("$schema", ""))
    spec = specification_with(dialect, default=DRAFT202012)
    registry: Registry[Any] = Registry().with_resource(base, spec.create_resource(schema))
    registry = registry.crawl()
    targets: dict[int, list[Any]] = {}
    for ref, where, uri, node in refs:
        try:
            target = registry.resolver(base_uri=uri).lookup(ref).contents
            targets.setdefault(id(node), []).append(target)
        except Unresolvable as exc:
            raise UsageError(
                f"the schema's reference at {where} ({ref[:200]!r}) does not resolve in it"
            ) from exc
        except Exception as exc:  # a malformed pointer: referencing raises plain errors
            raise UsageError(
                f"the schema's reference at {where} ({ref[:200]!r}) is malformed: {exc}"
            ) from exc
    _check_cycles(schema, targets)


_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("not", "if", "then", "else")


def _in_place(node: dict[str, Any], targets: dict[int, list[Any]]) -> list[Any]:
    """The schemas applied to the same value as ``node`` (not to a part of it)."""
    out: list[Any] = list(targets.get(id(node), ()))
    for key in _IN_PLACE_LISTS:
        value = node.get(key)
        if isinstance(value, list):
            out.extend(value)
    out.extend(node[key] for key in _IN_PLACE_ONE if key in node)
    return [each for each in out if isinstance(each, dict)]


def _check_cycles(schema: dict[str, Any], targets: dict[int, list[Any]]) -> None:
    """Refuse a loop of schemas applied to one value (iterative depth-first search)."""
    done: set[int] = set()
    for start, _, _ in _subschemas(schema, "$", ""):
        if id(start) in done:
            continue
        on_path: set[int] = {id(start)}
        stack: list[tuple[dict[str, Any], Iterator[Any]]] = [
            (start, iter(_in_place(start, targets)))
        ]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                on_path.discard(id(node))
                done.add(id(node))
                continue
            if id(child) in on_path:
                raise UsageError(
                    "the schema's references loop back to the same value without "
                    "stepping into it (a $ref cycle), which no value can be checked against"
                )
            if id(child) not in done:
                on_path.add(id(child))
                stack.append((child, iter(_in_place(child, targets))))


def _compile_checked(pattern: str, where: str) -> None:
    if len(pattern) > MAX_PATTERN_CHARS:
        raise UsageError(
            f"the pattern at {where} has {len(pattern)} characters, over the "
            f"{MAX_PATTERN_CHARS}-character limit"
        )
    try:
        _compiled(pattern)
    except Exception as exc:  # re2.error, or a pattern over RE2's memory budget
        raise UsageError(
            f"the pattern at {where} ({pattern[:200]!r}) cannot run on RE2, the linear-time "
            f"engine patterns are matched with (backreferences and lookarounds are not "
            f"supported): {_reason(exc)}"
        ) from exc


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str) -> Any:
    import re2

    options = re2.Options()
    # A refused pattern is our UsageError; RE2 would also log it to standard error.
    options.log_errors = False
    # Only "does it match" is asked: no capture groups to track.
    options.never_capture = True
    # Bytes in, bytes searched (pattern_search): a string from JSON may hold a lone
    # surrogate, which the str interface of re2 cannot encode (UnicodeEncodeError).
    return re2.compile(pattern.encode("utf-8", "surrogatepass"), options)


def compiles(pattern: str) -> bool:
    """Whether RE2 compiles ``pattern`` (within its memory budget)."""
    try:
        _compiled(pattern)
    except Exception:  # re2.error, or over RE2's memory budget
        return False
    return True


def _reason(exc: Exception) -> str:
    """RE2's reason, as text (its error carries bytes)."""
    reason = exc.args[0] if exc.args else exc
    return reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)


def pattern_search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` matches somewhere in ``text`` (JSON Schema's unanchored
    ``pattern`` semantics), on RE2: time linear in ``text``.

    Raises:
        UsageError: RE2 cannot compile ``pattern`` (a schema that was not checked by
            :func:`check_schema_references`).
    """
    try:
        compiled = _compiled(pattern)
    except Exception as exc:
        raise UsageError(
            f"the pattern {pattern[:200]!r} cannot run on RE2: {_reason(exc)}"
        ) from exc
    return compiled.search(text.encode("utf-8", "surrogatepass")) is not None


def _pattern(validator: Any, patrn: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not pattern_search(patrn, instance):
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(
    validator: Any, properties: Any, instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for patrn, subschema in properties.items():
        for key, value in instance.items():
            if pattern_search(patrn, key):
                yield from validator.descend(value, subschema, path=key, schema_path=patrn)


def _extras(instance: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """The keys of ``instance`` that neither ``properties`` nor ``patternProperties``
    of ``schema`` name (``jsonschema``'s ``find_additional_properties``, on RE2)."""
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [
        key
        for key in instance
        if key not in properties and not any(pattern_search(p, key) for p in patterns)
    ]


def _additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    extras = _extras(instance, schema)
    if validator.is_type(extra, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra, path=key)
    elif not extra and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:
            shown = ", ".join(repr(each) for each in extras)
            word = "was" if len(extras) == 1 else "were"
            yield ValidationError(
                f"Additional properties are not allowed ({shown} {word} unexpected)"
            )


def re2_keywords(cls: Any) -> dict[str, Callable[..., Iterator[Any]]]:
    """The keyword functions that replace ``cls``'s own regex keywords (those it has)."""
    ours: dict[str, Callable[..., Iterator[Any]]] = {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    }
    return {name: check for name, check in ours.items() if name in cls.VALIDATORS}
