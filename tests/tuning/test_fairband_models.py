"""Search space, baselines, the data-set objective and the two examples."""

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import optuna
import pytest

from fairops.datasets import load_german
from fairops.tuning import FAMILIES, TUNERS, FairnessObjective, make_model, make_study, register_family, run_tuner
from fairops.tuning._baselines import trials_per_iteration
from fairops.tuning._search_space import PAPER_FAMILIES
from fairops.tuning._toy import make_toy_objective

optuna.logging.set_verbosity(optuna.logging.ERROR)
REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("family", PAPER_FAMILIES)
@pytest.mark.parametrize("profile", ["fast", "paper"])
def test_each_family_suggests_and_fits(family, profile):
    data = load_german()
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=1))
    trial = study.ask()
    model = make_model(trial, profile=profile, families=[family], X_example=data.X)
    if profile == "paper":  # paper sizes are too slow for a test fit; check the ranges instead
        prefix = {"logistic_regression": "lr_", "decision_tree": "dt_", "random_forest": "rf_",
                  "lightgbm": "lgbm_", "mlp": "mlp_"}[family]
        assert trial.params and all(name.startswith(prefix) for name in trial.params)
        return
    model.fit(data.X.iloc[:400], np.asarray(data.y)[:400])
    assert model.predict_proba(data.X.iloc[400:450]).shape == (50, 2)


def test_fast_profile_caps_sizes():
    for _ in range(30):
        trial = optuna.create_study(sampler=optuna.samplers.RandomSampler()).ask()
        make_model(trial, profile="fast", families=["random_forest", "lightgbm"])
        for name in ("rf_n_estimators", "lgbm_n_estimators"):
            assert trial.params.get(name, 0) <= 150


def test_registry_hook_and_bad_input():
    register_family("stub", lambda trial, profile, seed: __import__("sklearn.dummy").dummy.DummyClassifier())
    try:
        model = make_model(optuna.create_study().ask(), families=["stub"])
        assert type(model.steps[-1][1]).__name__ == "DummyClassifier"
    finally:
        del FAMILIES["stub"]
    with pytest.raises(ValueError, match="profile"):
        make_model(optuna.create_study().ask(), profile="huge")
    with pytest.raises(ValueError, match="families"):
        make_model(optuna.create_study().ask(), families=["svm"])


@pytest.mark.parametrize("tuner", TUNERS)
def test_baselines_share_one_objective(tuner):
    result = run_tuner(tuner, make_toy_objective(), seed=0)
    trials = result.study.trials
    assert len(trials) == trials_per_iteration(tuner)
    budgets = {t.user_attrs["budget"] for t in trials}
    assert budgets == {1.0} if tuner.startswith("RS") else len(budgets) == 5
    expected_alpha = {"RS": 1.0, "HB": 1.0, "RS-bal": 0.5, "FB-bal": 0.5}.get(tuner)
    if expected_alpha is not None:
        assert result.selection.alpha == expected_alpha
        best = max(t.values[0] * expected_alpha + t.values[1] * (1 - expected_alpha) for t in trials)
        assert result.selection.score == pytest.approx(best)


def test_fairness_objective_fits_budget_slices():
    objective = FairnessObjective(load_german(), families=["decision_tree"], seed=0)
    study = make_study("FB-auto", seed=0, s_max=2)  # 22 fits at budgets 1/9, 1/3, 1
    result = run_tuner("FB-auto", objective, study=study, catch=(ValueError,))
    assert len(study.trials) == 22
    done = [t for t in result.study.trials if t.state == optuna.trial.TrialState.COMPLETE]
    assert {round(t.user_attrs["budget"], 4) for t in done} >= {0.3333, 1.0}
    assert all(0 <= t.values[0] <= 1 and 0 <= t.values[1] <= 1 for t in done)
    test_accuracy, test_fairness = objective.test(result.selection.trial)
    assert 0 <= test_accuracy <= 1 and 0 <= test_fairness <= 1


@pytest.mark.slow  # over 5 s in the quick tier
@pytest.mark.parametrize("script,args", [("fairband_sync.py", ["--s-max", "2"]),
                                         ("fairband_async.py", ["--n-trials", "40"])])
def test_examples_run(script, args):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, str(REPO / "examples" / script), *args], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "pick" in out.stdout and "alpha=" in out.stdout


def test_paper_profile_has_the_papers_whole_network_space():
    from fairops.models._families import _HIDDEN

    assert len(_HIDDEN["paper"]) == len(set(_HIDDEN["paper"])) == 15
    assert set(_HIDDEN["fast"]) < set(_HIDDEN["paper"])
    seen = set()
    for number in range(60):
        trial = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=number)).ask()
        network = make_model(trial, profile="paper", families=["mlp"]).steps[-1][1]
        seen.add(network.hidden_layer_sizes)
        assert network.batch_size == 2048 and network.max_epochs in (25, 50, 75)
        assert not any("dropout" in name or "batch_norm" in name or "amsgrad" in name for name in trial.params)
    assert len(seen) >= 12


