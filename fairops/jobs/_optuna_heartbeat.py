"""Optuna's base class of storages with heartbeats, and a stored trial's id, for the Optuna versions they were read
from.

Optuna has no public base class for a storage with heartbeats: its RDB and journal storages derive from
``optuna.storages._heartbeat.BaseHeartbeat``, which Optuna's heartbeat thread and
:func:`optuna.storages.fail_stale_trials` recognise. A :class:`~optuna.trial.FrozenTrial` read from a storage
holds its storage id only privately (``_trial_id``). Both are reached here only, and an Optuna that moved the
base class is an ImportError at once.

>>> internals_known("5.1.0"), internals_known("4.5.0")
(True, False)
"""

from __future__ import annotations

from .._versions import in_range

#: Optuna versions whose ``BaseHeartbeat`` and ``FrozenTrial._trial_id`` this module was written for.
WRITTEN_FOR = ((5, 0), (6, 0))

try:
    from optuna.storages._heartbeat import BaseHeartbeat
except ImportError as error:  # pragma: no cover - only with an Optuna that moved it
    import optuna

    raise ImportError(f"Optuna {optuna.__version__} no longer has optuna.storages._heartbeat.BaseHeartbeat; "
                      "fairops.jobs.grpc_storage needs an update for this version") from error

__all__ = ["WRITTEN_FOR", "BaseHeartbeat", "internals_known", "trial_id"]


def internals_known(version: str | None = None) -> bool:
    """True when ``version`` (default: the installed Optuna) is inside :data:`WRITTEN_FOR`."""
    if version is None:
        import optuna

        version = optuna.__version__
    return in_range(version, WRITTEN_FOR)


def trial_id(trial) -> int:
    """The storage id of a :class:`~optuna.trial.FrozenTrial` read from a storage."""
    return trial._trial_id
