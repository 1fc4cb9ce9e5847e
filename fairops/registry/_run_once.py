"""One registered version per study and pick, however many times or processes register it.

- :func:`registered_version`: the version an earlier registration of the same study registered for the
  same pick (read through MLflow's public client), so registering again makes nothing new;
- :func:`close_stale_selection_runs`: selection runs left RUNNING by a process killed while registering;
- :func:`register_once`: both, under the model's registry lock, around a registration.

``fairops tune`` registers through :func:`register_once`, and so does
:func:`~fairops.registry.register_best` with ``placement=Placement(once=True)``.

>>> import optuna, tempfile
>>> from fairops.tracking._session import TrackingSession
>>> optuna.logging.set_verbosity(optuna.logging.WARNING)
>>> session = TrackingSession(f"sqlite:///{tempfile.mkdtemp()}/mlflow.db")
>>> study = optuna.create_study(study_name="demo")
>>> register_once(session, study, "demo-model", 0, lambda: "a new version")
('a new version', False)
"""

from __future__ import annotations

import contextvars

from ..tracking._parent_run import ROLE_TAG, STUDY_TAG
from ..tracking._search import paged, quoted, tags_equal
from ..tracking._session import TRIAL_TAG

#: The registered model a ``selection`` run logs its version into (so a rerun finds what it left).
MODEL_TAG = "fairops.registered_model"

# The models whose registration this thread of control is inside of: a registration nested in another of
# the same model (the tuning job's guard around register_best's) holds the lock already, and the registry
# lock is not reentrant.
_HELD: contextvars.ContextVar[frozenset] = contextvars.ContextVar("fairops_registering", default=frozenset())


def registered_version(client, model_name: str, study_name: str, trial_number: int):
    """The newest version of ``model_name`` registered from a finished selection run of this study for
    this trial, or None."""
    from mlflow.exceptions import MlflowException

    try:
        versions = paged(client.search_model_versions, f"name = {quoted(model_name)}")
    except MlflowException:
        return None
    for version in sorted(versions, key=lambda v: int(v.version), reverse=True):
        if not version.run_id:
            continue
        try:
            run = client.get_run(version.run_id)
        except MlflowException:  # the run was deleted
            continue
        tags = run.data.tags
        if tags.get(STUDY_TAG) == study_name and tags.get(TRIAL_TAG) == str(trial_number) \
                and run.info.status == "FINISHED":
            return version
    return None


def close_stale_selection_runs(client, experiment_id: str, study_name: str, model_name: str) -> list[str]:
    """End as KILLED the study's selection runs for ``model_name`` still RUNNING and delete the versions
    registered from them; returns the runs' ids.

    Called holding the model's lock (:func:`~fairops.registry._registry_lock.registry_lock`), which
    every registration through :func:`register_once` holds: a selection run RUNNING then was left by a
    process killed while registering, and a version it made never got its description, tags or intended
    alias.
    """
    selection = tags_equal(**{ROLE_TAG: "selection", STUDY_TAG: study_name, MODEL_TAG: model_name})
    runs = paged(client.search_runs, [experiment_id], f"{selection} and attributes.status = 'RUNNING'")
    for run in runs:
        for version in paged(client.search_model_versions, f"run_id = {quoted(run.info.run_id)}"):
            client.delete_model_version(version.name, version.version)
        client.set_terminated(run.info.run_id, "KILLED")
    return [run.info.run_id for run in runs]


def register_once(session, study, model_name: str, trial_number: int, register):
    """``(version, registered before)``: ``register()``'s new version, or the one an earlier (or
    concurrent) registration of the study registered for this pick.

    ``session`` is a :class:`~fairops.tracking._session.TrackingSession` (or anything with its ``client``,
    ``tracking_uri`` and ``experiment_id(study)``, as a ``FairnessTrackingCallback``). Holds the model's
    lock (:func:`~fairops.registry._registry_lock.registry_lock`, a process killed holding it on this host
    releases it), so two identical jobs finishing together register one version and only one of them
    places ``@champion`` / ``@challenger``; selection runs a killed job left RUNNING are closed first.
    Called inside a registration of the same model (already guarded), it just calls ``register()``.
    """
    from ._registry_lock import registry_lock

    if model_name in _HELD.get():
        return register(), False
    client = session.client
    with registry_lock(client, model_name):
        token = _HELD.set(_HELD.get() | {model_name})
        try:
            close_stale_selection_runs(client, session.experiment_id(study), study.study_name, model_name)
            earlier = registered_version(client, model_name, study.study_name, trial_number)
            return (earlier, True) if earlier is not None else (register(), False)
        finally:
            _HELD.reset(token)
