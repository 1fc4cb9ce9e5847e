"""Model selection after a Fairband (or any two-objective accuracy/fairness) study.

- :func:`select_best`: the paper's final pick, argmax of ``o = alpha*accuracy + (1-alpha)*fairness`` over
  all successful fits at any budget; with ``alpha="auto"`` alpha comes from the means over all fits.
  Optionally a constraint instead: best accuracy with fairness >= ``min_fairness``, or best fairness
  with accuracy >= ``min_accuracy``.
- :func:`pareto_front`: the non-dominated (accuracy, fairness) fits.

Both honour Optuna's constraints as ``study.best_trials`` does: when fits carry the ``constraints``
attribute (``FairbandSampler(min_fairness=...)``, or one's own ``constraints_func`` / ``set_constraint``),
only the feasible ones are ranked, and FB-auto's alpha comes from their means. Both also set aside the fits
whose validation decisions say nothing (all one class, or a precision not above the base rate;
:mod:`.screening`): they are never picked, never the most accurate fit and never on the front. With a
``line`` (a :class:`~fairops.metrics.FairnessRule`) :func:`select_best` ranks only the fits of the best
standing against it: those whose fairness meets the line, else those whose interval reaches it, else all.

Two ranking rules: ``rule="fairband"`` (also named ``"paper"``) ranks the point values, as the paper and its
published logs do; ``rule="robust"`` ranks the lower confidence bounds of accuracy and fairness (the user attribute
``intervals`` that :class:`fairops.tuning.FairnessObjective`, or an own objective through
:func:`fairops.tuning.record_outcome`, records per fit), so a fit that looks fair only because few rows stand
behind its ratio ranks lower, and also returns the next best fits as ``candidates``: a fit on a small budget
changes when refit on all training rows, so the caller refits the candidates and chooses among the refits
(:func:`fairops.tuning._refit_choice`).

Ties: fits of a synchronous Fairband run are taken in the order the paper's Hyperband evaluated them
(iteration, bracket from ``s_max`` down, rung, position) and the argmax is the first entry of
:func:`ranking.rank` with ``ties="paper"``, as the published logs show; other studies, and the
constraint rules, break ties by the lower trial number.

Which fits a pick may take: fits whose decisions say nothing are set aside, and a fairness line narrows the rest.

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

A fairness floor as Optuna's own constraint, so Optuna's tools see which fits are admissible.

Optuna keeps constraints in two formats: the ``constraints`` list a ``constraints_func`` returns (a trial's
system attribute; optuna-dashboard 0.21 reads only this one) and one ``constraints:<name>`` attribute per
``trial.set_constraint(name, value)`` (Optuna 5's API). :attr:`FrozenTrial.constraints` merges them, naming
the list's entries ``"0"``, ``"1"``, ..., so a constraint set by name ``"0"`` replaces the list's first entry
there (Optuna only warns). A trial is feasible when every value is <= 0.

The floor ``fairness >= min_fairness`` is the value ``min_fairness - fairness``, written both ways: under its own
name :data:`FLOOR_NAME`, which no name of the user's can replace, and appended to the ``constraints`` list for
optuna-dashboard, after whatever a base sampler's ``constraints_func`` wrote there (e.g.
``FairbandSampler(base_sampler=TPESampler(constraints_func=...))``). Feasibility here reads both formats as
stored, nothing replacing anything. Two constraints under one name are an error
(:class:`ConstraintNameError`): the user's ``trial.set_constraint`` with :data:`FLOOR_NAME`, or with the name of
an entry of their own ``constraints_func`` list, since Optuna's tools would keep only one of the two.

>>> constraint_values(0.75, min_fairness=0.5)
(-0.25,)
>>> import optuna
>>> is_feasible(optuna.trial.create_trial(values=[0.9, 0.7], system_attrs={"constraints": [0.1]}))
False
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, cast

import optuna
from optuna.exceptions import UpdateFinishedTrialError
from optuna.trial import FrozenTrial, TrialState

from fairops.metrics import FairnessRule
from fairops.metrics._fairness_rule import STANDINGS
from fairops.metrics._figures import degenerate_of
from fairops.metrics._intervals import LEVEL

from ..errors import InputError
from . import _optuna_internals as internals, _ranking as ranking
from ._claims import HELD, claim_of
from ._settings import SETTINGS_ATTR

#: The ranking rules by name, as select_best, register_best, ``fairops tune --selection`` and the docs accept them:
#: "fairband" ranks the point values as the paper does ("paper" is another name of the same rule), "robust" the
#: lower confidence bounds.
RULES = ("fairband", "paper", "robust")
INTERVALS_ATTR = "intervals"  # {"accuracy": [low, high], "fairness": [low, high]} of a fit's validation figures


class SelectionKind(StrEnum):
    """Which rule made a :class:`Selection` (its value is how records and cards name the rule).

    Examples
    --------
    >>> import optuna
    >>> study = optuna.create_study(directions=["maximize", "maximize"])
    >>> study.add_trial(optuna.trial.create_trial(values=[0.9, 0.5]))
    >>> kind = select_best(study, min_fairness=0.4).kind
    >>> kind, kind.value, kind.weighs_alpha
    (<SelectionKind.CONSTRAINT: 'constraint'>, 'constraint', False)
    """

    FAIRBAND = "fairband"  #: the paper's argmax of alpha*accuracy + (1-alpha)*fairness over the fits' values
    LOWER_BOUNDS = "lower bounds"  #: the same argmax over the fits' lower confidence bounds (``rule="robust"``)
    ROBUST = "robust"  #: lower bounds, the candidates refit and chosen on cross-validation (``fairops tune``)
    CONSTRAINT = "constraint"  #: the best of one objective with the other at least a bound
    BY_HAND = "by hand"  #: a trial named by its number or its run

    @property
    def weighs_alpha(self) -> bool:
        """Whether the rule ranks by a weighted score (so the selection has an alpha)."""
        return self in (SelectionKind.FAIRBAND, SelectionKind.LOWER_BOUNDS, SelectionKind.ROBUST)


@dataclass(frozen=True)
class Selection:
    """The picked trial, the alpha it was picked with (None for a constraint) and its score.

    Parameters
    ----------
    trial : optuna.trial.FrozenTrial
        The picked fit.
    alpha : float or None
        The value the alpha setting resolved to (None for a constraint).
    score : float
        The picked fit's score: ``o``, or the maximised objective under a constraint.
    rule : str
        The rule in words.
    alpha_rule : float, str or None, default=None
        The alpha setting the pick was made with (``"auto"`` or a float; None for a constraint).
    candidates : tuple of optuna.trial.FrozenTrial, default=()
        The next best fits to refit (``rule="robust"``).
    kind : SelectionKind, default=SelectionKind.FAIRBAND
        Which rule it was.
    screened : Screened or None, default=None
        The fits set aside and the line's standing of those ranked (:mod:`.screening`).
    """

    trial: FrozenTrial
    alpha: float | None
    score: float
    rule: str
    alpha_rule: float | str | None = None
    candidates: tuple[FrozenTrial, ...] = ()
    kind: SelectionKind = SelectionKind.FAIRBAND
    screened: Screened | None = None

    @property
    def accuracy(self) -> float:
        """The picked fit's accuracy (its first value)."""
        return float(self.trial.values[0])

    @property
    def fairness(self) -> float:
        """The picked fit's fairness (its second value)."""
        return float(self.trial.values[1])


