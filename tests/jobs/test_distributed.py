"""The distributed mode: several `fairops tune` workers on one PostgreSQL study, logging to a real
`mlflow server`. The Fairband schedule must stay exact, and a killed worker must not stop the others.

The server and the one-worker run every distributed run must equal (``mlflow_server``, ``single``) are
made once per test run in conftest.py: tests/jobs/test_grpc_proxy.py compares its workers with the same run."""

import os
import signal
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path

import optuna
import pytest
from mlflow.tracking import MlflowClient
from optuna.trial import TrialState

from fairops.cli import main
from fairops.fairband import iteration_size, select_best
from fairops.fairband._claims import claim_of, fits_of_run, holds_slot, slot_of_trial
from fairops.fairband._schedule import configurations_per_iteration
from fairops.tuning._objective import CONSTANT_SCORES, failure_reason
from tests.jobs.kill_mid_fit import held_command, wait_held

pytestmark = pytest.mark.slow
# a smaller Hyperband (eta 3, s_max 2: 22 fits of 17 configurations) than the paper's: the workers share and
# redo its fits as they would the paper's 206, in a tenth of the time
FAST = ["--dataset", "german", "--max-train-rows", "300", "--families", "logistic_regression", "--no-progress",
        "--method", "fb-auto", "--seed", "3", "--s-max", "2"]
FITS, CONFIGURATIONS = iteration_size(3, 2), configurations_per_iteration(3, 2)
HELD_AFTER = 5  # fits a held worker makes before the one it is held in


def _workers(count, postgres_url, server, study_name, tmp_path, *, held: Path | None = None):
    """``count`` tune workers on one study; with ``held``, the first one starts alone and is held in its 6th
    fit (writing ``held`` then) for the test to kill (:func:`_kill_the_held_worker`), and the others start
    once it is held, so it has a fit in progress however the workers would have shared the fits."""
    argv = ["tune", *FAST, "--storage", postgres_url, "--tracking-uri", server, "--study-name", study_name,
            "--no-finalize", "--heartbeat", "1", "--project-dir", str(tmp_path)]
    plain = [sys.executable, "-m", "fairops.cli", *argv]

    def start(command):
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)

    if held is None:
        return [start(plain) for _ in range(count)]
    first = start(held_command(argv, held, HELD_AFTER))
    wait_held(first, held)
    return [first, *(start(plain) for _ in range(count - 1))]


def _own_fits(study):
    return [t for t in study.get_trials(deepcopy=False) if t.number < FITS]


def _drop(postgres_url, study_name):
    try:
        optuna.delete_study(study_name=study_name, storage=postgres_url)
    except KeyError:
        pass


def _same_as_single(fits, single):
    assert len(fits) == FITS and all(t.state.is_finished() for t in fits)
    assert [t.params for t in fits] == [t.params for t in single]
    assert [t.values for t in fits] == [t.values for t in single]
    pick, expected = select_best(fits, alpha="auto"), select_best(single, alpha="auto")
    assert slot_of_trial(pick.trial) == slot_of_trial(expected.trial) and pick.score == expected.score


def _child_runs(server, name):
    client = MlflowClient(server)
    experiment = client.get_experiment_by_name(name)
    return client.search_runs([experiment.experiment_id], "tags.`fairops.role` = 'trial'", max_results=1000)


def test_three_workers_give_the_one_worker_schedule_and_pick(postgres_url, mlflow_server, tmp_path, single):
    name = f"dist-{uuid.uuid4().hex[:8]}"
    try:
        workers = _workers(3, postgres_url, mlflow_server, name, tmp_path)
        for worker in workers:
            _, err = worker.communicate(timeout=600)
            assert worker.returncode == 0, err[-3000:]
        # any machine can then take the pick: it joins, finds the fits done, refits and registers
        assert main(["tune", *FAST, "--storage", postgres_url, "--tracking-uri", mlflow_server,
                     "--study-name", name, "--model-name", name, "--project-dir", str(tmp_path)]) == 0
        shared = optuna.load_study(study_name=name, storage=postgres_url)
        fits = fits_of_run(shared.get_trials(deepcopy=False), FITS)
        # every fit finished: complete, or failed on purpose for constant validation scores
        assert all(t.state == TrialState.COMPLETE or failure_reason(t) == CONSTANT_SCORES for t in fits)
        assert len({(t.user_attrs["bracket"], t.user_attrs["configuration_id"]) for t in fits}) == CONFIGURATIONS
        assert len({(t.user_attrs["bracket"], t.user_attrs["rung"], t.user_attrs["configuration_id"])
                    for t in fits}) == FITS
        others = [t for t in shared.get_trials(deepcopy=False) if holds_slot(t) is None]
        assert all(t.state == TrialState.PRUNED and not t.params for t in others)  # refused, never fitted
        _same_as_single(fits, single)

        runs = _child_runs(mlflow_server, name)
        assert sorted(int(r.data.tags["fairops.trial_number"]) for r in runs) == sorted(t.number for t in fits)
        assert MlflowClient(mlflow_server).get_model_version_by_alias(name, "champion").version == "1"
    finally:
        _drop(postgres_url, name)


def test_a_killed_worker_loses_nothing(postgres_url, mlflow_server, tmp_path, single):
    """SIGKILL one of three workers mid-fit: the others redo its fit; the result equals one worker's."""
    name = f"kill-{uuid.uuid4().hex[:8]}"
    try:
        workers = _workers(3, postgres_url, mlflow_server, name, tmp_path, held=tmp_path / "held")
        storage = optuna.storages.RDBStorage(postgres_url)
        victim = _kill_the_held_worker(workers, tmp_path / "held")
        assert any(t.state == TrialState.RUNNING and claim_of(t) and claim_of(t).worker.endswith(f":{victim.pid}")
                   for t in optuna.load_study(study_name=name, storage=storage).get_trials(deepcopy=False))
        for worker in workers:
            if worker.poll() is None or worker.returncode != -signal.SIGKILL:
                _, err = worker.communicate(timeout=600)
                assert worker.returncode == 0, err[-3000:]
        shared = optuna.load_study(study_name=name, storage=storage)
        trials = shared.get_trials(deepcopy=False)
        dead = [t for t in trials if t.state == TrialState.FAIL and holds_slot(t) is None and t.params]
        assert dead, "the victim had a fit in progress"
        fits = fits_of_run(trials, FITS)
        _same_as_single(fits, single)  # the surviving workers redid the victim's fit
        assert main(["tune", *FAST, "--storage", postgres_url, "--tracking-uri", mlflow_server,
                     "--study-name", name, "--model-name", name, "--project-dir", str(tmp_path)]) == 0
        runs = _child_runs(mlflow_server, name)
        by_trial = Counter(int(r.data.tags["fairops.trial_number"]) for r in runs)
        assert all(by_trial[t.number] == 1 for t in fits)
        assert all(r.info.status == "FAILED" for r in runs if int(r.data.tags["fairops.trial_number"])
                   in {t.number for t in dead})
    finally:
        _drop(postgres_url, name)


def _kill_the_held_worker(workers, held: Path):
    """SIGKILL the first of ``workers`` (started with ``held``) once it is held in a fit; that worker."""
    victim = workers[0]
    wait_held(victim, held)
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait()
    return victim


