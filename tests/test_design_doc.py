"""The exception tree drawn in docs/design.md is the tree in errors.py."""

from __future__ import annotations

import re
from pathlib import Path

import sse_toolcalls
from sse_toolcalls import SSEToolCallsError

DESIGN = Path(__file__).resolve().parent.parent / "docs" / "design.md"


def _drawn_tree() -> dict[str, str | None]:
    text = DESIGN.read_text(encoding="utf-8")
    block = text.split("## Exception tree", 1)[1].split("```", 2)[1]
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in block.splitlines():
        found = re.search(r"[A-Z]\w*Error", line)
        if found is None or not re.match(r"^[\s│├└─]*$", line[: found.start()]):
            continue  # a continuation line of a description
        column = found.start()
        while stack and stack[-1][0] >= column:
            stack.pop()
        parents[found.group()] = stack[-1][1] if stack else None
        stack.append((column, found.group()))
    return parents


def test_the_drawn_exception_tree_is_the_real_one() -> None:
    real: dict[str, str | None] = {}
    for name in vars(sse_toolcalls)["__all__"]:
        value = getattr(sse_toolcalls, name)
        if isinstance(value, type) and issubclass(value, SSEToolCallsError):
            parent = value.__bases__[0]
            real[name] = None if value is SSEToolCallsError else parent.__name__
    assert _drawn_tree() == real
