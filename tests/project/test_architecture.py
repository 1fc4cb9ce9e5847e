"""The package's layering, read from the source: no import cycles, and each layer imports only downwards.

Every ``import`` statement counts, including those inside functions, so a lazy import cannot hide a cycle.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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
    assert "fairops.fairband._schedule" in GRAPH["fairops.fairband._sampler"]
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
    ("fairops.errors",),
    ("fairops", "fairops._asgi", "fairops._column_names", "fairops._param_checks", "fairops._state_checks",
     "fairops._typing", "fairops._versions", "fairops._store_lock"),
    ("fairops.metrics",),
    ("fairops.datasets", "fairops.fairband", "fairops.scaff", "fairops.fairlof", "fairops.reductions"),
    ("fairops.models",),
    ("fairops.tuning", "fairops.mlflow"),
    ("fairops.tracking",),
    ("fairops.registry",),
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


def _annotation_only(tree: ast.Module) -> set[int]:
    """Ids of the nodes inside ``if TYPE_CHECKING:`` blocks, which name types for annotations and never run."""
    return {id(inner) for node in ast.walk(tree)
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
            for statement in node.body for inner in ast.walk(statement)}


def _third_party_users(library: str) -> set[str]:
    """Packages that import ``library`` when they run (an annotation naming its types is no use of it)."""
    users = set()
    for module, path in MODULES.items():
        if path is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _annotation_only(tree)
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            if any(name == library or name.startswith(library + ".") for name in names):
                users.add(_package(module))
    return users


@pytest.mark.parametrize("library, allowed", [
    ("optuna", {"fairops.fairband", "fairops.tuning", "fairops.tracking", "fairops.jobs"}),
    ("mlflow", {"fairops.mlflow", "fairops.tracking", "fairops.registry", "fairops.jobs"}),
])
def test_optuna_and_mlflow_stay_in_their_packages(library, allowed):
    users = _third_party_users(library)
    assert users, f"no module imports {library}: the check reads nothing"
    assert sorted(users - allowed) == []


def test_only_an_import_under_type_checking_is_left_out():
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import optuna\nimport mlflow\n"
                     "if DEBUG:\n    import sklearn\n")
    skipped = _annotation_only(tree)
    imports = [node.names[0].name for node in ast.walk(tree)
               if isinstance(node, ast.Import) and id(node) not in skipped]
    assert sorted(imports) == ["mlflow", "sklearn"]


def _long_functions(limit: int = 120) -> list[str]:
    """Functions and methods in ``fairops/`` longer than ``limit`` lines (signature to last line, docstring
    included): a function that long is a tangle to look at, whatever its module's size."""
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


# The modules a user imports: the package faces (``__init__``), the command, the exceptions, and MLflow's
# flavor modules (named by a saved model's MLmodel, as ``mlflow.sklearn`` is). Everything else is the private
# implementation behind them, ``_``-prefixed, as in scikit-learn and Optuna.
PUBLIC_MODULES = {
    "fairops.cli", "fairops.errors",
    "fairops.mlflow.answer", "fairops.mlflow.classifier", "fairops.mlflow.fairlof", "fairops.mlflow.flavors",
    "fairops.mlflow.loader", "fairops.mlflow.scaff", "fairops.mlflow.sealing",
}


def _public_modules() -> set[str]:
    """Modules (not package faces) with no ``_``-prefixed part in their dotted name."""
    return {module for module, path in MODULES.items()
            if path is not None and path.name != "__init__.py"
            and not any(part.startswith("_") for part in module.split("."))}


def test_only_the_named_modules_are_public():
    assert sorted(_public_modules() - PUBLIC_MODULES) == []
    assert sorted(PUBLIC_MODULES - _public_modules()) == []


def test_most_modules_are_private():
    modules = [module for module, path in MODULES.items() if path is not None]
    private = [module for module in modules if any(part.startswith("_") for part in module.split("."))]
    assert len(private) >= 0.6 * len(modules), f"{len(private)} of {len(modules)} modules are private"


def test_no_function_is_over_120_lines():
    assert _long_functions() == []
    assert _long_functions(limit=40), "the check reads no function at all"


# A private API of Optuna or MLflow only behind one of at most three guarded modules, with a test and the
# versions it was written for (its WRITTEN_FOR, checked with fairops._versions.in_range), a range wider than one
# minor release so that the next minor release does not turn it off.
GUARDED = {
    "fairops.fairband._optuna_internals",
    "fairops.mlflow._mlflow_internals",
    "fairops.tracking._ui_shared_view",
}
# Whose object an attribute is read from cannot be told from the source, so the private attributes of Optuna's
# and MLflow's objects (studies, trials, storages, clients) that fairops reads are refused by name, on any
# object but self.
PRIVATE_ATTRIBUTES = {"_storage", "_study_id", "_trial_id", "_get_trials", "_backend", "_thread_lock",
                      "_sync_with_backend", "_set_trial_attr_without_commit", "_tracking_client"}
