"""Which figures a registration records of its model: the refit's own, by the rows they are on, when
:class:`~fairops.registry.Refit` carries them, else the chosen trial's as the study measured them (its fit at its
budget), and in words which they are."""

from __future__ import annotations

import math
import re

from fairops.fairband import Selection

from ..tracking._trial_record import trial_record
from ._registration_options import Refit


def figures_words(pick: Selection, refit: Refit | None) -> str:
    """Which model and rows the ``accuracy`` and ``fairness`` tags (and the selection run's metrics) are of."""
    if refit is not None and refit.figures:
        return f"the registered model (refit) on the {' and '.join(refit.figures)} rows"
    budget = pick.trial.user_attrs.get("budget")
    at = f" at budget {float(budget):.3g}" if budget is not None else ""
    return f"trial {pick.trial.number}'s fit{at} on its validation rows, as the study measured it"


def selection_metrics(study, pick: Selection, refit: Refit | None) -> tuple[dict, dict]:
    """``(params, metrics)`` of the selection run: the refit's figures by rows when known (``validation_accuracy``,
    ``test_fairness_low``, ...), else the chosen trial's own."""
    params, metrics, _ = trial_record(study.study_name, pick.trial)
    if refit is not None and refit.figures:
        metrics = {re.sub(r"[^A-Za-z0-9_./ -]", "_", f"{rows}_{name}"): float(value)
                   for rows, values in refit.figures.items() for name, value in values.items()
                   if isinstance(value, (int, float)) and not isinstance(value, bool)}
    if pick.alpha is not None:
        metrics["selection_alpha"] = pick.alpha
    return params, {k: v for k, v in metrics.items() if math.isfinite(v)}
