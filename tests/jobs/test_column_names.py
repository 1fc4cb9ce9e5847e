"""Column names that differ only by surrounding spaces (``x1``, `` x1 ``) are refused by name, never merged.

fairops compares names exactly (see ``fairops._column_names``): a data file given to ``--data``, an input
schema and a request holding two such names are refused with one line naming both, and a request naming a
model column with spaces around it is told which name it sent. Through fairops' loader (and so
``fairops serve``, ``promote``, ``monitor``) the check runs before MLflow's signature drops the columns it
does not name; ``mlflow.pyfunc.load_model`` drops them first, which the last test records.
"""

import json
import tempfile

import mlflow
import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression

from fairops.cli import main
from fairops.datasets import load_table
from fairops.jobs import _serve as serve
from fairops.mlflow import classifier, loader
from fairops.mlflow._flavor_base import input_refused
from fairops.models import InputSchema


def _table(n=80, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x1": rng.normal(size=n), "z": rng.normal(size=n), "sex": rng.choice(["f", "m"], n),
                         "label": rng.choice(["no", "yes"], n)})


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_data_file_with_names_equal_once_stripped_is_refused_by_name(tmp_path, capsys, suffix):
    path = tmp_path / f"people{suffix}"
    frame = _table().assign(**{" x1 ": 1.0})
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    with pytest.raises(ValueError, match=r"has columns that differ only by surrounding spaces: 'x1' and ' x1 '; "
                                         r"rename them \(column names are compared exactly\)"):
        load_table(path, target="label", sensitive="sex")
    code = main(["tune", "--data", str(path), "--target", "label", "--sensitive", "sex", "--project-dir",
                 str(tmp_path / "project")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "'x1' and ' x1 '" in err
    assert not list((tmp_path / "project").glob("*.db"))  # refused before a store was made


def test_a_column_named_with_spaces_around_it_is_named_when_asked_for_without(tmp_path):
    path = tmp_path / "people.csv"
    _table().rename(columns={"sex": " sex"}).to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"column\(s\) \['sex'\] not in people.csv; .*; ' sex' differ\(s\) from "
                                         r"'sex' only by surrounding spaces"):
        load_table(path, target="label", sensitive="sex")
    assert list(load_table(path, target="label", sensitive=[" sex"]).sensitive.columns) == [" sex"]  # exact name


def test_an_input_schema_refuses_names_equal_once_stripped():
    with pytest.raises(ValueError, match="columns 'x1' and 'x1 ' differ only by surrounding spaces"):
        InputSchema.from_frame(pd.DataFrame({"x1": [1.0], "x1 ": [2.0]}))


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    X = _table()[["x1", "z"]]
    model = LogisticRegression().fit(X, X["x1"] > 0)
    path = tmp_path_factory.mktemp("names") / "model"
    classifier.save_model(model, path, input_example=X.head(2), pip_requirements=[])
    return path, model, X


CLASH = "input has columns 'x1' and ' x1 ', which differ only by surrounding spaces; send each column once, " \
        "named exactly as the model's"
NEAR = "input lacks the required column 'x1'; it has ' x1 ', which differs only by surrounding spaces " \
       "(names are compared exactly)"


def test_requests_through_fairops_loader_name_both_columns(saved):
    path, model, X = saved
    served = loader.load_model(str(path))
    row = X.head(1)
    for frame, message in ((row.assign(**{" x1 ": 9.0}), CLASH), (row.rename(columns={"x1": " x1 "}), NEAR)):
        with pytest.raises(type(input_refused("")), match="^" + message.replace("(", r"\(").replace(")", r"\)")):
            served.predict(frame)
    # a name that strips to no model column is an extra column like any other
    assert np.isclose(served.predict(row.assign(**{" other": 1, "other": 2}))["probability"][0],
                      model.predict_proba(row)[0, 1])


def test_fairops_serve_answers_400_naming_both_columns(saved):
    from tests.serving.test_serve_formats import _post_in_process

    path, _, X = saved
    with tempfile.TemporaryDirectory() as folder:
        app = serve.guarded_app(serve.local_model(str(path), None, folder))
        body = {"dataframe_split": X.head(1).assign(**{" x1 ": 9.0}).to_dict(orient="split", index=False)}
        status, answer = _post_in_process(app, json.dumps(body).encode(), "application/json")
        assert (status, answer["message"]) == (400, CLASH)
        status, answer = _post_in_process(app, b" x1 ,z\n0.5,0.5\n", "text/csv")
        assert (status, answer["message"]) == (400, NEAR)


def test_mlflows_own_loader_drops_the_spaced_column_before_fairops_sees_it(saved):
    """Recorded, not endorsed: MLflow's signature check ignores columns it does not name (docs/mlflow/flavors.md)."""
    path, model, X = saved
    row = X.head(1)
    answer = mlflow.pyfunc.load_model(str(path)).predict(row.assign(**{" x1 ": 9.0}), params={"answer": "scores"})
    assert np.isclose(answer["probability"][0], model.predict_proba(row)[0, 1])
