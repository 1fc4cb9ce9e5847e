"""FairLOF against oracles: scikit-learn's LOF at lambda = 0 and a plain NumPy
transcription of the documented equations for lambda > 0."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.neighbors import LocalOutlierFactor

from fairops.fairlof import DEFAULT_FLOOR, FairLOF


def _data(n=400, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[: n // 10] += 3.0  # a displaced cluster, so groups end up unevenly among the outliers
    sex = np.where(rng.random(n) < 0.35, "f", "m")
    sex[: n // 10] = "f"
    race = rng.choice(["a", "b", "c", "d", "e"], n, p=[0.5, 0.2, 0.15, 0.1, 0.05])
    return X, {"sex": sex, "race": race}


def _oracle(X, S, k, lam, alpha=1.0, beta=1.0, t=None, floor=DEFAULT_FLOOR, c=None):
    """FairLOF written straight from the equations, with an independent neighbour search."""
    n = len(X)
    t = t or max(1, min(500, int(0.05 * n)))
    full = cdist(X, X)
    np.fill_diagonal(full, np.inf)
    nb = np.argsort(full, axis=1, kind="stable")[:, :k]
    dist = np.take_along_axis(full, nb, axis=1)
    kdist = dist[:, -1]
    reach = np.maximum(dist, kdist[nb])

    def lof_from(factor):
        lrd = 1.0 / ((reach * factor).mean(axis=1) + 1e-10)
        return (lrd[nb] / lrd[:, None]).mean(axis=1)

    plain = lof_from(np.ones_like(reach))
    top = np.argsort(-plain, kind="stable")[:t]
    names = list(S)
    c = np.full(len(names), 1.0 / len(names)) if c is None else np.asarray(c, float)
    g = np.zeros_like(reach)
    for weight, name in zip(c, names):
        values = np.asarray(S[name])
        for value in np.unique(values):
            share = np.mean(values == value)
            outlier_share = np.mean(values[top] == value)
            coef = np.sign(outlier_share - share) * (1 + abs(outlier_share - share)) ** alpha * (1 - share) ** beta
            rows = values == value
            g[rows] += weight * coef * (values[nb[rows]] != value)
    raw = 1.0 - lam * g
    return plain, lof_from(np.maximum(floor, raw)), raw


@pytest.mark.parametrize("k", [5, 20])
def test_lambda_zero_is_sklearn_lof(k):
    X, S = _data()
    det = FairLOF(n_neighbors=k, lambda_=0.0).fit(X, sensitive_features=S)
    expected = -LocalOutlierFactor(n_neighbors=k).fit(X).negative_outlier_factor_
    np.testing.assert_allclose(det.outlier_scores_, expected, rtol=1e-13, atol=0)
    np.testing.assert_allclose(det.lof_scores_, expected, rtol=1e-13, atol=0)


@pytest.mark.filterwarnings("ignore:Duplicate values")
@pytest.mark.parametrize("algorithm", ["auto", "brute", "kd_tree", "ball_tree"])
def test_lambda_zero_matches_sklearn_on_duplicated_points(algorithm):
    rng = np.random.default_rng(3)
    base = rng.normal(size=(60, 2)).round(1)  # rounding makes distance ties as well
    X = np.r_[base, base[:30], base[:30], np.repeat(base[:1], 8, axis=0)]
    S = rng.integers(0, 3, len(X))
    for k in (3, 5, 12):
        det = FairLOF(n_neighbors=k, lambda_=0.0, algorithm=algorithm).fit(X, sensitive_features=S)
        lof = LocalOutlierFactor(n_neighbors=k, algorithm=algorithm).fit(X)
        np.testing.assert_allclose(det.outlier_scores_, -lof.negative_outlier_factor_, rtol=1e-12, atol=0)


@pytest.mark.parametrize("lam,alpha,beta", [(0.3, 1.0, 1.0), (0.7, 1.0, 1.0), (0.5, 2.0, 0.5), (1.0, 0.5, 2.0)])
def test_fair_scores_match_the_equations(lam, alpha, beta):
    X, S = _data()
    det = FairLOF(n_neighbors=7, lambda_=lam, alpha=alpha, beta=beta).fit(X, sensitive_features=S)
    plain, fair, _ = _oracle(X, S, 7, lam, alpha, beta)
    np.testing.assert_allclose(det.lof_scores_, plain, rtol=1e-12)
    np.testing.assert_allclose(det.outlier_scores_, fair, rtol=1e-12)
    assert not np.allclose(fair, plain)  # the correction did something


def test_custom_weights_and_top_t():
    X, S = _data(seed=5)
    det = FairLOF(n_neighbors=5, lambda_=0.6, c=[0.8, 0.2], top_t=40).fit(X, sensitive_features=S)
    _, fair, _ = _oracle(X, S, 5, 0.6, t=40, c=[0.8, 0.2])
    np.testing.assert_allclose(det.outlier_scores_, fair, rtol=1e-12)
    assert len(det.outliers_) == 40
    assert np.all(np.diff(det.outlier_scores_[det.outliers_]) <= 0)
    by_name = FairLOF(n_neighbors=5, lambda_=0.6, c={"race": 0.2, "sex": 0.8}, top_t=40).fit(X, sensitive_features=S)
    np.testing.assert_array_equal(by_name.outlier_scores_, det.outlier_scores_)


def test_floor_caps_the_correction():
    X, S = _data(seed=2)
    lam, alpha = 1.0, 8.0  # W^8 pushes some factors far below zero
    det = FairLOF(n_neighbors=5, lambda_=lam, alpha=alpha, c=[1.0, 1.0]).fit(X, sensitive_features=S)
    _, fair, raw = _oracle(X, S, 5, lam, alpha=alpha, c=[1.0, 1.0])
    assert np.any(raw <= 0) and np.any(raw > 1)  # some pairs hit the floor, others are stretched
    assert np.all(np.isfinite(det.outlier_scores_)) and np.all(det.outlier_scores_ > 0)
    np.testing.assert_allclose(det.outlier_scores_, fair, rtol=1e-12)
    # a higher floor gives other scores: the floor is really applied
    higher = FairLOF(n_neighbors=5, lambda_=lam, alpha=alpha, c=[1.0, 1.0], floor=0.5).fit(X, sensitive_features=S)
    _, fair_half, _ = _oracle(X, S, 5, lam, alpha=alpha, c=[1.0, 1.0], floor=0.5)
    np.testing.assert_allclose(higher.outlier_scores_, fair_half, rtol=1e-12)
    assert not np.allclose(higher.outlier_scores_, det.outlier_scores_)


def test_novelty_lambda_zero_is_sklearn_novelty_lof():
    X, S = _data()
    rng = np.random.default_rng(9)
    new = rng.normal(size=(50, 3)) * 1.5
    new_s = {"sex": rng.choice(["f", "m"], 50), "race": rng.choice(["a", "b", "c", "d", "e"], 50)}
    det = FairLOF(n_neighbors=5, lambda_=0.0, novelty=True).fit(X, sensitive_features=S)
    lof = LocalOutlierFactor(n_neighbors=5, novelty=True).fit(X)
    np.testing.assert_allclose(det.score_samples(new, sensitive_features=new_s), lof.score_samples(new), rtol=1e-12)


def test_novelty_uses_the_new_rows_groups():
    X, S = _data()
    det = FairLOF(n_neighbors=5, lambda_=0.8, novelty=True).fit(X, sensitive_features=S)
    new = X[:20] + 0.01
    as_f = det.score_samples(new, sensitive_features={"sex": ["f"] * 20, "race": ["a"] * 20})
    as_m = det.score_samples(new, sensitive_features={"sex": ["m"] * 20, "race": ["a"] * 20})
    assert not np.allclose(as_f, as_m)
    # oracle for one new row: corrections from its own groups, lrd of the fitted rows from the fit
    row, groups = new[0], {"sex": "m", "race": "a"}
    dist = np.linalg.norm(X - row, axis=1)
    nb = np.argsort(dist, kind="stable")[:5]
    reach = np.maximum(dist[nb], det.k_distances_[nb])
    g = np.zeros(5)
    for s, name in enumerate(("sex", "race")):
        code = det.sensitive_labels_[s].index(groups[name])
        other = np.asarray(S[name])[nb] != groups[name]
        g += det.coefficients_[s, code] * other
    lrd_row = 1.0 / ((reach * np.maximum(DEFAULT_FLOOR, 1 - 0.8 * g)).mean() + 1e-10)
    _, arrays = det._get_state()
    expected = -np.mean(arrays["lrd"][nb] / lrd_row)
    assert as_m[0] == pytest.approx(expected, rel=1e-12)
    labels = det.predict(new, sensitive_features={"sex": ["m"] * 20, "race": ["a"] * 20})
    decision = det.decision_function(new, sensitive_features={"sex": ["m"] * 20, "race": ["a"] * 20})
    np.testing.assert_array_equal(labels, np.where(decision <= 0, -1, 1))


@pytest.mark.parametrize("metric", ["manhattan", "chebyshev"])
def test_lambda_zero_other_metrics(metric):
    X, S = _data(n=300)
    det = FairLOF(n_neighbors=6, lambda_=0.0, metric=metric).fit(X, sensitive_features=S)
    lof = LocalOutlierFactor(n_neighbors=6, metric=metric).fit(X)
    np.testing.assert_allclose(det.outlier_scores_, -lof.negative_outlier_factor_, rtol=1e-12)
