"""make_fairness_scorer in scikit-learn's own search: the same figures Fairband ranks, the same pick."""

import numpy as np
import optuna
import pandas as pd
import pytest
import sklearn
from sklearn.compose import make_column_selector, make_column_transformer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, ParameterGrid
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from fairops.datasets import load_german
from fairops.fairband import select_best
from fairops.metrics import Task, make_fairness_scorer
from fairops.tuning import FairnessObjective

GRID = {"logisticregression__C": [0.003, 0.1, 10.0], "logisticregression__class_weight": [None, "balanced"]}
ALPHAS = {"fb_bal": 0.5, "accuracy": 1.0, "fairness": 0.0, "alpha_0.2": 0.2}


@pytest.fixture(scope="module")
def split():
    """Fairband's own train / validation rows of German credit (FairnessObjective's split)."""
    objective = FairnessObjective(load_german(), families=["logistic_regression"], seed=0)
    (X_train, y_train, s_train), (X_val, y_val, s_val) = objective.rows("train"), objective.rows("validation")
    X = pd.concat([X_train, X_val], ignore_index=True)
    y = np.concatenate([y_train, y_val])
    sensitive = pd.concat([s_train, s_val], ignore_index=True)
    folds = [(np.arange(len(y_train)), np.arange(len(y_train), len(y)))]  # one split: train -> validation
    return objective.task, X, y, sensitive, folds


def _model():
    encode = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), make_column_selector(dtype_exclude="number")),
        (StandardScaler(), make_column_selector(dtype_include="number")))
    return make_pipeline(encode, LogisticRegression(max_iter=500))


def _fits_as_trials(task, X, y, sensitive, folds):
    """Every grid point fitted and scored by hand with the task, as the (accuracy, fairness) fits of a study."""
    (train, val), = folds
    trials = []
    for params in ParameterGrid(GRID):
        model = _model().set_params(**params).fit(X.iloc[train], y[train])
        figures = task.evaluate(y[val], model.predict_proba(X.iloc[val])[:, 1], sensitive.iloc[val], seed=0)
        trials.append(optuna.trial.create_trial(values=[figures["accuracy"], figures["fairness"]]))
    return trials


def test_grid_search_picks_what_select_best_picks_over_the_same_fits(split):
    task, X, y, sensitive, folds = split
    scoring = {name: make_fairness_scorer(task, alpha) for name, alpha in ALPHAS.items()}
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(_model(), GRID, scoring=scoring, refit="fb_bal", cv=folds)
        search.fit(X, y, sensitive_features=sensitive)
    trials = _fits_as_trials(task, X, y, sensitive, folds)
    results = search.cv_results_
    for k, trial in enumerate(trials):  # the scorer's figures are the task's, the fold's groups routed right
        assert results["mean_test_accuracy"][k] == pytest.approx(trial.values[0], abs=1e-12)
        assert results["mean_test_fairness"][k] == pytest.approx(trial.values[1], abs=1e-12)
    assert len({tuple(t.values) for t in trials}) >= 4  # the grid's fits differ, so the picks mean something
    for name, alpha in ALPHAS.items():  # GridSearchCV's rule: the lowest index among the top rank
        pick = select_best(trials, alpha=alpha)
        assert int(np.argmin(results[f"rank_test_{name}"])) == trials.index(pick.trial), name
        assert results[f"mean_test_{name}"].max() == pytest.approx(pick.score, abs=1e-12)
    assert search.best_index_ == trials.index(select_best(trials, alpha=0.5).trial)


def test_without_routing_the_scorer_says_what_to_do(split):
    task, X, y, sensitive, folds = split
    (train, val), = folds
    model = _model().fit(X.iloc[train], y[train])
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        make_fairness_scorer(task)(model, X.iloc[val], y[val])


@pytest.mark.parametrize("alpha, error, message", [
    ("auto", ValueError, "alpha='auto' weighs by the means over all fits"),
    (1.5, ValueError, r"alpha must be a float in \[0, 1\], got 1.5"),
    (True, ValueError, "alpha must be a float"),
])
def test_bad_alpha_is_refused_by_name(alpha, error, message):
    task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])
    with pytest.raises(error, match=message):
        make_fairness_scorer(task, alpha)


def test_task_must_be_a_task():
    with pytest.raises(TypeError, match="task must be a fairops.metrics.Task, got str"):
        make_fairness_scorer("precision@tpr=0.5,ratio=tpr")
