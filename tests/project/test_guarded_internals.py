"""The private names behind three guarded modules still mean, in the installed Optuna and MLflow, what the
modules were written for: Optuna's heartbeat base class and a stored trial's id, the text Optuna's optimize
loop logs for a NaN trial, and the helpers MLflow's own flavors save a model with."""

import logging
import math

import mlflow
import optuna
import pytest
from optuna.storages import InMemoryStorage, RDBStorage

from fairops.jobs import _optuna_heartbeat
from fairops.mlflow import _mlflow_internals
from fairops.tuning import _optuna_log


@pytest.mark.parametrize("module, library", [(_optuna_heartbeat, optuna), (_optuna_log, optuna),
                                             (_mlflow_internals, mlflow)])
def test_the_installed_library_is_inside_the_range_each_module_was_written_for(module, library):
    assert module.internals_known()
    assert module.internals_known(library.__version__)
    low, high = module.WRITTEN_FOR
    assert not module.internals_known(f"{high[0]}.{high[1]}.0")


def test_optunas_rdb_storage_is_a_heartbeat_storage_and_a_stored_trial_carries_its_id():
    assert issubclass(RDBStorage, _optuna_heartbeat.BaseHeartbeat)
    storage = InMemoryStorage()
    study = optuna.create_study(storage=storage)
    study.optimize(lambda trial: 0.0, n_trials=3)
    study_id = storage.get_study_id_from_name(study.study_name)
    stored = storage.get_all_trials(study_id)
    assert [_optuna_heartbeat.trial_id(t) for t in stored] == \
        [storage.get_trial_id_from_study_id_trial_number(study_id, t.number) for t in stored]


def test_the_two_warnings_of_a_nan_trial_come_from_the_logger_the_filter_sits_on(caplog):
    study = optuna.create_study(directions=["maximize", "maximize"])
    objective = lambda trial: (math.nan, math.nan) if trial.number == 1 else (0.5, 0.5)  # noqa: E731
    with caplog.at_level(logging.WARNING, logger=_optuna_log.OPTIMIZE_LOGGER):
        study.optimize(objective, n_trials=2)
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.name for r in warned] == [_optuna_log.OPTIMIZE_LOGGER] * 2
    dropped = _optuna_log.ConstantFitWarnings()
    assert [dropped.filter(r) for r in warned] == [False, False]
    other = logging.LogRecord(_optuna_log.OPTIMIZE_LOGGER, logging.WARNING, "", 0,
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
