"""The gate reads rows as the served model reads them, and a version's row record is bound to it.

Two versions of a logistic regression over an integer ``age`` and two numbers are registered in a real MLflow
store, each with the record of the rows it was trained and validated on (:func:`fairops.registry.log_rows`).
The gate then refuses, naming the row in the file, a row the served model refuses (``age`` 40.5); answers
the faults of a file (a spaced or renamed column, text among numbers, a sensitive column renamed) with one line
and exit status 2; leaves out the same rows whether or not the file carries pandas' index or an ID column; and
refuses a record that is missing, empty, another version's, of the older rule, or unsigned while the key is set.
"""

import hashlib
import json
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import mlflow
import numpy as np
import optuna
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient
from sklearn.linear_model import LogisticRegression

import fairops.tracking
from fairops.cli import main
from fairops.datasets._row_ids import HASH_RULE
from fairops.metrics import Task
from fairops.mlflow import sealing
from fairops.models import InputSchema
from fairops.registry import RecordColumns, Refit, VersionDetails, log_rows, register_best
from fairops.registry._row_record import ROWS_TAG, record_folder
from fairops.registry._version_record import validation_tags
from fairops.tracking import TrackingSession
from tests.mlflow_stores import empty_store_uri

pytestmark = pytest.mark.slow
NAME = "gate-rows"
FEATURES = ["age", "a", "b"]
TASK = Task.from_string("precision@tpr=0.5,ratio=tpr", sensitive=["sex"])
COLUMNS = RecordColumns(inputs=tuple(FEATURES), sensitive=("sex",), target="y")


def make_rows(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(20, 70, n), "a": rng.normal(size=n), "b": rng.normal(size=n)})
    y = (frame["a"] + 0.02 * (frame["age"] - 45) + rng.normal(scale=0.7, size=n) > 0).astype(int)
    return frame.assign(sex=rng.choice(["f", "m"], n), y=y)


def _register(uri: str, seed: int, *, record: bool = True):
    train, validation = make_rows(seed, 1500), make_rows(seed + 100, 1000)
    model = LogisticRegression(C=1.0 / (seed + 1)).fit(train[FEATURES], train["y"])
    tags = validation_tags(TASK, validation["y"].to_numpy(), model.predict_proba(validation[FEATURES])[:, 1],
                           validation[["sex"]])
    study = optuna.create_study(directions=["maximize", "maximize"], study_name=f"{NAME}-{seed}")
    study.add_trial(optuna.trial.create_trial(values=[0.8, 0.9], params={}, distributions={}))
    registered = register_best(study, NAME, rule={"trial": 0},
                               refit=Refit(lambda params, trial: model, pip_requirements=["fairops"],
                                           log_options={"input_schema": InputSchema.for_model(model, train[FEATURES])}),
                               details=VersionDetails(tags=tags), session=TrackingSession(uri, f"{NAME}-{seed}"))
    if record:
        seen = pd.concat([train, validation])
        log_rows(MlflowClient(uri), NAME, registered.version, columns=COLUMNS, tracking_uri=uri,
                 seen=COLUMNS.hashes(seen, seen["y"], seen[["sex"]]), held_out=[])
    return registered, pd.concat([train, validation])


def _registered_store(folder: Path) -> dict:
    """Versions 1 and 2 registered in a store in ``folder``, and the gate file: 1,000 fresh rows, then 500 rows
    version 1 trained on."""
    uri = empty_store_uri(folder / "mlflow.db")
    (v1, seen1), (v2, _) = _register(uri, 0), _register(uri, 1)
    gate = pd.concat([make_rows(7, 1000), seen1.iloc[:500]], ignore_index=True)
    return {"uri": uri, "client": MlflowClient(uri), "versions": [v1, v2], "gate": gate, "folder": folder}


