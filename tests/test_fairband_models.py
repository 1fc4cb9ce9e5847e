"""Search space, baselines, the data-set objective and the two examples."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import optuna
import pytest

from fairops.datasets import load_german
from fairops.fairband import FAMILIES, TUNERS, FairnessObjective, make_model, make_study, register_family, run_tuner
from fairops.fairband.baselines import trials_per_iteration
from fairops.fairband.search_space import PAPER_FAMILIES
from fairops.fairband.toy import make_toy_objective

optuna.logging.set_verbosity(optuna.logging.ERROR)
REPO = Path(__file__).resolve().parents[1]


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


@pytest.mark.parametrize("script,args", [("fairband_sync.py", ["--s-max", "2"]),
                                         ("fairband_async.py", ["--n-trials", "40"])])
def test_examples_run(script, args):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, str(REPO / "examples" / script), *args], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "pick" in out.stdout and "alpha=" in out.stdout
