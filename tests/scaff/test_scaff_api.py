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
    return SCAFFClassifier(n_estimators=8, **{"random_state": 0, **params}).fit(X, y, sensitive_features=S)


# ------------------------------------------------------------------ bad input
def test_infinite_values_in_X_are_refused_and_missing_ones_taken():
    X, y, S = _data()
    X[3, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        SCAFFClassifier(n_estimators=2).fit(X, y, sensitive_features=S)
    model = _fit()
    with pytest.raises(ValueError, match="infinity"):
        model.predict_proba(X)
    X[3, 2] = np.nan  # tests/scaff/test_scaff_oracle.py checks where missing values go
    fitted = SCAFFClassifier(n_estimators=2).fit(X, y, sensitive_features=S)
    assert fitted.feature_missing_.tolist() == [0, 0, 1, 0, 0] and np.isfinite(fitted.predict_proba(X)).all()
    with pytest.raises(ValueError, match="X column 2 has a missing value in row 3; it had none in fit"):
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


@pytest.mark.parametrize("labels, message", [(np.zeros(600), "exactly 2 classes, got 1"),
                                             (np.arange(600) % 3, "Only binary classification")])
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
    meta, state_arrays = model._get_state()
    json.dumps(meta)  # JSON-able
    np.savez(tmp_path / "arrays.npz", **state_arrays)
    with np.load(tmp_path / "arrays.npz", allow_pickle=False) as saved:
        arrays = {key: saved[key] for key in saved.files}
    rebuilt = SCAFFClassifier._from_state(meta, arrays)
    np.testing.assert_array_equal(rebuilt.predict_proba(X), model.predict_proba(X))
    assert rebuilt.feature_importances_ == pytest.approx(model.feature_importances_)


# ------------------------------------------------------- metadata routing
@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def test_pipeline_routes_sensitive_features(routing):
    X, y, S = _data()
    scaff = SCAFFClassifier(n_estimators=8, theta=0.6, random_state=0).set_fit_request(sensitive_features=True)
    pipe = make_pipeline(StandardScaler(), scaff).fit(X, y, sensitive_features=S)
    direct = SCAFFClassifier(n_estimators=8, theta=0.6, random_state=0).fit(StandardScaler().fit_transform(X), y,
                                                                            sensitive_features=S)
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


# ------------------------------------------------------- weights, leaf sizes
NODE_ARRAYS = ("node_feature_", "node_threshold_", "node_value_", "node_left_", "node_right_")


def _assert_same_trees(a, b):
    for name in NODE_ARRAYS:
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=0, atol=1e-12, err_msg=name)


def test_zero_sample_weight_equals_dropping_the_rows():
    X, y, S = _data()
    weight = np.where(np.arange(len(y)) % 3 == 0, 0.0, 1.0)
    kept = weight > 0
    params = dict(theta=0.4, max_depth=5)
    weighted = SCAFFTreeClassifier(**params).fit(X, y, sensitive_features=S, sample_weight=weight)
    dropped = SCAFFTreeClassifier(**params).fit(X[kept], y[kept], sensitive_features=S[kept])
    _assert_same_trees(weighted, dropped)


def test_integer_sample_weight_equals_repeating_the_rows():
    X, y, S = _data(n=300)
    X = np.round(X, 1)  # fewer distinct values than max_bins: repeating rows moves no cut point
    weight = np.random.default_rng(2).integers(1, 4, len(y))
    params = dict(theta=0.3, max_depth=4)
    weighted = SCAFFTreeClassifier(**params).fit(X, y, sensitive_features=S, sample_weight=weight)
    repeated = SCAFFTreeClassifier(**params).fit(
        np.repeat(X, weight, axis=0), np.repeat(y, weight), sensitive_features=S.loc[S.index.repeat(weight)])
    _assert_same_trees(weighted, repeated)
    np.testing.assert_allclose(weighted.node_weight_, repeated.node_weight_)


