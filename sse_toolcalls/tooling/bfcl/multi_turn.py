"""BFCL's multi-turn categories replayed through :class:`~sse_toolcalls.runtime.Agent`.

For every case of ``multi_turn_base``, ``multi_turn_miss_func``, ``multi_turn_miss_param``
and ``multi_turn_long_context``:

- a registry is built from BFCL's function docs (``multi_turn_func_doc``), each tool bound
  to a live instance of its BFCL class (``GorillaFileSystem``, ``TradingBot``...) loaded with
  the case's ``initial_config`` the way BFCL loads it;
- each user turn's ground truth (Python call strings such as ``sort('report.pdf')``) is
  parsed with :mod:`ast`, positional arguments named from the method's signature, and
  scripted into the simulator as the model's calls, then a final text;
- the conversation is driven through ``Agent.run`` (a request id per user turn) in one
  dialect, over loopback;
- after every turn the live instances are compared with BFCL's own reference execution
  (``execute_multi_turn_func_call`` on the ground truth) by BFCL's own ``state_checker``,
  and the tool results the provider received on the wire are compared with the reference
  results. BFCL checks the state only after turns whose ground truth is not empty; here
  every turn is checked, and a turn whose ground truth is empty (``miss_*``) must also make
  no call and leave every instance exactly as it was.
- ``miss_func``: the held-out functions are left out of the registry until their turn,
  where they are added and the user message is BFCL's own
  ``DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC``, as BFCL's inference loop does; the
  request of that turn must declare them, the requests before it must not.

With ``faults=True`` a fault of the simulator is put in the middle of each turn (in
rotation): the stream cut inside the arguments, an error event after the first call is
complete, a 429 before the turn, the body one byte per write, and a lost confirmation (the
request carrying the results fails until the fallback; the user's request is re-submitted
under the same request id and the model re-issues every call under a new id). The final
state must still equal the reference: no write ran twice, none was lost.

Every BFCL tool is declared ``effect="write"`` and ``parallel_safe=False``: the classes
keep session state that even their "reads" move (``cd`` changes the current directory,
``login`` the session), the docs say nothing of effects, and BFCL runs a step's calls in
order. So every call goes through the idempotency ledger, and a turn's calls run in order.

BFCL's code is imported from the wheel itself (the wheel is put on ``sys.path``; Python
imports from a zip), with the standard library alone: ``multi_turn_checker``,
``multi_turn_utils`` and ``constants`` import nothing else, and of the classes only
``MathAPI`` needs ``mpmath``. The multi-turn classes used here never import BFCL's other
dependencies (the memory and web-search classes, which do, are not part of these
categories). Nothing is imported before a replay starts.

A *defect* is a ground-truth call that breaks its own function doc (a value of the wrong
type, an unknown parameter, a call to a function not offered at that turn, an argument
that is not a literal): a correct validator must refuse it, so the case cannot end in the
reference state. Defects are listed with the reason; their cases are replayed and
reported, but not counted as failures.
"""

from __future__ import annotations

import ast
import contextlib
import copy
import importlib
import inspect
import itertools
import json
import math
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import anyio
import anyio.lowlevel

from ...calls import DIALECTS, Dialect, ToolCall
from ...conversation import Message, UserMessage
from ...errors import UsageError
from ...messages import as_dialect
from ...parser import ToolCallParser
from ...runtime.agent import Agent, AgentReply
from ...runtime.clients import client_for
from ...runtime.errors import InvalidArgumentsError, UnknownToolError
from ...runtime.ledgers.memory import InMemoryLedger
from ...runtime.retry import RetryPolicy
from ...runtime.tools.registry import ToolRegistry
from ..simulator import (
    CutInArguments,
    ErrorEvent,
    HTTPError,
    OneByteAtATime,
    ReceivedResult,
    Script,
    ScriptedCall,
    Simulator,
    Turn,
    encode_turn,
)
from .single_turn import BFCLSource, gorilla_schema

__all__ = [
    "FAULTS",
    "MULTI_TURN_CATEGORIES",
    "BFCLCode",
    "CaseReport",
    "MultiTurnCase",
    "ParsedCall",
    "RegistryCache",
    "load_code",
    "multi_turn_cases",
    "parse_call",
    "replay",
    "replay_case",
    "same_result",
    "sample",
]

MULTI_TURN_CATEGORIES = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
"""The multi-turn categories replayed (BFCL's ``multi_turn`` group)."""

FAULTS = (
    "cut_in_arguments",
    "error_event",
    "rate_limited",
    "one_byte_at_a_time",
    "lost_confirmation",
)
"""The faults put in the middle of turns with ``faults=True``, in rotation."""

RETRY_ATTEMPTS = 3
"""Requests per model turn (the first and two retries): the lost confirmation fails all of
them, so the user sees the fallback and re-submits."""

