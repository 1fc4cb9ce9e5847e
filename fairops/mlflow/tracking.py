"""Per-trial fairness tracking: one MLflow parent run per Optuna study, one child run per trial.

:class:`FairnessTrackingCallback` is an Optuna callback. For each finished trial it writes one child
run with three calls (create with all tags, one ``log_batch`` with params and metrics, terminate):

- params: the trial's parameters;
- metrics: the objective values (``accuracy`` and ``fairness`` for a two-objective study), the trial
  user attributes ``auc_y``, ``auc_s``, ``alpha``, ``budget``, ``weighted_score`` and, for outlier
  work, ``jaccard``, ``preservation``, ``outlier_fraction``, ``euclidean_disparity``,
  ``wasserstein_disparity`` (when present); ``weighted_score = alpha*accuracy + (1-alpha)*fairness``
  is computed when alpha is known and the attribute is absent; the per-rung values an asynchronous
  Fairband trial reports (attributes ``rung<i>_accuracy``, ``rung<i>_fairness``) become the metric
  histories ``rung_accuracy`` and ``rung_fairness`` with step ``i``;
- tags: ``bracket``, ``rung``, ``configuration_id``, ``iteration`` (Fairband attributes), the trial
  state and number, the study name and the fairops version.

Parent run: the first choice is a run id stored in the study's system attribute
``fairops:mlflow_parent`` (set by :meth:`FairnessTrackingCallback.parent_run_id`). Workers that
start at the same time and find neither the attribute nor a parent run each create a candidate
tagged with the study name, wait until every visible candidate is ``settle_seconds`` old, and all
keep the oldest (start time, then run id); the others are deleted. Each trial is finished by exactly
one worker and the callback runs once per trial, so child runs are neither lost nor duplicated.
Calling ``parent_run_id(study)`` once before starting workers avoids the election altogether.

Writes: on a SQL tracking store used directly (``sqlite:///``, ``postgresql://``) a child run is
written in one database transaction through MLflow's own table models (already finished, with its
tags, params, metric history and latest metrics), which costs one commit instead of the five to
seven of the public calls; ``fast_sql=False``, any other store (a tracking server) or any error in
that path uses the public client calls (``create_run``, one ``log_batch``, ``set_terminated``).

Fitted models are logged only on request: call :func:`keep_model` in the objective and create the
callback with ``log_models=True``.

>>> import optuna, tempfile
>>> optuna.logging.set_verbosity(optuna.logging.WARNING)
>>> uri = f"sqlite:///{tempfile.mkdtemp()}/mlflow.db"
>>> callback = FairnessTrackingCallback(tracking_uri=uri, experiment_name="doc")
>>> study = optuna.create_study(directions=["maximize", "maximize"], study_name="doc")
>>> def objective(trial):
...     x = trial.suggest_float("x", 0, 1)
...     trial.set_user_attr("auc_s", 0.5 + x / 2)
...     return x, 1 - x
>>> study.optimize(objective, n_trials=3, callbacks=[callback])
>>> runs = callback.client.search_runs([callback.experiment_id(study)], "tags.`fairops.role` = 'trial'")
>>> len(runs), sorted(runs[0].data.metrics)
(3, ['accuracy', 'auc_s', 'fairness', 'trial_seconds'])
"""

from __future__ import annotations

import math
import re
import threading
import time
import warnings

import fairops

PARENT_ATTR = "fairops:mlflow_parent"
METRIC_ATTRS = (
    "auc_y",
    "auc_s",
    "alpha",
    "budget",
    "weighted_score",
    "jaccard",
    "preservation",
    "outlier_fraction",
    "euclidean_disparity",
    "wasserstein_disparity",
)
TAG_ATTRS = ("bracket", "rung", "configuration_id", "iteration")
_RUNG_ATTR = re.compile(r"^rung(\d+)_(accuracy|fairness)$")
ROLE_TAG = "fairops.role"
STUDY_TAG = "fairops.study"
TRIAL_TAG = "fairops.trial_number"

_kept_models: dict = {}
_kept_lock = threading.Lock()


def keep_model(trial, model) -> None:
    """Hand a trial's fitted model to :class:`FairnessTrackingCallback` (``log_models=True``) to log.

    The model is held in memory until the callback of that trial runs, then dropped.

    >>> import optuna
    >>> trial = optuna.create_study().ask()
    >>> keep_model(trial, "a model"); _pop_model(trial.study.study_name, trial.number)
    'a model'
    """
    with _kept_lock:
        _kept_models[(trial.study.study_name, trial.number)] = model


