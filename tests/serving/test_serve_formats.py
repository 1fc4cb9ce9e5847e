"""Every request format of MLflow's scoring server, malformed, through `fairops serve` over HTTP: a one-line 400.

A classifier with whole-number, number and category columns is saved and served by the real command on
loopback. For each format MLflow accepts (``dataframe_split``, ``dataframe_records``, ``instances``,
``inputs``, CSV) a well-formed body answers 200 with the model's probabilities, and each malformed body
answers 400 whose body is one line of JSON: a message naming the problem, no stack trace, no echo of the
request. The bodies MLflow's own app would score silently wrong (a ragged CSV row, a split index longer
than its data) are checked against that app in process first.
"""

import asyncio
import json
import os
import sys
import urllib.error
import urllib.request

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from fairops.mlflow import classifier
from fairops.mlflow._scoring_app import csv_as_json
from fairops.models import InputSchema
from tests.services import free_port, start, stop, wait_ready

JSON, CSV = "application/json", "text/csv"

# (format, body, content type, words the one-line message must hold)
MALFORMED = [
    ("dataframe_split", b'{"dataframe_split": {"columns": ["age", "hours", "job"], "data": "oops"}}', JSON,
     "not a valid dataframe representation in 'split' format"),
    ("dataframe_split", b'{"dataframe_split": {"columns": ["age", "hours", "job"], "data": [[30, 1.5]]}}', JSON,
     "3 columns passed, passed data had 2 columns"),
    ("dataframe_split", b'{"dataframe_split": 5}', JSON, "Dataframe split format must be a dictionary"),
    ("dataframe_split", b'{"dataframe_split": {"columns": ["age", "hours", "job"], "data": [[30, 1.5, "a"]], '
                        b'"index": [0, 1]}}', JSON, "1 row(s) of 'data' and 2 'index' labels"),
    ("dataframe_split", b'{"dataframe_split": {"columns": ["age", "hours", "job"], "data": [[30.5, 1.5, "a"]]}}',
     JSON, "column 'age' must hold whole numbers; row 0 has 30.5"),
    ("dataframe_split", b'{"dataframe_split": ', JSON, "Ensure that input is a valid JSON formatted string"),
    ("dataframe_split", b'{"dataframe_split": {"columns": ["age", " age", "hours", "job"], "data": [[30, 31, 1.5, '
                        b'"a"]]}}', JSON,
     "input has columns 'age' and ' age', which differ only by surrounding spaces"),
    ("dataframe_records", b'{"dataframe_records": 5}', JSON, "must be a list of records"),
    ("dataframe_records", b'{"dataframe_records": [{"age": 30, "hours": 1.5, "job": "a"}, 3]}', JSON,
     "not a valid dataframe representation in 'records' format"),
    ("dataframe_records", b'{"dataframe_records": [1, 2]}', JSON,
     "input lacks the required column(s) ['age', 'hours', 'job']"),
    ("dataframe_records", b'{"dataframe_records": [{"age": 30, "hours": 1.5, "job": "unseen"}]}', JSON,
     "column 'job' has the category 'unseen' in row 0, unseen in training"),
    ("instances", b'{"instances": [[1, 2], [3]]}', JSON, "input lacks the required column(s)"),
    ("instances", b'{"instances": [{"age": 30}, {"hours": [1, 2]}]}', JSON, "Invalid object type"),
    ("instances", b'{"instances": 5}', JSON, "input lacks the required column(s)"),
    ("inputs", b'{"inputs": {"age": [30], "hours": [1.5, 2.5], "job": ["a"]}}', JSON,
     "All arrays must be of the same length"),
    ("inputs", b'{"inputs": "abc"}', JSON, "input lacks the required column(s)"),
    ("inputs", b'{"inputs": {"age": [30], "hours": ["many"], "job": ["a"]}}', JSON,
     "could not convert string to float: 'many'"),
    ("any", b'{"inputs": [1], "instances": [1]}', JSON, "exactly one of the input fields"),
    ("any", b"\xff\xfe garbage", JSON, "Ensure that input is a valid JSON formatted string"),
    ("csv", b"age,hours,job\n30,1.5,a,extra\n", CSV, "CSV data row 1 has 4 field(s), its header names 3 columns"),
    ("csv", b"age,hours,job\n30,1.5\n", CSV, "CSV data row 1 has 2 field(s), its header names 3 columns"),
    ("csv", b"age,hours,job\n30,many,a\n", CSV, "Failed to convert column hours to type 'float64'"),
    ("csv", b"", CSV, "the CSV body cannot be read as a table: No columns to parse from file"),
    ("csv", b"age,hours,job\n30,1.5,unseen\n", CSV,
     "column 'job' has the category 'unseen' in row 0, unseen in training"),
    ("csv", b"\xff\xfe\x00garbage", CSV, "the CSV body is not UTF-8 text"),
    ("csv", b"age,hours,job\n30.5,1.5,a\n", CSV, "column 'age' must hold whole numbers; row 0 has 30.5"),
    ("csv", b"age, hours,job\n30,1.5,a\n", CSV,
     "input lacks the required column 'hours'; it has ' hours', which differs only by surrounding spaces"),
    # pandas would read the second 'age' as 'age.1', dropped as an extra column: the first scored alone
    ("csv", b"age,hours,job,age\n30,1.5,a,31\n", CSV,
     "the CSV header names column 'age' 2 times; send each column once"),
    # one text value makes pandas read the whole column as text: the row named is that value's
    ("csv", b"age,hours,job\n30,1.5,a\nthirty,1.5,a\n", CSV, "column 'age' must hold numbers; row 1 has 'thirty'"),
]


