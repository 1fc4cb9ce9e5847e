import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.metrics import roc_auc_score

from fairops.metrics import auc_s, auc_y, group_aucs


def _brute_force_auc(labels, scores):
    positives = scores[labels == 1]
    negatives = scores[labels == 0]
    wins = sum((p > q) + 0.5 * (p == q) for p, q in itertools.product(positives, negatives))
    return wins / (len(positives) * len(negatives))


def test_auc_y_matches_sklearn_and_brute_force_with_ties():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    scores = np.round(rng.random(300) + 0.2 * y, 1)
    assert auc_y(y, scores) == pytest.approx(roc_auc_score(y, scores), abs=1e-12)
    small_y, small_s = y[:40], scores[:40]
    assert auc_y(small_y, small_s) == pytest.approx(_brute_force_auc(small_y, small_s), abs=1e-12)


def test_auc_s_is_max_of_folded_one_vs_rest_aucs():
    rng = np.random.default_rng(1)
    n = 5000
    s = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "race": rng.choice(list("abcde"), n)})
    scores = rng.random(n) + 0.3 * (s["sex"] == "M") - 0.2 * (s["race"] == "c")
    expected = {}
    for column in s.columns:
        for value in s[column].unique():
            auc = roc_auc_score(s[column] == value, scores)
            expected[(column, value)] = max(auc, 1 - auc)
    got = group_aucs(scores, s)
    assert got.keys() == expected.keys()
    for key in expected:
        assert got[key] == pytest.approx(expected[key], abs=1e-12)
    assert auc_s(scores, s) == pytest.approx(max(expected.values()), abs=1e-12)
    assert auc_s(scores, s, aggregate="mean") == pytest.approx(np.mean(list(expected.values())), abs=1e-12)


def test_auc_s_of_a_group_independent_score_is_near_half():
    rng = np.random.default_rng(2)
    n = 200_000
    assert auc_s(rng.random(n), rng.choice(["a", "b"], n)) == pytest.approx(0.5, abs=0.01)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1, allow_nan=False), st.booleans()), min_size=2, max_size=60).filter(
        lambda rows: len({group for _, group in rows}) == 2
    )
)
def test_auc_s_properties(rows):
    scores = np.array([score for score, _ in rows])
    groups = np.array(["x" if group else "y" for _, group in rows])
    value = auc_s(scores, groups)
    assert 0.5 <= value <= 1.0
    swapped = np.where(groups == "x", "y", "x")
    assert auc_s(scores, swapped) == pytest.approx(value, abs=1e-12)
    assert auc_s(-scores, groups) == pytest.approx(value, abs=1e-12)


def test_bad_inputs():
    with pytest.raises(ValueError, match="single class"):
        auc_y([1, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="1 distinct value"):
        auc_s([0.1, 0.2], ["a", "a"])
    with pytest.raises(ValueError, match="y_score contains NaN"):
        auc_s([0.1, np.nan], ["a", "b"])
    with pytest.raises(ValueError, match="aggregate must be"):
        auc_s([0.1, 0.2], ["a", "b"], aggregate="median")
    with pytest.raises(ValueError, match="expected 2"):
        auc_s([0.1, 0.2], ["a", "b", "a"])
