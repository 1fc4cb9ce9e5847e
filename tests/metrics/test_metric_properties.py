"""Properties of the metrics core over generated inputs: targets met exactly, ratios as their definitions,
intervals that hold their point and widen with their level. Each oracle is the definition itself, written
out by brute force, or scikit-learn's."""

import math
from fractions import Fraction

import numpy as np
from hypothesis import assume, given, settings, strategies as st
from sklearn.metrics import roc_auc_score

from fairops.metrics import auc_s, binarize, fairness_ratio
from fairops.metrics._intervals import clopper_pearson, ratio_interval, wilson_interval

QUICK = settings(max_examples=50, deadline=None)
#: targets as people write them (decimals of four places): the oracle takes their exact share of the rows
decimal_targets = st.integers(0, 10_000).map(lambda k: Fraction(k, 10_000))


@st.composite
def scored_rows(draw, min_size=4, max_size=120):
    """Scores with ties (drawn from a few values), labels with both classes, and a group per row."""
    n = draw(st.integers(min_size, max_size))
    scores = np.array(draw(st.lists(st.sampled_from([0.1, 0.2, 0.3, 0.5, 0.8, 0.9]), min_size=n, max_size=n)))
    labels = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    assume(0 < labels.sum() < n)
    groups = np.array(draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n)))
    return scores, labels, groups


@QUICK
@given(scored_rows(), decimal_targets.filter(lambda t: t > 0), st.integers(0, 5))
def test_a_tpr_target_takes_the_fewest_top_rows_holding_its_positives(rows, target, seed):
    scores, y, _ = rows
    decided = binarize(scores, y, tpr=float(target), seed=seed)
    assert int((decided & y).sum()) == math.ceil(target * int(y.sum()))
    # no row decided negative outscores a row decided positive: the decisions are a top of the ranking
    assert decided.all() or not decided.any() or scores[decided == 1].min() >= scores[decided == 0].max()


@QUICK
@given(scored_rows(), decimal_targets, st.integers(0, 5))
def test_an_fpr_target_allows_exactly_its_false_positives(rows, target, seed):
    scores, y, _ = rows
    decided = binarize(scores, y, fpr=float(target), seed=seed)
    assert int((decided & (1 - y)).sum()) == math.floor(target * int((1 - y).sum()))


@QUICK
@given(scored_rows(), st.data())
def test_top_k_decides_k_rows(rows, data):
    scores, y, _ = rows
    k = data.draw(st.integers(0, len(scores)))
    assert int(binarize(scores, y, top_k=k).sum()) == k


def _rate_by_brute_force(y, decided, groups, rate):
    """Each group's rate, or None when some group lacks the rate's rows (the ratio is then undefined)."""
    values = []
    for group in np.unique(groups):
        member = groups == group
        base = {"tpr": member & (y == 1), "fpr": member & (y == 0), "ppr": member}[rate]
        if not base.any():
            return None
        values.append(decided[base].mean())
    return values


@QUICK
@given(scored_rows(), st.sampled_from(["tpr", "fpr", "ppr"]), st.integers(0, 3))
def test_a_fairness_ratio_is_the_lowest_group_rate_over_the_highest(rows, rate, seed):
    scores, y, groups = rows
    decided = binarize(scores, y, top_k=len(scores) // 2, seed=seed)
    rates = _rate_by_brute_force(y, decided, groups, rate)
    assume(rates is not None and len(rates) >= 2 and max(rates) > 0)
    ratio = fairness_ratio(y, decided, groups, rate=rate)
    assert 0.0 <= ratio <= 1.0
    assert math.isclose(ratio, min(rates) / max(rates), rel_tol=1e-12)
    # rows in another order, groups under other names: the same ratio
    order = np.random.default_rng(seed).permutation(len(y))
    renamed = np.char.add("group-", groups)
    assert math.isclose(fairness_ratio(y[order], decided[order], renamed[order], rate=rate), ratio, rel_tol=1e-12)


@QUICK
@given(scored_rows())
def test_auc_s_of_two_groups_is_the_farther_side_of_roc_auc(rows):
    scores, _, groups = rows
    binary = np.where(groups == "a", "a", "other")
    assume(len(np.unique(binary)) == 2)
    auc = roc_auc_score(binary == "a", scores)
    assert math.isclose(auc_s(scores, binary), max(auc, 1 - auc), abs_tol=1e-12)


counts = st.integers(0, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))
levels = st.sampled_from([0.8, 0.9, 0.95, 0.975, 0.99])


@QUICK
@given(counts, levels, levels)
def test_a_wilson_interval_holds_its_share_and_widens_with_its_level(pair, level, other):
    successes, trials = pair
    low, high = wilson_interval(successes, trials, level=level)
    assert 0.0 <= low <= high <= 1.0
    if trials:
        assert low <= successes / trials + 1e-12 and successes / trials <= high + 1e-12
        wider = wilson_interval(successes, trials, level=max(level, other))
        narrower = wilson_interval(successes, trials, level=min(level, other))
        assert wider[0] <= narrower[0] + 1e-12 and narrower[1] <= wider[1] + 1e-12


@QUICK
@given(st.lists(counts.filter(lambda c: c[1] > 0), min_size=1, max_size=6), levels)
def test_clopper_pearson_bounds_hold_each_share(pairs, level):
    successes, trials = (np.array(values) for values in zip(*pairs))
    lower, upper = clopper_pearson(successes, trials, level)
    share = successes / trials
    assert np.all(lower <= share + 1e-12) and np.all(share <= upper + 1e-12)
    assert np.all((lower == 0) == (successes == 0)) and np.all((upper == 1) == (successes == trials))


@QUICK
@given(st.lists(st.integers(1, 300).flatmap(lambda n: st.tuples(st.integers(1, n), st.just(n))), min_size=2,
                max_size=5), levels, st.sampled_from(["katz", "exact"]))
def test_a_ratio_interval_holds_the_ratio_of_its_counts(pairs, level, method):
    events, bases = (np.array(values) for values in zip(*pairs))
    rates = events / bases
    low, high = ratio_interval((events, bases), level=level, method=method)
    point = rates.min() / rates.max()
    assert 0.0 <= low <= point + 1e-12 and point <= high + 1e-12 and high <= 1.0
