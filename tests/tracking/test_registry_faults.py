"""Registry faults of issue 44: nothing unloadable is registered, every entry point writes to the store the user
named (argument, then ``mlflow.set_tracking_uri``, then ``MLFLOW_TRACKING_URI``) and leaves the process's
tracking URI as it found it, and the selection rules have one set of names."""

import os

import mlflow
import numpy as np
import optuna
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from sklearn.linear_model import LogisticRegression

from fairops.errors import InputError
from fairops.fairband import select_best
from fairops.registry import Refit, register_best
from fairops.scaff import SCAFFTreeClassifier
from fairops.tracking import FairnessTrackingCallback, TrackingSession, keep_model
from tests.mlflow_stores import empty_store_uri

optuna.logging.set_verbosity(optuna.logging.WARNING)
ENV = "MLFLOW_TRACKING_URI"


@pytest.fixture(autouse=True)
def unset_uri(monkeypatch):
    """Each test starts with no tracking URI set in code or in the environment."""
    monkeypatch.delenv(ENV, raising=False)
    mlflow.set_tracking_uri(None)
    yield
    mlflow.set_tracking_uri(None)


@pytest.fixture
def rows():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(120, 3)), columns=["a", "b", "c"])
    s = rng.integers(0, 2, 120)
    y = (X["a"] + s > 0.5).astype(int).to_numpy()
    return X, y, s


def _study(name, kept=None, callback=None):
    """A two-objective study of three fits; ``kept`` maps a trial number to the model its objective keeps."""
    def objective(trial):
        if kept is not None:
            keep_model(trial, kept[trial.number])
        return 0.5 + 0.1 * trial.number, 0.9 - 0.1 * trial.number

    study = optuna.create_study(directions=["maximize"] * 2, study_name=name)
    study.optimize(objective, n_trials=3, callbacks=[callback] if callback else [])
    return study


def _refit(rows):
    X, y, _ = rows
    return Refit(lambda params, trial: LogisticRegression().fit(X, y), input_example=X.head(2),
                 pip_requirements=["fairops"])


