"""Input that cannot make a sound run is refused when it is read, by name, before any fit.

Labels are ordered as numbers when they are numbers (9 < 10; as text "10" < "9"), ``--positive``
picks the class, repeated column names are refused (pandas would rename them and train on both),
impossible tasks are refused when parsed, feature columns that are empty or hold an infinite value
are refused, and FairLOF names values so large that its squared distances would overflow.
"""

import re

import numpy as np
import pandas as pd
import pytest

from fairops.cli import main
from fairops.datasets import load_table
from fairops.fairlof import FairLOF
from fairops.fairlof._inputs import finite_scores
from fairops.metrics import Task


def _csv(tmp_path, frame, name="data.csv"):
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


@pytest.fixture()
def rows():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"x": rng.normal(size=40), "g": rng.choice(["a", "b"], 40),
                         "y": rng.choice([9, 10], 40)})


def test_numeric_labels_are_ordered_by_value_and_positive_picks_the_class(tmp_path, rows):
    path = _csv(tmp_path, rows)
    data = load_table(path, target="y", sensitive="g")
    assert data.task.positive == "y = 10" and data.y.tolist() == (rows["y"] == 10).astype(int).tolist()
    data = load_table(path, target="y", sensitive="g", positive="9")
    assert data.task.positive == "y = 9" and data.y.tolist() == (rows["y"] == 9).astype(int).tolist()
    with pytest.raises(ValueError, match=r"--positive '11' is not one of the values of target column 'y': \[9, 10\]"):
        load_table(path, target="y", sensitive="g", positive="11")
    text = _csv(tmp_path, rows.assign(y=rows["y"].map({9: ">50K", 10: "<=50K"})), "text.csv")
    assert load_table(text, target="y", sensitive="g", positive="<=50K").task.positive == "y = <=50K"


def test_repeated_column_names_are_refused_by_name(tmp_path, rows):
    path = tmp_path / "twice.csv"
    path.write_text("x,x,g,y\n" + "\n".join(f"{a},{a},{g},{y}" for a, g, y in rows[["x", "g", "y"]].values))
    with pytest.raises(ValueError, match=r"twice.csv names column\(s\) \['x'\] more than once"):
        load_table(path, target="y", sensitive="g")


@pytest.mark.parametrize("task, message", [
    ("precision@tpr=2,ratio=tpr", r"tpr target must be a rate in \(0, 1\], got 2"),
    ("precision@tpr=0,ratio=tpr", r"tpr target must be a rate in \(0, 1\], got 0"),
    ("precision@top_k=0.5,ratio=tpr", "top_k must be a whole number of rows >= 1, got 0.5"),
    ("precision@fpr=1.5,ratio=fpr", r"fpr target must be a rate in \[0, 1\], got 1.5")])
def test_impossible_tasks_are_refused_when_parsed(task, message):
    with pytest.raises(ValueError, match=message):
        Task.from_string(task, sensitive=["g"])


