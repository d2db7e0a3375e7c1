"""BFCL's single-turn categories as an outside check of the tools layer (see the package).

BFCL's single-turn categories come with function definitions and, for every question, the
calls a correct model makes. This module turns them into registry tools and concrete calls,
so that (1) every ground-truth call must validate, and (2) systematic mutations of those
calls must be refused with the right problem at the right path.

The data is the ``bfcl-eval`` wheel on PyPI (pure Python; its own dependency list is large,
so fetch it with ``pip download --no-deps bfcl-eval`` and point ``BFCL_DATA_DIR`` at the
folder holding the wheel, at the wheel itself, or at an unpacked ``bfcl_eval/data`` folder;
an installed ``bfcl_eval`` package is found too, without importing it).

BFCL's definitions are JSON-Schema-like with its own type names. They are mapped as BFCL's
own ``GORILLA_TO_OPENAPI`` table does (``dict`` to ``object``, ``float`` to ``number``,
``tuple`` to ``array``...), except ``any``: BFCL maps it to ``string``, here it becomes the
empty schema (any JSON value), which is what it says. Each ground-truth parameter is a list
of acceptable values in which ``""`` means "may be left out"; a concrete call takes the
first acceptable value (recursively inside objects and lists of objects) and leaves a
parameter out when ``""`` comes first.
"""

from __future__ import annotations

import importlib.util
import json
import os
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...calls import Dialect, ToolCall
from ...runtime.errors import InvalidArgumentsError, UnknownToolError
from ...runtime.tools.registry import ToolRegistry
from ...runtime.tools.validation import path_text

__all__ = [
    "CATEGORIES",
    "DATA_ENV",
    "BFCLSource",
    "Entry",
    "EntryReport",
    "KNOWN_DEFECTS",
    "Mutation",
    "check_entry",
    "find_source",
    "gorilla_schema",
    "ground_truth_calls",
    "mutations",
    "registry_for",
]

CATEGORIES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
)
"""The single-turn categories whose calls are Python-style JSON arguments."""

KNOWN_DEFECTS: dict[str, str] = {
    "parallel_multiple_21": "arrays given as Python expression strings (\"data['sales']\")",
    "parallel_multiple_94": "fruit names for an array of integers",
    "live_simple_71-35-0": "an array for a string enum",
    "live_multiple_87-38-4": "'openai' outside the enum (the enum has 'openapi')",
    "live_multiple_152-58-6": "an array for a string enum",
    "live_multiple_552-153-1": "boolean true for the string enum 'True'/'False'/'dontcare'",
    "live_multiple_595-158-1": "integer 2 for the string enum '1'/'2'/'3'/'dontcare'",
    "live_multiple_596-158-2": "integer 1 for the string enum '1'/'2'/'3'/'dontcare'",
    "live_multiple_731-167-2": "boolean true for the string enum 'True'/'False'/'dontcare'",
    "live_multiple_733-167-4": "boolean true for the string enum 'True'/'False'/'dontcare'",
    "live_multiple_735-167-6": "boolean true for the string enum 'True'/'False'/'dontcare'",
    "live_multiple_750-169-5": "'Any' outside the genre enum",
    "live_multiple_756-169-11": "'horror' outside the genre enum (it has 'Horror')",
    "live_multiple_835-178-10": "'Reggaeton' outside the genre enum",
    "live_multiple_871-182-8": "'Play' outside the genre enum",
    "live_multiple_947-197-0": "'5 minutes' outside the duration enum",
    "live_multiple_964-207-0": "the required 'statement' is absent (the answer gives 'question')",
    "live_multiple_1038-265-0": "null for a string",
    "live_multiple_1041-268-0": "null for strings",
    "live_parallel_multiple_2-2-0": "a command outside the enum",
}
"""Entries (bfcl-eval 2026.3.23) whose ground truth breaks its own function definition, so
that a correct validator must refuse it; each with what is wrong."""