TURN_TIMEOUT_S = 120.0
"""Seconds one user turn may take before the replay calls it a hang: a long-context turn
of 34 calls one byte per write takes a few seconds on a loaded machine."""

_CODE_PACKAGE = "bfcl_eval.eval_checker.multi_turn_eval"
_FINAL_TEXT = "Done."
_NOTHING_TO_DO = "I cannot do that with the functions I have."


# --------------------------------------------------------------------------------------
# BFCL's code and data.


@dataclass(frozen=True, slots=True, kw_only=True)
class BFCLCode:
    """The parts of BFCL's own code the replay uses, imported from the wheel."""

    execute: Callable[..., tuple[list[str], dict[str, Any]]]
    """``multi_turn_utils.execute_multi_turn_func_call``: BFCL's reference execution."""

    state_checker: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]
    """``multi_turn_checker.state_checker``: BFCL's comparison of instance states."""

    utils: ModuleType
    """``multi_turn_utils`` itself: it keeps its instances in its module globals."""

    class_modules: dict[str, str]
    """BFCL's ``CLASS_FILE_PATH_MAPPING``: class name to module."""

    doc_files: dict[str, str]
    """BFCL's ``MULTI_TURN_FUNC_DOC_FILE_MAPPING``: class name to its func doc file."""

    stateless: frozenset[str]
    """BFCL's ``STATELESS_CLASSES`` (loaded without a configuration)."""

    added_functions_prompt: str
    """BFCL's ``DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC``."""

    def api_class(self, name: str) -> type[Any]:
        """Return BFCL's class ``name`` (``GorillaFileSystem``...), importing its module.

        Raises:
            UsageError: BFCL has no such class, or its module cannot be imported (MathAPI
                needs ``mpmath``).
        """
        module_name = self.class_modules.get(name)
        if module_name is None:
            raise UsageError(f"BFCL has no API class {name!r}")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise UsageError(f"cannot import BFCL's {name} ({exc})") from exc
        cls: type[Any] = getattr(module, name)
        return cls


