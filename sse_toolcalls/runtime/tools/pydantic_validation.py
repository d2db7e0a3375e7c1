"""A pydantic fast path for tools built from Python signatures.

**What it is.** For a function tool whose hints are all of the kinds below, the registry
also builds a pydantic ``TypeAdapter`` of a ``TypedDict`` of the arguments (strict, extra
keys forbidden) and tries it first, on the call's JSON text (``validate_json``: strict
mode takes JSON values only as JSON spells them). When it accepts, its result is the
handler's keyword arguments, and the JSON Schema path never runs. When it refuses, it says
nothing: the call goes through the JSON Schema path
(:class:`~sse_toolcalls.runtime.tools.validation.ArgumentValidator`), which stays the one owner of
every problem text and of the narrow coercion (STYLE 17). So the verdicts, the error
results and the coercions are the JSON Schema path's by construction; what must hold is
that the fast path accepts *only* what the JSON Schema path accepts unchanged, with the same
decoded values, and ``tests/runtime/tools/test_pydantic_validation.py`` checks exactly that, over
BFCL's single-turn ground truths and mutations turned into Python signatures.

**The kinds it covers** are those whose strict pydantic rules equal JSON Schema's (with
our coercion left to the slow path): ``str``, ``int``, ``float``, ``bool``, ``None``,
``Any``, ``Literal`` of strings, an ``Enum`` of string values, ``X | None``, ``list[X]``,
``dict[str, X]`` and ``Annotated[X, "text"]`` of these. Anything else keeps the JSON
Schema path alone, because there the two disagree: pydantic takes ``true`` for
``Literal[1]``, a date-time without its offset, a compact ``20250601`` date; ``Union[float,
int]`` picks by exact type where the schema's decoder picks the first member; a tuple or a
set is a JSON array only in lax mode. ``**kwargs`` and a ``ToolContext`` parameter are
handled as the slow path does (the first by leaving the tool to it).

**Why automatic when installed** (the optional ``pydantic`` extra): it changes no answer,
only the time an accepted call takes, so there is nothing for a user to opt into. The same
five-field call to the same signature (``benchmarks/bench_validation.py``), counted in
CPU instructions per call with callgrind (2026-12-01; wall time on the loaded 2-core
machine varied threefold): ``registry.check`` 42,100 with the fast path against 406,900
on the JSON Schema path, 9.7 times fewer (66,000 before its one walk replaced
``too_deep`` and a finiteness walk, and it called the compiled validator directly), the
fast path alone 28,700 (52,700 before), its floor, the compiled
``validate_json`` of its own ``TypeAdapter`` on the JSON bytes, 10,300 (12,900 through
``TypeAdapter.validate_json``). The rest of ``registry.check`` is the registry's (the
lookup and the frozen ``ValidatedCall``). A refused call pays both (the fast path's try,
then the slow path's explanation): refusals are rare and cost a model round trip anyway.
``SSE_TOOLCALLS_NO_PYDANTIC=1`` switches it off (the twin rule, STYLE 18: the
slow path must stay reachable to be compared and debugged).
"""

from __future__ import annotations

import enum
import inspect
import os
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .signature import _signature, context_parameter, function_name
from .validation import MAX_VALIDATED_ARGUMENTS_DEPTH

if TYPE_CHECKING:
    import pydantic

__all__ = ["DISABLE_ENV", "FastValidator", "arguments_adapter", "fast_validator"]

DISABLE_ENV = "SSE_TOOLCALLS_NO_PYDANTIC"
"""Set to a non-empty value to leave every call to the JSON Schema path."""

FastValidator = Callable[[dict[str, Any]], "dict[str, Any] | None"]
"""Returns the handler's keyword arguments for an accepted call, or ``None``: the JSON
Schema path decides (and explains)."""

_SCALARS = (str, int, float, bool)


def _agrees(hint: Any) -> bool:
    """Whether strict pydantic and JSON Schema (and our decoder) agree on ``hint``."""
    if hint is Any or hint is None or hint is type(None) or hint in _SCALARS:
        return True
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return all(isinstance(a, str) for a in args[1:]) and _agrees(args[0])
    if origin is typing.Literal:
        return all(type(a) is str for a in args)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        return len(args) == 2 and len(members) == 1 and _agrees(members[0])
    if origin is list:
        return len(args) == 1 and _agrees(args[0])
    if origin is dict:
        return len(args) == 2 and args[0] is str and _agrees(args[1])
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return all(type(m.value) is str for m in hint) and not issubclass(hint, int)
    return False


