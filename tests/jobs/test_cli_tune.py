"""End-to-end runs of ``fairops tune`` on the bundled German credit data, with real stores."""

import contextlib
import io
import json
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
from optuna.trial import TrialState

from fairops._store_lock import sqlite_open_lock
from fairops.cli import main
from fairops.datasets import load_german
from fairops.fairband import _schedule as schedule, select_best
from fairops.fairband._claims import fits_of_run, holds_slot, slot_of_trial
from fairops.jobs._tune.study import data_sha256
from fairops.tuning._objective import CONSTANT_SCORES, failure_reason
from tests.jobs.kill_mid_fit import kill_mid_fit
from tests.log_records import LogRecords

# a smaller Hyperband than the paper's (eta 3, s_max 2: 22 fits of 17 configurations, three brackets): every
# step of a run, from the schedule to the registered pick, in a tenth of the fits; the default, the paper's
# 206, is the README's command (tests/project/test_readme.py)
FAST = ["--dataset", "german", "--max-train-rows", "300", "--families", "logistic_regression,scaff_forest",
        "--no-progress", "--s-max", "2"]
STUDY = "german-fb-auto-eta3-smax2-fast-seed0"
FITS, CONFIGURATIONS, BRACKETS = schedule.iteration_size(3, 2), schedule.configurations_per_iteration(3, 2), 3
RUNG = re.compile(r"rung (\d) of bracket (\d) done")


def _study(project: Path, name=STUDY):
    url = f"sqlite:///{project / 'optuna.db'}"
    with sqlite_open_lock(url):  # as the workers do: a fresh file gets its schema from one process at a time
        storage = optuna.storages.RDBStorage(url)
    return optuna.load_study(study_name=name, storage=storage)


def _fit_keys(study):
    return [(t.user_attrs["bracket"], t.user_attrs["rung"], t.user_attrs["configuration_id"])
            for t in study.get_trials(deepcopy=False)]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """One finished tune, run from its own working directory with progress on (output is not a terminal)."""
    project = tmp_path_factory.mktemp("tune")
    workdir = tmp_path_factory.mktemp("workdir")
    out = io.StringIO()
    with contextlib.chdir(workdir), contextlib.redirect_stdout(out):
        assert main(["tune", *[a for a in FAST if a != "--no-progress"], "--project-dir", str(project)]) == 0
    return project, workdir, out.getvalue()


@pytest.fixture(scope="module")
def finished_project(finished_run):
    return finished_run[0]


@pytest.mark.slow
def test_one_iteration_is_the_hyperband_schedule_of_eta_and_s_max(finished_project):
    study = _study(finished_project)
    trials = study.get_trials(deepcopy=False)
    assert len(trials) == FITS
    per_rung = Counter((t.user_attrs["bracket"], t.user_attrs["rung"]) for t in trials)
    for s in range(BRACKETS):
        for i, size in enumerate(schedule.rung_sizes(s, 3, 2)):
            assert per_rung[(s, i)] == size
    assert len({(t.user_attrs["bracket"], t.user_attrs["configuration_id"]) for t in trials}) == CONFIGURATIONS
    assert len(set(_fit_keys(study))) == FITS  # no fit twice


@pytest.mark.slow
def test_the_full_budget_bracket_starts_with_the_library_defaults(finished_project):
    from fairops.tuning._search_space import library_defaults

    fits = [t for t in _study(finished_project).get_trials(deepcopy=False) if t.user_attrs["bracket"] == 0]
    first = min(fits, key=lambda t: t.user_attrs["configuration_id"])
    # the run tunes logistic regression and the SCAFF forest: of the library defaults only the former's apply
    assert [first.params] == library_defaults(["logistic_regression", "scaff_forest"])
    assert first.user_attrs["budget"] == 1.0 and first.state == TrialState.COMPLETE