def test_class_weight_is_a_per_class_sample_weight():
    X, y, S = _data()
    by_class = _fit(class_weight={0: 1.0, 1: 3.0}, theta=0.4)
    by_row = SCAFFClassifier(n_estimators=8, random_state=0, theta=0.4).fit(
        X, y, sensitive_features=S, sample_weight=np.where(y == 1, 3.0, 1.0))
    np.testing.assert_array_equal(by_class.predict_proba(X), by_row.predict_proba(X))
    balanced = _fit(class_weight="balanced", theta=0.4)
    share = y.mean()
    manual = SCAFFClassifier(n_estimators=8, random_state=0, theta=0.4).fit(
        X, y, sensitive_features=S, sample_weight=np.where(y == 1, 0.5 / share, 0.5 / (1 - share)))
    np.testing.assert_allclose(balanced.predict_proba(X), manual.predict_proba(X))
    # Per bootstrap sample, the classes weigh the same: every root holds half of each tree's weight in class 1.
    subsample = _fit(class_weight="balanced_subsample", theta=0.4)
    roots = subsample.node_offsets_[:-1]
    np.testing.assert_allclose(subsample.node_value_[roots], 0.5)
    assert not np.allclose(balanced.node_value_[balanced.node_offsets_[:-1]], 0.5)


def test_class_weight_changes_leaf_values_not_label_splits():
    # AUC_Y compares class-conditional shares, so scaling a class's weight moves no split at theta = 0
    # (AUC_S weighs each row by its class weight, so at theta > 0 the splits may move).
    X, y, S = _data()
    plain = SCAFFTreeClassifier(theta=0.0).fit(X, y, sensitive_features=S)
    weighted = SCAFFTreeClassifier(theta=0.0, class_weight={0: 1.0, 1: 5.0}).fit(X, y, sensitive_features=S)
    np.testing.assert_array_equal(plain.node_feature_, weighted.node_feature_)
    np.testing.assert_array_equal(plain.node_threshold_, weighted.node_threshold_)
    assert np.all(weighted.node_value_ >= plain.node_value_)


@pytest.mark.parametrize("leaf, split", [(20, 2), (0.05, 2), (1, 150), (5, 0.2)])
def test_min_samples_leaf_and_split_bound_the_nodes(leaf, split):
    X, y, S = _data()
    n = len(y)
    min_leaf = leaf if isinstance(leaf, int) else int(np.ceil(leaf * n))
    min_split = max(split if isinstance(split, int) else int(np.ceil(split * n)), 2 * min_leaf)
    tree = SCAFFTreeClassifier(theta=0.2, max_depth=None, min_samples_leaf=leaf, min_samples_split=split).fit(
        X, y, sensitive_features=S)
    counts = tree.node_weight_  # unit weights: the number of rows in each node
    internal = tree.node_feature_ >= 0
    assert np.all(counts[~internal] >= min_leaf)
    assert np.all(counts[internal] >= min_split)
    np.testing.assert_array_equal(np.bincount(tree.apply(X), minlength=len(counts))[~internal], counts[~internal])
    unbounded = SCAFFTreeClassifier(theta=0.2, max_depth=None).fit(X, y, sensitive_features=S)
    assert internal.sum() < (unbounded.node_feature_ >= 0).sum()


@pytest.mark.parametrize(
    "fit_args, message",
    [
        ({"sample_weight": -np.ones(600)}, "sample_weight must be >= 0"),
        ({"sample_weight": np.full(600, np.nan)}, "sample_weight contains NaN"),
        ({"sample_weight": np.ones(599)}, r"sample_weight must have shape \(600,\)"),
        ({"sample_weight": np.zeros(600)}, "sample_weight is zero for every row"),
        ({"sample_weight": np.array(["a"] * 600)}, "sample_weight must hold numbers"),
    ],
)
def test_bad_sample_weight_is_named(fit_args, message):
    X, y, S = _data()
    with pytest.raises((ValueError, TypeError), match=message):
        SCAFFClassifier(n_estimators=2).fit(X, y, sensitive_features=S, **fit_args)