def _fits(trials: Sequence[FrozenTrial]) -> list[FrozenTrial]:
    return [t for t in trials if t.state == TrialState.COMPLETE and t.values is not None
            and len(t.values) == 2 and ranking.is_valid(*t.values) and _in_schedule(t)]


def _in_schedule(trial: FrozenTrial) -> bool:
    # A trial the Fairband schedule refused is not one of the run's fits, whatever it returned.
    claim = claim_of(trial)
    return claim is None or claim.status == HELD


def _trials_of(study_or_trials: optuna.Study | Iterable[FrozenTrial]) -> list[FrozenTrial]:
    if not hasattr(study_or_trials, "get_trials"):
        return list(study_or_trials)
    study = cast(optuna.Study, study_or_trials)  # whatever has get_trials is taken for a study
    if len(study.directions) != 2:
        raise InputError(f"study must have two objectives (accuracy, fairness), got {len(study.directions)}")
    return study.get_trials(deepcopy=False)


def _study_alpha(study_or_trials: optuna.Study | Iterable[FrozenTrial]) -> float | Literal["auto"]:
    if hasattr(study_or_trials, "get_trials"):
        settings = internals.study_records(cast(optuna.Study, study_or_trials)).get(SETTINGS_ATTR)
        if settings is not None:
            alpha: float | Literal["auto"] = settings["alpha"]  # as FairbandSettings checked it
            return alpha
    raise InputError("alpha is required: this study was not run by FairbandSampler; pass alpha='auto' "
                     "or a float in [0, 1]")