@pytest.mark.slow
def test_every_fit_is_a_child_run_and_the_pick_is_registered(finished_project):
    uri = f"sqlite:///{finished_project / 'mlflow.db'}"
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name(STUDY)
    runs = client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'trial'", max_results=1000)
    assert len(runs) == FITS
    complete = [r for r in runs if "accuracy" in r.data.metrics]
    per_fit = {"fairness", "auc_y", "auc_s", "accuracy_low", "accuracy_high", "fairness_low", "fairness_high",
               "fairness.sex"}
    assert complete and all(per_fit <= set(r.data.metrics) for r in complete)
    assert all(r.data.metrics["fairness_low"] <= r.data.metrics["fairness"] <= r.data.metrics["fairness_high"]
               for r in complete)
    version = client.get_model_version_by_alias("fairops-german", "champion")
    mlflow.set_tracking_uri(uri)
    model = mlflow.pyfunc.load_model("models:/fairops-german@champion")
    rows = load_german().X.head(20)
    served = rows.astype({c: object for c in rows.columns if str(rows[c].dtype) == "category"})
    answer = model.predict(served, params={"answer": "scores"})
    # the champion serves P(positive class) per row, and the decision at the threshold set on validation
    np.testing.assert_array_equal(model.predict(served), answer["decision"])  # its default answer: the labels
    assert list(answer.columns) == ["probability", "positive_class", "decision"] and len(answer) == 20
    assert set(answer["positive_class"]) == {"good credit"} and set(answer["decision"]) <= {0, 1}
    probability = answer["probability"].to_numpy()
    assert ((probability >= 0) & (probability <= 1)).all() and len(np.unique(probability)) > 1
    # the rule that made the pick, not "chosen by hand"
    assert version.tags["selection_kind"] == "fairband" and "alpha rule auto" in version.tags["selection_rule"]
    assert "most accurate fit" in version.description and "test accuracy" in version.description
    parent = client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'study'")[0]
    assert {k: v for k, v in parent.data.params.items() if k.startswith("task")} == {
        "task": "precision@tpr=0.5,ratio=tpr", "task.positive_class": "good credit", "task.metric": "precision",
        "task.target": "tpr=0.5", "task.fairness_ratio": "tpr", "task.sensitive": "sex", "task.groups": "lowest"}


@pytest.mark.slow
def test_progress_without_a_terminal_reports_every_rung(finished_run):
    _, _, out = finished_run
    rungs = [(int(b), int(r)) for b, r in ((m[2], m[1]) for m in RUNG.finditer(out))]
    assert sorted(rungs) == sorted((s, i) for s in range(BRACKETS) for i in range(len(schedule.rung_sizes(s, 3, 2))))
    assert f"fits {FITS}/{FITS} (100%)" in out and "\r" not in out  # plain lines, no bar
    # the progress lines' terms said once, before them; the run ends with the command serving its pick
    (legend,) = [line for line in out.splitlines() if line.startswith("progress: ")]
    assert '"weighted score" = alpha * accuracy + (1 - alpha) * fairness' in legend and "FB-auto" in legend
    assert out.index(legend) < out.index("\nfits ") and \
        re.search(r"\nserve it: /\S+/fairops serve models:/\S+ --tracking-uri ", out)


@pytest.mark.slow
def test_the_study_is_tidy_in_mlflow(finished_run):
    project, workdir, out = finished_run
    uri = f"sqlite:///{project / 'mlflow.db'}"
    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name(STUDY)
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"
    # artifacts under the project folder, nothing in the working directory
    assert experiment.artifact_location == (project / "mlartifacts").as_uri()
    assert list(workdir.iterdir()) == []
    (parent,) = client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'study'")
    assert parent.info.status == "FINISHED"
    params = parent.data.params
    data = load_german()
    assert params["dataset"] == "german" and params["method"] == "FB-auto" and params["alpha_rule"] == "auto (FB-auto)"
    assert params["task"] == str(data.task) and params["task.positive_class"] == data.task.positive == "good credit"
    # the hash the study's configuration holds (a worker on other data is refused by it)
    assert params["data_sha256"] == data_sha256(data) and params["rows"] == "1000"
    # the pick's refit with its interval and the refit comparison of the robust rule
    metrics = parent.data.metrics
    assert params["selection"] == "robust"
    assert metrics["pick_refit_val_fairness_low"] <= metrics["pick_refit_val_fairness"] \
        <= metrics["pick_refit_val_fairness_high"]
    compared = json.loads(Path(client.download_artifacts(parent.info.run_id, "selection/refit_comparison.json",
                                                         str(workdir.parent))).read_text())["refits"]
    assert sum(r["chosen"] for r in compared) == 1 and sum(r["most_accurate"] for r in compared) == 1
    assert not any(r["chosen"] and r["dominated"] for r in compared)
    assert (params["profile"], params["seed"], params["iterations"], params["fits"]) == ("fast", "0", "1", str(FITS))
    assert (params["eta"], params["s_max"]) == ("3", "2")
    # the running pick over the budget spent, ending on the pick
    history = client.get_metric_history(parent.info.run_id, "pick_trial")
    study = _study(project)
    assert history[-1].value == select_best(study, alpha="auto").trial.number
    assert history[-1].step == round(100 * sum(t.user_attrs["budget"] for t in study.trials))
    table = pd.read_json(client.download_artifacts(parent.info.run_id, "fairops_trials.json", str(workdir.parent)),
                         orient="split")
    assert sorted(table["trial"]) == list(range(FITS))
    # the printed links are the ones logged on the parent run, and open the UI as a model-training experiment
    for tag in ("fairops.runs_url", "fairops.compare_url", "fairops.study_url"):
        url = parent.data.tags[tag]
        assert url in out and f"#/experiments/{experiment.experiment_id}/runs" in url
        assert url.endswith("workflowType=machine_learning") or "workflowType=machine_learning&" in url
    names = {r.info.run_name for r in client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'trial'",
                                                         max_results=1000)}
    assert all(re.fullmatch(r"t\d+ (logistic_regression|scaff_forest) \d[\d.]*%( \(pick\))?", n) for n in names)


