"""Where results go: the project's stores and one MLflow run per result (params, metrics, model)."""

from __future__ import annotations

import logging
import math
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ...errors import InputError
from ...tracking._session import open_client
from ...tracking._stores import artifacts_in, storage_in, tracking_uri_in
from .._options import DEFAULT_PROJECT_DIR

if TYPE_CHECKING:
    from ...fairlof import FairLOF
    from .data import OutlierData

DEFAULT_PROJECT = DEFAULT_PROJECT_DIR  # one default folder for every command
DEFAULT_EXPERIMENT = "fairops-outliers"


def result_metrics(result: dict) -> dict:
    """MLflow metrics of a comparison: FairLOF's under the plain names (as trial runs have them),
    LOF's prefixed ``lof_``, and the changes ``*_change``; NaN values are left out."""
    metrics = dict(result["FairLOF"])
    metrics.update({f"lof_{name}": value for name, value in result["LOF"].items()})
    metrics.update({f"{name}_change": value for name, value in result["change"].items()})
    return {name: float(value) for name, value in metrics.items() if math.isfinite(value)}


@dataclass(frozen=True)
class ProjectStores:
    """Where a run's results go: the project folder (None when no default store or artifact needs it),
    the MLflow tracking URI, the Optuna storage URL (tuning only) and the experiments' artifact root."""

    project: Path | None
    tracking_uri: str
    storage: str | None
    artifact_location: str | None


def resolve_stores(project_dir, tracking_uri=None, storage=None, *, tune=False) -> ProjectStores:
    """The project folder (created when it holds a default store or the artifacts) and the stores to use.

    Artifacts go under ``<project>/mlartifacts`` unless a tracking server keeps them.
    """
    from ...tracking._ui_links import is_server

    project = Path(project_dir).resolve()
    tracking_uri = tracking_uri or tracking_uri_in(project)
    needs_folder = not is_server(tracking_uri) or (tune and storage is None)
    if needs_folder:
        try:
            project.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise InputError(f"cannot create --project-dir {str(project)!r}: {error.strerror}") from None
    artifact_location = None if is_server(tracking_uri) else artifacts_in(project).as_uri()
    if tune and storage is None:
        storage = storage_in(project)
    return ProjectStores(project if needs_folder else None, tracking_uri, storage, artifact_location)


def _client(tracking_uri: str):
    logging.getLogger("mlflow.store.db.utils").setLevel(logging.WARNING)  # no table-creation chatter
    try:
        client = open_client(tracking_uri)
    except Exception as error:  # noqa: BLE001 - any store failure is the user's URL or server
        reason = str(error).splitlines()[0]
        raise InputError(f"cannot reach the MLflow tracking store {tracking_uri!r}: {reason}") from error
    return client


def log_result_run(client, experiment_id: str, *, run_name: str, detector: FairLOF, data: OutlierData,
                   result: dict, params: dict, tags: dict, tracking_uri: str, path: dict | None = None,
                   extra_metrics: dict | None = None, model_name: str | None = None):
    """One finished run: params, metrics, preprocessing + lambda path, and the FairLOF model, registered
    as a new version of ``model_name`` when given.

    Returns ``(run_id, model_uri)``: ``models:/<model_name>/<version>``, or the logged model's URI.
    """
    from mlflow.entities import Metric, Param

    from ...mlflow.flavors import log_estimator

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
                                 input_example=data.raw.head(3), preprocessing=data.encoder,
                                 registered_model_name=model_name)
    except BaseException:
        client.set_terminated(run_id, "FAILED")
        raise
    client.set_terminated(run_id, "FINISHED")
    if model_name is None:
        return run_id, info.model_uri
    return run_id, f"models:/{model_name}/{info.registered_model_version}"


def _base_params(data: OutlierData, args) -> dict:
    return {"dataset": data.name, "rows": data.n_rows, "source_rows": data.n_source_rows,
            "features": data.features.shape[1], "sensitive": ",".join(data.sensitive.columns),
            "categorical": args.categorical, "seed": args.seed,
            "max_rows": args.max_rows if args.max_rows is not None else "all"}


def default_model_name(data_name: str) -> str:
    """``fairops-outliers-<data>``: the registered name of a command's FairLOF models on that data."""
    return f"fairops-outliers-{data_name}"


def print_where_to_find(stores: ProjectStores, experiment_id: str, model_uri: str, links=None,
                        ui_port: int = 5000) -> None:
    """The MLflow UI (the study's links after a tuning, the experiment's runs page otherwise), the model
    and the command that serves it."""
    from ...tracking._ui_links import DEFAULT_SERVE_PORT, free_port, runs_url, serve_command, ui_base_url, ui_command

    if links is not None:
        print(links.text())
    else:
        command = ui_command(stores.tracking_uri, ui_port)
        head = f"MLflow UI: {command}  (then open)" if command else "MLflow UI:"
        print(f"{head} {runs_url(ui_base_url(stores.tracking_uri, ui_port), experiment_id)}")
    print(f"model: {model_uri}  (MLFLOW_TRACKING_URI={stores.tracking_uri}; load with "
          "fairops.mlflow.fairlof.load_model or mlflow.pyfunc.load_model; input = raw rows with the columns "
          "'input_columns' of preprocessing/features.json in the run)")
    if model_uri.startswith("models:/"):
        port = free_port(DEFAULT_SERVE_PORT, avoid={ui_port})  # free now, so the command runs as printed
        print(f"serve it: {serve_command(stores.tracking_uri, model_uri, port)}  (answers outlier_score "
              "and outlier per row)")