def _in_evaluation_order(fits: list[FrozenTrial]) -> tuple[list[FrozenTrial], str]:
    """Fits in the paper's evaluation order and the tie rule to use on them."""
    if all(all(k in t.user_attrs for k in ("iteration", "bracket", "rung")) for t in fits):
        return sorted(fits, key=_evaluation_key), "paper"
    return sorted(fits, key=lambda t: t.number), "key"


def _evaluation_key(trial: FrozenTrial) -> tuple[Any, ...]:
    """A fit's place in the paper's evaluation order: iteration, bracket from ``s_max`` down, rung, position."""
    return trial.user_attrs["iteration"], -trial.user_attrs["bracket"], trial.user_attrs["rung"], _position(trial)


def _position(trial: FrozenTrial) -> int:
    # The slot a trial fits orders a rung (a redone slot keeps its place); the number if it has no claim.
    claim = claim_of(trial)
    return trial.number if claim is None or claim.slot is None else claim.slot


def lower_bounds(trial: FrozenTrial) -> tuple[float, float]:
    """(accuracy, fairness) lower confidence bounds of a fit, from its user attribute ``intervals``.

    >>> import optuna
    >>> lower_bounds(optuna.trial.create_trial(values=[0.8, 0.9], user_attrs={
    ...     "intervals": {"accuracy": [0.7, 0.85], "fairness": [0.6, 1.0]}}))
    (0.7, 0.6)
    """
    intervals: Any = trial.user_attrs.get(INTERVALS_ATTR)  # whatever was stored: refused below if not intervals
    try:
        return float(intervals["accuracy"][0]), float(intervals["fairness"][0])
    except (TypeError, KeyError, IndexError, ValueError):
        raise InputError(f"rule='robust' ranks confidence intervals, but trial {trial.number} has no user "
                         f"attribute {INTERVALS_ATTR!r}: an own objective records it with "
                         "fairops.tuning.record_outcome(trial, task, y_val, scores, sensitive) and returns its "
                         "(accuracy, fairness) (FairnessObjective records it itself); or use rule='paper'") from None


def _robust(fits: list[FrozenTrial], alpha: float | str, candidates: int, screened: Screened) -> Selection:
    value = ranking.resolve_alpha(alpha, [tuple(t.values) for t in screened.kept])
    entries = [(t.number, *lower_bounds(t)) for t in fits]
    by_number = {t.number: t for t in fits}
    order = [by_number[number] for number in ranking.rank(entries, value, ties="key")]
    # A fit on a small budget is another model than its refit on all rows (often a weak, and so fair-looking,
    # one); the fits at the largest budget are the models that get registered, so their best join the list.
    largest = max(float(t.user_attrs.get("budget", 1.0)) for t in fits)
    full = [t for t in order if float(t.user_attrs.get("budget", 1.0)) == largest]
    chosen = list({t.number: t for t in [*order[:candidates], *full[:candidates]]}.values())
    best = order[0]
    return Selection(best, value, ranking.weighted_score(*lower_bounds(best), value),
                     f"argmax lower-bound o, alpha={alpha}", alpha, tuple(chosen), SelectionKind.LOWER_BOUNDS,
                     screened)


