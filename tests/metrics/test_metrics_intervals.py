"""Intervals of accuracy and fairness: coverage simulated from known rates, oracles for the edges."""

from itertools import product

import numpy as np
import pytest

from fairops.metrics import Task, binarize, fairness_ratio, group_rates, ratio_of
from fairops.metrics._intervals import (
    clopper_pearson,
    exact_attribute_intervals,
    lowest_possible_upper,
    rate_counts,
    ratio_interval,
    wilson_interval,
)

DRAWS = 1000


def _covered(bounds, truth) -> float:
    return float(np.mean([low <= truth <= high for low, high in bounds]))


@pytest.mark.parametrize("share, trials", [(0.68, 120), (0.3, 400), (0.9, 60)])
def test_wilson_90_percent_interval_covers_near_90_percent(share, trials):
    rng = np.random.default_rng(1)
    hits = rng.binomial(trials, share, DRAWS)
    coverage = _covered([wilson_interval(int(h), trials, level=0.9) for h in hits], share)
    assert 0.85 <= coverage <= 0.95


# COMPAS-sized validation groups (256 / 416 negatives) at a 10% FPR, fair and unfair, and a 30/50% TPR pair.
@pytest.mark.parametrize("rates, bases", [((0.1, 0.1), (256, 416)), ((0.05, 0.12), (256, 416)),
                                          ((0.3, 0.5), (150, 400))])
def test_ratio_90_percent_interval_covers_near_90_percent(rates, bases):
    rng = np.random.default_rng(2)
    events = np.column_stack([rng.binomial(n, p, DRAWS) for n, p in zip(bases, rates)])
    truth = min(rates) / max(rates)
    coverage = _covered([ratio_interval((e, bases), level=0.9) for e in events], truth)
    assert 0.85 <= coverage <= 0.95


def test_lower_bound_of_several_groups_holds_its_level():
    # The lower bound needs no correction for the number of pairs: it misses at most 5% of the time.
    rng = np.random.default_rng(3)
    rates, bases = np.array([0.08, 0.1, 0.1, 0.12]), np.array([200, 300, 250, 400])
    truth = rates.min() / rates.max()
    lows = [ratio_interval((rng.binomial(bases, rates), bases))[0] for _ in range(DRAWS)]
    assert np.mean(np.array(lows) > truth) <= 0.06


def test_interval_contains_the_point_estimate_and_1_caps_it():
    events, bases = np.array([25, 42]), np.array([256, 416])
    low, high = ratio_interval((events, bases))
    point = min(events / bases) / max(events / bases)
    assert low < point <= high <= 1.0
    assert ratio_interval((np.array([0, 0]), np.array([50, 60])))[1] == 1.0
    assert ratio_interval((np.array([0, 3]), np.array([13, 90])))[0] == 0.0  # no events in a group: ratio 0
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_lowest_of_attributes_is_the_smaller_of_their_intervals():
    a, b = (np.array([10, 30]), np.array([100, 100])), (np.array([20, 22]), np.array([100, 100]))
    assert ratio_interval([a, b])[0] == pytest.approx(min(ratio_interval(a)[0], ratio_interval(b)[0]))


@pytest.mark.parametrize("counts, message", [((np.array([5]), np.array([10])), "at least two groups"),
                                             ((np.array([5, 11]), np.array([10, 10])), "events <= bases")])
def test_bad_counts_are_refused(counts, message):
    with pytest.raises(ValueError, match=message):
        ratio_interval(counts)
    with pytest.raises(ValueError, match="level"):
        wilson_interval(1, 2, level=1.5)


@pytest.mark.parametrize("method", ["katz", "exact"])
@pytest.mark.parametrize("counts, message", [
    ([], "counts holds no attribute"),
    (([], []), "counts holds no groups"),
    ([([1, 2], [3, 3]), 5], r"counts\[1\] must be an \(events, bases\) pair"),
    (([1, 2], [3]), "need the same length, got 2 and 1"),
    (([1, -1], [3, 3]), r"counts events must hold whole numbers >= 0, got \[1, -1\]"),
    (([1.5, 1], [3, 3]), "counts events must hold whole numbers"),
    (([1, 1], [3, np.nan]), "counts bases must hold whole-number counts"),
    (([[1, 1]], [[3, 3]]), "must be a 1-D array"),
    (([1, 4], [3, 3]), "group 1 has 4 events of 3"),
])
def test_malformed_counts_are_refused_by_name_by_both_methods(method, counts, message):
    with pytest.raises(ValueError, match=message):
        ratio_interval(counts, method=method)


def test_katz_refuses_a_group_without_base_which_exact_leaves_out():
    with pytest.raises(ValueError, match="group 0 has no base"):
        ratio_interval(([0, 3], [0, 10]))
    with pytest.raises(ValueError, match="holds 1 group; a ratio needs at least two"):
        ratio_interval(([3], [10]))
    # The exact method's rule, which monitoring windows rely on: no rate, no group; fewer than two, no interval.
    assert ratio_interval(([0, 3, 4], [0, 10, 10]), method="exact") == \
        ratio_interval(([3, 4], [10, 10]), method="exact")
    assert np.isnan(ratio_interval(([3], [10]), method="exact")).all()
    assert ratio_interval(([3.0, 4.0], [10.0, 10.0])) == ratio_interval(([3, 4], [10, 10]))  # whole floats pass


