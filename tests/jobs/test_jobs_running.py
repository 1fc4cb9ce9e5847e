"""The job loop every `fairops` tuning command shares: it works a run to its end, whatever dies on the way."""

import io
import os
import signal
import threading
import time
import uuid

import mlflow
import optuna
import pytest
from optuna.trial import TrialState

from fairops.fairband import FairbandSampler
from fairops.fairband._claims import holds_slot, slot_of_trial
from fairops.jobs._running import (
    ARTIFACTS_BAR,
    SlotRun,
    StaleTrialCallbacks,
    artifact_bars_only_on_a_terminal,
    open_storage,
    track_missing,
    tracked,
    work_until_complete,
)
from fairops.tuning._toy import ToyFitError
from tests.fairband.test_fairband_sync import FAIL_BELOW, NAN_ABOVE, _objective, check_against_reference
from tests.fairband_worker import spawn

optuna.logging.set_verbosity(optuna.logging.ERROR)
pytestmark = pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")


def _study(storage=None, name=None):
    return optuna.create_study(directions=["maximize", "maximize"], storage=storage, study_name=name,
                               sampler=FairbandSampler(seed=7, s_max=2, iterations=1))


def test_a_fit_aborted_by_a_second_ctrl_c_is_redone():
    study = _study()
    run = SlotRun(study, 22)
    toy, calls = _objective(), []

    def interrupted_at_the_fifth_fit(trial):
        calls.append(trial.number)
        if len(calls) == 5:
            raise KeyboardInterrupt  # what the second Ctrl-C raises inside the fit
        return toy(trial)

    with pytest.raises(KeyboardInterrupt):
        study.optimize(run.guard(interrupted_at_the_fifth_fit), catch=(ToyFitError,))
    aborted = study.trials[4]
    assert aborted.state == TrialState.FAIL and holds_slot(aborted) is None and slot_of_trial(aborted) == 4
    assert run.status() == (4, 0, 18)
    assert work_until_complete(study, toy, run, catch=(ToyFitError,))
    assert run.status() == (22, 0, 0)
    check_against_reference(study, "auto", s_max=2)


def test_stale_trial_callbacks_report_and_never_raise(caplog):
    callbacks, seen = StaleTrialCallbacks(), []
    callbacks.add(lambda study, trial: seen.append(trial))
    callbacks.add(lambda study, trial: 1 / 0)
    callbacks(None, "a trial")
    assert seen == ["a trial"] and "ZeroDivisionError" in caplog.text


def test_mlflow_artifact_bar_is_off_without_a_terminal_and_the_environment_kept(tmp_path, capfd, monkeypatch):
    monkeypatch.delenv(ARTIFACTS_BAR, raising=False)
    stored = tmp_path / "stored"
    stored.mkdir()
    (stored / "table.json").write_text("{}")

    def download() -> str:
        mlflow.artifacts.download_artifacts(artifact_uri=stored.as_uri(), dst_path=str(tmp_path / uuid.uuid4().hex))
        return capfd.readouterr().err

    assert "Downloading artifacts" in download()  # MLflow's default, which a job's output should not carry
    with artifact_bars_only_on_a_terminal(io.StringIO()):
        assert os.environ[ARTIFACTS_BAR] == "false" and "Downloading artifacts" not in download()
    assert ARTIFACTS_BAR not in os.environ
    monkeypatch.setenv(ARTIFACTS_BAR, "true")  # the user's own setting wins
    with artifact_bars_only_on_a_terminal(io.StringIO()):
        assert "Downloading artifacts" in download()


