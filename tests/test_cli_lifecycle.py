"""`fairops tune` when the registered model already has a champion: the new version becomes @challenger,
the output names the promote command, and `--promote` runs the gate at once on the test rows."""

import io
import contextlib
from types import SimpleNamespace

import optuna
import pytest
from mlflow.tracking import MlflowClient

from fairops.cli import main
from fairops.datasets import load_german
from fairops.tuning import FairnessObjective
from fairops.jobs.tune import _servable, lifecycle_tags
from fairops.tracking.promotion import GATE_TAG
from fairops.tracking.registry import register_best
from fairops.models import InputSchema

pytestmark = pytest.mark.slow
NAME = "fairops-german"
TUNE = ["tune", "--dataset", "german", "--max-train-rows", "300", "--families", "logistic_regression", "--no-progress"]


def _champion_by_hand(uri: str):
    """Version 1: a logistic regression on German credit, registered as fairops tune registers its pick."""
    objective = FairnessObjective(load_german(), families=["logistic_regression"], seed=0, max_train_rows=300)
    params = {"lr_C": 1.0, "lr_penalty": "l2", "lr_tol": 1e-4, "lr_max_iter": 200}
    X_train, _, _ = objective.rows("train")
    model = _servable(objective.refit(SimpleNamespace(params=params, number=0)), X_train)
    study = optuna.create_study(directions=["maximize", "maximize"], study_name="by-hand")
    study.add_trial(optuna.trial.create_trial(values=[0.9, 0.9], params={}, distributions={}))
    return register_best(study, NAME, rule={"trial": 0}, refit=lambda p, t: model,
                         tracking_uri=uri, experiment_name="by-hand", pip_requirements=["fairops"],
                         log_options={"input_schema": InputSchema.for_model(model, X_train)},
                         extra_tags=lifecycle_tags(objective, model, 0))


def test_a_tune_meeting_a_champion_registers_the_challenger_and_gates_it(tmp_path):
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    assert _champion_by_hand(uri).version == "1"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([*TUNE, "--project-dir", str(tmp_path), "--promote"])
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