def select_best(study_or_trials: optuna.Study | Iterable[FrozenTrial], alpha: float | Literal["auto"] | None = None,
                *, min_fairness: float | None = None, min_accuracy: float | None = None, rule: str = "fairband",
                candidates: int = 3, line: FairnessRule | None = None) -> Selection:
    """Pick a fit from a study (or a list of FrozenTrials) with values (accuracy, fairness).

    ``alpha=None`` uses the alpha setting the FairbandSampler of the study ran with. ``rule="robust"``
    ranks by ``o`` of the lower confidence bounds (alpha from the point values, as the paper's) and
    keeps the best ``candidates`` fits, and the best ``candidates`` at the largest budget (user attribute
    ``budget``), in :attr:`Selection.candidates`.

    Parameters
    ----------
    study_or_trials : optuna.Study or list of optuna.trial.FrozenTrial
        The fits; a study must have two objectives.
    alpha : float, "auto" or None, default=None
        Weight of accuracy in ``o``, ``"auto"`` for the means over all fits, or None for the study's setting.
    min_fairness, min_accuracy : float or None, default=None
        A constraint in [0, 1] instead of ``o`` (at most one): best accuracy with fairness at least
        ``min_fairness``, or best fairness with accuracy at least ``min_accuracy``.
    rule : {"fairband", "paper", "robust"}, default="fairband"
        Rank the point values (``"fairband"``, also named ``"paper"``), or the lower confidence bounds.
    candidates : int, default=3
        How many fits ``rule="robust"`` keeps to refit.
    line : FairnessRule or None, default=None
        Rank only the fits of the best standing against its line (see the module docstring).

    Returns
    -------
    Selection
        The pick; its ``screened`` counts the fits set aside and the line's standings.

    Raises
    ------
    InputError
        If no fit is successful, every fit is set aside, or none meets the constraint.

    Examples
    --------
    >>> import optuna
    >>> study = optuna.create_study(directions=["maximize", "maximize"])
    >>> for acc, fair in [(0.9, 0.5), (0.8, 0.8), (0.6, 1.0)]:
    ...     study.add_trial(optuna.trial.create_trial(values=[acc, fair]))
    >>> pick = select_best(study, alpha=0.5)
    >>> pick.trial.number, pick.alpha
    (1, 0.5)
    >>> select_best(study, alpha=1.0).trial.number, select_best(study, min_fairness=0.9).trial.number
    (0, 2)
    """
    if min_fairness is not None and min_accuracy is not None:
        raise InputError("give at most one of min_fairness and min_accuracy")
    if rule not in RULES:
        raise InputError(f"rule must be one of {', '.join(map(repr, RULES))} ('paper' is 'fairband'), got {rule!r}")
    if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 1:
        raise InputError(f"candidates must be a positive integer, got {candidates!r}")
    fits = _fits(_trials_of(study_or_trials))
    if not fits:
        raise InputError("no successful fit (COMPLETE trial with finite accuracy and fairness) to select from")
    screened = screen(feasible_fits(fits), line)
    if not screened.kept:
        raise InputError(f"no fit to pick: {_set_aside_words(screened.set_aside)}")
    fits = screened.fits
    if min_fairness is not None or min_accuracy is not None:
        return _constrained(fits, min_fairness, min_accuracy, screened)
    if alpha is None:
        alpha = _study_alpha(study_or_trials)
    if rule == "robust":
        return _robust(fits, alpha, candidates, screened)
    value = ranking.resolve_alpha(alpha, [tuple(t.values) for t in screened.kept])
    ordered, ties = _in_evaluation_order(fits)
    best = ordered[ranking.rank([(k, *t.values) for k, t in enumerate(ordered)], value, ties=ties)[0]]
    accuracy, fairness = best.values
    return Selection(best, value, ranking.weighted_score(accuracy, fairness, value), f"argmax o, alpha={alpha}", alpha,
                     screened=screened)


_Reading = tuple[FrozenTrial, bool, tuple[Any, ...] | None]  # what RunningSelection keeps of a finished trial


