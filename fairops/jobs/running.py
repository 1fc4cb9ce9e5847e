"""What every long-running job shares: storage, Ctrl-C handling, budget bounds, waiting, quiet output."""

from __future__ import annotations

import signal
import sys
import time

OVERFLOW_ATTR = "fairops:beyond_budget"
HEARTBEAT_SECONDS = 10


def open_storage(url: str, heartbeat: float = HEARTBEAT_SECONDS):
    import optuna

    if url.endswith((".log", ".journal")):
        from optuna.storages import JournalStorage
        from optuna.storages.journal import JournalFileBackend

        return JournalStorage(JournalFileBackend(url))
    from ..sqlite_lock import sqlite_open_lock

    try:
        # Heartbeats let a restarted or surviving worker fail the trials of a killed one. Workers
        # started together open a fresh SQLite file one at a time, so only one creates the schema.
        with sqlite_open_lock(url):
            return optuna.storages.RDBStorage(url, heartbeat_interval=max(1, round(heartbeat)),
                                              grace_period=max(2, round(3 * heartbeat)))
    except Exception as error:  # unreachable server, bad URL, missing driver
        raise ValueError(f"cannot open the Optuna storage {url!r}: {error}") from error


class Interrupt:
    """First Ctrl-C: let the fits in flight finish, then stop. Second: abort at once.

    Optuna accepts ``study.stop()`` only from inside its loop (a callback), not from a signal
    handler when trials run in threads, so the handler raises a flag that :meth:`callback` acts on.

    >>> interrupt = Interrupt()
    >>> interrupt.requested
    False
    """

    def __init__(self):
        self.requested = False
        self._previous = None

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print("\nstopping after the fits in progress (Ctrl-C again to abort them); "
              "run the same command to resume", file=sys.stderr, flush=True)

    def callback(self, study, trial) -> None:
        if self.requested:
            study.stop()

    def __enter__(self):
        import threading

        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def stop_at(target: int):
    """Callback stopping a worker once the study holds ``target`` trials (any worker's)."""

    def callback(study, trial):
        if len(study.get_trials(deepcopy=False)) >= target:
            study.stop()

    return callback


def bounded(objective, target: int):
    """Refuse trials numbered past the run's budget (several workers can overshoot by a trial or two)."""
    import optuna

    def wrapped(trial):
        if trial.number >= target:
            trial.set_user_attr(OVERFLOW_ATTR, True)
            raise optuna.TrialPruned(f"trial {trial.number} is past the run's {target} fits")
        return objective(trial)

    return wrapped


def tracked(tracker, study_target: int):
    """Log only the run's own fits (never the refused overflow trials)."""

    def callback(study, trial):
        if trial.number < study_target:
            tracker(study, trial)

    return callback


def wait_for_fits(study, target: int, timeout: float, poll: float = 1.0) -> list:
    """Block until the first ``target`` trials are finished (other workers may still be fitting)."""
    from optuna.trial import TrialState

    deadline = time.monotonic() + timeout
    while True:
        trials = [t for t in study.get_trials(deepcopy=False) if t.number < target]
        if len(trials) >= target and all(t.state != TrialState.RUNNING for t in trials):
            return trials
        if time.monotonic() > deadline:
            running = [t.number for t in trials if t.state == TrialState.RUNNING]
            raise TimeoutError(f"fits still running after {timeout:.0f} s: {running[:10]}; "
                               "a killed worker's fits are failed by heartbeat on RDB storages")
        time.sleep(poll)


def quiet_libraries() -> None:
    """Keep the job's output to its own lines: library chatter goes to warnings-level logs only."""
    import logging
    import warnings

    import mlflow  # noqa: F401  (imported first: it configures its loggers on import)
    import optuna
    from sklearn.exceptions import ConvergenceWarning

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    # Small budget slices make short fits: unconverged or clipped-batch fits are expected, not news.
    warnings.filterwarnings("ignore", category=ConvergenceWarning)
    warnings.filterwarnings("ignore", message=".*batch_size.*clipped.*")
    warnings.filterwarnings("ignore", message=".*Integer columns in Python cannot represent missing values.*")
    for name in ("mlflow", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)


class Silent:
    """A stream that is not a terminal and keeps nothing (the progress bar draws nothing on it)."""

    def isatty(self):
        return False

    def write(self, text):
        return len(text)

    def flush(self):
        pass


