import numpy as np
import pandas as pd
import pytest

from fairops.metrics import Task, binarize, fairness_ratio, precision


def test_round_trip_and_evaluation():
    task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive="sex")
    assert str(task) == "precision@tpr=0.5,ratio=tpr" and task.sensitive == ("sex",)
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    s = pd.DataFrame({"sex": rng.choice(["F", "M"], 400), "race": rng.choice(["a", "b"], 400)})
    scores = rng.random(400) + 0.5 * y
    result = task.evaluate(y, scores, s, seed=1)
    pred = binarize(scores, y, tpr=0.5, seed=1)
    assert result["accuracy"] == pytest.approx(precision(y, pred))
    assert result["fairness"] == pytest.approx(fairness_ratio(y, pred, s[["sex"]], rate="tpr"))


@pytest.mark.parametrize("spec", ["precision@tpr", "f1@tpr=0.5,ratio=tpr", "recall@fpr=0.1,ratio=odds"])
def test_bad_specs(spec):
    with pytest.raises(ValueError):
        Task.from_string(spec, sensitive=["sex"])


def test_missing_task_column_is_named():
    task = Task("recall", "fpr", 0.1, "fpr", ("race",))
    with pytest.raises(ValueError, match=r"lacks the task's column\(s\) \['race'\]"):
        task.evaluate([0, 1], [0.1, 0.2], pd.DataFrame({"sex": ["F", "M"]}))


def test_description_names_positive_class_metric_and_ratio():
    task = Task.from_string("precision@fpr=0.1,ratio=fpr", sensitive=["race"], positive="re-offends within two years")
    assert task.describe() == ("positive class: re-offends within two years; accuracy: precision at 10% FPR; "
                               "fairness: FPR ratio (lowest / highest) over race")
    assert task.accuracy_name == "precision at 10% FPR" and task.fairness_name == "FPR ratio over race"
    assert task.as_params() == {"task": "precision@fpr=0.1,ratio=fpr",
                                "task.positive_class": "re-offends within two years",
                                "task.metric": "precision", "task.target": "fpr=0.1", "task.fairness_ratio": "fpr",
                                "task.sensitive": "race", "task.groups": "lowest"}
    assert Task("recall", "top_k", 100, "tpr", "g").describe().startswith(
        "positive class: label 1; accuracy: recall at top 100")
    with pytest.raises(ValueError, match="task positive"):
        Task("recall", "tpr", 0.5, "tpr", "g", positive=" ")


def test_evaluate_at_a_threshold_set_elsewhere():
    rng = np.random.default_rng(3)
    y_val, y_test = rng.integers(0, 2, 500), rng.integers(0, 2, 400)
    s_val = pd.DataFrame({"sex": rng.choice(["F", "M"], 500)})
    s_test = pd.DataFrame({"sex": rng.choice(["F", "M"], 400)})
    val_scores, test_scores = np.round(rng.random(500) + 0.4 * y_val, 1), np.round(rng.random(400) + 0.4 * y_test, 1)
    task = Task("precision", "tpr", 0.5, "tpr", ("sex",))
    point = task.operating_point(y_val, val_scores, seed=4)
    # on its own rows the point gives the exact-target evaluation
    assert task.evaluate(y_val, val_scores, s_val, seed=4, at=point) == task.evaluate(y_val, val_scores, s_val, seed=4)
    on_test = task.evaluate(y_test, test_scores, s_test, seed=4, at=point)
    pred = point.apply(test_scores, seed=4)
    assert on_test["accuracy"] == pytest.approx(precision(y_test, pred))
    assert on_test["fairness"] == pytest.approx(fairness_ratio(y_test, pred, s_test, rate="tpr"))
    # the target is not re-met on the test rows: their own 50%-TPR cut differs from the validation one
    assert not np.array_equal(pred, binarize(test_scores, y_test, tpr=0.5, seed=4))
    with pytest.raises(TypeError, match="OperatingPoint"):
        task.evaluate(y_test, test_scores, s_test, at=0.5)


def test_a_fixed_threshold_task_decides_the_same_way_on_validation_and_test_rows():
    from fairops.metrics import OperatingPoint

    task = Task.from_string("precision@threshold=0.5,ratio=fpr", sensitive=["sex"])
    assert str(task) == "precision@threshold=0.5,ratio=fpr" and task.threshold == {"threshold": 0.5}
    assert task.accuracy_name == "precision at scores >= 0.5"
    assert task.as_params()["task.target"] == "threshold=0.5"
    rng = np.random.default_rng(5)
    y_val, y_test = rng.integers(0, 2, 300), rng.integers(0, 2, 200)
    s_val, s_test = {"sex": rng.choice(["F", "M"], 300)}, {"sex": rng.choice(["F", "M"], 200)}
    val_scores, test_scores = np.round(rng.random(300), 1), np.round(rng.random(200), 1)  # many rows at 0.5
    point = task.decision_rule(y_val, val_scores, s_val, seed=2)
    assert point == OperatingPoint(0.5, 1.0)
    for y, scores, s in ((y_val, val_scores, s_val), (y_test, test_scores, s_test)):
        pred = (scores >= 0.5).astype(int)
        measured = task.evaluate(y, scores, s, seed=2, at=point)
        assert measured == task.evaluate(y, scores, s, seed=7)  # no target re-met, no tie broken: the cut itself
        assert measured["accuracy"] == pytest.approx(precision(y, pred))
        assert measured["fairness"] == pytest.approx(fairness_ratio(y, pred, pd.DataFrame(s), rate="fpr"))


@pytest.mark.parametrize("spec, message", [
    ("precision@threshold=1.5,ratio=tpr", r"task threshold target must be a probability in \[0, 1\], got 1.5"),
    ("precision@cutoff=0.5,ratio=tpr", r"task target must be one of \('tpr', 'fpr', 'top_k', 'threshold'\)"),
])
def test_a_bad_threshold_task_is_refused_by_name(spec, message):
    with pytest.raises(ValueError, match=message):
        Task.from_string(spec, sensitive=["sex"])


def test_per_group_decisions_refuse_a_fixed_threshold():
    task = Task.from_string("recall@threshold=0.3,ratio=tpr", sensitive=["sex"])
    with pytest.raises(ValueError, match="per-group decisions need a target each group meets"):
        task.evaluate([0, 1, 1, 0], [0.1, 0.9, 0.4, 0.2], {"sex": list("FFMM")}, decision="per-group")


def test_a_threshold_version_records_the_cut_itself():
    from fairops.registry._version_record import VersionRecord, validation_tags

    task = Task.from_string("precision@threshold=0.5,ratio=tpr", sensitive=["g"])
    y = np.array([1, 0, 1, 0] * 25)
    tags = validation_tags(task, y, np.linspace(0, 1, 100), {"g": np.array(["a"] * 50 + ["b"] * 50)})
    assert (tags["fairops.threshold"], tags["fairops.tie_share"]) == ("0.5", "1.0")
    record = VersionRecord.from_tags(tags)
    assert str(record.task) == str(task) and record.point.apply([0.5, 0.49]).tolist() == [1, 0]
