"""The public surface, derived from the namespace: one list of names (the root's
``_EXPORTS``), the ``TYPE_CHECKING`` block equal to it, every public module's ``__all__``
real, the root exporting exactly its ``__all__``, public classes at the path users write,
the upper layers loaded lazily."""

from __future__ import annotations

import ast
import importlib
import pickle
import pkgutil
import subprocess
import sys
import typing
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import sse_toolcalls
import sse_toolcalls.sandbox
from sse_toolcalls import (
    EventTooLargeError,
    InvalidArgumentsError,
    MalformedStreamError,
    PartialToolCall,
    ProviderError,
    SSEToolCallsError,
    StreamTimeoutError,
    ToolCall,
    ToolError,
    ToolResult,
    TruncatedStreamError,
    UnknownDialectError,
)

ROOT = sse_toolcalls.__name__
ALL: list[str] = vars(sse_toolcalls)["__all__"]
"""The root's ``__all__``, hidden from type checkers (see the root's comment)."""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


def _public_modules() -> Iterator[ModuleType]:
    """Every module of the package whose dotted path has no private part."""
    yield sse_toolcalls
    for info in pkgutil.walk_packages(sse_toolcalls.__path__, prefix=f"{ROOT}."):
        parts = info.name.split(".")
        if not any(part.startswith("_") for part in parts):
            yield importlib.import_module(info.name)


def _type_checking_imports() -> dict[str, str]:
    """What type checkers see: name -> module, from the root's ``TYPE_CHECKING`` block."""
    tree = ast.parse(Path(sse_toolcalls.__file__).read_text(encoding="utf-8"))
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1, "the root has one TYPE_CHECKING block"
    seen: dict[str, str] = {}
    for node in blocks[0].body:
        assert isinstance(node, ast.ImportFrom), ast.unparse(node)
        assert node.level == 1 and node.module is not None, ast.unparse(node)
        for alias in node.names:
            # "X as X" is what marks a re-export under mypy's and pyright's strict rules.
            assert alias.asname == alias.name, ast.unparse(node)
            assert alias.name not in seen, alias.name
            seen[alias.name] = node.module
    return seen


def test_all_is_sorted_and_unique() -> None:
    names = list(ALL)
    assert names == sorted(names)
    assert len(names) == len(set(names))


def test_type_checkers_see_exactly_the_exported_names() -> None:
    table = {name: module for module, names in sse_toolcalls._EXPORTS.items() for name in names}
    assert _type_checking_imports() == table
    assert sorted(table) == ALL


def test_every_public_module_all_resolves() -> None:
    walked = 0
    for module in _public_modules():
        names = getattr(module, "__all__", None)
        if names is None:
            continue
        walked += 1
        assert len(names) == len(set(names)), module.__name__
        for name in names:
            assert hasattr(module, name), f"{module.__name__}.{name}"
    assert walked >= 10


def test_the_root_exports_exactly_its_all() -> None:
    for name in ALL:
        home = importlib.import_module(f"{ROOT}.{sse_toolcalls._HOME[name]}")
        assert getattr(sse_toolcalls, name) is getattr(home, name), name
    # Everything is loaded now: the root's public, non-module names are its __all__.
    exported = {
        name
        for name, value in vars(sse_toolcalls).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    }
    assert exported == set(ALL)


def test_dir_lists_the_lazy_names_before_they_load() -> None:
    result = _run(
        f"import sys, {ROOT}; names = dir({ROOT});"
        f"print('Agent' in names, 'ToolRegistry' in names, '{ROOT}.runtime' in sys.modules)"
    )
    assert result.stdout.split() == ["True", "True", "False"], result.stderr


def test_public_classes_carry_the_root_path_however_imported() -> None:
    # A fresh interpreter imports every defining module directly, never through the root's
    # lazy lookup: the path must not depend on what was imported first. (type's own repr:
    # an enum's metaclass shows "<enum 'Name'>", without the module.)
    modules = sorted(set(sse_toolcalls._HOME.values()))
    code = (
        "import importlib\n"
        f"rows = {[(name, module) for name, module in sse_toolcalls._HOME.items()]!r}\n"
        f"mods = {{m: importlib.import_module('{ROOT}.' + m) for m in {modules!r}}}\n"
        "for name, module in rows:\n"
        "    value = getattr(mods[module], name)\n"
        "    if isinstance(value, type):\n"
        "        print(name, value.__module__, type.__repr__(value))\n"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) > 40
    for line in lines:
        name, module, shown = line.split(" ", 2)
        assert module == ROOT, line
        assert shown == f"<class '{ROOT}.{name}'>", line


def test_only_exported_classes_claim_the_root_path() -> None:
    for module in _public_modules():
        for name, value in vars(module).items():
            if isinstance(value, type) and value.__module__ == ROOT:
                # sse._CSSEFramer / sse._PySSEFramer: the twins of SSEFramer, by its name.
                twin = name.startswith("_") and value.__qualname__ in ALL
                assert name in ALL or twin, f"{module.__name__}.{name}"


def test_type_hints_still_resolve_on_every_public_class() -> None:
    # The annotations are strings evaluated in the module __module__ names; moving
    # __module__ to the root must not break typing.get_type_hints (pydantic, cattrs...).
    for name in ALL:
        value = getattr(sse_toolcalls, name)
        if isinstance(value, type):
            typing.get_type_hints(value, include_extras=True)
    assert typing.get_type_hints(ToolCall)["args"] == dict[str, Any]


CALL = ToolCall(name="f", args={"a": 1}, provider="openai_chat", call_id="c1", index=0)


