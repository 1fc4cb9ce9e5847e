"""An own objective (a scikit-learn Pipeline of one's own, one's own scoring) records what the robust rule needs
with fairops.tuning.record_outcome: the same attributes FairnessObjective records, so select_best(rule="robust")
and register_best(rule="robust") work on its study, and a study without them is told which helper to call."""

import math

import mlflow
import numpy as np
import optuna
import pytest
from optuna.trial import TrialState
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from threadpoolctl import threadpool_limits

from fairops.datasets import load_compas, load_german
from fairops.fairband import FairbandPruner, FairbandSampler, budget, select_best
from fairops.registry import Refit
from fairops.registry._registration import register_best
from fairops.tracking import TrackingSession
from fairops.tuning import FairnessObjective, record_outcome
from fairops.tuning._baselines import FullBudgetRandomSampler

optuna.logging.set_verbosity(optuna.logging.WARNING)


@pytest.fixture(scope="module")
def compas():
    data = load_compas()
    X_train, X_val, y_train, y_val, s_train, s_val = train_test_split(
        data.X, data.y, data.sensitive, test_size=0.3, random_state=0, stratify=data.y)
    return data.task, X_train, X_val, y_train, y_val, s_val


def _pipeline(X, final_step):
    categories = X.select_dtypes("category").columns.tolist()
    numbers = [c for c in X.columns if c not in categories]
    encode = ColumnTransformer([("categories", OneHotEncoder(handle_unknown="ignore"), categories),
                                ("numbers", StandardScaler(), numbers)])
    return Pipeline([("encode", encode), ("model", final_step)])


def _gradient_boosting(trial):
    return HistGradientBoostingClassifier(learning_rate=trial.suggest_float("learning_rate", 0.03, 0.3, log=True),
                                          max_leaf_nodes=trial.suggest_int("max_leaf_nodes", 4, 31),
                                          max_iter=30, random_state=0)


def _tune(compas, final_step, **study_options):
    task, X_train, X_val, y_train, y_val, s_val = compas

    def objective(trial):
        model = _pipeline(X_train, final_step(trial))
        rows = max(200, int(budget(trial) * len(X_train)))  # the first rows: the split is shuffled already
        model.fit(X_train.iloc[:rows], y_train[:rows])
        return record_outcome(trial, task, y_val, model.predict_proba(X_val)[:, 1], s_val)

    study = optuna.create_study(directions=["maximize", "maximize"], pruner=FairbandPruner(),
                                sampler=FairbandSampler(seed=0, eta=3, s_max=1, iterations=1), **study_options)
    with threadpool_limits(1):  # OpenMP threads of the boosting fits fight over a busy machine's cores
        study.optimize(objective)
    return study


def test_robust_selection_of_an_own_pipeline_on_compas(compas):
    study = _tune(compas, _gradient_boosting)
    fits = [t for t in study.trials if t.state == TrialState.COMPLETE]
    assert len(fits) == 6
    for fit in fits:
        assert {"intervals", "counts", "fairness_by_attribute", "auc_y", "auc_s"} <= fit.user_attrs.keys()
        assert fit.user_attrs["intervals"]["accuracy"][0] <= fit.values[0] <= fit.user_attrs["intervals"]["accuracy"][1]
    pick = select_best(study, rule="robust")
    low_accuracy, low_fairness = (pick.trial.user_attrs["intervals"][k][0] for k in ("accuracy", "fairness"))
    assert pick.score == pytest.approx(pick.alpha * low_accuracy + (1 - pick.alpha) * low_fairness)
    assert pick.trial in pick.candidates and any(t.user_attrs["budget"] == 1.0 for t in pick.candidates)


def test_record_outcome_writes_what_fairness_objective_writes():
    objective = FairnessObjective(load_german(), families=["logistic_regression"], seed=0)
    study = optuna.create_study(directions=["maximize", "maximize"], sampler=FullBudgetRandomSampler(seed=0))
    study.optimize(objective, n_trials=1)
    theirs = study.trials[0]
    X, y, sensitive = objective.rows("validation")
    scores = objective.refit(theirs).predict_proba(X)[:, 1]  # the same configuration on the same rows
    ours = study.ask()
    values = record_outcome(ours, objective.task, y, scores, sensitive, seed=objective.seed)
    assert values == pytest.approx(theirs.values)
    own = {k: v for k, v in theirs.user_attrs.items() if k not in ("budget", "configuration_id")}
    assert ours.user_attrs == own


