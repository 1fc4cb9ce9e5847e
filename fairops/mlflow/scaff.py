"""MLflow flavor for SCAFF trees and forests (``fairops.scaff``).

The model is saved as data (JSON + ``.npz``, checked against a sha256 manifest), never pickled.
As a pyfunc the model answers one class label per row (``classes_[1]`` where P(y = 1) >= the stored ``threshold``,
else above 0.5 as ``predict`` says), as MLflow's classifier flavors do and ``mlflow.models.evaluate`` reads; with
``params={"answer": "scores"}`` (fairops' loader and ``fairops serve`` ask for it) P(y = 1) per row, or, when a
``threshold`` was stored, a DataFrame with ``probability`` and ``label``.

>>> import tempfile, numpy as np, pandas as pd
>>> from fairops.scaff import SCAFFClassifier
>>> rng = np.random.default_rng(0)
>>> X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"]); s = rng.integers(0, 2, 200)
>>> y = (X["a"] + s > 0.5).astype(int)
>>> clf = SCAFFClassifier(n_estimators=5, theta=0.3).fit(X, y, sensitive_features=s)
>>> path = tempfile.mkdtemp() + "/model"
>>> _ = save_model(clf, path, input_example=X.head(3), pip_requirements=[])
>>> bool(np.allclose(load_model(path).predict_proba(X)[:, 1], clf.predict_proba(X)[:, 1]))
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..errors import InputError
from . import _flavor_base as _flavor, _model_files
from ._param_docs import param, with_param_docs

if TYPE_CHECKING:
    import pandas as pd
    from mlflow.models import Model, ModelSignature
    from mlflow.models.model import ModelInfo
    from sklearn.base import BaseEstimator

    from .._typing import FloatArray, NDArray, StrPath
    from ..scaff import SCAFFClassifier, SCAFFTreeClassifier
    from ..scaff._base import SCAFFBase
    from .sealing import ModelData

FLAVOR_NAME = "fairops_scaff"
_LOADER_MODULE = "fairops.mlflow.scaff"
_DOCS = {
    "sk_model": param("sk_model", "SCAFFClassifier or SCAFFTreeClassifier", "The fitted estimator."),
    "threshold": param("threshold", "float or None, default=None",
                       "Optional decision threshold on P(y = 1); the pyfunc then also returns labels."),
}


def _classes() -> dict[str, type[SCAFFBase]]:
    from fairops.scaff import SCAFFClassifier, SCAFFTreeClassifier

    return {"SCAFFClassifier": SCAFFClassifier, "SCAFFTreeClassifier": SCAFFTreeClassifier}


class _ScaffPyfunc:
    """pyfunc view of a fitted SCAFF estimator."""

    def __init__(self, model: SCAFFBase, extra: dict[str, Any], answer: str = _flavor.LABEL_ANSWER) -> None:
        self.model = model
        self.threshold = extra.get("threshold")
        self.feature_names = extra.get("feature_names")
        self.answer = answer

    def get_raw_model(self) -> SCAFFBase:
        return self.model

    def predict_proba(self, data: object) -> FloatArray:
        frame = _flavor.as_frame(data)
        if self.feature_names is not None:
            features = _flavor.pick_columns(frame, self.feature_names, "feature")
        else:
            features = frame.to_numpy(dtype=np.float64)
        return self.model.predict_proba(features)

    def predict(self, data: object, params: dict[str, Any] | None = None) -> pd.DataFrame | NDArray[Any]:
        import pandas as pd

        answer = _flavor.chosen_answer(params, self.answer)
        probability = self.predict_proba(data)[:, 1]
        positive = probability > 0.5 if self.threshold is None else probability >= self.threshold  # as predict
        labels = self.model.classes_[positive.astype(np.intp)]
        if answer == _flavor.LABEL_ANSWER:
            return labels
        if self.threshold is None:
            return probability
        return pd.DataFrame({"probability": probability, "label": labels})


def _extra(sk_model: SCAFFBase, threshold: float | None) -> dict[str, Any]:
    if threshold is not None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
            raise InputError(f"threshold must be a probability in [0, 1] or None, got {threshold!r}")
        threshold = float(threshold)
    names = getattr(sk_model, "feature_names_in_", None)
    return {"threshold": threshold, "feature_names": None if names is None else [str(n) for n in names]}


@with_param_docs(**_DOCS)
def save_model(
    sk_model: SCAFFClassifier | SCAFFTreeClassifier,
    path: StrPath,
    conda_env: dict[str, Any] | str | None = None,
    mlflow_model: Model | None = None,
    signature: ModelSignature | Literal[False] | None = None,
    input_example: pd.DataFrame | None = None,
    pip_requirements: list[str] | None = None,
    extra_pip_requirements: list[str] | None = None,
    metadata: dict[str, Any] | None = None,
    threshold: float | None = None,
) -> Model:
    """Save a fitted ``SCAFFClassifier``/``SCAFFTreeClassifier`` as an MLflow model at ``path``.

    Parameters
    ----------
    {{ parameters }}

    {{ saved_returns }}
    """
    extra = _extra(sk_model, threshold)
    label = "long" if np.asarray(sk_model.classes_).dtype.kind in "iu" else "string"
    scores = [[None, "double"]] if threshold is None else [["probability", "double"], ["label", label]]
    return _flavor.save_flavor_model(
        sk_model,
        path,
        flavor_name=FLAVOR_NAME,
        loader_module=_LOADER_MODULE,
        classes=_classes(),
        extra=extra,
        make_pyfunc=_ScaffPyfunc,
        conda_env=conda_env,
        mlflow_model=mlflow_model,
        signature=signature,
        input_example=input_example,
        pip_requirements=pip_requirements,
        extra_pip_requirements=extra_pip_requirements,
        metadata={**(metadata or {}), "fairops_scores_output": scores},
        answers=True,
    )


@with_param_docs(**_DOCS)
def log_model(sk_model: SCAFFClassifier | SCAFFTreeClassifier, name: str = "model", *, threshold: float | None = None,
              **kwargs: Any) -> ModelInfo:
    """Log a SCAFF estimator to the active run (or ``run_id=``); returns MLflow's ``ModelInfo``.

    Parameters
    ----------
    {{ parameters }}

    {{ logged_returns }}
    """
    return FLAVOR.log_model(sk_model, name, threshold=threshold, **kwargs)


def _read_estimator(data: ModelData | str) -> BaseEstimator:
    """The estimator from the data files (a ``ModelData``, or a data folder's path)."""
    return _model_files.read_state(data, _classes()).estimator


def _read_pyfunc(data: ModelData, answer: str = _flavor.LABEL_ANSWER) -> _ScaffPyfunc:
    loaded = _model_files.read_state(data, _classes())
    return _ScaffPyfunc(loaded.estimator, loaded.extra, answer)


FLAVOR = _flavor.Flavor(FLAVOR_NAME, _LOADER_MODULE, "sk_model", read_native=_read_estimator,
                        read_pyfunc=_read_pyfunc)
get_default_pip_requirements = FLAVOR.get_default_pip_requirements
get_default_conda_env = FLAVOR.get_default_conda_env
load_model = FLAVOR.load_model
_load_pyfunc = FLAVOR.load_pyfunc