def _train():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"age": rng.integers(20, 70, 300), "hours": rng.normal(40, 8, 300),
                      "job": pd.Categorical(rng.choice(["a", "b", "c"], 300))})
    y = (X["age"] + rng.normal(0, 10, 300) > 45).astype(int)
    model = make_pipeline(ColumnTransformer([("job", OneHotEncoder(), ["job"])], remainder="passthrough"),
                          LogisticRegression(max_iter=500)).fit(X, y)
    return model, X


def _well_formed(X):
    rows = X.head(2)
    split = rows.to_dict(orient="split", index=False)
    return {
        "dataframe_split": (json.dumps({"dataframe_split": split}).encode(), JSON),
        "dataframe_records": (json.dumps({"dataframe_records": rows.to_dict(orient="records")}).encode(), JSON),
        "instances": (json.dumps({"instances": rows.to_dict(orient="records")}).encode(), JSON),
        "inputs": (json.dumps({"inputs": rows.to_dict(orient="list")}).encode(), JSON),
        "csv": (rows.to_csv(index=False).encode(), CSV),
    }


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    model, X = _train()
    path = tmp_path_factory.mktemp("formats") / "model"
    classifier.save_model(model, path, input_example=X.head(2), pip_requirements=[],
                          input_schema=InputSchema.for_model(model, X))
    return path, model, X


def _mlflow_app(path):
    import mlflow
    from mlflow.pyfunc import scoring_server

    return scoring_server.init(mlflow.pyfunc.load_model(str(path)))