@pytest.fixture(scope="module")
def registered(tmp_path_factory):
    """``_registered_store`` made once for the tests that add to its store but never rewrite its artifacts."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(sealing.KEY_ENV, raising=False)
        made = _registered_store(tmp_path_factory.mktemp("gate-rows"))
    mlflow.set_tracking_uri(None)
    return made


@pytest.fixture()
def store(request, tmp_path, monkeypatch):
    """A store of its own for each test: a copy of ``registered``'s database, whose versions read the artifacts
    of ``registered`` (a test adds runs and tags there, never rewrites a file of a version); or, for a test
    parametrized with ``"fresh"`` (it rewrites a version's record), versions registered anew in ``tmp_path``."""
    monkeypatch.delenv(sealing.KEY_ENV, raising=False)
    if getattr(request, "param", None) == "fresh":
        yield _registered_store(tmp_path)
    else:
        shared = request.getfixturevalue("registered")
        uri = f"sqlite:///{tmp_path}/mlflow.db"
        with closing(sqlite3.connect(shared["folder"] / "mlflow.db")) as source, \
                closing(sqlite3.connect(tmp_path / "mlflow.db")) as copy:
            source.backup(copy)
        yield {**shared, "uri": uri, "client": MlflowClient(uri), "gate": shared["gate"].copy(), "folder": tmp_path}
    mlflow.set_tracking_uri(None)


#: for the tests that rewrite a version's record: a store registered for the test alone
FRESH_STORE = pytest.mark.parametrize("store", ["fresh"], indirect=True)


def _promote(store, gate, **options):
    return fairops.registry.promote(NAME, gate[FEATURES], gate["y"], gate[["sex"]], max_accuracy_drop=1.0,
                                    fairness_line=None, tracking_uri=store["uri"], source="gate.csv", **options)


def _cli(store, frame, capsys, *extra, sensitive="sex", write=None):
    path = store["folder"] / "gate.csv"
    (write or (lambda f, p: f.to_csv(p, index=False)))(frame, path)
    code = main(["promote", NAME, "--data", str(path), "--target", "y", "--sensitive", sensitive,
                 "--tracking-uri", store["uri"], "--max-accuracy-drop", "1", *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_row_the_served_model_refuses_is_refused_by_its_row_and_never_scored(store):
    gate = store["gate"].copy()
    gate["age"] = gate["age"].astype(float)
    gate.loc[5, "age"] = 40.5
    with pytest.raises(ValueError, match=r"^column 'age' must hold whole numbers; row 5 of gate.csv has 40.5$"):
        _promote(store, gate)
    client = store["client"]
    assert client.get_model_version(NAME, "2").tags.get("fairops.gate") is None  # nothing was gated
    runs = client.search_runs([client.get_experiment_by_name(f"{NAME}-1").experiment_id],
                              "tags.`fairops.role` = 'promotion'")
    assert runs == []


@pytest.mark.parametrize("edit, words", [
    (lambda f: f.rename(columns={"age": "age "}),
     "gate.csv (version 2): input lacks the required column 'age'; it has 'age ', which differs only by "
     "surrounding spaces"),
    (lambda f: f.rename(columns={"age": "years"}), "gate.csv (version 2) lacks the model's input column(s) ['age']"),
    (lambda f: f.astype({"age": object}).assign(age=lambda g: g["age"].where(g.index != 17, "thirty")),
     "column 'age' must hold numbers; row 17 of gate.csv has 'thirty'"),
    (lambda f: f.assign(a=f["a"].astype(object).where(f.index != 3, "unknown")),
     "column 'a' must hold numbers; row 3 of gate.csv has 'unknown'"),
])
def test_file_faults_of_promote_are_one_line_and_exit_2(store, capsys, edit, words):
    code, _, err = _cli(store, edit(store["gate"]), capsys)
    assert code == 2 and err.count("\n") == 1 and words in err, err


def test_a_renamed_sensitive_column_is_one_line_and_exit_2(store, capsys):
    renamed = store["gate"].rename(columns={"sex": "gender"})
    code, _, err = _cli(store, renamed, capsys, sensitive="gender")
    assert code == 2 and err.count("\n") == 1, err
    assert "gate.csv lack(s) the sensitive column(s) ['sex'] of the task" in err and "given are ['gender']" in err
    code, _, err = _cli(store, renamed, capsys)
    assert code == 2 and "column(s) ['sex'] not in gate.csv" in err and err.count("\n") == 1


def _left_out(text: str) -> str:
    (line,) = re.findall(r"^  left out .*$", text, re.M)
    return line


@pytest.mark.parametrize("write, ignored", [
    (lambda f, p: f.to_csv(p), "'Unnamed: 0'"),  # pandas' default: the index as a first column
    (lambda f, p: f.assign(person_id=np.arange(len(f)) + 5000).to_csv(p, index=False), "'person_id'"),
])
def test_the_gate_leaves_out_the_same_rows_with_an_index_or_id_column(store, capsys, write, ignored):
    code, plain, err = _cli(store, store["gate"], capsys, "--candidate", "2")
    assert code in (0, 3), err
    baseline = _left_out(plain + err)
    assert "left out 500 of 1500 rows seen in training or validation (version 2: 0, version 1: 500;" in baseline
    store["client"].set_registered_model_alias(NAME, "challenger", "2")
    store["client"].set_registered_model_alias(NAME, "champion", "1")
    code, plain, err = _cli(store, store["gate"], capsys, "--candidate", "2", write=write)
    assert _left_out(plain + err) == baseline
    assert f"  ignored 1 column(s) of gate.csv the model does not read: {ignored}" in plain + err


def _rewrite_record(store, version: int, change):
    """Rewrite version's record.json (and files) as a writer of the artifact store could."""
    client, registered = store["client"], store["versions"][version - 1]
    folder = store["folder"] / f"record-{version}"
    folder.mkdir(exist_ok=True)
    files = Path(client.download_artifacts(registered.run_id, record_folder(registered.version), str(folder)))
    change(files)
    client.log_artifacts(registered.run_id, str(files), artifact_path=record_folder(registered.version))


@FRESH_STORE
def test_an_emptied_record_is_refused_naming_the_version(store):
    def empty(files):
        np.save(files / "seen.npy", np.zeros(0, dtype=np.uint64))
        document = json.loads((files / "record.json").read_text())
        document["seen"].update(rows=0, sha256=hashlib.sha256((files / "seen.npy").read_bytes()).hexdigest())
        (files / "record.json").write_text(json.dumps(document))

    _rewrite_record(store, 1, empty)
    with pytest.raises(ValueError, match=r"gate-rows version 1: its row record is empty \(no rows seen"):
        _promote(store, store["gate"])


@FRESH_STORE
def test_a_record_replaced_without_its_record_file_is_refused(store):
    _rewrite_record(store, 1, lambda files: np.save(files / "seen.npy", np.zeros(0, dtype=np.uint64)))
    with pytest.raises(ValueError, match="version 1: its row record's seen.npy does not match the sha256"):
        _promote(store, store["gate"])


@FRESH_STORE
def test_another_versions_record_is_refused_as_swapped(store):
    client, (v1, v2) = store["client"], store["versions"]
    folder = store["folder"] / "swap"
    folder.mkdir()
    files = client.download_artifacts(v1.run_id, record_folder(v1.version), str(folder))
    client.log_artifacts(v2.run_id, files, artifact_path=record_folder(v2.version))
    client.set_model_version_tag(NAME, v2.version, ROWS_TAG, client.get_model_version(NAME, v1.version).tags[ROWS_TAG])
    with pytest.raises(ValueError, match="gate-rows version 2: its row record names 'gate-rows' version '1': refused "
                                         "as swapped"):
        _promote(store, store["gate"])

    def renamed(files):  # the other version's record, made to name this one: its model manifest differs
        document = json.loads((files / "record.json").read_text())
        (files / "record.json").write_text(json.dumps({**document, "version": "2"}))

    _rewrite_record(store, 2, renamed)
    with pytest.raises(ValueError, match="version 2: its row record describes another model"):
        _promote(store, store["gate"])


def test_a_missing_or_older_record_is_refused_by_name_unless_unchecked(store, tmp_path):
    uri = store["uri"]
    third, _ = _register(uri, 2, record=False)  # the new challenger, without a record
    with pytest.raises(ValueError, match="gate-rows version 3 carries no record of the rows it was trained or "
                                         "validated on: register it with fairops tune"):
        _promote(store, store["gate"])
    store["client"].set_model_version_tag(NAME, third.version, ROWS_TAG, json.dumps(
        {"rule": HASH_RULE, "run_id": third.run_id, "path": "fairops_rows", "seen": 10, "held_out": 0}))
    with pytest.raises(ValueError, match="version 3 carries a row record of the older rule 'fairops-row-v1' .*record "
                                         "its rows again: "):
        _promote(store, store["gate"])
    verdict = _promote(store, store["gate"], row_record=False)
    assert "overlap with the rows either version was trained or validated on not checked" in verdict.text()


def test_with_the_key_set_an_unsigned_record_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(sealing.KEY_ENV, "k" * 32)
    uri = empty_store_uri(tmp_path / "mlflow.db")
    (v1, seen1), _ = _register(uri, 0), _register(uri, 1)
    gate = pd.concat([make_rows(7, 600), seen1.iloc[:100]], ignore_index=True)
    store = {"uri": uri, "client": MlflowClient(uri), "versions": [v1], "folder": tmp_path}
    verdict = _promote(store, gate)  # signed records are read
    assert "left out 100 of 700 rows" in verdict.text()

    def unsigned(files):
        document = json.loads((files / "record.json").read_text())
        document.pop(sealing.SIGNATURE_FIELD)
        (files / "record.json").write_text(json.dumps(document))

    _rewrite_record(store, 1, unsigned)
    store["client"].set_registered_model_alias(NAME, "champion", "2")
    with pytest.raises(ValueError, match="version 1: its row record is not signed and FAIROPS_MODEL_KEY is set"):
        fairops.registry.promote(NAME, gate[FEATURES], gate["y"], gate[["sex"]], candidate="1",
                                 tracking_uri=uri, max_accuracy_drop=1.0)
    mlflow.set_tracking_uri(None)
