"""What the SCAFF and FairLOF flavors share: writing an MLflow model directory around the model files.

A fairops flavor directory holds ``MLmodel`` (with the flavor's section and a ``python_function``
section pointing at the flavor module), ``data/`` (see :mod:`fairops.mlflow._model_files`), the
environment files and, when given, the input example.
"""

from __future__ import annotations

import os
import threading

import yaml

import fairops

DATA_SUBPATH = "data"


def default_pip_requirements() -> list[str]:
    """``fairops==<this version>``: a served model reinstalls the code that wrote it.

    >>> default_pip_requirements() == [f"fairops=={fairops.__version__}"]
    True
    """
    return [f"fairops=={fairops.__version__}"]


def save_flavor_model(
    estimator,
    path,
    *,
    flavor_name: str,
    loader_module: str,
    classes: dict,
    extra: dict,
    make_pyfunc,
    conda_env=None,
    mlflow_model=None,
    signature=None,
    input_example=None,
    pip_requirements=None,
    extra_pip_requirements=None,
    metadata=None,
):
    """Write a complete MLflow model directory for a fairops estimator (no requirement inference)."""
    from mlflow.models import Model
    from mlflow.models.model import MLMODEL_FILE_NAME
    from mlflow.models.signature import _infer_signature_from_input_example
    from mlflow.models.utils import _save_example
    from mlflow.pyfunc import add_to_model
    from mlflow.utils.environment import (
        _CONDA_ENV_FILE_NAME,
        _CONSTRAINTS_FILE_NAME,
        _PYTHON_ENV_FILE_NAME,
        _REQUIREMENTS_FILE_NAME,
        _process_conda_env,
        _process_pip_requirements,
        _PythonEnv,
        _validate_env_arguments,
    )
    from mlflow.utils.model_utils import _validate_and_prepare_target_save_path

    from . import _model_files

    _validate_env_arguments(conda_env, pip_requirements, extra_pip_requirements)
    path = os.path.abspath(os.fspath(path))
    _validate_and_prepare_target_save_path(path)
    _model_files.write_state(estimator, os.path.join(path, DATA_SUBPATH), classes, extra)

    if mlflow_model is None:
        mlflow_model = Model()
    saved_example = _save_example(mlflow_model, input_example, path)
    if signature is None and saved_example is not None:
        signature = _infer_signature_from_input_example(saved_example, make_pyfunc(estimator, extra))
    elif signature is False:
        signature = None
    if signature is not None:
        mlflow_model.signature = signature
    if metadata is not None:
        mlflow_model.metadata = metadata

    add_to_model(
        mlflow_model,
        loader_module=loader_module,
        data=DATA_SUBPATH,
        conda_env=_CONDA_ENV_FILE_NAME,
        python_env=_PYTHON_ENV_FILE_NAME,
    )
    mlflow_model.add_flavor(
        flavor_name,
        data=DATA_SUBPATH,
        fairops_version=fairops.__version__,
        estimator=type(estimator).__name__,
        format_version=_model_files.FORMAT_VERSION,
    )
    mlflow_model.save(os.path.join(path, MLMODEL_FILE_NAME))

    if conda_env is None:
        defaults = default_pip_requirements() if pip_requirements is None else None
        conda_env, pip_requirements, pip_constraints = _process_pip_requirements(
            defaults, pip_requirements, extra_pip_requirements
        )
    else:
        conda_env, pip_requirements, pip_constraints = _process_conda_env(conda_env)
    with open(os.path.join(path, _CONDA_ENV_FILE_NAME), "w") as handle:
        yaml.safe_dump(conda_env, stream=handle, default_flow_style=False)
    if pip_constraints:
        with open(os.path.join(path, _CONSTRAINTS_FILE_NAME), "w") as handle:
            handle.write("\n".join(pip_constraints))
    with open(os.path.join(path, _REQUIREMENTS_FILE_NAME), "w") as handle:
        handle.write("\n".join(pip_requirements))
    _PythonEnv.current().to_yaml(os.path.join(path, _PYTHON_ENV_FILE_NAME))
    return mlflow_model


def local_model_dir(model_uri: str, dst_path=None) -> str:
    """Download (or locate) a model URI and return the local directory."""
    from mlflow.tracking.artifact_utils import _download_artifact_from_uri

    return _download_artifact_from_uri(artifact_uri=model_uri, output_path=dst_path)