DATA_ENV = "BFCL_DATA_DIR"
"""Environment variable naming the wheel, the folder holding it, or the data folder."""

_DATA_PREFIX = "bfcl_eval/data/"

# BFCL's constants/type_mappings.py GORILLA_TO_OPENAPI, except "any" (see module docstring).
_TYPES: dict[str, str | None] = {
    "integer": "integer",
    "number": "number",
    "float": "number",
    "double": "number",
    "string": "string",
    "String": "string",
    "char": "string",
    "boolean": "boolean",
    "bool": "boolean",
    "Boolean": "boolean",
    "array": "array",
    "list": "array",
    "tuple": "array",
    "ArrayList": "array",
    "Array": "array",
    "Queue": "array",
    "Stack": "array",
    "dict": "object",
    "object": "object",
    "HashMap": "object",
    "Hashtable": "object",
    "byte": "integer",
    "short": "integer",
    "long": "integer",
    "Bigint": "integer",
    "any": None,
    "Any": None,
}

# Keys of BFCL definitions that are not JSON Schema keywords and would be misread as one.
_DROPPED_KEYS = {"optional"}


class BFCLSource:
    """Read-only access to BFCL's data files, from a folder or straight from the wheel."""

    def __init__(self, location: Path) -> None:
        """Open ``location``: a ``.whl`` file or a folder holding ``BFCL_v4_*.json``.

        Raises:
            FileNotFoundError: the location holds no BFCL data.
        """
        self.location = location
        """Where the data is read from."""
        self._zip: zipfile.ZipFile | None = None
        if location.is_file() and location.suffix == ".whl":
            self._zip = zipfile.ZipFile(location)
        elif not (location / "BFCL_v4_simple_python.json").is_file():
            raise FileNotFoundError(f"no BFCL data in {location}")

    def read(self, relative: str) -> str:
        """Return the text of a data file, ``relative`` to the data folder."""
        if self._zip is not None:
            return self._zip.read(_DATA_PREFIX + relative).decode("utf-8")
        return (self.location / relative).read_text(encoding="utf-8")

    def entries(self, category: str) -> list[Entry]:
        """Return every question of ``category`` with its functions and ground truth."""
        answers = {
            record["id"]: record["ground_truth"]
            for record in _json_lines(self.read(f"possible_answer/BFCL_v4_{category}.json"))
        }
        return [
            Entry(
                id=record["id"],
                category=category,
                functions=tuple(record["function"]),
                ground_truth=tuple(answers[record["id"]]),
            )
            for record in _json_lines(self.read(f"BFCL_v4_{category}.json"))
        ]


def _json_lines(text: str) -> Iterator[dict[str, Any]]:
    for line in text.splitlines():
        if line.strip():
            yield json.loads(line)


def find_source(explicit: str | os.PathLike[str] | None = None) -> BFCLSource | None:
    """Find BFCL's data: ``explicit``, else ``$BFCL_DATA_DIR``, else an installed package.

    Returns:
        The source, or ``None`` when no data is found.
    """
    candidates: list[Path] = []
    for given in (explicit, os.environ.get(DATA_ENV)):
        if given:
            path = Path(given)
            candidates.append(path)
            if path.is_dir():
                candidates.extend(sorted(path.glob("bfcl_eval-*.whl"), reverse=True))
                candidates.append(path / "bfcl_eval" / "data")
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            package = Path(location)
            # Imported from a wheel on sys.path (the multi-turn replay does that): the
            # package lives inside the zip, so the data is read from the wheel.
            is_wheel = package.parent.suffix == ".whl"
            candidates.append(package.parent if is_wheel else package / "data")
    for candidate in candidates:
        try:
            return BFCLSource(candidate)
        except (FileNotFoundError, zipfile.BadZipFile, OSError):
            continue
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One BFCL question: its functions and the calls a correct answer makes."""

    id: str
    """BFCL's id, such as ``simple_python_0``."""

    category: str
    """The category it comes from."""

    functions: tuple[dict[str, Any], ...]
    """The function definitions offered, as BFCL writes them."""

    ground_truth: tuple[dict[str, dict[str, list[Any]]], ...]
    """One ``{function: {parameter: [acceptable values]}}`` per expected call."""


