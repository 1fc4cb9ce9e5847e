"""``fairops monitor`` answers every fault of its file with one line and exit status 2: a spaced or renamed
column (before any monitoring run starts), text among numbers and a value the served model refuses (by its row
in the file, never scored), a time column that is not times; ISO text times order the windows."""

import mlflow
import numpy as np
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from fairops.cli import main
from tests.lifecycle_models import register, rows

pytestmark = pytest.mark.slow
NAME = "monitored"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("monitor-faults")
    uri = f"sqlite:///{folder}/mlflow.db"
    register(uri, NAME, C=1.0, seed=0)
    yield {"uri": uri, "folder": folder}
    mlflow.set_tracking_uri(None)


def _monitor(store, frame, capsys, *extra, sensitive="sex", name="rows.csv"):
    path = store["folder"] / name
    frame.to_csv(path, index=False)
    code = main(["monitor", NAME, "--data", str(path), "--target", "y", "--sensitive", sensitive, "--window", "500",
                 "--tracking-uri", store["uri"], *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _monitoring_runs(store) -> int:
    client = MlflowClient(store["uri"])
    experiments = [e.experiment_id for e in client.search_experiments()]
    return len(client.search_runs(experiments, "tags.`fairops.role` = 'monitoring'"))


@pytest.mark.parametrize("edit, sensitive, words", [
    (lambda f: f.rename(columns={"a": "a "}), "sex",
     "rows.csv: input lacks the required column 'a'; it has 'a ', which differs only by surrounding spaces"),
    (lambda f: f.rename(columns={"a": "alpha"}), "sex", "rows.csv lacks the model's input column(s) ['a']"),
    (lambda f: f.rename(columns={"sex": "gender"}), "sex", "column(s) ['sex'] not in rows.csv"),
    (lambda f: f.rename(columns={"sex": "gender"}), "gender", "sensitive column(s) ['gender'] are not attributes"),
])
def test_a_spaced_or_renamed_column_is_one_line_before_any_run(store, capsys, edit, sensitive, words):
    before = _monitoring_runs(store)
    code, _, err = _monitor(store, edit(rows(3, 1500)), capsys, sensitive=sensitive)
    assert code == 2 and err.count("\n") == 1 and words in err, err
    assert _monitoring_runs(store) == before


@pytest.mark.parametrize("column, value, words", [
    ("a", "unknown", "column 'a' must hold numbers; row 1234 of rows.csv has 'unknown'"),
    ("b", np.inf, "column 'b' must hold finite numbers; row 1234 of rows.csv has inf"),
])
def test_a_row_the_served_model_refuses_is_named_by_its_row_in_the_file(store, capsys, column, value, words):
    frame = rows(3, 1500)
    frame[column] = frame[column].astype(object)
    frame.loc[1234, column] = value  # in the third window of 500
    code, out, err = _monitor(store, frame, capsys)
    assert code == 2 and err.count("\n") == 1 and words in err, err
    assert "window 3:" not in out  # never scored


def test_iso_text_times_order_the_windows_as_their_instants(store, capsys):
    frame = rows(3, 1500)
    instants = pd.Timestamp("2025-03-01T00:00:00Z") + pd.to_timedelta(np.arange(1500), unit="min")
    text = [t.strftime("%Y-%m-%dT%H:%M:%SZ") if i % 3 else t.tz_convert("Europe/Paris").isoformat()
            for i, t in enumerate(instants)]
    code, ordered, err = _monitor(store, frame, capsys)
    assert code in (0, 3), err
    shuffled = frame.assign(when=text).sample(frac=1.0, random_state=1)
    code, out, err = _monitor(store, shuffled, capsys, "--time-column", "when", name="shuffled.csv")
    assert code in (0, 3), err
    assert "ignored 1 column(s) of shuffled.csv the model does not read: 'when'" in out
    window_lines = [[line for line in text.splitlines() if line.startswith("window ")] for text in (ordered, out)]
    assert len(window_lines[0]) == 3 and window_lines[0] == window_lines[1]
    code, _, err = _monitor(store, frame.assign(when=["2025-02-30"] + text[1:]), capsys, "--time-column", "when")
    assert code == 2 and "time column 'when' of rows.csv holds '2025-02-30' in row 0" in err and err.count("\n") == 1
