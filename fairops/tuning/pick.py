"""The pick of a finished tuning run: the fit chosen by the run's selection rule, refit on all training rows,
and the most accurate fit beside it (what ``fairops tune`` registers and reports).

``paper``: the paper's argmax of ``alpha*accuracy + (1-alpha)*fairness`` over the fits, then refit.
``robust``: the lower-bound ranking's candidates and the most accurate fit refit on all training rows, the
pick chosen among the refits (:func:`~fairops.tuning.refit_choice`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PickChoice:
    """A run's pick with its refit model and scores (``{"validation": ..., "test": ...}``), the most accurate
    fit with its scores, and the robust rule's refit choice (None under the paper's rule)."""

    pick: Any
    model: Any
    scores: dict
    accurate: Any
    accurate_scores: dict
    refits: Any = None

    @property
    def trial(self):
        return self.pick.trial


def _evaluate_pick(objective, trial) -> tuple[object, dict]:
    model = objective.refit(trial, 1.0)
    return model, {"validation": objective.evaluate(model, "validation"), "test": objective.evaluate(model, "test")}


def _robust_rule(ranked, choice, n_fits: int) -> str:
    setting = ranked.alpha_rule
    how = "rule auto" if setting == "auto" else f"fixed at {float(setting):g}"
    tried = ", ".join(f"#{n}" for n in choice.refits)
    return (f"robust: argmax alpha*accuracy_low + (1-alpha)*fairness_low over {n_fits} fits (90% lower bounds, "
            f"alpha {how} = {ranked.alpha:.4g}); refit on all training rows: {tried}; chosen by the same score, "
            "cross-validated over the training and validation rows, among the refits the most accurate fit's refit "
            f"(#{choice.most_accurate.trial.number}) does not dominate on validation")


def choose_pick(selection: str, objective, trials, alpha) -> PickChoice:
    """The pick of a finished run, refit, with the most accurate fit beside it (:class:`PickChoice`).

    ``paper``: the paper's argmax over the fits, then refit. ``robust``: the lower-bound ranking's
    candidates and the most accurate fit refit on all training rows, the pick chosen among the refits.
    """
    from ..fairband import Selection, select_best
    from ..fairband.selection import SelectionKind, successful_fits
    from .refit_choice import refit_choice

    accurate = select_best(trials, alpha=1.0)
    if selection != "robust":  # "fairband", or its other name "paper"
        pick = select_best(trials, alpha=alpha)
        model, pick_scores = _evaluate_pick(objective, pick.trial)
        return PickChoice(pick, model, pick_scores, accurate, _evaluate_pick(objective, accurate.trial)[1])
    ranked = select_best(trials, alpha=alpha, rule="robust")
    choice = refit_choice(objective, ranked, accurate.trial)
    chosen, best = choice.chosen, choice.most_accurate
    assert ranked.alpha is not None  # a robust selection ranks at its alpha
    pick = Selection(chosen.trial, ranked.alpha, chosen.lower_score(ranked.alpha),
                     _robust_rule(ranked, choice, len(successful_fits(trials))), ranked.alpha_rule, ranked.candidates,
                     SelectionKind.ROBUST)
    return PickChoice(pick, chosen.model, {"validation": chosen.validation, "test": chosen.test}, accurate,
                      {"validation": best.validation, "test": best.test}, choice)


def budget_floor(selection: str) -> dict:
    """The objective's floor on rows per fit: the small-data floor with the robust rule, none with the paper's.

    >>> budget_floor("paper")
    {}
    """
    from .objective import SMALL_DATA_FLOOR

    return dict(SMALL_DATA_FLOOR) if selection == "robust" else {}
