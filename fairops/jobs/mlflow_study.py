"""What a tuning job records about its study in MLflow beyond the per-fit runs, and what it prints of it.

- :func:`artifact_root`: artifacts under the project folder unless a tracking server keeps them;
- :func:`task_params`: the parent run's params that say what task was tuned (the data's hash is
  :func:`fairops.jobs.tune.study.data_sha256`, the one the study's configuration holds);
- :func:`parent_run_ended`: the parent run ends FINISHED, KILLED (Ctrl-C) or FAILED with the job;
- :func:`registered_version`: the model version an earlier run of the same study registered for the
  same pick (read through MLflow's public client), so a re-run registers nothing new;
- :func:`close_stale_selection_runs`: selection runs left RUNNING by a process killed while registering;
- :func:`register_once`: one version per study and pick, however many jobs finish at once;
- :func:`publish`: the comparison of the Pareto-front fits and the pick, and the links to print.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np

from ..tracking.callback import ROLE_TAG, STUDY_TAG, TRIAL_TAG
from ..tracking.registry import MODEL_TAG
from ..tracking.ui_links import DEFAULT_UI_PORT, is_server


def artifact_root(project_dir, tracking_uri: str) -> str | None:
    """``<project>/mlartifacts`` (created) for a store opened directly; None lets a tracking server decide.

    >>> import tempfile
    >>> artifact_root(tempfile.mkdtemp(), "sqlite:///m.db").endswith("/mlartifacts")
    True
    >>> artifact_root("/nonexistent", "http://mlflow:5000") is None
    True
    """
    if is_server(tracking_uri):
        return None
    folder = Path(project_dir).resolve() / "mlartifacts"
    folder.mkdir(parents=True, exist_ok=True)
    return folder.as_uri()


def task_params(data) -> dict:
    """The task as parent-run params: what ``accuracy`` and ``fairness`` measure on which label.

    >>> from fairops.datasets import load_adult
    >>> task_params(load_adult())["accuracy_metric"]
    'precision at tpr=0.5'
    """
    task = data.task
    return {**task.as_params(), "accuracy_metric": f"{task.metric} at {task.target}={task.target_value:g}",
            "fairness_ratio": f"{task.fairness} ratio (lowest / highest group) over {task.over}"}


def describe_task(data, alpha) -> str:
    """One Markdown paragraph for the parent run's note."""
    params = task_params(data)
    rule = ("alpha from the means of accuracy and fairness over the fits (FB-auto)" if alpha == "auto"
            else f"alpha = {float(alpha):g}")
    return (f"**accuracy** = {params['accuracy_metric']} (positive class: {params['task.positive_class']}); "
            f"**fairness** = {params['fairness_ratio']}; **weighted score** = alpha * accuracy + "
            f"(1 - alpha) * fairness, {rule}.")


@contextlib.contextmanager
def parent_run_ended(tracker, study, *, end: bool = True):
    """End the study's parent run KILLED on Ctrl-C and FAILED on an error (when ``end``; a worker that
    leaves the end to another one passes ``end=False``). Ending FINISHED is the caller's job."""
    try:
        yield
    except KeyboardInterrupt:
        if end:
            tracker.finish(study, status="KILLED")
        raise
    except BaseException:
        if end:
            tracker.finish(study, status="FAILED")
        raise


