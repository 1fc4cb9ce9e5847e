"""SCAFF's split search against brute force with scikit-learn's roc_auc_score."""

import numpy as np
import pytest

from fairops.metrics import auc_y
from fairops.scaff import SCAFFClassifier, SCAFFTreeClassifier
from tests.scaff.scaff_brute_force import brute_force_gains


def _data(seed, n=120, group_values=(2,)):
    rng = np.random.default_rng(seed)
    S = np.column_stack([rng.integers(0, k, n) for k in group_values])
    X = rng.integers(0, 8, size=(n, 4)).astype(float)
    X[:, 1] += 3 * (S[:, 0] > 0)  # a feature that partly reveals the group
    y = ((X[:, 0] + X[:, 1] + rng.normal(0, 2, n)) > 7).astype(int)
    return X, y, S


@pytest.mark.parametrize("theta", [0.0, 0.3, 0.7, 1.0])
@pytest.mark.parametrize("group_values", [(2,), (4,), (2, 3)])
@pytest.mark.parametrize(("aggregate", "seed"), [("max", 0), ("max", 1), ("mean", 2)])
def test_root_split_matches_brute_force(theta, group_values, aggregate, seed):
    X, y, S = _data(seed, group_values=group_values)
    tree = SCAFFTreeClassifier(theta=theta, max_depth=1, sensitive_aggregation=aggregate).fit(
        X, y, sensitive_features=S
    )
    gains = brute_force_gains(X, y, S, theta, aggregate)
    best = max(gains.values())
    if best <= 1e-12:
        assert tree.node_feature_[0] == -1  # no split gains: the root stays a leaf
        return
    chosen = (int(tree.node_feature_[0]), float(tree.node_threshold_[0]))
    assert gains[chosen] == pytest.approx(best, abs=1e-12)
    assert tree.node_gain_[0] == pytest.approx(best, abs=1e-12)
    # The leaves score P(y = 1) of their side.
    left = X[:, chosen[0]] <= chosen[1]
    assert tree.node_value_[tree.node_left_[0]] == pytest.approx(y[left].mean())
    assert tree.node_value_[tree.node_right_[0]] == pytest.approx(y[~left].mean())


@pytest.mark.parametrize("theta", [0.2, 0.4])
def test_intersectional_root_split_matches_brute_force(theta):
    X, y, S = _data(3, group_values=(2, 3))
    combined = (S[:, 0] * 3 + S[:, 1]).reshape(-1, 1)
    tree = SCAFFTreeClassifier(theta=theta, max_depth=1, intersectional=True).fit(X, y, sensitive_features=S)
    gains = brute_force_gains(X, y, combined, theta)
    best = max(gains.values())
    assert best > 0
    assert gains[(int(tree.node_feature_[0]), float(tree.node_threshold_[0]))] == pytest.approx(best, abs=1e-12)


