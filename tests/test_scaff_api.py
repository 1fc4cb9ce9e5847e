"""SCAFF estimator API: bad input, routing in Pipeline/GridSearchCV, clone, pickle, threads, state."""

import json
import pickle

import numpy as np
import pandas as pd
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from fairops.scaff import SCAFFClassifier, SCAFFTreeClassifier


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    race = rng.choice(["a", "b", "c", "d"], n)
    sex = rng.choice(["f", "m"], n)
    X[:, 1] += (race == "a") * 1.5
    y = (X[:, 0] + X[:, 1] + rng.normal(0, 0.8, n) > 0.5).astype(int)
    return X, y, pd.DataFrame({"race": race, "sex": sex})


def _fit(**params):
    X, y, S = _data()
    return SCAFFClassifier(n_estimators=8, **params).fit(X, y, sensitive_features=S)


# ------------------------------------------------------------------ bad input
def test_nan_in_X_is_refused():
    X, y, S = _data()
    X[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SCAFFClassifier(n_estimators=2).fit(X, y, sensitive_features=S)
    model = _fit()
    with pytest.raises(ValueError, match="NaN"):
        model.predict_proba(X)


def test_constant_sensitive_column_is_refused():
    X, y, S = _data()
    S["sex"] = "f"
    with pytest.raises(ValueError, match="'sex'.*1 distinct value"):
        SCAFFClassifier(n_estimators=2).fit(X, y, sensitive_features=S)


def test_missing_sensitive_value_is_refused():
    X, y, S = _data()
    S.loc[4, "race"] = None
    with pytest.raises(ValueError, match="'race'.*missing"):
        SCAFFClassifier(n_estimators=2).fit(X, y, sensitive_features=S)


@pytest.mark.parametrize("labels, message", [(np.zeros(600), "exactly 2 classes, got 1"), (np.arange(600) % 3, "Only binary classification")])
def test_y_must_have_two_classes(labels, message):
    X, _, S = _data()
    with pytest.raises(ValueError, match=message):
        SCAFFClassifier(n_estimators=2).fit(X, labels, sensitive_features=S)


def test_length_mismatch_is_refused():
    X, y, S = _data()
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        SCAFFClassifier(n_estimators=2).fit(X, y[:-1], sensitive_features=S)
    with pytest.raises(ValueError, match="sensitive_features column 'race' has 599 rows, expected 600"):
        SCAFFClassifier(n_estimators=2).fit(X, y, sensitive_features=S.iloc[:-1])


@pytest.mark.parametrize(
    "params, name",
    [
        ({"theta": 1.5}, "theta"),
        ({"theta": -0.1}, "theta"),
        ({"theta": "high"}, "theta"),
        ({"max_depth": 0}, "max_depth"),
        ({"max_bins": 300}, "max_bins"),
        ({"max_bins": 1}, "max_bins"),
        ({"n_estimators": 0}, "n_estimators"),
        ({"max_features": "all"}, "max_features"),
        ({"max_features": 0.0}, "max_features"),
        ({"sensitive_aggregation": "min"}, "sensitive_aggregation"),
        ({"intersectional": "yes"}, "intersectional"),
        ({"n_jobs": 0}, "n_jobs"),
        ({"n_jobs": "two"}, "n_jobs"),
        ({"bootstrap": "yes"}, "bootstrap"),
    ],
)
def test_out_of_range_parameters_are_named(params, name):
    X, y, S = _data()
    with pytest.raises((ValueError, TypeError), match=name):
        SCAFFClassifier(**{"n_estimators": 2, **params}).fit(X, y, sensitive_features=S)


def test_missing_sensitive_features_warns_when_theta_positive():
    X, y, _ = _data()
    with pytest.warns(UserWarning, match="sensitive_features was not given"):
        SCAFFClassifier(n_estimators=2, theta=0.5).fit(X, y)


def test_non_numeric_column_is_named():
    X, y, S = _data()
    frame = pd.DataFrame(X, columns=list("abcde"))
    frame["e"] = frame["e"].round().astype(str)
    with pytest.raises(TypeError, match="'e'"):
        SCAFFClassifier(n_estimators=2).fit(frame, y, sensitive_features=S)


# ------------------------------------------------------------------- behaviour
def test_forest_is_identical_for_any_n_jobs():
    one = _fit(n_jobs=1, theta=0.4)
    two = _fit(n_jobs=2, theta=0.4)
    for name in ("node_feature_", "node_threshold_", "node_value_", "node_offsets_"):
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name))


def test_random_state_changes_the_forest():
    assert not np.array_equal(_fit(random_state=0).node_threshold_, _fit(random_state=1).node_threshold_)


