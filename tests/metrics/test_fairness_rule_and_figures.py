"""The fairness rule (one line, one level) and the one function that computes a model's figures: checked against
scipy's exact and Wilson intervals and scikit-learn's per-group recall, and read alike by tuning (Task.measure), the
monitor (score_window) and the gate (the fairops evaluator)."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest
from sklearn.metrics import precision_score, recall_score

from fairops.errors import InputError
from fairops.metrics import FairnessRule, OperatingPoint, Task, decision_figures
from fairops.metrics._figures import degenerate_of
from fairops.metrics._windows import score_window
from fairops_mlflow_plugins.evaluator import FairnessEvaluator

TASK = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex", "race"])


@pytest.mark.parametrize("line, level", [(1.5, 0.95), (-0.1, 0.95), (0.8, 1.0), (0.8, 0.3), ("0.8", 0.95)])
def test_a_rule_out_of_range_is_refused_by_name(line, level):
    with pytest.raises(InputError, match="fairness line|confidence level"):
        FairnessRule(line, level)


def test_the_rule_judges_a_ratio_by_its_point_and_its_interval():
    rule = FairnessRule(0.8, 0.95)
    assert [rule.standing(v, u) for v, u in [(0.8, 0.9), (0.79, 0.81), (0.5, 0.79), (math.nan, math.nan)]] == \
        ["meets", "unclear", "below", "unclear"]
    assert rule.below(0.79) and not rule.below(0.8) and not rule.below(math.nan)
    off = FairnessRule(0.0)
    assert not off.active and off.standing(0.1, 0.2) == "meets" and not off.below(0.2)
    assert FairnessRule.from_tags(rule.replaced(line=0.9).tags()) == FairnessRule(0.9, 0.95)
    assert FairnessRule.from_tags({}) == FairnessRule() and FairnessRule.from_tags({}, level=0.9).level == 0.9
    with pytest.raises(InputError, match="not a number"):
        FairnessRule.from_tags({"fairops.fairness_line": "high"})


def _rows(seed=0, n=3000):
    rng = np.random.default_rng(seed)
    sex, race = rng.choice(["f", "m"], n, p=[0.4, 0.6]), rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1])
    y = (rng.random(n) < 0.3).astype(int)
    decided = np.where(y == 1, rng.random(n) < np.where(sex == "f", 0.45, 0.6), rng.random(n) < 0.1).astype(int)
    return y, decided, pd.DataFrame({"sex": sex, "race": race})


def test_the_figures_match_scipy_and_scikit_learn():
    y, decided, groups = _rows()
    figures = decision_figures(TASK, y, decided, groups, level=0.9)
    assert figures.accuracy[0] == pytest.approx(precision_score(y, decided))
    wilson = binomtest(int((y & decided).sum()), int(decided.sum())).proportion_ci(0.9, method="wilson")
    assert figures.accuracy[1:] == pytest.approx((wilson.low, wilson.high))
    for name in ("sex", "race"):
        tprs = [recall_score(y[groups[name] == g], decided[groups[name] == g]) for g in sorted(set(groups[name]))]
        assert figures.attributes[name].value == pytest.approx(min(tprs) / max(tprs))
        # exact: Clopper-Pearson per group, the level split over the 2 attributes and the attribute's groups
        level = 1 - (1 - 0.9) / 2 / len(tprs)
        bounds = [binomtest(int((decided & (y == 1) & (groups[name] == g)).sum()),
                            int(((y == 1) & (groups[name] == g)).sum())).proportion_ci(level, method="exact")
                  for g in sorted(set(groups[name]))]
        low = min(b.low for b in bounds) / max(b.high for b in bounds)
        high = min(1.0, min(b.high for b in bounds) / max(b.low for b in bounds))
        assert (figures.attributes[name].lower, figures.attributes[name].upper) == pytest.approx((low, high))
    lowest = min(figures.attributes.values(), key=lambda score: score.value)
    assert figures.fairness.value == lowest.value
    assert figures.fairness.upper == min(score.upper for score in figures.attributes.values())
    assert figures.positive_share == pytest.approx(decided.mean()) and figures.degenerate is None


def test_tuning_the_monitor_and_the_gate_read_the_same_figures():
    y, decided, groups = _rows(1)
    metrics, counts = TASK.measure(y, decided.astype(float), groups, decided=decided)
    window = score_window(TASK, y, decided.astype(float), groups, OperatingPoint(0.5, 0.0))
    gate, *_ = FairnessEvaluator().compute(features=groups, labels=y, score=decided.astype(float),
                                          config={"sensitive_features": ["sex", "race"], "decision": "served"},
                                          decided=decided)
    triples = {"measure": (metrics["fairness"], metrics["fairness_low"], metrics["fairness_high"]),
               "window": (window.fairness, window.fairness_lower, window.fairness_upper),
               "gate": tuple(gate[f"fairops_tpr_ratio{end}"] for end in ("", "_lower", "_upper"))}
    assert triples["measure"] == triples["window"] == triples["gate"]
    assert (metrics["accuracy"], metrics["accuracy_low"], metrics["accuracy_high"]) == \
        (window.accuracy, window.accuracy_lower, window.accuracy_upper) == \
        (gate["fairops_precision"], gate["fairops_precision_lower"], gate["fairops_precision_upper"])
    assert counts["decisions"] == {"rows": len(y), "positive": int(decided.sum()), "positives": int(y.sum()),
                                   "true_positives": int((y & decided).sum())}


@pytest.mark.parametrize("decisions, reason", [
    ({"rows": 100, "positive": 100, "positives": 70, "true_positives": 70}, "one class"),
    ({"rows": 100, "positive": 0, "positives": 70, "true_positives": 0}, "one class"),
    ({"rows": 200, "positive": 199, "positives": 140, "true_positives": 140}, "base rate"),  # 99.5% decided positive
    ({"rows": 200, "positive": 60, "positives": 140, "true_positives": 42}, "base rate"),  # precision = base rate
    ({"rows": 200, "positive": 60, "positives": 140, "true_positives": 55}, None),
    ({"rows": 15000, "positive": 3000, "positives": 1335, "true_positives": 700}, None),
])
def test_decisions_that_say_nothing_are_named(decisions, reason):
    assert degenerate_of(decisions) == reason
