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


def _shares(codes, rows):
    return np.bincount(codes[rows], minlength=codes.max() + 1) / len(rows)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_disparities_against_scipy_and_numpy(seed):
    rng = np.random.default_rng(seed)
    n = 1000
    s = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "edu": rng.choice(["a", "b", "c", "d", "e"], n)})
    top = rng.choice(n, 50, replace=False)
    everyone = np.arange(n)
    expected_wass = expected_ordinal = expected_ed = 0.0
    for column in s.columns:
        codes = s[column].astype("category").cat.codes.to_numpy()
        p, q = _shares(codes, top), _shares(codes, everyone)
        expected_wass += wasserstein_distance(p, q)  # the share vectors as samples (the metric's source)
        expected_ordinal += wasserstein_distance(codes[top], codes)  # values 0..m-1 weighted by share
        expected_ed += np.linalg.norm(p - q)
    assert wasserstein_disparity(s, top) == pytest.approx(expected_wass, abs=1e-12)
    assert wasserstein_disparity(s, top, mode="shares") == wasserstein_disparity(s, top)
    assert wasserstein_disparity(s, top, mode="ordinal") == pytest.approx(expected_ordinal, abs=1e-12)
    assert euclidean_disparity(s, top) == pytest.approx(expected_ed, abs=1e-12)
    assert expected_wass != pytest.approx(expected_ordinal)  # the two modes really differ here


def test_share_wasserstein_is_blind_to_which_value_holds_a_share():
    groups = {"g": ["a"] * 60 + ["b"] * 40}
    even = list(range(40, 80))  # 20 a, 20 b: shares 0.5, 0.5
    assert wasserstein_disparity(groups, even) == pytest.approx(wasserstein_distance([0.5, 0.5], [0.6, 0.4]))
    mirrored = list(range(24)) + list(range(60, 96))  # shares 0.4, 0.6: the data's, swapped
    assert wasserstein_disparity(groups, mirrored) == pytest.approx(0.0, abs=1e-15)
    assert wasserstein_disparity(groups, mirrored, mode="ordinal") == pytest.approx(0.2)


def test_unknown_wasserstein_mode():
    with pytest.raises(ValueError, match="mode must be one of \\['shares', 'ordinal'\\], got 'sorted'"):
        wasserstein_disparity({"g": [0, 1]}, [0], mode="sorted")


def test_proportional_outliers_have_no_disparity():
    s = {"sex": ["F", "M"] * 50}
    top = np.arange(10)
    assert euclidean_disparity(s, top) == pytest.approx(0.0)
    assert wasserstein_disparity(s, top) == pytest.approx(0.0)
