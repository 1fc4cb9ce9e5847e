"""The lambda path, the "auto" guide point, the quota baseline and the array-only state."""

import json

import numpy as np
import pytest

from fairops.fairlof import DEFAULT_LAMBDAS, FairLOF, group_quotas, guide_lambda, quota_outliers
from fairops.metrics import euclidean_disparity, jaccard, outlier_fraction, preservation, wasserstein_disparity


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    n = 1000
    X = rng.normal(size=(n, 4))
    X[:150] *= 2.5  # a spread-out group: over-represented among plain LOF's outliers
    sex = np.where(np.arange(n) < 250, "f", "m")
    race = rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1])
    return X, {"sex": sex, "race": race}


def test_path_equals_refitting_each_lambda(data):
    X, S = data
    det = FairLOF(n_neighbors=5).fit(X, sensitive_features=S)
    table = det.path()
    np.testing.assert_array_equal(table["lambda"], DEFAULT_LAMBDAS)
    assert table["jaccard"][0] == 1.0 and table["preservation"][0] == 1.0
    for i, lam in enumerate(DEFAULT_LAMBDAS):
        refit = FairLOF(n_neighbors=5, correction_strength=lam).fit(X, sensitive_features=S)
        top, plain = refit.outliers_, refit.plain_outliers_
        assert table["jaccard"][i] == jaccard(top, plain)
        assert table["preservation"][i] == preservation(refit.lof_scores_, top, plain)
        assert table["outlier_fraction"][i] == outlier_fraction(refit.lof_scores_, top)
        assert table["euclidean_disparity"][i] == pytest.approx(euclidean_disparity(S, top), abs=1e-12)
        assert table["wasserstein_disparity"][i] == pytest.approx(wasserstein_disparity(S, top), abs=1e-12)


def test_corrections_act_in_the_printed_direction(data):
    X, S = data
    det = FairLOF(n_neighbors=5, correction_strength=0.5).fit(X, sensitive_features=S)
    sex = det.sensitive_labels_[0]
    # 'f' (a quarter of the rows, the spread-out ones) is over-represented among LOF's outliers, so
    # the majority 'm' is under-represented: P(m) > Q(m) gives Dir = +1, which shrinks distances.
    assert sex[det.majority_[0]] == "m" and det.direction_[0] == 1.0
    assert det.outlier_share_[0, sex.index("f")] > det.data_share_[0, sex.index("f")]
    _, arrays = det._get_state()
    codes, neighbors = arrays["codes"], arrays["neighbors"]
    mixed_m = (codes[:, 0] == sex.index("m")) & (codes[neighbors, 0] != codes[:, [0]]).any(axis=1)
    pure = ~(codes[neighbors] != codes[:, None, :]).any(axis=(1, 2))
    kd_f = arrays["fair_k_distances"]
    assert mixed_m.any() and pure.any()
    np.testing.assert_array_equal(kd_f[pure], det.k_distances_[pure])  # Div = 0: nothing to correct
    race_term = det.coefficients_[1, codes[:, 1]] * (codes[neighbors, 1] != codes[:, [1]]).mean(axis=1)
    sex_term = det.coefficients_[0, codes[:, 0]] * (codes[neighbors, 0] != codes[:, [0]]).mean(axis=1)
    np.testing.assert_allclose(kd_f, det.k_distances_ * (1 - 0.5 * (sex_term + race_term)), rtol=1e-12)
    assert np.all(sex_term[mixed_m] > 0)


def test_per_value_variant_moves_the_overrepresented_group_out(data):
    X, S = data
    det = FairLOF(n_neighbors=5, correction="per_value").fit(X, sensitive_features=S)
    f = det.sensitive_labels_[0].index("f")
    assert det.outlier_share_[0, f] > det.data_share_[0, f] and det.direction_[0, f] == 1
    table = det.path([0.0, 0.3])
    assert table["euclidean_disparity"][1] < table["euclidean_disparity"][0]


def test_guide_lambda_rule():
    lambdas = [0.0, 0.1, 0.2, 0.3, 0.4]
    assert guide_lambda(lambdas, [1.0, 0.95, 0.91, 0.7, 0.6], 0.9) == 0.2  # 0.91 nearer than 0.7
    assert guide_lambda(lambdas, [1.0, 0.95, 0.93, 0.88, 0.6], 0.9) == 0.3  # 0.88 nearer than 0.93
    assert guide_lambda(lambdas, [1.0, 0.82, 0.95, 0.85, 0.6], 0.9) == 0.1  # the first crossing counts
    assert guide_lambda(lambdas, [1.0, 0.7, 0.9, 0.9, 0.9], 0.9) == 0.0  # nearest may be plain LOF
    assert guide_lambda(lambdas, [1.0] * 5, 0.9) == 0.4
    assert guide_lambda([0.2, 0.0, 0.1], [0.5, 1.0, 0.9], 0.9) == 0.1  # any grid order


