"""Workers started at the same instant on fresh SQLite and PostgreSQL stores all open them cleanly (real
processes, a real PostgreSQL server)."""

import contextlib
import subprocess
import sys
import threading
import uuid

import optuna
import pytest
from mlflow.tracking import MlflowClient

from fairops._store_lock import is_postgres, sqlite_file, sqlite_open_lock, store_open_lock

WORKER = """
import sys
from fairops.jobs._running import open_storage
from fairops.tracking._callback import FairnessTrackingCallback
import optuna
optuna.logging.set_verbosity(optuna.logging.WARNING)
print("ready", flush=True)
sys.stdin.readline()  # until the test lets every worker go at once
study = optuna.create_study(study_name="race", storage=open_storage(sys.argv[1]), load_if_exists=True,
                            directions=["maximize", "maximize"])
tracker = FairnessTrackingCallback(sys.argv[2], "race", settle_seconds=1.0)
tracker.parent_run_id(study)
print("opened")
"""


def _open_together(optuna_url, mlflow_uri, workers):
    # every process imports first and says so, then all are let go at once (a barrier, not a clock)
    processes = [subprocess.Popen([sys.executable, "-c", WORKER, optuna_url, mlflow_uri], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(workers)]
    ready = [process.stdout.readline().strip() for process in processes]
    for process in processes:
        with contextlib.suppress(BrokenPipeError):  # one that died before its ready is reported below
            process.stdin.write("go\n")
            process.stdin.flush()
    results = [process.communicate(timeout=300) for process in processes]
    assert ready == ["ready"] * workers, [err[-3000:] for _, err in results]
    for process, (out, err) in zip(processes, results):
        assert process.returncode == 0 and out.strip() == "opened", err[-3000:]
    study = optuna.load_study(study_name="race", storage=optuna_url)
    assert study.directions == [optuna.study.StudyDirection.MAXIMIZE] * 2
    client = MlflowClient(mlflow_uri)
    experiment = client.get_experiment_by_name("race")
    parents = client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'study'")
    assert len(parents) == 1  # one parent run for all workers, on a schema every one of them could use


HOLDER = """
import sys
from fairops._store_lock import {lock}
with {lock}(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.readline()  # until the test lets go
"""


def _taken_after_the_holder_lets_go(lock, url):
    """What ``lock(url)`` gives this process when another process holds it: it is not taken while the other holds
    it, and is once the other lets go (a barrier the test releases, not a sleep)."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER.format(lock=lock.__name__), url], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    taken = []

    def take():
        with lock(url) as path:
            taken.append(path)

    taker = threading.Thread(target=take, daemon=True)
    taker.start()
    taker.join(timeout=1.0)
    assert not taken, "taken while another process held it"
    holder.stdin.close()  # let go
    taker.join(timeout=120)
    holder.wait(timeout=30)
    assert holder.returncode == 0 and len(taken) == 1, "never taken after the other process let go"
    return taken[0]


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
    assert _taken_after_the_holder_lets_go(store_open_lock, postgres_url) is None


def test_an_unreachable_postgres_server_is_left_to_the_store_to_report():
    from fairops.jobs._running import open_storage

    url = "postgresql+psycopg://nobody:x@127.0.0.1:1/nothing"
    with store_open_lock(url) as path:  # no lock to take; no error of its own
        assert path is None
    with pytest.raises(ValueError, match="cannot open the Optuna storage"):
        open_storage(url)


def test_the_lock_is_exclusive_between_processes(tmp_path):
    url = f"sqlite:///{tmp_path / 'x.db'}"
    assert _taken_after_the_holder_lets_go(sqlite_open_lock, url) == str(tmp_path / "x.db")


def test_urls_that_are_not_sqlite_files_are_not_locked():
    assert sqlite_file("sqlite:///:memory:") is None and sqlite_file("sqlite://") is None
    assert sqlite_file("postgresql+psycopg://u:p@h/db") is None and sqlite_file("http://mlflow:5000") is None
    assert is_postgres("postgres://u@h/db") and not is_postgres("http://mlflow:5000")
    for url in ("http://mlflow:5000", "grpc://localhost:13000"):
        with store_open_lock(url) as path:
            assert path is None
