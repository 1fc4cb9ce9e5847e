"""Storage helpers: finished-trial lookups by number and a per-bracket study view for base samplers."""

from __future__ import annotations

from collections.abc import Callable, Container

import optuna
from optuna.trial import FrozenTrial, TrialState


def trials_by_number(study: optuna.Study) -> dict[int, FrozenTrial]:
    """All trials of ``study`` keyed by number, read fresh from storage (no study-level cache)."""
    trials = study._storage.get_all_trials(study._study_id, deepcopy=False)
    return {t.number: t for t in trials}


def mark_failed(study: optuna.Study, trial_id: int) -> None:
    """Fail a running trial, ignoring a trial that another worker already finished."""
    try:
        study._storage.set_trial_state_values(trial_id, state=TrialState.FAIL)
    except optuna.exceptions.UpdateFinishedTrialError:
        pass


class BracketView:
    """A read-only stand-in for a study that shows base samplers only the trials ``keep`` accepts.

    Everything else is forwarded to the wrapped study, so samplers such as TPE see one bracket.

    >>> import optuna
    >>> study = optuna.create_study()
    >>> study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=4)
    >>> len(BracketView(study, lambda t: t.number % 2 == 0).get_trials())
    2
    """

    def __init__(self, study: optuna.Study, keep: Callable[[FrozenTrial], bool]) -> None:
        self._view_study = study
        self._view_keep = keep

    def __getattr__(self, name):
        return getattr(self._view_study, name)

    def get_trials(self, deepcopy: bool = True, states: Container[TrialState] | None = None):
        return [t for t in self._view_study.get_trials(deepcopy=deepcopy, states=states) if self._view_keep(t)]

    def _get_trials(self, deepcopy: bool = True, states: Container[TrialState] | None = None,
                    use_cache: bool = False):
        trials = self._view_study._get_trials(deepcopy=deepcopy, states=states, use_cache=use_cache)
        return [t for t in trials if self._view_keep(t)]

    @property
    def trials(self):
        return self.get_trials()


def set_user_attrs(storage, trial_id: int, attrs: dict) -> None:
    """Write several user attributes; on an RDB storage in one transaction (one commit, not one each).

    Optuna has no batch call for attributes, and each SQLite commit costs an fsync, so the RDB path
    reuses the storage's own per-attribute statement inside a single session, and the JournalStorage path
    appends all log lines in one call. Any other storage, or a storage without those internals, falls
    back to one ``set_trial_user_attr`` call per key.
    """
    backend = getattr(storage, "_backend", storage)
    write = getattr(backend, "_set_trial_attr_without_commit", None)
    sessions = getattr(backend, "scoped_session", None)
    if write is not None and sessions is not None:
        try:
            from optuna.storages._rdb import models
            from optuna.storages._rdb.storage import _create_scoped_session
        except ImportError:  # pragma: no cover - layout changed in a future Optuna
            write = None
        else:
            with _create_scoped_session(sessions, True) as session:
                for key, value in attrs.items():
                    write(session, models.TrialUserAttributeModel, trial_id, key, value)
            return
    if _journal_batch(storage, trial_id, attrs):
        return
    for key, value in attrs.items():
        storage.set_trial_user_attr(trial_id, key, value)


def _journal_batch(storage, trial_id: int, attrs: dict) -> bool:
    """JournalStorage: append one log line per attribute in a single ``append_logs`` call (one lock)."""
    try:
        from optuna.storages.journal import JournalStorage
        from optuna.storages.journal._storage import JournalOperation
    except ImportError:  # pragma: no cover - layout changed in a future Optuna
        return False
    needed = ("_thread_lock", "_backend", "_replay_result", "_sync_with_backend")
    if not isinstance(storage, JournalStorage) or not all(hasattr(storage, n) for n in needed):
        return False
    with storage._thread_lock:
        worker = storage._replay_result.worker_id
        storage._backend.append_logs([
            {"op_code": JournalOperation.SET_TRIAL_USER_ATTR, "worker_id": worker, "trial_id": trial_id,
             "user_attr": {key: value}} for key, value in attrs.items()])
        storage._sync_with_backend()
    return True
