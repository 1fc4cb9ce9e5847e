"""The private names behind the guarded modules still mean, in the installed Optuna and MLflow, what the
modules were written for: the text Optuna's optimize loop logs for a NaN trial, and the helpers MLflow's
own flavors save a model with (Optuna's storage internals: tests/fairband/test_fairband_internals.py; the UI's
saved views: tests/tracking/test_ui_shared_view.py)."""

import logging
import math

import mlflow
import optuna
import pytest

from fairops.fairband import _optuna_internals
from fairops.mlflow import _mlflow_internals
from fairops.tracking import _ui_shared_view

GUARDED = [(_optuna_internals, _optuna_internals.internals_known, optuna),
           (_mlflow_internals, _mlflow_internals.internals_known, mlflow),
           (_ui_shared_view, _ui_shared_view.view_supported, mlflow)]


@pytest.mark.parametrize("module, known, library", GUARDED)
def test_the_installed_library_is_inside_the_range_each_module_was_written_for(module, known, library):
    assert known(library.__version__)
    low, high = module.WRITTEN_FOR
    below = (low[0], low[1] - 1) if low[1] else (low[0] - 1, 99)
    assert known(f"{low[0]}.{low[1]}.0") and not known(f"{high[0]}.{high[1]}.0")
    assert not known(f"{below[0]}.{below[1]}.9")


def test_the_two_warnings_of_a_nan_trial_come_from_the_logger_the_filter_sits_on(caplog):
    study = optuna.create_study(directions=["maximize", "maximize"])
    objective = lambda trial: (math.nan, math.nan) if trial.number == 1 else (0.5, 0.5)  # noqa: E731
    with caplog.at_level(logging.WARNING, logger=_optuna_internals.OPTIMIZE_LOGGER):
        study.optimize(objective, n_trials=2)
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.name for r in warned] == [_optuna_internals.OPTIMIZE_LOGGER] * 2
    dropped = _optuna_internals.NanTrialWarnings()
    assert [dropped.filter(r) for r in warned] == [False, False]
    other = logging.LogRecord(_optuna_internals.OPTIMIZE_LOGGER, logging.WARNING, "", 0,
                              "Trial 7 failed with parameters: {} because of the following error: ValueError().",
                              None, None)
    assert dropped.filter(other)  # any other failure still shows


def test_mlflows_environment_files_and_tracking_uri_helpers(tmp_path):
    assert _mlflow_internals.environment_files() == ("conda.yaml", "python_env.yaml", "requirements.txt",
                                                     "constraints.txt")
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    assert _mlflow_internals.resolve_tracking_uri(uri) == uri
    before = mlflow.get_tracking_uri()
    with _mlflow_internals.use_tracking_uri(uri):
        assert mlflow.get_tracking_uri() == uri
    assert mlflow.get_tracking_uri() == before
    _mlflow_internals.write_python_env(str(tmp_path / "python_env.yaml"))
    assert "python:" in (tmp_path / "python_env.yaml").read_text()
