"""A real `mlflow server` (SQLite backend, loopback): several worker processes log one study through
FairnessTrackingCallback; the REST API must show one parent, exactly one child per trial, and the
fairness metrics of every run (the data the compare view reads)."""

import json
import subprocess
import sys
import textwrap
import time
import urllib.request

import optuna
import pytest

pytestmark = pytest.mark.slow
N_WORKERS, TRIALS_PER_WORKER = 3, 4

WORKER = textwrap.dedent("""
    import sys, time
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend
    from fairops.tracking._callback import FairnessTrackingCallback

    journal, server, start_at, n_trials = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(study_name="multi", storage=JournalStorage(JournalFileBackend(journal)))
    callback = FairnessTrackingCallback(server, "multi-process", settle_seconds=1.0)

    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        trial.set_user_attr("auc_s", 0.5 + x / 2)
        trial.set_user_attr("alpha", 0.5)
        return x, 1 - x

    while time.time() < start_at:  # start together: every worker meets a store without the experiment
        time.sleep(0.005)
    study.optimize(objective, n_trials=n_trials, callbacks=[callback])
""")


def rest(server, endpoint, payload=None):
    data = None if payload is None else json.dumps(payload).encode()
    request = urllib.request.Request(f"{server}/api/2.0/mlflow/{endpoint}", data,
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())


def search_runs(server, experiment_id, filter_string="", view="ACTIVE_ONLY"):
    runs, token = [], None
    while True:
        payload = {"experiment_ids": [experiment_id], "filter": filter_string, "max_results": 1000,
                   "run_view_type": view}
        if token:
            payload["page_token"] = token
        answer = rest(server, "runs/search", payload)
        runs.extend(answer.get("runs", []))
        token = answer.get("next_page_token")
        if not token:
            return runs


def as_dict(entries):
    return {entry["key"]: entry["value"] for entry in entries or []}


@pytest.fixture(scope="module")
def server(mlflow_server, tmp_path_factory):
    """The run's `mlflow server` (conftest.py; this module's experiment is its own) and a folder for the study."""
    return mlflow_server, tmp_path_factory.mktemp("server")


@pytest.fixture(scope="module")
def logged_study(server):
    url, folder = server
    journal = str(folder / "optuna.journal")
    storage = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(journal))
    study = optuna.create_study(study_name="multi", storage=storage, directions=["maximize"] * 2)
    script = folder / "worker.py"
    script.write_text(WORKER)
    start_at = time.time() + 6.0  # after every worker has imported mlflow and optuna
    workers = [subprocess.Popen([sys.executable, str(script), journal, url, str(start_at), str(TRIALS_PER_WORKER)],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for _ in range(N_WORKERS)]
    outputs = [worker.communicate(timeout=240)[0].decode() for worker in workers]
    for worker, output in zip(workers, outputs):
        assert worker.returncode == 0, output[-3000:]
    experiment = rest(url, "experiments/get-by-name?experiment_name=multi-process")["experiment"]
    return study, experiment["experiment_id"]


def test_workers_log_one_parent_and_exactly_one_child_per_trial(server, logged_study):
    url, _ = server
    study, experiment_id = logged_study
    trials = study.get_trials()
    assert len(trials) == N_WORKERS * TRIALS_PER_WORKER
    parents = search_runs(url, experiment_id, "tags.`fairops.role` = 'study'")
    assert len(parents) == 1
    children = search_runs(url, experiment_id, "tags.`fairops.role` = 'trial'")
    numbers = sorted(int(as_dict(run["data"]["tags"])["fairops.trial_number"]) for run in children)
    assert numbers == sorted(t.number for t in trials)
    parent_id = parents[0]["info"]["run_id"]
    assert {as_dict(run["data"]["tags"])["mlflow.parentRunId"] for run in children} == {parent_id}
    # candidates of the parent election that lost are deleted, never left active
    every = search_runs(url, experiment_id, view="ALL")
    assert len(every) - len(children) - 1 == len(search_runs(url, experiment_id, view="DELETED_ONLY"))


def test_rest_api_shows_fairness_metrics_per_run(server, logged_study):
    url, _ = server
    study, experiment_id = logged_study
    by_number = {t.number: t for t in study.get_trials()}
    fair = search_runs(url, experiment_id, "metrics.fairness >= 0.5 and tags.`fairops.role` = 'trial'")
    assert len(fair) == sum(t.values[1] >= 0.5 for t in by_number.values())
    for run in search_runs(url, experiment_id, "tags.`fairops.role` = 'trial'"):
        metrics = as_dict(run["data"]["metrics"])
        trial = by_number[int(as_dict(run["data"]["tags"])["fairops.trial_number"])]
        assert metrics["accuracy"] == pytest.approx(trial.values[0])
        assert metrics["fairness"] == pytest.approx(trial.values[1])
        assert metrics["auc_s"] == pytest.approx(trial.user_attrs["auc_s"])
        assert metrics["weighted_score"] == pytest.approx(0.5 * sum(trial.values))
    one = fair[0]["info"]["run_id"]
    history = rest(url, f"metrics/get-history?run_id={one}&metric_key=fairness")["metrics"]
    assert len(history) == 1 and history[0]["value"] >= 0.5
