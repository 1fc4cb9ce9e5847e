"""The gate leaves out rows a version was trained or validated on (by the row record fairops tune keeps
with it), says so, and refuses by default a candidate the rows show to be below the four-fifths line."""

import json

import mlflow
import numpy as np
import pytest
from mlflow.tracking import MlflowClient

import fairops.tracking
from fairops.metrics import Task
from fairops.registry._promotion import gate_checks
from fairops.registry._row_record import RecordColumns, log_rows, record_folder
from fairops.registry._row_record_reading import read_record
from tests.lifecycle_models import FEATURES, register, rows
from tests.mlflow_stores import empty_store_uri

COLUMNS = RecordColumns(inputs=tuple(FEATURES), sensitive=("sex",), target="y")

NAME = "fresh-rows"


@pytest.fixture()
def store(tmp_path):
    uri = empty_store_uri(tmp_path / "mlflow.db")
    versions = [register(uri, NAME, C=1.0, seed=0), register(uri, NAME, C=0.5, seed=1)]
    yield {"uri": uri, "client": MlflowClient(uri), "versions": versions}
    mlflow.set_tracking_uri(None)


def _record(store, version: int, seen_rows_of):
    registered = store["versions"][version - 1]
    hashes = COLUMNS.hashes(seen_rows_of, seen_rows_of["y"], seen_rows_of[["sex"]])
    log_rows(store["client"], NAME, registered.version, columns=COLUMNS, seen=hashes, held_out=hashes[:0],
             tracking_uri=store["uri"])


def _seen(store, version):
    return read_record(store["client"], NAME, version, tracking_uri=store["uri"]).seen


@pytest.mark.slow  # over 5 s in the quick tier
def test_rows_a_version_saw_are_left_out_and_named(store):
    gate = rows(8, 3000)
    _record(store, 1, gate.iloc[:500])  # the champion trained on the first 500 gate rows
    _record(store, 2, gate.iloc[400:1000])  # the challenger on 600, 100 of them the champion's too
    assert len(_seen(store, "2")) == 600
    verdict = fairops.registry.promote(NAME, gate[FEATURES], gate["y"], gate[["sex"]], max_accuracy_drop=1.0,
                                       fairness_line=0, tracking_uri=store["uri"])
    text = verdict.text()
    assert ("  left out 1000 of 3000 rows seen in training or validation (version 2: 600, version 1: 500; "
            "rows 0, 1, 2, 3, 4, 5, 6, 7, ...): the gate scores the other 2000") in text.splitlines(), text
    assert "  on 2000 gate rows, each decided as the version serves it (sex: " in text
    gate_json = json.loads(open(mlflow.artifacts.download_artifacts(
        run_id=verdict.run_id, artifact_path="gate.json", tracking_uri=store["uri"])).read())
    assert (gate_json["rows"], gate_json["rows_left_out"], gate_json["rows_seen_by"]) == \
        (2000, 1000, {"2": 600, "1": 500})


@pytest.mark.slow  # over 5 s in the quick tier
def test_a_gate_on_rows_every_version_saw_is_an_error(store):
    gate = rows(8, 400)
    _record(store, 1, gate)
    with pytest.raises(ValueError, match=r"every one of the 400 rows was seen in training or validation "
                                         r"\(version 2: 0, version 1: 400\): give labelled rows neither model saw"):
        fairops.registry.promote(NAME, gate[FEATURES], gate["y"], gate[["sex"]], tracking_uri=store["uri"])


@pytest.mark.slow  # over 5 s in the quick tier
def test_a_version_without_a_record_is_refused_unless_the_overlap_goes_unchecked_and_a_broken_record_refused(
        store, tmp_path):
    gate = rows(8, 1000)
    client = store["client"]
    registered = store["versions"][1]
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "record.json").write_text("{not json")
    client.log_artifacts(registered.run_id, str(empty), artifact_path=record_folder(registered.version))
    with pytest.raises(ValueError, match="fresh-rows version 2: its row record record.json: it is not valid JSON"):
        fairops.registry.promote(NAME, gate[FEATURES], gate["y"], gate[["sex"]], tracking_uri=store["uri"])
    verdict = fairops.registry.promote(NAME, gate[FEATURES], gate["y"], gate[["sex"]], max_accuracy_drop=1.0,
                                       tracking_uri=store["uri"], row_record=False)
    assert "  overlap with the rows either version was trained or validated on not checked (--no-row-record)" \
        in verdict.text()


def test_a_tampered_row_record_is_refused(store, tmp_path):
    _record(store, 1, rows(8, 50))
    registered, client = store["versions"][0], store["client"]
    bad = tmp_path / "seen.npy"
    np.save(bad, np.arange(5, dtype=np.float64))
    client.log_artifact(registered.run_id, str(bad), artifact_path=record_folder(registered.version))
    with pytest.raises(ValueError, match="its row record's seen.npy does not match the sha256 the record gives"):
        _seen(store, "1")


def _scores(value, lower, upper):
    return {"fairops_precision": 0.8, "fairops_tpr_ratio": value, "fairops_tpr_ratio_lower": lower,
            "fairops_tpr_ratio_upper": upper}


@pytest.mark.parametrize("candidate, refused", [
    (_scores(0.0, 0.0, 0.43), True),  # the rows show it below 4/5
    (_scores(0.5, 0.15, 1.0), False),  # a 0.15 lower bound the rows cannot tell from fair: not refused on noise
    (_scores(0.7, 0.6, 0.8), False),
])
def test_the_default_line_refuses_only_what_the_rows_show_below_four_fifths(candidate, refused):
    task = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])
    metrics, thresholds = gate_checks(task, candidate, None, fairness_line=0.8)
    assert list(thresholds) == ["fairness_upper"]
    assert (metrics["fairness_upper"] < thresholds["fairness_upper"].threshold) == refused
