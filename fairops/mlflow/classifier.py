"""MLflow flavor for the classifiers fairops registers: scikit-learn pipelines, LightGBM, SCAFF on columns.

The model is saved with skops (no pickle) and loaded with :data:`TRUSTED_TYPES`, a list fixed in this module:
a model file naming any other type is refused before anything in it is built. Its
:class:`~fairops.models.InputSchema` is saved beside it and checked on every request, so a served model
answers rows that break it with HTTP 400 and a one-line reason; the signature declares whole-number, boolean
and category columns ``any`` so that MLflow does not cast them first. The model answers one class label per
row, or with ``params={"answer": "scores"}`` its scores frame (:mod:`fairops.mlflow.answer`), with a
``decision`` (:class:`~fairops.models.ServedDecision`) also the decision. Details:
``docs/mlflow/flavors.md``.

>>> import tempfile, numpy as np, pandas as pd, mlflow
>>> from sklearn.linear_model import LogisticRegression
>>> X = pd.DataFrame({"age": [25, 38, 52, 61, 33, 47], "hours": [20.0, 40.0, 45.0, 30.0, 38.0, 50.0]})
>>> model = LogisticRegression().fit(X, [0, 0, 1, 1, 0, 1])
>>> path = tempfile.mkdtemp() + "/model"
>>> _ = save_model(model, path, input_example=X.head(2), pip_requirements=[])
>>> served = mlflow.pyfunc.load_model(path)
>>> served.predict(X).tolist() == model.predict(X).tolist()
True
>>> bool(np.allclose(served.predict(X, params={"answer": "scores"})["probability"], model.predict_proba(X)[:, 1]))
True
>>> served.predict(X.assign(age=40.5))
Traceback (most recent call last):
...
fairops.mlflow._flavor_base.InputRefused: column 'age' must hold whole numbers; row 0 has 40.5
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from ..errors import InputError, RowError
from . import _flavor_base as _flavor, _parse_budget, answer as _answer
from ._param_docs import param, with_param_docs
from ._savable import (  # "x as x": re-exported, this module's face
    TRUSTED_TYPES as TRUSTED_TYPES,
    check_savable as check_savable,
    type_names as type_names,
    untrusted_types as untrusted_types,
)
from .answer import DECISION_OUTPUT as DECISION_OUTPUT, OUTPUT, POSITIVE_OUTPUT  # DECISION_OUTPUT: re-exported
from .sealing import ModelFilesError

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    import pandas as pd
    from mlflow.models import Model, ModelSignature
    from mlflow.models.model import ModelInfo
    from mlflow.types.schema import AnyType
    from sklearn.base import BaseEstimator

    from .._typing import NDArray, StrPath
    from ..models import InputSchema, ServedDecision
    from ..models._schema import Column
    from .sealing import ModelData

FLAVOR_NAME = "fairops_classifier"
_LOADER_MODULE = "fairops.mlflow.classifier"
FORMAT_NAME = "fairops-classifier"
FORMAT_VERSION = 1
MODEL_FILE = "model.skops"
DOCUMENT_FILE = "model.json"
_DOCS = {
    "sk_model": param("sk_model", "classifier",
                      "A fitted two-class classifier with ``predict_proba`` (a pipeline, LightGBM, ...)."),
    "input_schema": param("input_schema", "InputSchema or None, default=None",
                          "The input a served model takes (None: ``input_example``'s schema)."),
    "positive_class": param("positive_class", "object or None, default=None",
                            "The class whose probability is answered (None: ``classes_[1]``)."),
    "decision": param("decision", "ServedDecision or None, default=None",
                      "The decision served with the probability; its groups' columns become required inputs."),
}
# MLflow column types of the schema's kinds (docs/mlflow/flavors.md says why some are "any").
_MLFLOW_TYPES = {"integer": "any", "number": "double", "boolean": "any", "category": "any"}


def signature_of(schema: InputSchema, decision: ServedDecision | None = None,
                 classes: Sequence[object] = (0, 1)) -> ModelSignature:
    """MLflow signature: the schema's columns, the class label each row is answered with, and the ``answer`` param.

    The columns are declared optional to MLflow; the model's schema requires them. The output is what the model answers
    by default, one label of ``classes`` per row; ``params={"answer": "scores"}`` asks for the scores frame
    instead (:func:`answer_columns`).

    Parameters
    ----------
    schema : InputSchema
        The model's input schema.
    decision : ServedDecision or None, default=None
        The model's decision, if it answers one (kept for the callers that name it; the label comes from it).
    classes : sequence, default=(0, 1)
        The model's classes, whose type the label has.

    Returns
    -------
    mlflow.models.ModelSignature
        The signature.
    """
    from mlflow.models import ModelSignature
    from mlflow.types import ColSpec, Schema
    from mlflow.types.schema import AnyType

    def column_type(column: Column) -> AnyType | str:
        name = _MLFLOW_TYPES[column.kind]
        return AnyType() if name == "any" else name  # type: ignore[no-untyped-call]  # MLflow's, untyped

    inputs = Schema([ColSpec(column_type(c), c.name, required=False) for c in schema.columns])
    label = "long" if all(isinstance(c, int) and not isinstance(c, bool) for c in classes) else \
        "boolean" if all(isinstance(c, bool) for c in classes) else "string"
    return ModelSignature(inputs=inputs, outputs=Schema([ColSpec(label)]), params=_flavor.answer_params())


class _ClassifierPyfunc:
    """pyfunc view: check the input against the schema, answer a label or the scores per row (``answer``)."""

    def __init__(self, model: BaseEstimator, schema: InputSchema, positive_class: object,
                 decision: ServedDecision | None = None, answer: str = _flavor.LABEL_ANSWER) -> None:
        self.model = model
        self.schema = schema
        self.positive_class = positive_class
        self.decision = decision
        self.answer = answer
        self._classes = [_plain(c) for c in model.classes_]
        self._column = self._classes.index(positive_class)
        self._reduction = _answer.reduction_in(model)

    def get_raw_model(self) -> BaseEstimator:
        return self.model

    def predict(self, data: object, params: dict[str, Any] | None = None) -> pd.DataFrame | NDArray[Any]:
        import numpy as np
        import pandas as pd

        answer = _flavor.chosen_answer(params, self.answer)
        try:
            frame = _flavor.as_frame(data)
            if self.decision is not None:
                self.decision.check_groups(frame)
            rows = self.schema.check(frame)
            inputs = rows if self.decision is None or self.decision.model_inputs is None \
                else rows[list(self.decision.model_inputs)]
            probability = self.model.predict_proba(inputs)[:, self._column]
            _check_finite(probability)
            if self.decision is None:
                if answer == _flavor.LABEL_ANSWER:
                    return np.asarray(self.model.predict(inputs))
                answered = _answer.scores_frame(self._reduction, inputs, probability)
                answered.attrs.pop("lot", None)
                return answered
            decided = self.decision.decide(probability, rows)
            if answer == _flavor.LABEL_ANSWER:
                return np.asarray(self._classes)[np.where(decided == 1, self._column, 1 - self._column)]
            answered = _answer.scores_frame(self._reduction, inputs, probability)
            answered[POSITIVE_OUTPUT] = self.decision.positive_label
            answered[DECISION_OUTPUT] = decided.astype("int32")
            if self._reduction is not None:
                _answer.explain_lot(answered, self.decision, rows)
        except (TypeError, ValueError) as error:
            raise _flavor.input_refused(error) from None
        return pd.DataFrame(answered)

def _check_finite(probability: np.ndarray) -> None:
    """Refuse an answer that is not a probability (weights edited to overflow give NaN, not an error)."""
    import numpy as np

    bad = np.flatnonzero(~np.isfinite(probability))
    if bad.size:
        raise RowError("the model's probability for row ", int(bad[0]), f" is {probability[bad[0]]}, not a number in "
                       f"[0, 1] ({bad.size} such row(s)); its saved state overflows on these inputs")


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value


def _prepare(sk_model: BaseEstimator, input_schema: InputSchema | None, input_example: pd.DataFrame | None,
             positive_class: object, decision: ServedDecision | None = None) -> tuple[InputSchema, Any, bytes]:
    """The schema, the positive class and the skops bytes, or a clear error before anything is written."""
    from ..models import InputSchema

    classes = getattr(sk_model, "classes_", None)
    if not hasattr(sk_model, "predict_proba") or classes is None or len(classes) != 2:
        raise TypeError(f"{type(sk_model).__name__} is not a fitted two-class classifier with predict_proba")
    classes = [_plain(c) for c in classes]
    positive_class = classes[1] if positive_class is None else _plain(positive_class)
    if positive_class not in classes:
        raise InputError(f"positive_class {positive_class!r} is not one of the model's classes {classes}")
    if input_schema is None:
        if input_example is None:
            raise TypeError("give input_schema (fairops.models.InputSchema) or an input_example DataFrame: "
                            "a served classifier checks its input")
        input_schema = InputSchema.for_model(sk_model, input_example)
    if not isinstance(input_schema, InputSchema):
        raise TypeError(f"input_schema must be a fairops.models.InputSchema, got {type(input_schema).__name__}")
    if decision is not None:
        from ..models import ServedDecision

        if not isinstance(decision, ServedDecision):
            raise TypeError(f"decision must be a fairops.models.ServedDecision, got {type(decision).__name__}")
        input_schema = decision.extend_schema(input_schema)
    return input_schema, positive_class, check_savable(sk_model)


@with_param_docs(**_DOCS)
def save_model(sk_model: BaseEstimator, path: StrPath, conda_env: dict[str, Any] | str | None = None,
               mlflow_model: Model | None = None, input_example: pd.DataFrame | None = None,
               pip_requirements: list[str] | None = None, extra_pip_requirements: list[str] | None = None,
               metadata: dict[str, Any] | None = None, input_schema: InputSchema | None = None,
               positive_class: object = None, decision: ServedDecision | None = None) -> Model:
    """Save a fitted two-class classifier as a sealed MLflow model at ``path``.

    ``input_schema`` (a :class:`~fairops.models.InputSchema`, best made from the training frame with
    :meth:`~fairops.models.InputSchema.for_model`) defaults to the schema of ``input_example``, whose
    category columns then accept any value unless they are pandas categoricals.

    Parameters
    ----------
    {{ parameters }}

    {{ saved_returns }}
    """
    import skops

    schema, positive_class, model_bytes = _prepare(sk_model, input_schema, input_example, positive_class, decision)
    document = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "estimator": type(sk_model).__name__,
                "positive_class": positive_class, "output": OUTPUT, "input_schema": schema.to_dict(),
                "answer": _answer.answer_columns(sk_model, decision)}
    if decision is not None:
        document["decision"] = decision.to_dict()
        document["answer"] = _answer.describe_answer(sk_model, decision)

    def write_data(folder: str) -> None:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, MODEL_FILE), "wb") as handle:
            handle.write(model_bytes)
        with open(os.path.join(folder, DOCUMENT_FILE), "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=1, sort_keys=True)

    return _flavor.save_flavor_model(
        sk_model, path, flavor_name=FLAVOR_NAME, loader_module=_LOADER_MODULE, write_data=write_data,
        flavor_conf={"format_version": FORMAT_VERSION, "serialization": "skops", "skops_version": skops.__version__},
        conda_env=conda_env, mlflow_model=mlflow_model,
        signature=signature_of(schema, decision, [_plain(c) for c in sk_model.classes_]),
        input_example=input_example, answers=True,
        pip_requirements=pip_requirements, extra_pip_requirements=extra_pip_requirements,
        metadata={**(metadata or {}), "fairops_input_schema": schema.to_dict(), "fairops_answer": document["answer"],
                  # the scores answer's columns and types (the signature describes the default answer, a label)
                  "fairops_scores_output": _answer.columns_and_types(sk_model, decision)},
    )


@with_param_docs(**_DOCS)
def log_model(sk_model: BaseEstimator, name: str = "model", *, input_schema: InputSchema | None = None,
              positive_class: object = None, decision: ServedDecision | None = None, **kwargs: Any) -> ModelInfo:
    """Log a classifier to the active run (or ``run_id=``); returns MLflow's ``ModelInfo``.

    Parameters
    ----------
    {{ parameters }}

    {{ logged_returns }}
    """
    return FLAVOR.log_model(sk_model, name, input_schema=input_schema, positive_class=positive_class,
                            decision=decision, **kwargs)


def _read(data: ModelData) -> tuple[BaseEstimator, InputSchema, Any, ServedDecision | None]:
    """(model, schema, positive class, decision) from a model's data files (a
    :class:`~fairops.mlflow.sealing.ModelData`: the bytes checked against the seal), trusting only
    :data:`TRUSTED_TYPES`."""
    from ..models import InputSchema, ServedDecision

    folder = data.folder
    document = _parse_budget.parse_json(data.read(DOCUMENT_FILE),
                                        lambda problem: ModelFilesError(f"model file {DOCUMENT_FILE!r} in {folder}: "
                                                                        f"{problem}"))
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME \
            or document.get("format_version") != FORMAT_VERSION:
        raise ModelFilesError(f"model file {DOCUMENT_FILE!r} in {folder} is not a {FORMAT_NAME!r} document of "
                              f"version {FORMAT_VERSION}")
    try:
        schema = InputSchema.from_dict(document.get("input_schema"))
    except (TypeError, ValueError) as error:
        raise ModelFilesError(f"model file {DOCUMENT_FILE!r} in {folder} has a malformed input schema: {error}") \
            from None
    try:
        decision = None if document.get("decision") is None else ServedDecision.from_dict(document["decision"])
    except (TypeError, ValueError) as error:
        raise ModelFilesError(f"model file {DOCUMENT_FILE!r} in {folder} has a malformed decision: {error}") from None
    model = _read_skops(data.read(MODEL_FILE), folder)
    return model, schema, document.get("positive_class"), decision


def _read_skops(model_bytes: bytes, folder: str) -> BaseEstimator:
    """The skops model from the bytes of ``folder``'s model file: sizes, trusted types and fitted state
    checked (see _skops_checks)."""
    import skops.io

    from . import _skops_checks

    def refuse(problem: object) -> ModelFilesError:
        return ModelFilesError(f"model file {MODEL_FILE!r} in {folder}: {problem}")

    schema = _skops_checks.check_archive(model_bytes, refuse)
    # bounded work before skops' audit walks the schema: references may make a small file a huge graph
    _parse_budget.check_skops_schema(schema, lambda problem: refuse(f"{_skops_checks.SCHEMA_ENTRY}: {problem}"))
    try:
        extra = untrusted_types(model_bytes)
    except Exception as error:  # a malformed skops schema ...
        raise refuse(f"is not a readable skops file: {str(error)[:300]}") from None
    if extra:
        raise refuse(f"names type(s) fairops does not trust: {extra}; nothing of it was loaded")
    try:
        _skops_checks.check_boosters(schema)
    except (TypeError, ValueError) as error:
        raise refuse(error) from None
    try:
        model = skops.io.loads(model_bytes, trusted=list(TRUSTED_TYPES))
    except Exception as error:  # fairops' estimators' own checks, or KeyError, LightGBMError ... from a bad schema
        raise refuse(f"cannot be rebuilt: {type(error).__name__}: {str(error)[:300]}") from None
    try:
        _skops_checks.check_fitted(model)
    except (TypeError, ValueError, AttributeError) as error:
        raise refuse(f"holds a malformed model: {error}") from None
    return model


def _read_classifier(data: ModelData) -> BaseEstimator:
    return _read(data)[0]


def _read_pyfunc(data: ModelData, answer: str = _flavor.LABEL_ANSWER) -> _ClassifierPyfunc:
    return _ClassifierPyfunc(*_read(data), answer=answer)


FLAVOR = _flavor.Flavor(FLAVOR_NAME, _LOADER_MODULE, "sk_model", read_native=_read_classifier,
                        read_pyfunc=_read_pyfunc)
get_default_pip_requirements = FLAVOR.get_default_pip_requirements
get_default_conda_env = FLAVOR.get_default_conda_env
load_model = FLAVOR.load_model
_load_pyfunc = FLAVOR.load_pyfunc
