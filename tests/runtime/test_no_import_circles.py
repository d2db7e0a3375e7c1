"""No import circle inside the runtime (issue 30, item 8), counting every import: at module
level, inside functions and under TYPE_CHECKING. A lazy import or a TYPE_CHECKING block
hides a circle from the interpreter, not from a reader: the modules still lean on each
other both ways, so they are counted."""

from __future__ import annotations

import ast
from pathlib import Path

import sse_toolcalls.runtime

RUNTIME = Path(sse_toolcalls.runtime.__file__).resolve().parent
PACKAGE = "sse_toolcalls.runtime"


def _modules() -> dict[str, Path]:
    found = {}
    for path in RUNTIME.rglob("*.py"):
        parts = [PACKAGE, *path.relative_to(RUNTIME).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The runtime modules ``name`` imports, anywhere in its source."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            # "from . import tracing" names a module; "from .x import y" a name of x.
            for alias in node.names:
                sub = f"{origin}.{alias.name}"
                targets.append(sub if sub in known else origin)
        out.update(t for t in targets if t in known and t != name)
    return out


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_runtime_has_no_import_circle() -> None:
    known = _modules()
    graph = {name: _imports(name, path, known) for name, path in known.items()}
    assert _circles(graph) == []


def test_the_check_sees_a_circle_hidden_in_a_function() -> None:
    # The checker itself: a circle made only of lazy imports is still one.
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]
