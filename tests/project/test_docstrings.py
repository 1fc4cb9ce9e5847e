"""Every public function, class, method and property of fairops has a numpydoc docstring, checked by numpydoc.

The public API is read from the package, never listed by hand, so a public object added without its
sections fails here:

- every module of ``fairops/`` whose dotted name has no part starting with ``_`` and whose source assigns
  ``__all__`` declares its public names (today the package faces ``fairops.metrics``, ``fairops.fairband``, ...,
  the job packages ``fairops.jobs._outliers`` and ``fairops.jobs._tune``, and the modules
  ``fairops.fairband.sampler`` and ``fairops.tracking._callback``); ``fairops`` itself has no ``__all__``;
- a name of ``__all__`` bound to a module (``fairops.mlflow``'s flavor modules) stands for that module's
  public names: its own ``__all__``, else the names its source binds itself (``def``, ``class``,
  assignment; not what it imports) that do not start with ``_``;
- of those, the functions, classes and bound methods whose code is fairops' are checked; constants and
  other data are documented by their ``#:`` comments, which numpydoc does not read;
- a class brings its properties and its methods (public names, and ``__call__``) defined in fairops,
  including those a fairops base class gives it (``FairbandSampler``'s Optuna hooks, the reductions'
  ``predict``), never those inherited from scikit-learn, Optuna or ``object``, nor the metadata-routing
  methods (``set_fit_request``, ...) scikit-learn writes into an estimator class.

One object reached under several names (``FairbandSampler`` from ``fairops.fairband`` and from
``fairops.fairband.sampler``, one flavor's ``load_model`` shared by three modules) is checked once, under
the first name in module order. ``EXCLUDED`` would name an object left alone, by where it is defined, with
its reason; it names none.

Each docstring goes through ``numpydoc.validate.validate`` (the validator scikit-learn runs on its own API in
``sklearn/tests/test_docstrings.py``), and these of its error codes fail the test:

- ``GL08``: no docstring at all;
- ``GL06``, ``GL07``: an unknown or misordered section header (a misspelled ``Return`` hides its contents
  from the checks below);
- ``SS01``, ``SS03``, ``SS06``: a summary line, ending with a period, that fits on one line;
- ``PR01``, ``PR02``, ``PR03``: the ``Parameters`` section names every parameter of the signature, nothing
  else, in the signature's order;
- ``PR04``, ``PR07``, ``PR10``: each parameter has a type and a description, written ``name : type``;
- ``RT01``, ``RT03``: a function that returns a value has a ``Returns`` section, described;
- ``YD01``: a generator has a ``Yields`` section.

Left out as matters of taste, which the docstrings do not follow: the summary's verb form (``SS05``), capital
letters and final periods of entries (``PR08``, ``PR09``, ``RT04``, ``RT05``), the position of the closing
quotes (``GL02``), and the ``See Also``, ``Examples`` and extended-summary sections being present
(``SA01``, ``EX01``, ``ES01``: the existing doctests are in ``Examples`` sections, but not every object
needs one). For an ``Enum``, numpydoc reads the signature of ``EnumType.__call__`` (a member's lookup by
value, or the functional API making a new enum), which is not fairops' to document: its parameter codes
are not applied.
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
from pathlib import Path

import pytest
from numpydoc.docscrape import get_doc_object
from numpydoc.validate import Validator, validate

ROOT = Path(__file__).resolve().parents[2]

CHECKED = ("GL06", "GL07", "GL08", "SS01", "SS03", "SS06", "PR01", "PR02", "PR03", "PR04", "PR07", "PR10",
           "RT01", "RT03", "YD01")
PARAMETER_CODES = ("PR01", "PR02", "PR03")  # not applied to an Enum's signature (see the module docstring)

# Objects the check leaves alone, by where they are defined, each with the reason.
EXCLUDED: dict[str, str] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _bound_names(node: ast.stmt) -> list[str]:
    """The names a top-level statement binds by ``def``, ``class`` or assignment."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
        else []
    return [target.id for target in targets if isinstance(target, ast.Name)]


