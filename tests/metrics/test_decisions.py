"""One threshold per group: each group meets the task's target on the rows the thresholds are set on."""

import math

import numpy as np
import pandas as pd
import pytest

from fairops.datasets import load_german
from fairops.metrics import GroupThresholds, Task, group_decisions, group_thresholds
from fairops.models import ServedDecision
from fairops.tuning import FairnessObjective


def _rows(n=900, seed=3):
    rng = np.random.default_rng(seed)
    group = rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1])
    # scores rounded to one decimal: many ties at every cut
    scores = np.round(rng.random(n) + 0.2 * (group == "a"), 1)
    labels = (rng.random(n) < 0.3 + 0.3 * scores).astype(int)
    return scores, labels, group


@pytest.mark.parametrize("target, value", [("tpr", 0.1), ("tpr", 0.5), ("tpr", 0.77), ("tpr", 1.0),
                                           ("fpr", 0.0), ("fpr", 0.05), ("fpr", 0.1), ("fpr", 0.5)])
def test_each_group_meets_the_target_exactly(target, value):
    scores, labels, group = _rows()
    decided = group_decisions(scores, labels, {"g": group}, seed=4, **{target: value})
    for g in "abc":
        chosen = group == g
        if target == "tpr":  # the fewest top rows holding ceil(t * n_pos) of the group's positives
            assert decided[chosen & (labels == 1)].sum() == math.ceil(value * labels[chosen].sum() - 1e-12)
        else:  # the most top rows holding floor(f * n_neg) of the group's negatives
            assert decided[chosen & (labels == 0)].sum() == math.floor(value * (chosen & (labels == 0)).sum() + 1e-12)
        # decisions follow the scores within a group: no row below the cut outscores one above it
        below, above = chosen & (decided == 0), chosen & (decided == 1)
        assert not below.any() or not above.any() or scores[below].max() <= scores[above].min()


def test_top_k_is_shared_in_proportion_to_group_sizes():
    scores, labels, group = _rows(n=1000)
    sizes = {g: int((group == g).sum()) for g in "abc"}
    decided = group_decisions(scores, labels, {"g": group}, top_k=101)
    taken = {g: int(decided[group == g].sum()) for g in "abc"}
    assert sum(taken.values()) == 101
    for g in "abc":
        assert abs(taken[g] - 101 * sizes[g] / 1000) < 1


def test_thresholds_give_the_same_decisions_on_their_rows_and_are_reproducible():
    scores, labels, group = _rows()
    rule = group_thresholds(scores, labels, {"g": group}, tpr=0.5, seed=7)
    again = group_thresholds(scores, labels, {"g": group}, tpr=0.5, seed=7)
    assert rule == again
    assert np.array_equal(rule.apply(scores, {"g": group}, seed=7),
                          group_decisions(scores, labels, {"g": group}, tpr=0.5, seed=7))
    assert GroupThresholds.from_dict(rule.to_dict()) == rule


def test_groups_of_several_attributes_are_their_combinations():
    scores, labels, group = _rows()
    sex = np.where(np.arange(len(group)) % 2 == 0, "f", "m")
    task = Task("precision", "tpr", 0.5, "tpr", ("g", "sex"))
    frame = pd.DataFrame({"g": group, "sex": sex})
    rule = task.decision_rule(labels, scores, frame, decision="per-group")
    assert rule.columns == ("g", "sex") and len(rule.groups) == 6
    decided = rule.apply(scores, frame)
    for key in rule.groups:
        chosen = (group == key[0]) & (sex == key[1])
        assert decided[chosen & (labels == 1)].sum() == math.ceil(0.5 * labels[chosen].sum() - 1e-12)


def test_unseen_group_and_missing_column_are_refused_in_one_line():
    scores, labels, group = _rows()
    rule = group_thresholds(scores, labels, {"g": group}, fpr=0.1)
    with pytest.raises(ValueError, match=r"^sensitive group g='z' \(row 1\) had no rows when the thresholds were "
                                         r"set \(known: g='a', g='b', g='c'\)$"):
        rule.apply([0.5, 0.5], {"g": ["a", "z"]})
    with pytest.raises(ValueError, match=r"lacks the column\(s\) \['g'\]"):
        rule.apply([0.5], {"sex": ["f"]})
    with pytest.raises(ValueError, match="group g='a'.*no negative rows"):
        group_thresholds([0.1, 0.2, 0.3], [1, 1, 0], {"g": ["a", "a", "b"]}, fpr=0.1)


def test_served_decision_round_trips_and_decides_each_row_alone():
    scores, labels, group = _rows()
    rule = group_thresholds(scores, labels, {"g": group}, tpr=0.5, seed=1)
    decision = ServedDecision("good credit", rule, ("x",))
    assert ServedDecision.from_dict(decision.to_dict()) == decision
    rows = pd.DataFrame({"g": group})
    decided = decision.decide(scores, rows)
    # away from the exact thresholds a row's decision is its group's cut, whatever else is in the request
    off_cut = np.array([scores[i] != rule.threshold_of((g,)).threshold for i, g in enumerate(group)])
    assert np.array_equal(decided[off_cut], rule.apply(scores, {"g": group})[off_cut])
    assert np.array_equal(decision.decide(scores[::-1], rows[::-1].reset_index(drop=True)), decided[::-1])
    decision.check_groups(rows)
    with pytest.raises(ValueError, match=r"^sensitive group g='q' \(row 2\) had no rows"):
        decision.check_groups(pd.DataFrame({"g": ["a", "b", "q"]}))


def test_objective_per_group_blind_scores_each_fit_at_group_thresholds():
    from types import SimpleNamespace

    data = load_german()
    objective = FairnessObjective(data, families=["logistic_regression"], decision="per-group", blind=True,
                                  max_train_rows=300)
    X, y, sensitive = objective.rows("validation")
    assert "sex" not in X.columns
    model = objective.refit(SimpleNamespace(
        params={"lr_C": 1.0, "lr_penalty": "l2", "lr_tol": 1e-3, "lr_max_iter": 200}, number=0), 1.0)
    validation = objective.evaluate(model, "validation")
    # the oracle: each sex at ceil(0.5 * its positives) true positives
    tpr = [math.ceil(0.5 * y[sensitive["sex"] == g].sum() - 1e-12) / y[sensitive["sex"] == g].sum()
           for g in sensitive["sex"].cat.categories]
    assert validation["fairness"] == pytest.approx(min(tpr) / max(tpr))
    rule = objective.decision_rule(model)
    assert isinstance(rule, GroupThresholds) and rule.columns == ("sex",)
    X_test, y_test, s_test = objective.rows("test")
    scores = model.predict_proba(X_test)[:, 1]
    test = objective.evaluate(model, "test")
    assert test["accuracy"] == pytest.approx(data.task.evaluate(y_test, scores, s_test, at=rule)["accuracy"])


def test_bad_decision_is_refused_by_name():
    with pytest.raises(ValueError, match="decision must be one of"):
        FairnessObjective(load_german(), families=["logistic_regression"], decision="per-person")


def test_an_objective_with_a_fixed_cut_refuses_per_group_decisions_before_any_fit():
    import dataclasses

    from fairops.datasets import load_german
    from fairops.metrics import Task
    from fairops.tuning import FairnessObjective

    data = load_german()
    fixed = dataclasses.replace(data, task=Task.from_string("precision@threshold=0.5,ratio=tpr",
                                                            sensitive=list(data.task.sensitive)))
    with pytest.raises(ValueError, match="not a fixed threshold"):
        FairnessObjective(fixed, decision="per-group")
    assert FairnessObjective(fixed).decision == "single"
