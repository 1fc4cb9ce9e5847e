import math

import numpy as np
import pytest

from fairops.metrics import OperatingPoint, binarize, operating_point


def _data(seed=0, n=500):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    scores = np.round(rng.random(n) + 0.3 * y, 2)  # rounding creates many ties
    return scores, y


@pytest.mark.parametrize("target", [0.01, 0.1, 0.5, 0.77, 1.0])
def test_tpr_target_is_met_exactly(target):
    scores, y = _data()
    pred = binarize(scores, y, tpr=target, seed=3)
    assert int((pred & y).sum()) == math.ceil(target * y.sum())


@pytest.mark.parametrize("target", [0.0, 0.05, 0.1, 0.5, 1.0])
def test_fpr_target_is_met_exactly(target):
    scores, y = _data()
    pred = binarize(scores, y, fpr=target, seed=3)
    assert int((pred & (1 - y)).sum()) == math.floor(target * (1 - y).sum())


def test_predicted_rows_form_a_top_of_the_ranking():
    scores, y = _data(1)
    pred = binarize(scores, y, tpr=0.5)
    # every predicted row scores at least as high as every row left out
    assert scores[pred == 1].min() >= scores[pred == 0].max()


def test_tpr_cut_is_shortest_and_fpr_cut_is_longest():
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    y = np.array([1, 1, 0, 1, 0])
    assert binarize(scores, y, tpr=0.5).tolist() == [1, 1, 0, 0, 0]
    # one negative allowed: everything above the second negative is positive
    assert binarize(scores, y, fpr=0.5).tolist() == [1, 1, 1, 1, 0]


def test_ties_are_broken_reproducibly_by_seed():
    scores = np.zeros(100)
    y = np.tile([0, 1], 50)
    first = binarize(scores, y, top_k=10, seed=7)
    assert first.sum() == 10
    assert np.array_equal(first, binarize(scores, y, top_k=10, seed=7))
    assert not np.array_equal(first, binarize(scores, y, top_k=10, seed=8))


def test_top_k_takes_k_rows():
    scores, y = _data()
    pred = binarize(scores, y, top_k=37)
    assert pred.sum() == 37


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, "exactly one"),
        ({"tpr": 0.5, "fpr": 0.1}, "exactly one"),
        ({"tpr": 0.0}, r"tpr must be a number in \(0, 1\], got 0.0"),
        ({"fpr": 1.5}, r"fpr must be a number in \[0, 1\], got 1.5"),
        ({"top_k": 11}, "unreachable"),
        ({"top_k": -1}, "top_k"),
    ],
)
def test_bad_targets_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        binarize(np.arange(10.0), np.tile([0, 1], 5), **kwargs)


def test_unreachable_rate_targets():
    with pytest.raises(ValueError, match="no positive rows"):
        binarize([0.1, 0.2], [0, 0], tpr=0.5)
    with pytest.raises(ValueError, match="no negative rows"):
        binarize([0.1, 0.2], [1, 1], fpr=0.5)


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="y_score contains NaN"):
        binarize([0.1, np.nan], [0, 1], tpr=0.5)
    with pytest.raises(ValueError, match="y_score contains NaN or infinite"):
        binarize([0.1, np.inf], [0, 1], tpr=0.5)
    with pytest.raises(ValueError, match="length mismatch"):
        binarize([0.1, 0.2, 0.3], [0, 1], tpr=0.5)
    with pytest.raises(ValueError, match="y_true must hold only 0 and 1"):
        binarize([0.1, 0.2], [0, 2], tpr=0.5)


@pytest.mark.parametrize("target", [{"tpr": 0.5}, {"tpr": 0.13}, {"fpr": 0.1}, {"fpr": 0.0}, {"top_k": 37}])
@pytest.mark.parametrize("seed", [0, 5])
def test_operating_point_reproduces_binarize_on_its_own_rows(target, seed):
    scores, y = _data(seed)  # many ties at the cut
    point = operating_point(scores, y, seed=seed, **target)
    assert np.array_equal(point.apply(scores, seed=seed), binarize(scores, y, seed=seed, **target))


