"""Registered models decide as they were chosen: `fairops tune --decision ...` then `mlflow models serve`."""

import contextlib
import io
import json
import os

import mlflow
import numpy as np
import pytest

from fairops.cli import main
from fairops.datasets import load_german
from fairops.metrics import GroupThresholds, OperatingPoint
from fairops.models import ServedDecision
from fairops.tuning import FairnessObjective
from tests.services import BIN, free_port, post_frame as post, start, stop, wait_ready

pytestmark = pytest.mark.slow

TUNE = ["tune", "--dataset", "german", "--method", "rs", "--families", "logistic_regression",
        "--max-train-rows", "300", "--no-progress", "--s-max", "2"]  # 9 random-search fits


def _tune(project, *options, codes=(0,)):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*TUNE, "--project-dir", str(project), *options]) in codes
    return out.getvalue()


def _test_rows(blind, seed=0):
    """The test rows of the tune's split, as a client sends them (the group column included)."""
    objective = FairnessObjective(load_german(), families=["logistic_regression"], max_train_rows=300, blind=blind,
                                  seed=seed)
    X, y, sensitive = objective.rows("test")
    rows = X.assign(sex=sensitive["sex"]) if blind else X
    return rows.astype({c: object for c in rows.columns if str(rows[c].dtype) == "category"}), y, sensitive


def _decision(model_uri):
    """The decision a registered model stores (its ``data/model.json``)."""
    with open(os.path.join(mlflow.artifacts.download_artifacts(model_uri), "data", "model.json")) as handle:
        return ServedDecision.from_dict(json.load(handle)["decision"])


@pytest.fixture(scope="module")
def per_group(tmp_path_factory):
    project = tmp_path_factory.mktemp("per-group")
    out = _tune(project, "--decision", "per-group", "--blind")
    uri = f"sqlite:///{project / 'mlflow.db'}"
    mlflow.set_tracking_uri(uri)
    port = free_port()
    log_path = project / "serve.log"
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "MLFLOW_TRACKING_URI": uri}
    process = start([str(BIN / "mlflow"), "models", "serve", "-m", "models:/fairops-german@champion",
                     "--env-manager", "local", "-p", str(port), "-h", "127.0.0.1"], env, open(log_path, "w"))
    try:
        wait_ready(f"http://127.0.0.1:{port}/ping", process, log_path)
        yield {"out": out, "url": f"http://127.0.0.1:{port}/invocations", "project": project,
               "model": mlflow.pyfunc.load_model("models:/fairops-german@champion"),
               "decision": _decision("models:/fairops-german@champion")}
    finally:
        stop(process)
        mlflow.set_tracking_uri(None)


def test_served_per_group_decisions_equal_in_process_ones(per_group):
    assert "decisions: one threshold per group of sex" in per_group["out"]
    rows, y, sensitive = _test_rows(blind=True)
    model = per_group["model"]
    local = model.predict(rows, params={"answer": "scores"})
    rule = per_group["decision"].rule
    assert isinstance(rule, GroupThresholds) and rule.columns == ("sex",)
    assert "sex" in [c.name for c in model.metadata.get_input_schema().inputs]
    # in process: each row at its group's validation threshold
    expected = rule.apply(local["probability"].to_numpy(), {"sex": sensitive["sex"].to_numpy()})
    assert np.array_equal(local["decision"].to_numpy(), expected)
    assert set(local["positive_class"]) == {"good credit"}
    status, answer = post(per_group["url"], rows, params={"answer": "scores"})  # mlflow models serve, asked for scores
    assert status == 200, answer
    served = answer["predictions"]
    assert [row["decision"] for row in served] == local["decision"].tolist()
    assert np.allclose([row["probability"] for row in served], local["probability"])


