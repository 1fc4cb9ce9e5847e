"""What a tuning job records about its study in MLflow beyond the per-fit runs, and what it prints of it.

- :func:`artifact_root`: artifacts under the project folder unless a tracking server keeps them;
- :func:`task_params`: the parent run's params that say what task was tuned (the data's hash is
  :func:`fairops.jobs._tune.study.data_sha256`, the one the study's configuration holds);
- :func:`parent_run_ended`: the parent run ends FINISHED, KILLED (Ctrl-C) or FAILED with the job;
- :func:`publish`: the comparison of the Pareto-front fits and the pick, and the links to print.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import numpy as np

from ..tracking._stores import artifacts_in
from ..tracking._ui_links import DEFAULT_UI_PORT, is_server


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
    folder = artifacts_in(Path(project_dir).resolve())
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
    from ..fairband import pareto_front
    from ..tracking._study_views import publish_study_views

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
