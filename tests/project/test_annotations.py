"""Every public function, method and property of fairops is fully annotated: each parameter and the return.

The public API is the one ``test_docstrings`` walks (:data:`tests.project.test_docstrings.PUBLIC_API`: the names of
each face's ``__all__``, the public methods and properties of the public classes, ``fairops.mlflow``'s flavor
modules), read from the package, so an object added without its types fails here. For a class the check reads its
``__init__`` when fairops defines one (a dataclass's generated ``__init__`` carries its fields' types); ``self`` and
``cls`` need no annotation. mypy checks that the annotations are right (the faces strictly, see pyproject.toml);
this test checks that they are there, which mypy does not ask of code outside its strict modules.
"""

from __future__ import annotations

import inspect

import pytest

from tests.project.test_docstrings import PUBLIC_API, _code_of, _defined_as


def _checked_function(value):
    """The function whose signature stands for ``value``, or None when fairops wrote none (an inherited
    ``__init__``, an ``Enum``'s)."""
    code = _code_of(value)
    if not inspect.isclass(code):
        return code
    init = vars(code).get("__init__") or next((vars(klass)["__init__"] for klass in code.__mro__[1:]
                                               if "__init__" in vars(klass)), None)
    return init if (getattr(init, "__module__", None) or "").startswith("fairops") else None


def missing_annotations(function) -> list[str]:
    """The parameters of ``function`` without an annotation (``self``, ``cls`` aside), and ``return``."""
    signature = inspect.signature(function)
    missing = [name for name, parameter in signature.parameters.items()
               if name not in ("self", "cls") and parameter.annotation is inspect.Parameter.empty]
    if signature.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


CHECKED = {path: function for path, value in PUBLIC_API.items()
           if (function := _checked_function(value)) is not None}


@pytest.mark.parametrize("path", sorted(CHECKED))
def test_public_object_is_fully_annotated(path):
    missing = missing_annotations(CHECKED[path])
    assert not missing, f"{path} ({_defined_as(PUBLIC_API[path])}) lacks annotations for: {', '.join(missing)}"


def test_the_walk_checks_functions_methods_properties_and_constructors():
    expected = {
        "fairops.metrics.auc_s",  # a function
        "fairops.metrics.Task.evaluate",  # a method
        "fairops.metrics.GroupRates.tpr",  # a property
        "fairops.fairlof.FairLOF",  # a class, by its __init__
        "fairops.tracking.FairnessTrackingCallback.client",  # a property of the session, handed on
        "fairops.tracking.FairnessTrackingCallback.rung_history",  # a static method
        "fairops.mlflow.classifier.load_model",  # a bound method shared by the flavor modules
    }
    assert expected <= set(CHECKED)
    assert len(CHECKED) > 200


def _unannotated(rows, sensitive=None):
    return rows


def _half_annotated(rows: list[int], sensitive=None) -> list[int]:
    return rows


def _annotated(rows: list[int], sensitive: dict[str, list[str]] | None = None) -> list[int]:
    return rows


class _Planted:
    def __init__(self, rows: list[int]):
        self.rows = rows

    @property
    def first(self):
        return self.rows[0]


def test_the_check_refuses_a_planted_unannotated_function():
    assert missing_annotations(_unannotated) == ["rows", "sensitive", "return"]
    assert missing_annotations(_half_annotated) == ["sensitive"]
    assert missing_annotations(_annotated) == []
    assert missing_annotations(_Planted.__init__) == ["return"]
    assert missing_annotations(_checked_function(vars(_Planted)["first"])) == ["return"]