def _round_trip(value: object) -> object:
    return pickle.loads(pickle.dumps(value))


@pytest.mark.parametrize(
    "value",
    [
        CALL,
        ToolResult(call=CALL, content="ok"),
        PartialToolCall(index=0, name="f", call_id="c1", raw_arguments='{"a"'),
    ],
    ids=lambda value: type(value).__name__,
)
def test_public_dataclasses_pickle_by_the_root_path(value: object) -> None:
    assert b"sse_toolcalls.calls" not in pickle.dumps(value)
    assert _round_trip(value) == value


@pytest.mark.parametrize(
    "error",
    [
        SSEToolCallsError("boom"),
        MalformedStreamError("bad", provider="gemini", data="{"),
        ToolError("failed", call=CALL),
        InvalidArgumentsError("invalid", call=CALL, problems=("p",)),
    ],
    ids=lambda error: type(error).__name__,
)
def test_exceptions_pickle_by_the_root_path(error: SSEToolCallsError) -> None:
    assert b"sse_toolcalls.errors" not in pickle.dumps(error)
    copy = _round_trip(error)
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert vars(copy) == vars(error)


# One instance of every public exception class, each with its keyword arguments set to
# values other than their defaults (so a lost attribute shows). ToolRetry is no error of
# ours but crosses a sandbox's process boundary the same way.
EVERY_ERROR: list[Exception] = [
    SSEToolCallsError("boom"),
    sse_toolcalls.UsageError("misuse"),
    sse_toolcalls.ApprovalStateError("edited", reason="tampered"),
    UnknownDialectError("cohere"),
    sse_toolcalls.StreamError("stream"),
    sse_toolcalls.FramingError("framing"),
    EventTooLargeError("big", limit=1, size=2),
    MalformedStreamError("bad", provider="gemini", data="{"),
    sse_toolcalls.LimitExceededError(
        "deep", limit_name="MAX_EVENT_DEPTH", limit=3, size=4, provider="anthropic", data="[["
    ),
    ProviderError(
        "overloaded",
        provider="anthropic",
        code="overloaded_error",
        status=529,
        retryable=True,
        retry_after=1.5,
        body={"type": "error"},
    ),
    StreamTimeoutError("slow", provider="gemini", status=504),
    TruncatedStreamError(
        "cut",
        reason="eof",
        provider="openai_chat",
        completed=[CALL],
        partial=[PartialToolCall(index=1, name="g", call_id="c2", raw_arguments='{"b"')],
        text="hi",
    ),
    ToolError("failed", call=CALL),
    sse_toolcalls.UnknownToolError("unknown", call=CALL),
    InvalidArgumentsError("invalid", call=CALL, problems=("p",)),
    sse_toolcalls.ToolExecutionError("raised", call=CALL),
    sse_toolcalls.ToolTimeoutError("late", call=CALL),
    sse_toolcalls.CircuitOpenError("open", call=CALL),
    sse_toolcalls.LedgerError("locked"),
    sse_toolcalls.ConversationStoreError("refused"),
    sse_toolcalls.SandboxDeclarationError("a lambda cannot be imported"),
    sse_toolcalls.SandboxUnavailableError("no backend", call=CALL, reasons=("no bwrap",)),
    sse_toolcalls.ToolRetry("the date must be in the past"),
    sse_toolcalls.ToolErrorReply([{"type": "text", "text": "rate limited"}]),
    sse_toolcalls.SandboxViolationError(
        "denied",
        call=CALL,
        violation=sse_toolcalls.sandbox.Violation(
            kind=sse_toolcalls.sandbox.ViolationKind.DENIED_PATH, message="no", path="/etc"
        ),
    ),
]


def test_every_public_exception_class_is_in_the_pickling_table() -> None:
    public = {
        value
        for name in ALL
        if isinstance(value := getattr(sse_toolcalls, name), type)
        and issubclass(value, BaseException)
    }
    assert public == {type(error) for error in EVERY_ERROR}


@pytest.mark.parametrize("error", EVERY_ERROR, ids=lambda error: type(error).__name__)
def test_every_exception_round_trips_with_its_attributes(error: Exception) -> None:
    # BaseException pickles only its args (the message): the classes with required
    # keyword-only arguments did not unpickle at all before SSEToolCallsError.__reduce__.
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        copy = pickle.loads(pickle.dumps(error, protocol=protocol))
        assert type(copy) is type(error)
        assert copy.args == error.args
        assert str(copy) == str(error)
        assert vars(copy) == vars(error)


def test_the_contract_names_are_at_the_root() -> None:
    for name in (
        "SSEFramer",
        "ServerSentEvent",
        "ToolCallParser",
        "StreamParser",
        "ToolCall",
        "ToolResult",
        "ProviderError",
        "TruncatedStreamError",
        "SSEToolCallsError",
        "ToolRegistry",
        "format_results",
        "aiter_tool_calls",
        "Simulator",
    ):
        assert name in ALL, name


def test_upper_layers_load_only_when_used() -> None:
    code = (
        "import sys, sse_toolcalls;"
        "heavy = ('anyio', 'httpx', 'jsonschema', 'uvicorn', 'sse_toolcalls.tools');"
        "before = [m for m in heavy if m in sys.modules];"
        "sse_toolcalls.ToolRegistry;"
        "after = [m for m in heavy if m in sys.modules];"
        "print(before, after); sys.exit(0 if not before and 'sse_toolcalls.tools' in after else 1)"
    )
    result = _run(code)
    assert result.returncode == 0, result.stdout + result.stderr


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        sse_toolcalls.no_such_name  # type: ignore[attr-defined]  # noqa: B018
