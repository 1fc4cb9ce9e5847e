"""The reductions as tuned families: Fairband searches their hyperparameters with their base learner's, at its
budgets, and every fit logs its number of predictors and (exponentiated gradient) its duality gap to MLflow."""

import optuna
import pytest
from mlflow.tracking import MlflowClient

from fairops.datasets import load_german
from fairops.fairband import FairbandPruner, FairbandSampler
from fairops.models._families import FAMILIES
from fairops.tracking._callback import FairnessTrackingCallback
from fairops.tuning import FairnessObjective
from fairops.tuning._search_space import families_for
from tests.mlflow_stores import empty_store_uri

pytestmark = pytest.mark.slow  # 24 Fairband fits of the reductions on German, logged to MLflow: ~15 s

@pytest.fixture(scope="module")
def study_and_runs(tmp_path_factory):
    uri = empty_store_uri(tmp_path_factory.mktemp("reductions-search") / "mlflow.db")
    objective = FairnessObjective(load_german(), families=["exponentiated_gradient", "grid_search"], seed=0,
                                  max_train_rows=300)
    study = optuna.create_study(directions=["maximize", "maximize"], sampler=FairbandSampler(alpha="auto", seed=0),
                                pruner=FairbandPruner())
    tracker = FairnessTrackingCallback(uri, "reductions", settle_seconds=0)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study.optimize(objective, n_trials=24, callbacks=[tracker])
    tracker.finish(study)
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("reductions")
    runs = client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'trial'", max_results=100)
    return study, {int(run.data.tags["trial_number"]): run for run in runs}


def test_fits_log_their_predictors_and_duality_gap(study_and_runs):
    study, runs = study_and_runs
    fitted = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert {t.params["model"] for t in fitted} == {"exponentiated_gradient", "grid_search"}
    for trial in fitted:
        metrics = runs[trial.number].data.metrics
        assert metrics["n_predictors"] == trial.user_attrs["n_predictors"] >= 1
        if trial.params["model"] == "exponentiated_gradient":
            assert metrics["duality_gap"] == trial.user_attrs["duality_gap"] >= 0
            assert metrics["n_predictors"] <= trial.params["eg_max_iter"] * 9  # at most a best response and 8 per round
        else:
            assert "duality_gap" not in metrics and metrics["n_predictors"] == 1  # grid search keeps one predictor


def test_their_own_and_their_bases_hyperparameters_are_searched_at_fairbands_budgets(study_and_runs):
    study, _ = study_and_runs
    trials = [t for t in study.trials if t.params]
    assert {round(t.user_attrs["budget"], 4) for t in trials} == {0.0123}  # the first rung's budget, 1/81
    for trial in trials:
        prefix = "eg" if trial.params["model"] == "exponentiated_gradient" else "gs"
        base = trial.params[f"{prefix}_base"]
        assert base in FAMILIES[trial.params["model"]].bases
        assert 0.8 <= trial.params[f"{prefix}_ratio_bound"] <= 0.99
        own = {"decision_tree": "dt_", "logistic_regression": "lr_", "lightgbm": "lgbm_"}[base]
        assert any(name.startswith(own) for name in trial.params)  # the base learner's own hyperparameters
    assert {t.params["eg_max_iter"] for t in trials if "eg_max_iter" in t.params} <= set(range(10, 21))


def test_reductions_are_default_families_and_stay_under_blind():
    assert {"exponentiated_gradient", "grid_search"} <= set(families_for())
    assert {"exponentiated_gradient", "grid_search"} <= set(families_for(blind=True))