@pytest.mark.slow
def test_rerunning_a_finished_study_adds_no_fits_and_registers_nothing(finished_project, capsys):
    client = MlflowClient(f"sqlite:///{finished_project / 'mlflow.db'}")
    versions = client.search_model_versions("name = 'fairops-german'")
    assert main(["tune", *FAST, "--project-dir", str(finished_project)]) == 0
    assert len(_study(finished_project).get_trials(deepcopy=False)) == FITS
    out, err = capsys.readouterr()
    assert "Downloading artifacts" not in err  # re-reading the trials table draws no bar without a terminal
    assert f"{FITS} already in the study" in out and "Fairband pick" in out and "most accurate" in out
    assert f"already registered by an earlier run of this study: fairops-german version {versions[0].version}" in out
    assert client.search_model_versions("name = 'fairops-german'") == versions
    experiment = client.get_experiment_by_name(STUDY)
    assert len(client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'selection'")) == 1
    assert "task: positive class: good credit; accuracy: precision at 50% TPR; fairness: TPR ratio" in out
    lines = out.splitlines()
    pick_line = next(line for line in lines if "Fairband pick" in line)
    figure = r" +[0-9.]+ \[[0-9.]+, [0-9.]+\]"  # value [95% interval], on validation and on test
    assert re.match(rf"Fairband pick \(#\d+, \w+\)(?:{figure}){{4}}$", pick_line), pick_line
    assert re.search(r"^\(test: \d+ rows; behind the TPR ratio: sex female \d+, male \d+ positives; the pick decides "
                     r"positive for \d+\.\d% of them\)$", out, re.M), out
    header = lines[lines.index(pick_line) - 1]
    assert header.split() == ["precision", "TPR", "ratio"] * 2
    assert ("(precision = precision at 50% TPR; TPR ratio = lowest / highest over sex; "
            "positive class: good credit)") in out
    assert "threshold set on the validation rows" in out


@pytest.mark.slow
def test_interrupted_run_resumes_without_lost_or_repeated_fits(tmp_path):
    command = [sys.executable, "-m", "fairops.cli", "tune", *FAST, "--project-dir", str(tmp_path)]
    worker = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    database = tmp_path / "optuna.db"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if database.exists():
                try:
                    if len(_study(tmp_path).get_trials(deepcopy=False)) >= 8:
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
    assert 8 <= len(interrupted) < FITS
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment_id = client.get_experiment_by_name(STUDY).experiment_id
    (parent,) = client.search_runs([experiment_id], "tags.`fairops.role` = 'study'")
    assert parent.info.status == "KILLED"
    # the fits in flight finished: nothing failed but the constant fits the objective fails on purpose
    assert {failure_reason(t) for t in interrupted} <= {None, CONSTANT_SCORES}

    assert main(["tune", *FAST, "--project-dir", str(tmp_path)]) == 0
    assert client.get_run(parent.info.run_id).info.status == "FINISHED"
    study = _study(tmp_path)
    assert len(study.get_trials(deepcopy=False)) == FITS
    assert len(set(_fit_keys(study))) == FITS
    runs = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}").search_runs(
        [MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}").get_experiment_by_name(study.study_name).experiment_id],
        "tags.`fairops.role` = 'trial'", max_results=1000)
    assert len(runs) == FITS


def _child_runs(project: Path, study_name: str):
    client = MlflowClient(f"sqlite:///{project / 'mlflow.db'}")
    experiment = client.get_experiment_by_name(study_name)
    return client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'trial'", max_results=1000)


