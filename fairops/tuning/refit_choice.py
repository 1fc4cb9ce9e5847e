"""Choose among refits: the robust rule's last step.

A fit picked at 1.2% of the training rows is not the model that gets registered: that is the same
configuration refit on all training rows, and the refit can be worse than the most accurate fit's refit
on both validation figures. :func:`refit_choice` refits the robust rule's candidates and the most
accurate fit on all training rows, drops every refit the most accurate refit dominates on validation
(no better on either figure, worse on one) and keeps the refit with the highest ``o`` of lower
confidence bounds. The most accurate refit is always among those kept, so the choice is never dominated
by it. The bounds the choice compares come from cross-validation over the training and validation rows
(:func:`~fairops.tuning.cross_validation.cross_validated`, ``folds=5``): the validation rows alone
leave so few events behind a ratio that the choice between a few candidates would be a coin toss.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fairops.fairband import ranking

from .cross_validation import cross_validated
from .objective import ConstantScoresError


def dominates(a: dict, b: dict) -> bool:
    """True when ``a`` is at least as good as ``b`` on accuracy and fairness and better on one.

    >>> dominates({"accuracy": 0.8, "fairness": 0.9}, {"accuracy": 0.7, "fairness": 0.9})
    True
    >>> dominates({"accuracy": 0.8, "fairness": 0.5}, {"accuracy": 0.7, "fairness": 0.9})
    False
    """
    at_least = a["accuracy"] >= b["accuracy"] and a["fairness"] >= b["fairness"]
    return at_least and (a["accuracy"] > b["accuracy"] or a["fairness"] > b["fairness"])


@dataclass
class Refit:
    """One configuration refit on all training rows, with its validation and test figures."""

    trial: Any
    model: Any
    validation: dict
    test: dict
    assessed: dict | None = None  # cross-validated figures, when the choice used them

    def lower_score(self, alpha: float) -> float:
        figures = self.assessed or self.validation
        return ranking.weighted_score(figures["accuracy_low"], figures["fairness_low"], alpha)


@dataclass
class RefitChoice:
    """The chosen refit, the most accurate fit's refit, and every refit compared (by trial number).

    Parameters
    ----------
    chosen : Refit
        The refit chosen.
    most_accurate : Refit
        The most accurate fit's refit.
    refits : dict, default={}
        Trial number -> refit, every one compared.
    dominated : tuple of int, default=()
        Trial numbers of the refits the most accurate refit dominates on validation.
    """

    chosen: Refit
    most_accurate: Refit
    refits: dict = field(default_factory=dict)
    dominated: tuple = ()


def refit_all(objective, trial) -> Refit:
    """``trial``'s configuration refit on all training rows and scored on validation and test."""
    model = objective.refit(trial, 1.0)
    return Refit(trial, model, objective.evaluate(model, "validation"), objective.evaluate(model, "test"))


def refit_choice(objective, selection, most_accurate, *, refit=refit_all, folds: int | None = 5) -> RefitChoice:
    """Refit ``selection.candidates`` (or its trial) and ``most_accurate`` on all training rows; choose.

    ``objective`` is a :class:`~fairops.tuning.FairnessObjective`; ``selection`` comes from
    ``select_best(..., rule="robust")``. Among the refits the most accurate refit does not dominate on
    validation, the highest ``o`` of the lower bounds wins (alpha of the selection; ties: the earlier
    candidate); the bounds are cross-validated over ``folds`` folds of the training and validation rows,
    or (``folds=None``) the validation rows' own.
    """
    trials = list(selection.candidates or (selection.trial,))
    refits: dict[int, Refit] = {}
    # Hyperband promotes a configuration through its rungs as one trial per rung: each configuration is
    # refit (and cross-validated) once, and its other trials share the figures.
    first_of: dict[tuple, Refit] = {}
    for trial in [*trials, most_accurate]:
        if trial.number in refits:
            continue
        same = first_of.get(_configuration(trial))
        refits[trial.number] = (Refit(trial, same.model, same.validation, same.test) if same is not None
                                else refit(objective, trial))
        first_of.setdefault(_configuration(trial), refits[trial.number])
    accurate = refits[most_accurate.number]
    dominated = tuple(n for n, r in refits.items() if dominates(accurate.validation, r.validation))
    kept = [r for n, r in refits.items() if n not in dominated]
    if folds is not None and len(kept) > 1:
        assessed: dict[tuple, dict] = {}
        for candidate in kept:
            key = _configuration(candidate.trial)
            if key not in assessed:
                try:
                    assessed[key] = cross_validated(objective, candidate.trial, folds)
                except ConstantScoresError:  # constant out of fold: it cannot be told apart from noise
                    assessed[key] = {**candidate.validation, "accuracy_low": 0.0, "fairness_low": 0.0}
            candidate.assessed = assessed[key]
    chosen = max(kept, key=lambda r: r.lower_score(selection.alpha))  # max keeps the first of equals
    return RefitChoice(chosen, accurate, refits, dominated)


def _configuration(trial) -> tuple:
    return tuple(sorted(trial.params.items()))
