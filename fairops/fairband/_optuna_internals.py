"""Every place Fairband reaches past Optuna's public API, in one module, checked against the Optuna
versions it was written for.

A sampler receives the study and a :class:`~optuna.trial.FrozenTrial`; to record what the schedule
decided for that trial it has to write the trial's attributes through the study's storage, as Optuna's
own samplers and pruners do (``study._storage``, ``study._study_id``, ``trial._trial_id``: Optuna has no
public accessor for them). Those three attributes are used on every path and are reached only through
:func:`storage_of`, :func:`study_id_of` and :func:`trial_id_of`; everything else goes through the
methods of :class:`~optuna.storages.BaseStorage` and the storages' public heartbeat methods.

Inside :data:`WRITTEN_FOR` one internal makes the hot path cheaper: several attributes are written in one
transaction on :class:`~optuna.storages.RDBStorage` (one commit, so one fsync on SQLite, instead of one per
attribute; on SQLite and PostgreSQL one upsert per table after one check that the trial still runs) and in
one append on :class:`~optuna.storages.JournalStorage`.

Outside the range, or after ``use_internals(False)``, each attribute is one public ``set_trial_*_attr``
call. Any storage works on that
path (in-memory, RDB, Journal, Optuna's gRPC storage proxy). On the gRPC proxy, where each call is a
network round trip, the calls of one write are made at once from a few threads and waited for together.

>>> import optuna
>>> internals_known("5.0.0"), internals_known("6.0.0"), internals_known("4.5.0")
(True, False, False)
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import optuna
from optuna.trial import TrialState

from .._versions import in_range

# Optuna versions whose internals (RDB sessions, journal operations, Study._get_trials) this module knows.
WRITTEN_FOR = ((5, 0), (6, 0))

_switch = threading.local()
_warned: set = set()


def internals_known(version: str | None = None) -> bool:
    """True when ``version`` (default: the installed Optuna) is inside :data:`WRITTEN_FOR`."""
    return _in_range(optuna.__version__ if version is None else version)


@functools.lru_cache(maxsize=8)
def _in_range(version: str) -> bool:
    return in_range(version, WRITTEN_FOR)


@contextlib.contextmanager
def use_internals(allowed: bool):
    """Within the block (this thread), take the fast internal paths only if ``allowed`` (and the version is known).

    >>> with use_internals(False):
    ...     fast_paths_on()
    False
    """
    previous = getattr(_switch, "allowed", True)
    _switch.allowed = bool(allowed)
    try:
        yield
    finally:
        _switch.allowed = previous


def fast_paths_on() -> bool:
    """Whether the internal fast paths are in use here and now."""
    if not getattr(_switch, "allowed", True):
        return False
    if internals_known():
        return True
    if optuna.__version__ not in _warned:
        _warned.add(optuna.__version__)
        warnings.warn(f"fairops' Fairband was written for Optuna {WRITTEN_FOR[0][0]}.x; with Optuna "
                      f"{optuna.__version__} it writes trial attributes one public call at a time", RuntimeWarning,
                      stacklevel=3)
    return False


# -- the three attributes every sampler needs ---------------------------------------------------------
def storage_of(study):
    """The study's storage (what ``study._storage`` holds; Optuna's samplers use the same attribute)."""
    try:
        return study._storage
    except AttributeError:
        raise RuntimeError(f"Optuna {optuna.__version__}'s Study no longer exposes its storage to samplers; "
                           "FairbandSampler needs an update for this Optuna version") from None


def study_id_of(study) -> int:
    try:
        return study._study_id
    except AttributeError:
        raise RuntimeError(f"Optuna {optuna.__version__}'s Study no longer exposes its id to samplers") from None


def trial_id_of(study, trial) -> int:
    """The storage id of a trial, from the trial if it carries one, else looked up by its number."""
    trial_id = getattr(trial, "_trial_id", None)
    if trial_id is not None:
        return trial_id
    return storage_of(study).get_trial_id_from_study_id_trial_number(study_id_of(study), trial.number)


# -- writes --------------------------------------------------------------------------------------------
def write_trial_attrs(study, trial, user: dict | None = None, system: dict | None = None) -> None:
    """Write user and system attributes of a running trial, in one storage write where the version allows.

    Raises :class:`optuna.exceptions.UpdateFinishedTrialError` when the trial is already finished.
    """
    user, system = user or {}, system or {}
    storage = storage_of(study)
    trial_id = trial_id_of(study, trial)
    if fast_paths_on() and (_rdb_batch(storage, trial_id, user, system) or
                            _journal_batch(storage, trial_id, user, system)):
        return
    calls = [(storage.set_trial_system_attr, key, value) for key, value in system.items()]
    calls += [(storage.set_trial_user_attr, key, value) for key, value in user.items()]
    if len(calls) > 1 and _round_trip_per_call(storage):
        # Each call is a network round trip and none depends on another: wait for them together.
        futures = [_writer_pool().submit(call, trial_id, key, value) for call, key, value in calls]
        errors = [error for error in (future.exception() for future in futures) if error is not None]
        if errors:
            raise errors[0]
        return
    for call, key, value in calls:
        call(trial_id, key, value)


def _round_trip_per_call(storage) -> bool:
    """True for Optuna's gRPC storage proxy, whose every write is one call to the proxy server."""
    from optuna.storages import GrpcStorageProxy

    return isinstance(storage, GrpcStorageProxy)


