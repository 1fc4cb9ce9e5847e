"""Fairness-ratio intervals and the monitoring alert rule: exact binomial bounds, coverage and the
false-alarm rate of windows without drift, by simulation."""

import numpy as np
import pytest
from scipy.stats import binomtest

from fairops.metrics import OperatingPoint, Task, group_rates
from fairops.metrics._intervals import clopper_pearson, rate_counts, ratio_interval
from fairops.metrics._windows import RateBases, rate_bases, score_window

#: the level of the monitor's baseline rule before the fairness rule (two 97.5% intervals stacked)
STACKED_LEVEL = 0.975


def interval_from_counts(successes, trials, level=0.95):
    return ratio_interval((successes, trials), level=level, method="exact")


TASK = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["g"])


@pytest.mark.parametrize("k, n", [(0, 7), (3, 7), (7, 7), (120, 400)])
def test_clopper_pearson_matches_scipy(k, n):
    oracle = binomtest(k, n).proportion_ci(confidence_level=0.9, method="exact")
    lower, upper = clopper_pearson([k], [n], 0.9)
    assert lower[0] == pytest.approx(oracle.low, abs=1e-9) and upper[0] == pytest.approx(oracle.high, abs=1e-9)


def test_groups_without_the_rate_are_left_out_and_one_group_is_undefined():
    assert np.isnan(interval_from_counts([3, 0], [5, 0])).all()
    assert interval_from_counts([3, 0, 4], [5, 0, 5]) == interval_from_counts([3, 4], [5, 5])
    with pytest.raises(ValueError, match="level"):
        interval_from_counts([1, 2], [3, 4], level=1.0)


def test_two_attributes_split_the_level_and_take_the_lower_ratio():
    sex, race = ([40, 30], [100, 100]), ([20, 45, 30], [60, 100, 90])
    both = ratio_interval([sex, race], level=0.9, method="exact")
    alone = [ratio_interval(counts, level=0.95, method="exact") for counts in (sex, race)]
    assert both == (min(a[0] for a in alone), min(a[1] for a in alone))


def test_interval_covers_the_true_ratio_of_three_groups():
    rng = np.random.default_rng(3)
    rates, sizes = np.array([0.5, 0.4, 0.45]), np.array([80, 200, 60])
    truth = rates.min() / rates.max()
    bounds = [interval_from_counts(rng.binomial(sizes, rates), sizes, level=0.9) for _ in range(2000)]
    covered = np.mean([low <= truth <= high for low, high in bounds])
    assert covered >= 0.9


def _window(rng, n, tpr_by_group):
    """Rows of groups a/b whose positives are decided positive with the group's TPR (score 1 vs 0)."""
    g = rng.choice(["a", "b"], n)
    y = rng.integers(0, 2, n)
    hit = rng.random(n) < np.where(g == "a", tpr_by_group[0], tpr_by_group[1])
    score = np.where(y == 1, hit, rng.random(n) < 0.1).astype(float)
    return y, score, {"g": g}


@pytest.mark.parametrize("tprs", [(0.6, 0.6), (0.6, 0.48)])
def test_false_alarm_rate_against_the_baseline_without_drift_is_at_most_five_percent(tprs):
    """Baselines from 2000 validation rows, windows of 800 rows of the same distribution, both at 97.5%."""
    rng = np.random.default_rng(0)
    point = OperatingPoint(0.5, 0.0)
    alarms = []
    for _ in range(30):
        y, score, groups = _window(rng, 2000, tprs)
        rates = group_rates(y, point.apply(score), groups)
        baseline_lower = ratio_interval(rate_counts(rates, "tpr"), level=STACKED_LEVEL, method="exact")[0]
        for _ in range(30):
            window = score_window(TASK, *_window(rng, 800, tprs), point, level=STACKED_LEVEL)
            alarms.append(window.alerts(baseline_lower))
    assert np.mean(alarms) <= 0.05


def test_false_alarm_rate_at_the_line_is_at_most_the_one_sided_error_of_the_level():
    """Windows whose true TPR ratio is exactly the line (0.48 / 0.6 = 0.8) alert when their 95% interval lies below
    0.8: at most 2.5% of them (900 windows; the bound plus three standard errors)."""
    rng = np.random.default_rng(2)
    point = OperatingPoint(0.5, 0.0)
    alarms = [score_window(TASK, *_window(rng, 800, (0.6, 0.48)), point).alerts(0.8) for _ in range(900)]
    assert np.mean(alarms) <= 0.025 + 3 * np.sqrt(0.025 * 0.975 / 900)


def test_a_collapsed_window_alerts_and_reports_its_counts():
    rng = np.random.default_rng(1)
    y, score, groups = _window(rng, 800, (0.6, 0.15))
    window = score_window(TASK, y, score, groups, OperatingPoint(0.5, 0.0))
    assert window.fairness_upper < 0.5 and window.alerts(0.7) and not window.alerts(0.3)
    for group, (hits, positives) in window.groups.items():  # TPR counts: true positives over positives
        rows = (groups["g"] == group) & (y == 1)
        assert (hits, positives) == (int((score[rows] > 0.5).sum()), int(rows.sum()))
    assert window.accuracy_lower <= window.accuracy <= window.accuracy_upper