class RunningSelection:
    """``select_best(trials, alpha=alpha)`` after each finished fit, without reading every fit again each time.

    What the pick reads of a finished trial (a fit? feasible? set aside? its place in the paper's evaluation
    order) is read once and kept, as Optuna never changes a finished trial (a trial object other than the one
    read is read again). A pick is then a pass over the kept values: alpha from their means, the fit of the
    highest score, and on a tie the same ordering and tie rule as :func:`select_best`. A trial that cannot be
    read, or no fit to rank, is left to :func:`select_best` itself (its error or its pick).

    Parameters
    ----------
    alpha : float or "auto"
        Weight of accuracy in ``o``, or ``"auto"`` for the means over the fits.

    Examples
    --------
    >>> import optuna
    >>> running = RunningSelection(0.5)
    >>> fits = [optuna.trial.create_trial(values=[0.9, 0.5]), optuna.trial.create_trial(values=[0.7, 0.9])]
    >>> running.select(fits[:1]).score, running.select(fits).score
    (0.7, 0.8)
    """

    def __init__(self, alpha: float | Literal["auto"]) -> None:
        self.alpha = alpha
        # number -> (the trial read, whether select_best ranks it, its evaluation-order key or None)
        self._read: dict[int, _Reading] = {}

    def _reading(self, trial: FrozenTrial) -> _Reading:
        read = self._read.get(trial.number)
        if read is None or read[0] is not trial:
            ranked = bool(_fits([trial])) and is_feasible(trial) and set_aside_reason(trial) is None
            paper = ranked and all(key in trial.user_attrs for key in ("iteration", "bracket", "rung"))
            read = (trial, ranked, _evaluation_key(trial) if paper else None)
            if trial.state.is_finished():
                self._read[trial.number] = read
        return read

    def select(self, trials: Sequence[FrozenTrial]) -> Selection:
        """The pick among ``trials``, as ``select_best(trials, alpha=self.alpha)`` makes it.

        Parameters
        ----------
        trials : list of optuna.trial.FrozenTrial
            The study's trials.

        Returns
        -------
        Selection
            The pick (its ``screened`` is None unless :func:`select_best` made it).
        """
        try:
            readings = [read for read in map(self._reading, trials) if read[1]]
        except Exception:  # noqa: BLE001 - a trial select_best cannot read: it raises (or decides) as it would
            readings = []
        if not readings:
            return select_best(trials, alpha=self.alpha)
        value = ranking.resolve_alpha(self.alpha, [tuple(read[0].values) for read in readings])
        scores = [ranking.weighted_score(read[0].values[0], read[0].values[1], value) for read in readings]
        highest = max(scores)
        best = [read for read, score in zip(readings, scores) if score == highest]
        if len(best) == 1:
            pick = best[0][0]
        elif all(read[2] is not None for read in readings):  # select_best's paper order and tie rule
            ordered = [read[0] for read in sorted(readings, key=lambda read: cast(tuple[Any, ...], read[2]))]
            pick = ordered[ranking.rank([(k, *t.values) for k, t in enumerate(ordered)], value, ties="paper")[0]]
        else:  # trial order: the lowest number of the tied fits
            pick = min((read[0] for read in best), key=lambda t: t.number)
        accuracy, fairness = pick.values
        return Selection(pick, value, ranking.weighted_score(accuracy, fairness, value),
                         f"argmax o, alpha={self.alpha}", self.alpha)


def _constrained(fits: list[FrozenTrial], min_fairness: float | None, min_accuracy: float | None,
                 screened: Screened) -> Selection:
    """The best of one objective among the fits whose other objective reaches its bound."""
    which, bound = (1, min_fairness) if min_fairness is not None else (0, min_accuracy)
    if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not 0 <= bound <= 1:
        name = "min_fairness" if which == 1 else "min_accuracy"
        raise InputError(f"{name} must be a float in [0, 1], got {bound!r}")
    feasible = [t for t in fits if t.values[which] >= bound]
    if not feasible:
        name = "fairness" if which == 1 else "accuracy"
        raise InputError(f"no fit has {name} >= {bound}")
    target = 1 - which  # maximise the other objective, then the constrained one
    best = min(feasible, key=lambda t: (-t.values[target], -t.values[which], t.number))
    rule = f"max {'accuracy' if target == 0 else 'fairness'} s.t. " \
           f"{'fairness' if which == 1 else 'accuracy'} >= {bound}"
    return Selection(best, None, float(best.values[target]), rule, kind=SelectionKind.CONSTRAINT,
                     screened=screened)


def _set_aside_words(set_aside: dict[str, int]) -> str:
    """``"every one of the 38 fits was set aside: 18 decided one class ..."``."""
    from fairops.metrics._figures import DEGENERATE

    total = sum(set_aside.values())
    return f"every one of the {total} fits was set aside: " + "; ".join(
        f"{count} {DEGENERATE[reason]}" for reason, count in sorted(set_aside.items()))


def successful_fits(study_or_trials: optuna.Study | Iterable[FrozenTrial]) -> list[FrozenTrial]:
    """The fits selection ranks: COMPLETE trials with finite (accuracy, fairness), in trial order.

    >>> import optuna
    >>> study = optuna.create_study(directions=["maximize", "maximize"])
    >>> study.add_trial(optuna.trial.create_trial(values=[0.9, 0.5]))
    >>> study.add_trial(optuna.trial.create_trial(state=optuna.trial.TrialState.FAIL))
    >>> len(successful_fits(study))
    1
    """
    return _fits(_trials_of(study_or_trials))