_pool: tuple[int, ThreadPoolExecutor] | None = None
_pool_lock = threading.Lock()


def _writer_pool() -> ThreadPoolExecutor:
    """This process's threads for concurrent attribute writes (a forked child makes its own)."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (os.getpid(), ThreadPoolExecutor(max_workers=8, thread_name_prefix="fairband-attrs"))
        return _pool[1]


def _rdb_batch(storage, trial_id: int, user: dict, system: dict) -> bool:
    from optuna.storages import RDBStorage

    backend = getattr(storage, "_backend", storage)  # RDBStorage behind Optuna's caching wrapper
    if not isinstance(backend, RDBStorage):
        return False
    from optuna.storages._rdb import models
    from optuna.storages._rdb.storage import _create_scoped_session

    tables = ((models.TrialSystemAttributeModel, system), (models.TrialUserAttributeModel, user))
    with _create_scoped_session(backend.scoped_session) as session:
        insert = _multi_row_upsert(backend.engine.name)
        if insert is None:  # another database: the storage's own statement per attribute
            for model, attrs in tables:
                for key, value in attrs.items():
                    backend._set_trial_attr_without_commit(session, model, trial_id, key, value)
            return True
        # One look at the trial (is it still running?) and one statement per table, not two per attribute.
        trial = models.TrialModel.find_or_raise_by_id(trial_id, session)
        backend.check_trial_is_updatable(trial_id, trial.state)
        for model, attrs in tables:
            if attrs:
                rows = [{"trial_id": trial_id, "key": key, "value_json": json.dumps(value)}
                        for key, value in attrs.items()]
                statement = insert(model).values(rows)
                session.execute(statement.on_conflict_do_update(
                    index_elements=[model.trial_id, model.key], set_={"value_json": statement.excluded.value_json}))
    return True


def _multi_row_upsert(dialect: str):
    """SQLAlchemy's INSERT with ON CONFLICT for the databases that have it (SQLite >= 3.24, PostgreSQL)."""
    import sqlite3

    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert

        return insert
    if dialect == "sqlite" and sqlite3.sqlite_version_info >= (3, 24, 0):
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert
    return None


def _journal_batch(storage, trial_id: int, user: dict, system: dict) -> bool:
    from optuna.storages import JournalStorage

    if not isinstance(storage, JournalStorage):
        return False
    from optuna.storages.journal._storage import JournalOperation

    with storage._thread_lock:
        worker = storage._replay_result.worker_id
        logs = [{"op_code": JournalOperation.SET_TRIAL_SYSTEM_ATTR, "worker_id": worker, "trial_id": trial_id,
                 "system_attr": {key: value}} for key, value in system.items()]
        logs += [{"op_code": JournalOperation.SET_TRIAL_USER_ATTR, "worker_id": worker, "trial_id": trial_id,
                  "user_attr": {key: value}} for key, value in user.items()]
        storage._backend.append_logs(logs)
        storage._sync_with_backend()
    return True