def _decided(rng, n_per_group: int, tprs: dict):
    """Positive rows only, decided positive at each (attribute, group)'s TPR; every row has a sex and a race."""
    sex = np.repeat(["f", "m"], n_per_group * 2)
    race = np.tile(np.repeat(["a", "b"], n_per_group), 2)
    chance = np.array([tprs["sex"][s] * tprs["race"][r] for s, r in zip(sex, race)])
    return np.ones(len(sex), dtype=int), (rng.random(len(sex)) < chance).astype(int), {"sex": sex, "race": race}


def test_the_lowest_ratio_hides_a_drift_in_another_attribute_that_its_own_baseline_shows():
    """Race's ratio is the lowest (0.6) before and after; sex's falls from 1.0 to 0.75: the task's ratio stays
    0.6, within its baseline, while sex's own ratio is significantly below its baseline."""
    from fairops.metrics._figures import fairness_ratios

    task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex", "race"])
    rng = np.random.default_rng(4)
    before = {"sex": {"f": 1.0, "m": 1.0}, "race": {"a": 0.9, "b": 0.54}}
    after = {"sex": {"f": 0.75, "m": 1.0}, "race": before["race"]}
    baseline, by_attribute, _ = fairness_ratios(task, *_decided(rng, 5000, before))
    y, decided, groups = _decided(rng, 5000, after)
    window = score_window(task, y, decided.astype(float), groups, OperatingPoint(0.5, 0.0))
    assert window.fairness == pytest.approx(0.6, abs=0.03) and not window.alerts(baseline.lower)
    assert window.alerting_attributes({name: score.lower for name, score in by_attribute.items()}) == ["sex"]
    assert window.attributes["sex"].value == pytest.approx(0.75, abs=0.03)


def _most_unequal(positives: dict, negatives: int, favoured: str):
    """Rows of groups with ``positives[group]`` positive rows each, and ``negatives`` negative rows (of the first
    group); decided positive: the positives of ``favoured`` only."""
    groups = np.concatenate([np.repeat(list(positives), list(positives.values())),
                             np.repeat(list(positives)[:1], negatives)])
    y = np.concatenate([np.ones(sum(positives.values()), dtype=int), np.zeros(negatives, dtype=int)])
    return y, ((groups == favoured) & (y == 1)).astype(float), {"g": groups}


def _alerts_at_most_unequal(shares: RateBases, rows: int, bound: float) -> list[bool]:
    """Whether a window of ``rows`` rows in the shares' proportions alerts, for each group favoured alone."""
    positives = shares.scaled(rows).attributes["g"]
    alerts = []
    for favoured in positives:
        y, decided, groups = _most_unequal(positives, rows - sum(positives.values()), favoured)
        assert rate_bases(TASK, y, groups) == RateBases(rows, {"g": positives})
        alerts.append(score_window(TASK, y, decided, groups, OperatingPoint(0.5, 0.0)).alerts(bound))
    return alerts


def test_the_estimated_window_size_is_the_smallest_on_which_the_most_unequal_decisions_alert():
    shares = RateBases(1000, {"g": {"a": 180, "b": 420}})  # positives of groups a and b in 1000 rows
    bound = 0.7
    needed = shares.rows_for_an_alert({"g": bound}, bound)
    assert needed is not None and any(_alerts_at_most_unequal(shares, needed, bound))
    assert not any(_alerts_at_most_unequal(shares, needed * 4 // 5, bound))
    assert not shares.scaled(needed - 1).can_alert({"g": bound}, bound)
    assert shares.rows_for_an_alert({"g": 0.0}, 0.0) is None  # nothing lies below 0
    assert shares.rows_for_an_alert({"g": 0.5}, 0.5) > needed  # a lower bound needs more rows


def test_the_most_unequal_decisions_reach_the_lowest_upper_bound_of_each_attribute():
    task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex", "race"])
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 300)
    groups = {"sex": rng.choice(["f", "m"], 300, p=[0.3, 0.7]), "race": rng.choice(["a", "b", "c"], 300)}
    bases = rate_bases(task, y, groups)
    assert bases.attributes["sex"] == {g: int(((groups["sex"] == g) & (y == 1)).sum()) for g in ("f", "m")}
    reached = [score_window(task, y, ((groups["sex"] == g) & (y == 1)).astype(float), groups,
                            OperatingPoint(0.5, 0.0)).attributes["sex"].upper for g in ("f", "m")]
    overall, by_attribute = bases.lowest_uppers()
    assert by_attribute["sex"] == pytest.approx(min(reached), rel=1e-12)
    assert overall == min(by_attribute.values())
    pooled = bases + bases
    assert pooled.rows == 600 and pooled.attributes["race"] == {g: 2 * n for g, n in bases.attributes["race"].items()}


def test_an_intersectional_task_reaches_its_lowest_upper_bound_over_the_combined_groups():
    task = Task.from_string("precision@tpr=0.5,ratio=tpr,groups=intersectional", sensitive=["sex", "race"])
    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, 400)
    groups = {"sex": rng.choice(["f", "m"], 400), "race": rng.choice(["a", "b", "c"], 400)}
    combined = np.char.add(groups["sex"], groups["race"])
    bases = rate_bases(task, y, groups)
    assert bases.task_ratio == "combined" and sum(bases.combined.values()) == int(y.sum())
    reached = [score_window(task, y, ((combined == g) & (y == 1)).astype(float), groups,
                            OperatingPoint(0.5, 0.0)).fairness_upper for g in np.unique(combined)]
    assert bases.lowest_uppers()[0] == pytest.approx(min(reached), rel=1e-12)
    assert rate_bases(task, y, {"sex": groups["sex"]}).task_ratio == "none"  # the task's ratio needs race too
