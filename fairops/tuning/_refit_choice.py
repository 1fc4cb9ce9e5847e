"""Choose among refits: the robust rule's last step.

A fit picked at 1.2% of the training rows is not the model that gets registered: that is the same
configuration refit on all training rows, and the refit can be worse than the most accurate fit's refit
on both validation figures. :func:`refit_choice` refits the robust rule's candidates and the most
accurate fit on all training rows, drops every refit the most accurate refit dominates on validation
(no better on either figure, worse on one) and keeps the refit with the highest ``o`` of lower
confidence bounds. The most accurate refit is always among those kept, so the choice is never dominated
by it. The bounds the choice compares come from cross-validation over the training and validation rows
(:func:`~fairops.tuning._cross_validation.cross_validated`, ``folds=5``): the validation rows alone
leave so few events behind a ratio that the choice between a few candidates would be a coin toss.

A refit is another model than the fit it came from, so it is judged again: a refit whose validation
decisions say nothing (:func:`fairops.metrics._figures.degenerate_of`) is never chosen, and with a
:class:`~fairops.metrics.FairnessRule` the choice is made among the refits of the best standing against
its line (meeting it, else an interval reaching it, else any), judged on the same cross-validated figures
the choice compares. Those stand on about five times the rows of the validation part and are not the
figures the fits were picked by: on the ACS census rows the refit whose validation TPR ratio was 0.809 had
a cross-validated 0.788 and 0.747 on the test rows, the one chosen instead 0.826, 0.832 and 0.816.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fairops.fairband import _ranking as ranking
from fairops.metrics._fairness_rule import STANDINGS
from fairops.metrics._figures import DEGENERATE, degenerate_of
from fairops.metrics._intervals import LEVEL

from ..errors import InputError
from ._cross_validation import cross_validated
from ._objective import ConstantScoresError

if TYPE_CHECKING:
    from collections.abc import Callable

    from optuna.trial import FrozenTrial

    from fairops.fairband import Selection

    from ..metrics import FairnessRule
    from ._objective import FairnessObjective


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
    counts: dict | None = None  # the counts behind the validation figures (Task.measure's)

    @property
    def set_aside(self) -> str | None:
        """Why the refit's validation decisions say nothing (a key of :data:`~fairops.metrics._figures.DEGENERATE`)."""
        if self.counts is None or "decisions" not in self.counts:
            return None
        return degenerate_of(self.counts["decisions"], self.counts.get("level", LEVEL))

    def standing(self, rule) -> str | None:
        """Its fairness (cross-validated when assessed, else on validation) against ``rule``'s line (None without a
        rule)."""
        if rule is None or not rule.active:
            return None
        figures = self.assessed or self.validation
        return rule.standing(figures["fairness"], figures.get("fairness_high", float("nan")))

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
    set_aside : tuple of int, default=()
        Trial numbers of the refits whose validation decisions say nothing.
    standing : str or None, default=None
        The chosen refit's standing against the rule's line (None without a rule).
    """

    chosen: Refit
    most_accurate: Refit
    refits: dict = field(default_factory=dict)
    dominated: tuple = ()
    set_aside: tuple = ()
    standing: str | None = None


def refit_all(objective: FairnessObjective, trial: FrozenTrial) -> Refit:
    """``trial``'s configuration refit on all training rows and scored on validation and test."""
    model = objective.refit(trial, 1.0)
    validation, counts = objective.measure(model, "validation")
    return Refit(trial, model, validation, objective.evaluate(model, "test"), counts=counts)


def refit_choice(objective: FairnessObjective, selection: Selection, most_accurate: FrozenTrial, *,
                 refit: Callable[[FairnessObjective, FrozenTrial], Refit] = refit_all, folds: int | None = 5,
                 rule: FairnessRule | None = None) -> RefitChoice:
    """Refit ``selection.candidates`` (or its trial) and ``most_accurate`` on all training rows; choose.

    ``objective`` is a :class:`~fairops.tuning.FairnessObjective`; ``selection`` comes from
    ``select_best(..., rule="robust")``. Among the refits the most accurate refit does not dominate on
    validation, whose decisions say something and (with ``rule``, a :class:`~fairops.metrics.FairnessRule`)
    of the best standing against its line, the highest ``o`` of the lower bounds wins (alpha of the
    selection; ties: the earlier candidate); the figures (bounds and standing) are cross-validated over
    ``folds`` folds of the training and validation rows, or (``folds=None``) the validation rows' own.

    Parameters
    ----------
    objective : FairnessObjective
        The objective the study ran; its training rows take the refits.
    selection : Selection
        The robust selection whose candidates (or trial) are refit.
    most_accurate : optuna.trial.FrozenTrial
        The study's most accurate fit, refit beside them as the reference.
    refit : callable, default refit_all
        ``refit(objective, trial)`` returning a ``Refit``.
    folds : int or None, default 5
        Folds of the cross-validated figures; None reads the validation rows' own.
    rule : FairnessRule or None, default None
        The fairness rule whose line the refits are judged against.

    Returns
    -------
    RefitChoice
        The chosen refit with every refit's figures and why the others were set aside.
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
        refits[trial.number] = (Refit(trial, same.model, same.validation, same.test, counts=same.counts)
                                if same is not None else refit(objective, trial))
        first_of.setdefault(_configuration(trial), refits[trial.number])
    accurate = refits[most_accurate.number]
    dominated = tuple(n for n, r in refits.items() if dominates(accurate.validation, r.validation))
    set_aside = tuple(n for n, r in refits.items() if r.set_aside is not None)
    kept = [r for n, r in refits.items() if n not in dominated and n not in set_aside]
    if not kept:
        reasons = "; ".join(f"#{n} {DEGENERATE[str(refits[n].set_aside)]}" for n in set_aside)
        raise InputError(f"no refit to register: every refit on all training rows was set aside ({reasons})")
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
    standing = None
    if rule is not None and rule.active:
        standing = next(s for s in STANDINGS if any(r.standing(rule) == s for r in kept))
        kept = [r for r in kept if r.standing(rule) == standing]
    # max keeps the first of equals; a selection weighing alpha has one
    chosen = max(kept, key=lambda r: r.lower_score(selection.alpha))  # type: ignore[arg-type]
    return RefitChoice(chosen, accurate, refits, dominated, set_aside, standing)


def _configuration(trial) -> tuple:
    return tuple(sorted(trial.params.items()))
