"""The distributed mode: several `fairops tune` workers on one PostgreSQL study, logging to a real
`mlflow server`. The Fairband schedule must stay exact, and a killed worker must not stop the others."""

import os
import signal
import subprocess
import sys
import time
import uuid

import optuna
import pytest
from mlflow.tracking import MlflowClient
from optuna.trial import TrialState

from fairops.cli import main
from fairops.fairband import select_best
from services import mlflow_tracking_server

pytestmark = pytest.mark.slow
FAST = ["--dataset", "german", "--max-train-rows", "300", "--families", "logistic_regression", "--no-progress",
        "--method", "fb-auto", "--seed", "3"]


@pytest.fixture(scope="module")
def mlflow_server(tmp_path_factory):
    with mlflow_tracking_server(tmp_path_factory.mktemp("mlflow-server")) as url:
        yield url


def _workers(count, postgres_url, server, study_name, tmp_path):
    command = [sys.executable, "-m", "fairops.cli", "tune", *FAST, "--storage", postgres_url, "--tracking-uri", server,
               "--study-name", study_name, "--no-finalize", "--heartbeat", "1", "--project-dir", str(tmp_path)]
    return [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True) for _ in range(count)]


def _own_fits(study):
    return [t for t in study.get_trials(deepcopy=False) if t.number < 206]


def _drop(postgres_url, study_name):
    try:
        optuna.delete_study(study_name=study_name, storage=postgres_url)
    except KeyError:
        pass


def test_three_workers_give_the_one_worker_schedule_and_pick(postgres_url, mlflow_server, tmp_path):
    name = f"dist-{uuid.uuid4().hex[:8]}"
    try:
        workers = _workers(3, postgres_url, mlflow_server, name, tmp_path)
        for worker in workers:
            _, err = worker.communicate(timeout=600)
            assert worker.returncode == 0, err[-3000:]
        # any machine can then take the pick: it joins, finds the fits done, refits and registers
        assert main(["tune", *FAST, "--storage", postgres_url, "--tracking-uri", mlflow_server,
                     "--study-name", name, "--model-name", name, "--project-dir", str(tmp_path)]) == 0
        shared = optuna.load_study(study_name=name, storage=postgres_url)
        fits = _own_fits(shared)
        assert len(fits) == 206 and all(t.state == TrialState.COMPLETE for t in fits)
        assert len({(t.user_attrs["bracket"], t.user_attrs["configuration_id"]) for t in fits}) == 143
        assert len({(t.user_attrs["bracket"], t.user_attrs["rung"], t.user_attrs["configuration_id"])
                    for t in fits}) == 206
        beyond = [t for t in shared.get_trials(deepcopy=False) if t.number >= 206]
        assert all(t.state == TrialState.PRUNED for t in beyond)  # overshoot is refused, never fitted

        assert main(["tune", *FAST, "--project-dir", str(tmp_path / "single")]) == 0
        single = optuna.load_study(study_name="german-fb-auto-fast-seed3",
                                   storage=f"sqlite:///{tmp_path / 'single' / 'optuna.db'}")
        assert [t.params for t in single.trials] == [t.params for t in fits]
        assert [t.values for t in single.trials] == [t.values for t in fits]
        assert select_best(fits, alpha="auto").trial.number == select_best(single.trials, alpha="auto").trial.number

        client = MlflowClient(mlflow_server)
        experiment = client.get_experiment_by_name(name)
        runs = client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'trial'", max_results=1000)
        assert len(runs) == 206
        assert len({r.data.tags["fairops.trial_number"] for r in runs}) == 206
        assert client.get_model_version_by_alias(name, "champion").version == "1"
    finally:
        _drop(postgres_url, name)


def test_a_killed_worker_does_not_stop_the_iteration(postgres_url, mlflow_server, tmp_path):
    name = f"kill-{uuid.uuid4().hex[:8]}"
    try:
        workers = _workers(3, postgres_url, mlflow_server, name, tmp_path)
        storage = optuna.storages.RDBStorage(postgres_url)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                if len(optuna.load_study(study_name=name, storage=storage).get_trials(deepcopy=False)) >= 40:
                    break
            except KeyError:
                pass
            time.sleep(0.2)
        os.killpg(workers[0].pid, signal.SIGKILL)
        workers[0].wait()
        for worker in workers[1:]:
            _, err = worker.communicate(timeout=600)
            assert worker.returncode == 0, err[-3000:]
        fits = _own_fits(optuna.load_study(study_name=name, storage=storage))
        assert len(fits) == 206
        assert all(t.state in (TrialState.COMPLETE, TrialState.FAIL) for t in fits)
        assert sum(t.state == TrialState.COMPLETE for t in fits) >= 200
    finally:
        _drop(postgres_url, name)