def _top_level_names(path: Path) -> list[str]:
    return [name for node in ast.parse(path.read_text(encoding="utf-8")).body for name in _bound_names(node)]


def declaring_modules() -> list[str]:
    """Public modules of fairops whose source assigns ``__all__``, sorted."""
    found = []
    for path in sorted((ROOT / "fairops").rglob("*.py")):
        name = _module_name(path)
        if not any(part.startswith("_") for part in name.split(".")) and "__all__" in _top_level_names(path):
            found.append(name)
    return sorted(found)


def _public_names(module) -> list[str]:
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [name for name in _top_level_names(Path(module.__file__)) if not name.startswith("_")]


def _is_fairops_code(value) -> bool:
    return (inspect.isclass(value) or inspect.isfunction(value) or inspect.ismethod(value)) and \
        (getattr(value, "__module__", None) or "").startswith("fairops.")


def _members(cls) -> list[tuple[str, object]]:
    """(name, attribute as stored) of the properties and methods ``cls`` has from fairops classes.

    What scikit-learn writes into a fairops class (the ``set_fit_request`` methods of metadata routing) is
    scikit-learn's code, and left out as inherited methods are.
    """
    seen: set[str] = set()
    found = []
    for klass in cls.__mro__:
        if not klass.__module__.startswith("fairops."):
            continue
        for name, value in vars(klass).items():
            if name in seen or (name.startswith("_") and name != "__call__"):
                continue
            resolved = value.fget if isinstance(value, property) else getattr(cls, name, None)
            if (isinstance(value, property) or inspect.isroutine(resolved)) and \
                    (getattr(resolved, "__module__", None) or "").startswith("fairops."):
                seen.add(name)
                found.append((name, value))
    return found


def _code_of(value):
    """The function (or class) behind a member or exported name, to tell one object reached twice."""
    if isinstance(value, property):
        return value.fget
    return inspect.unwrap(getattr(value, "__func__", value))


def _defined_as(value) -> str:
    code = _code_of(value)
    return f"{getattr(code, '__module__', '')}.{getattr(code, '__qualname__', '')}"


def public_api() -> dict[str, object]:
    """Import path -> object of everything the check validates (see the module docstring)."""
    objects: dict[str, object] = {}
    seen: set[int] = set()

    def add(path: str, value) -> None:
        if id(_code_of(value)) not in seen:
            seen.add(id(_code_of(value)))
            objects[path] = value

    for module_name in declaring_modules():
        module = importlib.import_module(module_name)
        queue = [(f"{module_name}.{name}", getattr(module, name)) for name in module.__all__]
        while queue:
            path, value = queue.pop(0)
            if inspect.ismodule(value):
                queue[:0] = [(f"{path}.{name}", getattr(value, name)) for name in _public_names(value)]
            elif _is_fairops_code(value):
                add(path, value)
                if inspect.isclass(value):
                    for name, member in _members(value):
                        add(f"{path}.{name}", member)
    return objects


class _Validator(Validator):
    """numpydoc's validator, loading the object by its import path, that also reads a lambda's property.

    ``property(lambda self: ..., doc=...)`` has no ``def`` line in its source, where numpydoc looks for
    ``# numpydoc ignore`` comments and raises ``StopIteration`` instead of finding none.
    """

    def __init__(self, obj_name: str) -> None:
        super().__init__(get_doc_object(Validator._load_obj(obj_name)))

    @property
    def source_file_def_line(self):
        try:
            return super().source_file_def_line
        except StopIteration:
            return None


