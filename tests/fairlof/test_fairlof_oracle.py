"""FairLOF against oracles: scikit-learn's LOF at lambda = 0, and for lambda > 0 a plain NumPy
transcription of the paper's equations 1-14 written here, with its own brute-force neighbour search."""

import warnings

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.neighbors import LocalOutlierFactor

from fairops.fairlof import DEFAULT_FLOOR, FairLOF, group_statistics, paper_coefficients


def _data(n=400, d=3, seed=0):
    """Two multi-valued sensitive attributes; a displaced cluster puts 'f' and 'e' among the outliers."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[: n // 10] += 3.0
    sex = rng.choice(["f", "m", "x"], n, p=[0.3, 0.6, 0.1])
    sex[: n // 10] = "f"
    race = rng.choice(["a", "b", "c", "d", "e"], n, p=[0.5, 0.2, 0.15, 0.1, 0.05])
    race[n // 10: n // 5] = "e"
    return X, {"sex": sex, "race": race}


def _neighbours(X, k):
    full = cdist(X, X)
    np.fill_diagonal(full, np.inf)
    nb = np.argsort(full, axis=1, kind="stable")[:, :k]
    return nb, np.take_along_axis(full, nb, axis=1)


def _lof(nb, kd, dist):
    """Eqs 1-4 with given (possibly corrected) k-distances and pair distances."""
    rd = np.maximum(kd[nb], dist)
    lrd = 1.0 / (rd.mean(axis=1) + 1e-10)
    return (lrd[nb] / lrd[:, None]).mean(axis=1), lrd


def _plain(X, k, t):
    """Neighbours, distances, k-distances, plain LOF and its top-t list (t = min(500, 5% of n) by default)."""
    t = t or max(1, min(500, int(0.05 * len(X))))
    nb, dist = _neighbours(X, k)
    kd = dist[:, -1]
    plain, _ = _lof(nb, kd, dist)
    return nb, dist, kd, plain, np.argsort(-plain, kind="stable")[:t]


def paper_fairlof(X, S, k, lam, *, weight_exponent=1.0, share_exponent=1.0, c=None, t=None, floor=None):
    """FairLOF / FairLOF-Flex, eqs 6-14, term by term; ``floor=None`` is the paper (no clamping).

    Returns plain LOF, FairLOF and the kd and pair factors before any clamping.
    """
    n = len(X)
    nb, dist, kd, plain, r_lof = _plain(X, k, t)
    names = list(S)
    c = np.full(len(names), 1.0 / len(names)) if c is None else np.broadcast_to(np.asarray(c, float), (len(names),))
    kd_sum = np.zeros(n)
    pair_sum = np.zeros((n, k))
    for c_s, name in zip(c, names):
        v = np.asarray(S[name])
        values = np.unique(v)
        P = {value: np.mean(v == value) for value in values}  # eq. 5: share in the data
        Q = {value: np.mean(v[r_lof] == value) for value in values}  # share among LOF's top-t
        v_star = max(values, key=lambda value: P[value])  # majority value (first on a tie)
        W = c_s + abs(P[v_star] - Q[v_star])  # eq. 11
        direction = 1.0 if P[v_star] > Q[v_star] else -1.0
        D = np.array([P[value] for value in v])  # eq. 7: share of the object's own value
        differs = v[nb] != v[:, None]
        Div = differs.mean(axis=1)  # eq. 6: neighbourhood diversity
        a = direction * W**weight_exponent * D**share_exponent  # eq. 13 (1, 1: eq. 8)
        kd_sum += a * Div
        pair_sum += a[:, None] * differs
    kd_factor = 1.0 - lam * kd_sum  # eq. 10
    pair_factor = 1.0 - lam * pair_sum  # eq. 12
    if floor is None:
        fair, _ = _lof(nb, kd * kd_factor, dist * pair_factor)
    else:
        fair, _ = _lof(nb, kd * np.maximum(floor, kd_factor), dist * np.maximum(floor, pair_factor))
    return plain, fair, kd_factor, pair_factor


@pytest.mark.parametrize("k", [5, 20])
def test_lambda_zero_is_sklearn_lof(k):
    X, S = _data()
    det = FairLOF(n_neighbors=k, correction_strength=0.0).fit(X, sensitive_features=S)
    expected = -LocalOutlierFactor(n_neighbors=k).fit(X).negative_outlier_factor_
    np.testing.assert_allclose(det.outlier_scores_, expected, rtol=1e-13, atol=0)
    np.testing.assert_allclose(det.lof_scores_, expected, rtol=1e-13, atol=0)
    np.testing.assert_array_equal(det.negative_outlier_factor_, -det.outlier_scores_)


@pytest.mark.filterwarnings("ignore:Duplicate values")
@pytest.mark.parametrize("algorithm", ["auto", "brute", "kd_tree", "ball_tree"])
def test_lambda_zero_matches_sklearn_on_duplicated_points(algorithm):
    rng = np.random.default_rng(3)
    base = rng.normal(size=(60, 2)).round(1)  # rounding makes distance ties as well
    X = np.r_[base, base[:30], base[:30], np.repeat(base[:1], 8, axis=0)]  # 8 copies: k-distance 0
    S = rng.integers(0, 3, len(X))
    for k in (3, 5, 12):
        det = FairLOF(n_neighbors=k, correction_strength=0.0, algorithm=algorithm).fit(X, sensitive_features=S)
        lof = LocalOutlierFactor(n_neighbors=k, algorithm=algorithm).fit(X)
        np.testing.assert_allclose(det.outlier_scores_, -lof.negative_outlier_factor_, rtol=1e-12, atol=0)


@pytest.mark.filterwarnings("ignore:Duplicate values")
def test_exact_duplicates_give_huge_scores_as_in_sklearn():
    rng = np.random.default_rng(4)
    X = np.r_[rng.normal(size=(80, 2)), np.repeat([[5.0, 5.0]], 6, axis=0), [[5.1, 5.0]]]
    S = {"g": rng.choice(["a", "b"], len(X))}
    det = FairLOF(n_neighbors=5, correction_strength=0.5).fit(X, sensitive_features=S)
    lof = -LocalOutlierFactor(n_neighbors=5).fit(X).negative_outlier_factor_
    assert lof[-1] > 1e8 and det.lof_scores_[-1] == pytest.approx(lof[-1], rel=1e-12)
    assert det.k_distances_[80:86].tolist() == [0.0] * 6  # the copies: k-distance 0, lrd 1e10
    _, fair, _, _ = paper_fairlof(X, S, 5, 0.5)
    np.testing.assert_allclose(det.outlier_scores_, fair, rtol=1e-9)


GRID = [
    (0.1, 1.0, 1.0), (0.3, 1.0, 1.0), (0.6, 1.0, 1.0), (1.0, 1.0, 1.0),  # FairLOF
    (0.5, 2.0, 0.5), (0.8, 0.5, 2.0), (0.4, 3.0, 1.0), (1.0, 1.0, 0.25),  # FairLOF-Flex
]


@pytest.mark.parametrize("lam,weight_exponent,share_exponent", GRID)
def test_scores_equal_the_papers_equations(lam, weight_exponent, share_exponent):
    X, S = _data()
    det = FairLOF(n_neighbors=7, correction_strength=lam, weight_exponent=weight_exponent,
                  share_exponent=share_exponent).fit(X, sensitive_features=S)
    plain, fair, kd_factor, pair_factor = paper_fairlof(X, S, 7, lam, weight_exponent=weight_exponent,
                                                        share_exponent=share_exponent)
    assert kd_factor.min() > DEFAULT_FLOOR and pair_factor.min() > DEFAULT_FLOOR  # the floor is not involved
    assert det.clamped_rows_ == det.clamped_pairs_ == 0
    np.testing.assert_allclose(det.lof_scores_, plain, rtol=1e-12)
    np.testing.assert_allclose(det.outlier_scores_, fair, rtol=1e-9)
    assert np.max(np.abs(fair / plain - 1)) > 0.01  # the correction did something


def test_both_directions_and_the_majority_are_as_printed():
    X, S = _data()
    det = FairLOF(n_neighbors=7).fit(X, sensitive_features=S)
    sex, race = (det.sensitive_labels_[j] for j in range(2))
    assert sex[det.majority_[0]] == "m" and race[det.majority_[1]] == "a"
    # P(v*) vs Q(v*) decides one sign per attribute; here one attribute of each sign
    gaps = det.data_share_[[0, 1], det.majority_] - det.outlier_share_[[0, 1], det.majority_]
    np.testing.assert_array_equal(det.direction_, np.where(gaps > 0, 1.0, -1.0))
    assert sorted(det.direction_.tolist()) == [-1.0, 1.0]
    np.testing.assert_allclose(det.skew_, 0.5 + np.abs(gaps))  # c = 1/|S| is added
    expected = det.direction_[:, None] * det.skew_[:, None] * det.data_share_
    np.testing.assert_allclose(det.coefficients_, expected)


def test_direction_on_a_tie_is_minus_one():
    codes = np.array([[0], [0], [1], [1], [0], [1]])
    stats = group_statistics(codes, [2], top=np.array([0, 2]))  # P(v*) = Q(v*) = 0.5
    coefficients = paper_coefficients(stats, [0.5], 1.0, 1.0)
    assert coefficients.direction.tolist() == [-1.0] and coefficients.skew.tolist() == [0.5]


@pytest.mark.parametrize("c", [[0.8, 0.2], 0.05, {"race": 0.2, "sex": 0.8}])
def test_custom_c_and_top_t(c):
    X, S = _data(seed=5)
    det = FairLOF(n_neighbors=5, correction_strength=0.6, c=c, top_t=40).fit(X, sensitive_features=S)
    as_list = [c["sex"], c["race"]] if isinstance(c, dict) else c
    _, fair, _, _ = paper_fairlof(X, S, 5, 0.6, t=40, c=as_list)
    np.testing.assert_allclose(det.outlier_scores_, fair, rtol=1e-9)
    assert len(det.outliers_) == 40
    assert np.all(np.diff(det.outlier_scores_[det.outliers_]) <= 0)


def test_floor_clamps_and_counts_what_the_paper_would_send_to_zero():
    X, S = _data(seed=2)
    lam, c = 1.0, [3.0, 3.0]  # W up to 3.x: some factors far below zero
    _, _, kd_factor, pair_factor = paper_fairlof(X, S, 5, lam, c=c)
    assert np.any(kd_factor <= 0) and np.any(pair_factor <= 0) and np.any(pair_factor > 1)
    with pytest.warns(UserWarning, match="clamped at the floor"):
        det = FairLOF(n_neighbors=5, correction_strength=lam, c=c).fit(X, sensitive_features=S)
    assert det.clamped_rows_ == int(np.sum(kd_factor < DEFAULT_FLOOR))
    assert det.clamped_pairs_ == int(np.sum(pair_factor < DEFAULT_FLOOR))
    _, fair, _, _ = paper_fairlof(X, S, 5, lam, c=c, floor=DEFAULT_FLOOR)
    assert np.all(np.isfinite(det.outlier_scores_)) and np.all(det.outlier_scores_ > 0)
    np.testing.assert_allclose(det.outlier_scores_, fair, rtol=1e-9)
    with pytest.warns(UserWarning, match="clamped"):
        higher = FairLOF(n_neighbors=5, correction_strength=lam, c=c, floor=0.5).fit(X, sensitive_features=S)
    _, fair_half, _, _ = paper_fairlof(X, S, 5, lam, c=c, floor=0.5)
    np.testing.assert_allclose(higher.outlier_scores_, fair_half, rtol=1e-9)
    assert not np.allclose(higher.outlier_scores_, det.outlier_scores_)
    table = det.path([0.0, 0.5, 1.0])
    assert table["clamped_rows"].tolist()[0] == 0 and table["clamped_rows"].tolist()[2] == det.clamped_rows_
    assert table["clamped_pairs"].tolist()[2] == det.clamped_pairs_


def test_novelty_lambda_zero_is_sklearn_novelty_lof():
    X, S = _data()
    rng = np.random.default_rng(9)
    new = rng.normal(size=(50, 3)) * 1.5
    new_s = {"sex": rng.choice(["f", "m"], 50), "race": rng.choice(["a", "b", "c", "d", "e"], 50)}
    det = FairLOF(n_neighbors=5, correction_strength=0.0, novelty=True).fit(X, sensitive_features=S)
    lof = LocalOutlierFactor(n_neighbors=5, novelty=True).fit(X)
    np.testing.assert_allclose(det.score_samples(new, sensitive_features=new_s), lof.score_samples(new), rtol=1e-12)


def test_novelty_scores_a_new_row_with_its_own_groups():
    X, S = _data()
    lam, k = 0.8, 5
    det = FairLOF(n_neighbors=k, correction_strength=lam, novelty=True).fit(X, sensitive_features=S)
    new = X[:20] + 0.01
    as_f = det.score_samples(new, sensitive_features={"sex": ["f"] * 20, "race": ["a"] * 20})
    as_m = det.score_samples(new, sensitive_features={"sex": ["m"] * 20, "race": ["a"] * 20})
    assert not np.allclose(as_f, as_m)
    # Oracle for one new row: the fitted rows' kd_F and lrd_F from the transcription above, the
    # new row's own a_S from its values, its neighbours among the fitted rows.
    nb, dist = _neighbours(X, k)
    _, _, kd_factor, pair_factor = paper_fairlof(X, S, k, lam)
    _, fitted_lrd = _lof(nb, dist[:, -1] * kd_factor, dist * pair_factor)
    row, groups = new[0], {"sex": "m", "race": "a"}
    d_row = np.linalg.norm(X - row, axis=1)
    nb_row = np.argsort(d_row, kind="stable")[:k]
    term = np.zeros(k)
    for s, name in enumerate(("sex", "race")):
        code = det.sensitive_labels_[s].index(groups[name])
        a = det.direction_[s] * det.skew_[s] * det.data_share_[s, code]
        term += a * (np.asarray(S[name])[nb_row] != groups[name])
    rd = np.maximum((dist[:, -1] * kd_factor)[nb_row], d_row[nb_row] * (1 - lam * term))
    lrd_row = 1.0 / (rd.mean() + 1e-10)
    assert as_m[0] == pytest.approx(-np.mean(fitted_lrd[nb_row] / lrd_row), rel=1e-9)
    labels = det.predict(new, sensitive_features={"sex": ["m"] * 20, "race": ["a"] * 20})
    decision = det.decision_function(new, sensitive_features={"sex": ["m"] * 20, "race": ["a"] * 20})
    np.testing.assert_array_equal(labels, np.where(decision < 0, -1, 1))


@pytest.mark.parametrize("metric", ["manhattan", "chebyshev"])
def test_lambda_zero_other_metrics(metric):
    X, S = _data(n=300)
    det = FairLOF(n_neighbors=6, correction_strength=0.0, metric=metric).fit(X, sensitive_features=S)
    lof = LocalOutlierFactor(n_neighbors=6, metric=metric).fit(X)
    np.testing.assert_allclose(det.outlier_scores_, -lof.negative_outlier_factor_, rtol=1e-12)


def test_without_sensitive_features_it_is_plain_lof_and_says_so():
    X, _ = _data(n=200)
    with pytest.warns(UserWarning, match="without sensitive_features"):
        det = FairLOF(n_neighbors=5, correction_strength="auto").fit(X)
    np.testing.assert_allclose(det.outlier_scores_, -LocalOutlierFactor(n_neighbors=5).fit(X).negative_outlier_factor_,
                               rtol=1e-13)
    assert det.fitted_lambda_ == 0.0


def per_value_fairlof(X, S, k, lam, *, weight_exponent=1.0, share_exponent=1.0, t=None, floor=DEFAULT_FLOOR):
    """fairops' per-value variant, term by term: the whole reach-distance scaled per pair."""
    nb, dist, kd, _, top = _plain(X, k, t)
    g = np.zeros((len(X), k))
    for name in S:
        values = np.asarray(S[name])
        for value in np.unique(values):
            share, outlier_share = np.mean(values == value), np.mean(values[top] == value)
            coef = (np.sign(outlier_share - share) * (1 + abs(outlier_share - share)) ** weight_exponent
                    * (1 - share) ** share_exponent / len(S))
            rows = values == value
            g[rows] += coef * (values[nb[rows]] != value)
    reach = np.maximum(kd[nb], dist) * np.maximum(floor, 1.0 - lam * g)
    lrd = 1.0 / (reach.mean(axis=1) + 1e-10)
    return (lrd[nb] / lrd[:, None]).mean(axis=1)


@pytest.mark.parametrize("lam,weight_exponent,share_exponent", [(0.4, 1.0, 1.0), (0.9, 2.0, 0.5)])
def test_per_value_variant_matches_its_equations(lam, weight_exponent, share_exponent):
    X, S = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no clamping warning expected here
        det = FairLOF(n_neighbors=6, correction="per_value", correction_strength=lam, weight_exponent=weight_exponent,
                      share_exponent=share_exponent).fit(X, sensitive_features=S)
    expected = per_value_fairlof(X, S, 6, lam, weight_exponent=weight_exponent, share_exponent=share_exponent)
    np.testing.assert_allclose(det.outlier_scores_, expected, rtol=1e-9)
    paper = FairLOF(n_neighbors=6, correction_strength=lam, weight_exponent=weight_exponent,
                    share_exponent=share_exponent).fit(X, sensitive_features=S)
    assert not np.allclose(paper.outlier_scores_, det.outlier_scores_)
