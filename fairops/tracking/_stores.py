"""What a project folder holds by default: the MLflow store, the Optuna storage and the artifacts.

``fairops tune``, ``fairops promote`` and the outlier jobs keep their stores here unless told otherwise.

>>> tracking_uri_in("/p"), storage_in("/p"), artifacts_in("/p").as_posix()
('sqlite:////p/mlflow.db', 'sqlite:////p/optuna.db', '/p/mlartifacts')
"""

from __future__ import annotations

from pathlib import Path

MLFLOW_FILE = "mlflow.db"
OPTUNA_FILE = "optuna.db"
ARTIFACTS_FOLDER = "mlartifacts"


def mlflow_file_in(project) -> Path:
    """The SQLite file of the project's MLflow store."""
    return Path(project) / MLFLOW_FILE


def tracking_uri_in(project) -> str:
    """The project's MLflow tracking URI (its SQLite store)."""
    return f"sqlite:///{mlflow_file_in(project)}"


def storage_in(project) -> str:
    """The project's Optuna storage URL (its SQLite file)."""
    return f"sqlite:///{Path(project) / OPTUNA_FILE}"


def artifacts_in(project) -> Path:
    """The folder of the project's MLflow artifacts (when no tracking server keeps them)."""
    return Path(project) / ARTIFACTS_FOLDER
