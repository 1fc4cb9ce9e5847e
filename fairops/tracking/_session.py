"""One MLflow tracking store as an Optuna study uses it: the client, the study's experiment and parent run.

:class:`TrackingSession` opens the client once (a fresh store gets its schema from one process only),
finds or creates the study's experiment once (tagged as a model-training experiment, see
:mod:`fairops.tracking._ui_links`), elects the study's parent run once (:mod:`fairops.tracking._parent_run`)
and reads the study's trial runs page by page. :class:`~fairops.tracking.FairnessTrackingCallback` writes
through one; :func:`~fairops.registry.register_best` and the registry lifecycle
(:mod:`fairops.registry._run_once`) take one.

>>> import optuna, tempfile
>>> optuna.logging.set_verbosity(optuna.logging.WARNING)
>>> session = TrackingSession(f"sqlite:///{tempfile.mkdtemp()}/mlflow.db", settle_seconds=0)
>>> study = optuna.create_study(study_name="demo")
>>> session.experiment_id(study) == session.experiment_id(study), session.parent_run_id(study) is not None
(True, True)
>>> session.trial_run_ids(study)
{}
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from .._store_lock import store_open_lock
from ._parent_run import ROLE_TAG, STUDY_TAG, elect_parent_run
from ._search import paged, tags_equal
from ._stores import artifacts_in

if TYPE_CHECKING:
    import optuna
    from mlflow.entities import Run
    from mlflow.tracking import MlflowClient

#: A trial's child run: the trial's number.
TRIAL_TAG = "fairops.trial_number"


def run_status(state) -> str:
    """The MLflow run status of a finished Optuna trial state (a ``TrialState`` or its name).

    >>> import optuna
    >>> run_status(optuna.trial.TrialState.COMPLETE), run_status("PRUNED"), run_status("FAIL")
    ('FINISHED', 'KILLED', 'FAILED')
    """
    name = getattr(state, "name", state)
    return {"COMPLETE": "FINISHED", "PRUNED": "KILLED"}.get(name, "FAILED")


def artifacts_beside(tracking_uri: str) -> str | None:
    """``mlartifacts`` in the folder of a SQLite store's file, as a URI; None for any other store.

    MLflow's default is ``./mlruns`` of whatever folder the process runs in.

    Parameters
    ----------
    tracking_uri : str
        The tracking URI.

    Returns
    -------
    str or None
        A ``file://`` URI.

    Examples
    --------
    >>> artifacts_beside("sqlite:////p/mlflow.db"), artifacts_beside("http://mlflow:5000")
    ('file:///p/mlartifacts', None)
    """
    uri = str(tracking_uri)
    if not uri.startswith("sqlite:///") or uri[len("sqlite:///"):] in ("", ":memory:"):
        return None
    return artifacts_in(Path(uri[len("sqlite:///"):]).resolve().parent).as_uri()


def open_client(tracking_uri: str):
    """An ``MlflowClient`` of ``tracking_uri`` whose store has answered once (so its schema exists)."""
    from mlflow.tracking import MlflowClient

    with store_open_lock(tracking_uri):  # a fresh store gets its schema from one process only
        client = MlflowClient(tracking_uri)
        client.search_experiments(max_results=1)
    return client


def ensure_experiment(client, name: str, artifact_location=None) -> str:
    """Id of the experiment ``name``, created (with its artifact root, as a model-training experiment)
    when missing; safe when another process creates it at the same time."""
    from mlflow.exceptions import MlflowException

    from ._ui_links import EXPERIMENT_KIND_TAG, MODEL_TRAINING

    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        return experiment.experiment_id
    try:
        return client.create_experiment(name, artifact_location, tags={EXPERIMENT_KIND_TAG: MODEL_TRAINING})
    except MlflowException:  # created by another process in between
        experiment = client.get_experiment_by_name(name)
        if experiment is None:
            raise
        return experiment.experiment_id


class TrackingSession:
    """An MLflow client with the experiment and parent run of each study it has tracked (see the module).

    Parameters
    ----------
    tracking_uri : str or None, default=None
        MLflow tracking URI (``sqlite:///...`` or ``http://host:port``); None = the tracking URI current when
        the session is first used (``mlflow.set_tracking_uri``, else ``MLFLOW_TRACKING_URI``, else MLflow's
        default), as MLflow's own callback reads it.
    experiment_name : str or None, default=None
        Experiment of the study's runs; None = the study name. Created when missing.
    artifact_location : str or None, default=None
        Artifact root of an experiment this session creates; None = ``mlartifacts``
        beside a SQLite store's file (see :func:`artifacts_beside`), the store's default otherwise.
    settle_seconds : float, default=1.0
        How old every parent candidate must be before the oldest is chosen.

    Attributes
    ----------
    client : MlflowClient
        The client of ``tracking_uri`` (the resolved URI), opened on first use.
    """

    def __init__(self, tracking_uri: str | None = None, experiment_name: str | None = None, *,
                 artifact_location: str | None = None, settle_seconds: float = 1.0) -> None:
        self._given_uri = tracking_uri
        self._resolved_uri: str | None = None
        self.experiment_name = experiment_name
        self._given_artifact_location = artifact_location
        self.settle_seconds = float(settle_seconds)
        self._experiments: dict[str, str] = {}
        self._parents: dict[str, str] = {}
        self._client: MlflowClient | None = None
        self._lock, self._client_lock = threading.Lock(), threading.Lock()
        if tracking_uri is not None:
            self._open()  # a store named here is opened (and its schema made) at once

    @property
    def tracking_uri(self) -> str:
        """The store's URI: the one given, else the tracking URI current when the session was first used."""
        if self._resolved_uri is None:
            from ..mlflow._mlflow_internals import resolve_tracking_uri

            self._resolved_uri = resolve_tracking_uri(self._given_uri)
        return self._resolved_uri

    @property
    def resolved(self) -> bool:
        """True once the store is known (given, or read from the current tracking URI at first use)."""
        return self._resolved_uri is not None

    @property
    def artifact_location(self) -> str | None:
        """The artifact root of the experiments this session creates (see the parameter)."""
        if self._given_artifact_location is not None:
            return self._given_artifact_location
        return artifacts_beside(self.tracking_uri)

    @property
    def client(self) -> MlflowClient:
        """The ``MlflowClient`` of :attr:`tracking_uri`, opened on first use."""
        return self._client if self._client is not None else self._open()

    def _open(self) -> MlflowClient:
        with self._client_lock:
            if self._client is None:
                self._client = open_client(self.tracking_uri)
            return self._client

    def __getstate__(self) -> dict:
        """The settings and which experiment and parent run each study has; a copy opens its own client
        (as a copied ``FairnessTrackingCallback`` does, whose session this is)."""
        state = self.__dict__.copy()
        del state["_client"], state["_lock"], state["_client_lock"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._client, self._lock, self._client_lock = None, threading.Lock(), threading.Lock()
        if self._resolved_uri is not None:
            self._open()

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
        name = self.experiment_name or study.study_name
        if name not in self._experiments:
            self._experiments[name] = ensure_experiment(self.client, name, self.artifact_location)
        return self._experiments[name]

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
        key = study.study_name
        with self._lock:
            if key not in self._parents:
                self._parents[key] = elect_parent_run(self.client, study, self.experiment_id(study),
                                                      settle_seconds=self.settle_seconds)
            return self._parents[key]

    def trial_runs(self, study: optuna.Study) -> list[Run]:
        """The study's active trial runs (every page of the search), each a ``mlflow.entities.Run``.

        Parameters
        ----------
        study : optuna.Study
            The study.

        Returns
        -------
        list of mlflow.entities.Run
            Its trial runs.
        """
        return paged(self.client.search_runs, [self.experiment_id(study)],
                     tags_equal(**{ROLE_TAG: "trial", STUDY_TAG: study.study_name}))

    def trial_run_ids(self, study: optuna.Study) -> dict[int, str]:
        """Trial number -> run id of the study's trial runs.

        Parameters
        ----------
        study : optuna.Study
            The study.

        Returns
        -------
        dict of int to str
            The trial runs' ids by trial number.
        """
        return {int(run.data.tags[TRIAL_TAG]): run.info.run_id for run in self.trial_runs(study)}
