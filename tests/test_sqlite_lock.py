"""Workers started at the same instant on fresh SQLite stores all open them cleanly (real processes)."""

import subprocess
import sys
import time

import optuna
import pytest
from mlflow.tracking import MlflowClient

from fairops.sqlite_lock import sqlite_file, sqlite_open_lock

WORKER = """
import sys, time
start = float(sys.argv[3])
time.sleep(max(0.0, start - time.time()))
from fairops.jobs.running import open_storage
from fairops.tracking.callback import FairnessTrackingCallback
import optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
study = optuna.create_study(study_name="race", storage=open_storage(sys.argv[1]), load_if_exists=True,
                            directions=["maximize", "maximize"])
tracker = FairnessTrackingCallback(sys.argv[2], "race", settle_seconds=1.0)
tracker.parent_run_id(study)
print("opened")
"""


@pytest.mark.slow
@pytest.mark.parametrize("workers", [4])
def test_workers_started_together_open_fresh_sqlite_stores_cleanly(tmp_path, workers):
    optuna_url, mlflow_uri = f"sqlite:///{tmp_path / 'optuna.db'}", f"sqlite:///{tmp_path / 'mlflow.db'}"
    start = time.time() + 10  # every process imports first, then all open at this instant
    processes = [subprocess.Popen([sys.executable, "-c", WORKER, optuna_url, mlflow_uri, str(start)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(workers)]
    results = [process.communicate(timeout=300) for process in processes]
    for process, (out, err) in zip(processes, results):
        assert process.returncode == 0 and out.strip() == "opened", err[-3000:]
    study = optuna.load_study(study_name="race", storage=optuna_url)
    assert study.directions == [optuna.study.StudyDirection.MAXIMIZE] * 2
    client = MlflowClient(mlflow_uri)
    experiment = client.get_experiment_by_name("race")
    parents = client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'study'")
    assert len(parents) == 1  # one parent run for all workers, on a schema every one of them could use


def test_the_lock_is_exclusive_between_processes(tmp_path):
    url = f"sqlite:///{tmp_path / 'x.db'}"
    holder = ("import sys, time\nfrom fairops.sqlite_lock import sqlite_open_lock\n"
              "with sqlite_open_lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(3)\n")
    process = subprocess.Popen([sys.executable, "-c", holder, url], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "held"
    began = time.monotonic()
    with sqlite_open_lock(url) as path:
        waited = time.monotonic() - began
    process.wait(timeout=30)
    assert path == str(tmp_path / "x.db") and waited > 1.0  # it waited for the other process to let go


def test_urls_that_are_not_sqlite_files_are_not_locked():
    assert sqlite_file("sqlite:///:memory:") is None and sqlite_file("sqlite://") is None
    assert sqlite_file("postgresql+psycopg://u:p@h/db") is None and sqlite_file("http://mlflow:5000") is None
    with sqlite_open_lock("http://mlflow:5000") as path:
        assert path is None
