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
