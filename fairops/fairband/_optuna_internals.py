"""Every place fairops reaches past Optuna's public API, in one module, checked against the Optuna versions
it was written for.

A sampler receives the study and a :class:`~optuna.trial.FrozenTrial`; to record what the schedule
decided for that trial it has to write the trial's attributes through the study's storage, as Optuna's
own samplers and pruners do (``study._storage``, ``study._study_id``, ``trial._trial_id``: Optuna has no
public accessor for them). Those three attributes are reached only through :func:`storage_of`,
:func:`study_id_of`, :func:`trial_id_of` and :func:`stored_trial_id`; every write is then a public method
of :class:`~optuna.storages.BaseStorage` (one ``set_trial_*_attr`` call per attribute, on any storage:
in-memory, RDB, Journal, Optuna's gRPC storage proxy), and heartbeats use the storages' public heartbeat
methods. On the gRPC proxy, where each call is a network round trip, the calls of one write are made at
once from a few threads and waited for together.

Two more internals, each with no public counterpart:

- :class:`BaseHeartbeat`, the base class Optuna's heartbeat thread and :func:`optuna.storages.fail_stale_trials`
  recognise a storage with heartbeats by (``fairops.jobs._grpc_storage`` derives from it);
- the logger of Optuna's optimize loop and the words of its two warnings about a trial that returned NaN
  (:class:`NanTrialWarnings`).

Outside :data:`WRITTEN_FOR` the NaN warnings are left to show, and Optuna's own error of ``Trial.report`` in
a two-objective study is left as it is.

>>> import optuna
>>> internals_known("5.0.0"), internals_known("6.0.0"), internals_known("4.5.0")
(True, False, False)
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

import optuna
from optuna.pruners import BasePruner
from optuna.storages import BaseStorage
from optuna.trial import BaseTrial, FrozenTrial, TrialState

try:
    from optuna.storages._heartbeat import BaseHeartbeat as BaseHeartbeat  # re-exported for the gRPC storage
except ImportError as error:  # pragma: no cover - only with an Optuna that moved it
    raise ImportError(f"Optuna {optuna.__version__} no longer has optuna.storages._heartbeat.BaseHeartbeat; "
                      "fairops needs an update for this version") from error

from .._versions import in_range

#: Optuna versions (lowest included, highest excluded) whose internals this module was written for.
WRITTEN_FOR = ((5, 0), (6, 0))

#: Where Optuna's optimize loop reports a trial's end (INFO) and a failed trial (WARNING).
OPTIMIZE_LOGGER = "optuna.study._optimize"

def internals_known(version: str | None = None) -> bool:
    """True when ``version`` (default: the installed Optuna) is inside :data:`WRITTEN_FOR`."""
    return _in_range(optuna.__version__ if version is None else version)


@functools.lru_cache(maxsize=8)
def _in_range(version: str) -> bool:
    return in_range(version, WRITTEN_FOR)


# -- the three attributes every sampler needs ---------------------------------------------------------
def storage_of(study: optuna.Study) -> BaseStorage:
    """The study's storage (what ``study._storage`` holds; Optuna's samplers use the same attribute)."""
    try:
        return study._storage
    except AttributeError:
        raise RuntimeError(f"Optuna {optuna.__version__}'s Study no longer exposes its storage to samplers; "
                           "FairbandSampler needs an update for this Optuna version") from None


def study_id_of(study: optuna.Study) -> int:
    try:
        return study._study_id
    except AttributeError:
        raise RuntimeError(f"Optuna {optuna.__version__}'s Study no longer exposes its id to samplers") from None


def trial_id_of(study: optuna.Study, trial: BaseTrial) -> int:
    """The storage id of a trial, from the trial if it carries one, else looked up by its number."""
    trial_id: int | None = getattr(trial, "_trial_id", None)
    if trial_id is not None:
        return trial_id
    return storage_of(study).get_trial_id_from_study_id_trial_number(study_id_of(study), trial.number)


def stored_trial_id(trial: FrozenTrial) -> int:
    """The storage id of a :class:`~optuna.trial.FrozenTrial` read from a storage."""
    return trial._trial_id


# -- writes --------------------------------------------------------------------------------------------
def write_trial_attrs(study: optuna.Study, trial: BaseTrial, user: dict[str, Any] | None = None,
                      system: dict[str, Any] | None = None) -> None:
    """Write user and system attributes of a running trial, one public storage call each (system first).

    Raises :class:`optuna.exceptions.UpdateFinishedTrialError` when the trial is already finished.
    """
    user, system = user or {}, system or {}
    storage = storage_of(study)
    trial_id = trial_id_of(study, trial)
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


def _round_trip_per_call(storage: BaseStorage) -> bool:
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


def study_records(study: optuna.Study) -> dict[str, Any]:
    """The study's system attributes (Fairband keeps its settings and configurations there)."""
    return storage_of(study).get_study_system_attrs(study_id_of(study))


