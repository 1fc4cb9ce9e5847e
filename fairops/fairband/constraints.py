"""A fairness floor as Optuna's own constraint, so Optuna's tools see which fits are admissible.

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
from collections.abc import Sequence

from optuna.exceptions import UpdateFinishedTrialError
from optuna.trial import FrozenTrial, TrialState

from ..errors import InputError
from . import _optuna_internals as internals

CONSTRAINTS_ATTR = "constraints"  # the key Optuna's constraints_func results are stored under
NAMED_PREFIX = CONSTRAINTS_ATTR + ":"  # trial.set_constraint(name, value) stores "constraints:<name>"
FLOOR_NAME = "fairband:min_fairness"  # the floor's own name


class ConstraintNameError(InputError):
    """Two constraints of one trial under one name: Optuna's tools would keep only one of them."""


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


def _stored(study, trial: FrozenTrial) -> dict:
    """The trial's system attributes in the storage now (the trial handed to ``after_trial`` predates the writes
    of a ``constraints_func`` and of ``trial.set_constraint``)."""
    return internals.storage_of(study).get_trial(internals.trial_id_of(study, trial)).system_attrs


def record_constraint(study, trial: FrozenTrial, state: TrialState, values: Sequence[float] | None,
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
