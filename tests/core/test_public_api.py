"""The public surface, derived from the namespace: one table of names per face
(``_faces``), each lazy face's ``TYPE_CHECKING`` block equal to it, every public
module's ``__all__`` real, each face exporting exactly its ``__all__``, public classes at
their face's path, the upper layers loaded lazily, the old paths of 0.1 warning."""

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
import sse_toolcalls.runtime
import sse_toolcalls.runtime.sandbox
from sse_toolcalls import (
    EventTooLargeError,
    MalformedStreamError,
    PartialToolCall,
    ProviderError,
    SSEToolCallsError,
    StreamTimeoutError,
    ToolCall,
    ToolResult,
    TruncatedStreamError,
    UnknownDialectError,
    _faces,
    _moved,
)
from sse_toolcalls.runtime import InvalidArgumentsError, ToolError

ROOT = sse_toolcalls.__name__
ALL: list[str] = vars(sse_toolcalls)["__all__"]
"""The root's ``__all__``, hidden from type checkers (see the root's comment)."""

LAZY_FACES = ["sse_toolcalls", "sse_toolcalls.runtime"]
"""The faces that look their names up on first use (``_faces.Face``)."""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


def _public_modules() -> Iterator[ModuleType]:
    """Every module of the package whose dotted path has no private part."""
    yield sse_toolcalls
    for info in pkgutil.walk_packages(sse_toolcalls.__path__, prefix=f"{ROOT}."):
        parts = info.name.split(".")
        if not any(part.startswith("_") for part in parts):
            yield importlib.import_module(info.name)


def _homes(face: str) -> dict[str, str]:
    """Each public name of ``face`` -> its defining module (relative to the face)."""
    return {name: module for module, names in _faces.FACES[face].items() for name in names}


def _type_checking_imports(face: str) -> dict[str, str]:
    """What type checkers see: name -> module, from the face's ``TYPE_CHECKING`` block."""
    path = importlib.import_module(face).__file__
    assert path is not None
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    blocks = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1, "the face has one TYPE_CHECKING block"
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


@pytest.mark.parametrize("face", LAZY_FACES)
def test_all_is_sorted_and_unique(face: str) -> None:
    names = list(vars(importlib.import_module(face))["__all__"])
    assert names == sorted(names)
    assert len(names) == len(set(names))


def test_the_root_face_has_at_most_60_names() -> None:
    # Issue 30: the wire core's face is the library's first use, short enough to read.
    assert len(ALL) <= 60


@pytest.mark.parametrize("face", LAZY_FACES)
def test_type_checkers_see_exactly_the_exported_names(face: str) -> None:
    table = _homes(face)
    assert _type_checking_imports(face) == table
    assert sorted(table) == vars(importlib.import_module(face))["__all__"]


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


@pytest.mark.parametrize("face", LAZY_FACES)
def test_the_face_exports_exactly_its_all(face: str) -> None:
    module = importlib.import_module(face)
    names = vars(module)["__all__"]
    for name, home in _homes(face).items():
        defining = importlib.import_module(f"{face}.{home}")
        assert getattr(module, name) is getattr(defining, name), name
    # Everything is loaded now: the face's public, non-module names are its __all__.
    exported = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    }
    assert exported == set(names)


def test_dir_lists_the_lazy_names_before_they_load() -> None:
    result = _run(
        f"import sys, {ROOT}; names = dir({ROOT});"
        f"print('ToolCallParser' in names, 'parse_tool_calls' in names, 'Agent' in names,"
        f" '{ROOT}.parser' in sys.modules)"
    )
    assert result.stdout.split() == ["True", "True", "False", "False"], result.stderr


