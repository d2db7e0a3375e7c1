"""The import contract (issue 30, ``[tool.importlinter]`` in pyproject.toml), held by the
suite as well as by CI's ``lint-imports``: the three layers, the core's freedom from
anyio, httpx, httpx2 and jsonschema, the simulator's distance from the dialects, and no
import circles.

import-linter's ``acyclic_siblings`` contract squashes each package into one node and
checks the siblings under every package; a circle through a package's own
``__init__`` (``p -> p.x -> p``) has no two siblings in it, so the module graph is checked
here as well, module by module, and the circle found is named.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "sse_toolcalls"
_TWINS = ("_sse_c", "_walk_c")


@cache
def _config() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        config: dict[str, Any] = tomllib.load(file)["tool"]["importlinter"]
    return config


def _contract(contract_id: str) -> dict[str, Any]:
    contracts: list[dict[str, Any]] = _config()["contracts"]
    return next(c for c in contracts if c.get("id") == contract_id)


@cache
def _graph() -> grimp.ImportGraph:
    # The same graph lint-imports reads: external packages as nodes, TYPE_CHECKING
    # imports included.
    return grimp.build_graph(PACKAGE, include_external_packages=True, cache_dir=None)


def _edge(expression: str) -> tuple[str, str]:
    importer, imported = (part.strip() for part in expression.split("->"))
    return importer, imported


def _source(module: str) -> Path:
    path = ROOT.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _function_lines(module: str) -> set[int]:
    """The lines of ``module`` that are inside a function's body."""
    tree = ast.parse(_source(module).read_text(encoding="utf-8"))
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def test_lint_imports_keeps_every_contract() -> None:
    # The command CI runs (.ci/run), from the repository's root, where it finds
    # pyproject.toml; its own report is the failure message.
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from importlinter.cli import lint_imports_command;"
            " sys.exit(lint_imports_command())",
            "--no-cache",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout[result.stdout.find("Contracts") :] + (
        result.stderr
    )


def test_each_ignored_import_of_a_library_runs_only_inside_a_function() -> None:
    # "At module load" is the contract's word: an import inside a function runs on first
    # use, and grimp records it like any other. Each one the contract ignores must stay
    # there; a module-level import of the same library would hide behind the same line.
    graph = _graph()
    checked = 0
    for expression in _contract("core-sans-io")["ignore_imports"]:
        importer, imported = _edge(expression)
        if imported == PACKAGE:
            continue  # a compiled twin: the next test
        inside = _function_lines(importer)
        details = graph.get_import_details(importer=importer, imported=imported)
        assert details, f"{expression}: no such import any more; drop it from the list"
        for detail in details:
            line = detail["line_number"]
            assert line in inside, f"{importer}:{line} imports {imported} at module load"
            checked += 1
    assert checked > 0


def test_each_ignored_import_of_the_package_itself_is_a_compiled_twin() -> None:
    graph = _graph()
    for contract in _config()["contracts"]:
        for expression in contract.get("ignore_imports", ()):
            importer, imported = _edge(expression)
            if imported != PACKAGE:
                continue
            details = graph.get_import_details(importer=importer, imported=imported)
            assert details, f"{expression}: no such import any more; drop it from the list"
            for detail in details:
                assert any(twin in detail["line_contents"] for twin in _TWINS), (
                    f"{importer}:{detail['line_number']} imports the package's face: "
                    f"{detail['line_contents']!r}"
                )


def _twin_edges() -> set[tuple[str, str]]:
    return {
        _edge(expression)
        for expression in _contract("acyclic").get("ignore_imports", ())
        if _edge(expression)[1] == PACKAGE
    }


def module_cycles(graph: grimp.ImportGraph, ignored: set[tuple[str, str]]) -> list[list[str]]:
    """Each circle of the package's modules, as one path that comes back to its start:
    one per strongly connected component of the import graph (Tarjan's algorithm, without
    recursion: the graph has hundreds of modules)."""
    modules = sorted(m for m in graph.modules if m == PACKAGE or m.startswith(PACKAGE + "."))
    edges = {
        m: sorted(
            w
            for w in graph.find_modules_directly_imported_by(m)
            if (w == PACKAGE or w.startswith(PACKAGE + ".")) and (m, w) not in ignored
        )
        for m in modules
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for start in modules:
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if child < len(edges[node]):
                work.append((node, child + 1))
                nxt = edges[node][child]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return [_a_circle(component, edges) for component in components]


def _a_circle(component: list[str], edges: dict[str, list[str]]) -> list[str]:
    """A path inside ``component`` from its first module back to itself (breadth first:
    the shortest such path)."""
    members = set(component)
    start = component[0]
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in edges[node]:
                if nxt not in members or nxt in came_from:
                    continue
                came_from[nxt] = node
                if nxt == start:
                    path = [start]
                    while path[-1] != start or len(path) == 1:
                        path.append(came_from[path[-1]])
                    return path[::-1]
                following.append(nxt)
        frontier = following
    raise AssertionError(f"no circle in {component}")  # a component always has one


def test_module_cycles_finds_a_planted_circle() -> None:
    # The checker below, on a graph with a known answer: a -> b -> c -> a, and d apart.
    graph = grimp.ImportGraph()
    for name in (PACKAGE, f"{PACKAGE}.a", f"{PACKAGE}.b", f"{PACKAGE}.c", f"{PACKAGE}.d"):
        graph.add_module(name)
    for importer, imported in (("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")):
        graph.add_import(importer=f"{PACKAGE}.{importer}", imported=f"{PACKAGE}.{imported}")
    assert module_cycles(graph, set()) == [
        [f"{PACKAGE}.a", f"{PACKAGE}.b", f"{PACKAGE}.c", f"{PACKAGE}.a"]
    ]
    assert module_cycles(graph, {(f"{PACKAGE}.c", f"{PACKAGE}.a")}) == []


@pytest.mark.parametrize("layer", ["core", "runtime", "tooling"])
def test_no_module_imports_in_a_circle(layer: str) -> None:
    prefix = {"core": "", "runtime": ".runtime", "tooling": ".tooling"}[layer]
    others = (f"{PACKAGE}.runtime", f"{PACKAGE}.tooling")

    def in_layer(module: str) -> bool:
        if prefix:
            return module.startswith(PACKAGE + prefix)
        return not module.startswith(others)

    circles = [circle for circle in module_cycles(_graph(), _twin_edges()) if in_layer(circle[0])]
    assert circles == [], "\n".join(" -> ".join(circle) for circle in circles)