def load_code(source: BFCLSource) -> BFCLCode:
    """Import BFCL's multi-turn checker and executor from ``source`` (stdlib only).

    A wheel is put on ``sys.path`` (zip import); an unpacked ``bfcl_eval/data`` folder puts
    the folder above ``bfcl_eval``; an installed ``bfcl_eval`` is used as it is.

    Raises:
        UsageError: the source holds BFCL's data but not its code.
    """
    location = source.location
    root = location if location.suffix == ".whl" else location.parent.parent
    if (root / "bfcl_eval").is_dir() or location.suffix == ".whl":
        entry = str(root)
        if entry not in sys.path:
            # After the project's own paths: the wheel only brings bfcl_eval.
            sys.path.append(entry)
    try:
        checker = importlib.import_module(f"{_CODE_PACKAGE}.multi_turn_checker")
        utils = importlib.import_module(f"{_CODE_PACKAGE}.multi_turn_utils")
        backend = importlib.import_module("bfcl_eval.constants.executable_backend_config")
        prompts = importlib.import_module("bfcl_eval.constants.default_prompts")
    except ImportError as exc:
        raise UsageError(
            f"BFCL's multi-turn code is not importable from {location}: {exc}"
        ) from exc
    return BFCLCode(
        execute=utils.execute_multi_turn_func_call,
        state_checker=checker.state_checker,
        utils=utils,
        class_modules=dict(backend.CLASS_FILE_PATH_MAPPING),
        doc_files=dict(backend.MULTI_TURN_FUNC_DOC_FILE_MAPPING),
        stateless=frozenset(backend.STATELESS_CLASSES),
        added_functions_prompt=prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class MultiTurnCase:
    """One BFCL multi-turn case: the user turns, the initial state, the ground truth."""

    id: str
    """BFCL's id, such as ``multi_turn_base_0``."""

    category: str
    """The category it comes from."""

    questions: tuple[tuple[dict[str, Any], ...], ...]
    """Per user turn, its messages (empty for a ``miss_func`` turn that adds functions)."""

    initial_config: dict[str, Any]
    """Per class name, the state its instance is loaded with."""

    involved_classes: tuple[str, ...]
    """The API classes the case uses."""

    ground_truth: tuple[tuple[str, ...], ...]
    """Per user turn, the calls a correct model makes, as Python call strings."""

    missed_function: dict[int, tuple[str, ...]] = field(default_factory=dict)
    """``miss_func`` only: per turn, the functions held out until that turn."""

    functions: tuple[dict[str, Any], ...] = ()
    """Every function doc of the involved classes, as BFCL writes them."""

    @property
    def long_context(self) -> bool:
        """Whether BFCL loads the classes with their long-context padding."""
        return "long_context" in self.category


def multi_turn_cases(source: BFCLSource, category: str, code: BFCLCode) -> list[MultiTurnCase]:
    """Return every case of ``category`` with its function docs, in BFCL's order."""
    answers = {
        record["id"]: record["ground_truth"]
        for record in _json_lines(source.read(f"possible_answer/BFCL_v4_{category}.json"))
    }
    docs: dict[str, list[dict[str, Any]]] = {}
    cases = []
    for record in _json_lines(source.read(f"BFCL_v4_{category}.json")):
        functions: list[dict[str, Any]] = []
        for name in record["involved_classes"]:
            if name not in docs:
                docs[name] = list(
                    _json_lines(source.read(f"multi_turn_func_doc/{code.doc_files[name]}"))
                )
            functions.extend(docs[name])
        cases.append(
            MultiTurnCase(
                id=record["id"],
                category=category,
                questions=tuple(tuple(turn) for turn in record["question"]),
                initial_config=record.get("initial_config", {}),
                involved_classes=tuple(record["involved_classes"]),
                ground_truth=tuple(tuple(turn) for turn in answers[record["id"]]),
                missed_function={
                    int(k): tuple(v) for k, v in record.get("missed_function", {}).items()
                },
                functions=tuple(functions),
            )
        )
    return cases


def _json_lines(text: str) -> Iterable[dict[str, Any]]:
    for line in text.splitlines():
        if line.strip():
            yield json.loads(line)


def sample(cases: Sequence[MultiTurnCase], count: int | None) -> list[MultiTurnCase]:
    """``count`` cases spread evenly over ``cases`` (every case when ``count`` is None)."""
    if count is None or count >= len(cases):
        return list(cases)
    step = math.ceil(len(cases) / max(count, 1))
    return list(cases[::step])[:count]


# --------------------------------------------------------------------------------------
# Ground-truth call strings.


@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedCall:
    """A ground-truth call string as a name and JSON arguments."""

    name: str
    """The function called."""

    args: dict[str, Any]
    """Its arguments, positional ones named from the signature."""


class _Defect(Exception):
    """A ground-truth call that cannot be sent as it is written (the message says why)."""


def parse_call(text: str, signature: Callable[[str], inspect.Signature | None]) -> ParsedCall:
    """Parse a ground-truth call such as ``mv(source='a', destination='b')``.

    Positional arguments are named from ``signature(name)`` (the bound method's signature);
    every argument must be a Python literal.

    Raises:
        UsageError: the text is not one call of a named function with literal arguments,
            or has more positional arguments than the signature.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise UsageError(f"not a Python call: {text!r} ({exc.msg})") from exc
    node = tree.body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise UsageError(f"not a call of a named function: {text!r}")
    name = node.func.id
    args: dict[str, Any] = {}
    if node.args:
        found = signature(name)
        if found is None:
            raise UsageError(f"{text!r}: no signature names the positional arguments of {name}")
        names = [
            p.name
            for p in found.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        if len(node.args) > len(names):
            raise UsageError(f"{text!r}: {len(node.args)} positional arguments for {names}")
        for param, value in zip(names, node.args, strict=False):
            args[param] = _literal(value, text)
    for keyword in node.keywords:
        if keyword.arg is None:
            raise UsageError(f"{text!r}: ** arguments are not literals")
        args[keyword.arg] = _literal(keyword.value, text)
    return ParsedCall(name=name, args=args)


def _literal(node: ast.expr, text: str) -> Any:
    try:
        value = ast.literal_eval(node)
    except ValueError as exc:
        raise UsageError(f"{text!r}: {ast.unparse(node)} is not a literal") from exc
    return _jsonable(value)


def _jsonable(value: Any) -> Any:
    # What the model can send is JSON: a tuple arrives as an array.
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


# --------------------------------------------------------------------------------------
# The registry, bound to live instances.


class _Binding:
    """The methods a cached registry's handlers call: the current case's instances."""

    def __init__(self) -> None:
        self.methods: dict[str, Callable[..., Any]] = {}

    def handler(self, name: str) -> Callable[..., Any]:
        def handler(**kwargs: Any) -> Any:
            return self.methods[name](**kwargs)

        handler.__name__ = name
        return handler


class RegistryCache:
    """Registries by the tools they hold, built once and re-bound for every case.

    Compiling a tool's JSON Schema is the costly part (about 24 ms a tool on the project
    machine, 1.3 s a case with two registries: profiled with ``cProfile`` on ten cases),
    and cases share their classes' docs; so a registry is built once per set of docs and
    its handlers call whichever instances are bound. Replays run one case at a time, so
    one binding per registry is enough.
    """

    def __init__(self) -> None:
        self._built: dict[tuple[str, ...], tuple[ToolRegistry, _Binding]] = {}

    def get(
        self, docs: Sequence[dict[str, Any]], methods: dict[str, Callable[..., Any]]
    ) -> ToolRegistry:
        """The registry of ``docs`` (built on first use), its handlers bound to ``methods``."""
        key = tuple(doc["name"] for doc in docs)
        if key not in self._built:
            binding = _Binding()
            registry = ToolRegistry()
            for doc in docs:
                registry.add_schema_tool(
                    doc["name"],
                    gorilla_schema(doc["parameters"]),
                    binding.handler(doc["name"]),
                    description=doc.get("description", ""),
                    effect="write",
                    parallel_safe=False,
                )
            self._built[key] = (registry, binding)
        registry, binding = self._built[key]
        binding.methods = methods
        return registry


class _World:
    """A case's live API instances, and the registry offered at each turn."""

    def __init__(self, case: MultiTurnCase, code: BFCLCode, registries: RegistryCache) -> None:
        self.instances: dict[str, Any] = {}
        self.methods: dict[str, Callable[..., Any]] = {}
        for name in case.involved_classes:
            instance = code.api_class(name)()
            if name not in code.stateless:
                # As BFCL's executor does: a deep copy, so the case's data stays intact.
                config = copy.deepcopy(case.initial_config.get(name, {}))
                instance._load_scenario(config, long_context=case.long_context)
            self.instances[name] = instance
            for method_name, method in inspect.getmembers(instance, inspect.ismethod):
                if not method_name.startswith("_"):
                    self.methods[method_name] = method
        missing = [doc["name"] for doc in case.functions if doc["name"] not in self.methods]
        if missing:
            raise UsageError(f"{case.id}: BFCL's docs {missing} have no method in their class")
        self._case = case
        self._registries = registries
        self._held_out = {n for names in case.missed_function.values() for n in names}

    def registry(self, turn: int) -> ToolRegistry:
        """The registry offered at ``turn``: the held-out functions from their turn on."""
        added = {n for t, names in self._case.missed_function.items() if t <= turn for n in names}
        docs = [
            d for d in self._case.functions if d["name"] not in self._held_out or d["name"] in added
        ]
        return self._registries.get(docs, self.methods)

    def signature(self, name: str) -> inspect.Signature | None:
        method = self.methods.get(name)
        return None if method is None else inspect.signature(method)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """The public attributes of every instance (what BFCL's checker compares)."""
        return {
            name: copy.deepcopy({k: v for k, v in vars(obj).items() if not k.startswith("_")})
            for name, obj in self.instances.items()
        }