def _selection_runs(uri):
    client = MlflowClient(uri)
    return [run for experiment in client.search_experiments()
            for run in client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'selection'")]


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """A study whose trial 0 kept a classifier the callback cannot log (no input example: its logged model is
    FAILED) and whose trials 1 and 2 kept SCAFF trees (READY), tracked in a store of its own."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(120, 3)), columns=["a", "b", "c"])
    s = rng.integers(0, 2, 120)
    y = (X["a"] + s > 0.5).astype(int).to_numpy()
    uri = empty_store_uri(tmp_path_factory.mktemp("logged") / "mlflow.db")
    kept = {0: LogisticRegression().fit(X, y), 1: SCAFFTreeClassifier().fit(X, y, sensitive_features=s),
            2: SCAFFTreeClassifier().fit(X, y, sensitive_features=s)}
    callback = FairnessTrackingCallback(uri, "logged", log_models=True, model_pip_requirements=["fairops"],
                                        settle_seconds=0)
    with pytest.warns(RuntimeWarning, match="trial 0's model was not logged"):
        study = _study("logged", kept, callback)
    return {"uri": uri, "study": study, "X": X}


@pytest.mark.slow
def test_a_pick_whose_logged_model_failed_is_refused_naming_refit(logged):
    uri, study = logged["uri"], logged["study"]
    mlflow.set_tracking_uri(uri)  # the process points at the store too, so only the FAILED model can stop it
    session = TrackingSession(uri, "logged", settle_seconds=0)
    with pytest.raises(InputError, match=r"trial 0's logged model .* is FAILED.*refit="):
        register_best(study, "failed-model", {"trial": 0}, session=session)
    assert MlflowClient(uri).search_registered_models() == []  # nothing was registered


@pytest.mark.slow
def test_a_logged_model_registers_from_the_session_s_store_whatever_the_process_points_at(logged):
    uri, study = logged["uri"], logged["study"]
    session = TrackingSession(uri, "logged", settle_seconds=0)  # the process's tracking URI stays unset
    best = register_best(study, "ready-model", {"trial": 1}, session=session)
    assert mlflow.get_tracking_uri() != uri
    mlflow.set_tracking_uri(uri)
    answer = mlflow.pyfunc.load_model(f"models:/ready-model/{best.version}").predict(logged["X"].head(3))
    assert answer.shape == (3,)


@pytest.mark.slow
def test_a_pick_with_no_logged_model_is_refused_naming_refit(tmp_path):
    study = _study("no-model")
    session = TrackingSession(empty_store_uri(tmp_path / "mlflow.db"), "no-model", settle_seconds=0)
    with pytest.raises(InputError, match="trial 0 has no logged model.*refit="):
        register_best(study, "no-model", {"trial": 0}, session=session)


@pytest.mark.slow
def test_register_best_writes_to_the_environment_s_store_and_leaves_the_variable_set(tmp_path, rows, monkeypatch):
    uri = f"sqlite:///{tmp_path / 'env.db'}"
    monkeypatch.setenv(ENV, uri)
    monkeypatch.chdir(tmp_path)
    register_best(_study("env-store"), "env-store", {"trial": 0}, refit=_refit(rows))
    assert os.environ.get(ENV) == uri
    assert mlflow.get_tracking_uri() == uri
    assert len(_selection_runs(uri)) == 1
    assert not (tmp_path / "mlflow.db").exists()  # nothing went to MLflow's default store


@pytest.mark.slow
def test_a_uri_set_in_code_comes_before_the_environment_and_stays_set(tmp_path, rows, monkeypatch):
    in_code, variable = f"sqlite:///{tmp_path / 'set.db'}", f"sqlite:///{tmp_path / 'env.db'}"
    monkeypatch.setenv(ENV, variable)
    mlflow.set_tracking_uri(in_code)
    register_best(_study("set-store"), "set-store", {"trial": 0}, refit=_refit(rows))
    assert mlflow.get_tracking_uri() == in_code and os.environ.get(ENV) == in_code  # as MLflow set both
    assert len(_selection_runs(in_code)) == 1 and _selection_runs(variable) == []


@pytest.mark.slow
def test_an_argument_comes_first_and_changes_nothing_process_wide(tmp_path, rows, monkeypatch):
    argument, variable = f"sqlite:///{tmp_path / 'arg.db'}", f"sqlite:///{tmp_path / 'env.db'}"
    monkeypatch.setenv(ENV, variable)
    session = TrackingSession(argument, settle_seconds=0)
    register_best(_study("arg-store"), "arg-store", {"trial": 0}, refit=_refit(rows), session=session)
    assert len(_selection_runs(argument)) == 1
    assert os.environ.get(ENV) == variable and mlflow.get_tracking_uri() == variable


@pytest.mark.slow
def test_the_callback_logs_where_the_tracking_uri_points_when_the_study_runs(tmp_path, rows, monkeypatch):
    X, y, s = rows
    monkeypatch.chdir(tmp_path)
    callback = FairnessTrackingCallback(experiment_name="current-uri", log_models=True,
                                        model_pip_requirements=["fairops"], settle_seconds=0)
    uri = f"sqlite:///{tmp_path / 'set-later.db'}"
    mlflow.set_tracking_uri(uri)  # set after the callback was made, before the study runs (as MLflow's own)
    model = SCAFFTreeClassifier().fit(X, y, sensitive_features=s)
    _study("current-uri", {0: model, 1: model, 2: model}, callback)
    assert callback.tracking_uri == uri
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("current-uri")
    assert len(client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'trial'")) == 3
    assert mlflow.get_tracking_uri() == uri  # logging the models left it as it was
    assert not (tmp_path / "mlflow.db").exists()


@pytest.mark.slow
def test_logging_models_leaves_the_environment_variable_set(tmp_path, rows, monkeypatch):
    X, y, s = rows
    uri = f"sqlite:///{tmp_path / 'env.db'}"
    monkeypatch.setenv(ENV, uri)
    monkeypatch.chdir(tmp_path)
    callback = FairnessTrackingCallback(experiment_name="env-models", log_models=True,
                                        model_pip_requirements=["fairops"], settle_seconds=0)
    model = SCAFFTreeClassifier().fit(X, y, sensitive_features=s)
    _study("env-models", {0: model, 1: model, 2: model}, callback)
    assert os.environ.get(ENV) == uri and mlflow.get_tracking_uri() == uri
    again = FairnessTrackingCallback(experiment_name="env-models-2", settle_seconds=0)
    assert again.tracking_uri == uri


@pytest.mark.slow
@pytest.mark.parametrize("name", ["fairband", "paper"])
def test_rule_names_agree_between_select_best_and_register_best(tmp_path, rows, name):
    study = _study(f"rule-{name}")
    picked = select_best(study, alpha=0.5, rule=name)
    session = TrackingSession(empty_store_uri(tmp_path / "mlflow.db"), settle_seconds=0)
    best = register_best(study, f"rule-{name}", name, alpha=0.5, refit=_refit(rows), session=session)
    assert best.pick.trial.number == picked.trial.number


def test_an_unknown_rule_is_refused_naming_every_accepted_name(tmp_path):
    study = _study("rule-unknown")
    with pytest.raises(InputError, match="'fairband'.*'paper'.*'robust'"):
        select_best(study, alpha=0.5, rule="best")
