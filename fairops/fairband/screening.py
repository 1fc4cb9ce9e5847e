"""Which fits a pick may take: fits whose decisions say nothing are set aside, and a fairness line narrows the rest.

- **Set aside**: a fit whose validation decisions are all one class, or whose precision at the task's operating
  point is not above the base rate beyond noise (:func:`fairops.metrics._figures.degenerate_of`, read from the
  ``counts`` that :class:`fairops.tuning.FairnessObjective` and :func:`fairops.tuning.record_outcome` record).
  Such a fit often looks perfectly fair (deciding positive for everyone gives every group the same rate), so it
  is never picked, never the most accurate fit and never on the Pareto front. Fits without counts (an own
  objective returning values only) cannot be judged and are kept.
- **The fairness line** (:class:`fairops.metrics.FairnessRule`): each fit's validation fairness stands
  ``"meets"`` (its ratio at or above the line), ``"unclear"`` (under the line, its interval reaching it) or
  ``"below"`` (its interval under the line: the gate would refuse it on these rows). The pick is made among the
  fits of the best standing any fit has; :class:`Screened` says which, so the caller can say when it fell back.

>>> import optuna
>>> from fairops.metrics import FairnessRule
>>> fits = [optuna.trial.create_trial(values=[0.9, 0.6], user_attrs={"intervals": {"fairness": [0.5, 0.7]}}),
...         optuna.trial.create_trial(values=[0.7, 0.85])]
>>> screened = screen(fits, FairnessRule())
>>> [t.values for t in screened.fits], screened.standing
([[0.7, 0.85]], 'meets')
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from optuna.trial import FrozenTrial

from fairops.metrics import FairnessRule
from fairops.metrics._fairness_rule import STANDINGS
from fairops.metrics._figures import degenerate_of
from fairops.metrics._intervals import LEVEL

COUNTS_ATTR = "counts"  # what Task.measure counted behind a fit's validation figures


def set_aside_reason(trial: FrozenTrial) -> str | None:
    """Why a fit is set aside (a key of :data:`fairops.metrics._figures.DEGENERATE`), or None.

    >>> import optuna
    >>> counts = {"decisions": {"rows": 100, "positive": 100, "positives": 70, "true_positives": 70}}
    >>> set_aside_reason(optuna.trial.create_trial(values=[0.7, 1.0], user_attrs={"counts": counts}))
    'one class'
    """
    counts: Any = trial.user_attrs.get(COUNTS_ATTR)  # what was stored: judged only when it holds the decisions
    if not isinstance(counts, dict) or not isinstance(counts.get("decisions"), dict):
        return None
    return degenerate_of(counts["decisions"], float(counts.get("level", LEVEL)))


def fairness_upper(trial: FrozenTrial) -> float:
    """The upper bound of a fit's validation fairness interval (its value when it recorded none)."""
    intervals: Any = trial.user_attrs.get("intervals")
    try:
        return float(intervals["fairness"][1])
    except (TypeError, KeyError, IndexError, ValueError):
        return float(trial.values[1])


def standing_of(trial: FrozenTrial, rule: FairnessRule) -> str:
    """``"meets"``, ``"unclear"`` or ``"below"``: a fit's validation fairness against the rule's line."""
    return rule.standing(float(trial.values[1]), fairness_upper(trial))


@dataclass(frozen=True)
class Screened:
    """The fits a pick may take, and why the others may not.

    Parameters
    ----------
    fits : list of FrozenTrial
        The fits to rank.
    kept : list of FrozenTrial
        Every fit not set aside (FB-auto's alpha comes from their means).
    set_aside : dict, default={}
        Reason (a key of :data:`fairops.metrics._figures.DEGENERATE`) -> how many fits were set aside for it.
    standing : str or None, default=None
        The line's standing of ``fits`` (None: no line).
    standings : dict, default={}
        Standing -> how many of ``kept`` have it.
    """

    fits: list
    kept: list
    set_aside: dict = field(default_factory=dict)
    standing: str | None = None
    standings: dict = field(default_factory=dict)


def without_set_aside(fits) -> tuple[list, dict]:
    """``(the fits not set aside, {reason: count})``."""
    reasons: Counter[str] = Counter()
    kept = []
    for trial in fits:
        reason = set_aside_reason(trial)
        if reason is None:
            kept.append(trial)
        else:
            reasons[reason] += 1
    return kept, dict(reasons)


def screen(fits, rule: FairnessRule | None = None) -> Screened:
    """Set aside the fits whose decisions say nothing; with ``rule``, keep those of the best standing any has.

    Parameters
    ----------
    fits : list of FrozenTrial
        Successful fits.
    rule : FairnessRule or None, default=None
        The fairness line (None or a line of 0: no narrowing).

    Returns
    -------
    Screened
        The fits to rank and the counts behind them.
    """
    kept, set_aside = without_set_aside(fits)
    if rule is None or not rule.active or not kept:
        return Screened(kept, kept, set_aside)
    by_standing: dict[str, list] = {standing: [] for standing in STANDINGS}
    for trial in kept:
        by_standing[standing_of(trial, rule)].append(trial)
    best = next(standing for standing in STANDINGS if by_standing[standing])
    return Screened(by_standing[best], kept, set_aside, best,
                    {standing: len(trials) for standing, trials in by_standing.items()})
