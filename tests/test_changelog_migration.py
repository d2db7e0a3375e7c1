"""The migration table in CHANGELOG.md is ``_moved``'s tables, row for row: every old name
and module of 0.1 that warns is listed with its new import, and nothing else is; and each
new import it tells users to write works."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

from sse_toolcalls import _moved

CHANGELOG = Path(__file__).resolve().parent.parent / "CHANGELOG.md"
HEADING = "### Migration (0.1 -> 0.2)"


def expected_rows() -> list[tuple[str, str]]:
    """(old import, new import) for every entry of ``_moved``: the table's source."""
    rows = [
        (f"from sse_toolcalls import {name}", f"from {home} import {name}")
        for name, home in _moved.ROOT_NAMES.items()
    ]
    rows += [
        (f"from sse_toolcalls.runtime import {name}", f"from {home} import {name}")
        for name, home in _moved.RUNTIME_NAMES.items()
    ]
    rows += [(f"import {old}", f"import {new}") for old, new in _moved.MODULES.items()]
    rows += [
        (f"from {old} import {name}", f"from {home} import {name}")
        for old, names in _moved.SPLIT.items()
        for name, home in names.items()
    ]
    return sorted(rows)


def render(rows: list[tuple[str, str]]) -> str:
    """The table as CHANGELOG.md holds it (paste this when ``_moved`` changes)."""
    lines = ["| 0.1 (warns) | 0.2 |", "|---|---|"]
    lines += [f"| `{old}` | `{new}` |" for old, new in rows]
    return "\n".join(lines)


def _table() -> list[tuple[str, str]]:
    text = CHANGELOG.read_text(encoding="utf-8")
    assert HEADING in text, f"CHANGELOG.md has no {HEADING!r} section"
    section = text.split(HEADING, 1)[1].split("\n#", 1)[0]
    return re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|$", section, re.M)


def test_the_table_is_moved_row_for_row() -> None:
    table = _table()
    assert len(table) == len(set(table)), "a row is listed twice"
    expected = expected_rows()
    missing = sorted(set(expected) - set(table))
    extra = sorted(set(table) - set(expected))
    assert not missing and not extra, (
        f"missing: {missing}\nnot in _moved: {extra}\nthe table should read:\n{render(expected)}"
    )


def test_the_table_counts_every_entry() -> None:
    # The rows are keyed by (old, new): two entries cannot collapse into one row.
    split = sum(len(names) for names in _moved.SPLIT.values())
    entries = len(_moved.ROOT_NAMES) + len(_moved.RUNTIME_NAMES) + len(_moved.MODULES) + split
    assert len(expected_rows()) == entries


@pytest.mark.parametrize(("old", "new"), expected_rows())
def test_each_new_import_works(old: str, new: str) -> None:
    found = re.fullmatch(r"from ([\w.]+) import (\w+)", new)
    if found is None:
        module = new.removeprefix("import ")
        # find_spec, not import: sse_toolcalls.runtime.mcp's submodules need the mcp extra.
        assert importlib.util.find_spec(module) is not None, new
        return
    module, name = found.groups()
    assert hasattr(importlib.import_module(module), name), new
