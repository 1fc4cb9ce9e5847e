"""End-to-end runs of ``fairops tune`` on the bundled German credit data, with real stores."""

import logging
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import mlflow
import numpy as np
import optuna
import pandas as pd
import pytest
from mlflow.tracking import MlflowClient

from fairops.cli import main
from fairops.datasets import load_german
from fairops.fairband import schedule
from fairops.fairband.objective import CONSTANT_SCORES, failure_reason

FAST = ["--dataset", "german", "--max-train-rows", "300", "--families", "logistic_regression,scaff_forest",
        "--no-progress"]


def _study(project: Path, name="german-fb-auto-fast-seed0"):
    return optuna.load_study(study_name=name, storage=f"sqlite:///{project / 'optuna.db'}")


def _fit_keys(study):
    return [(t.user_attrs["bracket"], t.user_attrs["rung"], t.user_attrs["configuration_id"])
            for t in study.get_trials(deepcopy=False)]


@pytest.fixture(scope="module")
def finished_project(tmp_path_factory):
    project = tmp_path_factory.mktemp("tune")
    assert main(["tune", *FAST, "--project-dir", str(project)]) == 0
    return project


def test_one_iteration_is_the_paper_schedule(finished_project):
    study = _study(finished_project)
    trials = study.get_trials(deepcopy=False)
    assert len(trials) == 206
    per_rung = Counter((t.user_attrs["bracket"], t.user_attrs["rung"]) for t in trials)
    for s in range(5):
        for i, size in enumerate(schedule.rung_sizes(s)):
            assert per_rung[(s, i)] == size
    assert len({(t.user_attrs["bracket"], t.user_attrs["configuration_id"]) for t in trials}) == 143
    assert len(set(_fit_keys(study))) == 206  # no fit twice


def test_every_fit_is_a_child_run_and_the_pick_is_registered(finished_project):
    uri = f"sqlite:///{finished_project / 'mlflow.db'}"
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("german-fb-auto-fast-seed0")
    runs = client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'trial'", max_results=1000)
    assert len(runs) == 206
    complete = [r for r in runs if "accuracy" in r.data.metrics]
    assert complete and all({"fairness", "auc_y", "auc_s"} <= set(r.data.metrics) for r in complete)
    version = client.get_model_version_by_alias("fairops-german", "champion")
    mlflow.set_tracking_uri(uri)
    model = mlflow.pyfunc.load_model("models:/fairops-german@champion")
    rows = load_german().X.head(20)
    served = rows.astype({c: object for c in rows.columns if str(rows[c].dtype) == "category"})
    answer = model.predict(served)
    # the champion serves P(positive class) per row, the score the task's threshold is applied to
    assert list(answer.columns) == ["probability"] and len(answer) == 20
    probability = answer["probability"].to_numpy()
    assert ((probability >= 0) & (probability <= 1)).all() and len(np.unique(probability)) > 1
    # the rule that made the pick, not "chosen by hand"
    assert version.tags["selection_kind"] == "fairband" and "alpha rule auto" in version.tags["selection_rule"]
    assert "most accurate fit" in version.description and "test accuracy" in version.description
    parent = client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'study'")[0]
    assert {k: v for k, v in parent.data.params.items() if k.startswith("task")} == {
        "task": "precision@tpr=0.5,ratio=tpr", "task.positive_class": "label 1", "task.metric": "precision",
        "task.target": "tpr=0.5", "task.fairness_ratio": "tpr", "task.sensitive": "sex"}


def test_rerunning_a_finished_study_adds_no_fits(finished_project, capsys):
    assert main(["tune", *FAST, "--project-dir", str(finished_project)]) == 0
    assert len(_study(finished_project).get_trials(deepcopy=False)) == 206
    out = capsys.readouterr().out
    assert "206 already in the study" in out and "Fairband pick" in out and "most accurate" in out
    assert "task: positive class: label 1; accuracy: precision at 50% TPR; fairness: TPR ratio" in out
    lines = out.splitlines()
    header = lines[lines.index(next(line for line in lines if "Fairband pick" in line)) - 1]
    assert header.split() == ["precision", "TPR", "ratio"] * 2
    assert "(precision = precision at 50% TPR; TPR ratio = lowest / highest over sex; positive class: label 1)" in out
    assert "threshold set on the validation rows" in out