def _defects(case: MultiTurnCase, world: _World) -> tuple[str, ...]:
    """Every ground-truth call of ``case`` that breaks its own docs, with the reason
    (checked against the registry offered at its turn; nothing runs)."""
    found: list[str] = []
    for turn, calls in enumerate(case.ground_truth):
        registry = world.registry(turn)
        for k, text in enumerate(calls):
            where = f"turn {turn} call {k} {text}"
            try:
                parsed = parse_call(text, world.signature)
            except UsageError as exc:
                found.append(f"{where}: {exc}")
                continue
            call = _tool_call(parsed, k)
            try:
                validated = registry.check(call)
            except UnknownToolError:
                found.append(f"{where}: {parsed.name} is not offered at this turn")
                continue
            except InvalidArgumentsError as exc:
                shown = "; ".join(f"{p.path} {p.message}" for p in exc.problems) or str(exc)
                found.append(f"{where}: breaks its doc: {shown}")
                continue
            if validated.kwargs != parsed.args:
                changed = ", ".join(f"{c.path}" for c in validated.coercions) or "arguments"
                found.append(f"{where}: valid only after coercion ({changed})")
    return tuple(found)


def _tool_call(parsed: ParsedCall, index: int) -> ToolCall:
    raw = json.dumps(parsed.args)
    return ToolCall(
        name=parsed.name,
        args=parsed.args,
        provider="openai_chat",
        call_id=f"check_{index}",
        index=index,
        raw_arguments=raw,
    )


# --------------------------------------------------------------------------------------
# Results: the reference's text against what the provider received.


_ERROR_PREFIX = "Error during execution:"

_ERROR_FLAGGED = frozenset({"anthropic", "bedrock_anthropic", "bedrock_converse"})
"""Dialects whose results carry an error flag (``is_error``, Converse's ``status``): an ok
object with an ``"error"`` key is a value there, not an error."""


def _reference_value(text: str, precision: int | None = None) -> Any:
    # BFCL's executor sends a str as it is, a dict as json.dumps, anything else as str().
    with contextlib.suppress(ValueError):
        return _jsonable(json.loads(text))
    try:
        tree = ast.parse(text, mode="eval")
        # A name in a str() is an object JSON cannot hold (long_context pads TradingBot's
        # watchlist with Ellipsis): the library sends any such object as its str, so the
        # name stands for its own text.
        tree = _NamesAsText(precision).visit(tree)
        return _jsonable(ast.literal_eval(tree))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return text


