"""The package's layering, read from the source: no import cycles, and each layer imports only downwards.

Every ``import`` statement counts, including those inside functions, so a lazy import cannot hide a cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module_names() -> dict[str, Path | None]:
    modules: dict[str, Path | None] = {}
    for path in (ROOT / "fairops").rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    for kernel in (ROOT / "cython_ext").glob("*/*.pyx"):  # compiled into fairops.<package>.<kernel>
        modules[f"fairops.{kernel.parent.name}.{kernel.stem}"] = None
    return modules


MODULES = _module_names()


def _owning_module(name: str) -> str | None:
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in MODULES else None


def _imported_names(module: str, path: Path, node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([node.module] if node.module else []))
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]


def _import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        graph[module] = set()
        if path is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name in _imported_names(module, path, node):
                    target = _owning_module(name) if name.startswith("fairops") else None
                    if target and target != module:
                        graph[module].add(target)
    return graph


GRAPH = _import_graph()


def _reachable(start: str) -> set[str]:
    seen, todo = set(), [m for m in GRAPH if m == start or m.startswith(start + ".")]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(GRAPH[module])
    return seen


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_graph_sees_real_imports():
    assert "fairops.fairband.schedule" in GRAPH["fairops.fairband.sampler"]
    assert "fairops.scaff._tree" in MODULES and MODULES["fairops.scaff._tree"] is None  # a compiled kernel
    assert "fairops.scaff._tree" in GRAPH["fairops.scaff._native"]


def _unresolved_imports() -> list[tuple[str, str]]:
    """``from fairops... import`` / ``from .x import`` statements naming no module (e.g. left by a move)."""
    missing = []
    for module, path in MODULES.items():
        if path is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not (node.level or (node.module or "").startswith("fairops")):
                continue
            # the module part alone ("from .x import y" -> "<package>.x"), whatever the names imported
            named = _imported_names(module, path, ast.ImportFrom(module=node.module, level=node.level,
                                                                 names=[ast.alias(name="")]))[0].rstrip(".")
            if named not in MODULES:
                missing.append((module, named))
    return missing


def test_every_import_names_a_real_module():
    assert _unresolved_imports() == []


def test_cycle_finder_finds_a_planted_cycle():
    planted = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(planted) == [["a", "b", "c"]]


def test_no_import_cycles():
    assert _cycles(GRAPH) == []


# Floors, lowest first: a package imports only from floors below its own (never from a sibling on
# its floor), so each floor can be read, tested and replaced without the ones above it.
FLOORS = (
    ("fairops", "fairops._asgi", "fairops._column_names", "fairops._param_checks", "fairops._state_checks",
     "fairops._versions", "fairops.store_lock"),
    ("fairops.metrics",),
    ("fairops.datasets", "fairops.fairband", "fairops.scaff", "fairops.fairlof", "fairops.reductions"),
    ("fairops.models",),
    ("fairops.tuning", "fairops.mlflow"),
    ("fairops.tracking",),
    ("fairops.jobs",),
    ("fairops.cli",),
)
FLOOR_OF = {package: level for level, packages in enumerate(FLOORS) for package in packages}


def _package(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2])


def test_every_package_has_a_floor():
    assert sorted({_package(m) for m in MODULES} - set(FLOOR_OF)) == []


def test_packages_import_only_from_lower_floors():
    upward = sorted((module, target) for module, targets in GRAPH.items() for target in targets
                    if _package(target) != _package(module)
                    and FLOOR_OF[_package(target)] >= FLOOR_OF[_package(module)])
    assert upward == []


def test_the_floor_check_sees_a_planted_upward_import():
    planted = {"fairops.metrics.x": {"fairops.mlflow.loader"}}
    assert [(m, t) for m, ts in planted.items() for t in ts
            if FLOOR_OF[_package(t)] >= FLOOR_OF[_package(m)]] == [("fairops.metrics.x", "fairops.mlflow.loader")]


def _third_party_users(library: str) -> set[str]:
    users = set()
    for module, path in MODULES.items():
        if path is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            if any(name == library or name.startswith(library + ".") for name in names):
                users.add(_package(module))
    return users


@pytest.mark.parametrize("library, allowed", [
    ("optuna", {"fairops.fairband", "fairops.tuning", "fairops.tracking", "fairops.jobs"}),
    ("mlflow", {"fairops.mlflow", "fairops.tracking", "fairops.jobs"}),
])
def test_optuna_and_mlflow_stay_in_their_packages(library, allowed):
    users = _third_party_users(library)
    assert users, f"no module imports {library}: the check reads nothing"
    assert sorted(users - allowed) == []


def _long_functions(limit: int = 80) -> list[str]:
    """Functions and methods in ``fairops/`` longer than ``limit`` lines (signature to last line)."""
    found = []
    for module, path in MODULES.items():
        if path is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > limit:
                    found.append(f"{module}.{node.name}: {length} lines")
    return found


def test_no_function_is_over_80_lines():
    assert _long_functions() == []
    assert _long_functions(limit=40), "the check reads no function at all"