def test_the_cli_refuses_an_impossible_task_and_too_large_a_top_k_with_exit_2(tmp_path, rows, capsys):
    path = _csv(tmp_path, rows)
    common = ["tune", "--data", str(path), "--target", "y", "--sensitive", "g", "--project-dir", str(tmp_path / "p")]
    assert main([*common, "--task", "precision@tpr=2,ratio=tpr"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "tpr target must be a rate in (0, 1], got 2" in err
    with pytest.raises(ValueError, match=r"top_k=500 asks for more rows than data.csv holds \(40\)"):
        load_table(path, target="y", sensitive="g", task="precision@top_k=500,ratio=tpr")
    assert not (tmp_path / "p").exists()  # refused before anything was created


@pytest.mark.parametrize("column, message", [
    ([np.nan] * 40, "feature column 'z' is empty"), ([1.0] * 39 + [np.inf], r"'z' holds an infinite value \(row 39\)")])
def test_feature_columns_no_model_can_use_are_refused(tmp_path, rows, column, message):
    with pytest.raises(ValueError, match=message):
        load_table(_csv(tmp_path, rows.assign(z=column)), target="y", sensitive="g")


def test_fairlof_names_values_that_would_overflow_its_distances():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    X[7, 1] = 1e155
    with pytest.raises(ValueError, match=r"X\[7, 1\] = 1e\+155 is beyond \+-1e\+15"):
        FairLOF(n_neighbors=5).fit(X, sensitive_features=rng.integers(0, 2, 60))
    X[7, 1] = 0.0
    detector = FairLOF(n_neighbors=5, novelty=True).fit(X, sensitive_features=rng.integers(0, 2, 60))
    with pytest.raises(ValueError, match=r"X\[0, 0\] = 1e\+200"):
        detector.score_samples([[1e200, 0.0]], sensitive_features=[0])
    far = detector.score_samples([[1e14, 0.0]], sensitive_features=[0])
    assert np.isfinite(far).all() and far[0] < -1e6
    with pytest.raises(ValueError, match="row 1 scores inf"):
        finite_scores(np.array([1.0, np.inf]))


def test_served_integers_beyond_64_bits_are_refused_by_row():
    from fairops.models import InputSchema

    schema = InputSchema.from_frame(pd.DataFrame({"age": [30, 40], "hours": [1.5, 2.0]}))
    frame = pd.DataFrame({"age": pd.Series([30, 2**70], dtype=object), "hours": [1.0, 2.0]})
    with pytest.raises(ValueError,
                       match="column 'age' must hold 64-bit whole numbers; row 1 has 1180591620717411303424"):
        schema.check(frame)
    frame = pd.DataFrame({"age": [30, 31], "hours": pd.Series([1.0, 10**400], dtype=object)})
    with pytest.raises(ValueError, match="column 'hours' has a number too large for a float in row 1"):
        schema.check(frame)
    assert schema.check(pd.DataFrame({"age": [2**62], "hours": [1.0]}))["age"].tolist() == [2**62]


def _german_frame():
    from fairops.datasets import load_german

    data = load_german()
    return data.X.assign(label=data.y)


@pytest.mark.parametrize("edit, message", [
    (lambda f: f.assign(grp=[f"g{i}" for i in range(len(f))]),
     r"no fit can succeed: the validation part of the data holds no rows; .* \(1000 of the 1000 cells are that "
     "small\\); use fewer, larger groups"),
    (lambda f: f.assign(grp=f["sex"], label=[1, 1] + [0] * (len(f) - 2)),
     r"no fit can succeed: the validation part of the data \(200 rows\) holds no positive rows \(2 in all the "
     r"data\); every part needs both classes")])
def test_data_no_fit_can_succeed_on_is_refused_before_fitting(tmp_path, capsys, edit, message):
    path = _csv(tmp_path, edit(_german_frame()))
    project = tmp_path / "p"
    assert main(["tune", "--data", str(path), "--target", "label", "--sensitive", "grp", "--method", "rs",
                 "--families", "logistic_regression", "--project-dir", str(project)]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.out + captured.err
    assert re.search(message, captured.err), captured.err
    assert not (project / "optuna.db").exists()  # no study, no fit


def test_a_training_sample_of_one_class_is_refused_by_name():
    from fairops.datasets import load_german
    from fairops.tuning import FairnessObjective

    data = load_german()
    with pytest.raises(ValueError, match=r"the training part of the data \(1 rows\) holds no (negative|positive) rows"):
        FairnessObjective(data, families=["logistic_regression"], max_train_rows=1)


def test_top_k_is_checked_against_the_validation_rows(tmp_path, rows, capsys):
    path = _csv(tmp_path, rows)  # 40 rows: top_k=20 fits the file, not its 8 validation rows
    assert main(["tune", "--data", str(path), "--target", "y", "--sensitive", "g", "--task",
                 "precision@top_k=20,ratio=tpr", "--project-dir", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert re.search(r"top_k=20 asks for more rows than the validation part of the data \(where the threshold is "
                     r"set\) holds \(\d\)", err), err