def test_robust_rule_without_the_attributes_names_the_helper():
    study = optuna.create_study(directions=["maximize", "maximize"])
    study.add_trial(optuna.trial.create_trial(values=[0.8, 0.9]))
    with pytest.raises(ValueError, match=r"fairops\.tuning\.record_outcome\(trial, task, y_val, scores, sensitive\)"):
        select_best(study, alpha=0.5, rule="robust")


def test_constant_scores_fail_the_trial_as_fairness_objective_does(compas):
    task, _, _, _, y_val, s_val = compas
    study = optuna.create_study(directions=["maximize", "maximize"])
    study.optimize(lambda trial: record_outcome(trial, task, y_val, np.full(len(y_val), 0.3), s_val), n_trials=1)
    assert study.trials[0].state == TrialState.FAIL and study.trials[0].user_attrs == {
        "failure": "constant validation scores"}
    with pytest.raises(ValueError, match=r"scores must be one probability per row of y_true \(3\)"):
        record_outcome(study.ask(), task, [0, 1, 1], np.ones((3, 2)), s_val.head(3))


@pytest.mark.slow  # about 15 s: the model is logged, registered and loaded again
def test_register_best_registers_the_robust_pick_of_an_own_objective(compas, tmp_path):
    task, X_train, X_val, y_train, _, _ = compas
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    study = _tune(compas, _gradient_boosting, study_name="own-objective")

    def refit(params, trial):
        with threadpool_limits(1):
            return _pipeline(X_train, _gradient_boosting(optuna.trial.FixedTrial(params))).fit(X_train, y_train)

    registered = register_best(study, "own-pipeline", rule="robust",
                               refit=Refit(refit, input_example=X_val.head(3), pip_requirements=["fairops"]),
                               session=TrackingSession(uri))
    assert registered.pick.trial.number == select_best(study, rule="robust").trial.number
    client = mlflow.MlflowClient(uri)
    version = client.get_model_version("own-pipeline", registered.version)
    assert version.tags["selection_rule"].startswith("robust: argmax alpha*accuracy_low + (1-alpha)*fairness_low")
    assert {"accuracy_low", "fairness_low"} <= client.get_run(registered.run_id).data.metrics.keys()
    mlflow.set_tracking_uri(uri)
    try:
        served = mlflow.pyfunc.load_model(f"models:/own-pipeline@{registered.alias}")
    finally:
        mlflow.set_tracking_uri(None)
    assert math.isclose(served.predict(X_val.head(5), params={"answer": "scores"})["probability"].iloc[0],
                        refit(registered.pick.trial.params, None).predict_proba(X_val.head(5))[0, 1], rel_tol=1e-9)


def test_an_optimize_ended_by_the_schedule_says_so_once_and_counts_no_extra_fit(compas, capsys, caplog):
    from fairops.tuning import quiet_trials

    task, _, X_val, _, y_val, s_val = compas
    study = optuna.create_study(directions=["maximize", "maximize"], pruner=FairbandPruner(),
                                sampler=FairbandSampler(seed=0, eta=3, s_max=1, iterations=1))
    scores = np.linspace(0, 1, len(y_val))

    def objective(trial):
        budget(trial)  # a refused trial ends here, pruned
        return record_outcome(trial, task, y_val, scores, s_val)

    with caplog.at_level("WARNING"), quiet_trials(study):
        study.optimize(objective)  # no n_trials: the schedule ends the optimize
    assert len(study.trials) == 7 and study.trials[-1].state == TrialState.PRUNED  # asked, refused, study stopped
    assert capsys.readouterr().out.splitlines()[-1].startswith(
        "6 fits: 6 finished; 1 trial(s) refused by the schedule, not fits (the last: trial 6: every slot of the 1 ")
    assert not [r for r in caplog.records if "nothing left to fit" in r.getMessage()]  # an expected end, no warning