def gorilla_schema(node: Any) -> Any:
    """Turn a BFCL parameters definition into JSON Schema (Draft 2020-12).

    Returns:
        A new schema; ``node`` is not modified.
    """
    if isinstance(node, list):
        return [gorilla_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED_KEYS:
            continue
        if key == "type" and isinstance(value, str):
            mapped = _TYPES.get(value, value)
            if mapped is not None:
                out["type"] = mapped
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: gorilla_schema(sub) for name, sub in value.items()}
        elif key in {"items", "additionalProperties"}:
            out[key] = gorilla_schema(value)
        else:
            out[key] = value
    return out


def _echo(**kwargs: Any) -> dict[str, Any]:
    return kwargs


def registry_for(entry: Entry) -> ToolRegistry:
    """Return a registry holding ``entry``'s functions (each handler echoes its arguments).

    Raises:
        UsageError: a converted definition is not a valid JSON Schema.
    """
    registry = ToolRegistry()
    for function in entry.functions:
        registry.add_schema_tool(
            function["name"],
            gorilla_schema(function["parameters"]),
            _echo,
            description=function.get("description", ""),
        )
    return registry


_OMIT = object()


def _pick(options: Any, schema: Any, required: bool) -> Any:
    """The value a call sends for a ground-truth option list (``_OMIT`` to leave it out).

    ``""`` means "may be left out", so it is skipped for a required parameter when the
    list offers anything else (BFCL's checker refuses a call missing a required one).
    """
    if not isinstance(options, list) or not options:
        return options
    choices = [o for o in options if o != ""] if required else options
    return _concrete(choices[0] if choices else options[0], schema, required)


def _concrete(value: Any, schema: Any, required: bool) -> Any:
    schema = schema if isinstance(schema, dict) else {}
    if value == "" and not required:
        return _OMIT
    if isinstance(value, dict):
        return _concrete_object(value, schema)
    if isinstance(value, list):
        items = schema.get("items")
        return [_concrete_object(v, items) if isinstance(v, dict) else v for v in value]
    return value


def _concrete_object(options: dict[str, Any], schema: Any) -> dict[str, Any]:
    schema = schema if isinstance(schema, dict) else {}
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    out = {}
    for key, value in options.items():
        picked = _pick(value, properties.get(key), key in required)
        if picked is not _OMIT:
            out[key] = picked
    return out


def ground_truth_calls(entry: Entry, provider: Dialect = "openai_chat") -> list[ToolCall]:
    """Return the calls of ``entry``'s ground truth, one concrete call per expected call.

    Returns:
        Calls with ids ``call_0``, ``call_1``... in ground-truth order.
    """
    schemas = {f["name"]: gorilla_schema(f["parameters"]) for f in entry.functions}
    calls = []
    for index, expected in enumerate(entry.ground_truth):
        ((name, options),) = expected.items()
        args = _concrete_object(options, schemas.get(name))
        calls.append(
            ToolCall(
                name=name,
                args=args,
                provider=provider,
                call_id=f"call_{index}",
                index=index,
                raw_arguments=json.dumps(args),
            )
        )
    return calls


@dataclass(frozen=True, slots=True, kw_only=True)
class Mutation:
    """A ground-truth call broken on purpose, and the problem it must be refused with."""

    what: str
    """What was changed, for reports (``drop required 'base'``)."""

    call: ToolCall
    """The broken call."""

    kind: str
    """The problem kind the refusal must contain."""

    path: str
    """The path that problem must have."""


# A value of each JSON type that no coercion rule can turn into another type.
_WRONG_VALUE: dict[str, Any] = {
    "string": 12345,
    "integer": "not a number",
    "number": "not a number",
    "boolean": "maybe",
    "array": 42,
    "object": 42,
}


