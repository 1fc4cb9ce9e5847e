"""Where results go: the project's stores and one MLflow run per result (params, metrics, model)."""

from __future__ import annotations

import logging
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from ...fairlof import FairLOF
    from .data import OutlierData

DEFAULT_PROJECT = "fairops-project"
DEFAULT_EXPERIMENT = "fairops-outliers"


def result_metrics(result: dict) -> dict:
    """MLflow metrics of a comparison: FairLOF's under the plain names (as trial runs have them),
    LOF's prefixed ``lof_``, and the changes ``*_change``; NaN values are left out."""
    metrics = dict(result["FairLOF"])
    metrics.update({f"lof_{name}": value for name, value in result["LOF"].items()})
    metrics.update({f"{name}_change": value for name, value in result["change"].items()})
    return {name: float(value) for name, value in metrics.items() if math.isfinite(value)}


@dataclass(frozen=True)
class Places:
    project: Path | None
    tracking_uri: str
    storage: str | None
    artifact_location: str | None


def resolve_places(project_dir, tracking_uri=None, storage=None, *, tune=False) -> Places:
    """The project folder (created when it backs a default store) and the stores to use."""
    project = Path(project_dir).resolve()
    needs_folder = tracking_uri is None or (tune and storage is None)
    if needs_folder:
        try:
            project.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ValueError(f"cannot create --project-dir {str(project)!r}: {error.strerror}") from None
    artifact_location = None
    if tracking_uri is None:
        tracking_uri = f"sqlite:///{project / 'mlflow.db'}"
        artifact_location = (project / "mlartifacts").as_uri()
    if tune and storage is None:
        storage = f"sqlite:///{project / 'optuna.db'}"
    return Places(project if needs_folder else None, tracking_uri, storage, artifact_location)


def ensure_experiment(client, name: str, artifact_location=None) -> str:
    """Id of the experiment ``name``, created (with its artifact root) when missing."""
    from mlflow.exceptions import MlflowException

    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        return experiment.experiment_id
    try:
        return client.create_experiment(name, artifact_location)
    except MlflowException:  # created by another process in between
        experiment = client.get_experiment_by_name(name)
        if experiment is None:
            raise
        return experiment.experiment_id


def _client(tracking_uri: str):
    from mlflow.tracking import MlflowClient

    logging.getLogger("mlflow.store.db.utils").setLevel(logging.WARNING)  # no table-creation chatter
    client = MlflowClient(tracking_uri)
    try:
        client.search_experiments(max_results=1)
    except Exception as error:  # noqa: BLE001 - any store failure is the user's URL or server
        raise ValueError(f"cannot reach the MLflow tracking store {tracking_uri!r}: {str(error).splitlines()[0]}")
    return client


def log_result_run(client, experiment_id: str, *, run_name: str, detector: FairLOF, data: OutlierData,
                   result: dict, params: dict, tags: dict, tracking_uri: str, path: dict | None = None,
                   extra_metrics: dict | None = None):
    """One finished run: params, metrics, preprocessing + lambda path, and the FairLOF model.

    Returns ``(run_id, model_uri)``.
    """
    from mlflow.entities import Metric, Param

    from ...mlflow._flavor import log_estimator

    run = client.create_run(experiment_id, run_name=run_name, tags=tags)
    run_id = run.info.run_id
    try:
        now = run.info.start_time
        metrics = {**result_metrics(result), **(extra_metrics or {})}
        client.log_batch(run_id,
                         metrics=[Metric(k, float(v), now, 0) for k, v in metrics.items()],
                         params=[Param(k, str(v)[:6000]) for k, v in params.items()])
        client.log_dict(run_id, data.preprocessing(), "preprocessing/features.json")
        if path is not None:
            client.log_dict(run_id, {k: np.asarray(v).tolist() for k, v in path.items()}, "fairlof/lambda_path.json")
        with warnings.catch_warnings():  # the 0/1 "outlier" output column is an integer on purpose
            warnings.filterwarnings("ignore", message="Hint: Inferred schema contains integer", category=UserWarning)
            info = log_estimator(detector, run_id=run_id, tracking_uri=tracking_uri, name="model",
                                 input_example=data.raw.head(3), preprocessing=data.encoder)
    except BaseException:
        client.set_terminated(run_id, "FAILED")
        raise
    client.set_terminated(run_id, "FINISHED")
    return run_id, info.model_uri


def _base_params(data: OutlierData, args) -> dict:
    return {"dataset": data.name, "rows": data.n_rows, "source_rows": data.n_source_rows,
            "features": data.features.shape[1], "sensitive": ",".join(data.sensitive.columns),
            "categorical": args.categorical, "seed": args.seed,
            "max_rows": args.max_rows if args.max_rows is not None else "all"}


def _where_to_look(places: Places, model_uri: str) -> None:
    if places.tracking_uri.startswith("sqlite:"):
        print(f"look: mlflow ui --backend-store-uri {places.tracking_uri}")
    else:
        print(f"look: {places.tracking_uri}")
    print(f"model: {model_uri}  (MLFLOW_TRACKING_URI={places.tracking_uri}; load with "
          "fairops.mlflow.fairlof.load_model or mlflow.pyfunc.load_model; input = raw rows with the columns "
          "'input_columns' of preprocessing/features.json in the run)")

