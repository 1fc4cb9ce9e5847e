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
    assert task.as_params() == {"task": "precision@fpr=0.1,ratio=fpr", "task.positive_class": "re-offends within two years",
                                "task.metric": "precision", "task.target": "fpr=0.1", "task.fairness_ratio": "fpr",
                                "task.sensitive": "race", "task.groups": "lowest"}
    assert Task("recall", "top_k", 100, "tpr", "g").describe().startswith("positive class: label 1; accuracy: recall at top 100")
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