def test_public_classes_carry_their_face_path_however_imported() -> None:
    # A fresh interpreter imports every defining module directly, never through a face's
    # lazy lookup: the path must not depend on what was imported first. (type's own repr:
    # an enum's metaclass shows "<enum 'Name'>", without the module.)
    rows = [
        (face, name, f"{face}.{module}")
        for face in _faces.FACES
        for name, module in _homes(face).items()
    ]
    code = (
        "import importlib\n"
        f"rows = {rows!r}\n"
        "for face, name, module in rows:\n"
        "    value = getattr(importlib.import_module(module), name)\n"
        "    if isinstance(value, type):\n"
        "        print(face, name, value.__module__, type.__repr__(value))\n"
    )
    result = _run(code)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) > 80
    for line in lines:
        face, name, module, shown = line.split(" ", 3)
        assert module == face, line
        assert shown == f"<class '{face}.{name}'>", line


def test_only_exported_classes_claim_a_face_path() -> None:
    for module in _public_modules():
        for name, value in vars(module).items():
            face = getattr(value, "__module__", None)
            if isinstance(value, type) and face in _faces.FACES:
                # sse._CSSEFramer / sse._PySSEFramer: the twins of SSEFramer, by its name.
                exported = _homes(face)
                twin = name.startswith("_") and value.__qualname__ in exported
                assert name in exported or twin, f"{module.__name__}.{name}"


def test_type_hints_still_resolve_on_every_public_class() -> None:
    # The annotations are strings evaluated in the module __module__ names; moving
    # __module__ to a face must not break typing.get_type_hints (pydantic, cattrs...).
    for face in _faces.FACES:
        module = importlib.import_module(face)
        for name in _homes(face):
            value = getattr(module, name)
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
def test_exceptions_pickle_by_their_face_path(error: SSEToolCallsError) -> None:
    assert b"errors" not in pickle.dumps(error)
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
    sse_toolcalls.runtime.ApprovalStateError("edited", reason="tampered"),
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
    sse_toolcalls.runtime.UnknownToolError("unknown", call=CALL),
    InvalidArgumentsError("invalid", call=CALL, problems=("p",)),
    sse_toolcalls.runtime.ToolExecutionError("raised", call=CALL),
    sse_toolcalls.runtime.ToolTimeoutError("late", call=CALL),
    sse_toolcalls.runtime.CircuitOpenError("open", call=CALL),
    sse_toolcalls.runtime.LedgerError("locked"),
    sse_toolcalls.runtime.ConversationStoreError("refused"),
    sse_toolcalls.runtime.SandboxDeclarationError("a lambda cannot be imported"),
    sse_toolcalls.runtime.SandboxUnavailableError("no backend", call=CALL, reasons=("no bwrap",)),
    sse_toolcalls.runtime.ToolRetry("the date must be in the past"),
    sse_toolcalls.runtime.ToolErrorReply([{"type": "text", "text": "rate limited"}]),
    sse_toolcalls.runtime.SandboxViolationError(
        "denied",
        call=CALL,
        violation=sse_toolcalls.runtime.sandbox.Violation(
            kind=sse_toolcalls.runtime.sandbox.ViolationKind.DENIED_PATH, message="no", path="/etc"
        ),
    ),
]


def test_every_public_exception_class_is_in_the_pickling_table() -> None:
    public = {
        value
        for face in LAZY_FACES
        for name in _homes(face)
        if isinstance(value := getattr(importlib.import_module(face), name), type)
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


def test_the_contract_names_are_on_their_faces() -> None:
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
        "format_results",
        "aiter_tool_calls",
    ):
        assert name in ALL, name
    for name in ("Agent", "ToolRegistry", "Tool", "Dispatcher", "ToolRetry"):
        assert name in vars(sse_toolcalls.runtime)["__all__"], name
    assert "Simulator" in importlib.import_module("sse_toolcalls.tooling.simulator").__all__


def test_upper_layers_load_only_when_used() -> None:
    code = (
        "import sys, sse_toolcalls;"
        "heavy = ('anyio', 'httpx', 'jsonschema', 'uvicorn', 'sse_toolcalls.runtime.tools');"
        "sse_toolcalls.parse_tool_calls; import sse_toolcalls.runtime;"
        "before = [m for m in heavy if m in sys.modules];"
        "sse_toolcalls.runtime.ToolRegistry;"
        "after = [m for m in heavy if m in sys.modules];"
        "print(before, after); sys.exit(0 if not before and 'sse_toolcalls.runtime.tools' in after else 1)"
    )
    result = _run(code)
    assert result.returncode == 0, result.stdout + result.stderr


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        sse_toolcalls.no_such_name  # type: ignore[attr-defined]  # noqa: B018


