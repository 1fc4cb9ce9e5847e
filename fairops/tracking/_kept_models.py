"""Fitted models an objective hands to :class:`~fairops.tracking.FairnessTrackingCallback` to log with their trial.

:func:`keep_model` holds a trial's model in memory until the callback of that trial takes it.
"""

from __future__ import annotations

import threading
import warnings
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import optuna

_kept_models: dict = {}
_kept_lock = threading.Lock()
_checked: dict = {}  # study name -> the sets of types already checked for it


def keep_model(trial: optuna.Trial, model: object) -> None:
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
    _name_what_cannot_be_saved(trial, model)


def _name_what_cannot_be_saved(trial, model) -> None:
    """Warn, once per study and kind of model, when the classifier flavor cannot save ``model``."""
    from ..mlflow import classifier
    from ..mlflow.flavors import flavor_for

    try:
        if flavor_for(model) is not classifier:
            return
    except TypeError:  # no flavor at all: the callback records that on the trial's run
        return
    kind = frozenset(classifier.type_names(model))
    with _kept_lock:
        checked = _checked.setdefault(trial.study.study_name, set())
        if kind in checked:
            return
        checked.add(kind)
    try:
        classifier.check_savable(model)
    except TypeError as error:
        warnings.warn(f"trial {trial.number} keeps a model that cannot be logged or registered: {error}",
                      RuntimeWarning, stacklevel=3)


def _pop_model(study_name: str, number: int):
    with _kept_lock:
        return _kept_models.pop((study_name, number), None)