def test_operating_point_applies_the_same_threshold_to_other_rows():
    scores, y = _data(0)
    point = operating_point(scores, y, tpr=0.5, seed=1)
    other = np.random.default_rng(9).choice(np.unique(scores), 300)
    pred = point.apply(other, seed=2)
    assert np.array_equal(pred[other > point.threshold], np.ones((other > point.threshold).sum()))
    assert not pred[other < point.threshold].any()
    tied = other == point.threshold
    assert tied.any() and pred[tied].sum() == round(point.tie_share * tied.sum())


def test_operating_point_edges_and_bad_values():
    scores, y = np.array([0.3, 0.2, 0.1]), np.array([0, 1, 0])
    nothing = operating_point(scores, y, fpr=0.0)   # the top row is a negative: nothing can be positive
    assert nothing.threshold == math.inf and not nothing.apply([5.0, 0.3]).any()
    everything = operating_point(scores, y, top_k=3)
    assert everything.threshold == -math.inf and everything.apply([-5.0, 0.3]).all()
    with pytest.raises(ValueError, match="tie_share"):
        OperatingPoint(0.5, 1.5)
    with pytest.raises(ValueError, match="threshold must not be NaN"):
        OperatingPoint(math.nan, 0.5)
    with pytest.raises(ValueError, match="y_score contains NaN"):
        OperatingPoint(0.5, 0.5).apply([0.1, math.nan])


def test_a_fixed_threshold_decides_positive_at_or_above_it_on_any_rows():
    from fairops.metrics._decisions import served_decision

    scores, y = _data(2)  # scores rounded to 0.01: many rows sit exactly at 0.5
    assert (scores == 0.5).any()
    assert np.array_equal(binarize(scores, y, threshold=0.5), (scores >= 0.5).astype(int))
    point = operating_point(scores, y, threshold=0.5, seed=4)
    # the rule does not depend on the rows it was "set" on: it is the cut itself, ties included
    assert point == OperatingPoint(0.5, 1.0) == operating_point(scores[:10], y[:10], threshold=0.5)
    other = np.random.default_rng(1).random(200)
    assert np.array_equal(point.apply(other, seed=9), (other >= 0.5).astype(int))
    assert np.array_equal(served_decision(point, scores), (scores >= 0.5).astype(int))


@pytest.mark.parametrize("kwargs, message", [
    ({"threshold": "0.5"}, "threshold must be a finite number, got '0.5'"),
    ({"threshold": math.nan}, "threshold must be a finite number, got nan"),
    ({"tpr": "half"}, "tpr must be a number in \\(0, 1\\], got 'half'"),
    ({"fpr": None, "top_k": 2.0}, "top_k must be a non-negative integer, got 2.0"),
    ({"tpr": 0.5, "threshold": 0.5}, "give exactly one of tpr, fpr, top_k, threshold; got \\['tpr', 'threshold'\\]"),
])
def test_a_target_of_the_wrong_type_is_refused_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message):
        binarize(np.arange(10.0) / 10, np.tile([0, 1], 5), **kwargs)


@pytest.mark.parametrize("target, message", [
    ({"cutoff": 0.5}, r"target key 'cutoff' is not one of \('tpr', 'fpr', 'top_k', 'threshold'\)"),
    ({"threshold": "high"}, "threshold must be a finite number, got 'high'"),
    ({"tpr": 0.5, "fpr": 0.1}, "target must hold exactly one key"),
    ([("tpr", 0.5)], "target must hold exactly one key"),
])
def test_checked_target_names_the_bad_key(target, message):
    from fairops.metrics._thresholds import checked_target

    with pytest.raises(ValueError, match=message):
        checked_target(target)
    assert checked_target({"threshold": 0.25}) == {"threshold": 0.25}