@pytest.mark.parametrize("call, message", [
    (lambda: wilson_interval(2.5, 3), "successes must hold whole numbers"),
    (lambda: wilson_interval(4, 3), "got 4 successes of 3"),
    (lambda: clopper_pearson([1, 2], [3]), "need the same length"),
    (lambda: clopper_pearson([0, 1], [0, 3]), "trials must be positive, group 0 has none"),
    (lambda: clopper_pearson([], []), "holds no groups"),
    (lambda: ratio_of([], "tpr"), "non-empty list"),
])
def test_other_count_functions_refuse_malformed_counts(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _two_attribute_rows(seed=0, n=600):
    rng = np.random.default_rng(seed)
    sex, race = rng.choice(["F", "M"], n), rng.choice(["a", "b", "c"], n)
    y = rng.integers(0, 2, n)
    score = rng.random(n) + 0.3 * y + 0.2 * (race == "a") + 0.1 * (sex == "M")
    return y, score, {"sex": sex, "race": race}


def test_task_counts_every_attribute_by_default_and_intersections_on_request():
    y, score, groups = _two_attribute_rows()
    lowest = Task("recall", "fpr", 0.1, "fpr", ("sex", "race"))
    metrics, counts = lowest.measure(y, score, groups, seed=0)
    pred = binarize(score, y, fpr=0.1, seed=0)
    per_attribute = {name: fairness_ratio(y, pred, groups[name], rate="fpr") for name in groups}
    assert metrics["fairness.sex"] == pytest.approx(per_attribute["sex"])
    assert metrics["fairness"] == pytest.approx(min(per_attribute.values()))
    assert set(counts["fairness"]) == {"sex", "race"}
    joint = Task("recall", "fpr", 0.1, "fpr", ("sex", "race"), groups="intersectional")
    joint_metrics, joint_counts = joint.measure(y, score, groups, seed=0)
    assert joint_metrics["fairness"] == pytest.approx(fairness_ratio(y, pred, groups, rate="fpr", intersectional=True))
    assert len(joint_counts["fairness"]["sex&race"]) == 6
    assert "sex x race" in joint.describe() and "sex, race" in lowest.describe()


def test_task_counts_match_the_group_rates():
    y, score, groups = _two_attribute_rows(1)
    task = Task("precision", "tpr", 0.5, "tpr", ("race",))
    metrics, counts = task.measure(y, score, groups, seed=0)
    pred = binarize(score, y, tpr=0.5, seed=0)
    events, bases = rate_counts(group_rates(y, pred, groups["race"]), "tpr")
    assert [counts["fairness"]["race"][g] for g in ("a", "b", "c")] == np.column_stack([events, bases]).tolist()
    hits, predicted = counts["accuracy"]
    assert metrics["accuracy"] == pytest.approx(hits / predicted)
    assert metrics["accuracy_low"] < metrics["accuracy"] < metrics["accuracy_high"]
    assert metrics["fairness_low"] <= metrics["fairness"] <= metrics["fairness_high"]


def test_a_group_without_rows_for_the_rate_is_left_out_and_its_counts_kept():
    y = np.array([1, 0, 1, 0, 1, 0, 1, 0, 1, 1])
    score = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.95, 0.85])
    groups = {"g": np.array(list("aaaabbbbcc"))}  # c has no negatives: its FPR does not exist
    metrics, counts = Task("recall", "fpr", 0.5, "fpr", ("g",)).measure(y, score, groups)
    pred = binarize(score, y, fpr=0.5)
    assert metrics["fairness"] == pytest.approx(fairness_ratio(y[:8], pred[:8], groups["g"][:8], rate="fpr"))
    assert counts["fairness"]["g"]["c"] == [0, 0]
    with pytest.raises(ValueError, match=r"fpr is undefined for group\(s\) \['c'\]"):
        Task("recall", "fpr", 0.5, "fpr", ("g",)).measure(y[4:], score[4:], {"g": groups["g"][4:]})


@pytest.mark.parametrize("bases, attributes", [((3, 4, 2), 1), ((3, 4, 2), 2), ((5, 0, 1), 1), ((1, 6), 3)])
def test_lowest_possible_upper_is_the_lowest_upper_bound_over_every_event_count(bases, attributes):
    """Brute force: every vector of events the bases allow, scored by exact_attribute_intervals with the level
    split over as many attributes (the others' counts do not move this one's bound)."""
    others = [([1, 1], [2, 2])] * (attributes - 1)
    uppers = [exact_attribute_intervals([(list(events), list(bases)), *others], level=0.975)[0][1]
              for events in product(*(range(n + 1) for n in bases))]
    assert lowest_possible_upper(bases, level=0.975, attributes=attributes) == pytest.approx(min(uppers), rel=1e-12)


def test_lowest_possible_upper_needs_two_groups_with_a_base():
    assert np.isnan(lowest_possible_upper([0, 7, 0]))
    with pytest.raises(ValueError, match="attributes"):
        lowest_possible_upper([3, 4], attributes=0)
