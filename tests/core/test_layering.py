"""The house's rules, read from the source: no import cycle (function-level imports counted),
the parent side never imports the child side, the child side never imports the search, the
store or the CLI, each package imports nothing above it (`NEVER`), and nothing imports another
module's private names."""

from __future__ import annotations

import ast
from pathlib import Path

import advisor

ROOT = Path(advisor.__file__).parent


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[tuple[str, str | None]]]:
    """module -> {(imported module, name imported from it or None)}, every level of nesting."""
    modules = {_module(p) for p in ROOT.rglob("*.py")}
    graph: dict[str, set[tuple[str, str | None]]] = {}
    for path in ROOT.rglob("*.py"):
        found: set[tuple[str, str | None]] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    found.add((sub, None) if sub in modules else (node.module, alias.name))
            elif isinstance(node, ast.Import):
                found |= {(a.name, None) for a in node.names}
        graph[_module(path)] = {(m, n) for m, n in found if m in modules}
    return graph


GRAPH = _imports()


def _edges() -> dict[str, set[str]]:
    return {m: {t for t, _ in deps if t != m} for m, deps in GRAPH.items()}


def test_no_import_cycle() -> None:
    edges = _edges()
    state: dict[str, str] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(m: str) -> None:
        state[m] = "open"
        stack.append(m)
        for t in sorted(edges.get(m, ())):
            if state.get(t) == "open":
                cycles.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = "done"

    for m in sorted(edges):
        if m not in state:
            visit(m)
    assert cycles == []


def test_the_parent_never_imports_the_child_and_the_child_never_the_parent() -> None:
    edges = _edges()

    def reaching(sources: tuple[str, ...], targets: tuple[str, ...]) -> dict[str, list[str]]:
        return {m: sorted(t for t in deps if t.startswith(targets))
                for m, deps in edges.items()
                if m.startswith(sources) and any(t.startswith(targets) for t in deps)}

    assert reaching(("advisor.search", "advisor.db"), ("advisor.child",)) == {}
    assert reaching(("advisor.child",),
                    ("advisor.search", "advisor.db", "advisor.cli", "advisor.runtime")) == {}


# The layers (DESIGN.md): the CLI and the dashboard on top; beside them what they show
# (`advisor.presentation`) and the workflow they call (`advisor.api`, `advisor.runtime`); below,
# the search, the recommendation and the store; at the bottom the pure modules. Each package (or
# module) and the packages it never imports, function-level imports counted.
SURFACES = ("advisor.cli", "advisor.api", "advisor.runtime", "advisor.presentation")
NEVER: dict[str, tuple[str, ...]] = {
    "advisor.presentation": ("advisor.cli", "advisor.api", "advisor.runtime", "advisor.search",
                             "advisor.child"),
    "advisor.search": (*SURFACES, "advisor.child"),
    "advisor.recommendation": (*SURFACES, "advisor.search", "advisor.db", "advisor.child"),
    "advisor.db": (*SURFACES, "advisor.search", "advisor.recommendation", "advisor.child"),
    "advisor.child": (*SURFACES, "advisor.search", "advisor.db"),
    **{pure: (*SURFACES, "advisor.search", "advisor.recommendation", "advisor.db", "advisor.child")
       for pure in ("advisor.config", "advisor.dimensions", "advisor.records", "advisor.rows",
                    "advisor.stats", "advisor.errors", "advisor.serving", "advisor.units")},
}


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_each_package_imports_nothing_above_it() -> None:
    assert set(NEVER) <= {p for m in GRAPH for p in NEVER if _within(m, p)}, "a row names nothing"
    wrong = {m: sorted(t for t in deps if any(_within(t, p) for p in never))
             for package, never in NEVER.items()
             for m, deps in _edges().items() if _within(m, package)}
    assert {m: ts for m, ts in wrong.items() if ts} == {}


def test_no_module_imports_another_modules_private_names() -> None:
    private = {m: sorted(f"{t}.{n}" for t, n in deps
                         if n and n.startswith("_") and not n.startswith("__"))
               for m, deps in GRAPH.items()}
    assert {m: names for m, names in private.items() if names} == {}