@pytest.mark.slow
def test_sigkill_and_rerun_give_the_uninterrupted_fits_runs_and_pick(finished_project, tmp_path):
    argv = ["tune", *FAST, "--project-dir", str(tmp_path), "--heartbeat", "1"]
    killed = kill_mid_fit(argv, f"sqlite:///{tmp_path / 'optuna.db'}", STUDY, after=8,
                          hold_file=tmp_path / "held")

    assert main(argv) == 0  # the same command again
    study = _study(tmp_path)
    trials = study.get_trials(deepcopy=False)
    assert trials[killed.number].state == TrialState.FAIL and holds_slot(trials[killed.number]) is None
    fits = fits_of_run(trials, FITS)
    whole = fits_of_run(_study(finished_project).get_trials(deepcopy=False), FITS)
    assert len(fits) == FITS and all(t.state.is_finished() for t in fits)
    assert [_fit_keys_of(t) + (t.params, t.values) for t in fits] == \
        [_fit_keys_of(t) + (t.params, t.values) for t in whole]  # the schedule, fit by fit
    redone = [t for t in fits if slot_of_trial(t) == slot_of_trial(killed)]
    assert len(redone) == 1 and redone[0].number > killed.number and redone[0].params == killed.params
    pick, uninterrupted = select_best(fits, alpha="auto"), select_best(whole, alpha="auto")
    assert slot_of_trial(pick.trial) == slot_of_trial(uninterrupted.trial) and pick.score == uninterrupted.score

    runs = _child_runs(tmp_path, study.study_name)
    by_trial = Counter(int(r.data.tags["fairops.trial_number"]) for r in runs)
    assert all(by_trial[t.number] == 1 for t in fits)  # one child run per fit, none doubled
    finished_runs = {int(r.data.tags["fairops.trial_number"]) for r in runs if r.info.status == "FINISHED"}
    assert finished_runs == {t.number for t in fits if t.state == TrialState.COMPLETE}
    dead = [r for r in runs if int(r.data.tags["fairops.trial_number"]) == killed.number]
    assert [r.info.status for r in dead] == ["FAILED"]  # the heartbeat failure reached the tracking


def _fit_keys_of(trial):
    return trial.user_attrs["bracket"], trial.user_attrs["rung"], trial.user_attrs["configuration_id"]


@pytest.mark.slow
def test_a_worker_with_other_options_is_refused_before_fitting(finished_project, capsys):
    study = _study(finished_project)
    before = len(study.get_trials(deepcopy=False))
    other = [a if a != "300" else "200" for a in FAST]  # --max-train-rows 200 on the same study
    assert main(["tune", *other, "--study-name", study.study_name, "--project-dir", str(finished_project)]) == 2
    assert "max_train_rows: 300 in the study, 200 here" in capsys.readouterr().err
    assert len(study.get_trials(deepcopy=False)) == before  # refused before creating a trial


@pytest.mark.slow
def test_own_csv_data(tmp_path, capsys):
    data = load_german()
    frame = data.X.assign(good=np.where(data.y == 1, "good", "bad"))
    path = tmp_path / "credit.csv"
    frame.to_csv(path, index=False)
    records = LogRecords()
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
    failed = re.search(r"failed fits: (\d+) of 24 \([0-9.]+%\): (\d+) constant validation scores: the model gave", out)
    assert failed and int(failed[1]) == int(failed[2]) > 0
    assert "They rank last and are never picked" in out
    assert not [m for m in records.messages if "nan" in m]
    study = optuna.load_study(study_name="credit-rs-bal-fast-seed0",
                              storage=f"sqlite:///{tmp_path / 'p' / 'optuna.db'}")
    assert len(study.trials) == 24  # random search gets one Fairband iteration's budget in full fits


def _german_csv(tmp_path) -> Path:
    data = load_german()
    path = tmp_path / "credit.csv"
    data.X.assign(good=np.where(data.y == 1, "good", "bad")).to_csv(path, index=False)
    return path


