"""New, empty MLflow tracking stores for the tests, copied from one MLflow made.

MLflow makes a new SQLite store by running each of its schema migrations on the file: about 1.5 s of CPU here,
where opening an existing store takes 0.01 s. A test whose subject is not that first migration takes a copy of
an empty store MLflow made earlier in the same process: the same tables, the same schema revision, the same
Default experiment (whose artifact folder MLflow resolves from the working directory, so a store is made for
each working directory a test runs in). Tests of what fairops does with a store it creates itself (a fresh
project, workers racing to create one) leave MLflow to make it.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path

_EMPTY_STORES: dict[str, Path] = {}  # working directory -> an empty store MLflow made while in it


def empty_store_uri(path: Path | str) -> str:
    """The tracking URI of a new, empty MLflow store at ``path`` (a file that must not exist yet).

    >>> from mlflow.tracking import MlflowClient
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     [e.name for e in MlflowClient(empty_store_uri(Path(folder) / "mlflow.db")).search_experiments()]
    ['Default']
    """
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} exists: an empty store is copied only where there is none")
    source = _EMPTY_STORES.get(os.getcwd()) or _make_empty_store()
    # SQLite's backup, as test_gate_rows copies its shared store: a consistent copy whatever MLflow holds open
    with closing(sqlite3.connect(source)) as empty, closing(sqlite3.connect(path)) as copy:
        empty.backup(copy)
    return f"sqlite:///{path}"


def _make_empty_store() -> Path:
    from mlflow.tracking import MlflowClient

    folder = Path(tempfile.mkdtemp(prefix="empty-mlflow-store-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / "mlflow.db"
    client = MlflowClient(f"sqlite:///{path}")
    client.search_experiments()  # MLflow creates the tables and runs its migrations
    client.search_registered_models()  # and the registry opens the same file
    _EMPTY_STORES[os.getcwd()] = path
    return path
