"""A file with missing values tunes end to end: no fit fails on them, the summary says how each column's are
taken, rows without a label are left out and counted, and the served champion decides rows missing a value
where the training rows had missing ones (and refuses one elsewhere, naming the column).

The file is 3,000 rows of Adult with its own missing values kept (``?`` in workclass, occupation and
native-country: ``load_adult(keep_missing=True)``), a tenth of ``age`` made missing, 40 labels and 25 race
values removed (those rows made a group of their own with ``--missing-group``).
"""

import contextlib
import io
import re

import mlflow
import numpy as np
import pytest

from fairops.cli import main
from fairops.datasets import load_adult
from fairops.models._packaging import as_client_rows
from tests.services import post_frame, serving_thread

pytestmark = pytest.mark.slow  # a 22-fit Fairband iteration (s_max 2) over five families


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    folder = tmp_path_factory.mktemp("missing")
    data = load_adult(keep_missing=True)
    rng = np.random.default_rng(0)
    rows = rng.choice(len(data.y), 3000, replace=False)
    frame = data.X.iloc[rows].reset_index(drop=True).astype(object)
    frame["age"] = frame["age"].astype(float)
    frame.loc[rng.random(3000) < 0.1, "age"] = np.nan
    frame["income"] = np.where(data.y[rows] == 1, "<=50K", ">50K")
    frame.loc[rng.choice(3000, 40, replace=False), "income"] = None
    frame.loc[rng.choice(3000, 25, replace=False), "race"] = None
    path = folder / "adult_missing.csv"
    frame.to_csv(path, index=False)
    assert frame[["workclass", "occupation", "native-country"]].isna().any().all()
    project = folder / "project"
    out = io.StringIO()
    argv = ["tune", "--data", str(path), "--target", "income", "--positive", "<=50K", "--sensitive", "sex,race",
            "--missing-group", "unknown", "--families",
            "lightgbm,logistic_regression,scaff_forest,mlp,exponentiated_gradient",
            "--max-train-rows", "1200", "--s-max", "2", "--project-dir", str(project), "--no-progress"]
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return {"code": code, "out": out.getvalue(), "frame": frame, "project": project, "folder": folder}


def test_no_fit_fails_on_missing_values_and_the_summary_says_how_they_were_taken(tuned):
    out = tuned["out"]
    assert tuned["code"] == 0, out
    assert "left out: 40 rows of" in out and "whose label (income) is missing" in out
    failed = re.findall(r"^failed fits: .*$", out, re.M)
    assert not failed or "error" not in failed[0], failed  # constant scores may fail a fit, an error may not
    counts = tuned["frame"].drop(columns="income")[tuned["frame"]["income"].notna()].isna().sum()
    for column in ("age", "workclass", "occupation", "native-country"):  # before the fits, and in the summary
        lines = re.findall(rf"^  {column}: ([\d,]+) of 2,960 rows .*$", out, re.M)
        assert len(lines) == 2 and {int(line.replace(",", "")) for line in lines} == {counts[column]}
    age = re.findall(r"^  age: .*$", out, re.M)[-1]
    assert "lightgbm, scaff_forest, exponentiated_gradient over lightgbm split on them" in age
    assert "impute the median and add a missing-value indicator" in age


def test_the_served_champion_decides_rows_missing_values_it_was_trained_with(tuned):
    assert tuned["code"] == 0, tuned["out"]
    uri = f"sqlite:///{tuned['project']}/mlflow.db"
    mlflow.set_tracking_uri(uri)
    try:
        path = mlflow.artifacts.download_artifacts(artifact_uri="models:/fairops-adult_missing@champion",
                                                   dst_path=str(tuned["folder"] / "champion"))
    finally:
        mlflow.set_tracking_uri(None)
    frame = tuned["frame"]
    rows = as_client_rows(frame[frame["income"].notna()].drop(columns="income").head(4).copy())
    rows["race"] = rows["race"].fillna("unknown")
    holes = rows.assign(age=None, workclass=None)
    with serving_thread(path) as url:
        status, answer = post_frame(f"{url}/invocations", holes, {"answer": "scores"})  # what fairops serve answers
        assert status == 200, answer
        assert [set(row) for row in answer["predictions"]] == [{"probability", "positive_class", "decision"}] * 4
        assert all(0 <= row["probability"] <= 1 and row["decision"] in (0, 1) for row in answer["predictions"])
        status, answer = post_frame(f"{url}/invocations", rows.assign(**{"hours-per-week": None}))
    assert status == 400
    assert answer["message"] == ("column 'hours-per-week' has a missing value in row 0; this model cannot take "
                                 "missing values")
