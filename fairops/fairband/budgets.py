"""``budget(trial)``: the share of the training rows a trial's fit gets.

It asks the study's Fairband sampler when the trial is live (found through its settings, as the pruner
finds them, so this module does not import the sampler's), else reads the trial's ``budget`` attribute.
"""

from __future__ import annotations

import optuna

from ..errors import InputError
from . import _optuna_internals as internals
from ._settings import settings_of


def budget(trial) -> float:
    """Share of the training set this trial's fit gets (1/81 ... 1 with the paper's settings).

    Works on a live :class:`optuna.trial.Trial` (after the sampler prepared it) and on a
    :class:`~optuna.trial.FrozenTrial` (from its ``budget`` user attribute). A live trial the schedule
    refused raises ``optuna.TrialPruned`` (see :mod:`fairops.fairband._sampler`).

    Parameters
    ----------
    trial : optuna.Trial or optuna.trial.FrozenTrial
        The trial.

    Returns
    -------
    float
        The share of the training rows in (0, 1].

    Examples
    --------
    >>> import optuna
    >>> from fairops.fairband import FairbandSampler
    >>> study = optuna.create_study(directions=["maximize"] * 2, sampler=FairbandSampler(seed=0))
    >>> trial = study.ask()
    >>> round(budget(trial), 4)
    0.0123
    """
    study = getattr(trial, "study", None)
    if study is not None and settings_of(study) is not None and isinstance(trial, optuna.Trial):
        return study.sampler.budget_of(trial)
    attrs = trial.user_attrs
    if "budget" not in attrs and isinstance(trial, optuna.Trial):
        # another sampler wrote it through the storage after the live trial cached its attributes
        attrs = internals.storage_of(study).get_trial(internals.trial_id_of(study, trial)).user_attrs
    if "budget" in attrs:
        return float(attrs["budget"])
    raise InputError(f"trial {trial.number} has no Fairband budget; use FairbandSampler as the study's sampler")
