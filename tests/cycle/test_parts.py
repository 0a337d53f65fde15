"""The cycle is parts composed (docs/controller.md, "Parts"): the wing's imports form no
circle, no class of the wing inherits another of the wing's (but the published models, which
share their common fields), and no file of the wing is over 500 lines."""

from __future__ import annotations

import ast
from pathlib import Path

WING = Path(__file__).resolve().parents[2] / "controller" / "cycle"
PACKAGE = "controller.cycle"
#: the published models (events, status) share a base of their common fields: data, not parts
MODELS = "reports"
MAX_LINES = 500


def modules() -> dict[str, ast.Module]:
    return {path.stem: ast.parse(path.read_text()) for path in sorted(WING.glob("*.py"))}


def wing_imports(tree: ast.Module) -> set[str]:
    """The wing's modules a module imports."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module is not None:
            if node.module == PACKAGE:
                found.update(alias.name for alias in node.names)
            elif node.module.startswith(PACKAGE + "."):
                found.add(node.module.removeprefix(PACKAGE + "."))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    found.add(alias.name.removeprefix(PACKAGE + "."))
    return found


def circle(graph: dict[str, set[str]]) -> list[str] | None:
    """A circle of imports in ``graph``, if there is one."""
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> list[str] | None:
        if name in path:
            return [*path[path.index(name) :], name]
        if name in done:
            return None
        for other in sorted(graph.get(name, ())):
            found = visit(other, [*path, name])
            if found is not None:
                return found
        done.add(name)
        return None

    for name in sorted(graph):
        found = visit(name, [])
        if found is not None:
            return found
    return None


def test_the_wings_imports_form_no_circle() -> None:
    graph = {name: wing_imports(tree) for name, tree in modules().items()}
    assert circle(graph) is None, " -> ".join(circle(graph) or [])
    # every part is held by the controller, and none of them knows it
    assert not [name for name, uses in graph.items() if "controller" in uses]


def test_the_circle_check_sees_a_circle() -> None:
    assert circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert circle({"a": {"b"}, "b": set()}) is None


def test_no_part_inherits_another() -> None:
    trees = modules()
    classes = {
        node.name
        for tree in trees.values()
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
    }
    inherited = [
        f"{name}.{node.name}({ast.unparse(base)})"
        for name, tree in trees.items()
        if name != MODELS
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for base in node.bases
        if ast.unparse(base).split(".")[-1] in classes
    ]
    assert inherited == []


def test_no_file_of_the_wing_is_over_500_lines() -> None:
    lengths = {path.name: len(path.read_text().splitlines()) for path in WING.glob("*.py")}
    assert {name: n for name, n in lengths.items() if n > MAX_LINES} == {}
