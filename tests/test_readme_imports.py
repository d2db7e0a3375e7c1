"""Every import in the README's code samples is written from the name's home of 0.2: it
runs without the DeprecationWarning an old path of 0.1 gives (``_moved``)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"

_IMPORT = re.compile(
    r"^(from sse_toolcalls[\w.]* import (?:\([^)]*\)|[^\n]+)|import sse_toolcalls[\w.]*)", re.M
)


def _imports() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    return [found for block in blocks for found in _IMPORT.findall(block)]


def test_the_readme_has_imports_to_check() -> None:
    # The samples import from every layer; a regex that found none would check nothing.
    imports = " ".join(_imports())
    for face in ("sse_toolcalls ", "sse_toolcalls.runtime ", "sse_toolcalls.tooling."):
        assert f"from {face}" in imports, face


@pytest.mark.parametrize("statement", _imports())
def test_each_readme_import_is_from_its_new_home(statement: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        exec(statement, {})