LIBRARIES = ("optuna", "mlflow")
# a private module or name of either library spelled out in a string, e.g. a logger's name
_PRIVATE_PATH = re.compile(r"\b(?:optuna|mlflow)(?:\.\w+)*\._\w+")


def _is_private(name: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in name.split("."))


def _library_name(name: str) -> bool:
    return any(name == library or name.startswith(library + ".") for library in LIBRARIES)


def _private_uses(source: str) -> list[str]:
    """Private names of Optuna or MLflow that ``source`` imports, reads or spells out (docstrings aside)."""
    tree = ast.parse(source)
    imported: dict[str, str] = {}  # local name -> the library module or name it stands for
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in (a for a in node.names if _library_name(a.name)):
                uses += [alias.name] if _is_private(alias.name) else []
                imported[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                    alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and not node.level and _library_name(node.module or ""):
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                uses += [name] if _is_private(name) else []
                imported[alias.asname or alias.name] = name
    docstrings = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}  # read as part of a longer name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            chain, base = [node.attr], node.value
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            chain.reverse()
            if isinstance(base, ast.Name) and base.id in imported:
                name = ".".join([imported[base.id], *chain])
                uses += [name] if _is_private(name) else []
                continue
            own = isinstance(base, ast.Name) and base.id in ("self", "cls")  # self._storage is fairops' own
            uses += [f"<object>.{part}" for i, part in enumerate(chain)
                     if part in PRIVATE_ATTRIBUTES and not (own and i == 0)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            uses += _PRIVATE_PATH.findall(node.value) and [_PRIVATE_PATH.search(node.value).group(0)]
    return sorted(set(uses))


def test_the_private_api_check_sees_planted_uses():
    planted = '''
"""A docstring may name optuna.storages._rdb."""
import optuna.storages._rdb.models
import mlflow
from optuna.storages import _heartbeat
from optuna._experimental import experimental_func as ok
from mlflow.tracking._tracking_service.utils import _resolve_tracking_uri
from mlflow.utils import environment

def f(study, trial):
    mlflow.tracking._tracking_service.utils.x()
    environment._CONDA_ENV_FILE_NAME
    study._storage.get_all_trials(0), trial._trial_id, optuna.__version__
    logging.getLogger("optuna.study._optimize")
    self._trial_id  # fairops' own attribute of the same name
'''
    assert _private_uses(planted) == [
        "<object>._storage", "<object>._trial_id", "mlflow.tracking._tracking_service.utils._resolve_tracking_uri",
        "mlflow.tracking._tracking_service.utils.x", "mlflow.utils.environment._CONDA_ENV_FILE_NAME",
        "optuna._experimental.experimental_func", "optuna.storages._heartbeat", "optuna.storages._rdb.models",
        "optuna.study._optimize"]


def test_private_apis_of_optuna_and_mlflow_stay_in_the_guarded_modules():
    uses = {module: _private_uses(path.read_text(encoding="utf-8")) for module, path in MODULES.items()
            if path is not None}
    assert {module: found for module, found in uses.items() if found and module not in GUARDED} == {}
    assert any(uses[module] for module in GUARDED), "no guarded module uses a private name: the check reads nothing"


@pytest.mark.parametrize("module", sorted(GUARDED))
def test_each_guarded_module_states_the_versions_it_was_written_for(module):
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    assigned = {target.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                if isinstance(target, ast.Name)}
    assert "WRITTEN_FOR" in assigned
    assert "fairops._versions" in GRAPH[module]  # its range is checked with in_range


def _declares_a_range(module: str) -> bool:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    return any(isinstance(target, ast.Name) and target.id == "WRITTEN_FOR"
               for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
               for target in (node.targets if isinstance(node, ast.Assign) else [node.target]))


def test_at_most_three_modules_declare_a_version_range_none_of_one_minor_release():
    declaring = {module for module, path in MODULES.items() if path is not None and _declares_a_range(module)}
    assert declaring == GUARDED and len(GUARDED) <= 3
    for module in sorted(GUARDED):
        low, high = importlib.import_module(module).WRITTEN_FOR
        assert high > (low[0], low[1] + 1), f"{module} is written for one minor release only: {low} to {high}"
