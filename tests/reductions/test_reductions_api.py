"""The reductions as scikit-learn classifiers: estimator checks, constraints held, any family's learner, bad input."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from fairops.datasets import load_dataset
from fairops.reductions import ExponentiatedGradient, GridSearch
from fairops.tuning import FairnessObjective


def _alternating_groups(X):
    return np.arange(X.shape[0] if hasattr(X, "shape") else len(np.asarray(X))) % 2


class _EGOnChecks(ExponentiatedGradient):
    """scikit-learn's checks call ``fit(X, y)``: the groups alternate row by row."""

    def fit(self, X, y):
        return super().fit(X, y, sensitive_features=_alternating_groups(X))


class _GSOnChecks(GridSearch):
    def fit(self, X, y):
        return super().fit(X, y, sensitive_features=_alternating_groups(X))


@parametrize_with_checks([_EGOnChecks(max_iter=10, random_state=0), _GSOnChecks(grid_size=5, random_state=0)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def compas():
    data = load_dataset("compas")
    X, y, s = FairnessObjective(data, seed=0, blind=True).rows("train")
    return pd.get_dummies(X, dtype=float), np.asarray(y), pd.DataFrame(
        {"race": s["race"].to_numpy(), "sex": data.X.loc[X.index, "sex"].to_numpy()})


def _rates(model, X, y, groups, kind):
    """The randomized classifier's rate (its chance of deciding positive) overall and, per attribute, in each group."""
    chance = model.set_params(mix="decisions").predict_proba(X)[:, 1]
    event = {"tpr": y == 1, "fpr": y == 0, "ppr": np.ones(len(y), bool)}[kind]
    by_group = {name: pd.Series(chance[event]).groupby(groups[name].to_numpy()[event]).mean() for name in groups}
    return chance[event].mean(), by_group


@pytest.mark.parametrize("kind", ["tpr", "fpr", "ppr"])
def test_every_attribute_is_held_with_lowest_groups(compas, kind):
    X, y, groups = compas
    model = ExponentiatedGradient(constraint=kind, difference_bound=0.02, random_state=0).fit(
        X, y, sensitive_features=groups)
    overall, by_group = _rates(model, X, y, groups, kind)
    for name, rates in by_group.items():
        assert (rates - overall).abs().max() <= 0.02 + 0.01, (name, rates.to_dict())  # the bound + eps
    assert model.train_gamma_.max() <= 0.01
    blind = ExponentiatedGradient(constraint=kind, max_iter=1).fit(X, y, sensitive_features=groups)
    assert blind.train_gamma_.max() > model.train_gamma_.max()  # one round is the unconstrained tree


def test_a_ratio_bound_holds_the_ratio(compas):
    X, y, groups = compas
    model = ExponentiatedGradient(constraint="fpr", ratio_bound=0.9, random_state=0).fit(
        X, y, sensitive_features=groups[["race"]])
    overall, by_group = _rates(model, X, y, groups[["race"]], "fpr")
    # The bound compares each group with all rows (Agarwal et al.'s form), so two groups' ratio may reach 0.9^2.
    assert (by_group["race"] / overall).between(0.9 - 0.01, 1 / 0.9 + 0.01).all(), by_group["race"].to_dict()
    unbounded = ExponentiatedGradient(constraint="fpr", max_iter=1).fit(X, y, sensitive_features=groups[["race"]])
    assert not (_rates(unbounded, X, y, groups[["race"]], "fpr")[1]["race"] / overall).between(0.89, 1.12).all()


@pytest.mark.parametrize("mix", ["decisions", "probabilities"])
def test_scores_are_deterministic_and_predict_thresholds_them(compas, mix):
    X, y, groups = compas
    model = ExponentiatedGradient(mix=mix, random_state=0).fit(X, y, sensitive_features=groups["race"])
    again = ExponentiatedGradient(mix=mix, random_state=0).fit(X, y, sensitive_features=groups["race"])
    first = model.predict_proba(X)[:, 1]
    np.testing.assert_array_equal(first, model.predict_proba(X)[:, 1])
    np.testing.assert_array_equal(first, again.predict_proba(X)[:, 1])
    np.testing.assert_array_equal(model.predict(X), (first >= 0.5).astype(int))
    # a row scores the same alone, in another batch, in another order
    order = np.random.default_rng(0).permutation(len(X))[:200]
    np.testing.assert_array_equal(model.predict_proba(X.iloc[order])[:, 1], first[order])
    np.testing.assert_array_equal([model.predict_proba(X.iloc[[i]])[0, 1] for i in order[:20]], first[order[:20]])


def test_the_decisions_score_is_the_randomized_classifiers_chance_with_rows_untied(compas):
    X, y, groups = compas
    model = ExponentiatedGradient(random_state=0).fit(X, y, sensitive_features=groups["race"])
    score = model.predict_proba(X)[:, 1]
    chance = sum(w * p.predict(X) for p, w in zip(model.predictors_, model.weights_))
    assert np.abs(score - chance).max() <= 1e-9
    assert len(np.unique(chance)) <= 2 ** model.n_predictors_ < len(np.unique(score))
    assert len(np.unique(score[~X.duplicated().to_numpy()])) == (~X.duplicated()).sum()  # distinct rows never tie


def test_a_threshold_inside_a_tie_decides_served_rows_as_the_evaluation_did(compas):
    """The task's evaluation breaks ties at random, a served row cannot: with the row-hash tie-break there
    are no ties left, so both decide the same rows and measure the same fairness."""
    from fairops.metrics import fairness_ratio, operating_point
    from fairops.metrics._decisions import served_decision

    X, y, groups = compas
    half = np.arange(len(y)) % 2 == 0
    model = ExponentiatedGradient(constraint="fpr", ratio_bound=0.9, random_state=0).fit(
        X[half], y[half], sensitive_features=groups["race"][half])
    rest, labels, race = X[~half], y[~half], groups[["race"]][~half]
    score = model.predict_proba(rest)[:, 1]
    point = operating_point(score, labels, fpr=0.1)
    evaluated, served = point.apply(score), served_decision(point, score)
    np.testing.assert_array_equal(evaluated, served)
    assert fairness_ratio(labels, served, race, rate="fpr") == fairness_ratio(labels, evaluated, race, rate="fpr")
    raw = sum(w * p.predict(rest) for p, w in zip(model.predictors_, model.weights_))
    point = operating_point(raw, labels, fpr=0.1)
    assert (point.apply(raw) != served_decision(point, raw)).sum() > 10  # the raw chance ties at the threshold


@pytest.mark.parametrize("family", ["logistic_regression", "decision_tree", "random_forest", "lightgbm", "mlp",
                                    "scaff_forest"])
def test_every_family_learner_takes_the_reweighted_rows(compas, family):
    import optuna

    from fairops.tuning import make_model

    X, y, groups = compas
    frame = X.assign(race=pd.Categorical(groups["race"]))
    trial = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0)).ask()
    pipeline = make_model(trial, families=[family], X_example=frame, sensitive_columns=["race"])
    pipeline.steps[-1] = ("model", ExponentiatedGradient(pipeline.steps[-1][1], constraint="fpr", max_iter=6,
                                                         random_state=0))
    pipeline.fit(frame, y, model__sensitive_features=groups["race"])
    assert pipeline.predict_proba(frame).shape == (len(y), 2)
    assert pipeline[-1].n_oracle_calls_ >= 6