def pareto_front(study_or_trials: optuna.Study | Iterable[FrozenTrial]) -> list[FrozenTrial]:
    """Successful, feasible fits not set aside nor dominated in (accuracy, fairness), by accuracy descending.

    Parameters
    ----------
    study_or_trials : optuna.Study or list of optuna.trial.FrozenTrial
        The fits.

    Returns
    -------
    list of optuna.trial.FrozenTrial
        The front.

    Examples
    --------
    >>> import optuna
    >>> study = optuna.create_study(directions=["maximize", "maximize"])
    >>> for acc, fair in [(0.9, 0.5), (0.8, 0.8), (0.7, 0.7), (0.6, 1.0)]:
    ...     study.add_trial(optuna.trial.create_trial(values=[acc, fair]))
    >>> [t.number for t in pareto_front(study)]
    [0, 1, 3]
    """
    kept, _ = without_set_aside(t for t in _fits(_trials_of(study_or_trials)) if is_feasible(t))
    fits = sorted(kept, key=lambda t: (-t.values[0], -t.values[1], t.number))
    front, best_fairness = [], -float("inf")
    for t in fits:
        if t.values[1] > best_fairness:
            front.append(t)
            best_fairness = t.values[1]
    return front


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

    fits: list[FrozenTrial]
    kept: list[FrozenTrial]
    set_aside: dict[str, int] = field(default_factory=dict)
    standing: str | None = None
    standings: dict[str, int] = field(default_factory=dict)


def without_set_aside(fits: Iterable[FrozenTrial]) -> tuple[list[FrozenTrial], dict[str, int]]:
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


def screen(fits: Iterable[FrozenTrial], rule: FairnessRule | None = None) -> Screened:
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
    by_standing: dict[str, list[FrozenTrial]] = {standing: [] for standing in STANDINGS}
    for trial in kept:
        by_standing[standing_of(trial, rule)].append(trial)
    best = next(standing for standing in STANDINGS if by_standing[standing])
    return Screened(by_standing[best], kept, set_aside, best,
                    {standing: len(trials) for standing, trials in by_standing.items()})


CONSTRAINTS_ATTR = "constraints"  # the key Optuna's constraints_func results are stored under
NAMED_PREFIX = CONSTRAINTS_ATTR + ":"  # trial.set_constraint(name, value) stores "constraints:<name>"
FLOOR_NAME = "fairband:min_fairness"  # the floor's own name


class ConstraintNameError(InputError):
    """Two constraints of one trial under one name: Optuna's tools would keep only one of them."""


def check_min_fairness(min_fairness: object) -> float | None:
    """``min_fairness`` as a float in [0, 1] (or None); anything else is refused by name.

    >>> check_min_fairness(0.8), check_min_fairness(None)
    (0.8, None)
    """
    if min_fairness is None:
        return None
    if isinstance(min_fairness, bool) or not isinstance(min_fairness, (int, float)) \
            or not 0 <= min_fairness <= 1:
        raise InputError(f"min_fairness must be a float in [0, 1], got {min_fairness!r}")
    return float(min_fairness)


def constraint_values(fairness: float, *, min_fairness: float) -> tuple[float]:
    """What a ``constraints_func`` for ``fairness >= min_fairness`` returns: <= 0 means feasible."""
    return (float(min_fairness) - float(fairness),)


def _reported_fairness(trial: FrozenTrial, state: TrialState, values: Sequence[float] | None) -> float | None:
    if state == TrialState.COMPLETE and values is not None and len(values) == 2:
        return values[1]
    if state == TrialState.PRUNED and "rung" in trial.user_attrs:  # a stopped asynchronous fit: its last rung
        return trial.user_attrs.get(f"rung{trial.user_attrs['rung']}_fairness")
    return None


def _stored(study: optuna.Study, trial: FrozenTrial) -> dict[str, Any]:
    """The trial's system attributes in the storage now (the trial handed to ``after_trial`` predates the writes
    of a ``constraints_func`` and of ``trial.set_constraint``)."""
    return internals.storage_of(study).get_trial(internals.trial_id_of(study, trial)).system_attrs


