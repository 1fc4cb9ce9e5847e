"""The pick of a finished tuning run: the fit chosen by the run's selection rule, refit on all training rows,
and the most accurate fit beside it (what ``fairops tune`` registers and reports).

``paper``: the paper's argmax of ``alpha*accuracy + (1-alpha)*fairness`` over the fits, then refit.
``robust``: the lower-bound ranking's candidates and the most accurate fit refit on all training rows, the
pick chosen among the refits (:func:`~fairops.tuning._refit_choice`).

With a :class:`~fairops.metrics.FairnessRule` both pick among the fits (and refits) whose validation fairness
meets its line, as the promotion gate will judge the registered model; only when none does do they fall back
(to fits whose interval reaches the line, then to all), and :func:`pick_notes` says so. Fits whose decisions
say nothing are set aside by every rule (:mod:`fairops.fairband._selection`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..metrics._fairness_rule import percent


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
    rule: Any = None

    @property
    def trial(self):
        return self.pick.trial


def _evaluate_pick(objective, trial) -> tuple[object, dict]:
    model = objective.refit(trial, 1.0)
    return model, {"validation": objective.evaluate(model, "validation"), "test": objective.evaluate(model, "test")}


def _robust_rule(ranked, choice, n_fits: int, level: float) -> str:
    setting = ranked.alpha_rule
    how = "rule auto" if setting == "auto" else f"fixed at {float(setting):g}"
    tried = ", ".join(f"#{n}" for n in choice.refits)
    return (f"robust: argmax alpha*accuracy_low + (1-alpha)*fairness_low over {n_fits} fits ({percent(level)} lower "
            f"bounds, alpha {how} = {ranked.alpha:.4g}); refit on all training rows: {tried}; chosen by the same "
            "score, cross-validated over the training and validation rows, among the refits the most accurate fit's "
            f"refit (#{choice.most_accurate.trial.number}) does not dominate on validation")


def choose_pick(selection: str, objective, trials, alpha, rule=None) -> PickChoice:
    """The pick of a finished run, refit, with the most accurate fit beside it (:class:`PickChoice`).

    ``paper``: the paper's argmax over the fits, then refit. ``robust``: the lower-bound ranking's
    candidates and the most accurate fit refit on all training rows, the pick chosen among the refits.
    ``rule`` (a :class:`~fairops.metrics.FairnessRule`): pick among the fits and refits meeting its line
    (see the module docstring).
    """
    from ..fairband import Selection, select_best
    from ..fairband._selection import SelectionKind, successful_fits
    from ._refit_choice import refit_choice

    accurate = select_best(trials, alpha=1.0)
    if selection != "robust":  # "fairband", or its other name "paper"
        pick = select_best(trials, alpha=alpha, line=rule)
        model, pick_scores = _evaluate_pick(objective, pick.trial)
        return PickChoice(pick, model, pick_scores, accurate, _evaluate_pick(objective, accurate.trial)[1],
                          rule=rule)
    ranked = select_best(trials, alpha=alpha, rule="robust", line=rule)
    choice = refit_choice(objective, ranked, accurate.trial, rule=rule)
    chosen, best = choice.chosen, choice.most_accurate
    assert ranked.alpha is not None  # a robust selection ranks at its alpha
    pick = Selection(chosen.trial, ranked.alpha, chosen.lower_score(ranked.alpha),
                     _robust_rule(ranked, choice, len(successful_fits(trials)), objective.level), ranked.alpha_rule,
                     ranked.candidates, SelectionKind.ROBUST, ranked.screened)
    return PickChoice(pick, chosen.model, {"validation": chosen.validation, "test": chosen.test}, accurate,
                      {"validation": best.validation, "test": best.test}, choice, rule)


def pick_notes(picked: PickChoice, fairness_label: str = "fairness") -> list[str]:
    """Lines saying which fits were set aside and why, and against which standing of the line the pick was made
    (one line when it fell back from fits meeting the line).

    Parameters
    ----------
    picked : PickChoice
        The pick.
    fairness_label : str, default="fairness"
        The ratio's name, e.g. ``"TPR ratio"``.

    Returns
    -------
    list of str
        The lines (empty when nothing was set aside and the pick meets the line, or there is no line).
    """
    from ..metrics._figures import DEGENERATE

    screened, rule, lines = picked.pick.screened, picked.rule, []
    if screened is not None and screened.set_aside:
        total = len(screened.kept) + sum(screened.set_aside.values())
        lines.append("set aside (never picked nor shown as most accurate): " + "; ".join(
            f"{count} of {total} fits {DEGENERATE[reason]}" for reason, count in sorted(screened.set_aside.items())))
    if picked.refits is not None and picked.refits.set_aside:
        by_reason: dict = {}
        for n in picked.refits.set_aside:
            by_reason.setdefault(picked.refits.refits[n].set_aside, []).append(f"#{n}")
        lines.append("set aside among the refits on all training rows: " + "; ".join(
            f"{', '.join(numbers)} {DEGENERATE[reason]}" for reason, numbers in sorted(by_reason.items())))
    if rule is None or not rule.active or screened is None or screened.standing is None:
        return lines
    standing = picked.refits.standing if picked.refits is not None else screened.standing
    counts, kept = screened.standings, len(screened.kept)
    line, level = f"{rule.line:g}", percent(rule.level)
    whose = (f"fit's validation {fairness_label}" if standing == screened.standing else
             f"refit's {fairness_label} (cross-validated over the training and validation rows)")
    if standing == "meets":
        refits = "" if picked.refits is None else ", then among their refits whose cross-validated ratio meets it too"
        lines.append(f"fairness line {line}: picked among the {counts['meets']} of {kept} fits whose validation "
                     f"{fairness_label} meets it{refits}")
    elif standing == "unclear":
        lines.append(f"fairness line {line}: no {whose} meets it; picked among those whose {level} interval reaches "
                     "it (the gate does not refuse them on those rows)")
    else:
        lines.append(f"fairness line {line}: no {whose} reaches it even within its {level} interval; picked as "
                     "without the line (the gate will refuse it on rows like these)")
    return lines


def budget_floor(selection: str) -> dict:
    """The objective's floor on rows per fit: the small-data floor with the robust rule, none with the paper's.

    >>> budget_floor("paper")
    {}
    """
    from ._objective import SMALL_DATA_FLOOR

    return dict(SMALL_DATA_FLOOR) if selection == "robust" else {}