def test_auto_picks_the_guide_point(data):
    X, S = data
    for target in (0.9, 0.8):
        det = FairLOF(n_neighbors=5, correction_strength="auto", target_jaccard=target).fit(X, sensitive_features=S)
        table = det.path()
        assert det.fitted_lambda_ == guide_lambda(table["lambda"], table["jaccard"], target)
        fixed = FairLOF(n_neighbors=5, correction_strength=det.fitted_lambda_).fit(X, sensitive_features=S)
        np.testing.assert_array_equal(det.outlier_scores_, fixed.outlier_scores_)
    assert 0.0 < det.fitted_lambda_ <= 1.0


def test_quota_baseline_proportions_and_order():
    rng = np.random.default_rng(0)
    scores = rng.random(200)
    groups = np.array(["a"] * 120 + ["b"] * 60 + ["c"] * 20)
    top = quota_outliers(scores, groups, 10)
    assert len(top) == len(set(top.tolist())) == 10
    assert [int(np.sum(groups[top] == g)) for g in "abc"] == [6, 3, 1]
    for g in "abc":  # within a group: exactly its highest scores
        members = np.flatnonzero(groups == g)
        chosen = top[groups[top] == g]
        expected = members[np.argsort(-scores[members], kind="stable")[: len(chosen)]]
        np.testing.assert_array_equal(chosen, expected)
    assert euclidean_disparity({"g": groups}, top) == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_array_equal(group_quotas(np.array([5, 5, 1]), 3), [2, 1, 0])
    np.testing.assert_array_equal(group_quotas(np.array([1, 99]), 50), [0, 50])  # tie: larger group


def test_state_round_trip_through_json_and_npz(data, tmp_path):
    X, S = data
    det = FairLOF(n_neighbors=6, correction_strength=0.4, weight_exponent=2.0, novelty=True)
    det.fit(X, sensitive_features=S)
    meta, arrays = det._get_state()
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    np.savez(tmp_path / "arrays.npz", **arrays)
    with np.load(tmp_path / "arrays.npz", allow_pickle=False) as loaded:
        restored = FairLOF._from_state(json.loads((tmp_path / "meta.json").read_text()), dict(loaded))
    rng = np.random.default_rng(1)
    new = rng.normal(size=(30, 4))
    new_s = {"sex": rng.choice(["f", "m"], 30), "race": rng.choice(["a", "b", "c"], 30)}
    np.testing.assert_array_equal(
        restored.score_samples(new, sensitive_features=new_s), det.score_samples(new, sensitive_features=new_s)
    )
    np.testing.assert_array_equal(restored.outliers_, det.outliers_)
    reordered = {"race": new_s["race"], "sex": new_s["sex"]}
    np.testing.assert_array_equal(
        restored.score_samples(new, sensitive_features=reordered), det.score_samples(new, sensitive_features=new_s)
    )
    assert restored.path([0.4])["jaccard"][0] == det.path([0.4])["jaccard"][0]
    with pytest.raises(ValueError, match="missing \\['distances'\\]"):
        FairLOF._from_state(meta, {k: v for k, v in arrays.items() if k != "distances"})
    with pytest.raises(ValueError, match="state has version 1; this fairops reads version 2"):
        FairLOF._from_state({**meta, "state_version": 1}, arrays)


def test_novelty_predict_agrees_with_fit_threshold(data):
    X, S = data
    det = FairLOF(n_neighbors=5, correction_strength=0.3, novelty=True).fit(X, sensitive_features=S)
    far = np.full((3, 4), 25.0)
    labels = det.predict(far, sensitive_features={"sex": ["f", "m", "m"], "race": ["a", "b", "c"]})
    np.testing.assert_array_equal(labels, [-1, -1, -1])
    plain = FairLOF(n_neighbors=5, correction_strength=0.3).fit_predict(X, sensitive_features=S)
    assert np.sum(plain == -1) == det.top_t_ == 50


def test_top_outliers_matches_a_full_stable_sort():
    from fairops.fairlof import top_outliers

    rng = np.random.default_rng(4)
    scores = rng.integers(0, 6, 300).astype(float)  # many ties, also at the cut
    for t in (1, 7, 50, 299, 300):
        np.testing.assert_array_equal(top_outliers(scores, t), np.argsort(-scores, kind="stable")[:t])