@pytest.mark.parametrize(
    ("face", "name", "home"),
    [
        (face, name, home)
        for face, table in (
            ("sse_toolcalls", _moved.ROOT_NAMES),
            ("sse_toolcalls.runtime", _moved.RUNTIME_NAMES),
        )
        for name, home in sorted(table.items())
    ],
)
def test_an_old_name_warns_with_its_new_home_and_is_the_same_object(
    face: str, name: str, home: str
) -> None:
    # In a fresh interpreter: a name found once is kept on the face and warns no more.
    result = _run(
        "import warnings, importlib\n"
        "warnings.simplefilter('error')\n"
        f"face = importlib.import_module({face!r})\n"
        "try:\n"
        f"    getattr(face, {name!r})\n"
        "except DeprecationWarning as warning:\n"
        "    print(warning)\n"
        "warnings.simplefilter('ignore')\n"
        f"print(getattr(face, {name!r}) is getattr(importlib.import_module({home!r}), {name!r}))\n"
        f"print({name!r} in dir(face), {name!r} in face.__all__)\n"
    )
    lines = result.stdout.splitlines()
    assert (
        lines[0] == f"{face}.{name} moved: import it from {home} (the old path is removed in 0.3.0)"
    ), result.stderr
    assert lines[1:] == ["True", "False False"]


@pytest.mark.parametrize(("old", "new"), sorted(_moved.MODULES.items()))
def test_an_old_module_path_warns_and_is_the_new_module(old: str, new: str) -> None:
    result = _run(
        "import warnings, importlib, sys\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    old = importlib.import_module({old!r})\n"
        "print([str(w.message) for w in caught if w.category is DeprecationWarning])\n"
        f"print(old is importlib.import_module({new!r}))\n"
    )
    assert result.returncode == 0, result.stderr
    warned, same = result.stdout.splitlines()
    assert f"the module {old} moved to {new}" in warned
    # A split module is a module of its own that hands names on (the next test).
    assert same == str(old not in _moved.SPLIT)


def test_a_pickle_names_the_face_not_the_module() -> None:
    # So a pickle made today loads after the module moves inside the package.
    data = pickle.dumps(sse_toolcalls.runtime.CallReport)
    assert b"sse_toolcalls.runtime" in data and b"dispatch" not in data


@pytest.mark.parametrize(
    ("old", "name", "home"),
    [
        (old, name, home)
        for old, names in sorted(_moved.SPLIT.items())
        for name, home in names.items()
    ],
)
def test_a_split_module_hands_on_every_old_name(old: str, name: str, home: str) -> None:
    # sse_toolcalls.runtime.ledger became one module per backend: its old path still gives
    # each of its names, the real object from its new home.
    result = _run(
        "import warnings, importlib\n"
        "warnings.simplefilter('ignore')\n"
        f"from {old} import {name} as value\n"
        f"print(value is getattr(importlib.import_module({home!r}), {name!r}))\n"
    )
    assert result.stdout.split() == ["True"], result.stderr


def test_a_stale_folder_of_the_old_layout_does_not_hide_the_move(tmp_path: Path) -> None:
    # An update in place (git pull on an editable install) leaves sse_toolcalls/tools/ with
    # its __pycache__ only: it would import as an empty namespace package. Here a folder of
    # that name is put on the package's path.
    (tmp_path / "tools" / "__pycache__").mkdir(parents=True)
    result = _run(
        "import warnings, sse_toolcalls\n"
        "warnings.simplefilter('ignore')\n"
        f"sse_toolcalls.__path__.append({str(tmp_path)!r})\n"
        "import sse_toolcalls.tools as old, sse_toolcalls.runtime.tools as new\n"
        "print(old is new)\n"
    )
    assert result.stdout.split() == ["True"], result.stderr