def data_dir(local_path: str, flavor_name: str) -> str:
    """The model-files folder of a downloaded flavor directory."""
    from mlflow.utils.model_utils import _get_flavor_configuration

    conf = _get_flavor_configuration(model_path=local_path, flavor_name=flavor_name)
    return os.path.join(local_path, conf.get("data", DATA_SUBPATH))


def as_frame(data):
    """pyfunc input as a DataFrame (pyfunc hands DataFrames; a dict or array is also accepted)."""
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, dict):
        return pd.DataFrame(data)
    return pd.DataFrame(data)


def pick_columns(frame, names, what: str):
    """``frame[names]`` or a ValueError naming the missing columns."""
    missing = [name for name in names if name not in frame.columns]
    if missing:
        raise ValueError(f"input lacks the {what} column(s) {missing}; the model records {list(names)}")
    return frame[list(names)]


def flavor_module(model):
    """The MLflow flavor module that logs ``model``: fairops, LightGBM or scikit-learn.

    >>> from sklearn.linear_model import LogisticRegression
    >>> flavor_module(LogisticRegression()).__name__
    'mlflow.sklearn'
    """
    import importlib

    module = type(model).__module__
    if module.startswith("fairops.scaff"):
        return importlib.import_module("fairops.mlflow.scaff")
    if module.startswith("fairops.fairlof"):
        return importlib.import_module("fairops.mlflow.fairlof")
    if module.startswith("lightgbm"):  # Booster and the scikit-learn API (LGBMClassifier, ...)
        return importlib.import_module("mlflow.lightgbm")
    from sklearn.base import BaseEstimator

    if isinstance(model, BaseEstimator):
        return importlib.import_module("mlflow.sklearn")
    raise TypeError(
        f"no MLflow flavor for a {type(model).__name__}; expected a fairops SCAFF/FairLOF estimator, "
        "a LightGBM model or a scikit-learn estimator"
    )


_uri_lock = threading.Lock()


def log_estimator(model, *, run_id, tracking_uri=None, name="model", pip_requirements=None, input_example=None,
                  registered_model_name=None, **kwargs):
    """Log ``model`` with its flavor into ``run_id``; returns MLflow's ``ModelInfo``.

    ``pip_requirements`` defaults to the flavor's defaults plus nothing inferred: requirement
    inference costs seconds per model. MLflow's ``Model.log`` reads the process-wide tracking URI,
    so ``tracking_uri`` is switched to under a lock for the duration of the call.
    """
    import mlflow
    from mlflow.tracking import MlflowClient
    from mlflow.tracking._tracking_service.utils import _use_tracking_uri

    # The logged model is created first in the run's experiment (Model.log would otherwise put it in
    # the process's active experiment), then the flavor fills and finalizes it.
    with _uri_lock, _use_tracking_uri(tracking_uri or mlflow.get_tracking_uri()):
        experiment_id = MlflowClient().get_run(run_id).info.experiment_id
        entity = mlflow.initialize_logged_model(name=name, source_run_id=run_id, experiment_id=experiment_id)
        return _log_with_flavor(model, name=name, pip_requirements=pip_requirements, input_example=input_example,
                                registered_model_name=registered_model_name, run_id=run_id,
                                model_id=entity.model_id, **kwargs)


def _log_with_flavor(model, *, name, pip_requirements, input_example, registered_model_name, **kwargs):
    flavor = flavor_module(model)
    if pip_requirements is None:
        if flavor.__name__.startswith("fairops."):
            pip_requirements = flavor.get_default_pip_requirements()
        else:
            pip_requirements = [*default_pip_requirements(), *flavor.get_default_pip_requirements()]
    if flavor.__name__ == "mlflow.sklearn":
        kwargs.setdefault("serialization_format", "skops")
        kwargs.setdefault("skops_trusted_types", _skops_types(model))
    return flavor.log_model(
        model,
        name=name,
        pip_requirements=list(pip_requirements),
        input_example=input_example,
        registered_model_name=registered_model_name,
        **kwargs,
    )


def _skops_types(model) -> list[str]:
    """Type names skops must trust to load ``model`` back (found by asking skops itself)."""
    import io

    import skops.io

    buffer = io.BytesIO()
    skops.io.dump(model, buffer)
    return skops.io.get_untrusted_types(data=buffer.getvalue())