def test_interrupted_run_resumes_without_lost_or_repeated_fits(tmp_path):
    command = [sys.executable, "-m", "fairops.cli", "tune", *FAST, "--project-dir", str(tmp_path)]
    worker = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    database = tmp_path / "optuna.db"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if database.exists():
                try:
                    if len(_study(tmp_path).get_trials(deepcopy=False)) >= 20:
                        break
                except KeyError:
                    pass
            time.sleep(0.2)
        worker.send_signal(signal.SIGINT)
        _, err = worker.communicate(timeout=120)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert worker.returncode == 130, err[-2000:]
    assert "run the same command again to resume" in err
    interrupted = _study(tmp_path).get_trials(deepcopy=False)
    assert 20 <= len(interrupted) < 206
    # the fits in flight finished: nothing failed but the constant fits the objective fails on purpose
    assert {failure_reason(t) for t in interrupted} <= {None, CONSTANT_SCORES}

    assert main(["tune", *FAST, "--project-dir", str(tmp_path)]) == 0
    study = _study(tmp_path)
    assert len(study.get_trials(deepcopy=False)) == 206
    assert len(set(_fit_keys(study))) == 206
    runs = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}").search_runs(
        [MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}").get_experiment_by_name(study.study_name).experiment_id],
        "tags.`fairops.role` = 'trial'", max_results=1000)
    assert len(runs) == 206


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_own_csv_data(tmp_path, capsys):
    data = load_german()
    frame = data.X.assign(good=np.where(data.y == 1, "good", "bad"))
    path = tmp_path / "credit.csv"
    frame.to_csv(path, index=False)
    records = _Records()
    logging.getLogger("optuna").addHandler(records)
    try:
        code = main(["tune", "--data", str(path), "--target", "good", "--sensitive", "sex",
                     "--task", "recall@fpr=0.2,ratio=fpr", "--families", "logistic_regression", "--method",
                     "rs-bal", "--max-train-rows", "300", "--no-progress", "--project-dir", str(tmp_path / "p")])
    finally:
        logging.getLogger("optuna").removeHandler(records)
    assert code == 0
    out = capsys.readouterr().out
    assert "task: positive class: good = good; accuracy: recall at 20% FPR; fairness: FPR ratio" in out
    # L1 fits with a tiny C are constant: counted in the summary, not reported one by one with a traceback
    failed = re.search(r"failed fits: (\d+) of 24 \((\d+) constant validation scores\)", out)
    assert failed and int(failed[1]) == int(failed[2]) > 0
    assert not [m for m in records.messages if "nan" in m]
    study = optuna.load_study(study_name="credit-rs-bal-fast-seed0", storage=f"sqlite:///{tmp_path / 'p' / 'optuna.db'}")
    assert len(study.trials) == 24  # random search gets one Fairband iteration's budget in full fits


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--data", "missing.csv", "--target", "y", "--sensitive", "s"], "does not exist"),
        (["--dataset", "german", "--alpha", "1.5"], "alpha must be in [0, 1]"),
        (["--dataset", "german", "--method", "rs", "--alpha", "0.5"], "--alpha applies to the Fairband methods"),
        (["--dataset", "german", "--storage", "postgresql+psycopg://nobody:x@127.0.0.1:1/none"],
         "cannot open the Optuna storage"),
        (["--dataset", "german", "--families", "xgboost"], "families must be a non-empty list"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path, capsys, argv, message):
    assert main(["tune", *argv, "--project-dir", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


def test_multiclass_target_is_refused(tmp_path, capsys):
    path = tmp_path / "d.csv"
    pd.DataFrame({"x": range(30), "s": ["a", "b", "c"] * 10, "y": [0, 1, 2] * 10}).to_csv(path, index=False)
    assert main(["tune", "--data", str(path), "--target", "y", "--sensitive", "s",
                 "--project-dir", str(tmp_path)]) == 2
    assert "exactly two classes, found 3" in capsys.readouterr().err