def test_bad_input_is_refused_by_name(compas):
    X, y, groups = compas
    model = ExponentiatedGradient(max_iter=2)
    with pytest.raises(ValueError, match="needs sensitive_features"):
        model.fit(X, y)
    with pytest.raises(ValueError, match="'race' has 1 distinct value"):
        model.fit(X, y, sensitive_features=pd.DataFrame({"race": ["a"] * len(y)}))
    with pytest.raises(ValueError, match="'race' contains missing values"):
        model.fit(X, y, sensitive_features=pd.DataFrame({"race": [None] + ["a", "b"] * (len(y) // 2)})[:len(y)])
    with pytest.raises(ValueError, match="has 10 rows, expected"):
        model.fit(X, y, sensitive_features=groups["race"][:10])
    with pytest.raises(ValueError, match="not both"):
        ExponentiatedGradient(difference_bound=0.01, ratio_bound=0.8).fit(X, y, sensitive_features=groups)
    with pytest.raises(ValueError, match="constraint must be one of"):
        ExponentiatedGradient(constraint="equalized_odds").fit(X, y, sensitive_features=groups)
    with pytest.raises(ValueError, match="ratio_bound must be None or a number in"):
        ExponentiatedGradient(ratio_bound=1.5).fit(X, y, sensitive_features=groups)
    with pytest.raises(TypeError, match="KNeighborsClassifier takes no sample_weight"):
        ExponentiatedGradient(KNeighborsClassifier()).fit(X, y, sensitive_features=groups)
    with pytest.raises(ValueError, match="Only binary classification"):
        model.fit(X, np.arange(len(y)) % 3, sensitive_features=groups)


@pytest.mark.parametrize("edit, problem", [
    (lambda m: setattr(m, "weights_", m.weights_ * 2), "sum to 2"),
    (lambda m: setattr(m, "weights_", -m.weights_), "non-negative"),
    (lambda m: setattr(m, "weights_", np.full_like(m.weights_, np.nan)), "finite"),
    (lambda m: setattr(m, "weights_", m.weights_[:-1]), "one per predictor"),
    (lambda m: setattr(m, "predictors_", [object()] * len(m.predictors_)), "not a fitted classifier"),
    (lambda m: setattr(m, "classes_", np.array([0, 0])), "two distinct classes"),
])
def test_a_tampered_state_is_refused_when_rebuilt(compas, edit, problem):
    X, y, groups = compas
    model = ExponentiatedGradient(max_iter=6, random_state=0).fit(X, y, sensitive_features=groups["race"])
    edit(model)
    with pytest.raises(ValueError, match=problem):
        pickle.loads(pickle.dumps(model))


def test_the_served_answer_finds_a_reduction_inside_a_one_step_pipeline(compas):
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    from fairops.mlflow.answer import reduction_in

    X, y, groups = compas
    reduction = ExponentiatedGradient(max_iter=5, random_state=0)
    model = Pipeline([("scale", StandardScaler()), ("fair", Pipeline([("reduction", reduction)]))])
    model.fit(X, y, fair__reduction__sensitive_features=groups["race"])
    prefix, found = reduction_in(model)
    # what the reduction reads is the scaled rows: the empty rest of the inner pipeline adds no step
    assert found is reduction
    np.testing.assert_array_equal(prefix(X.head(5)), model[0].transform(X.head(5)))
