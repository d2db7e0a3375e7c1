"""JSON Schema from a Python function's signature and docstring, and back to Python values.

:func:`function_schema` reads a function's type hints and docstring and returns its
description and the JSON Schema (Draft 2020-12) of its keyword arguments;
:func:`function_schema` also returns a decoder that turns validated JSON arguments into the
Python values the function's hints ask for (an ``Enum`` member, a ``datetime.date``, a
dataclass or pydantic model instance...).

| Type hint | JSON Schema | The function receives |
|---|---|---|
| ``str``, ``int``, ``float``, ``bool`` | ``string``, ``integer``, ``number``, ``boolean`` | the value (``int`` for an integral ``5.0``; ``float`` for ``5``) |
| ``None`` | ``null`` | ``None`` |
| ``Literal["a", "b"]`` | ``enum`` (with ``type`` when all share one) | the value (the ``int`` member for an integral float) |
| an ``Enum`` subclass | ``enum`` of its values | the member |
| ``X | None``, ``Optional[X]``, ``Union[X, Y]`` | ``anyOf`` | the value of the matching member |
| ``list[X]``, ``Sequence[X]``, ``set[X]``, ``frozenset[X]`` | ``array`` of ``X`` (sets: ``uniqueItems``) | a ``list`` (``set``) |
| ``tuple[X, Y]``, ``tuple[X, ...]`` | ``array`` with ``prefixItems`` / ``items`` | a ``tuple`` |
| ``dict[str, X]``, ``Mapping[str, X]`` | ``object`` with ``additionalProperties: X`` | a ``dict`` |
| ``TypedDict`` | ``object`` with its keys | a ``dict`` |
| a dataclass | ``object`` with its fields (``additionalProperties: false``) | an instance |
| a pydantic model | the model's own JSON Schema (definitions hoisted to ``$defs``) | ``Model.model_validate(value)`` |
| ``datetime.date``, ``datetime.datetime``, ``datetime.time`` | ``string`` with ``format`` ``date``, ``date-time``, ``time`` | the parsed value |
| ``uuid.UUID`` | ``string``, ``format: uuid`` | a ``UUID`` |
| ``Any`` | ``{}`` (any JSON value) | the value |
| ``Annotated[X, "text"]`` | ``X`` with ``description: "text"`` | as for ``X`` |

A parameter with a default is optional, and its default is shown in the schema when it is
JSON. Parameter descriptions come from the docstring's ``Args:``/``Parameters:`` section
(Google style), ``:param name:`` lines (Sphinx style) or a NumPy ``Parameters`` section;
the description of the tool is the docstring's text before its first section. A parameter
without a type hint, ``*args`` and positional-only parameters are refused with
``UsageError``: the model cannot be told what to send. A ``**kwargs`` parameter allows
fields beyond the named ones. A parameter typed
:class:`~sse_toolcalls.runtime.tools.context.ToolContext` is left out of the schema: the executor
fills it (:func:`context_parameter` names it). A ``functools.partial`` is described by
its remaining parameters, with the wrapped function's hints, docstring and name; a bound
method without ``self``.
"""  # noqa: E501

from __future__ import annotations

import ast
import collections.abc
import dataclasses
import datetime
import enum
import functools
import inspect
import itertools
import json
import re
import textwrap
import types
import typing
import uuid
from collections.abc import Callable
from typing import Any

from ..._json import json_type
from ...errors import UsageError

__all__ = [
    "DecodeError",
    "Decoder",
    "context_parameter",
    "function_schema",
    "function_name",
    "parse_docstring",
]


class DecodeError(ValueError):
    """A validated argument was refused by its type's own checks (a pydantic validator,
    say). Internal: the registry turns it into ``InvalidArgumentsError``."""

    def __init__(self, parameter: str, cause: Exception) -> None:
        super().__init__(f"{parameter}: {cause}")
        self.parameter = parameter
        """The argument whose value was refused."""
        self.cause = cause
        """The exception its decoder raised."""


Decoder = Callable[[Any], Any]
"""Turns one validated JSON value into the Python value a type hint asks for."""


def _identity(value: Any) -> Any:
    return value


# --------------------------------------------------------------------------------------
# Docstrings