def test_weight_decay_becomes_the_same_l2_gradient():
    from fairops.models import WeightDecayMLP

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 4)), rng.integers(0, 2, 300)
    # PyTorch adds weight_decay * w to the mean-loss gradient; scikit-learn adds alpha * w / batch rows
    assert WeightDecayMLP((5,), weight_decay=0.01, batch_size=100, max_epochs=2).fit(X, y).network_.alpha == 1.0
    small = WeightDecayMLP((5,), weight_decay=0.01, batch_size=2048, max_epochs=2).fit(X, y)
    assert small.network_.alpha == pytest.approx(3.0) and small.network_.n_iter_ == 2  # every epoch runs
    with pytest.raises(ValueError, match="weight_decay"):
        WeightDecayMLP(weight_decay=-1).fit(X, y)


def _constant_logistic_regression(trial, profile, seed):
    from sklearn.linear_model import LogisticRegression

    # L1 with a tiny C zeroes every coefficient (liblinear penalises the intercept too): a constant model
    c = trial.suggest_categorical("c", [1e-5, 1.0])
    return LogisticRegression(C=c, l1_ratio=1.0, solver="liblinear")


def test_constant_models_fail_and_are_never_picked():
    from fairops.tuning._objective import CONSTANT_SCORES, ConstantScoresError, failure_reason

    register_family("lr_c", _constant_logistic_regression)
    try:
        objective = FairnessObjective(load_german(), families=["lr_c"], seed=0)
        fixed = optuna.trial.FixedTrial({"c": 1e-5})
        fixed.set_user_attr("budget", 1.0)
        assert all(math.isnan(value) for value in objective(fixed))
        assert fixed.user_attrs["failure"] == CONSTANT_SCORES
        with pytest.raises(ConstantScoresError, match="scores all 200 validation rows"):
            objective.evaluate(objective.refit(fixed), "test")
        study = make_study("RS-bal", seed=0)
        result = run_tuner("RS-bal", objective, study=study)  # no catch= needed
        reasons = [failure_reason(t) for t in study.trials]
        constant = [t for t in study.trials if t.params["c"] == 1e-5]
        assert constant and all(failure_reason(t) == CONSTANT_SCORES for t in constant)
        assert reasons.count(None) == len(study.trials) - len(constant)
        assert result.selection.trial.params["c"] == 1.0
    finally:
        del FAMILIES["lr_c"]


def test_test_rows_are_scored_at_the_validation_threshold():
    data = load_german()
    objective = FairnessObjective(data, families=["decision_tree"], seed=3, score_test=True)
    study = make_study("RS", seed=0)
    run_tuner("RS", objective, study=study)
    trial = study.trials[0]
    model = objective.refit(trial, 1.0)
    X_val, y_val, s_val = objective.rows("validation")
    X_test, y_test, s_test = objective.rows("test")
    point = data.task.operating_point(y_val, model.predict_proba(X_val)[:, 1], seed=3)
    expected = data.task.evaluate(y_test, model.predict_proba(X_test)[:, 1], s_test, seed=3, at=point)
    assert objective.evaluate(model, "test") == pytest.approx(expected)
    assert objective.test(trial) == pytest.approx((expected["accuracy"], expected["fairness"]))
    assert (trial.user_attrs["test_accuracy"], trial.user_attrs["test_fairness"]) == pytest.approx(
        (expected["accuracy"], expected["fairness"]))
    # not the test rows' own cut at the target
    own = data.task.evaluate(y_test, model.predict_proba(X_test)[:, 1], s_test, seed=3)
    assert own["accuracy"] != pytest.approx(expected["accuracy"])


def test_split_seed_fixes_the_split_across_seeds():
    data = load_german()
    a = FairnessObjective(data, seed=1, split_seed=0)
    b = FairnessObjective(data, seed=2, split_seed=0)
    c = FairnessObjective(data, seed=2)
    assert a.rows("test")[0].index.equals(b.rows("test")[0].index)
    assert not a.rows("test")[0].index.equals(c.rows("test")[0].index)


def test_category_codes_one_hot_like_the_labels():
    from sklearn.preprocessing import OneHotEncoder

    from fairops.datasets import load_adult
    from fairops.models import CategoryCodes
    from fairops.tuning._search_space import _encoder

    X = load_adult().X
    categorical = [c for c in X.columns if str(X[c].dtype) == "category"]
    fit_rows, other_rows = X.iloc[:300], X.iloc[5000:8000]  # the small part lacks some categories
    by_labels = OneHotEncoder(handle_unknown="ignore").fit(fit_rows[categorical].astype(str))
    ours = _encoder(X).fit(fit_rows)
    expected = by_labels.transform(other_rows[categorical].astype(str)).toarray()
    got = ours.transform(other_rows).toarray()[:, : expected.shape[1]]
    assert np.array_equal(got, expected)
    reordered = other_rows.assign(sex=other_rows["sex"].cat.reorder_categories(["Male", "Female"]))
    with pytest.raises(ValueError, match="other categories than in fit"):
        CategoryCodes().fit(fit_rows[["sex"]]).transform(reordered[["sex"]])
    with pytest.raises(TypeError, match="category dtype"):
        CategoryCodes().fit(fit_rows[["sex"]].astype(str))
