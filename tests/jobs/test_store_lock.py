"""Workers started at the same instant on fresh SQLite and PostgreSQL stores all open them cleanly (real
processes, a real PostgreSQL server)."""

import subprocess
import sys
import time
import uuid

import optuna
import pytest
from mlflow.tracking import MlflowClient

from fairops._store_lock import is_postgres, sqlite_file, sqlite_open_lock, store_open_lock

WORKER = """
import sys, time
start = float(sys.argv[3])
time.sleep(max(0.0, start - time.time()))
from fairops.jobs._running import open_storage
from fairops.tracking._callback import FairnessTrackingCallback
import optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
study = optuna.create_study(study_name="race", storage=open_storage(sys.argv[1]), load_if_exists=True,
                            directions=["maximize", "maximize"])
tracker = FairnessTrackingCallback(sys.argv[2], "race", settle_seconds=1.0)
tracker.parent_run_id(study)
print("opened")
"""


def _open_together(optuna_url, mlflow_uri, workers):
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


@pytest.mark.slow
def test_workers_started_together_open_fresh_sqlite_stores_cleanly(tmp_path):
    _open_together(f"sqlite:///{tmp_path / 'optuna.db'}", f"sqlite:///{tmp_path / 'mlflow.db'}", workers=4)


@pytest.fixture
def fresh_postgres_databases(postgres_url):
    """Two empty databases on the test server (Optuna's and MLflow's: both keep an ``alembic_version``
    table), dropped afterwards."""
    import sqlalchemy

    server, _, _ = postgres_url.rpartition("/")
    names = [f"fairops_fresh_{uuid.uuid4().hex[:10]}" for _ in range(2)]
    admin = sqlalchemy.create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        for name in names:
            connection.execute(sqlalchemy.text(f"CREATE DATABASE {name}"))
    yield [f"{server}/{name}" for name in names]
    with admin.connect() as connection:
        for name in names:
            connection.execute(sqlalchemy.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
    admin.dispose()


@pytest.mark.slow
def test_workers_started_together_open_fresh_postgres_stores_cleanly(fresh_postgres_databases):
    # Without the advisory lock, 3 of 4 workers opening a fresh database at once failed in each of three tries
    # (UniqueViolation on pg_type_typname_nsp_index while creating alembic_version).
    optuna_url, mlflow_uri = fresh_postgres_databases
    _open_together(optuna_url, mlflow_uri, workers=4)


def test_the_postgres_lock_is_exclusive_between_processes(postgres_url):
    holder = ("import sys, time\nfrom fairops._store_lock import store_open_lock\n"
              "with store_open_lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(3)\n")
    process = subprocess.Popen([sys.executable, "-c", holder, postgres_url], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "held"
    began = time.monotonic()
    with store_open_lock(postgres_url) as path:
        waited = time.monotonic() - began
    process.wait(timeout=30)
    assert path is None and waited > 1.0  # it waited for the other process to let go


def test_an_unreachable_postgres_server_is_left_to_the_store_to_report():
    from fairops.jobs._running import open_storage

    url = "postgresql+psycopg://nobody:x@127.0.0.1:1/nothing"
    with store_open_lock(url) as path:  # no lock to take; no error of its own
        assert path is None
    with pytest.raises(ValueError, match="cannot open the Optuna storage"):
        open_storage(url)


def test_the_lock_is_exclusive_between_processes(tmp_path):
    url = f"sqlite:///{tmp_path / 'x.db'}"
    holder = ("import sys, time\nfrom fairops._store_lock import sqlite_open_lock\n"
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
    assert is_postgres("postgres://u@h/db") and not is_postgres("http://mlflow:5000")
    for url in ("http://mlflow:5000", "grpc://localhost:13000"):
        with store_open_lock(url) as path:
            assert path is None
