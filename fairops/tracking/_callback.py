"""Per-trial fairness tracking: one MLflow parent run per Optuna study, one child run per trial.

:class:`FairnessTrackingCallback` is an Optuna callback: each finished trial becomes a child run (its name,
hyperparameters, objective values and fairness attributes as metrics, Fairband's tags) written through
MLflow's public client, on a thread of the callback's own with ``synchronous=False``. The parent run holds the
study's settings, the running pick against the budget spent (the anytime curve) and, from
:meth:`~FairnessTrackingCallback.finish`, the table of every fit. Models are logged only on request
(:func:`keep_model`). What each run records, how workers share one parent run and the order of the writes:
``docs/mlflow/tracking.md``.

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

import functools
import threading
import warnings
from typing import TYPE_CHECKING, Any, Literal

from .._param_checks import check_alpha
from ..errors import InputError
from ._anytime import BUDGET_SPENT
from ._kept_models import _pop_model, keep_model
from ._parent_run import PARENT_ATTR, ROLE_TAG, STUDY_TAG, now_ms
from ._run_writer import BackgroundWrites
from ._session import TRIAL_TAG, TrackingSession, artifacts_beside, run_status
from ._study_record import StudyRecord
from ._trial_record import METRIC_ATTRS, TAG_ATTRS, budget_label, rung_history, trial_record, trial_run_name
from ._trials_table import TRIALS_TABLE

if TYPE_CHECKING:
    from collections.abc import Sequence

    import optuna
    from mlflow.tracking import MlflowClient
    from optuna.trial import FrozenTrial

__all__ = ["BUDGET_SPENT", "METRIC_ATTRS", "MODEL_ERROR_TAG", "PARENT_ATTR", "PICK_TAG", "ROLE_TAG", "STUDY_TAG",
           "TAG_ATTRS", "TRIALS_TABLE", "TRIAL_TAG", "FairnessTrackingCallback", "artifacts_beside", "budget_label",
           "keep_model", "trial_run_name"]

PICK_TAG = "fairops.pick"
#: A trial run's tag when ``log_models=True`` could not save the trial's model: the error, type first.
MODEL_ERROR_TAG = "fairops.model_error"
MODEL_ERROR_FILE = "model_error.txt"  # the artifact with the error's traceback
MODEL_ERROR_LENGTH = 5000  # characters of the reason kept in the tag (MLflow's limit on a tag is 8000)

class FairnessTrackingCallback(StudyRecord):
    """Optuna callback writing one MLflow child run per finished trial (see the module docstring).

    Parameters
    ----------
    tracking_uri : str or None, default=None
        MLflow tracking URI (``sqlite:///...`` or ``http://host:port``); None = MLflow's default.
    experiment_name : str or None, default=None
        Experiment of the runs; None = the study name. Created when missing.
    metric_names : sequence of str or None, default=None
        Names of the objective values; None = ``("accuracy", "fairness")`` for two
        objectives, ``("value",)`` for one, ``value_0, value_1, ...`` otherwise.
    alpha : float, "auto" or None, default=None
        Fairband's weight of accuracy: a float in [0, 1], ``"auto"`` (FB-auto's dynamic alpha) or None.
        With a float, ``weighted_score`` is computed for trials without their own ``alpha``; with a float
        or ``"auto"`` the parent run logs the running pick (the anytime curve).
    log_models : bool, default=False
        Log the model handed over with :func:`keep_model` into the child run.
    model_pip_requirements : list of str or None, default=None
        Pip requirements recorded with logged models (explicit, so no slow inference).
    settle_seconds : float, default=1.0
        How old every parent candidate must be before the oldest is chosen.
    artifact_location : str or None, default=None
        Artifact root of an experiment this callback creates; None = ``mlartifacts``
        beside a SQLite store's file (see :func:`artifacts_beside`), the store's default otherwise.
    synchronous : bool, default=True
        Write each child run before the callback returns; False: on a thread of the callback's own
        while the next trial runs (at most one run waiting), finished by :meth:`flush` or ``finish``.
    family_param : str or None, default="model"
        The trial parameter naming the model family (as ``fairops.fairband.make_model`` does).
    family : str or None, default=None
        The family of trials without that parameter (e.g. a study tuning one model type).
    """

    def __init__(self, tracking_uri: str | None = None, experiment_name: str | None = None, *,
                 metric_names: Sequence[str] | None = None, alpha: float | Literal["auto"] | None = None,
                 log_models: bool = False, model_pip_requirements: list[str] | None = None,
                 settle_seconds: float = 1.0, artifact_location: str | None = None, synchronous: bool = True,
                 family_param: str | None = "model", family: str | None = None) -> None:
        if alpha is not None:
            check_alpha(alpha, accepted="None, 'auto' or a float")
        if not (isinstance(settle_seconds, (int, float)) and settle_seconds >= 0):
            raise InputError(f"settle_seconds must be a number >= 0, got {settle_seconds!r}")
        if metric_names is not None and (isinstance(metric_names, str) or not all(
                isinstance(name, str) and name for name in metric_names)):
            raise TypeError(f"metric_names must be a sequence of non-empty strings, got {metric_names!r}")
        for name, value in (("family_param", family_param), ("family", family)):
            if value is not None and (not isinstance(value, str) or not value):
                raise TypeError(f"{name} must be None or a non-empty string, got {value!r}")
        #: The MLflow side: client, experiments and parent runs (:class:`~fairops.tracking._session.TrackingSession`).
        self.session = TrackingSession(tracking_uri, experiment_name, artifact_location=artifact_location,
                                       settle_seconds=settle_seconds)
        self.metric_names = None if metric_names is None else tuple(metric_names)
        self.alpha = alpha
        self.log_models = bool(log_models)
        self.model_pip_requirements = model_pip_requirements
        self.family_param = family_param
        self.family = family
        self.synchronous = bool(synchronous)
        self._picks: dict = {}
        self._warned_models: set[tuple[str, str]] = set()  # (study, reason) a model was not logged for
        self._connect()

    def _connect(self) -> None:
        """The lock, the queued batches, the writer thread and what the running picks read of each fit (study
        name -> its RunningSelection): what one process holds."""
        self._lock = threading.Lock()
        self._pending: list = []
        self._selections: dict = {}
        self._writes = BackgroundWrites(backlog=1)

    def __getstate__(self) -> dict:
        """What ``pickle`` and ``copy.deepcopy`` keep: the settings and which experiment, parent run and pick
        each study has. Runs still being written are waited for first, so the copy's store holds every trial
        tracked so far. The client, the lock, the writer thread and the batches MLflow still queues stay with
        this object (a copy starts with none queued); the copy opens its own client on load.

        >>> import copy, tempfile
        >>> callback = FairnessTrackingCallback(f"sqlite:///{tempfile.mkdtemp()}/mlflow.db")
        >>> copied = copy.deepcopy(callback)
        >>> copied.tracking_uri == callback.tracking_uri and copied.client is not callback.client
        True
        """
        self._writes.flush()
        state = self.__dict__.copy()
        for name in ("_writes", "_lock", "_pending", "_selections"):
            del state[name]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._connect()

    # ---------------------------------------------------------------- the session's, as attributes
    @property
    def client(self) -> MlflowClient:
        """The MLflow client."""
        return self.session.client

    @property
    def tracking_uri(self) -> str:
        """The resolved tracking URI."""
        return self.session.tracking_uri

    @property
    def experiment_name(self) -> str | None:
        """None: the study's name."""
        return self.session.experiment_name

    @property
    def artifact_location(self) -> str | None:
        """Artifact root of an experiment this callback creates."""
        return self.session.artifact_location

    @property
    def settle_seconds(self) -> float:
        """How old every parent candidate must be before the oldest is chosen."""
        return self.session.settle_seconds

    def experiment_id(self, study: optuna.Study) -> str:
        """Id of the experiment the study's runs go to (created when missing, safe under races).

        Parameters
        ----------
        study : optuna.Study
            The study.

        Returns
        -------
        str
            The experiment id.
        """
        return self.session.experiment_id(study)

    def parent_run_id(self, study: optuna.Study) -> str:
        """The study's parent run, found or created once per study across threads and processes.

        Parameters
        ----------
        study : optuna.Study
            The study.

        Returns
        -------
        str
            The parent run's id.
        """
        return self.session.parent_run_id(study)

    def trial_run_ids(self, study: optuna.Study) -> dict[int, str]:
        """Trial number -> run id of the study's child runs.

        Parameters
        ----------
        study : optuna.Study
            The study.

        Returns
        -------
        dict of int to str
            The child runs' ids by trial number.
        """
        return self.session.trial_run_ids(study)

    def flush(self) -> None:
        """Wait for the child runs still being written and the batches MLflow still queues.

        The runs are those of ``synchronous=False``, the batches those of MLflow's asynchronous logging
        (``MLFLOW_ENABLE_ASYNC_LOGGING``). The first error of a write is raised here.
        """
        self._writes.flush()
        with self._lock:
            pending, self._pending = self._pending, []
        for operations in pending:
            operations.wait()

    # -------------------------------------------------------------------------- per trial
    def family_of(self, trial: FrozenTrial) -> str | None:
        """The trial's model family: its ``family_param`` parameter, a ``family`` attribute, or ``family``.

        Parameters
        ----------
        trial : optuna.trial.FrozenTrial
            The trial.

        Returns
        -------
        str or None
            The family, None if unknown.
        """
        value = trial.params.get(self.family_param) if self.family_param else None
        value = value if value is not None else trial.user_attrs.get("family", self.family)
        return None if value is None else str(value)

    def run_name(self, trial: FrozenTrial) -> str:
        """The child run's name, see :func:`trial_run_name`.

        Parameters
        ----------
        trial : optuna.trial.FrozenTrial
            The trial.

        Returns
        -------
        str
            ``t<number> <family> <budget>``.
        """
        return trial_run_name(trial.number, self.family_of(trial), trial.user_attrs.get("budget"))

    def trial_record(self, study: optuna.Study, trial: FrozenTrial,
                     ) -> tuple[dict[str, Any], dict[str, float], dict[str, str]]:
        """``(params, metrics, tags)`` that the child run of ``trial`` gets.

        Parameters
        ----------
        study : optuna.Study
            The study.
        trial : optuna.trial.FrozenTrial
            The trial.

        Returns
        -------
        tuple of dict
            See :func:`~fairops.tracking._trial_record.trial_record`.
        """
        return trial_record(study.study_name, trial, metric_names=self.metric_names, alpha=self.alpha,
                            family=self.family_of(trial))

    rung_history = staticmethod(rung_history)

    def __call__(self, study: optuna.Study, trial: FrozenTrial) -> None:
        """Write the finished trial's child run (Optuna calls it after each trial).

        Parameters
        ----------
        study : optuna.Study
            The study.
        trial : optuna.trial.FrozenTrial
            The finished trial.
        """
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
        model = _pop_model(study.study_name, trial.number)  # popped either way: kept models are not held
        model = model if self.log_models else None
        write = functools.partial(self._write_run, self.experiment_id(study), name, start, end, run_status(trial.state),
                                  tags, params, metrics, self.rung_history(trial), study.study_name, trial.number,
                                  model)
        if self.synchronous or model is not None:  # a model is logged from the trial's own thread
            write()
        else:
            self._writes.submit(write)
        if self.alpha is not None and len(study.directions) == 2:
            self._log_running_pick(study, parent)

    def _write_run(self, experiment_id, name, start, end, status, tags, params, metrics, history, study_name,
                   number, model):
        """A trial's child run: created RUNNING with its tags, its params and metrics, its model, its status."""
        run_id = self.client.create_run(experiment_id, start_time=start, tags=tags, run_name=name).info.run_id
        self._log_values(run_id, params, metrics, history, end)
        if model is not None:
            self._log_model(run_id, study_name, number, model)
        self.client.set_terminated(run_id, status, end_time=end)

    def _log_model(self, run_id: str, study_name: str, number: int, model) -> None:
        """Log a trial's model into its run; one that cannot be saved is recorded there instead (the tag
        :data:`MODEL_ERROR_TAG` with the reason, ``model_error.txt`` with the traceback) and warned about once
        per study and reason, since an error raised in a callback would end ``study.optimize``."""
        import traceback

        from ..mlflow.flavors import log_estimator

        try:
            log_estimator(model, run_id=run_id, tracking_uri=self.tracking_uri,
                          pip_requirements=self.model_pip_requirements)
        except Exception as error:  # noqa: BLE001 - whatever the flavor raises, the study goes on
            reason = f"{type(error).__name__}: {error}"
            if (study_name, reason) not in self._warned_models:
                self._warned_models.add((study_name, reason))
                warnings.warn(f"trial {number}'s model was not logged ({reason}); the run records why in its tag "
                              f"{MODEL_ERROR_TAG}, as does every later trial of study {study_name!r} whose model "
                              "fails the same way (warned once per study)", RuntimeWarning, stacklevel=4)
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

    def complete_interrupted(self, study: optuna.Study, trial: FrozenTrial, run_id: str) -> None:
        """Finish a trial's child run left RUNNING by a worker that died while logging it.

        The values are logged only if the dead worker had not logged them yet (no duplicate points),
        then the run gets the trial's final status and end time.

        Parameters
        ----------
        study : optuna.Study
            The study.
        trial : optuna.trial.FrozenTrial
            The finished trial.
        run_id : str
            Its child run.
        """
        params, metrics, _ = self.trial_record(study, trial)
        end = int(trial.datetime_complete.timestamp() * 1000) if trial.datetime_complete else now_ms()
        if not self.client.get_run(run_id).data.metrics:
            self._log_values(run_id, params, metrics, self.rung_history(trial), end)
        self.client.set_terminated(run_id, run_status(trial.state), end_time=end)