_SECTION_TITLES = {
    "args",
    "arguments",
    "parameters",
    "params",
    "keyword args",
    "keyword arguments",
    "attributes",
    "returns",
    "return",
    "yields",
    "raises",
    "examples",
    "example",
    "notes",
    "note",
    "see also",
}
_PARAM_TITLES = {
    "args",
    "arguments",
    "parameters",
    "params",
    "keyword args",
    "keyword arguments",
    "attributes",
}
_GOOGLE_ITEM = re.compile(r"\*{0,2}(\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)")
_NUMPY_ITEM = re.compile(r"(\w+)\s*(?::\s*(.*))?")
_SPHINX_PARAM = re.compile(r":param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)")


def _section_title(line: str, following: str | None) -> str | None:
    stripped = line.strip()
    if stripped.endswith(":") and stripped[:-1].strip().lower() in _SECTION_TITLES:
        return stripped[:-1].strip().lower()
    underline = following.strip() if following is not None else ""
    if stripped.lower() in _SECTION_TITLES and underline and set(underline) == {"-"}:
        return stripped.lower()
    return None


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Split a docstring into its description and per-parameter descriptions.

    Args:
        doc: The docstring (``None`` or empty gives empty results).

    Returns:
        ``(description, {parameter: description})``: the description is the text before
        the first section (or ``:param`` line), paragraphs joined by a blank line.
    """
    if not doc:
        return "", {}
    lines = textwrap.dedent(inspect.cleandoc(doc)).splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    numpy = False
    i = 0
    while i < len(lines):
        line = lines[i]
        following = lines[i + 1] if i + 1 < len(lines) else None
        title = _section_title(line, following)
        if title is not None:
            section, current = title, None
            numpy = not line.strip().endswith(":")
            i += 2 if numpy else 1
            continue
        sphinx = _SPHINX_PARAM.match(line.strip())
        if sphinx:
            section, current = "sphinx", sphinx.group(1)
            params[current] = sphinx.group(2).strip()
            i += 1
            continue
        if section is None:
            description.append(line)
        elif section in _PARAM_TITLES or section == "sphinx":
            stripped = line.strip()
            indent = len(line) - len(line.lstrip())
            item = None
            if stripped and section != "sphinx":
                item = (_NUMPY_ITEM if numpy else _GOOGLE_ITEM).fullmatch(stripped)
                # An item starts at the section's own indent; deeper lines continue it.
                if item and current is not None and indent > _item_indent(lines, i, current):
                    item = None
            if item:
                current = item.group(1)
                text = item.group(3) if not numpy else ""
                params[current] = (text or "").strip()
            elif stripped.startswith(":") and section == "sphinx":
                section, current = "other", None
            elif stripped and current is not None:
                params[current] = (params[current] + " " + stripped).strip()
        i += 1
    text = "\n".join(description).strip()
    text = re.sub(r"\n\s*\n+", "\n\n", text)
    return text, params


def _item_indent(lines: list[str], i: int, current: str) -> int:
    """Indent of the line that started item ``current``, looking back from line ``i``."""
    for j in range(i - 1, -1, -1):
        stripped = lines[j].lstrip()
        if stripped.startswith((current, "*" + current)):
            return len(lines[j]) - len(stripped)
    return 0


def _attribute_docstrings(cls: type) -> dict[str, str]:
    """The string literal under each annotated field in the class body, where the source
    is available (our own style for dataclass fields)."""
    try:
        source = textwrap.dedent(inspect.getsource(cls))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    out: dict[str, str] = {}
    for node, nxt in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(nxt, ast.Expr)
            and isinstance(nxt.value, ast.Constant)
            and isinstance(nxt.value.value, str)
        ):
            out[node.target.id] = inspect.cleandoc(nxt.value.value)
    return out


# --------------------------------------------------------------------------------------
# Type hints to schema


class _Builder:
    """Builds schemas for one function; collects pydantic ``$defs`` on the way."""

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.defs: dict[str, Any] = {}
        self._seen: set[type] = set()

    def fail(self, message: str) -> UsageError:
        return UsageError(f"{self.owner}: {message}")

    def build(self, hint: Any) -> tuple[dict[str, Any], Decoder]:
        origin = typing.get_origin(hint)
        args = typing.get_args(hint)
        if hint is Any or hint is object:
            return {}, _identity
        if hint is None or hint is type(None):
            return {"type": "null"}, _identity
        if origin is typing.Annotated:
            schema, decode = self.build(args[0])
            texts = [a for a in args[1:] if isinstance(a, str)]
            if texts:
                schema = {**schema, "description": " ".join(texts)}
            return schema, decode
        if origin is typing.Literal:
            return _literal_schema(args), _identity
        if origin in (typing.Union, types.UnionType):
            return self._union(args)
        if isinstance(hint, type):
            return self._class(hint, origin, args)
        if origin is not None and isinstance(origin, type):
            return self._class(origin, origin, args)
        raise self.fail(f"cannot describe the type {hint!r} as JSON Schema")

    def _union(self, members: tuple[Any, ...]) -> tuple[dict[str, Any], Decoder]:
        built = [(m, *self.build(m)) for m in members]
        schema = {"anyOf": [s for _, s, _ in built]}

        def decode(value: Any) -> Any:
            for member, _, member_decode in built:
                if _matches(member, value):
                    return member_decode(value)
            return value

        return schema, decode

    def _class(
        self, cls: type, origin: Any, args: tuple[Any, ...]
    ) -> tuple[dict[str, Any], Decoder]:
        if issubclass(cls, bool):
            return {"type": "boolean"}, _identity
        if issubclass(cls, enum.Enum):
            values = [m.value for m in cls]
            schema = _literal_schema(tuple(values))
            return schema, cls
        if issubclass(cls, int):
            return {"type": "integer"}, _to_int
        if issubclass(cls, float):
            return {"type": "number"}, float
        if issubclass(cls, str):
            return {"type": "string"}, _identity
        if issubclass(cls, datetime.datetime):
            return {"type": "string", "format": "date-time"}, _parse_datetime
        if issubclass(cls, datetime.date):
            return {"type": "string", "format": "date"}, datetime.date.fromisoformat
        if issubclass(cls, datetime.time):
            return {"type": "string", "format": "time"}, _parse_time
        if issubclass(cls, uuid.UUID):
            return {"type": "string", "format": "uuid"}, uuid.UUID
        if hasattr(cls, "model_json_schema") and hasattr(cls, "model_validate"):
            return self._pydantic(cls)
        if dataclasses.is_dataclass(cls):
            return self._dataclass(cls)
        if typing.is_typeddict(cls):
            return self._typeddict(cls)
        if issubclass(cls, tuple):
            return self._tuple(args)
        if issubclass(cls, collections.abc.Mapping):
            return self._mapping(args)
        if issubclass(cls, collections.abc.Set):
            item, decode_item = self.build(args[0]) if args else ({}, _identity)
            schema = {"type": "array", "items": item, "uniqueItems": True}
            return schema, lambda v: {decode_item(x) for x in v}
        if issubclass(cls, collections.abc.Sequence) and not issubclass(cls, str | bytes):
            item, decode_item = self.build(args[0]) if args else ({}, _identity)
            return {"type": "array", "items": item}, lambda v: [decode_item(x) for x in v]
        raise self.fail(f"cannot describe the type {cls.__qualname__} as JSON Schema")

    def _tuple(self, args: tuple[Any, ...]) -> tuple[dict[str, Any], Decoder]:
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            item, decode_item = self.build(args[0]) if args else ({}, _identity)
            return {"type": "array", "items": item}, lambda v: tuple(decode_item(x) for x in v)
        built = [self.build(a) for a in args]
        schema = {
            "type": "array",
            "prefixItems": [s for s, _ in built],
            "items": False,
            "minItems": len(built),
        }
        return schema, lambda v: tuple(d(x) for (_, d), x in zip(built, v, strict=True))

    def _mapping(self, args: tuple[Any, ...]) -> tuple[dict[str, Any], Decoder]:
        if args and args[0] is not str:
            raise self.fail("a mapping's keys must be str: JSON object keys are strings")
        value, decode_value = self.build(args[1]) if args else ({}, _identity)
        schema = {"type": "object", "additionalProperties": value}
        return schema, lambda v: {k: decode_value(x) for k, x in v.items()}

    def _object(
        self,
        cls: type,
        fields: list[tuple[str, Any, bool, Any]],
        *,
        extra: bool = False,
    ) -> tuple[dict[str, Any], dict[str, Decoder]]:
        """Object schema from ``(name, hint, required, default)`` fields."""
        if cls in self._seen:
            raise self.fail(f"{cls.__qualname__} refers to itself; recursive types are refused")
        self._seen.add(cls)
        _, docs = parse_docstring(cls.__doc__)
        docs = {**docs, **_attribute_docstrings(cls)}
        properties: dict[str, Any] = {}
        decoders: dict[str, Decoder] = {}
        required: list[str] = []
        for name, hint, is_required, default in fields:
            schema, decode = self.build(hint)
            properties[name] = _with_extras(schema, docs.get(name), is_required, default)
            decoders[name] = decode
            if is_required:
                required.append(name)
        self._seen.discard(cls)
        object_schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            object_schema["required"] = required
        if not extra:
            object_schema["additionalProperties"] = False
        doc, _ = parse_docstring(cls.__doc__)
        if doc and not doc.startswith(cls.__name__ + "("):
            object_schema["description"] = doc
        return object_schema, decoders

    def _dataclass(self, cls: type) -> tuple[dict[str, Any], Decoder]:
        hints = typing.get_type_hints(cls, include_extras=True)
        fields = []
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            has_default = (
                f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            )
            default = f.default if f.default is not dataclasses.MISSING else dataclasses.MISSING
            fields.append((f.name, hints[f.name], not has_default, default))
        schema, decoders = self._object(cls, fields)

        def decode(value: Any) -> Any:
            return cls(**{k: decoders[k](v) for k, v in value.items()})

        return schema, decode

    def _typeddict(self, cls: type) -> tuple[dict[str, Any], Decoder]:
        hints = typing.get_type_hints(cls, include_extras=True)
        required_keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset(hints))
        fields = []
        for name, hint in hints.items():
            # Python 3.11 misses NotRequired[...] in string annotations when it computes
            # __required_keys__; the resolved hint still carries the marker.
            marker = typing.get_origin(hint)
            if marker in (typing.Required, typing.NotRequired):
                required = marker is typing.Required
            else:
                required = name in required_keys
            fields.append((name, _strip_required(hint), required, dataclasses.MISSING))
        schema, decoders = self._object(cls, fields)
        return schema, lambda v: {k: decoders[k](x) for k, x in v.items()}

    def _pydantic(self, cls: type) -> tuple[dict[str, Any], Decoder]:
        schema: dict[str, Any] = dict(cls.model_json_schema())  # type: ignore[attr-defined]
        # Pydantic refers to nested models as "#/$defs/Name" from the model's own root;
        # hoisting its $defs to the root of the arguments schema keeps every ref valid.
        for name, definition in schema.pop("$defs", {}).items():
            if name in self.defs and self.defs[name] != definition:
                raise self.fail(f"two different models are both named {name!r}")
            self.defs[name] = definition
        validate: Decoder = cls.model_validate  # type: ignore[attr-defined]
        return schema, validate


def _strip_required(hint: Any) -> Any:
    if typing.get_origin(hint) in (typing.Required, typing.NotRequired):
        return typing.get_args(hint)[0]
    return hint


_SCALAR_TYPES = frozenset(("boolean", "integer", "number", "string"))
"""The JSON types a ``Literal``'s schema names: ``null`` and what JSON cannot hold get an
``enum`` alone."""


def _literal_schema(values: tuple[Any, ...]) -> dict[str, Any]:
    schema: dict[str, Any] = {"enum": list(values)}
    kinds = {json_type(v) for v in values}
    if len(kinds) == 1 and kinds <= _SCALAR_TYPES:
        schema = {"type": kinds.pop(), **schema}
    return schema


def _to_int(value: Any) -> int:
    # Only integral values reach here: the schema refused 2.7, and accepted 5.0 as an integer.
    return int(value)


def _parse_datetime(value: str) -> datetime.datetime:
    # RFC 3339 allows a lower-case "z" and "t"; datetime.fromisoformat on 3.11 takes "Z" only.
    return datetime.datetime.fromisoformat(value.upper())


def _parse_time(value: str) -> datetime.time:
    return datetime.time.fromisoformat(value.upper())


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "null": (type(None),),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "string": (str,),
    "array": (list,),
    "object": (dict,),
}


def _matches(hint: Any, value: Any) -> bool:
    """Whether a validated JSON value could belong to union member ``hint`` (by JSON type)."""
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _matches(typing.get_args(hint)[0], value)
    if hint is Any or hint is object:
        return True
    if hint is None or hint is type(None):
        return value is None
    if origin is typing.Literal:
        return any(value == v and type(value) is type(v) for v in typing.get_args(hint))
    if origin in (typing.Union, types.UnionType):
        return any(_matches(m, value) for m in typing.get_args(hint))
    cls = origin if isinstance(origin, type) else hint
    if not isinstance(cls, type):
        return True
    if issubclass(cls, enum.Enum):
        return any(value == m.value for m in cls)
    if issubclass(cls, bool):
        return isinstance(value, bool)
    if issubclass(cls, int):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if issubclass(cls, float):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if issubclass(cls, str | datetime.date | datetime.time | uuid.UUID):
        return isinstance(value, str)
    if issubclass(cls, collections.abc.Mapping) or dataclasses.is_dataclass(cls):
        return isinstance(value, dict)
    if hasattr(cls, "model_validate") or typing.is_typeddict(cls):
        return isinstance(value, dict)
    if issubclass(cls, collections.abc.Sequence | collections.abc.Set):
        return isinstance(value, list)
    return True


def _with_extras(
    schema: dict[str, Any], description: str | None, required: bool, default: Any
) -> dict[str, Any]:
    out = dict(schema)
    if description:
        out.setdefault("description", description)
    if not required and default is not dataclasses.MISSING and default is not None:
        try:
            json.dumps(default)
        except (TypeError, ValueError):
            pass
        else:
            out["default"] = default.value if isinstance(default, enum.Enum) else default
    return out


# --------------------------------------------------------------------------------------
# Functions


def function_schema(
    fn: Callable[..., Any],
) -> tuple[str, dict[str, Any], Callable[[dict[str, Any]], dict[str, Any]]]:
    """Describe ``fn``'s keyword arguments as JSON Schema.

    Args:
        fn: A function (or any callable with a signature), sync or async.

    Returns:
        ``(description, parameters, decode)``: the docstring's description, the object
        schema of the arguments, and a function turning validated JSON arguments into the
        keyword arguments ``fn`` expects.

    Raises:
        UsageError: a parameter has no type hint, a type cannot be described as JSON
            Schema, or a parameter cannot be passed by keyword.
    """
    inner = _unwrap_partial(fn)
    owner = getattr(inner, "__qualname__", repr(fn))
    signature, hints = _signature(fn)
    context = context_parameter(fn)
    description, docs = parse_docstring(inspect.getdoc(inner))
    builder = _Builder(owner)
    properties: dict[str, Any] = {}
    decoders: dict[str, Decoder] = {}
    required: list[str] = []
    extra = False
    for name, param in signature.parameters.items():
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            extra = True
            continue
        if name == context:
            continue  # the executor's to fill, not the model's
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.POSITIONAL_ONLY):
            raise builder.fail(f"parameter {name!r} cannot be passed by keyword")
        if name not in hints:
            raise builder.fail(f"parameter {name!r} has no type hint")
        schema, decode = builder.build(hints[name])
        is_required = param.default is inspect.Parameter.empty
        default = dataclasses.MISSING if is_required else param.default
        properties[name] = _with_extras(schema, docs.get(name), is_required, default)
        decoders[name] = decode
        if is_required:
            required.append(name)
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    if not extra:
        parameters["additionalProperties"] = False
    if builder.defs:
        parameters["$defs"] = builder.defs

    def decode_arguments(args: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in args.items():
            decoder = decoders.get(key)
            try:
                out[key] = value if decoder is None else decoder(value)
            except Exception as exc:
                raise DecodeError(key, exc) from exc
        return out

    return description, parameters, decode_arguments


def _unwrap_partial(fn: Callable[..., Any]) -> Callable[..., Any]:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn


def _signature(fn: Callable[..., Any]) -> tuple[inspect.Signature, dict[str, Any]]:
    inner = _unwrap_partial(fn)
    owner = getattr(inner, "__qualname__", repr(fn))
    try:
        # A partial's own signature (its bound arguments gone), its function's hints:
        # typing cannot read hints off a partial object.
        return inspect.signature(fn), typing.get_type_hints(inner, include_extras=True)
    except (TypeError, ValueError, NameError) as exc:
        raise UsageError(f"{owner}: cannot read the signature: {exc}") from exc


def function_name(fn: Callable[..., Any]) -> str:
    """The tool name of ``fn``: its ``__name__`` (a partial's: its function's), or ``""``."""
    return str(getattr(_unwrap_partial(fn), "__name__", ""))


def context_parameter(fn: Callable[..., Any]) -> str | None:
    """The name of ``fn``'s parameter typed ``ToolContext`` (or ``ToolContext[...]``),
    or ``None``.

    Raises:
        UsageError: the signature cannot be read, or more than one parameter is a
            ``ToolContext``.
    """
    from .context import ToolContext

    signature, hints = _signature(fn)
    found = [
        name
        for name in signature.parameters
        if name in hints and _is_context(_strip_annotated(hints[name]), ToolContext)
    ]
    if len(found) > 1:
        raise UsageError(f"{function_name(fn)}: one ToolContext parameter at most, not {found}")
    return found[0] if found else None


def _strip_annotated(hint: Any) -> Any:
    return typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint


def _is_context(hint: Any, context: type) -> bool:
    return hint is context or typing.get_origin(hint) is context
