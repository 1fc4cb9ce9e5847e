"""What every long-running job shares: storage, Ctrl-C handling, working a run to its end, quiet output.

A *run* is the set of fits a job asks for (one Fairband iteration = 206 slots, or the first ``n`` trials
of a study run by another sampler). :func:`work_until_complete` keeps a worker on the study until every
fit of the run is finished: fits whose worker died (failed by its heartbeat) are redone, other workers'
fits in progress are waited for, and Ctrl-C stops it cleanly.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time

from ..errors import InputError

OVERFLOW_ATTR = "fairops:beyond_budget"
HEARTBEAT_SECONDS = 10
#: MLflow's public switch of its artifact upload/download progress bar (``mlflow.environment_variables``).
ARTIFACTS_BAR = "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"

_logger = logging.getLogger(__name__)


def open_storage(url: str, heartbeat: float = HEARTBEAT_SECONDS, on_stale=None):
    """An Optuna storage for ``url`` (a ``.log``/``.journal`` file, a ``grpc://host:port`` storage proxy,
    or a database URL), with heartbeats where the storage can have them.

    ``on_stale(study, trial)`` is called for each trial this worker fails because its heartbeat went
    stale (a dead worker's fit), so such failures reach the tracking too.
    """
    import optuna

    if url.endswith((".log", ".journal")):
        from optuna.storages import JournalStorage
        from optuna.storages.journal import JournalFileBackend

        return JournalStorage(JournalFileBackend(url))
    if url.startswith("grpc://"):
        from ._grpc_storage import open_grpc_storage

        return open_grpc_storage(url, heartbeat, on_stale)
    from .._store_lock import store_open_lock

    try:
        # Heartbeats let a restarted or surviving worker fail the trials of a killed one. Workers
        # started together open a fresh store one at a time, so only one creates the schema.
        with store_open_lock(url):
            return optuna.storages.RDBStorage(url, heartbeat_interval=max(1, round(heartbeat)),
                                              grace_period=max(2, round(3 * heartbeat)),
                                              heartbeat_stale_trial_callback=on_stale)
    except Exception as error:  # unreachable server, bad URL, missing driver
        raise InputError(f"cannot open the Optuna storage {url!r}: {error}") from error


class StaleTrialCallbacks:
    """The storage's callback for trials failed by a stale heartbeat, forwarding to callbacks added later.

    The storage is opened before the tracking exists; a failing callback is logged, never raised (it
    runs inside Optuna's trial loop and would stop the worker).

    >>> seen = []
    >>> callbacks = StaleTrialCallbacks()
    >>> callbacks.add(lambda study, trial: seen.append(trial))
    >>> callbacks(None, "trial 7"); seen
    ['trial 7']
    """

    def __init__(self):
        self._callbacks = []

    def add(self, callback) -> None:
        self._callbacks.append(callback)

    def __call__(self, study, trial) -> None:
        for callback in self._callbacks:
            try:
                callback(study, trial)
            except Exception as error:  # noqa: BLE001 - reporting must not stop the worker
                _logger.warning("reporting stale trial %s failed: %r", getattr(trial, "number", trial), error)


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
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


# -- the fits a job asks for ------------------------------------------------------------------------
class SlotRun:
    """The first ``n_fits`` slots of a Fairband study: each slot's fit, whoever fitted it.

    A dead worker's trial holds no slot, so its fit counts as missing until another trial redoes it.
    """

    def __init__(self, study, n_fits: int) -> None:
        self.study, self.n_fits = study, n_fits

    def status(self) -> tuple[int, int, int]:
        """(finished, running, missing) fits of the run."""
        board = self.study.sampler.board(self.study)  # the sampler's board: reads only what changed
        done = sum(s in board.done for s in range(self.n_fits))
        running = sum(s in board.running for s in range(self.n_fits))
        return done, running, self.n_fits - done - running

    def fits(self) -> list:
        """The finished fit of every slot, in slot order."""
        from ..fairband._claims import fits_of_run

        return fits_of_run(self.study.get_trials(deepcopy=False), self.n_fits)

    def includes(self, trial) -> bool:
        """Whether ``trial`` worked on one of the run's slots (a fit, or a dead worker's attempt at one)."""
        from ..fairband._claims import HELD, claim_of

        claim = claim_of(trial)
        return claim is not None and claim.status == HELD and claim.slot is not None and claim.slot < self.n_fits

    def guard(self, objective):
        """The objective, leaving its slot to be redone when a fit is aborted (second Ctrl-C)."""
        sampler = self.study.sampler

        def guarded(trial):
            try:
                return objective(trial)
            except KeyboardInterrupt:
                sampler.abandon(trial)
                raise

        return guarded


class NumberedRun:
    """The first ``n_fits`` trials of a study run by a sampler without slots (e.g. random search)."""

    def __init__(self, study, n_fits: int) -> None:
        self.study, self.n_fits = study, n_fits

    def _trials(self) -> list:
        return [t for t in self.study.get_trials(deepcopy=False) if t.number < self.n_fits]

    def status(self) -> tuple[int, int, int]:
        trials = self._trials()
        done = sum(t.state.is_finished() for t in trials)
        running = len(trials) - done
        return done, running, self.n_fits - len(trials)

    def fits(self) -> list:
        return [t for t in self._trials() if t.state.is_finished()]

    def includes(self, trial) -> bool:
        return trial.number < self.n_fits

    def guard(self, objective):
        """The objective, refusing trials numbered past the run (several workers can overshoot by one or two)."""
        return refuse_trials_beyond(objective, self.n_fits)


def work_until_complete(study, objective, run, *, n_jobs: int = 1, catch=(), callbacks=(), interrupt=None,
                        wait_timeout: float = 3600.0, poll: float = 1.0) -> bool:
    """Fit until every fit of ``run`` is finished; False if stopped by Ctrl-C first.

    While fits are missing, this worker runs ``study.optimize``; when the rest are other workers' fits
    in progress, it waits for them (failing dead workers' trials by heartbeat, then redoing their fits).
    """
    from ..fairband._optuna_internals import fail_stale_trials

    waited_since = None
    while not (interrupt is not None and interrupt.requested):
        done, running, missing = run.status()
        if missing:
            waited_since = None
            stops = [_stop_when_nothing_missing(run)] + ([interrupt.callback] if interrupt is not None else [])
            study.optimize(run.guard(objective), n_trials=None, n_jobs=n_jobs, catch=tuple(catch),
                           callbacks=[*callbacks, *stops])
            continue
        if not running:
            return True
        waited_since = waited_since or time.monotonic()
        if time.monotonic() - waited_since > wait_timeout:
            raise TimeoutError(f"{running} fit(s) of other workers still running after {wait_timeout:.0f} s; "
                               "a killed worker's fits are failed by heartbeat on RDB storages")
        fail_stale_trials(study)
        time.sleep(poll)
    return False


def track_missing(tracker, study, run, settle: float = 0.0) -> int:
    """Log the run's fits whose worker died between the fit and the end of its logging.

    A fit with no child run gets one; a child run left RUNNING (its worker died while logging it) is
    completed with the trial's values and final status. A fit that another worker has just finished
    may be a moment away from its own logging: when any are found, look again after ``settle`` seconds
    and act only on what is still unlogged. Returns how many fits were logged or completed. Reads the
    experiment's trial runs through MLflow's public client.
    """
    missing, interrupted = _unlogged(tracker, study, run)
    if (missing or interrupted) and settle > 0:
        time.sleep(settle)
        missing, interrupted = _unlogged(tracker, study, run)
    for trial in missing:
        tracker(study, trial)
    for trial, run_id in interrupted:
        tracker.complete_interrupted(study, trial, run_id)
    return len(missing) + len(interrupted)


def _unlogged(tracker, study, run) -> tuple[list, list]:
    """(fits without a child run, (fit, run id) pairs whose child run is still RUNNING)."""
    from ..tracking._session import TRIAL_TAG

    logged: set = set()
    running: dict = {}
    for found in tracker.session.trial_runs(study):
        number = found.data.tags.get(TRIAL_TAG)
        if found.info.status == "RUNNING":
            running.setdefault(number, found.info.run_id)
        else:
            logged.add(number)
    fits = run.fits()
    missing = [trial for trial in fits if str(trial.number) not in logged and str(trial.number) not in running]
    interrupted = [(trial, running[str(trial.number)]) for trial in fits
                   if str(trial.number) not in logged and str(trial.number) in running]
    return missing, interrupted


def _stop_when_nothing_missing(run):
    def callback(study, trial):
        if run.status()[2] == 0:
            study.stop()

    return callback


def refuse_trials_beyond(objective, target: int):
    """Refuse trials numbered past the run's budget (several workers can overshoot by a trial or two)."""
    import optuna

    def wrapped(trial):
        if trial.number >= target:
            trial.set_user_attr(OVERFLOW_ATTR, True)
            raise optuna.TrialPruned(f"trial {trial.number} is past the run's {target} fits")
        return objective(trial)

    return wrapped


def tracked(tracker, run):
    """Log only the run's own trials (``run``: a run, or a number of trials) to ``tracker``."""
    includes = run.includes if hasattr(run, "includes") else (lambda trial: trial.number < run)

    def callback(study, trial):
        if includes(trial):
            tracker(study, trial)

    return callback


def quiet_libraries() -> None:
    """Keep the job's output to its own lines: library chatter goes to warnings-level logs only."""
    import logging
    import warnings

    import mlflow  # noqa: F401  (imported first: it configures its loggers on import)
    import optuna

    from ..tuning._quiet import ignore_short_fit_warnings

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    ignore_short_fit_warnings()
    warnings.filterwarnings("ignore", message=".*Integer columns in Python cannot represent missing values.*")
    for name in ("mlflow", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)


@contextlib.contextmanager
def artifact_bars_only_on_a_terminal(stream=None):
    """MLflow's artifact progress bar ("Downloading artifacts") off inside the block when ``stream``
    (default: ``sys.stderr``, where the bar is drawn) is not a terminal, so logs and pipes carry no bars.

    A value the user gave the variable wins; after the block the environment is as it was before.

    >>> import io
    >>> with artifact_bars_only_on_a_terminal(io.StringIO()):
    ...     os.environ.get(ARTIFACTS_BAR) in ("false", os.environ.get(ARTIFACTS_BAR))
    True
    """
    stream = sys.stderr if stream is None else stream
    if ARTIFACTS_BAR in os.environ or getattr(stream, "isatty", lambda: False)():
        yield
        return
    os.environ[ARTIFACTS_BAR] = "false"
    try:
        yield
    finally:
        os.environ.pop(ARTIFACTS_BAR, None)