def _post_in_process(app, body: bytes, content_type: str):
    sent, parts = [], [{"type": "http.request", "body": body, "more_body": False}]

    async def receive():
        return parts.pop(0) if parts else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/invocations", "query_string": b"", "http_version": "1.1",
             "headers": [(b"content-type", content_type.encode())], "scheme": "http", "root_path": "",
             "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1)}
    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, json.loads(b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body"))


def test_mlflows_own_app_answers_these_bodies_with_traces_echoes_or_wrong_rows(saved):
    """Why the server needs the guard: what ``mlflow models serve`` answers for some of the bodies above."""
    path, model, X = saved
    app = _mlflow_app(path)
    # any CSV, well-formed too: MLflow asks the signature for pandas dtypes, and a column of type any has none
    status, answer = _post_in_process(app, _well_formed(X)["csv"][0], CSV)
    assert status == 400 and "not DataType" in answer["message"]
    assert "Traceback (most recent call last)" in answer["stack_trace"]
    status, answer = _post_in_process(app, b'{"dataframe_split": ', JSON)
    assert status == 400 and "\n" in answer["message"]  # the body quoted back, over several lines
    # one field more than the header: pandas (MLflow's reader and fairops serve's) takes the first as the row's
    # index and shifts the rest one column left
    rows = json.loads(csv_as_json(b"age,hours,job\n99,30,1.5,a\n", ("job",)))["dataframe_split"]["data"]
    assert rows == [[30, 1.5, "a"]]
    status, answer = _post_in_process(app, json.dumps({"dataframe_split": {
        "columns": ["age", "hours", "job"], "data": [[30, 1.5, "a"]], "index": [0, 1, 2]}}).encode(), JSON)
    assert status == 200 and len(answer["predictions"]) == 3  # one row sent, three scored


def test_csv_rows_reach_the_model_as_sent():
    rng = np.random.default_rng(4)
    numbers = rng.normal(size=2000) * 10.0 ** rng.integers(-300, 300, 2000)
    frame = pd.DataFrame({"n": numbers, "w": rng.integers(-2**62, 2**62, 2000), "t": rng.choice(["1", "x"], 2000)})
    split = json.loads(csv_as_json(frame.to_csv(index=False).encode(), ("t",)))["dataframe_split"]
    assert split["columns"] == ["n", "w", "t"]
    assert [row[0] for row in split["data"]] == numbers.tolist()  # every digit of every float
    assert [row[1] for row in split["data"]] == frame["w"].tolist() and {row[2] for row in split["data"]} == {"1", "x"}
    assert json.loads(csv_as_json(b"n,t\n,\nNA,null\n", ("t",)))["dataframe_split"]["data"] == [[None, None]] * 2


@pytest.fixture(scope="module")
def served(saved, tmp_path_factory):
    path = saved[0]
    port = free_port()
    log = tmp_path_factory.mktemp("formats-log") / "serve.log"
    command = [sys.executable, "-m", "fairops.cli", "serve", str(path), "--port", str(port)]
    with open(log, "w") as handle:
        process = start(command, dict(os.environ), handle)
    try:
        wait_ready(f"http://127.0.0.1:{port}/ping", process, log)
        yield f"http://127.0.0.1:{port}/invocations"
    finally:
        stop(process)


def _post(url, body: bytes, content_type: str):
    """``(status, raw body)`` of one POST over HTTP."""
    request = urllib.request.Request(url, data=body, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.mark.slow
def test_every_format_scores_well_formed_rows_over_http(served, saved):
    _, model, X = saved
    expected = model.predict_proba(X.head(2))[:, 1]
    for name, (body, content_type) in _well_formed(X).items():
        status, raw = _post(served, body, content_type)
        assert status == 200, (name, raw)
        probability = [row["probability"] for row in json.loads(raw)["predictions"]]
        np.testing.assert_allclose(probability, expected, rtol=1e-9, err_msg=name)


@pytest.mark.slow
@pytest.mark.parametrize("form, body, content_type, words", MALFORMED,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(MALFORMED)])
def test_a_malformed_body_of_every_format_answers_400_in_one_line(served, form, body, content_type, words):
    status, raw = _post(served, body, content_type)
    assert status == 400, raw
    assert b"\n" not in raw.strip(), raw  # one line on the wire
    answer = json.loads(raw)
    assert "stack_trace" not in answer and "Traceback" not in answer["message"]
    assert words in answer["message"], answer["message"]
    assert "\n" not in answer["message"] and len(answer["message"]) <= 500