def registered_version(client, model_name: str, study_name: str, trial_number: int):
    """The newest version of ``model_name`` registered from a finished selection run of this study for
    this trial, or None."""
    from mlflow.exceptions import MlflowException

    escaped = model_name.replace("'", "\\'")
    try:
        versions = client.search_model_versions(f"name = '{escaped}'")
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

    Called holding the model's lock (:func:`~fairops.tracking.registry_lock.registry_lock`), which
    every registration by a tuning job holds: a selection run RUNNING then was left by a process killed
    while registering, and a version it made never got its description, tags or intended alias.
    """
    def quoted(text):
        return text.replace("'", "\\'")

    runs = client.search_runs([experiment_id], f"tags.`{ROLE_TAG}` = 'selection' and tags.`{STUDY_TAG}` = "
                              f"'{quoted(study_name)}' and tags.`{MODEL_TAG}` = '{quoted(model_name)}' "
                              "and attributes.status = 'RUNNING'")
    for run in runs:
        for version in client.search_model_versions(f"run_id = '{run.info.run_id}'"):
            client.delete_model_version(version.name, version.version)
        client.set_terminated(run.info.run_id, "KILLED")
    return [run.info.run_id for run in runs]


def register_once(tracker, study, model_name: str, trial_number: int, register):
    """``(version, registered before)``: ``register()``'s new version, or the one an earlier (or
    concurrent) run of the study registered for this pick.

    Holds the model's lock (:func:`~fairops.tracking.registry_lock.registry_lock`, a process killed
    holding it on this host releases it), so two identical jobs finishing together register one
    version and only one of them places ``@champion`` / ``@challenger``; selection runs a killed job
    left RUNNING are closed first.
    """
    from ..tracking.registry_lock import registry_lock

    client = tracker.client
    with registry_lock(client, model_name):
        close_stale_selection_runs(client, tracker.experiment_id(study), study.study_name, model_name)
        earlier = registered_version(client, model_name, study.study_name, trial_number)
        return (earlier, True) if earlier is not None else (register(), False)


def log_pick(tracker, study, rows: dict, choice=None) -> None:
    """The pick's and the most accurate fit's refit figures with their intervals on the study's parent run
    (``pick_refit_fairness_low``, ...), and with the robust rule the refit comparison as
    ``selection/refit_comparison.json``."""
    from mlflow.entities import Metric

    metrics = {}
    for prefix, row in zip(("pick", "most_accurate"), rows.values()):
        for part in ("validation", "test"):
            for name, value in row[part].items():
                if not name.startswith("fairness.") and name not in ("auc_y", "auc_s"):
                    metrics[f"{prefix}_refit_{'val' if part == 'validation' else 'test'}_{name}"] = value
        metrics[f"{prefix}_refit_trial"] = row["trial"].number
    if choice is not None:
        metrics["refit_candidates"], metrics["refit_dominated"] = len(choice.refits), len(choice.dominated)
    parent = tracker.parent_run_id(study)
    tracker.client.log_batch(parent, metrics=[Metric(k, float(v), 0, 0) for k, v in metrics.items()])
    if choice is not None:
        compared = [{"trial": n, "family": str(r.trial.params.get("model", "")), "chosen": r is choice.chosen,
                     "most_accurate": r is choice.most_accurate, "dominated": n in choice.dominated,
                     "validation": r.validation, "test": r.test, "cross_validated": r.assessed}
                    for n, r in choice.refits.items()]
        tracker.client.log_dict(parent, {"refits": compared}, "selection/refit_comparison.json")


def publish(tracker, study, pick_trial, *, description: str = "", ui_port: int = DEFAULT_UI_PORT,
            refit_run_id: str | None = None):
    """Compare the Pareto-front fits and the pick in MLflow's UI; returns the links to print.

    ``refit_run_id``: the run of the pick refit on all training rows (listed next to the pick)."""
    from ..fairband.selection import pareto_front
    from ..tracking.study_views import publish_study_views

    run_ids = tracker.trial_run_ids(study)
    front = [t.number for t in pareto_front(study)]
    compared = [run_ids[number] for number in front if number in run_ids]
    finished = sorted((t for t in study.get_trials(deepcopy=False) if t.number in run_ids),
                      key=lambda t: (-_accuracy(t), t.number))
    return publish_study_views(
        tracker.client, tracker.tracking_uri, tracker.experiment_id(study), tracker.parent_run_id(study),
        study.study_name, compared_run_ids=compared, pick_run_id=run_ids.get(pick_trial.number),
        alpha=tracker.alpha, description=description, ui_port=ui_port,
        ordered_run_ids=[run_ids[t.number] for t in finished], refit_run_id=refit_run_id)


def _accuracy(trial) -> float:
    """A fit's accuracy, -inf for a failed fit (listed last)."""
    value = trial.values[0] if trial.values else None
    return float(value) if value is not None and np.isfinite(value) else -np.inf
