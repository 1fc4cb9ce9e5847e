"""Kill a tuning command's process while one of its fits is running (a worker dying mid-fit)."""

import os
import signal
import subprocess
import time

import optuna
from optuna.trial import TrialState


def study_trials(storage: str, study_name: str) -> list:
    """The study's trials, or none while the worker has not made its store and study yet."""
    from pathlib import Path

    from fairops.store_lock import sqlite_file, sqlite_open_lock

    if not Path(sqlite_file(storage)).exists():
        return []
    try:
        with sqlite_open_lock(storage):  # as the workers do: a fresh file gets its schema from one process
            rdb = optuna.storages.RDBStorage(storage)
        return optuna.load_study(study_name=study_name, storage=rdb).get_trials(deepcopy=False)
    except (KeyError, ValueError, optuna.exceptions.StorageInternalError):
        return []


def kill_mid_fit(command, storage: str, study_name: str, *, after: int, step: int = 5):
    """Start ``command``, SIGKILL it while a fit is running once ``after`` fits are done; the killed trial.

    When the fit ends between the look and the kill, the command is run and killed again, ``step`` fits later;
    a trial caught before its parameters were drawn (the next one, asked between the look and the kill) is not a
    fit in progress and does not count.
    """
    for _ in range(5):
        worker = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                  start_new_session=True)
        try:
            deadline = time.monotonic() + 300
            while worker.poll() is None and time.monotonic() < deadline:
                trials = study_trials(storage, study_name)
                finished = sum(t.state.is_finished() for t in trials)
                if finished >= after and any(t.state == TrialState.RUNNING and t.params for t in trials):
                    break
                time.sleep(0.02)
            os.killpg(worker.pid, signal.SIGKILL)
        finally:
            worker.kill()
            worker.wait()
        killed = [t for t in study_trials(storage, study_name) if t.state == TrialState.RUNNING and t.params]
        if killed:
            return killed[0]
        after += step
    raise AssertionError("never caught a fit in progress")
