"""``module:attribute`` names: one reader for the commands, one-line typed errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from sse_toolcalls.errors import UsageError
from sse_toolcalls.runtime._targets import resolve


def test_dots_after_the_colon_walk_attributes() -> None:
    assert resolve("sse_toolcalls.errors:UsageError.__name__", what="x") == "UsageError"


@pytest.mark.parametrize("spec", ["sse_toolcalls", ":registry", "sse_toolcalls:", ""])
def test_a_malformed_name_says_how_to_write_one(spec: str) -> None:
    with pytest.raises(UsageError, match="the registry is named as module:attribute"):
        resolve(spec, what="the registry")


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("def broken(:\n    pass\n", "SyntaxError"),
        ("raise RuntimeError('no config\\nat line two')\n", "RuntimeError"),
        ("registry = 1\n", "AttributeError"),
    ],
)
def test_whatever_the_import_raises_is_one_line_of_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, kind: str
) -> None:
    name = f"target_{kind.lower()}"
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UsageError) as caught:
        resolve(f"{name}:registry.tools", what="the registry")
    message = str(caught.value)
    assert message.startswith(f"cannot load the registry '{name}:registry.tools': {kind}")
    assert "\n" not in message
    assert caught.value.__cause__ is not None


def test_a_missing_module_is_named() -> None:
    with pytest.raises(UsageError, match="ModuleNotFoundError: No module named 'no_such_mod'"):
        resolve("no_such_mod:x", what="the registry")
