"""A fairness floor as Optuna's own constraint, so Optuna's tools see which fits are admissible.

Optuna's constrained samplers call a user's ``constraints_func(trial)`` in ``after_trial`` for every
COMPLETE or PRUNED trial and store the returned tuple as the trial's system attribute ``"constraints"``;
a trial is feasible when every value is <= 0. ``study.best_trials``,
``optuna.visualization.plot_pareto_front`` and optuna-dashboard read that attribute. A floor
``fairness >= min_fairness`` is the one-value tuple ``(min_fairness - fairness,)``, written here the same
way, so those tools mark the fits below the floor infeasible. (Optuna 5 deprecates ``constraints_func``
for ``Trial.set_constraint``, which stores one ``constraints:<name>`` attribute per constraint; Optuna
reads both formats, but optuna-dashboard 0.21 reads only the ``constraints`` list.)

Constraints of the user's own are honoured beside the floor, whichever way they are given: names set with
``trial.set_constraint`` inside the objective live in their own attributes, and a base sampler's
``constraints_func`` result (e.g. ``FairbandSampler(base_sampler=TPESampler(constraints_func=...))``) comes
first in the ``constraints`` list with the floor appended after it, as one ``constraints_func`` returning both
would write them. Feasibility reads :attr:`FrozenTrial.constraints`, Optuna's merge of both formats.

>>> constraint_values(0.75, min_fairness=0.5)
(-0.25,)
>>> import optuna
>>> is_feasible(optuna.trial.create_trial(values=[0.9, 0.7], system_attrs={"constraints": [0.1]}))
False
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from optuna.exceptions import UpdateFinishedTrialError
from optuna.trial import FrozenTrial, TrialState

from ..errors import InputError
from . import _optuna_internals as internals

CONSTRAINTS_ATTR = "constraints"  # the key Optuna's constraints_func results are stored under


def check_min_fairness(min_fairness) -> float | None:
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


def _stored_constraints(study, trial: FrozenTrial) -> tuple:
    """The ``constraints`` list in the storage now (the trial handed to ``after_trial`` predates other writers)."""
    stored = internals.storage_of(study).get_trial(internals.trial_id_of(study, trial)).system_attrs
    return tuple(stored.get(CONSTRAINTS_ATTR) or ())


def record_constraint(study, trial: FrozenTrial, state: TrialState, values: Sequence[float] | None,
                      min_fairness: float | None, *, after_others: bool = False) -> None:
    """From a sampler's ``after_trial``: store the floor's constraint as Optuna's ``constraints_func`` would.

    A trial without a finite fairness (failed, or refused by the schedule before any fit) gets none, as a
    failed trial gets none from Optuna. ``after_others``: another ``constraints_func`` (a base sampler's)
    may have written the list for this trial already; the floor is appended to its values, not written over them.
    """
    if min_fairness is None or state not in (TrialState.COMPLETE, TrialState.PRUNED):
        return
    fairness = _reported_fairness(trial, state, values)
    if fairness is None or not math.isfinite(fairness):
        return
    written = constraint_values(fairness, min_fairness=min_fairness)
    try:
        if after_others:
            written = (*_stored_constraints(study, trial), *written)
        internals.write_trial_attrs(study, trial, system={CONSTRAINTS_ATTR: written})
    except UpdateFinishedTrialError:
        pass  # another worker failed it as stale meanwhile: not a fit of the run, nothing to constrain


def is_feasible(trial: FrozenTrial) -> bool:
    """Optuna's rule: every constraint value of the trial (either of Optuna's formats) is <= 0."""
    return all(value <= 0.0 for value in trial.constraints.values())


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
        broken = sorted({name for t in fits for name, value in t.constraints.items() if value > 0.0})
        raise InputError(f"no fit is feasible: all {len(fits)} fits violate the study's constraints (broken: "
                         f"{', '.join(map(repr, broken))}; '0', '1', ... are the 'constraints' list of a "
                         "constraints_func or a fairness floor such as min_fairness, other names come from "
                         "trial.set_constraint)")
    return feasible
