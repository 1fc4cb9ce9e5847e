"""The study's anytime curve: the running pick on the parent run, against the budget spent so far.

With ``alpha`` given, :class:`~fairops.tracking.FairnessTrackingCallback` logs on the parent run the pick
so far (``pick_accuracy``, ``pick_fairness``, ``pick_weighted_score``, ``pick_trial``) whenever it changes,
with the budget spent as the step (in hundredths of one full-data fit), and :data:`BUDGET_SPENT` (in
full-data fits) at the same steps, so MLflow's chart view draws the curve against the budget.

>>> import optuna
>>> optuna.logging.set_verbosity(optuna.logging.WARNING)
>>> study = optuna.create_study(directions=["maximize", "maximize"])
>>> study.add_trial(optuna.trial.create_trial(values=[0.8, 0.6], user_attrs={"budget": 0.5}))
>>> point = running_pick(study, 0.5)
>>> point.trial, point.step, point.values["pick_weighted_score"]
(0, 50, 0.7)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._parent_run import now_ms
from ._trial_record import finite

if TYPE_CHECKING:
    from fairops.fairband._selection import RunningSelection

#: The parent run's metric: fits' budgets summed so far, in full-data fits (the anytime curve's x axis).
BUDGET_SPENT = "budget_spent"


@dataclass(frozen=True)
class PickPoint:
    """The pick after the fits finished so far: its trial, its ``pick_*`` values, the budget-spent step."""

    trial: int
    values: dict
    step: int


def running_pick(study, alpha, selection: RunningSelection | None = None) -> PickPoint | None:
    """The pick among the study's finished fits (None before one has finite accuracy and fairness).

    ``selection``, kept from one call to the next for the same study and alpha, reads each finished fit once.
    """
    from fairops.fairband._selection import RunningSelection

    trials = [t for t in study.get_trials(deepcopy=False) if t.state.is_finished()]
    try:
        pick = (selection or RunningSelection(alpha)).select(trials)
    except ValueError:  # no finished fit with finite accuracy and fairness yet
        return None
    spent = math.fsum(finite(t.user_attrs.get("budget", 1.0)) or 0.0 for t in trials)
    values = {"pick_accuracy": pick.accuracy, "pick_fairness": pick.fairness,
              "pick_weighted_score": float(pick.score), "pick_trial": float(pick.trial.number)}
    return PickPoint(pick.trial.number, values, int(round(100 * spent)))


def pick_metrics(point: PickPoint, previous: PickPoint | None) -> list:
    """The metrics to log for ``point``: before a new pick, the old one once more one step earlier (so
    the chart draws steps), and :data:`BUDGET_SPENT` at each step logged."""
    from mlflow.entities import Metric

    now = now_ms()
    metrics = [Metric(key, value, now, point.step) for key, value in point.values.items()]
    if previous is not None and previous.trial != point.trial and point.step > 0:
        metrics = [Metric(key, value, now, point.step - 1) for key, value in previous.values.items()] + metrics
    # the budget spent at each step, so a chart can draw the curve against it (axis named for it)
    steps = sorted({metric.step for metric in metrics})
    return metrics + [Metric(BUDGET_SPENT, s / 100, now, s) for s in steps]
