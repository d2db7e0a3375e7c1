"""docs/design.md is held to the code: the exception tree it draws is the real one, face
by face; every path it names exists (or is marked planned and does not exist yet); every
module of the package is named in it; its limits are the constants' values; its faces'
counts are the tables'; and it stays short."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from sse_toolcalls import SSEToolCallsError, _faces, _moved

REPO = Path(__file__).resolve().parent.parent
DESIGN = REPO / "docs" / "design.md"
TEXT = DESIGN.read_text(encoding="utf-8")
PACKAGE = REPO / "sse_toolcalls"

MAX_LINES = 500
"""Issue 30: short enough to be read whole, and kept true."""

PLANNED: set[str] = set()
"""Paths design.md names before they exist (none today; the Bedrock dialects of issue 31
were the last). Each must still be absent (so the day it lands, this test says to drop
it here and its *(planned)* mark in the page), and each line naming it must say
"planned"."""

FACES = ("sse_toolcalls", "sse_toolcalls.runtime")
"""The faces the exception classes are published on."""

_PATH = re.compile(r"(?<![\w./-])((?:sse_toolcalls|tests|benchmarks|docs|scripts)/[\w./-]*)")
_TEST_NAME = re.compile(r"(?<![\w./-])((?:tests)/[\w./-]*\.py)::(\w+)")
_DOTTED = re.compile(r"(?<![\w./])(sse_toolcalls(?:\.\w+)+)")


def _named_paths() -> set[str]:
    return {match.rstrip(".,") for match in _PATH.findall(TEXT)}


def _named_dotted() -> set[str]:
    return {match.rstrip(".") for match in _DOTTED.findall(TEXT)}


# --------------------------------------------------------------------------------------
# The exception tree.


def _drawn_tree() -> dict[str, tuple[str | None, str]]:
    """Each drawn class -> its drawn parent and its face (``[runtime]`` marks the
    runtime's; the others are the core's)."""
    block = TEXT.split("## Exception tree", 1)[1].split("```", 2)[1]
    drawn: dict[str, tuple[str | None, str]] = {}
    stack: list[tuple[int, str]] = []
    for line in block.splitlines():
        found = re.search(r"[A-Z]\w*Error\b", line)
        if found is None or not re.match(r"^[\s│├└─]*$", line[: found.start()]):
            continue  # a continuation line of a description
        column = found.start()
        while stack and stack[-1][0] >= column:
            stack.pop()
        face = "sse_toolcalls.runtime" if "[runtime]" in line else "sse_toolcalls"
        drawn[found.group()] = (stack[-1][1] if stack else None, face)
        stack.append((column, found.group()))
    return drawn


def _real_tree() -> dict[str, tuple[str | None, str]]:
    """Every class of the tree: those the two faces export, and any other the two
    errors modules define (so a class left off its face is still drawn, and fails)."""
    classes: set[type[SSEToolCallsError]] = set()
    for face in FACES:
        module = importlib.import_module(face)
        for name in vars(module)["__all__"]:
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, SSEToolCallsError):
                classes.add(value)
    for home in ("sse_toolcalls.errors", "sse_toolcalls.runtime.errors"):
        for value in vars(importlib.import_module(home)).values():
            if isinstance(value, type) and issubclass(value, SSEToolCallsError):
                classes.add(value)
    return {
        cls.__name__: (
            None if cls is SSEToolCallsError else cls.__bases__[0].__name__,
            cls.__module__,
        )
        for cls in classes
    }


def test_the_drawn_exception_tree_is_the_real_one() -> None:
    assert _drawn_tree() == _real_tree()


def test_the_tree_parser_sees_a_class_moved_to_another_face() -> None:
    # The face check must be able to fail: a drawing whose runtime mark moved is wrong.
    drawn = _drawn_tree()
    assert drawn["LedgerError"] == ("SSEToolCallsError", "sse_toolcalls.runtime")
    assert drawn["ProviderError"] == ("StreamError", "sse_toolcalls")


# --------------------------------------------------------------------------------------
# Paths and names.


def test_every_named_path_exists_or_is_planned() -> None:
    missing = sorted(path for path in _named_paths() if not (REPO / path).exists())
    assert set(missing) <= PLANNED, f"named in design.md, not in the repository: {missing}"


@pytest.mark.parametrize("page", ["docs/extending.md", "docs/threat-model.md"])
def test_every_path_the_other_pages_name_exists_or_is_planned(page: str) -> None:
    # docs/extending.md gives the file lists to touch, the threat model the tests behind
    # each promise: a wrong path there sends a reader to the wrong file.
    text = (REPO / page).read_text(encoding="utf-8")
    named = {match.rstrip(".,") for match in _PATH.findall(text)}
    missing = sorted(path for path in named if not (REPO / path).exists())
    assert set(missing) <= PLANNED, f"named in {page}, not in the repository: {missing}"
    for line in text.splitlines():
        if any(path in line for path in PLANNED):
            assert "planned" in line, line


def test_a_planned_path_is_named_as_planned_and_not_there_yet() -> None:
    # One test over the set, not one per path: an empty set (today) must not be a skip,
    # which CI's counted skips would fail.
    for path in sorted(PLANNED):
        assert not (REPO / path).exists(), (
            f"{path} exists now: drop it from PLANNED here and its *(planned)* mark in design.md"
        )
        lines = [line for line in TEXT.splitlines() if path in line]
        assert lines, f"{path} is planned but design.md does not name it"
        assert all("planned" in line for line in lines), lines


def test_every_named_test_function_exists() -> None:
    for path, name in _TEST_NAME.findall(TEXT):
        source = (REPO / path).read_text(encoding="utf-8")
        assert re.search(rf"^(async )?def {name}\(", source, re.M), f"{path}::{name}"


def _resolves(dotted: str) -> bool:
    """Whether ``dotted`` is a module of the package, or an attribute of one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = PACKAGE.parent.joinpath(*parts[:cut])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            value: Any = importlib.import_module(".".join(parts[:cut]))
            for attribute in parts[cut:]:
                if not hasattr(value, attribute):
                    return False
                value = getattr(value, attribute)
            return True
    return False


