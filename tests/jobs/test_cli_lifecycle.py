"""`fairops tune` when the registered model already has a champion: the new version becomes @challenger,
the output names the promote command (which, like the UI command, runs pasted from any folder), and
`--promote` runs the gate at once on the test rows.

Each test registers its champion beside the fits of one German tune made once (``conftest.german_fits``), then
runs the tune's command, which finds the fits done and refits, registers and gates its pick."""

import contextlib
import io
import os
import re
import subprocess
from types import SimpleNamespace

import numpy as np
import optuna
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from fairops.cli import main
from fairops.datasets import load_german
from fairops.jobs._tune.registration import lifecycle_tags
from fairops.models import InputSchema
from fairops.models._packaging import servable as _servable
from fairops.registry import RecordColumns, Refit, VersionDetails, log_rows
from fairops.registry._promotion import GATE_TAG
from fairops.registry._registration import register_best
from fairops.tracking import TrackingSession
from fairops.tuning import FairnessObjective
from tests.conftest import GERMAN_TUNE, copy_project
from tests.services import free_port, stop, wait_ready

pytestmark = pytest.mark.slow
NAME = "fairops-german"
CLEAN_PATH = "/usr/local/bin:/usr/bin:/bin"  # a fresh shell's PATH
TUNE = GERMAN_TUNE


def _champion_by_hand(uri: str):
    """Version 1: a logistic regression on German credit, registered as fairops tune registers its pick."""
    objective = FairnessObjective(load_german(), families=["logistic_regression"], seed=0, max_train_rows=300)
    params = {"lr_C": 1.0, "lr_penalty": "l2", "lr_tol": 1e-4, "lr_max_iter": 200}
    X_train, _, _ = objective.rows("train")
    model = _servable(objective.refit(SimpleNamespace(params=params, number=0)), X_train)
    study = optuna.create_study(directions=["maximize", "maximize"], study_name="by-hand")
    study.add_trial(optuna.trial.create_trial(values=[0.9, 0.9], params={}, distributions={}))
    registered = register_best(study, NAME, rule={"trial": 0},
                               refit=Refit(lambda p, t: model, pip_requirements=["fairops"],
                                           log_options={"input_schema": InputSchema.for_model(model, X_train)}),
                               details=VersionDetails(tags=lifecycle_tags(objective, model, 0)),
                               session=TrackingSession(uri, "by-hand"))
    # the rows it was trained and validated on, as fairops tune records them for the gate
    parts = [objective.rows(part) for part in ("train", "validation")]
    columns = RecordColumns(inputs=tuple(X_train.columns), sensitive=("sex",), target="label")
    seen = columns.hashes(pd.concat([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                          pd.concat([p[2] for p in parts]))
    log_rows(MlflowClient(uri), NAME, registered.version, columns=columns, seen=seen, held_out=[], tracking_uri=uri)
    return registered


def test_a_tune_meeting_a_champion_registers_the_challenger_and_gates_it(german_fits, tmp_path):
    project = copy_project(german_fits, tmp_path / "project")
    uri = f"sqlite:///{project}/mlflow.db"
    assert _champion_by_hand(uri).version == "1"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([*TUNE, "--project-dir", str(project), "--promote"])
    text = out.getvalue()
    client = MlflowClient(uri)
    assert "registered: models:/fairops-german@challenger (version 2)" in text
    assert "@champion stays version 1" in text
    verdict = client.get_model_version(NAME, "2").tags[GATE_TAG]
    champion = str(client.get_model_version_by_alias(NAME, "champion").version)
    # the gate ran on the test rows; its verdict, the exit status and the alias agree
    assert (verdict, code, champion) in {("passed", 0, "2"), ("refused", 3, "1")}, text
    assert f"promotion gate on the test rows: {'passed' if code == 0 else 'refused'}" in text
    tags = client.get_model_version(NAME, "2").tags
    assert tags["fairops.task"] == "precision@tpr=0.5,ratio=tpr" and tags["fairops.sensitive"] == "sex"


def _paste(command: str, cwd, **options) -> subprocess.Popen:
    """``command`` run by bash in ``cwd`` as pasted into a fresh shell: no virtual environment on PATH."""
    return subprocess.Popen(["bash", "-c", command], cwd=cwd, env={"PATH": CLEAN_PATH, "HOME": os.environ["HOME"]},
                            start_new_session=True, **options)


def test_the_printed_ui_and_gate_commands_run_pasted_from_another_folder(german_fits, tmp_path):
    project, elsewhere = copy_project(german_fits, tmp_path / "project"), tmp_path / "elsewhere"
    elsewhere.mkdir()
    uri = f"sqlite:///{project}/mlflow.db"
    _champion_by_hand(uri)
    ui_port = free_port()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*TUNE, "--project-dir", str(project), "--ui-port", str(ui_port)]) == 0
    text = out.getvalue()
    (serve,) = re.findall(r"^serve it: (.+)$", text, re.M)
    assert serve.split()[1:3] == ["serve", "models:/fairops-german@champion"]  # what is deployed, after any promotion
    (ui,) = re.findall(r"^MLflow UI: (.+?)  \(then open the links\)$", text, re.M)
    (gate,) = re.findall(r"^gate it .*:\n  (.+)$", text, re.M)

    log = tmp_path / "ui.log"
    process = _paste(ui, elsewhere, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    try:
        wait_ready(f"http://127.0.0.1:{ui_port}/health", process, log)
    finally:
        stop(process)
    result = _paste(gate, elsewhere, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, stderr = result.communicate(timeout=600)
    champion = str(MlflowClient(uri).get_model_version_by_alias(NAME, "champion").version)
    assert (result.returncode, champion) in {(0, "2"), (3, "1")}, stdout + stderr
    assert sorted(p.name for p in elsewhere.iterdir()) == []  # no store or mlruns/ made where they were pasted
