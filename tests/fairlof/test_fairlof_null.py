"""The permuted-label null and the partial quota re-ranking against refits and the plain lists."""

import numpy as np
import pandas as pd
import pytest

from fairops.fairlof import FairLOF, partial_quota_outliers, permuted_label_paths, quota_outliers, top_outliers
from fairops.jobs._outliers.frontier import frontier_lines


def _data(n=300, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    S = pd.DataFrame({"sex": rng.choice(["f", "m"], n, p=[0.3, 0.7]), "band": rng.choice(["a", "b", "c"], n)})
    X[S["sex"] == "f", 0] += 1.5  # the groups sit in different places, so the real correction has work to do
    return X, S


@pytest.mark.parametrize("correction", ["paper", "per_value"])
def test_each_null_path_equals_a_refit_on_the_permuted_labels(correction):
    X, S = _data()
    det = FairLOF(correction=correction, correction_strength=0.0).fit(X, sensitive_features=S)
    lambdas = [0.0, 0.4, 1.0]
    paths = permuted_label_paths(det, n_permutations=3, random_state=7, lambdas=lambdas)
    rng = np.random.default_rng(7)
    for path in paths:
        permuted = S.iloc[rng.permutation(len(S))].reset_index(drop=True)
        refit = FairLOF(correction=correction, correction_strength=0.0).fit(X, sensitive_features=permuted)
        expected = refit.path(lambdas)
        for column in ("jaccard", "preservation", "euclidean_disparity", "wasserstein_disparity"):
            np.testing.assert_allclose(path[column], expected[column], rtol=1e-12, err_msg=column)
    assert not np.allclose(paths[0]["euclidean_disparity"], paths[1]["euclidean_disparity"])


def test_null_refuses_bad_arguments():
    X, S = _data(n=60)
    with pytest.raises(ValueError, match="n_permutations"):
        permuted_label_paths(FairLOF().fit(X, sensitive_features=S), n_permutations=0)
    with pytest.warns(UserWarning):
        plain = FairLOF().fit(X)
    with pytest.raises(ValueError, match="no labels to permute"):
        permuted_label_paths(plain)


def test_partial_quota_runs_from_the_plain_list_to_the_quota_baseline():
    X, S = _data()
    scores = FairLOF(correction_strength=0.0).fit(X, sensitive_features=S).lof_scores_
    t = 40
    plain = top_outliers(scores, t)
    assert sorted(partial_quota_outliers(scores, S["sex"], t, 0.0)) == sorted(plain)
    assert sorted(partial_quota_outliers(scores, S["sex"], t, 1.0)) == sorted(quota_outliers(scores, S["sex"], t))
    women = (S["sex"] == "f").to_numpy()
    counts = [int(women[partial_quota_outliers(scores, S["sex"], t, q)].sum()) for q in np.linspace(0, 1, 6)]
    quota = int(women[quota_outliers(scores, S["sex"], t)].sum())
    assert counts[0] == int(women[plain].sum()) and counts[-1] == quota and counts[0] != quota
    assert counts == sorted(counts, reverse=counts[0] > quota)  # moves monotonically towards the quota
    assert all(len(partial_quota_outliers(scores, S["sex"], t, q)) == t for q in (0.3, 0.7))
    with pytest.raises(ValueError, match="strength"):
        partial_quota_outliers(scores, S["sex"], t, 1.5)
    with pytest.raises(ValueError, match="top_t"):
        partial_quota_outliers(scores, S["sex"], 0, 0.5)


@pytest.mark.parametrize("correction", ["paper", "per_value"])
def test_frontier_lines_name_the_variant_and_place_it_against_the_null(correction):
    X, S = _data()
    det = FairLOF(correction=correction, correction_strength=0.5).fit(X, sensitive_features=S)
    variant, frontier = frontier_lines(det, S)
    assert variant.startswith(f"variant: {correction} = ")
    assert ("not the paper's" in variant) == (correction == "per_value")
    assert "at lambda 0.50" in frontier and "(5 permutations)" in frontier
    assert ("within the null" in frontier) != ("beyond the null" in frontier)