def mutations(call: ToolCall, schema: dict[str, Any]) -> Iterator[Mutation]:
    """Yield the systematic mutations of a valid ``call`` to a tool with ``schema``.

    One per present required field (dropped), per present field with a single declared
    type (given a value of a wrong type that no coercion accepts), per present field with
    a string ``enum`` (given a value outside it), and one with an unknown tool name.
    """
    properties: dict[str, Any] = schema.get("properties", {})
    required: Sequence[str] = schema.get("required", [])

    def changed(args: dict[str, Any]) -> ToolCall:
        return ToolCall(
            name=call.name,
            args=args,
            provider=call.provider,
            call_id=call.call_id,
            index=call.index,
            raw_arguments=json.dumps(args),
        )

    for name in required:
        if name in call.args:
            args = {k: v for k, v in call.args.items() if k != name}
            yield Mutation(
                what=f"drop required {name!r}",
                call=changed(args),
                kind="missing_field",
                path=path_text([name]),
            )
    for name, sub in properties.items():
        if name not in call.args or not isinstance(sub, dict):
            continue
        declared = sub.get("type")
        if isinstance(declared, str) and declared in _WRONG_VALUE:
            yield Mutation(
                what=f"wrong type for {name!r}",
                call=changed({**call.args, name: _WRONG_VALUE[declared]}),
                kind="wrong_type",
                path=path_text([name]),
            )
        allowed = sub.get("enum")
        if isinstance(allowed, list) and allowed and all(isinstance(a, str) for a in allowed):
            outside = "__outside_the_enum__"
            yield Mutation(
                what=f"value outside the enum of {name!r}",
                call=changed({**call.args, name: outside}),
                kind="not_in_enum",
                path=path_text([name]),
            )
    yield Mutation(
        what="unknown tool name",
        call=ToolCall(
            name=call.name + "_nonexistent",
            args=call.args,
            provider=call.provider,
            call_id=call.call_id,
            index=call.index,
            raw_arguments=call.raw_arguments,
        ),
        kind="unknown_tool",
        path="$",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class EntryReport:
    """The outcome of checking one BFCL entry."""

    entry_id: str
    """The entry checked."""

    calls: int
    """Ground-truth calls checked."""

    validated: int
    """Ground-truth calls that validated."""

    mutations: int
    """Mutations tried."""

    refused: int
    """Mutations refused with the expected problem at the expected path."""

    failures: tuple[str, ...] = field(default=())
    """A line per ground-truth call refused or mutation not refused as expected."""


def check_entry(entry: Entry) -> EntryReport:
    """Validate ``entry``'s ground truth and refuse its mutations.

    Returns:
        The counts, and a line per failure.
    """
    registry = registry_for(entry)
    failures: list[str] = []
    validated = tried = refused = 0
    calls = ground_truth_calls(entry)
    for call in calls:
        try:
            registry.check(call)
        except (UnknownToolError, InvalidArgumentsError) as exc:
            problems = getattr(exc, "problems", ())
            shown = "; ".join(f"{p.path} {p.message}" for p in problems) or str(exc)
            failures.append(f"{entry.id}: ground truth {call.name} refused: {shown}")
            continue
        validated += 1
        tool = registry.get(call.name)
        assert tool is not None  # check() just found it
        for mutation in mutations(call, tool.parameters):
            tried += 1
            try:
                registry.check(mutation.call)
            except UnknownToolError:
                found = [("unknown_tool", "$")]
            except InvalidArgumentsError as exc:
                found = [(p.kind, p.path) for p in exc.problems]
            else:
                found = []
            if (mutation.kind, mutation.path) in found:
                refused += 1
            else:
                failures.append(f"{entry.id}: {call.name}: {mutation.what} gave {found}")
    return EntryReport(
        entry_id=entry.id,
        calls=len(calls),
        validated=validated,
        mutations=tried,
        refused=refused,
        failures=tuple(failures),
    )