def write_study_record(study: optuna.Study, key: str, value: Any) -> None:
    storage_of(study).set_study_system_attr(study_id_of(study), key, value)


def fail_running_trial(study: optuna.Study, number: int) -> bool:
    """Fail a RUNNING trial of another worker (one judged dead); False if it was already finished."""
    storage = storage_of(study)
    try:
        trial_id = storage.get_trial_id_from_study_id_trial_number(study_id_of(study), number)
        return bool(storage.set_trial_state_values(trial_id, state=TrialState.FAIL))
    except optuna.exceptions.UpdateFinishedTrialError:
        return False


# -- heartbeats (public methods of the storages that have them) ----------------------------------------
def heartbeat_interval(study: optuna.Study) -> float | None:
    """Seconds between heartbeats when the study's storage records them, else None."""
    get = getattr(storage_of(study), "get_heartbeat_interval", None)
    if not callable(get):
        return None
    interval = get()
    return None if interval is None else float(interval)


def beat(study: optuna.Study, trial: BaseTrial) -> None:
    """Record a heartbeat for ``trial`` (no-op on storages without heartbeats)."""
    if heartbeat_interval(study) is not None:  # then the storage is one with heartbeats
        cast(BaseHeartbeat, storage_of(study)).record_heartbeat(trial_id_of(study, trial))


def fail_stale_trials(study: optuna.Study) -> None:
    """Optuna's public :func:`optuna.storages.fail_stale_trials`, without its experimental warning."""
    if heartbeat_interval(study) is None:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)


# -- Trial.report / Trial.should_prune of a two-objective study ----------------------------------------
def refuse_pruning_calls(message_for: Callable[[optuna.Trial], str | None]) -> None:
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
            def method(self: optuna.Trial, *args: Any, _original: Callable[..., Any] = original, **kwargs: Any) -> Any:
                for ask in tuple(_message_fors):
                    message = ask(self)
                    if message is not None:
                        raise NotImplementedError(message)
                return _original(self, *args, **kwargs)

            method._fairops_wrapped = True  # type: ignore[attr-defined]
            setattr(optuna.trial.Trial, name, method)


_patch_lock = threading.Lock()
_message_fors: list[Callable[[optuna.Trial], str | None]] = []


# -- the pruner Optuna gives a study created without one ------------------------------------------------
def is_optuna_default_pruner(pruner: BasePruner) -> bool:
    """True for the pruner ``optuna.create_study`` gives a study created without one (a ``MedianPruner`` with
    its default settings, compared through its attributes, which Optuna does not publish).

    >>> is_optuna_default_pruner(optuna.create_study().pruner), is_optuna_default_pruner(optuna.pruners.NopPruner())
    (True, False)
    """
    default = optuna.pruners.MedianPruner
    return type(pruner) is default and vars(pruner) == vars(default())


# -- what the optimize loop logs about a trial that returned NaN ---------------------------------------
class NanTrialWarnings(logging.Filter):
    """Drops the two warnings Optuna's optimize loop logs on :data:`OPTIMIZE_LOGGER` for a trial that returned
    NaN, recognised by their words; any other record passes. Outside :data:`WRITTEN_FOR` the logger or the
    words may have changed: the filter then drops nothing and the warnings show."""

    def __init__(self) -> None:
        super().__init__()
        self._trials: set[str | None] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        words = message.split()
        number = words[1] if len(words) > 1 and words[0] == "Trial" else None
        if "because of the following error: The value nan is not acceptable" in message:
            self._trials.add(number)
            return False
        return not (number in self._trials and message.endswith("failed with value (nan, nan)."))

