"""Fitted models an objective hands to :class:`~fairops.tracking.FairnessTrackingCallback` to log with their trial.

:func:`keep_model` holds a trial's model in memory until the callback of that trial takes it.
"""

from __future__ import annotations

import threading

_kept_models: dict = {}
_kept_lock = threading.Lock()


def keep_model(trial, model) -> None:
    """Hand a trial's fitted model to :class:`FairnessTrackingCallback` (``log_models=True``) to log.

    The model is held in memory until the callback of that trial runs, then dropped.

    Parameters
    ----------
    trial : optuna.Trial
        The live trial.
    model : object
        Its fitted model.

    Examples
    --------
    >>> import optuna
    >>> trial = optuna.create_study().ask()
    >>> keep_model(trial, "a model"); _pop_model(trial.study.study_name, trial.number)
    'a model'
    """
    with _kept_lock:
        _kept_models[(trial.study.study_name, trial.number)] = model


def _pop_model(study_name: str, number: int):
    with _kept_lock:
        return _kept_models.pop((study_name, number), None)