def test_weights_that_drop_a_class_or_a_group_are_refused():
    X, y, S = _data()
    with pytest.raises(ValueError, match="only one class"):
        SCAFFTreeClassifier().fit(X, y, sensitive_features=S, sample_weight=(y == 1).astype(float))
    with pytest.raises(ValueError, match="only one class"):
        SCAFFTreeClassifier(class_weight={0: 0.0, 1: 1.0}).fit(X, y, sensitive_features=S)
    with pytest.raises(ValueError, match="'race' has values that occur only in rows with weight 0"):
        SCAFFTreeClassifier().fit(X, y, sensitive_features=S, sample_weight=(S["race"] != "a").astype(float))


@pytest.mark.parametrize(
    "estimator, name",
    [
        (SCAFFClassifier(min_samples_leaf=0), "min_samples_leaf"),
        (SCAFFClassifier(min_samples_leaf=1.0), "min_samples_leaf"),
        (SCAFFClassifier(min_samples_split=1), "min_samples_split"),
        (SCAFFClassifier(min_samples_split=1.5), "min_samples_split"),
        (SCAFFClassifier(class_weight="auto"), "class_weight"),
        (SCAFFClassifier(class_weight={0: -1.0, 1: 1.0}), "class_weight"),
        (SCAFFClassifier(class_weight={0: 1.0, 7: 1.0}), "class_weight"),
        (SCAFFTreeClassifier(class_weight="balanced_subsample"), "class_weight"),
    ],
)
def test_new_parameters_out_of_range_are_named(estimator, name):
    X, y, S = _data()
    with pytest.raises(ValueError, match=name):
        estimator.set_params(**({"n_estimators": 2} if hasattr(estimator, "n_estimators") else {})).fit(
            X, y, sensitive_features=S)


# ------------------------------------------------------- trees and leaves
def test_random_state_defaults_to_fresh_randomness():
    X, y, S = _data()
    first, second = (SCAFFClassifier(n_estimators=4).fit(X, y, sensitive_features=S) for _ in range(2))
    assert SCAFFClassifier().random_state is None
    assert not np.array_equal(first.node_threshold_, second.node_threshold_)


def test_estimators_are_the_forests_trees():
    X, y, S = _data()
    forest = _fit(theta=0.3)
    trees = forest.estimators_
    assert len(trees) == forest.n_trees_ == 8 and all(isinstance(t, SCAFFTreeClassifier) for t in trees)
    assert trees[0].get_params()["theta"] == 0.3 and trees[0].max_features == "sqrt"
    mean = np.mean([t.predict_proba(X) for t in trees], axis=0)
    np.testing.assert_allclose(mean, forest.predict_proba(X))
    leaves = forest.apply(X)
    assert leaves.shape == (len(y), 8)
    for t, tree in enumerate(trees):
        np.testing.assert_array_equal(tree.apply(X), leaves[:, t])


def test_apply_gives_the_leaf_whose_value_is_predicted():
    X, y, S = _data()
    tree = SCAFFTreeClassifier(theta=0.3, max_depth=6).fit(X, y, sensitive_features=S)
    leaves = tree.apply(X)
    assert leaves.shape == (len(y),) and np.all(tree.node_feature_[leaves] == -1)
    np.testing.assert_array_equal(tree.node_value_[leaves], tree.predict_proba(X)[:, 1])


def test_state_round_trip_keeps_the_new_parameters():
    X, y, S = _data()
    model = _fit(theta=0.3, class_weight={0: 1.0, 1: 2.5}, min_samples_leaf=3, sensitive_aggregation="mean")
    meta, arrays = model._get_state()
    rebuilt = SCAFFClassifier._from_state(json.loads(json.dumps(meta)), arrays)
    assert rebuilt.get_params() == model.get_params()
    np.testing.assert_array_equal(rebuilt.predict_proba(X), model.predict_proba(X))


def test_state_saved_before_the_new_parameters_still_loads():
    X, _, _ = _data()
    model = _fit(theta=0.3)
    meta, arrays = model._get_state()
    params = {k: v for k, v in meta["params"].items()
              if k not in ("min_samples_split", "min_samples_leaf", "class_weight")}
    rebuilt = SCAFFClassifier._from_state({**meta, "params": params}, arrays)
    assert rebuilt.min_samples_leaf == 1 and rebuilt.class_weight is None
    np.testing.assert_array_equal(rebuilt.predict_proba(X), model.predict_proba(X))
