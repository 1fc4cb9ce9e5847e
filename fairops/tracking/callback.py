"""Per-trial fairness tracking: one MLflow parent run per Optuna study, one child run per trial.

:class:`FairnessTrackingCallback` is an Optuna callback. For each finished trial it writes one child
run through MLflow's public client (``create_run`` with its tags, one ``log_batch``, ``set_terminated``):

- name: what the fit is, ``t186 lightgbm 33%`` (trial number, model family, budget);
- params: the trial's hyperparameters;
- metrics: the objective values (``accuracy`` and ``fairness`` for a two-objective study), the trial
  user attributes ``auc_y``, ``auc_s``, ``alpha``, ``budget``, ``weighted_score``, for outlier work
  ``jaccard``, ``preservation``, ``outlier_fraction``, ``euclidean_disparity``, ``wasserstein_disparity``,
  for a bias reduction ``n_predictors`` and ``duality_gap`` (each when present), the interval bounds
  ``accuracy_low`` / ``accuracy_high`` / ``fairness_low`` / ``fairness_high`` and each attribute's ratio
  ``fairness.<attribute>`` (from the attributes ``intervals`` and ``fairness_by_attribute``);
  ``weighted_score = alpha*accuracy + (1-alpha)*fairness`` is computed when alpha is known and the
  attribute is absent; the per-rung values an asynchronous Fairband trial reports (attributes
  ``rung<i>_accuracy``, ``rung<i>_fairness``) become the metric histories ``rung_accuracy`` and
  ``rung_fairness`` with step ``i``;
- tags: ``family``, ``bracket``, ``rung``, ``budget`` (as in the name), ``configuration_id``,
  ``iteration`` (Fairband attributes), the trial state and number, the study name, the fairops version.

The parent run (named after the study) gets the study's settings as params
(:meth:`~FairnessTrackingCallback.log_study_params`) and, with ``alpha`` given, the running pick's
``pick_accuracy``, ``pick_fairness``, ``pick_weighted_score`` and ``pick_trial`` with the budget spent
so far as the step (in hundredths of one full-data fit), and ``budget_spent`` (in full-data fits) at the
same steps, so MLflow's chart view draws the study's anytime curve against the budget.
:meth:`~FairnessTrackingCallback.finish` adds the ``fairops_trials.json`` table (MLflow's
``log_table``: every fit's metrics and settings) and ends the run. Experiments this callback creates are
tagged as model-training experiments (``mlflow.experimentKind``); see :mod:`fairops.tracking.ui_links`.

Parent run: workers that start together elect one (:mod:`fairops.tracking.parent_run`). Each trial is
finished by exactly one worker and the callback runs once per trial, so child runs are neither lost nor
duplicated. Calling ``parent_run_id(study)`` once before starting workers avoids the election altogether.

Writes go through the public client; with MLflow's own ``MLFLOW_ENABLE_ASYNC_LOGGING=true`` the
batches are queued and :meth:`~FairnessTrackingCallback.flush` (called by ``finish``) waits for them.
``fast_sql=True`` opts into writing each run in one transaction of a SQL store used directly (see
:mod:`fairops.tracking._sql_runs`: faster, but through MLflow's table models, for the versions it was
written for). Fitted models are logged only on request: call :func:`keep_model` in the objective and
create the callback with ``log_models=True``. A model that cannot be saved does not end the study: its
run gets the tag ``fairops.model_error`` (the reason) and the artifact ``model_error.txt`` (the
traceback), and a ``RuntimeWarning`` says so.

>>> import optuna, tempfile
>>> optuna.logging.set_verbosity(optuna.logging.WARNING)
>>> uri = f"sqlite:///{tempfile.mkdtemp()}/mlflow.db"
>>> callback = FairnessTrackingCallback(tracking_uri=uri, experiment_name="doc", alpha=0.5)
>>> study = optuna.create_study(directions=["maximize", "maximize"], study_name="doc")
>>> def objective(trial):
...     x = trial.suggest_float("x", 0, 1)
...     trial.set_user_attr("auc_s", 0.5 + x / 2)
...     return x, 1 - x
>>> study.optimize(objective, n_trials=3, callbacks=[callback])
>>> callback.finish(study)
>>> runs = callback.client.search_runs([callback.experiment_id(study)], "tags.`fairops.role` = 'trial'")
>>> len(runs), sorted(runs[0].data.metrics), runs[-1].info.run_name
(3, ['accuracy', 'auc_s', 'fairness', 'trial_seconds', 'weighted_score'], 't0')
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
import warnings
from pathlib import Path

import fairops

from ..store_lock import store_open_lock
from .parent_run import PARENT_ATTR, ROLE_TAG, STUDY_TAG, elect_parent_run, now_ms  # noqa: F401 - re-export

#: The parent run's metric: fits' budgets summed so far, in full-data fits (the anytime curve's x axis).
BUDGET_SPENT = "budget_spent"
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
    "n_predictors",
    "duality_gap",
)
TAG_ATTRS = ("bracket", "rung", "configuration_id", "iteration")
_RUNG_ATTR = re.compile(r"^rung(\d+)_(accuracy|fairness)$")
TRIAL_TAG = "fairops.trial_number"
PICK_TAG = "fairops.pick"
TRIALS_TABLE = "fairops_trials.json"
#: A trial run's tag when ``log_models=True`` could not save the trial's model: the error, type first.
MODEL_ERROR_TAG = "fairops.model_error"
MODEL_ERROR_FILE = "model_error.txt"  # the artifact with the error's traceback
MODEL_ERROR_LENGTH = 5000  # characters of the reason kept in the tag (MLflow's limit on a tag is 8000)

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


def _interval_metrics(attrs: dict) -> dict:
    """``accuracy_low``, ``fairness_high``, ... and ``fairness.<attribute>`` from a fit's user attributes.

    >>> _interval_metrics({"intervals": {"fairness": [0.7, 1.0]}, "fairness_by_attribute": {"sex": 0.9}})
    {'fairness_low': 0.7, 'fairness_high': 1.0, 'fairness.sex': 0.9}
    """
    metrics = {}
    intervals = attrs.get("intervals")
    for name, bounds in (intervals.items() if isinstance(intervals, dict) else ()):
        if isinstance(bounds, (list, tuple)) and len(bounds) == 2:
            for side, value in zip(("low", "high"), bounds):
                if _finite(value) is not None:
                    metrics[f"{name}_{side}"] = float(value)
    by_attribute = attrs.get("fairness_by_attribute")
    for attribute, value in (by_attribute.items() if isinstance(by_attribute, dict) else ()):
        if _finite(value) is not None:
            metrics[f"fairness.{re.sub(r'[^A-Za-z0-9_./ -]', '_', str(attribute))}"] = float(value)
    return metrics


def budget_label(budget) -> str | None:
    """A budget (share of the training rows) as the percentage a run name shows.

    >>> budget_label(1 / 3), budget_label(1 / 81), budget_label(1.0), budget_label(None)
    ('33%', '1.2%', '100%', None)
    """
    value = _finite(budget)
    if value is None:
        return None
    percent = 100 * value
    return f"{percent:.0f}%" if percent >= 9.95 else f"{percent:.2g}%"


def trial_run_name(number: int, family: str | None = None, budget=None) -> str:
    """``t<number> <family> <budget>``, leaving out what is not known.

    >>> trial_run_name(186, "lightgbm", 1 / 3), trial_run_name(7, budget=1.0), trial_run_name(3)
    ('t186 lightgbm 33%', 't7 100%', 't3')
    """
    parts = [f"t{number}", family, budget_label(budget)]
    return " ".join(part for part in parts if part)


def artifacts_beside(tracking_uri: str) -> str | None:
    """``mlartifacts`` in the folder of a SQLite store's file, as a URI (MLflow's default is ``./mlruns`` of
    whatever folder the process runs in); None for any other store.

    >>> artifacts_beside("sqlite:////p/mlflow.db"), artifacts_beside("http://mlflow:5000")
    ('file:///p/mlartifacts', None)
    """
    uri = str(tracking_uri)
    if not uri.startswith("sqlite:///") or uri[len("sqlite:///"):] in ("", ":memory:"):
        return None
    return (Path(uri[len("sqlite:///"):]).resolve().parent / "mlartifacts").as_uri()


class FairnessTrackingCallback:
    """Optuna callback writing one MLflow child run per finished trial (see the module docstring).

    Parameters
    ----------
    tracking_uri : MLflow tracking URI (``sqlite:///...`` or ``http://host:port``); None = MLflow's default.
    experiment_name : experiment of the runs; None = the study name. Created when missing.
    metric_names : names of the objective values; None = ``("accuracy", "fairness")`` for two
        objectives, ``("value",)`` for one, ``value_0, value_1, ...`` otherwise.
    alpha : Fairband's weight of accuracy: a float in [0, 1], ``"auto"`` (FB-auto's dynamic alpha) or None.
        With a float, ``weighted_score`` is computed for trials without their own ``alpha``; with a float
        or ``"auto"`` the parent run logs the running pick (the anytime curve).
    log_models : log the model handed over with :func:`keep_model` into the child run.
    model_pip_requirements : pip requirements recorded with logged models (explicit, so no slow inference).
    settle_seconds : how old every parent candidate must be before the oldest is chosen.
    artifact_location : artifact root of an experiment this callback creates; None = ``mlartifacts``
        beside a SQLite store's file (see :func:`artifacts_beside`), the store's default otherwise.
    fast_sql : write each child run in one transaction when the store is a SQL database used directly
        and the MLflow version is one :mod:`fairops.tracking._sql_runs` was written for (opt-in).
    family_param : the trial parameter naming the model family (as ``fairops.fairband.make_model`` does).
    family : the family of trials without that parameter (e.g. a study tuning one model type).
    """

    def __init__(self, tracking_uri=None, experiment_name=None, *, metric_names=None, alpha=None,
                 log_models=False, model_pip_requirements=None, settle_seconds=1.0, artifact_location=None,
                 fast_sql=False, family_param="model", family=None):
        from ..mlflow._mlflow_internals import resolve_tracking_uri

        if alpha is not None and alpha != "auto" and (_finite(alpha) is None or not 0 <= alpha <= 1):
            raise ValueError(f"alpha must be None, 'auto' or a float in [0, 1], got {alpha!r}")
        if not (isinstance(settle_seconds, (int, float)) and settle_seconds >= 0):
            raise ValueError(f"settle_seconds must be a number >= 0, got {settle_seconds!r}")
        if metric_names is not None and (isinstance(metric_names, str) or not all(
                isinstance(name, str) and name for name in metric_names)):
            raise TypeError(f"metric_names must be a sequence of non-empty strings, got {metric_names!r}")
        for name, value in (("family_param", family_param), ("family", family)):
            if value is not None and (not isinstance(value, str) or not value):
                raise TypeError(f"{name} must be None or a non-empty string, got {value!r}")
        self.tracking_uri = resolve_tracking_uri(tracking_uri)
        self.experiment_name = experiment_name
        self.metric_names = None if metric_names is None else tuple(metric_names)
        self.alpha = alpha
        self.log_models = bool(log_models)
        self.model_pip_requirements = model_pip_requirements
        self.settle_seconds = float(settle_seconds)
        self.artifact_location = artifact_location if artifact_location is not None else \
            artifacts_beside(self.tracking_uri)
        self.family_param = family_param
        self.family = family
        self._fast_sql = bool(fast_sql)
        self._experiments: dict[str, str] = {}
        self._parents: dict[str, str] = {}
        self._picks: dict[str, tuple] = {}
        self._connect()

    def _connect(self) -> None:
        """The MLflow client, the lock and the optional one-transaction writer: what one process holds."""
        from mlflow.tracking import MlflowClient

        with store_open_lock(self.tracking_uri):  # a fresh store gets its schema from one process only
            self.client = MlflowClient(self.tracking_uri)
            self.client.search_experiments(max_results=1)
        self._sql = None
        if self._fast_sql:
            from ._sql_runs import sql_run_writer

            self._sql = sql_run_writer(self.client)
        self._lock = threading.Lock()
        self._pending: list = []

    def __getstate__(self) -> dict:
        """What ``pickle`` and ``copy.deepcopy`` keep: the settings and which experiment, parent run and pick
        each study has. The client, the lock and the batches MLflow still queues stay with this object (a
        copy starts with none queued); the copy opens its own client on load.

        >>> import copy, tempfile
        >>> callback = FairnessTrackingCallback(f"sqlite:///{tempfile.mkdtemp()}/mlflow.db")
        >>> copied = copy.deepcopy(callback)
        >>> copied.tracking_uri == callback.tracking_uri and copied.client is not callback.client
        True
        """
        state = self.__dict__.copy()
        for name in ("client", "_sql", "_lock", "_pending"):
            del state[name]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._connect()

    # ---------------------------------------------------------------- experiment and parent run
    def experiment_id(self, study) -> str:
        """Id of the experiment the study's runs go to (created when missing, safe under races)."""
        from mlflow.exceptions import MlflowException

        from .ui_links import EXPERIMENT_KIND_TAG, MODEL_TRAINING

        name = self.experiment_name or study.study_name
        if name not in self._experiments:
            experiment = self.client.get_experiment_by_name(name)
            if experiment is None:
                try:
                    self._experiments[name] = self.client.create_experiment(
                        name, self.artifact_location, tags={EXPERIMENT_KIND_TAG: MODEL_TRAINING})
                except MlflowException:  # another worker created it in between
                    experiment = self.client.get_experiment_by_name(name)
                    if experiment is None:
                        raise
            if name not in self._experiments:
                self._experiments[name] = experiment.experiment_id  # type: ignore[union-attr]  # found above
        return self._experiments[name]

    def parent_run_id(self, study) -> str:
        """The study's parent run, found or created once per study across threads and processes."""
        key = study.study_name
        with self._lock:
            if key not in self._parents:
                self._parents[key] = elect_parent_run(self.client, study, self.experiment_id(study),
                                                      settle_seconds=self.settle_seconds)
            return self._parents[key]

    def log_study_params(self, study, params: dict) -> None:
        """Record what defines the study as params of its parent run (data, task, method, seed, ...).

        Params cannot change in MLflow: a key already recorded with another value (a later run of the
        same study with more ``--iterations``) keeps its first value and the new one goes into the tag
        of the same name.
        """
        from mlflow.entities import Param, RunTag
        from mlflow.exceptions import MlflowException

        parent = self.parent_run_id(study)
        text = {str(key): str(value)[:6000] for key, value in params.items()}
        for attempt in range(3):
            recorded = self.client.get_run(parent).data.params
            new = [Param(k, v) for k, v in text.items() if k not in recorded]
            changed = [RunTag(k, v) for k, v in text.items() if k in recorded and recorded[k] != v]
            if not (new or changed):
                return
            try:
                self.client.log_batch(parent, params=new, tags=changed)
                return
            except MlflowException:
                # Workers started together log the same params at once; the store refuses the
                # second insert of a key. Read what the other worker wrote and log what is left.
                if attempt == 2:
                    raise
                time.sleep(0.2 * (attempt + 1))

    def reopen(self, study) -> None:
        """Mark the parent run RUNNING again (a resumed or extended study)."""
        parent = self.parent_run_id(study)
        if self.client.get_run(parent).info.status != "RUNNING":
            self.client.update_run(parent, status="RUNNING")

    def flush(self) -> None:
        """Wait for batches queued by MLflow's asynchronous logging (``MLFLOW_ENABLE_ASYNC_LOGGING``)."""
        with self._lock:
            pending, self._pending = self._pending, []
        for operations in pending:
            operations.wait()

    def finish(self, study, status: str = "FINISHED") -> None:
        """End the parent run with ``status`` (FINISHED, KILLED or FAILED) after logging its last
        anytime-curve point and the fits not yet in its ``fairops_trials.json`` table."""
        if status not in ("FINISHED", "KILLED", "FAILED"):
            raise ValueError(f"status must be FINISHED, KILLED or FAILED, got {status!r}")
        self.flush()
        parent = self.parent_run_id(study)
        if self.alpha is not None:
            self._log_running_pick(study, parent, final=True)
        self._log_trials_table(study, parent)
        self.client.set_terminated(parent, status)

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

    def family_of(self, trial) -> str | None:
        """The trial's model family: its ``family_param`` parameter, a ``family`` attribute, or ``family``."""
        value = trial.params.get(self.family_param) if self.family_param else None
        value = value if value is not None else trial.user_attrs.get("family", self.family)
        return None if value is None else str(value)

    def run_name(self, trial) -> str:
        """The child run's name, see :func:`trial_run_name`."""
        return trial_run_name(trial.number, self.family_of(trial), trial.user_attrs.get("budget"))

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
        metrics.update(_interval_metrics(attrs))
        alpha = metrics.get("alpha", None if self.alpha == "auto" else self.alpha)
        if "weighted_score" not in metrics and alpha is not None and {"accuracy", "fairness"} <= metrics.keys():
            metrics["weighted_score"] = alpha * metrics["accuracy"] + (1 - alpha) * metrics["fairness"]
        if trial.duration is not None:
            metrics["trial_seconds"] = trial.duration.total_seconds()
        tags = {name: str(attrs[name]) for name in TAG_ATTRS if name in attrs}
        family, budget = self.family_of(trial), budget_label(attrs.get("budget"))
        if family is not None:
            tags["family"] = family
        if budget is not None:
            tags["budget"] = budget
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
        from mlflow.utils.mlflow_tags import MLFLOW_PARENT_RUN_ID, MLFLOW_RUN_NAME

        parent = self.parent_run_id(study)
        params, metrics, tags = self.trial_record(study, trial)
        name = self.run_name(trial)
        tags.update({
            MLFLOW_PARENT_RUN_ID: parent,
            MLFLOW_RUN_NAME: name,
            ROLE_TAG: "trial",
            STUDY_TAG: study.study_name,
            TRIAL_TAG: str(trial.number),
        })
        start = int(trial.datetime_start.timestamp() * 1000) if trial.datetime_start else now_ms()
        end = int(trial.datetime_complete.timestamp() * 1000) if trial.datetime_complete else now_ms()
        status = {"COMPLETE": "FINISHED", "PRUNED": "KILLED"}.get(trial.state.name, "FAILED")
        model = _pop_model(study.study_name, trial.number)
        experiment_id = self.experiment_id(study)
        history = self.rung_history(trial)
        written = False
        if self._sql is not None and not (self.log_models and model is not None):
            try:
                self._sql.write(experiment_id, start, end, status, tags, params, metrics, history)
                written = True
            except Exception as error:  # noqa: BLE001 - the transaction rolled back; nothing was written
                self._sql, self._fast_sql = None, False
                warnings.warn(f"one-transaction run writes disabled ({error!r}); using MlflowClient calls",
                              RuntimeWarning, stacklevel=2)
        if not written:
            run_id = self.client.create_run(experiment_id, start_time=start, tags=tags, run_name=name).info.run_id
            self._log_values(run_id, params, metrics, history, end)
            if self.log_models and model is not None:
                self._log_model(run_id, trial.number, model)
            self.client.set_terminated(run_id, status, end_time=end)
        if self.alpha is not None and len(study.directions) == 2:
            self._log_running_pick(study, parent)

    def _log_model(self, run_id: str, number: int, model) -> None:
        """Log a trial's model into its run; one that cannot be saved is recorded there instead (the tag
        :data:`MODEL_ERROR_TAG` with the reason, ``model_error.txt`` with the traceback) and warned about,
        since an error raised in a callback would end ``study.optimize``."""
        import traceback

        from ..mlflow.flavors import log_estimator

        try:
            log_estimator(model, run_id=run_id, tracking_uri=self.tracking_uri,
                          pip_requirements=self.model_pip_requirements)
        except Exception as error:  # noqa: BLE001 - whatever the flavor raises, the study goes on
            reason = f"{type(error).__name__}: {error}"
            warnings.warn(f"trial {number}'s model was not logged ({reason}); the run records why in its tag "
                          f"{MODEL_ERROR_TAG}", RuntimeWarning, stacklevel=3)
            self.client.set_tag(run_id, MODEL_ERROR_TAG, reason[:MODEL_ERROR_LENGTH])
            self.client.log_text(run_id, traceback.format_exc(), MODEL_ERROR_FILE)

    def _log_values(self, run_id: str, params: dict, metrics: dict, history: list, end: int) -> None:
        from mlflow.entities import Metric, Param

        operations = self.client.log_batch(
            run_id,
            metrics=[Metric(key, value, end, 0) for key, value in metrics.items()]
            + [Metric(key, value, end, step) for key, value, step in history],
            params=[Param(key, value) for key, value in params.items()],
        )
        if operations is not None:  # MLflow's asynchronous logging is on: waited for in flush()
            with self._lock:
                self._pending.append(operations)

    def complete_interrupted(self, study, trial, run_id: str) -> None:
        """Finish a trial's child run left RUNNING by a worker that died while logging it.

        The values are logged only if the dead worker had not logged them yet (no duplicate points),
        then the run gets the trial's final status and end time.
        """
        params, metrics, _ = self.trial_record(study, trial)
        end = int(trial.datetime_complete.timestamp() * 1000) if trial.datetime_complete else now_ms()
        if not self.client.get_run(run_id).data.metrics:
            self._log_values(run_id, params, metrics, self.rung_history(trial), end)
        status = {"COMPLETE": "FINISHED", "PRUNED": "KILLED"}.get(trial.state.name, "FAILED")
        self.client.set_terminated(run_id, status, end_time=end)

    # ------------------------------------------------------------------ parent-run summaries
    def _log_running_pick(self, study, parent: str, final: bool = False) -> None:
        """Log the pick so far when it changes (and at the end), with the budget spent as the step.

        Before a new pick, the old one is logged once more one step earlier, so the chart draws steps.
        """
        from mlflow.entities import Metric

        from fairops.fairband.selection import select_best

        trials = [t for t in study.get_trials(deepcopy=False) if t.state.is_finished()]
        try:
            pick = select_best(trials, alpha=self.alpha)
        except ValueError:  # no finished fit with finite accuracy and fairness yet
            return
        spent = math.fsum(_finite(t.user_attrs.get("budget", 1.0)) or 0.0 for t in trials)
        step = int(round(100 * spent))
        values = {"pick_accuracy": pick.accuracy, "pick_fairness": pick.fairness,
                  "pick_weighted_score": float(pick.score), "pick_trial": float(pick.trial.number)}
        with self._lock:
            previous = self._picks.get(study.study_name)
            if previous is not None and previous[0] == pick.trial.number and not final:
                return
            self._picks[study.study_name] = (pick.trial.number, values)
        now = now_ms()
        metrics = [Metric(key, value, now, step) for key, value in values.items()]
        if previous is not None and previous[0] != pick.trial.number and step > 0:
            metrics = [Metric(key, value, now, step - 1) for key, value in previous[1].items()] + metrics
        # the budget spent at each step, so a chart can draw the curve against it (axis named for it)
        steps = sorted({metric.step for metric in metrics})
        metrics += [Metric(BUDGET_SPENT, s / 100, now, s) for s in steps]
        self.client.log_batch(parent, metrics=metrics, synchronous=True)

    def trials_table(self, study):
        """One row per finished trial: number, state, name parts, metrics and the params (as JSON)."""
        import pandas as pd

        rows = []
        for trial in study.get_trials(deepcopy=False):
            if not trial.state.is_finished():
                continue
            params, metrics, tags = self.trial_record(study, trial)
            row = {"trial": trial.number, "state": trial.state.name, "run_name": self.run_name(trial),
                   "family": tags.get("family"), "bracket": tags.get("bracket"), "rung": tags.get("rung")}
            row.update(metrics)
            row["params"] = json.dumps(trial.params, default=str, sort_keys=True)
            rows.append(row)
        return pd.DataFrame(rows)

    def _log_trials_table(self, study, parent: str) -> None:
        """Append the finished fits not yet in the parent run's table (MLflow's ``log_table`` appends)."""
        table = self.trials_table(study)
        if table.empty:
            return
        logged = self.logged_trials_table(parent)
        if logged is not None:
            table = table[~table["trial"].isin(set(logged["trial"].astype(int)))]
        if not table.empty:
            with warnings.catch_warnings():  # MLflow's own dtype check, about pandas 3's str columns
                warnings.filterwarnings("ignore", message="For backward compatibility, 'str' dtypes")
                self.client.log_table(parent, data=table, artifact_file=TRIALS_TABLE)

    def logged_trials_table(self, parent_run_id: str):
        """The ``fairops_trials.json`` table of a parent run, or None before :meth:`finish` wrote it.

        (Read from the artifact: ``MlflowClient.load_table`` searches the runs of the process-wide
        tracking URI rather than this client's.)
        """
        import tempfile

        import pandas as pd

        if TRIALS_TABLE not in {item.path for item in self.client.list_artifacts(parent_run_id)}:
            return None
        with tempfile.TemporaryDirectory() as folder:
            path = self.client.download_artifacts(parent_run_id, TRIALS_TABLE, folder)
            return pd.read_json(path, orient="split")

    def trial_run_ids(self, study) -> dict[int, str]:
        """Trial number -> run id of the study's finished child runs."""
        from mlflow.entities import ViewType

        escaped = study.study_name.replace("'", "\\'")
        found, token = {}, None
        while True:
            page = self.client.search_runs(
                [self.experiment_id(study)], f"tags.`{ROLE_TAG}` = 'trial' and tags.`{STUDY_TAG}` = '{escaped}'",
                run_view_type=ViewType.ACTIVE_ONLY, max_results=1000, page_token=token)
            for run in page:
                found[int(run.data.tags[TRIAL_TAG])] = run.info.run_id
            token = page.token
            if not token:
                return found
