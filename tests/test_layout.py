"""The package layout: stages as subpackages, dependencies pointing one way, no import cycles.

Every ``import`` counts, including those inside functions and under ``TYPE_CHECKING``: a
lazy import that closes a cycle is still a cycle for a reader.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "laser_ci"

# Lowest first: a package may import only packages before it (and itself).
LAYERS = ["workflows", "text", "predictors", "measure", "sizing", "report", "training",
          "estimate", "evaluation", "github", "cli"]  # evaluation scores what estimate says
TOP_LEVEL = {"__init__", "__main__", "cli", "estimate"}


def _module(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts).removesuffix(".__init__")


def _modules() -> dict[str, Path]:
    return {_module(p): p for p in PKG.rglob("*.py")}


def _imports(path: Path, known: set[str]) -> set[str]:
    """The ``laser_ci`` modules ``path`` imports (``from laser_ci.x import y`` counts as
    ``laser_ci.x.y`` when that is a module, else ``laser_ci.x``)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "laser_ci":
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out.add(sub if sub in known else node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "laser_ci"}
    return out & known


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {m: _imports(p, known) - {m} for m, p in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "laser_ci"


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_one_that_imports_it_back() -> None:
    assert _cycles(_graph()) == []


def test_dependencies_point_from_the_surfaces_down_to_the_workflow_model() -> None:
    wrong = []
    for mod, deps in _graph().items():
        src = _layer(mod)
        if src in ("laser_ci", "__main__"):
            continue
        for dep in deps:
            dst = _layer(dep)
            if dst == src or dep == "laser_ci":  # the package itself: the version string
                continue
            if LAYERS.index(dst) > LAYERS.index(src):
                wrong.append(f"{mod} -> {dep}")
    assert wrong == []


def test_the_top_level_holds_only_the_surfaces() -> None:
    top = {p.stem for p in PKG.glob("*.py")}
    assert top == TOP_LEVEL


@pytest.mark.parametrize("package", [p for p in LAYERS if (PKG / p).is_dir()])
def test_each_stage_says_what_enters_and_what_leaves(package: str) -> None:
    doc = ast.get_docstring(ast.parse((PKG / package / "__init__.py").read_text(encoding="utf-8")))
    assert doc and len(doc) > 80