def docstring_errors(path: str, value=None) -> list[str]:
    """``code: message`` of each checked error in the docstring of the object at import ``path``."""
    result = validate(path, validator_cls=_Validator)
    codes = CHECKED
    if inspect.isclass(value) and issubclass(value, enum.Enum):
        codes = tuple(code for code in CHECKED if code not in PARAMETER_CODES)
    return [f"{code}: {message}" for code, message in result["errors"] if code in codes]


PUBLIC_API = public_api()


@pytest.mark.parametrize("path", [path for path, value in PUBLIC_API.items() if _defined_as(value) not in EXCLUDED])
def test_public_docstring_has_numpydoc_sections(path):
    errors = docstring_errors(path, PUBLIC_API[path])
    assert not errors, f"{path} ({_defined_as(PUBLIC_API[path])}):\n  " + "\n  ".join(errors)


def test_the_walk_reaches_every_kind_of_public_object():
    expected = {
        "fairops.metrics.auc_s",  # a function of a package face
        "fairops.metrics.Task.evaluate",  # a method
        "fairops.metrics.GroupRates.tpr",  # a property
        "fairops.fairband.FairbandSampler.before_trial",  # an Optuna hook a fairops base class gives
        "fairops.fairlof.FairLOF.fit_predict",  # a method scikit-learn's available_if wraps
        "fairops.tracking.FairnessTrackingCallback.__call__",  # a face imported on use
        "fairops.mlflow.scaff.save_model",  # a module named in a face's __all__
        "fairops.mlflow.classifier.load_model",  # a bound method shared by the flavor modules
    }
    assert expected <= set(PUBLIC_API)
    assert not {"fairops.metrics._inputs.encode_sensitive", "fairops.scaff.SCAFFClassifier.score",
                "fairops.scaff.SCAFFClassifier.get_params", "fairops.scaff.SCAFFClassifier.set_fit_request"} \
        & set(PUBLIC_API)
    assert len(PUBLIC_API) > 200


def _undocumented(rows, sensitive):
    return rows


def _documented(rows, sensitive):
    """Keep the rows.

    Parameters
    ----------
    rows : list
        The rows.
    sensitive : dict
        Their groups.

    Returns
    -------
    list
        The rows.
    """
    return rows


def test_the_check_refuses_what_lacks_its_sections():
    codes = {error.split(":")[0] for error in docstring_errors(f"{__name__}._undocumented")}
    assert codes == {"GL08"}
    assert docstring_errors(f"{__name__}._documented") == []
    _undocumented.__doc__ = "Keep the rows."
    try:
        codes = {error.split(":")[0] for error in docstring_errors(f"{__name__}._undocumented")}
    finally:
        _undocumented.__doc__ = None
    assert codes == {"PR01", "RT01"}


def test_each_exclusion_names_an_object_and_says_why():
    # none today; an entry added later must still name an object and give its reason
    for defined_as, reason in EXCLUDED.items():
        module_name, _, name = defined_as.rpartition(".")
        assert callable(getattr(importlib.import_module(module_name), name)) and reason


def test_no_public_docstring_keeps_a_placeholder():
    """``{{ name }}`` lines are formatted in at import (fairops.mlflow._param_docs); none reaches ``help()``."""
    left = [path for path, value in PUBLIC_API.items() if "{{" in (inspect.getdoc(_code_of(value)) or "")]
    assert not left


@pytest.mark.parametrize("flavor", ["scaff", "fairlof", "classifier"])
def test_each_flavor_documents_the_shared_parameters_in_the_same_words(flavor):
    from textwrap import indent

    from fairops.mlflow._param_docs import SHARED

    module = importlib.import_module(f"fairops.mlflow.{flavor}")
    for function in (module.save_model, module.log_model):
        shared = [name for name in inspect.signature(function).parameters if name in SHARED]
        assert shared, function
        for name in shared:
            assert indent(SHARED[name], "    ") in function.__doc__, (flavor, function.__name__, name)
        assert "Parameters\n    ----------" in function.__doc__ and "Returns\n    -------" in function.__doc__
