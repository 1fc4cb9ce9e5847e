"""Which fit a registration takes: the selection rules :func:`fairops.registry.register_best` accepts, and the
rule in words and as data.

A rule is ``"fairband"`` (the paper's argmax; ``"paper"`` is another name of it, as in ``select_best``),
``"robust"`` (the argmax of lower bounds), a constraint such as ``"fairness>=0.8"``, ``{"trial": n}`` or
``{"run_id": id}`` (by hand), or a ready :class:`~fairops.fairband.Selection`; its
:class:`~fairops.fairband.SelectionKind` says which.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fairops.fairband._selection import RULES, Selection, SelectionKind, select_best, successful_fits

from ..errors import InputError
from ..tracking._parent_run import STUDY_TAG
from ..tracking._session import TRIAL_TAG

if TYPE_CHECKING:
    from collections.abc import Sequence

    import optuna
    from optuna.trial import FrozenTrial

_CONSTRAINT = re.compile(r"^\s*(accuracy|fairness)\s*>=\s*([0-9]*\.?[0-9]+)\s*$")


def _trial_of_run(study, run_id: str, tracking_uri=None):
    from mlflow.tracking import MlflowClient

    tags = MlflowClient(tracking_uri).get_run(run_id).data.tags
    if tags.get(STUDY_TAG) != study.study_name or TRIAL_TAG not in tags:
        raise InputError(f"run {run_id} is not a trial run of study {study.study_name!r}")
    return int(tags[TRIAL_TAG])


def _by_hand(study, number) -> Selection:
    chosen = [t for t in successful_fits(study) if t.number == number]
    if not chosen:
        raise InputError(f"trial {number!r} is not a completed fit with finite (accuracy, fairness) in the study")
    return Selection(chosen[0], None, float(chosen[0].values[0]), f"trial {number} chosen by hand",
                     kind=SelectionKind.BY_HAND)


def select(study, rule="fairband", *, alpha=None, tracking_uri=None) -> Selection:
    """Apply a selection rule (see the module docstring) and return the :class:`Selection`."""
    if len(study.directions) != 2:
        raise InputError(f"study must have two objectives (accuracy, fairness), got {len(study.directions)}")
    if isinstance(rule, Selection):
        if rule.trial.number not in {t.number for t in successful_fits(study)}:
            raise InputError(f"the selection's trial {rule.trial.number} is not a completed fit of the study")
        return rule
    if isinstance(rule, dict):
        if set(rule) == {"trial"}:
            return _by_hand(study, rule["trial"])
        if set(rule) == {"run_id"}:
            return _by_hand(study, _trial_of_run(study, rule["run_id"], tracking_uri))
        raise InputError(f"a rule given as a dict must be {{'trial': n}} or {{'run_id': id}}, got {rule!r}")
    if not isinstance(rule, str):
        raise TypeError(f"rule must be 'fairband', a constraint like 'fairness>=0.8', a dict or a Selection; "
                        f"got {rule!r}")
    if rule in RULES:
        return select_best(study, alpha=alpha, rule=rule)
    match = _CONSTRAINT.match(rule)
    if not match:
        raise InputError(f"rule {rule!r} is not one of {', '.join(map(repr, RULES))} ('paper' is 'fairband'), "
                         "'fairness>=<x>', 'accuracy>=<x>' or a dict")
    bound = float(match[2])
    if match[1] == "fairness":
        return select_best(study, min_fairness=bound)
    return select_best(study, min_accuracy=bound)


def rule_kind(selection: Selection) -> str:
    """``"fairband"`` (any rule weighing alpha), ``"constraint"`` or ``"by hand"``: which kind of rule made
    ``selection``, as records and cards name it."""
    return SelectionKind.FAIRBAND.value if selection.kind.weighs_alpha else selection.kind.value


def describe(selection: Selection, study_or_trials: optuna.Study | Sequence[FrozenTrial]) -> str:
    """The rule that made ``selection``, in one line (the alpha rule and its value for a Fairband pick).

    Parameters
    ----------
    selection : Selection
        The pick.
    study_or_trials : optuna.Study or list of optuna.trial.FrozenTrial
        The fits it was picked from (counted in the line).

    Returns
    -------
    str
        The rule in words.
    """
    kind = selection.kind
    if kind == SelectionKind.ROBUST:  # its rule text already says everything (fairops.tuning._pick)
        return selection.rule
    if kind.weighs_alpha:
        setting = selection.alpha_rule
        how = ("alpha rule auto (0.5*(mean fairness - mean accuracy) + 0.5 over all fits)" if setting == "auto"
               else f"alpha fixed at {setting:g}" if isinstance(setting, (int, float)) else f"alpha {setting}")
        n_fits = len(successful_fits(study_or_trials))
        if kind == SelectionKind.LOWER_BOUNDS:  # select_best(rule="robust")'s pick
            return (f"robust: argmax alpha*accuracy_low + (1-alpha)*fairness_low over {n_fits} fits (lower "
                    f"confidence bounds), {how} = {selection.alpha:.4g}")
        return (f"Fairband: argmax alpha*accuracy + (1-alpha)*fairness over {n_fits} fits, {how} = "
                f"{selection.alpha:.4g}")
    return f"constraint: {selection.rule}" if kind == SelectionKind.CONSTRAINT else selection.rule


def record(selection: Selection, study_or_trials) -> dict:
    """The selection as data (the card's ``selection``, ``selection/selection_rule.json``)."""
    return {"kind": rule_kind(selection), "description": describe(selection, study_or_trials),
            "alpha_rule": selection.alpha_rule, "alpha": selection.alpha, "trial": selection.trial.number,
            "n_fits": len(successful_fits(study_or_trials))}