def test_string_labels_and_fitted_attributes():
    X, y, S = _data()
    labels = np.where(y == 1, "yes", "no")
    model = SCAFFClassifier(n_estimators=6).fit(pd.DataFrame(X, columns=list("abcde")), labels, sensitive_features=S)
    assert model.classes_.tolist() == ["no", "yes"]
    assert model.feature_names_in_.tolist() == list("abcde")
    assert model.n_features_in_ == 5
    assert model.feature_importances_.sum() == pytest.approx(1.0)
    assert set(model.predict(pd.DataFrame(X, columns=list("abcde")))) <= {"no", "yes"}
    assert model.sensitive_columns_ == ["race", "sex"]
    assert model.n_sensitive_groups_ == 6


def test_categorical_columns_use_their_category_codes():
    rng = np.random.default_rng(1)
    n = 800
    colour = pd.Categorical(rng.choice(["red", "green", "blue"], n), categories=["red", "green", "blue"])
    y = (np.asarray(colour) == "blue").astype(int)
    frame = pd.DataFrame({"colour": colour, "noise": rng.normal(size=n)})
    tree = SCAFFTreeClassifier(theta=0.0, max_depth=1).fit(frame, y)
    assert tree.node_feature_[0] == 0 and tree.node_threshold_[0] == 1.5  # codes red=0, green=1 | blue=2
    unseen = pd.DataFrame({"colour": ["blue", "purple"], "noise": [0.0, 0.0]})
    np.testing.assert_allclose(tree.predict_proba(unseen)[:, 1], [1.0, 0.0])  # unseen goes left


def test_predictions_agree_with_the_binned_training_route():
    # Thresholds on raw values reproduce the bins used in training, also with quantile bins.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 3))
    y = (X[:, 0] > 0.1).astype(int)
    tree = SCAFFTreeClassifier(theta=0.0, max_depth=6, max_bins=16).fit(X, y)
    leaf_values = tree.predict_proba(X)[:, 1]
    assert set(np.round(leaf_values, 12)) <= set(np.round(tree.node_value_[tree.node_feature_ < 0], 12))
    assert np.mean((leaf_values > 0.5) == y) > 0.95


def test_clone_pickle_and_state_round_trip(tmp_path):
    X, y, S = _data()
    model = _fit(theta=0.3)
    assert clone(model).get_params() == model.get_params()
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict_proba(X), model.predict_proba(X))
    state = model._get_state()
    json.dumps({"params": state["params"], "meta": state["meta"]})  # JSON-able
    np.savez(tmp_path / "arrays.npz", **state["arrays"])
    with np.load(tmp_path / "arrays.npz", allow_pickle=False) as saved:
        arrays = {key: saved[key] for key in saved.files}
    rebuilt = SCAFFClassifier._from_state({**state, "arrays": arrays})
    np.testing.assert_array_equal(rebuilt.predict_proba(X), model.predict_proba(X))
    assert rebuilt.feature_importances_ == pytest.approx(model.feature_importances_)


# ------------------------------------------------------- metadata routing
@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def test_pipeline_routes_sensitive_features(routing):
    X, y, S = _data()
    scaff = SCAFFClassifier(n_estimators=8, theta=0.6).set_fit_request(sensitive_features=True)
    pipe = make_pipeline(StandardScaler(), scaff).fit(X, y, sensitive_features=S)
    direct = SCAFFClassifier(n_estimators=8, theta=0.6).fit(StandardScaler().fit_transform(X), y, sensitive_features=S)
    fitted = pipe[-1]
    assert fitted.n_sensitive_groups_ == 6
    np.testing.assert_array_equal(fitted.node_feature_, direct.node_feature_)


def test_grid_search_routes_sensitive_features(routing):
    X, y, S = _data()
    scaff = SCAFFClassifier(n_estimators=6).set_fit_request(sensitive_features=True)
    search = GridSearchCV(scaff, {"theta": [0.0, 0.5]}, cv=3, scoring="roc_auc")
    search.fit(X, y, sensitive_features=S)
    assert search.best_params_["theta"] in (0.0, 0.5)
    assert search.best_estimator_.n_sensitive_groups_ == 6


def test_unlimited_depth_grows_until_no_split_gains():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(500, 3))
    y = (np.sin(3 * X[:, 0]) + X[:, 1] > 0).astype(int)
    deep = SCAFFTreeClassifier(theta=0.0, max_depth=None).fit(X, y)
    shallow = SCAFFTreeClassifier(theta=0.0, max_depth=3).fit(X, y)
    assert len(deep.node_feature_) > len(shallow.node_feature_)
    leaves = deep.node_value_[deep.node_feature_ < 0]
    assert np.all((leaves == 0) | (leaves == 1))  # only pure leaves are left unsplit here
    np.testing.assert_array_equal(deep.predict(X), y)
