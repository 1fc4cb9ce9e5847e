"""``trial.report`` and ``trial.should_prune`` in a Fairband study: what to call instead.

Optuna's :meth:`optuna.trial.Trial.should_prune` and :meth:`~optuna.trial.Trial.report` raise
``NotImplementedError`` in any study with more than one objective, before the study's pruner is asked, so
no pruner can answer them, and a Fairband study has two objectives (accuracy, fairness). Nor is anything
lost: in synchronous mode (``FairbandSampler()``) each trial is one fit on ``budget(trial)`` of the training
rows and the sampler promotes configurations between rungs, so a fit is never stopped half-way and the
objective only returns ``(accuracy, fairness)``; in asynchronous mode :class:`~fairops.fairband.RungProgress`
reports each rung and ends its loop when :class:`~fairops.fairband.FairbandPruner` stops the trial.

So that a pruning loop copied from Optuna's examples fails with that advice rather than Optuna's bare
message, :func:`budget` and :class:`~fairops.fairband.RungProgress` give the live trial an error naming the
way (a ``NotImplementedError``, as Optuna's, so code catching that still does).

>>> "RungProgress" in advice("async") and "budget(trial)" in advice("sync")
True
"""

from __future__ import annotations

from . import _optuna_internals as internals

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


def name_the_way(trial, mode: str) -> None:
    """Make the live ``trial``'s ``report`` and ``should_prune`` raise :func:`advice` for ``mode`` (only where
    Optuna would refuse them anyway: a study with more than one objective)."""
    if len(trial.study.directions) > 1:
        internals.refuse_pruning_calls(trial, advice(mode))