@pytest.mark.slow
def test_a_fixed_threshold_task_is_tuned_registered_and_served_at_that_cut(tmp_path, capsys):
    path = _german_csv(tmp_path)
    assert main(["tune", "--data", str(path), "--target", "good", "--sensitive", "sex", "--positive", "good",
                 "--task", "precision@threshold=0.5,ratio=tpr", "--families", "logistic_regression", "--method",
                 "rs-bal", "--max-train-rows", "300", "--no-progress", "--project-dir", str(tmp_path / "p")]) == 0
    out = capsys.readouterr().out
    assert "accuracy: precision at scores >= 0.5; fairness: TPR ratio" in out
    assert "one threshold for everyone, the task's fixed 0.5" in out
    assert "the test rows are scored at the task's fixed threshold" in out
    uri = f"sqlite:///{tmp_path / 'p' / 'mlflow.db'}"
    version = MlflowClient(uri).get_model_version_by_alias("fairops-credit", "champion")
    assert {key: version.tags[f"fairops.{key}"] for key in ("task", "threshold", "tie_share")} == {
        "task": "precision@threshold=0.5,ratio=tpr", "threshold": "0.5", "tie_share": "1.0"}
    mlflow.set_tracking_uri(uri)
    try:
        answer = mlflow.pyfunc.load_model("models:/fairops-credit@champion").predict(load_german().X,
                                                                                      params={"answer": "scores"})
    finally:
        mlflow.set_tracking_uri(None)
    # (the pick may call most rows positive: at a fixed cut that is precision at the base rate, TPR ratio near 1)
    assert np.array_equal(answer["decision"], answer["probability"] >= 0.5)


def test_per_group_decisions_with_a_fixed_threshold_are_refused_before_anything_runs(tmp_path, capsys):
    path = _german_csv(tmp_path)
    assert main(["tune", "--data", str(path), "--target", "good", "--sensitive", "sex", "--decision", "per-group",
                 "--task", "recall@threshold=0.3,ratio=tpr", "--project-dir", str(tmp_path / "p")]) == 2
    assert "per-group decisions need a target each group meets" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--data", "missing.csv", "--target", "y", "--sensitive", "s"], "does not exist"),
        (["--dataset", "german", "--alpha", "1.5"], "alpha must be in [0, 1]"),
        (["--dataset", "german", "--method", "rs", "--alpha", "0.5"], "--alpha applies to the Fairband methods"),
        (["--dataset", "german", "--storage", "postgresql+psycopg://nobody:x@127.0.0.1:1/none"],
         "cannot open the Optuna storage"),
        (["--dataset", "german", "--families", "xgboost"], "families must be a non-empty list"),
        (["--dataset", "german", "--eta", "1"], "eta must be an integer >= 2"),
        (["--dataset", "german", "--s-max", "-1"], "s_max must be an integer >= 0"),
        (["--dataset", "german", "--s-max", "30"], "s_max must be at most 16"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path, capsys, argv, message):
    assert main(["tune", *argv, "--project-dir", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


def test_the_default_schedule_is_the_papers_and_another_one_names_its_study(tmp_path):
    from fairops.jobs._tune.settings import TuneSettings, target_trials

    default = TuneSettings(dataset="german", project_dir=str(tmp_path))
    assert (default.eta, default.s_max, target_trials(default)) == (3, 4, 206)
    assert default.resolved().study_name == "german-fb-auto-fast-seed0"
    small = TuneSettings(dataset="german", s_max=2, project_dir=str(tmp_path))
    assert target_trials(small) == FITS and small.resolved().study_name == STUDY
    # random search gets the budget of the schedule it stands beside, in full fits
    assert target_trials(TuneSettings(dataset="german", method="rs")) == 24
    assert target_trials(TuneSettings(dataset="german", method="rs", s_max=2)) == 9


def test_multiclass_target_is_refused(tmp_path, capsys):
    path = tmp_path / "d.csv"
    pd.DataFrame({"x": range(30), "s": ["a", "b", "c"] * 10, "y": [0, 1, 2] * 10}).to_csv(path, index=False)
    assert main(["tune", "--data", str(path), "--target", "y", "--sensitive", "s",
                 "--project-dir", str(tmp_path)]) == 2
    assert "exactly two classes, found 3" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--dataset", "german", "--target", "y"], "--target does not apply to a bundled --dataset"),
    (["--dataset", "german", "--sensitive", "sex", "--task", "recall@fpr=0.1,ratio=fpr"],
     "--sensitive, --task do not apply to a bundled --dataset"),
    (["--data", "x.csv", "--target", "y", "--sensitive", "s", "--dataset", "german"],
     "--dataset does not apply with --data FILE"),
    (["--dataset", "german", "--max-train", "300"], "unrecognized arguments: --max-train 300"),
])
def test_options_that_do_not_apply_are_refused_by_name(argv, message, tmp_path, capsys):
    code = None
    try:
        code = main(["tune", *argv, "--project-dir", str(tmp_path)])
    except SystemExit as exit_:  # argparse's own refusal (an abbreviated option)
        code = exit_.code
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "optuna.db").exists()  # refused before anything ran