def study_records(study) -> dict:
    """The study's system attributes (Fairband keeps its settings and configurations there)."""
    return storage_of(study).get_study_system_attrs(study_id_of(study))


def write_study_record(study, key: str, value) -> None:
    storage_of(study).set_study_system_attr(study_id_of(study), key, value)


def fail_running_trial(study, number: int) -> bool:
    """Fail a RUNNING trial of another worker (one judged dead); False if it was already finished."""
    storage = storage_of(study)
    try:
        trial_id = storage.get_trial_id_from_study_id_trial_number(study_id_of(study), number)
        return bool(storage.set_trial_state_values(trial_id, state=TrialState.FAIL))
    except optuna.exceptions.UpdateFinishedTrialError:
        return False


# -- heartbeats (public methods of the storages that have them) ----------------------------------------
def heartbeat_interval(study) -> float | None:
    """Seconds between heartbeats when the study's storage records them, else None."""
    get = getattr(storage_of(study), "get_heartbeat_interval", None)
    if not callable(get):
        return None
    interval = get()
    return None if interval is None else float(interval)


def beat(study, trial) -> None:
    """Record a heartbeat for ``trial`` (no-op on storages without heartbeats)."""
    if heartbeat_interval(study) is not None:
        storage_of(study).record_heartbeat(trial_id_of(study, trial))


def fail_stale_trials(study) -> None:
    """Optuna's public :func:`optuna.storages.fail_stale_trials`, without its experimental warning."""
    if heartbeat_interval(study) is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)


# -- Trial.report / Trial.should_prune of a two-objective study ----------------------------------------
def refuse_pruning_calls(message_for) -> None:
    """Make :meth:`optuna.trial.Trial.report` and :meth:`~optuna.trial.Trial.should_prune` raise
    ``NotImplementedError(text)`` whenever ``message_for(trial)`` gives a text for the trial (else they do what
    Optuna's do). The methods are wrapped on the class once per process; each ``message_for`` is asked once.

    Optuna 5 raises its own NotImplementedError from both in a multi-objective study before asking the pruner,
    so a ``message_for`` that answers only for such studies changes the message alone. Outside
    :data:`WRITTEN_FOR` Optuna's methods are left as they are.

    >>> refuse_pruning_calls(lambda trial: "use RungProgress" if trial.study.study_name == "doc-advice" else None)
    >>> study = optuna.create_study(directions=["maximize", "maximize"], study_name="doc-advice")
    >>> study.ask().should_prune()
    Traceback (most recent call last):
    ...
    NotImplementedError: use RungProgress
    """
    if not internals_known():
        return
    with _patch_lock:
        if message_for not in _message_fors:
            _message_fors.append(message_for)
        for name in ("report", "should_prune"):
            original = getattr(optuna.trial.Trial, name)
            if getattr(original, "_fairops_wrapped", False):
                continue

            @functools.wraps(original)
            def method(self, *args, _original=original, **kwargs):
                for ask in tuple(_message_fors):
                    message = ask(self)
                    if message is not None:
                        raise NotImplementedError(message)
                return _original(self, *args, **kwargs)

            method._fairops_wrapped = True  # type: ignore[attr-defined]
            setattr(optuna.trial.Trial, name, method)


_patch_lock = threading.Lock()
_message_fors: list = []


# -- the pruner Optuna gives a study created without one ------------------------------------------------
def is_optuna_default_pruner(pruner) -> bool:
    """True for the pruner ``optuna.create_study`` gives a study created without one (a ``MedianPruner`` with
    its default settings, compared through its attributes, which Optuna does not publish).

    >>> is_optuna_default_pruner(optuna.create_study().pruner), is_optuna_default_pruner(optuna.pruners.NopPruner())
    (True, False)
    """
    default = optuna.pruners.MedianPruner
    return type(pruner) is default and vars(pruner) == vars(default())
