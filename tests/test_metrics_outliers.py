import numpy as np
import pandas as pd
import pytest
from scipy.stats import wasserstein_distance

from fairops.metrics import (
    euclidean_disparity,
    jaccard,
    outlier_fraction,
    preservation,
    wasserstein_disparity,
)


def test_jaccard_by_hand():
    assert jaccard([0, 1, 2, 3], [2, 3, 4, 5]) == pytest.approx(2 / 6)
    assert jaccard([], []) == 1.0
    with pytest.raises(ValueError, match="repeated"):
        jaccard([1, 1], [1])


def test_preservation_and_outlier_fraction_by_hand():
    scores = np.array([2.0, 1.5, 1.2, 0.9, 0.8])
    assert preservation(scores, fair_top=[0, 3], plain_top=[0, 1]) == pytest.approx(2.9 / 3.5)
    assert outlier_fraction(scores, [0, 1, 3]) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="outside"):
        outlier_fraction(scores, [7])


def test_disparities_against_scipy_and_numpy():
    rng = np.random.default_rng(0)
    n = 1000
    s = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "edu": rng.choice(["a", "b", "c", "d", "e"], n)})
    top = rng.choice(n, 50, replace=False)
    expected_wass = expected_ed = 0.0
    for column in s.columns:
        codes = s[column].astype("category").cat.codes.to_numpy()
        expected_wass += wasserstein_distance(codes[top], codes)
        p = np.bincount(codes[top], minlength=codes.max() + 1) / len(top)
        q = np.bincount(codes, minlength=codes.max() + 1) / n
        expected_ed += np.linalg.norm(p - q)
    assert wasserstein_disparity(s, top) == pytest.approx(expected_wass, abs=1e-12)
    assert euclidean_disparity(s, top) == pytest.approx(expected_ed, abs=1e-12)


def test_proportional_outliers_have_no_disparity():
    s = {"sex": ["F", "M"] * 50}
    top = np.arange(10)
    assert euclidean_disparity(s, top) == pytest.approx(0.0)
    assert wasserstein_disparity(s, top) == pytest.approx(0.0)