def _pop_model(study_name: str, number: int):
    with _kept_lock:
        return _kept_models.pop((study_name, number), None)


def _finite(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _now_ms() -> int:
    return int(time.time() * 1000)


class FairnessTrackingCallback:
    """Optuna callback writing one MLflow child run per finished trial (see the module docstring).

    Parameters
    ----------
    tracking_uri : MLflow tracking URI (``sqlite:///...`` or ``http://host:port``); None = MLflow's default.
    experiment_name : experiment of the runs; None = the study name. Created when missing.
    metric_names : names of the objective values; None = ``("accuracy", "fairness")`` for two
        objectives, ``("value",)`` for one, ``value_0, value_1, ...`` otherwise.
    alpha : alpha used for ``weighted_score`` when a trial has no ``alpha`` attribute (None = skip).
    log_models : log the model handed over with :func:`keep_model` into the child run.
    model_pip_requirements : pip requirements recorded with logged models (explicit, so no slow inference).
    settle_seconds : how old every parent candidate must be before the oldest is chosen.
    artifact_location : artifact root of an experiment this callback creates (None = the store's default).
    fast_sql : write each child run in one transaction when the store is a SQL database used directly.
    """

    def __init__(self, tracking_uri=None, experiment_name=None, *, metric_names=None, alpha=None,
                 log_models=False, model_pip_requirements=None, settle_seconds=1.0, artifact_location=None,
                 fast_sql=True):
        from mlflow.tracking import MlflowClient
        from mlflow.tracking._tracking_service.utils import _resolve_tracking_uri

        if alpha is not None and (_finite(alpha) is None or not 0 <= alpha <= 1):
            raise ValueError(f"alpha must be None or a float in [0, 1], got {alpha!r}")
        if not (isinstance(settle_seconds, (int, float)) and settle_seconds >= 0):
            raise ValueError(f"settle_seconds must be a number >= 0, got {settle_seconds!r}")
        if metric_names is not None and (isinstance(metric_names, str) or not all(
                isinstance(name, str) and name for name in metric_names)):
            raise TypeError(f"metric_names must be a sequence of non-empty strings, got {metric_names!r}")
        self.tracking_uri = _resolve_tracking_uri(tracking_uri)
        self.client = MlflowClient(self.tracking_uri)
        self.experiment_name = experiment_name
        self.metric_names = None if metric_names is None else tuple(metric_names)
        self.alpha = alpha
        self.log_models = bool(log_models)
        self.model_pip_requirements = model_pip_requirements
        self.settle_seconds = float(settle_seconds)
        self.artifact_location = artifact_location
        self._sql = _SqlRunWriter.for_client(self.client) if fast_sql else None
        self._lock = threading.Lock()
        self._experiments: dict[str, str] = {}
        self._parents: dict[str, str] = {}

    # ---------------------------------------------------------------- experiment and parent run
    def experiment_id(self, study) -> str:
        """Id of the experiment the study's runs go to (created when missing, safe under races)."""
        from mlflow.exceptions import MlflowException

        name = self.experiment_name or study.study_name
        if name not in self._experiments:
            experiment = self.client.get_experiment_by_name(name)
            if experiment is None:
                try:
                    self._experiments[name] = self.client.create_experiment(name, self.artifact_location)
                except MlflowException:  # another worker created it in between
                    experiment = self.client.get_experiment_by_name(name)
                    if experiment is None:
                        raise
            if name not in self._experiments:
                self._experiments[name] = experiment.experiment_id
        return self._experiments[name]

    def parent_run_id(self, study) -> str:
        """The study's parent run, found or created once per study across threads and processes."""
        key = study.study_name
        with self._lock:
            if key not in self._parents:
                self._parents[key] = self._resolve_parent(study)
            return self._parents[key]

    def _candidates(self, experiment_id: str, study_name: str):
        from mlflow.entities import ViewType

        escaped = study_name.replace("'", "\\'")
        return self.client.search_runs(
            [experiment_id],
            f"tags.`{ROLE_TAG}` = 'study' and tags.`{STUDY_TAG}` = '{escaped}'",
            run_view_type=ViewType.ACTIVE_ONLY,
            max_results=50,
        )

    def _resolve_parent(self, study) -> str:
        storage, study_id = study._storage, study._study_id
        experiment_id = self.experiment_id(study)
        stored = storage.get_study_system_attrs(study_id).get(PARENT_ATTR)
        if stored and stored.get("experiment_id") == experiment_id:
            return stored["run_id"]
        own = None
        while True:
            candidates = self._candidates(experiment_id, study.study_name)
            if not candidates:
                own = self._create_parent(experiment_id, study)
                continue
            youngest = max(run.info.start_time for run in candidates)
            wait = self.settle_seconds - (_now_ms() - youngest) / 1000.0
            if wait > 0:
                time.sleep(wait)
                continue
            winner = min(candidates, key=lambda run: (run.info.start_time, run.info.run_id)).info.run_id
            break
        if own is not None and own != winner:
            self.client.delete_run(own)
        storage.set_study_system_attr(study_id, PARENT_ATTR, {"experiment_id": experiment_id, "run_id": winner})
        return winner

    def _create_parent(self, experiment_id: str, study) -> str:
        directions = ",".join(d.name.lower() for d in study.directions)
        tags = {
            ROLE_TAG: "study",
            STUDY_TAG: study.study_name,
            "study_name": study.study_name,
            "directions": directions,
            "sampler": type(study.sampler).__name__,
            "fairops_version": fairops.__version__,
        }
        run = self.client.create_run(experiment_id, start_time=_now_ms(), tags=tags, run_name=study.study_name)
        return run.info.run_id

    def finish(self, study) -> None:
        """Mark the parent run finished (call once, after all workers are done)."""
        self.client.set_terminated(self.parent_run_id(study), "FINISHED")

    # -------------------------------------------------------------------------- per trial
    def _value_names(self, study, n_values: int) -> tuple:
        if self.metric_names is not None:
            if len(self.metric_names) != n_values:
                raise ValueError(f"metric_names has {len(self.metric_names)} names, the trial has {n_values} values")
            return self.metric_names
        if n_values == 2:
            return ("accuracy", "fairness")
        if n_values == 1:
            return ("value",)
        return tuple(f"value_{i}" for i in range(n_values))

    def trial_record(self, study, trial) -> tuple[dict, dict, dict]:
        """``(params, metrics, tags)`` that the child run of ``trial`` gets."""
        metrics = {}
        if trial.values is not None:
            for name, value in zip(self._value_names(study, len(trial.values)), trial.values):
                if _finite(value) is not None:
                    metrics[name] = float(value)
        attrs = trial.user_attrs
        for name in METRIC_ATTRS:
            if _finite(attrs.get(name)) is not None:
                metrics[name] = float(attrs[name])
        alpha = metrics.get("alpha", self.alpha)
        if "weighted_score" not in metrics and alpha is not None and {"accuracy", "fairness"} <= metrics.keys():
            metrics["weighted_score"] = alpha * metrics["accuracy"] + (1 - alpha) * metrics["fairness"]
        if trial.duration is not None:
            metrics["trial_seconds"] = trial.duration.total_seconds()
        tags = {name: str(attrs[name]) for name in TAG_ATTRS if name in attrs}
        tags.update({
            "trial_state": trial.state.name,
            "trial_number": str(trial.number),
            "study_name": study.study_name,
            "fairops_version": fairops.__version__,
        })
        params = {name: str(value)[:6000] for name, value in trial.params.items()}
        return params, metrics, tags

    @staticmethod
    def rung_history(trial) -> list[tuple[str, float, int]]:
        """``(metric, value, step)`` for the per-rung values of an asynchronous Fairband trial.

        >>> import optuna
        >>> t = optuna.trial.create_trial(values=[0.5, 0.5], user_attrs={"rung0_accuracy": 0.4, "rung1_accuracy": 0.6})
        >>> FairnessTrackingCallback.rung_history(t)
        [('rung_accuracy', 0.4, 0), ('rung_accuracy', 0.6, 1)]
        """
        history = []
        for name, value in trial.user_attrs.items():
            match = _RUNG_ATTR.match(name)
            if match and _finite(value) is not None:
                history.append((f"rung_{match[2]}", float(value), int(match[1])))
        return sorted(history, key=lambda entry: (entry[0], entry[2]))

    def __call__(self, study, trial) -> None:
        from mlflow.entities import Metric, Param
        from mlflow.utils.mlflow_tags import MLFLOW_PARENT_RUN_ID, MLFLOW_RUN_NAME

        parent = self.parent_run_id(study)
        params, metrics, tags = self.trial_record(study, trial)
        tags.update({
            MLFLOW_PARENT_RUN_ID: parent,
            MLFLOW_RUN_NAME: f"{study.study_name}/trial-{trial.number}",
            ROLE_TAG: "trial",
            STUDY_TAG: study.study_name,
            TRIAL_TAG: str(trial.number),
        })
        start = int(trial.datetime_start.timestamp() * 1000) if trial.datetime_start else _now_ms()
        end = int(trial.datetime_complete.timestamp() * 1000) if trial.datetime_complete else _now_ms()
        status = {"COMPLETE": "FINISHED", "PRUNED": "KILLED"}.get(trial.state.name, "FAILED")
        model = _pop_model(study.study_name, trial.number)
        experiment_id = self.experiment_id(study)
        history = self.rung_history(trial)
        if self._sql is not None and not (self.log_models and model is not None):
            try:
                self._sql.write(experiment_id, start, end, status, tags, params, metrics, history)
                return
            except Exception as error:  # noqa: BLE001 - the transaction rolled back; nothing was written
                self._sql = None
                warnings.warn(f"one-transaction run writes disabled ({error!r}); using MlflowClient calls",
                              RuntimeWarning, stacklevel=2)
        run_id = self.client.create_run(experiment_id, start_time=start, tags=tags).info.run_id
        self.client.log_batch(
            run_id,
            metrics=[Metric(name, value, end, 0) for name, value in metrics.items()]
            + [Metric(name, value, end, step) for name, value, step in history],
            params=[Param(name, value) for name, value in params.items()],
        )
        if self.log_models and model is not None:
            from ._flavor import log_estimator

            log_estimator(model, run_id=run_id, tracking_uri=self.tracking_uri, pip_requirements=self.model_pip_requirements)
        self.client.set_terminated(run_id, status, end_time=end)


class _SqlRunWriter:
    """Writes a finished run with its tags, params and metrics in one transaction of a SQL store."""

    def __init__(self, store):
        self.store = store
        self._artifact_roots: dict[str, str] = {}

    @classmethod
    def for_client(cls, client):
        try:
            from mlflow.store.tracking.sqlalchemy_store import SqlAlchemyStore

            store = client._tracking_client.store
        except (ImportError, AttributeError):
            return None
        return cls(store) if isinstance(store, SqlAlchemyStore) else None

    def write(self, experiment_id, start, end, status, tags, params, metrics, history=()) -> str:
        import uuid

        from mlflow.entities import LifecycleStage, SourceType
        from mlflow.store.tracking.dbmodels.models import SqlLatestMetric, SqlMetric, SqlParam, SqlRun, SqlTag
        from mlflow.utils.mlflow_tags import MLFLOW_RUN_NAME, MLFLOW_USER
        from mlflow.utils.uri import append_to_uri_path

        if experiment_id not in self._artifact_roots:
            experiment = self.store.get_experiment(experiment_id)
            if experiment.lifecycle_stage != LifecycleStage.ACTIVE:
                raise ValueError(f"experiment {experiment_id} is deleted")
            self._artifact_roots[experiment_id] = experiment.artifact_location
        run_id = uuid.uuid4().hex
        with self.store.ManagedSessionMaker(read_only=False) as session:
            session.add(SqlRun(
                name=tags.get(MLFLOW_RUN_NAME, run_id), run_uuid=run_id, experiment_id=int(experiment_id),
                artifact_uri=append_to_uri_path(self._artifact_roots[experiment_id], run_id, "artifacts"),
                source_type=SourceType.to_string(SourceType.UNKNOWN), source_name="", entry_point_name="",
                user_id=tags.get(MLFLOW_USER, "unknown"), status=status, start_time=start, end_time=end, deleted_time=None,
                source_version="", lifecycle_stage=LifecycleStage.ACTIVE,
            ))
            session.add_all(SqlTag(key=k, value=v, run_uuid=run_id) for k, v in tags.items())
            session.add_all(SqlParam(key=k, value=v, run_uuid=run_id) for k, v in params.items())
            latest = {}
            for key, value, step in [(k, v, 0) for k, v in metrics.items()] + list(history):
                row = {"key": key, "value": value, "timestamp": end, "step": step, "is_nan": False, "run_uuid": run_id}
                session.add(SqlMetric(**row))
                if key not in latest or step >= latest[key]["step"]:
                    latest[key] = row
            session.add_all(SqlLatestMetric(**row) for row in latest.values())
        return run_id
