"""Electing one MLflow parent run per Optuna study among workers that start together.

The first choice is the run id stored in the study's user attribute :data:`PARENT_ATTR`. Workers that
find neither that attribute nor a parent run each create a candidate tagged with the study name, wait
until every visible candidate is ``settle_seconds`` old, and all keep the oldest (start time, then run
id); the losers delete their own candidate. Calling the election once before starting workers avoids
the race altogether.

>>> import optuna, tempfile
>>> from mlflow.tracking import MlflowClient
>>> optuna.logging.set_verbosity(optuna.logging.WARNING)
>>> client = MlflowClient(f"sqlite:///{tempfile.mkdtemp()}/mlflow.db")
>>> experiment_id = client.create_experiment("demo")
>>> study = optuna.create_study(study_name="demo")
>>> first = elect_parent_run(client, study, experiment_id, settle_seconds=0)
>>> first == elect_parent_run(client, study, experiment_id, settle_seconds=0)
True
"""

from __future__ import annotations

import time

import fairops

PARENT_ATTR = "fairops:mlflow_parent"
ROLE_TAG = "fairops.role"
STUDY_TAG = "fairops.study"


def now_ms() -> int:
    """Wall-clock time in milliseconds, MLflow's unit for run times."""
    return int(time.time() * 1000)


def elect_parent_run(client, study, experiment_id: str, *, settle_seconds: float) -> str:
    """The id of the study's parent run in ``experiment_id``: the stored one, or the oldest candidate."""
    stored = study.user_attrs.get(PARENT_ATTR)
    if stored and stored.get("experiment_id") == experiment_id:
        return stored["run_id"]
    own = None
    while True:
        candidates = _candidates(client, experiment_id, study.study_name)
        if not candidates:
            own = _create_candidate(client, experiment_id, study)
            continue
        youngest = max(run.info.start_time for run in candidates)
        wait = settle_seconds - (now_ms() - youngest) / 1000.0
        if wait > 0:
            time.sleep(wait)
            continue
        winner = min(candidates, key=lambda run: (run.info.start_time, run.info.run_id)).info.run_id
        break
    if own is not None and own != winner:
        client.delete_run(own)
    study.set_user_attr(PARENT_ATTR, {"experiment_id": experiment_id, "run_id": winner})
    return winner


def _candidates(client, experiment_id: str, study_name: str):
    from mlflow.entities import ViewType

    from ._search import tags_equal

    return client.search_runs([experiment_id], tags_equal(**{ROLE_TAG: "study", STUDY_TAG: study_name}),
                              run_view_type=ViewType.ACTIVE_ONLY, max_results=50)


def _create_candidate(client, experiment_id: str, study) -> str:
    directions = ",".join(d.name.lower() for d in study.directions)
    tags = {
        ROLE_TAG: "study",
        STUDY_TAG: study.study_name,
        "study_name": study.study_name,
        "directions": directions,
        "sampler": type(study.sampler).__name__,
        "fairops_version": fairops.__version__,
    }
    run = client.create_run(experiment_id, start_time=now_ms(), tags=tags, run_name=study.study_name)
    return run.info.run_id