@pytest.mark.slow
def test_waits_for_another_workers_last_fit_and_redoes_it_when_that_worker_dies(tmp_path):
    url = f"sqlite:///{tmp_path / 'loop.db'}"
    stale = StaleTrialCallbacks()
    study = _study(open_storage(url, heartbeat=1, on_stale=stale), name=f"loop-{uuid.uuid4().hex[:8]}")
    run = SlotRun(study, 22)
    reported = []
    stale.add(tracked(lambda s, trial: reported.append(trial.number), run))
    # The victim hangs in the iteration's last fit (bracket 2, rung 2), so this worker ends up with
    # nothing left to fit but another worker's fit in progress.
    victim = spawn("rdb-hb", url, study.study_name, "--s-max", 2, "--hang", "2,2,0", "--fail-below", FAIL_BELOW,
                   "--nan-above", NAN_ABOVE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not any(slot_of_trial(t) == 21 and t.params for t in study.trials
                                                  if t.state == TrialState.RUNNING):
        time.sleep(0.1)
    result = {}
    worker = threading.Thread(target=lambda: result.update(done=work_until_complete(
        study, _objective(), run, catch=(ToyFitError,), poll=0.2)))
    worker.start()
    time.sleep(2)
    assert worker.is_alive() and run.status() == (21, 1, 0)  # waiting: the last fit is the victim's
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait()
    dead = [t.number for t in study.trials if t.state == TrialState.RUNNING]
    worker.join(timeout=120)
    assert result == {"done": True}
    assert reported == dead  # the heartbeat failure reached the tracking callback
    check_against_reference(study, "auto", s_max=2)


@pytest.mark.slow
def test_a_worker_stopped_between_a_fit_and_its_logging_leaves_the_run_to_the_next(tmp_path):
    """An exception outside the objective (the tracking store fails after a fit) stops the worker but keeps
    the fit; at the end every fit without a child run gets one, once (a slow worker's late run is waited
    for, not doubled)."""
    from mlflow.tracking import MlflowClient

    from fairops.tracking._callback import FairnessTrackingCallback

    study = _study(f"sqlite:///{tmp_path / 'optuna.db'}", name="logging")
    run = SlotRun(study, 22)
    tracker = FairnessTrackingCallback(f"sqlite:///{tmp_path / 'mlflow.db'}", experiment_name="logging")

    def tracking_store_down_at_the_sixth_fit(study, trial):
        if trial.number == 5:
            raise ConnectionError("tracking store unreachable")
        tracker(study, trial)

    with pytest.raises(ConnectionError):
        work_until_complete(study, _objective(), run, catch=(ToyFitError,),
                            callbacks=[tracked(tracking_store_down_at_the_sixth_fit, run)])
    assert holds_slot(study.trials[5]) == 5  # the fit itself is kept
    assert work_until_complete(study, _objective(), run, catch=(ToyFitError,), callbacks=[tracked(tracker, run)])
    # trial 5's worker was only slow: its run arrives while the next worker settles, and is not doubled
    late = threading.Timer(0.3, tracker, args=(study, study.trials[5]))
    late.start()
    assert track_missing(tracker, study, run, settle=2.0) == 0
    late.join()
    _delete_child_run(tracker, study, run.fits()[9].number)  # what a worker dead right after a fit leaves
    assert track_missing(tracker, study, run) == 1
    runs = MlflowClient(tracker.tracking_uri).search_runs([tracker.experiment_id(study)], max_results=100)
    numbers = sorted(int(r.data.tags["fairops.trial_number"]) for r in runs
                     if r.data.tags.get("fairops.role") == "trial")
    assert numbers == sorted(t.number for t in run.fits())
    assert track_missing(tracker, study, run) == 0

    # a worker killed while logging: its child run exists, RUNNING, without values
    number = run.fits()[12].number
    tags = _delete_child_run(tracker, study, number)
    started = tracker.client.create_run(tracker.experiment_id(study), tags=tags).info.run_id
    assert track_missing(tracker, study, run) == 1
    completed = tracker.client.get_run(started)
    assert completed.info.status == "FINISHED"
    assert set(completed.data.metrics) >= {"accuracy", "fairness"}
    assert track_missing(tracker, study, run) == 0
    assert len(tracker.client.get_metric_history(started, "accuracy")) == 1


def _delete_child_run(tracker, study, number):
    """What a worker that died right after its fit leaves behind: the fit, no child run. Returns its tags."""
    runs = tracker.client.search_runs([tracker.experiment_id(study)], f"tags.`fairops.trial_number` = '{number}'")
    for found in runs:
        tracker.client.delete_run(found.info.run_id)
    return runs[0].data.tags
