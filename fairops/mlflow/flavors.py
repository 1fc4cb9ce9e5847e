"""The table of fairops' MLflow flavors, shared by saving (:func:`flavor_for`) and loading (:data:`FLAVORS`).

Each flavor module builds on :mod:`fairops.mlflow._flavor_base` and never imports this table, so the
table sits above them: saving picks a flavor by the estimator's type, loading by the flavor name
``MLmodel`` records, and both read the same three entries.

>>> sorted(FLAVORS)
['fairops_classifier', 'fairops_fairlof', 'fairops_scaff']
>>> FLAVORS["fairops_scaff"].__name__
'fairops.mlflow.scaff'
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from . import classifier, fairlof, scaff

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

    import pandas as pd
    from mlflow.models.model import ModelInfo
    from sklearn.base import BaseEstimator

# Flavor name in MLmodel -> the module MLflow (and fairops' loader) loads it with.
FLAVORS = {module.FLAVOR_NAME: module for module in (scaff, fairlof, classifier)}


def flavor_for(model: BaseEstimator) -> ModuleType:
    """The fairops flavor module that logs ``model``: SCAFF, FairLOF, or any other classifier.

    Every model fairops logs goes through a fairops flavor, so it loads through fairops' own loader
    with the types fairops trusts (never a list read from ``MLmodel``).

    Parameters
    ----------
    model : estimator
        A fitted model.

    Returns
    -------
    module
        :mod:`fairops.mlflow.scaff`, :mod:`fairops.mlflow.fairlof` or :mod:`fairops.mlflow.classifier`.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> flavor_for(LogisticRegression()).__name__
    'fairops.mlflow.classifier'
    """
    package = ".".join(type(model).__module__.split(".")[:2])
    if package == "fairops.scaff":
        return scaff
    if package == "fairops.fairlof":
        return fairlof
    from sklearn.base import BaseEstimator

    if isinstance(model, BaseEstimator) and hasattr(model, "predict_proba"):
        return classifier
    raise TypeError(
        f"no fairops flavor for a {type(model).__name__}; expected a fairops SCAFF/FairLOF estimator or a "
        "scikit-learn-compatible classifier with predict_proba (a pipeline, LightGBM's LGBMClassifier, ...)"
    )


_uri_lock = threading.Lock()


def log_estimator(model: BaseEstimator, *, run_id: str, tracking_uri: str | None = None, name: str = "model",
                  pip_requirements: Sequence[str] | str | None = None, input_example: pd.DataFrame | None = None,
                  registered_model_name: str | None = None, **kwargs: Any) -> ModelInfo:
    """Log ``model`` with its fairops flavor into ``run_id``; returns MLflow's ``ModelInfo``.

    ``pip_requirements`` defaults to the flavor's (the shipped fairops wheel and pins; nothing is
    inferred: requirement inference costs seconds per model). MLflow's ``Model.log`` reads the
    process-wide tracking URI, so ``tracking_uri`` is switched to under a lock for the call. A model the
    flavor fails to save leaves its logged model FAILED (not PENDING) and the error is raised.

    Parameters
    ----------
    model : estimator
        The fitted model.
    run_id : str
        The run to log into.
    tracking_uri : str or None, default=None
        MLflow tracking URI (None: the process's).
    name : str, default="model"
        The model's name in the run.
    pip_requirements : list of str or None, default=None
        As above.
    input_example : DataFrame or None, default=None
        Rows saved with the model.
    registered_model_name : str or None, default=None
        Also register the model under this name.
    **kwargs
        The flavor's ``log_model`` arguments.

    Returns
    -------
    mlflow.models.model.ModelInfo
        What MLflow logged.
    """
    import mlflow
    from mlflow.tracking import MlflowClient

    from ._mlflow_internals import use_tracking_uri

    flavor = flavor_for(model)
    # The logged model is created first in the run's experiment (Model.log would otherwise put it in
    # the process's active experiment), then the flavor fills and finalizes it.
    with _uri_lock, use_tracking_uri(tracking_uri or mlflow.get_tracking_uri()):
        experiment_id = MlflowClient().get_run(run_id).info.experiment_id
        entity = mlflow.initialize_logged_model(name=name, source_run_id=run_id, experiment_id=experiment_id)
        try:
            info: ModelInfo = flavor.log_model(model, name=name, pip_requirements=pip_requirements,
                                               input_example=input_example,
                                               registered_model_name=registered_model_name,
                                               run_id=run_id, model_id=entity.model_id, **kwargs)
            return info
        except BaseException:
            mlflow.finalize_logged_model(entity.model_id, "FAILED")
            raise