def _rare_group_data(seed, n=400):
    """A rare group living at high values of feature 1: a root split on it leaves one child without it."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 10, size=(n, 3)).astype(float)
    rare = (X[:, 1] == 9) & (rng.random(n) < 0.5)
    other = rng.integers(0, 3, n)
    S = np.column_stack([rare.astype(int), other])
    y = ((0.3 * X[:, 0] + X[:, 1] + rng.normal(0, 1.5, n)) > 6).astype(int)
    return X, y, S


@pytest.mark.parametrize("aggregate", ["max", "mean"])
@pytest.mark.parametrize("theta", [0.1, 0.3, 0.45])
def test_child_splits_match_brute_force_with_absent_groups(aggregate, theta):
    X, y, S = _rare_group_data(0)
    tree = SCAFFTreeClassifier(theta=theta, max_depth=2, sensitive_aggregation=aggregate).fit(
        X, y, sensitive_features=S)
    assert tree.node_feature_[0] >= 0
    leaf = tree.apply(X)
    root_left = X[:, tree.node_feature_[0]] <= tree.node_threshold_[0]
    lacking = 0
    for child, rows in ((tree.node_left_[0], np.flatnonzero(root_left)),
                        (tree.node_right_[0], np.flatnonzero(~root_left))):
        lacking += len(np.unique(S[rows, 0])) < 2
        gains = brute_force_gains(X, y, S, theta, aggregate, rows)
        best = max(gains.values())
        if best <= 1e-12:
            assert tree.node_feature_[child] == -1
            assert np.all(leaf[rows] == child)
            continue
        chosen = (int(tree.node_feature_[child]), float(tree.node_threshold_[child]))
        assert gains[chosen] == pytest.approx(best, abs=1e-12)
        assert tree.node_gain_[child] == pytest.approx(best, abs=1e-12)
    assert lacking >= 1  # the data does put a child without the rare group under test


def _proxy_data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = np.column_stack([s + 0.0, rng.normal(size=n), rng.normal(size=n)])
    y = (X[:, 1] + 1.5 * s + rng.normal(0, 0.5, n) > 0.7).astype(int)
    return X, y, s


def _split_features(model):
    return set(model.node_feature_[model.node_feature_ >= 0].tolist())


def test_proxy_feature_is_used_at_theta_zero():
    X, y, s = _proxy_data()
    tree = SCAFFTreeClassifier(theta=0.0, max_depth=3).fit(X, y, sensitive_features=s)
    assert 0 in _split_features(tree)


@pytest.mark.parametrize("theta", [0.5, 0.8, 1.0])
@pytest.mark.parametrize("seed", [0, 35])
def test_pure_group_proxy_never_gains(theta, seed):
    X, y, s = _proxy_data()
    forest = SCAFFClassifier(n_estimators=20, theta=theta, max_depth=4, max_features=None, random_state=seed).fit(
        X, y, sensitive_features=s
    )
    # A split on the proxy has AUC_S = 1, so SG = (1 - theta)(AUC_Y - 0.5) - theta / 2 <= 0 from theta = 0.5 on.
    # At 0.5 it reaches 0 in a node where the proxy also separates the labels, and a split of gain 0 whose
    # children differ is made (docs/scaff.md); seed 35 grows such a split, seed 0 none.
    proxy = forest.node_feature_ == 0
    assert np.all(forest.node_gain_[proxy] == 0)
    assert proxy.any() == (theta == 0.5 and seed == 35)
    if theta == 1.0:  # theta = 1 ignores the label: no split can have a positive gain
        assert np.all(forest.node_feature_ == -1)


def test_independent_group_gives_an_auc_tree():
    rng = np.random.default_rng(5)
    n = 6000
    X = rng.normal(size=(n, 5))
    s = rng.integers(0, 3, n)  # independent of X and y
    y = (X[:, 0] - X[:, 2] + rng.normal(0, 0.7, n) > 0).astype(int)
    plain = SCAFFTreeClassifier(theta=0.0, max_depth=5).fit(X, y, sensitive_features=s)
    fair = SCAFFTreeClassifier(theta=0.3, max_depth=5).fit(X, y, sensitive_features=s)
    assert plain.node_feature_[0] == fair.node_feature_[0]
    assert plain.node_threshold_[0] == fair.node_threshold_[0]
    X_test = rng.normal(size=(4000, 5))
    y_test = (X_test[:, 0] - X_test[:, 2] + rng.normal(0, 0.7, 4000) > 0).astype(int)
    auc_plain = auc_y(y_test, plain.predict_proba(X_test)[:, 1])
    auc_fair = auc_y(y_test, fair.predict_proba(X_test)[:, 1])
    assert auc_plain > 0.8
    assert abs(auc_plain - auc_fair) < 0.02


def test_theta_zero_ignores_the_sensitive_features():
    X, y, S = _data(7, n=400, group_values=(3,))
    with_s = SCAFFClassifier(n_estimators=5, theta=0.0, random_state=0).fit(X, y, sensitive_features=S)
    without_s = SCAFFClassifier(n_estimators=5, theta=0.0, random_state=0).fit(X, y)
    for name in ("node_feature_", "node_threshold_", "node_value_"):
        np.testing.assert_array_equal(getattr(with_s, name), getattr(without_s, name))


def test_fairness_pressure_lowers_group_separation():
    X, y, s = _proxy_data(seed=2)
    X[:, 0] += np.random.default_rng(0).normal(0, 0.3, len(s))  # a noisy proxy
    from fairops.metrics import auc_s

    aucs = [
        auc_s(SCAFFClassifier(n_estimators=20, theta=t, random_state=0).fit(X, y, sensitive_features=s)
              .predict_proba(X)[:, 1], s)
        for t in (0.0, 0.6)
    ]
    assert aucs[1] < aucs[0] - 0.05


@pytest.mark.parametrize("theta", [0.3, 0.6])
def test_forest_matches_the_authors_fair_trees_on_test_aucs(theta):
    # fair-trees 3.1.9 (the authors' implementation) sorts exact thresholds and draws its own
    # bootstrap samples, so the forests differ tree by tree but must land on the same trade-off.
    # Seeded: at theta 0.3 our AUC_S sits 0.002-0.020 below theirs over random_state 0-7 (60 trees), so an
    # unseeded forest crossed the 0.02 tolerance now and then.
    from fair_trees import FairRandomForestClassifier

    from fairops.metrics import auc_s

    def data(n, seed):
        rng = np.random.default_rng(seed)
        s = rng.integers(0, 3, n)
        X = rng.normal(size=(n, 6))
        X[:, 1] += 0.9 * (s == 0)
        y = (X[:, 0] + X[:, 1] - 0.5 * X[:, 2] + 0.5 * (s == 0) + rng.logistic(size=n) > 0.3).astype(int)
        return X, y, s

    X, y, s = data(4000, 0)
    X_test, y_test, s_test = data(10000, 1)
    ours = SCAFFClassifier(n_estimators=60, theta=theta, random_state=0).fit(X, y, sensitive_features=s)
    theirs = FairRandomForestClassifier(n_estimators=60, theta=theta, max_depth=4, random_state=0)
    theirs.fit(X, y, Z=s.reshape(-1, 1))
    a, b = ours.predict_proba(X_test)[:, 1], theirs.predict_proba(X_test)[:, 1]
    assert auc_y(y_test, a) == pytest.approx(auc_y(y_test, b), abs=0.02)
    assert auc_s(a, s_test) == pytest.approx(auc_s(b, s_test), abs=0.02)


def _data_with_missing(seed, n=160, group_values=(2,)):
    """``_data`` with missing values: at random in feature 0, and in feature 2 more often among positives (so
    where they go matters), and the whole of feature 3 missing in a tenth of the rows."""
    X, y, S = _data(seed, n, group_values)
    rng = np.random.default_rng(seed + 100)
    X[rng.random(n) < 0.15, 0] = np.nan
    X[rng.random(n) < np.where(y == 1, 0.4, 0.05), 2] = np.nan
    X[rng.random(n) < 0.1, 3] = np.nan
    return X, y, S


def _chosen(tree, X, node, rows):
    """The split a node made, keyed as brute_force_gains keys it (with the missing values' side where the
    node holds missing values of its feature)."""
    feature, threshold = int(tree.node_feature_[node]), float(tree.node_threshold_[node])
    if np.isnan(X[rows, feature]).any():
        return feature, threshold, bool(tree.node_missing_left_[node])
    return feature, threshold


def _goes_left(tree, X, node, rows):
    column = X[rows, tree.node_feature_[node]]
    return (column <= tree.node_threshold_[node]) | (np.isnan(column) & bool(tree.node_missing_left_[node]))


@pytest.mark.parametrize("theta", [0.0, 0.3, 0.7])
@pytest.mark.parametrize("group_values", [(2,), (2, 3)])
@pytest.mark.parametrize(("aggregate", "seed"), [("max", 0), ("max", 1), ("mean", 2)])
def test_root_split_with_missing_values_matches_brute_force(theta, group_values, aggregate, seed):
    X, y, S = _data_with_missing(seed, group_values=group_values)
    tree = SCAFFTreeClassifier(theta=theta, max_depth=1, sensitive_aggregation=aggregate).fit(
        X, y, sensitive_features=S)
    gains = brute_force_gains(X, y, S, theta, aggregate)
    assert any(len(key) == 3 for key in gains)  # splits with the missing values on either side are scored
    best = max(gains.values())
    if best <= 1e-12:
        assert tree.node_feature_[0] == -1
        return
    rows = np.arange(len(y))
    assert gains[_chosen(tree, X, 0, rows)] == pytest.approx(best, abs=1e-12)
    assert tree.node_gain_[0] == pytest.approx(best, abs=1e-12)
    left = _goes_left(tree, X, 0, rows)
    assert tree.node_value_[tree.node_left_[0]] == pytest.approx(y[left].mean())
    assert tree.node_value_[tree.node_right_[0]] == pytest.approx(y[~left].mean())
    proba = tree.predict_proba(X)[:, 1]
    np.testing.assert_allclose(proba, np.where(left, y[left].mean(), y[~left].mean()))


@pytest.mark.parametrize("aggregate", ["max", "mean"])
@pytest.mark.parametrize("theta", [0.0, 0.3])
def test_child_splits_with_missing_values_match_brute_force(aggregate, theta):
    X, y, S = _data_with_missing(4, n=300, group_values=(3,))
    tree = SCAFFTreeClassifier(theta=theta, max_depth=2, sensitive_aggregation=aggregate).fit(
        X, y, sensitive_features=S)
    assert tree.node_feature_[0] >= 0
    all_rows = np.arange(len(y))
    root_left = _goes_left(tree, X, 0, all_rows)
    leaf = tree.apply(X)
    for child, rows in ((tree.node_left_[0], all_rows[root_left]), (tree.node_right_[0], all_rows[~root_left])):
        gains = brute_force_gains(X, y, S, theta, aggregate, rows)
        best = max(gains.values())
        if best <= 1e-12:
            assert tree.node_feature_[child] == -1 and np.all(leaf[rows] == child)
            continue
        assert gains[_chosen(tree, X, child, rows)] == pytest.approx(best, abs=1e-12)


@pytest.mark.slow  # over 5 s in the quick tier
def test_missingness_that_tells_the_label_is_split_on_alone():
    rng = np.random.default_rng(0)
    n = 600
    X = rng.normal(size=(n, 2))
    y = rng.integers(0, 2, n)
    X[y == 1, 1] = np.nan  # the value carries nothing, its absence everything
    tree = SCAFFTreeClassifier(theta=0.0, max_depth=1).fit(X, y)
    assert tree.node_feature_[0] == 1 and tree.node_threshold_[0] == np.inf and tree.node_missing_left_[0] == 0
    assert tree.predict(X).tolist() == y.tolist()
    # the same gain as brute force finds for "every value left, the missing ones right"
    gains = brute_force_gains(X, y, np.zeros((n, 0)), 0.0)
    assert gains[(1, np.inf, False)] == pytest.approx(max(gains.values())) == pytest.approx(0.5)


def test_a_node_that_saw_no_missing_value_sends_them_to_its_heavier_child():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(2000, 2))
    y = ((X[:, 0] > 0.3) | (X[:, 1] > 1.2)).astype(int)
    X[(X[:, 0] > 0.3) & (rng.random(2000) < 0.2), 1] = np.nan  # missing only where x0 already decides
    tree = SCAFFTreeClassifier(theta=0.0, max_depth=2).fit(X, y)
    assert tree.node_feature_[0] == 0 and tree.feature_missing_.tolist() == [0, 1]
    node = tree.node_left_[0]  # x0 <= 0.29: no missing x1 there
    assert tree.node_feature_[node] == 1
    left, right = tree.node_left_[node], tree.node_right_[node]
    heavier = left if tree.node_weight_[left] > tree.node_weight_[right] else right
    assert tree.node_missing_left_[node] == (heavier == left)
    assert tree.apply(np.array([[0.0, np.nan]]))[0] == heavier
    with pytest.raises(ValueError, match="X column 0 has a missing value in row 0; it had none in fit"):
        tree.apply(np.array([[np.nan, 0.0]]))


def test_missing_categories_get_their_own_side():
    import pandas as pd

    rng = np.random.default_rng(2)
    n = 400
    colour = pd.Categorical(rng.choice(["blue", "green", "red"], n))
    y = rng.integers(0, 2, n)
    colour[(y == 1) & (rng.random(n) < 0.6)] = np.nan
    X = pd.DataFrame({"colour": colour, "x": rng.normal(size=n)})
    forest = SCAFFClassifier(n_estimators=5, theta=0.0, random_state=0).fit(X, y)
    proba = forest.predict_proba(X)[:, 1]
    assert np.isfinite(proba).all()
    assert proba[X["colour"].isna().to_numpy()].mean() > proba[X["colour"].notna().to_numpy()].mean()
