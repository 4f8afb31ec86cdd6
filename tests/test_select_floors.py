"""`ckast.select` is a house of floors: each module imports only modules of its own floor or of floors below,
and the imports within a floor form no circle. Every import counts, at the top of a module or inside a function;
only `if TYPE_CHECKING:` imports, which never run, are left out.

`FLOORS` is the table: every module of ckast/select is on exactly one floor, so a new module must be placed.
An import that runs back up (a model importing the report, say) fails `test_imports_go_down`; the synthetic
graphs of `test_check_refuses_*` show the check catches one.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SELECT = ROOT / "ckast" / "select"

FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("problems: the problem types", ("", "problem")),
    ("the selection language", ("expr",)),
    ("features, and what a library serves (applicability, validity, reading problems, the library)",
     ("features", "serving")),
    ("models", ("models",)),
    ("tables of kernels and timings", ("tables",)),
    ("ranking and evaluation", ("ranking",)),
    ("reports and workloads", ("reports",)),
    ("C++ lowering", ("cxx",)),
)
"""(floor, its packages and modules) from the ground up, named relative to `ckast.select` ("" is the package's
`__init__`): a module stands on the floor of its package."""


def modules() -> dict[str, Path]:
    """Every module of ckast/select by its name relative to `ckast.select`."""
    out = {}
    for path in sorted(SELECT.rglob("*.py")):
        parts = list(path.relative_to(SELECT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> Iterable[ast.Import | ast.ImportFrom]:
    """Every import of `tree`, at any depth, except those under `if TYPE_CHECKING:`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif not (isinstance(node, ast.If) and _type_checking(node)):
            yield from _imports(node)


def imported(name: str, path: Path, known: Iterable[str]) -> set[str]:
    """The ckast.select modules module `name` (at `path`) imports (`from pkg import module` names the module)."""
    known = set(known)
    package = ["ckast", "select", *filter(None, name.split("."))]
    if path.name != "__init__.py":
        package.pop()
    targets = []
    for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets += [a.name for a in node.names]
            continue
        base = package[:len(package) - node.level + 1] if node.level else []
        module = ".".join(base + ([node.module] if node.module else []))
        targets += [f"{module}.{a.name}" for a in node.names]
    out = set()
    for target in targets:
        if target != "ckast.select" and not target.startswith("ckast.select."):
            continue
        rel = target.removeprefix("ckast.select").removeprefix(".")
        while rel not in known:  # a name imported from a module: the module
            rel = rel.rpartition(".")[0]
        if rel != name:
            out.add(rel)
    return out


@functools.cache
def graph() -> dict[str, set[str]]:
    """Module -> the ckast.select modules it imports."""
    mods = modules()
    return {name: imported(name, path, mods) for name, path in mods.items()}


def placed() -> dict[str, int]:
    """Package or module -> its floor."""
    return {m: i for i, (_, mods) in enumerate(FLOORS) for m in mods}


def floor_of() -> dict[str, int]:
    """Every module of ckast/select -> the floor of its package (or its own entry, for a module at the top)."""
    table = placed()
    return {name: table[name] if name in table else table[name.partition(".")[0]] for name in modules()}


def violations(edges: Mapping[str, Iterable[str]], floors: Mapping[str, int]) -> list[str]:
    """Imports that run back up (to a higher floor), and circles within a floor."""
    out = [f"{a} (floor {floors[a]}) imports {b} (floor {floors[b]}): an import back up"
           for a in sorted(edges) for b in sorted(edges[a]) if floors[b] > floors[a]]
    same = {a: {b for b in edges[a] if floors[b] == floors[a]} for a in edges}
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(same[node]):
            if state.get(nxt) == 1:
                out.append("a circle: " + " -> ".join(path[path.index(nxt):] + [node, nxt]))
            elif nxt not in state:
                visit(nxt, path + [node])
        state[node] = 2

    for node in sorted(same):
        if node not in state:
            visit(node, [])
    return out


def test_every_module_is_on_one_floor():
    """Each entry of the table is a package or module of ckast/select, on one floor; each module is in one."""
    entries = [m for _, mods in FLOORS for m in mods]
    assert len(entries) == len(set(entries)), "an entry on two floors"
    mods = modules()
    assert all(e in mods for e in entries), "an entry of the table that is not a package or module of ckast/select"
    homeless = [m for m in mods if m not in placed() and m.partition(".")[0] not in placed()]
    assert homeless == [], "place each module of ckast/select on a floor (a subpackage of its floor)"


def test_imports_go_down():
    assert violations(graph(), floor_of()) == []


def test_imports_are_found():
    """The graph sees imports at the top, inside functions and relative ones (and skips TYPE_CHECKING's)."""
    edges = graph()
    assert "problem" in edges["expr.nodes"]  # from ckast.select.problem import ...
    assert "serving.validity" in edges["serving.problem_read"]  # inside a function: from .validity import check
    assert "models.derived" in edges["models.inputs"]  # relative: from .derived import ...
    assert "features.table" in edges["cxx.lower_expr"]  # from ckast.select.features.table import ...
    assert "tables.kernel_table" not in edges["tables.timings"]  # under `if TYPE_CHECKING:` only


@pytest.mark.parametrize("edges, expected", [
    ({"low": {"high"}, "high": set()}, "low (floor 0) imports high (floor 1): an import back up"),
    ({"a": {"b"}, "b": {"a"}, "high": set()}, "a circle: a -> b -> a"),
])
def test_check_refuses_a_synthetic_graph(edges, expected):
    """An import back up, or a circle within a floor, is reported."""
    floors = {"low": 0, "a": 0, "b": 0, "high": 1}
    assert violations(edges, floors) == [expected]


def test_check_refuses_an_import_back_up_in_a_function(tmp_path):
    """A function-level import from a higher floor, in a module parsed as the real ones are, is reported."""
    path = tmp_path / "problem.py"
    path.write_text("def label(p):\n    from .reports.report import problem_label\n    return problem_label(p)\n")
    edges = graph() | {"problem": imported("problem", path, modules())}
    assert violations(edges, floor_of()) == ["problem (floor 0) imports reports.report (floor 6): an import back up"]
