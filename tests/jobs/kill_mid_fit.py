"""Kill a tuning command's process while one of its fits is running (a worker dying mid-fit)."""

import os
import signal
import subprocess
import time

import optuna
import sqlalchemy.exc
from optuna.trial import TrialState


def study_trials(storage: str, study_name: str) -> list:
    """The study's trials, or none while the worker has not made its store and study yet, or holds the store's
    lock (stopped in the middle of a write: the look is retried once it runs again)."""
    from pathlib import Path

    from fairops.store_lock import sqlite_file, sqlite_open_lock

    if not Path(sqlite_file(storage)).exists():
        return []
    try:
        with sqlite_open_lock(storage):  # as the workers do: a fresh file gets its schema from one process
            rdb = optuna.storages.RDBStorage(storage)
        return optuna.load_study(study_name=study_name, storage=rdb).get_trials(deepcopy=False)
    except (KeyError, ValueError, optuna.exceptions.StorageInternalError, sqlalchemy.exc.OperationalError):
        return []


def _in_fit(storage: str, study_name: str, after: int) -> list:
    """The trials in a fit (running, parameters drawn) once ``after`` trials are finished, else none."""
    trials = study_trials(storage, study_name)
    if sum(t.state.is_finished() for t in trials) < after:
        return []
    return [t for t in trials if t.state == TrialState.RUNNING and t.params]


def kill_mid_fit(command, storage: str, study_name: str, *, after: int):
    """Start ``command``, SIGKILL it while a fit is running once ``after`` fits are done; the killed trial.

    The process is stopped (SIGSTOP) before the fit is looked at again, so the fit cannot end between the look
    and the kill; when it ended before the stop, the process goes on (SIGCONT) and is caught at a later fit.
    A trial whose parameters are not drawn yet is not a fit in progress.
    """
    worker = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while worker.poll() is None and time.monotonic() < deadline:
            if _in_fit(storage, study_name, after):
                os.killpg(worker.pid, signal.SIGSTOP)
                caught = _in_fit(storage, study_name, after)
                if caught:
                    os.killpg(worker.pid, signal.SIGKILL)
                    return caught[0]
                os.killpg(worker.pid, signal.SIGCONT)
            time.sleep(0.02)
    finally:
        worker.kill()
        worker.wait()
    raise AssertionError(f"never caught a fit in progress (exit status {worker.returncode})")