def test_every_dotted_name_resolves() -> None:
    # An old path of 0.1 is named on purpose (where it went); every other name is real.
    wrong = sorted(
        name for name in _named_dotted() if name not in _moved.MODULES and not _resolves(name)
    )
    assert not wrong, f"dotted names in design.md that are no module or attribute: {wrong}"


def _modules() -> list[Path]:
    return sorted(
        path.relative_to(REPO)
        for path in PACKAGE.rglob("*")
        if path.suffix in (".py", ".c") and "__pycache__" not in path.parts
    )


def _names_of(module: Path) -> set[str]:
    """The ways design.md may name a module: its path, its dotted name; a package's
    ``__init__.py`` also by the package's own path or name (it is the package's face or
    docstring)."""
    path = module.as_posix()
    dotted = path.removesuffix(".py").replace("/", ".")
    names = {path}
    if module.suffix == ".py":
        names.add(dotted)
    if module.name == "__init__.py":
        package = module.parent.as_posix()
        names |= {package + "/", package.replace("/", ".")}
    return names


def test_every_module_of_the_package_is_named() -> None:
    named = _named_paths() | _named_dotted()
    unnamed = [module.as_posix() for module in _modules() if not _names_of(module) & named]
    assert not unnamed, f"modules design.md does not name: {unnamed}"


def test_the_module_check_finds_every_module() -> None:
    # The walk must see the layers' modules, or the check above proves nothing.
    found = {module.as_posix() for module in _modules()}
    for expected in (
        "sse_toolcalls/parser.py",
        "sse_toolcalls/_sse_c.c",
        "sse_toolcalls/runtime/dispatch.py",
        "sse_toolcalls/runtime/sandbox/__init__.py",
        "sse_toolcalls/tooling/simulator/encoders.py",
    ):
        assert expected in found


# --------------------------------------------------------------------------------------
# Figures.


def test_the_faces_table_counts_are_the_tables() -> None:
    section = TEXT.split("## Faces", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([\w.]+)`[^|]*\| `(\w+)` \| (\d+)", section, re.M)
    assert {face for face, _, _ in rows} == set(_faces.FACES)
    for face, table, count in rows:
        assert getattr(_faces, table) is _faces.FACES[face]
        assert int(count) == sum(len(names) for names in _faces.FACES[face].values()), face


_UNITS = {"KiB": 1024, "MiB": 1024**2, "days": 86400}


def _number(text: str) -> float:
    found = re.match(r"(2\*\*\d+|[\d,]+)\s*(\w+)?", text.strip())
    assert found is not None, text
    digits, unit = found.groups()
    base, _, power = digits.partition("**")
    value = float(base.replace(",", "")) ** (int(power) if power else 1)
    return value * _UNITS.get(unit or "", 1)


def _limit_rows() -> list[tuple[list[str], str, str]]:
    section = TEXT.split("## Limits", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        found = re.match(r"^\| ((?:`\w+`(?:, )?)+) \(`([\w/]+)`[^)]*\) \| ([^|]+) \|", line)
        if found:
            constants = re.findall(r"`(\w+)`", found.group(1))
            rows.append((constants, found.group(2), found.group(3)))
    return rows


def test_every_limit_is_the_constant_in_its_module() -> None:
    rows = _limit_rows()
    assert len(rows) >= 20  # both tables parsed
    for constants, module, bound in rows:
        loaded = importlib.import_module("sse_toolcalls." + module.replace("/", "."))
        figures = bound.split(", ")
        assert len(figures) == len(constants), (constants, bound)
        for constant, figure in zip(constants, figures, strict=True):
            assert float(getattr(loaded, constant)) == _number(figure), (module, constant)


def test_design_md_is_short() -> None:
    assert len(TEXT.splitlines()) <= MAX_LINES
