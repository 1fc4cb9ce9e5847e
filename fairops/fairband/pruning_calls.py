"""``trial.report`` and ``trial.should_prune`` in a Fairband study: what to call instead.

Optuna's :meth:`optuna.trial.Trial.should_prune` and :meth:`~optuna.trial.Trial.report` raise
``NotImplementedError`` in any study with more than one objective, before the study's pruner is asked, so
no pruner can answer them, and a Fairband study has two objectives (accuracy, fairness). Nor is anything
lost: in synchronous mode (``FairbandSampler()``) each trial is one fit on ``budget(trial)`` of the training
rows and the sampler promotes configurations between rungs, so a fit is never stopped half-way and the
objective only returns ``(accuracy, fairness)``; in asynchronous mode :class:`~fairops.fairband.RungProgress`
reports each rung and ends its loop when :class:`~fairops.fairband.FairbandPruner` stops the trial.

So that a pruning loop copied from Optuna's examples fails with that advice rather than Optuna's bare
message, :func:`install` (called by every :class:`~fairops.fairband.FairbandSampler`) makes both methods of any
trial of a Fairband study of two objectives raise an error naming the way, whether or not the objective has
asked its budget yet (a ``NotImplementedError``, as Optuna's, so code catching that still does).

>>> "RungProgress" in advice("async") and "budget(trial)" in advice("sync")
True
"""

from __future__ import annotations

from . import _optuna_internals as internals
from ._settings import settings_of

_WHY = ("Optuna's trial.report and trial.should_prune do not support studies with two objectives such as "
        "Fairband's (accuracy, fairness). ")
_SYNC = ("Nothing is needed in synchronous mode: each trial is one fit on budget(trial) of the training rows and "
         "FairbandSampler promotes configurations between rungs, so fit, then return (accuracy, fairness). To stop "
         "configurations between rungs of one trial instead, use FairbandSampler(mode='async') with RungProgress.")
_ASYNC = ("In asynchronous mode report each rung through RungProgress: progress = RungProgress(trial); for fraction "
          "in progress: fit on that share, then progress.report(accuracy, fairness); the loop ends when "
          "FairbandPruner stops the trial, and the objective returns progress.values.")


def advice(mode: str) -> str:
    """The error text for a trial of a ``"sync"`` or ``"async"`` Fairband study."""
    return _WHY + (_ASYNC if mode == "async" else _SYNC)


def _advice_for(trial) -> str | None:
    """The advice for a live trial of a Fairband study of two objectives; None for any other trial."""
    study = trial.study
    settings = settings_of(study)
    if settings is None or len(study.directions) < 2:
        return None
    return advice(settings.mode)


def install() -> None:
    """Give ``trial.report`` / ``trial.should_prune`` of Fairband studies the advice (once per process)."""
    internals.refuse_pruning_calls(_advice_for)