def record_constraint(study: optuna.Study, trial: FrozenTrial, state: TrialState, values: Sequence[float] | None,
                      min_fairness: float | None, *, after_others: bool = False) -> None:
    """From a sampler's ``after_trial``: store the floor's constraint under :data:`FLOOR_NAME` and in the list.

    A trial without a finite fairness (failed, or refused by the schedule before any fit) gets none, as a
    failed trial gets none from Optuna. ``after_others``: another ``constraints_func`` (a base sampler's)
    may have written the list for this trial already; the floor is appended to its values, not written over them.
    Raises :class:`ConstraintNameError`, once the floor is written, when two constraints share a name.
    """
    if min_fairness is None or state not in (TrialState.COMPLETE, TrialState.PRUNED):
        return
    fairness = _reported_fairness(trial, state, values)
    if fairness is None or not math.isfinite(fairness):
        return
    (floor,) = constraint_values(fairness, min_fairness=min_fairness)
    try:
        stored = _stored(study, trial)
        others = tuple(stored.get(CONSTRAINTS_ATTR) or ()) if after_others else ()
        internals.write_trial_attrs(study, trial, system={CONSTRAINTS_ATTR: (*others, floor),
                                                          NAMED_PREFIX + FLOOR_NAME: floor})
    except UpdateFinishedTrialError:
        return  # another worker failed it as stale meanwhile: not a fit of the run, nothing to constrain
    named = {key[len(NAMED_PREFIX):] for key in stored if key.startswith(NAMED_PREFIX)}
    if FLOOR_NAME in named:
        raise ConstraintNameError(
            f"trial {trial.number} sets a constraint named {FLOOR_NAME!r}, the name of FairbandSampler's "
            "min_fairness floor; give trial.set_constraint another name")
    twice = sorted(named & {str(i) for i in range(len(others))}, key=int)
    if twice:
        raise ConstraintNameError(
            f"trial {trial.number} has two constraints named {twice[0]!r}: trial.set_constraint({twice[0]!r}, ...) "
            f"and entry {twice[0]} of the list the base sampler's constraints_func returned; Optuna's tools keep "
            "only one of them, so give the named one another name")


def constraint_items(trial: FrozenTrial) -> list[tuple[str, float]]:
    """Every constraint of ``trial`` as stored, neither format replacing the other: the list's entries as
    ``"0"``, ``"1"``, ... (without the floor's copy, which its own name holds), then the named ones.

    >>> import optuna
    >>> constraint_items(optuna.trial.create_trial(values=[0.9, 0.7], system_attrs={
    ...     "constraints": [0.1, -0.2], "constraints:0": -1.0, "constraints:fairband:min_fairness": -0.2}))
    [('0', 0.1), ('0', -1.0), ('fairband:min_fairness', -0.2)]
    """
    attrs = trial.system_attrs
    listed = list(attrs.get(CONSTRAINTS_ATTR) or ())
    if NAMED_PREFIX + FLOOR_NAME in attrs and listed:
        listed = listed[:-1]  # the floor's copy for optuna-dashboard
    return [(str(i), float(value)) for i, value in enumerate(listed)] + \
        [(key[len(NAMED_PREFIX):], float(value)) for key, value in attrs.items() if key.startswith(NAMED_PREFIX)]


def is_feasible(trial: FrozenTrial) -> bool:
    """Optuna's rule, every constraint value <= 0, over both formats as stored (:func:`constraint_items`)."""
    return all(value <= 0.0 for _, value in constraint_items(trial))


def feasible_fits(fits: list[FrozenTrial]) -> list[FrozenTrial]:
    """The fits Optuna deems feasible; refuses, naming the constraints broken, when they leave none.

    >>> import optuna
    >>> feasible_fits([optuna.trial.create_trial(values=[0.9, 0.5], constraints={"latency": 0.3})])
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fairops.errors.InputError: no fit is feasible: all 1 fits violate the study's constraints (broken: 'latency'; '0', '1', ...
    """  # noqa: E501 - a doctest's expected output is one line
    feasible = [t for t in fits if is_feasible(t)]
    if fits and not feasible:
        broken = sorted({name for t in fits for name, value in constraint_items(t) if value > 0.0})
        raise InputError(f"no fit is feasible: all {len(fits)} fits violate the study's constraints (broken: "
                         f"{', '.join(map(repr, broken))}; '0', '1', ... are the 'constraints' list of a "
                         f"constraints_func, {FLOOR_NAME!r} is min_fairness, other names come from "
                         "trial.set_constraint)")
    return feasible
