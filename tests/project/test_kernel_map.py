"""cython_ext/README.md's table says which Python modules call each compiled kernel; the imports agree."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _table() -> dict[str, set[str]]:
    rows = re.findall(r"^\| `(\w+)/(\w+)\.pyx`[^|]*\| `([\w.]+)` \| ([^|]+) \|", (ROOT / "cython_ext" / "README.md")
                      .read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {module: set(re.findall(r"`([\w.]+)`", callers)) for _, _, module, callers in rows}


def _importers(kernel: str) -> set[str]:
    found = set()
    for path in (ROOT / "fairops").rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = ".".join(parts[:-1])
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + [base]).strip(".")
                names = {base} | {f"{base}.{alias.name}" for alias in node.names}
            elif isinstance(node, ast.Import):
                names = {alias.name for alias in node.names}
            else:
                continue
            if kernel in names:
                found.add(module)
    return found


def test_every_kernel_is_in_the_table():
    kernels = {f"fairops.{p.parent.name}.{p.stem}" for p in (ROOT / "cython_ext").glob("*/*.pyx")}
    assert set(_table()) == kernels


def test_each_kernel_is_called_from_the_modules_the_table_names():
    for kernel, callers in _table().items():
        assert _importers(kernel) == callers, kernel