def _plain_json(node: dict[str, Any] | list[Any], level: int) -> bool:
    """Whether ``node`` holds only what our JSON parser decodes to, exactly: ``dict`` with
    ``str`` keys, ``list``, ``str``, ``int``, ``bool``, ``None`` and finite ``float``,
    nested at most :data:`MAX_VALIDATED_ARGUMENTS_DEPTH` levels (``node`` at ``level``).

    Anything else is a hand-made ``ToolCall``'s, and orjson would turn it into JSON the
    slow path never sees: a tuple into an array, a ``date`` or an ``Enum`` member into a
    string, a NaN into ``null``; the JSON Schema path refuses the first three and takes
    the NaN, so all of them are its to decide. Recursive, but never deeper than the limit.
    """
    if level > MAX_VALIDATED_ARGUMENTS_DEPTH:
        return False
    if type(node) is dict:
        for key in node:
            if type(key) is not str:
                return False
        items: Any = node.values()
    else:
        items = node
    # Exact types, not isinstance: a subclass (a str-valued Enum, an IntEnum) is no value
    # the parser makes. 9,700 CPU instructions for the benchmark's five-field call, where
    # the two walks this replaced (too_deep, then a finiteness walk) took about 31,000
    # (callgrind, bench_validation.py's call).
    for item in items:
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            continue
        if kind is float:
            if item - item != 0.0:  # NaN and the infinities only
                return False
        elif kind is dict or kind is list:
            if not _plain_json(item, level + 1):
                return False
        else:
            return False
    return True


def arguments_adapter(fn: Callable[..., Any]) -> pydantic.TypeAdapter[dict[str, Any]] | None:
    """The strict pydantic ``TypeAdapter`` of ``fn``'s arguments that the fast path runs
    (``benchmarks/bench_validation.py`` times it bare, as the floor), or ``None`` when
    the fast path cannot be exact or pydantic is not installed."""
    try:
        import pydantic
        import typing_extensions  # pydantic's own dependency: its TypedDict on 3.11
    except ImportError:
        return None
    signature, hints = _signature(fn)
    context = context_parameter(fn)
    fields: dict[str, Any] = {}
    for name, param in signature.parameters.items():
        if name == context:
            continue
        if param.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD and (
            param.kind is not inspect.Parameter.KEYWORD_ONLY
        ):
            return None
        hint = hints.get(name)
        if hint is None or not _agrees(hint):
            return None
        required = param.default is inspect.Parameter.empty
        fields[name] = (
            typing_extensions.Required[hint] if required else typing_extensions.NotRequired[hint]
        )
    # Called through Any: type checkers take TypedDict(...) for a class statement, which
    # must name its fields literally; these come from the signature at run time.
    make_typed_dict: Any = typing_extensions.TypedDict
    arguments: Any = make_typed_dict(
        f"{function_name(fn) or 'tool'}_arguments", fields, total=False
    )
    # Strict: "5" stays a string and 5.0 no int (those are the slow path's to coerce or
    # explain); forbid: an unknown key is the slow path's to name.
    arguments.__pydantic_config__ = pydantic.ConfigDict(strict=True, extra="forbid")
    adapter: pydantic.TypeAdapter[dict[str, Any]] = pydantic.TypeAdapter(arguments)
    return adapter


def fast_validator(fn: Callable[..., Any]) -> FastValidator | None:
    """Build the fast path for a function tool, or return ``None`` when it cannot be
    exact (a hint outside the covered kinds, ``**kwargs``), when pydantic is not
    installed, or when ``SSE_TOOLCALLS_NO_PYDANTIC`` is set.

    The caller has already built the JSON Schema path with
    :func:`~sse_toolcalls.runtime.tools.signature.function_schema` (which raises for a signature
    it cannot describe), so this never raises for a signature that one accepted.
    """
    if os.environ.get(DISABLE_ENV):
        return None
    adapter = arguments_adapter(fn)
    if adapter is None:
        return None
    import pydantic_core

    # The compiled validator itself: TypeAdapter.validate_json only forwards to it, with
    # keyword arguments we never set (2,600 instructions of 12,900 a call, callgrind).
    validate_json = adapter.validator.validate_json
    import orjson

    def validate(args: dict[str, Any]) -> dict[str, Any] | None:
        # The slow path refuses what nests too deep before jsonschema sees it; pydantic
        # would take a deep value for Any, so the same limit comes first. What JSON
        # cannot carry as it is (a NaN, a tuple, a date) is the slow path's too.
        if type(args) is not dict or not _plain_json(args, 1):
            return None
        try:
            checked = validate_json(orjson.dumps(args))
        except (pydantic_core.ValidationError, orjson.JSONEncodeError, ValueError):
            return None
        # The caller's key order (the slow path keeps it too).
        return {key: checked[key] for key in args}

    return validate
