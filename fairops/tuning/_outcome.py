"""What a fit leaves on its trial for selection and tracking, from :class:`FairnessObjective` or an own objective.

:func:`record_outcome` scores a fit's validation predictions with a :class:`~fairops.metrics.Task` and
records on the trial what :class:`FairnessObjective` records: the confidence ``intervals`` that
``select_best(rule="robust")`` ranks, the ``counts`` behind them, each sensitive attribute's ratio
(``fairness_by_attribute``) and ``auc_y`` / ``auc_s``, which :class:`~fairops.tracking.FairnessTrackingCallback`
logs and ``register_best`` puts on the version's card. It returns ``(accuracy, fairness)``, the objective's
return value. Scores that are all equal rank nothing: the trial gets ``failure = "constant validation
scores"`` and the values are NaN, which Optuna records as a failed trial, as with :class:`FairnessObjective`.

>>> import optuna
>>> from fairops.metrics import Task
>>> task = Task("precision", "tpr", 0.5, "tpr", ("sex",))
>>> study = optuna.create_study(directions=["maximize", "maximize"])
>>> trial = study.ask()
>>> record_outcome(trial, task, [1, 1, 0, 1, 1, 0], [.9, .8, .7, .6, .5, .4], {"sex": list("fffmmm")})
(1.0, 0.0)
>>> sorted(trial.user_attrs)
['auc_s', 'auc_y', 'counts', 'fairness_by_attribute', 'intervals']
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from fairops.fairband._selection import INTERVALS_ATTR

from ..errors import InputError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import optuna
    import pandas as pd

    from .._typing import ArrayLike, Decision
    from ..metrics import Task

FAILURE_ATTR = "failure"
CONSTANT_SCORES = "constant validation scores"
BY_ATTRIBUTE_ATTR = "fairness_by_attribute"
COUNTS_ATTR = "counts"


def interval_record(metrics: dict) -> dict:
    """``{"accuracy": [low, high], "fairness": [low, high]}`` from :meth:`~fairops.metrics.Task.evaluate`'s metrics.

    >>> interval_record({"accuracy_low": 0.6, "accuracy_high": 0.7, "fairness_low": 0.8, "fairness_high": 1.0})
    {'accuracy': [0.6, 0.7], 'fairness': [0.8, 1.0]}
    """
    return {name: [float(metrics[f"{name}_low"]), float(metrics[f"{name}_high"])] for name in ("accuracy", "fairness")}


def outcome_values(metrics: dict) -> tuple[float, float]:
    """``(accuracy, fairness)`` of a task's metrics, an undefined fairness as NaN (Optuna fails such a trial).

    >>> outcome_values({"accuracy": 0.8, "fairness": float("inf")})
    (0.8, nan)
    """
    fairness = float(metrics["fairness"])
    return float(metrics["accuracy"]), (fairness if math.isfinite(fairness) else float("nan"))


def record_measures(trial, metrics: dict, counts: dict) -> None:
    """Record :meth:`~fairops.metrics.Task.measure`'s ``(metrics, counts)`` on ``trial`` (see the module docstring)."""
    # AUC_Y, AUC_S, the intervals, each attribute's ratio and the counts behind them travel with the trial,
    # so trackers can log them and selection can rank by the intervals.
    for name in ("auc_y", "auc_s"):
        trial.set_user_attr(name, float(metrics[name]))
    trial.set_user_attr(INTERVALS_ATTR, interval_record(metrics))
    trial.set_user_attr(BY_ATTRIBUTE_ATTR, {name.split(".", 1)[1]: value for name, value in metrics.items()
                                            if name.startswith("fairness.")})
    trial.set_user_attr(COUNTS_ATTR, counts)


def record_outcome(trial: optuna.Trial, task: Task, y_true: np.ndarray | pd.Series | Sequence[float], scores: ArrayLike,
                   sensitive: pd.DataFrame | Mapping[str, ArrayLike], *, seed: int = 0,
                   decision: Decision = "single") -> tuple[float, float]:
    """Score a fit's validation predictions with ``task``, record them on ``trial``, return (accuracy, fairness).

    Call it from an own objective and return its result, so that ``select_best(study, rule="robust")`` and
    ``register_best`` work on the study.

    Parameters
    ----------
    trial : optuna.Trial
        The live trial.
    task : Task
        The task scored.
    y_true : array-like of shape (n_samples,)
        The validation rows' labels.
    scores : array-like of shape (n_samples,)
        The model's probabilities of the positive class on the validation rows.
    sensitive : DataFrame or dict
        Those rows' sensitive attributes (holding the task's attributes).
    seed : int, default=0
        Breaks ties at the threshold.
    decision : {"single", "per-group"}, default="single"
        As for :meth:`~fairops.metrics.Task.measure`.

    Returns
    -------
    tuple of float
        (accuracy, fairness); NaN twice when the scores are all equal.
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 1 or len(scores) != len(y_true):
        raise InputError(f"scores must be one probability per row of y_true ({len(y_true)}), got shape {scores.shape}")
    if np.ptp(scores) == 0:
        trial.set_user_attr(FAILURE_ATTR, CONSTANT_SCORES)
        return math.nan, math.nan
    metrics, counts = task.measure(y_true, scores, sensitive, seed=seed, decision=decision)
    record_measures(trial, metrics, counts)
    return outcome_values(metrics)
