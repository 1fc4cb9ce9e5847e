"""What the README, the docs and the examples import comes from the package faces, and the faces hold no internals."""

import ast
import importlib
import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FACES = ["datasets", "fairband", "fairlof", "metrics", "mlflow", "models", "reductions", "registry", "scaff",
         "tracking", "tuning"]
# moved out of the faces: the slot bookkeeping of a distributed run, the metrics' encoded group codes
INTERNALS = {"fairband": ["SlotBoard", "fits_of_run"], "metrics": ["EncodedGroups", "encode_sensitive"]}
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def user_facing_code() -> list[tuple[str, str]]:
    """(where, source) of every Python block of the README and docs/, and of every example script."""
    sources = [(str(path.relative_to(ROOT)), path.read_text()) for path in sorted((ROOT / "examples").glob("*.py"))]
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for number, block in enumerate(PYTHON_BLOCK.findall(page.read_text())):
            sources.append((f"{page.relative_to(ROOT)} block {number}", block))
    return sources


def fairops_imports(source: str) -> list[tuple[str, list[str]]]:
    """(module, names) of each ``from fairops... import names`` in ``source``."""
    return [(node.module, [alias.name for alias in node.names]) for node in ast.walk(ast.parse(textwrap.dedent(source)))
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fairops")]


def test_the_import_reader_sees_a_deep_import():
    assert fairops_imports("from fairops.tracking._callback import FairnessTrackingCallback as T\nimport os") == \
        [("fairops.tracking._callback", ["FairnessTrackingCallback"])]


def test_user_facing_code_has_python_to_read():
    where = [w for w, _ in user_facing_code()]
    assert any(w.startswith("README.md") for w in where) and any(w.startswith("examples/") for w in where)


@pytest.mark.parametrize("where, source", user_facing_code(), ids=lambda value: value if "\n" not in value else "")
def test_user_facing_code_imports_only_from_package_faces(where, source):
    for module, names in fairops_imports(source):
        assert module.count(".") == 1 and module.split(".")[1] in FACES, \
            f"{where}: 'from {module} import ...' reaches past a package face"
        face = importlib.import_module(module)
        assert set(names) <= set(face.__all__), f"{where}: {sorted(set(names) - set(face.__all__))} not in {module}"


@pytest.mark.parametrize("package", FACES)
def test_each_face_names_only_public_objects_of_fairops(package):
    # The implementation is private (scikit-learn's way: LogisticRegression lives in linear_model._logistic);
    # the face names public objects, each defined in fairops.
    face = importlib.import_module(f"fairops.{package}")
    assert face.__all__, f"fairops.{package} has an empty __all__"
    for name in face.__all__:
        value = getattr(face, name)  # every listed name resolves
        home = getattr(value, "__module__", None) or getattr(value, "__name__", "")
        assert not name.startswith("_") and (home == "" or home.startswith("fairops.")), \
            f"fairops.{package}.{name} comes from {home}, outside fairops"
    for name in INTERNALS.get(package, []):
        assert name not in face.__all__ and not hasattr(face, name), f"fairops.{package} exports the internal {name}"


def test_the_tracking_face_gives_the_objects_the_readme_uses():
    import fairops.tracking
    from fairops.registry._registration import register_best
    from fairops.tracking._callback import FairnessTrackingCallback

    assert fairops.tracking.FairnessTrackingCallback is FairnessTrackingCallback
    assert fairops.registry.register_best is register_best
    with pytest.raises(AttributeError, match="no attribute 'SlotBoard'"):
        fairops.tracking.SlotBoard  # noqa: B018


def test_the_registry_names_moved_from_tracking_still_resolve_there_with_a_warning():
    import fairops.registry
    import fairops.tracking

    for name in fairops.registry.__all__:
        with pytest.warns(FutureWarning, match=f"fairops.tracking.{name} moved to fairops.registry.{name}"):
            assert getattr(fairops.tracking, name) is getattr(fairops.registry, name)
    assert not set(fairops.registry.__all__) & set(fairops.tracking.__all__)