class _NamesAsText(ast.NodeTransformer):
    def __init__(self, precision: int | None) -> None:
        self.precision = precision

    def visit_Name(self, node: ast.Name) -> ast.Constant:
        return ast.copy_location(ast.Constant(value=node.id), node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        # The repr of a number object, such as MathAPI's mpmath ``mpf('2.0')``: the library
        # sends the object's str, so the reference stands for that str too.
        arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            text = arg.value
            if isinstance(node.func, ast.Name) and node.func.id == "mpf":
                text = _mpf_text(text, self.precision)
            return ast.copy_location(ast.Constant(value=text), node)
        return node


def _mpf_text(digits: str, precision: int | None) -> str:
    """The str of BFCL's ``mpf(digits)`` in the mpmath context its call left.

    An mpf's repr carries enough digits to rebuild the number exactly at the precision it
    was made with, and its str rounds it to that precision's decimal digits: MathAPI's
    ``logarithm(..., precision=2)`` makes ``mpf('1.3027')``, whose str (what the library
    sends, the call's context still in force) is ``"1.3"``. So the reference is rebuilt
    and rendered at the precision its own call left (:func:`_reference_turn`), exactly.
    """
    mpmath = sys.modules.get("mpmath")
    if mpmath is None or precision is None:
        return digits
    with mpmath.workprec(precision):
        return str(mpmath.mpf(digits))


@contextlib.contextmanager
def _own_mpmath_context() -> Iterator[list[int | None]]:
    """Run a block in mpmath's context as it was, and put the context back after it;
    yields a list whose item is set to the precision (bits) the block left.

    mpmath's precision is one global of the process: MathAPI's ``logarithm`` sets
    ``mp.dps`` to the call's ``precision`` and leaves it. BFCL's reference execution ran
    in the same process as the live instances, so whatever precision it left stood for
    the live side's later renderings, and one reference call's for the next one's.
    """
    module = sys.modules.get("mpmath")
    saved = module.mp.prec if module is not None else None
    left: list[int | None] = [None]
    try:
        yield left
    finally:
        module = sys.modules.get("mpmath")
        if module is not None:
            left[0] = module.mp.prec
            # mpmath's own default (53 bits) when the block imported it.
            module.mp.prec = saved if saved is not None else 53


def _reference_turn(
    code: BFCLCode, ground_truth: Sequence[str], case: MultiTurnCase, tag: str
) -> tuple[list[str], list[int | None], dict[str, Any]]:
    """BFCL's reference execution of one turn, one call at a time, each in an mpmath
    context of its own (:func:`_own_mpmath_context`): its results, the precision each call
    left, and the instances. BFCL keeps its instances in its module by name (``tag``), so
    the calls one by one are the calls of the turn together."""
    texts: list[str] = []
    precisions: list[int | None] = []
    reference: dict[str, Any] = {}
    for calls in [[c] for c in ground_truth] or [[]]:
        with _own_mpmath_context() as left:
            results, reference = code.execute(
                calls,
                case.initial_config,
                list(case.involved_classes),
                tag,
                case.id,
                long_context=case.long_context,
            )
        texts += results
        precisions += [left[0]] * len(results)
    return texts, precisions, reference


def _received_value(dialect: str, result: ReceivedResult) -> tuple[Any, bool]:
    """The value a result carries and whether it is an error, whatever the dialect."""
    content: Any = result.content
    with contextlib.suppress(ValueError):
        content = json.loads(result.content)
    is_error = bool(result.is_error)
    if isinstance(content, dict):
        if dialect == "gemini" and set(content) == {"output"}:
            # A non-object result travels as {"output": <its text>}: parse that text as
            # the other dialects' content is parsed.
            content = content["output"]
            if isinstance(content, str):
                with contextlib.suppress(ValueError):
                    content = json.loads(content)
        elif dialect not in _ERROR_FLAGGED and set(content) == {"error"}:
            is_error, content = True, content["error"]
        if isinstance(content, dict) and content.get("replayed") is True and "result" in content:
            # The ledger's replay wrapper: the recorded answer is inside.
            content = content["result"]
            if isinstance(content, str):
                with contextlib.suppress(ValueError):
                    content = json.loads(content)
    return _jsonable(content), is_error


def same_result(
    reference: str, dialect: str, received: ReceivedResult, *, precision: int | None = None
) -> bool:
    """Whether ``received`` carries what BFCL's reference execution answered.

    A reference that is BFCL's ``Error during execution: ...`` must arrive as an error
    result; any other is compared as a value (BFCL's text parsed as JSON, or as a Python
    literal, else kept as text) with the value the provider received. ``precision``: the
    mpmath precision (bits) the reference call left, in which an ``mpf`` of its text is
    rendered as the library renders it (:func:`_mpf_text`); ``None`` takes its digits.
    """
    value, is_error = _received_value(dialect, received)
    if reference.startswith(_ERROR_PREFIX):
        return is_error or (isinstance(value, dict) and "error" in value)
    return not is_error and value == _reference_value(reference, precision)


# --------------------------------------------------------------------------------------
# One case, one dialect.


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseReport:
    """The outcome of replaying one case in one dialect."""

    case_id: str
    """The case."""

    category: str
    """Its category."""

    dialect: str
    """The dialect it was replayed in."""

    faults: bool
    """Whether faults were injected."""

    turns: int
    """User turns replayed."""

    calls: int
    """Ground-truth calls scripted."""

    identical: bool
    """Whether every turn ended in BFCL's reference state (by BFCL's state checker)."""

    defects: tuple[str, ...] = ()
    """The case's dataset defects, each with the reason (then ``identical`` may fail)."""

    problems: tuple[str, ...] = ()
    """Everything that went wrong: a state difference, a result differing from the
    reference, a call in a turn that should have none, a failed simulator check..."""

    faults_injected: int = 0
    """Faults the simulator injected."""

    seconds: float = 0.0
    """Wall time of the replay."""

    @property
    def passed(self) -> bool:
        """No problem at all, or a listed dataset defect explains them."""
        return not self.problems or bool(self.defects)


_run_counter = itertools.count()


async def _no_wait(seconds: float) -> None:
    # A 429's Retry-After is honoured by the policy's arithmetic, not by real sleeping:
    # the replay checks what runs, not how long it waits.
    await anyio.lowlevel.checkpoint()


def _first_call_completed_after(dialect: Dialect, turn: Turn) -> int:
    """Events of ``turn`` that go out before its first call is complete (never all)."""
    events = encode_turn(dialect, turn)
    parser = ToolCallParser(dialect)
    for n, chunk in enumerate(events, 1):
        if parser.feed(chunk):
            return min(n, len(events) - 1)
    return max(1, len(events) - 1)


def _scripts(
    dialect: Dialect,
    calls: tuple[ScriptedCall, ...],
    again: tuple[ScriptedCall, ...],
    fault: str | None,
) -> list[list[Turn]]:
    """The simulator's turns for one user turn: one list per ``Agent.run``."""
    if not calls:
        final = Turn(text=_NOTHING_TO_DO)
        if fault is None:
            return [[final]]
        return [[Turn(fault=HTTPError(status=429, retry_after="1")), final]]
    step = Turn(text="", calls=calls, fragment_size=16)
    final = Turn(text=_FINAL_TEXT)
    if fault is None:
        return [[step, final]]
    if fault == "cut_in_arguments":
        return [[Turn(calls=calls, fault=CutInArguments()), step, final]]
    if fault == "error_event":
        after = _first_call_completed_after(dialect, step)
        return [
            [Turn(calls=calls, fragment_size=16, fault=ErrorEvent(after_events=after)), step, final]
        ]
    if fault == "rate_limited":
        return [[Turn(fault=HTTPError(status=429, retry_after="1")), step, final]]
    if fault == "one_byte_at_a_time":
        return [[Turn(calls=calls, fragment_size=16, fault=OneByteAtATime()), final]]
    # lost_confirmation: the calls ran, every request carrying their results fails, the
    # user re-submits the same request and the model re-issues the calls under new ids.
    failed = [Turn(fault=HTTPError(status=503)) for _ in range(RETRY_ATTEMPTS)]
    return [[step, *failed], [Turn(text="", calls=again, fragment_size=16), final]]


def _declared(dialect: str, body: Any) -> set[str]:
    """The tool names a request body declares."""
    if not isinstance(body, dict):
        return set()
    tools = body.get("tools") or []
    if dialect == "bedrock_converse":
        # Converse declares its tools in toolConfig.tools[].toolSpec.
        config = body.get("toolConfig")
        listed = config.get("tools") if isinstance(config, dict) else None
        tools = [t.get("toolSpec") for t in listed or () if isinstance(t, dict)]
    names: list[Any] = []
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        if dialect == "gemini":
            names.extend(d.get("name") for d in tool.get("functionDeclarations", ()))
        elif dialect == "openai_chat":
            names.append(tool.get("function", {}).get("name"))
        else:
            names.append(tool.get("name"))
    return {n for n in names if isinstance(n, str)}


@dataclass(frozen=True, slots=True, kw_only=True)
class _Plan:
    """What one user turn sends and what the simulator answers."""

    text: str
    calls: tuple[ScriptedCall, ...]
    runs: list[list[Turn]]
    fault: str | None
    added: tuple[str, ...]
    problems: tuple[str, ...]


def _plan(
    case: MultiTurnCase,
    world: _World,
    code: BFCLCode,
    *,
    turn: int,
    dialect: Dialect,
    faults: bool,
    offset: int,
) -> _Plan:
    added = case.missed_function.get(turn, ())
    if added:
        text = code.added_functions_prompt  # BFCL's own words for the turn
    else:
        text = "\n".join(str(m.get("content", "")) for m in case.questions[turn])
    parsed: list[ParsedCall] = []
    problems: list[str] = []
    for k, call_text in enumerate(case.ground_truth[turn]):
        try:
            parsed.append(parse_call(call_text, world.signature))
        except UsageError as exc:
            problems.append(f"call {k} not sent: {exc}")
    ids = dialect != "gemini"  # Gemini without ids, as older models send them
    calls = tuple(
        ScriptedCall(name=p.name, args=p.args, call_id=f"call_{turn}_{k}" if ids else None)
        for k, p in enumerate(parsed)
    )
    again = tuple(
        ScriptedCall(name=p.name, args=p.args, call_id=f"call_{turn}_{k}_again" if ids else None)
        for k, p in enumerate(parsed)
    )
    fault = FAULTS[(offset + turn) % len(FAULTS)] if faults else None
    return _Plan(
        text=text,
        calls=calls,
        runs=_scripts(dialect, calls, again, fault),
        fault=fault,
        added=added,
        problems=tuple(problems),
    )


async def replay_case(
    case: MultiTurnCase,
    dialect: Dialect,
    sim: Simulator,
    code: BFCLCode,
    *,
    client: Any,
    faults: bool = False,
    fault_offset: int = 0,
    registries: RegistryCache | None = None,
) -> CaseReport:
    """Replay ``case`` in ``dialect`` against ``sim`` through ``client``.

    Args:
        case: the case.
        dialect: the client's dialect.
        sim: a running simulator (the turns are played on it, one user turn at a time).
        code: BFCL's code (:func:`load_code`).
        client: a provider client for ``dialect`` pointed at ``sim``.
        faults: put a fault in the middle of each turn (see the module docstring).
        fault_offset: where the rotation of faults starts (so cases see different ones).
        registries: registries to reuse across cases (built here when ``None``).

    Returns:
        The report; problems are listed, never raised.
    """
    started = time.perf_counter()
    world = _World(case, code, registries if registries is not None else RegistryCache())
    defects = _defects(case, world)
    # One ledger for the case; a new Agent where the registry changes (miss_func).
    ledger = InMemoryLedger()
    retry = RetryPolicy(attempts=RETRY_ATTEMPTS, sleep=_no_wait, random=lambda: 0.5)
    tag = f"sse_toolcalls_{next(_run_counter)}"
    problems: list[str] = []
    identical = True
    conversation: list[Message] = []
    injected = 0
    calls_total = 0
    # The whole case is one script: the simulator checks every request against all the
    # calls it ever issued, so earlier turns' results stay addressable.
    plans = [
        _plan(case, world, code, turn=turn, dialect=dialect, faults=faults, offset=fault_offset)
        for turn in range(len(case.ground_truth))
    ]
    script = [t for plan in plans for run in plan.runs for t in run]
    sim.play(Script(turns=tuple(script)))
    seen_problems = 0
    try:
        for turn, ground_truth in enumerate(case.ground_truth):
            plan = plans[turn]
            where = f"{case.id} {dialect} turn {turn}"
            agent = Agent(client, world.registry(turn), ledger=ledger, retry=retry, max_steps=4)
            problems.extend(f"{where}: {p}" for p in plan.problems)
            calls, fault = plan.calls, plan.fault
            before = world.snapshot() if not ground_truth else None
            request_id = f"{case.id}/turn-{turn}"
            asked: list[Message] = [*conversation, UserMessage(text=plan.text)]
            first_request = len(sim.requests)
            reply: AgentReply | None = None
            for n, _ in enumerate(plan.runs):
                with anyio.fail_after(TURN_TIMEOUT_S):
                    reply = await agent.run(asked, conversation_id=case.id, request_id=request_id)
                found = sim.problems
                problems.extend(f"{where}: simulator: {p}" for p in found[seen_problems:])
                seen_problems = len(found)
                if n == 0 and fault == "lost_confirmation" and calls:
                    if not reply.is_fallback:
                        problems.append(
                            f"{where}: the lost confirmation did not end in the fallback"
                        )
                    # The application kept the conversation (the calls and their results)
                    # and re-submits the same request.
                    asked = list(reply.conversation)
            if plan.added:
                requests = sim.requests
                declared = (
                    _declared(dialect, requests[first_request].body)
                    if len(requests) > first_request
                    else set()
                )
                missing = set(plan.added) - declared
                if missing:
                    problems.append(
                        f"{where}: the added functions {sorted(missing)} are not declared"
                    )
                if first_request > 0 and set(plan.added) & _declared(
                    dialect, requests[first_request - 1].body
                ):
                    problems.append(
                        f"{where}: the held-out functions were declared before their turn"
                    )
            assert reply is not None  # _scripts gives at least one run
            if reply.is_fallback:
                problems.append(f"{where}: the user saw the fallback ({reply.reason})")
            if fault == "lost_confirmation" and calls:
                outcomes = [r.outcome for r in reply.reports]
                if outcomes != ["replayed"] * len(calls):
                    problems.append(
                        f"{where}: the re-issued calls were {outcomes}, not all replayed"
                    )
            # BFCL's reference execution of this turn's ground truth, on its own instances.
            expected, precisions, reference = _reference_turn(code, ground_truth, case, tag)
            verdict = code.state_checker(world.instances, reference)
            if not verdict["valid"]:
                identical = False
                differences = verdict.get("details", {}).get("differences", {})
                problems.append(f"{where}: state differs: {sorted(differences)}")
            if before is not None:
                if reply.calls:
                    problems.append(f"{where}: {len(reply.calls)} call(s) where none is expected")
                if world.snapshot() != before:
                    identical = False
                    problems.append(f"{where}: a turn without ground truth changed the state")
            elif sim.requests and len(calls) == len(ground_truth):
                received = sim.requests[-1].results[-len(calls) :] if calls else ()
                if len(received) != len(expected):
                    problems.append(
                        f"{where}: {len(received)} results on the wire, {len(expected)} expected"
                    )
                for k, (want, got) in enumerate(zip(expected, received, strict=False)):
                    if not same_result(want, dialect, got, precision=precisions[k]):
                        shown = got.content[:120]
                        problems.append(
                            f"{where}: result {k} is {shown!r}, BFCL's is {want[:120]!r}"
                        )
            calls_total += len(calls)
            conversation = list(reply.conversation)
        injected = sum(
            1
            for r in sim.requests
            if r.turn_number >= 0 and script[r.turn_number].fault is not None
        )
    finally:
        # BFCL's executor keeps its instances in its module's globals, by name.
        for name in [n for n in vars(code.utils) if n.startswith(tag)]:
            delattr(code.utils, name)
    return CaseReport(
        case_id=case.id,
        category=case.category,
        dialect=dialect,
        faults=faults,
        turns=len(case.ground_truth),
        calls=calls_total,
        identical=identical,
        defects=defects,
        problems=tuple(problems),
        faults_injected=injected,
        seconds=time.perf_counter() - started,
    )


# --------------------------------------------------------------------------------------
# A whole replay.


async def replay(
    source: BFCLSource,
    *,
    categories: Sequence[str] = MULTI_TURN_CATEGORIES,
    dialects: Sequence[str] = DIALECTS,
    faults: bool = False,
    count: int | None = None,
    only: Sequence[str] = (),
    progress: Callable[[CaseReport, int, int], None] | None = None,
) -> list[CaseReport]:
    """Replay ``count`` cases per category (all by default) in each dialect.

    Args:
        source: BFCL's wheel (its data and its code).
        categories: among :data:`MULTI_TURN_CATEGORIES`.
        dialects: among the library's dialects.
        faults: put the simulator's faults in the middle of turns.
        count: cases per category, spread evenly (:func:`sample`); all when ``None``.
        only: case ids to keep (after sampling); all when empty.
        progress: called after each case with its report, the cases done and the total.

    Returns:
        One report per case and dialect, in category, dialect, case order.

    Raises:
        UsageError: an unknown category or dialect, or BFCL's code cannot be imported.
    """
    unknown = [c for c in categories if c not in MULTI_TURN_CATEGORIES]
    unknown += [d for d in dialects if d not in DIALECTS]
    if unknown:
        raise UsageError(f"unknown categories or dialects: {unknown}")
    # Names may come from a command line: typed once checked.
    chosen_dialects = [as_dialect(d) for d in dialects]
    code = load_code(source)
    chosen = {c: sample(multi_turn_cases(source, c, code), count) for c in categories}
    if only:
        chosen = {c: [case for case in cases if case.id in only] for c, cases in chosen.items()}
    total = sum(len(cases) for cases in chosen.values()) * len(dialects)
    reports: list[CaseReport] = []
    registries = RegistryCache()
    async with Simulator() as sim:
        for cases in chosen.values():
            for dialect in chosen_dialects:
                async with client_for(
                    dialect, model="sim-model-1", api_key="bfcl", base_url=sim.base_url_for(dialect)
                ) as client:
                    for number, case in enumerate(cases):
                        report = await replay_case(
                            case,
                            dialect,
                            sim,
                            code,
                            client=client,
                            faults=faults,
                            fault_offset=number,
                            registries=registries,
                        )
                        reports.append(report)
                        if progress is not None:
                            progress(report, len(reports), total)
    return reports