def test_served_model_refuses_a_missing_sensitive_column_and_an_unseen_group(per_group):
    rows, _, _ = _test_rows(blind=True)
    status, answer = post(per_group["url"], rows.drop(columns=["sex"]).head(3))
    # MLflow's own signature check or the model's schema, whichever comes first, names the column
    assert status == 400 and ("missing inputs ['sex']" in answer["message"]
                              or "lacks the required column(s) ['sex']" in answer["message"])
    status, answer = post(per_group["url"], rows.head(3).assign(sex="other"))
    assert status == 400 and "'other'" in answer["message"] and "\n" not in answer["message"].strip()


def test_single_decision_is_served_at_the_validation_threshold(tmp_path):
    _tune(tmp_path)
    mlflow.set_tracking_uri(f"sqlite:///{tmp_path / 'mlflow.db'}")
    try:
        model = mlflow.pyfunc.load_model("models:/fairops-german@champion")
        point = _decision("models:/fairops-german@champion").rule
    finally:
        mlflow.set_tracking_uri(None)
    rows, _, _ = _test_rows(blind=False)
    answer = model.predict(rows, params={"answer": "scores"})
    assert isinstance(point, OperatingPoint)
    assert np.array_equal(answer["decision"], (answer["probability"] > point.threshold)
                          | ((answer["probability"] == point.threshold) & (point.tie_share >= 0.5)))
    assert 0 < answer["decision"].mean() < 1


def test_the_gate_and_the_monitor_judge_per_group_decisions(per_group):
    """A second per-group tune with --promote: the version records its decision, the gate scores it one
    threshold per group on the test rows, and the monitor scores the decisions the model serves."""
    from mlflow.tracking import MlflowClient

    from fairops.metrics import fairness_ratio
    from fairops.registry._row_record_reading import read_record as read_rows
    from fairops.registry._version_record import read_record

    project = per_group["project"]
    # the gate may pass or refuse the candidate (exit 0 or 3); either way it scored the rows
    out = _tune(project, "--decision", "per-group", "--blind", "--promote", "--seed", "1", codes=(0, 3))
    assert "promotion gate on the test rows" in out
    mlflow.set_tracking_uri(f"sqlite:///{project / 'mlflow.db'}")  # another test may have reset it
    client = MlflowClient()
    record = read_record(client, "fairops-german", "2")
    assert record.decision == "per-group"
    rows, y, sensitive = _test_rows(blind=True, seed=1)
    # the gate scored the seed-1 test rows the champion (tuned at seed 0) was not trained or validated on
    champion = read_rows(client, "fairops-german", "1")
    fresh = ~np.isin(champion.columns.hashes(rows, y, sensitive), champion.seen)
    assert 0 < (~fresh).sum() < len(fresh)
    rows, y, sensitive = rows[fresh], y[fresh], sensitive[fresh]
    model = mlflow.pyfunc.load_model("models:/fairops-german/2")
    # the gate decides each row as the version serves it: its thresholds per group, set on validation
    decided = model.predict(rows, params={"answer": "scores"})["decision"].to_numpy()
    oracle = fairness_ratio(y, decided, {"sex": sensitive["sex"].to_numpy()})
    gate = client.search_runs([e.experiment_id for e in client.search_experiments()],
                              "tags.`fairops.role` = 'promotion'")[0]
    assert gate.data.metrics["candidate.fairops_tpr_ratio"] == pytest.approx(oracle)
    window = rows.assign(credit=y)
    data = project / "window.csv"
    window.to_csv(data, index=False)
    assert main(["monitor", "fairops-german", "--version", "2", "--data", str(data),
                 "--target", "credit", "--sensitive", "sex", "--window", str(len(window)),
                 "--project-dir", str(project)]) in (0, 1)
    monitored = client.search_runs([e.experiment_id for e in client.search_experiments()],
                                   "tags.`fairops.role` = 'monitoring'")[0]
    served = model.predict(rows)  # MLflow's loader answers the decision's label itself
    assert monitored.data.metrics["fairness"] == pytest.approx(fairness_ratio(y, served, {"sex": sensitive["sex"]}))
