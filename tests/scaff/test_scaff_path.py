"""scaff_path: the AUC_Y / AUC_S curve along theta."""

import numpy as np
import pytest

from fairops.metrics import auc_s, auc_y
from fairops.scaff import SCAFFClassifier, scaff_path


def _split_data(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 2, n)
    X = rng.normal(size=(n, 4))
    X[:, 1] += 1.2 * s
    y = (X[:, 0] + X[:, 1] + rng.normal(0, 0.8, n) > 0.6).astype(int)
    half = n // 2
    return (X[:half], y[:half], s[:half]), (X[half:], y[half:], s[half:])


def test_path_points_equal_separately_fitted_forests():
    (X, y, s), (Xv, yv, sv) = _split_data()
    path = scaff_path(X, y, s, thetas=[0.0, 0.5, 0.9], X_val=Xv, y_val=yv, sensitive_val=sv, n_estimators=10,
                      random_state=0)
    assert path.thetas.tolist() == [0.0, 0.5, 0.9]
    model = SCAFFClassifier(n_estimators=10, theta=0.5, random_state=0).fit(X, y, sensitive_features=s)
    score = model.predict_proba(Xv)[:, 1]
    assert path.points[1].auc_y == pytest.approx(auc_y(yv, score))
    assert path.points[1].auc_s == pytest.approx(auc_s(score, sv))
    # The trade-off: more theta, less group separation, less label AUC.
    assert path.auc_s[2] < path.auc_s[0] - 0.05
    assert path.auc_y[2] < path.auc_y[0]
    assert path.to_records()[0].keys() == {"theta", "auc_y", "auc_s"}


def test_path_validation_arguments_come_together():
    (X, y, s), (Xv, yv, _) = _split_data(n=200)
    with pytest.raises(ValueError, match="together"):
        scaff_path(X, y, s, thetas=[0.0], X_val=Xv, y_val=yv)
    with pytest.raises(TypeError, match="theta"):
        scaff_path(X, y, s, thetas=[0.0], theta=0.3)
    with pytest.raises(ValueError, match="theta must be a number in"):
        scaff_path(X, y, s, thetas=[2.0], n_estimators=2)


def test_intersectional_path_scores_combined_groups():
    (X, y, s), _ = _split_data(n=600)
    other = np.random.default_rng(4).integers(0, 2, len(s))
    S = np.column_stack([s, other])
    path = scaff_path(X, y, S, thetas=[0.3], n_estimators=5, intersectional=True, random_state=0)
    model = SCAFFClassifier(n_estimators=5, theta=0.3, intersectional=True, random_state=0).fit(
        X, y, sensitive_features=S)
    score = model.predict_proba(X)[:, 1]
    assert path.points[0].auc_s == pytest.approx(auc_s(score, s * 2 + other))


def test_mean_aggregation_scores_per_attribute_then_across():
    (X, y, s), (Xv, yv, sv) = _split_data(n=800)
    other = np.random.default_rng(5).integers(0, 3, len(s))
    other_v = np.random.default_rng(6).integers(0, 3, len(sv))
    S, Sv = np.column_stack([s, other]), np.column_stack([sv, other_v])
    path = scaff_path(X, y, S, thetas=[0.3], X_val=Xv, y_val=yv, sensitive_val=Sv, n_estimators=5,
                      sensitive_aggregation="mean", random_state=0)
    model = SCAFFClassifier(n_estimators=5, theta=0.3, sensitive_aggregation="mean", random_state=0).fit(
        X, y, sensitive_features=S)
    score = model.predict_proba(Xv)[:, 1]
    expected = (auc_s(score, sv, aggregate="mean") + auc_s(score, other_v, aggregate="mean")) / 2
    assert path.points[0].auc_s == pytest.approx(expected)
