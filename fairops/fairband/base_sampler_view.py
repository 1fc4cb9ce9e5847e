"""The study as a Fairband base sampler sees it: the fits of the schedule, numbered as a study of their own.

``FairbandSampler(base_sampler=...)`` hands each of Optuna's sampler hooks an ordinary
:class:`optuna.Study` whose storage is a read-through view of the real one (:class:`ScheduleStorage`, a
:class:`~optuna.storages.BaseStorage` built on public calls only). The view holds every trial that claimed a
slot of the schedule, in trial order and numbered 0, 1, 2, ... without gaps; trials the schedule refused
(enqueued or retried trials, trials past ``iterations``) and trials that have not claimed yet are left out.
Because claims are made in trial-number order and a trial's claim never loses its slot, the view only ever
grows at its end: a trial keeps its number in it for good. That is what samplers which index the study's
trials by number need (NSGA-II's and NSGA-III's generation bookkeeping), and one study id and one history for
the whole run keep the search-space caches of NSGA-II, CMA-ES and GP consistent. Writes (a trial's
parameters and attributes, the study's attributes) go to the real storage; a base sampler cannot create or
finish trials through the view, and ``study.stop()`` from it (BruteForceSampler's, once its finite space is
exhausted) changes nothing: the schedule decides when the study ends.

A sampler that refuses a study of two objectives (``CmaEsSampler``) sees a study of one, maximised: the
weighted score ``o = alpha * accuracy + (1 - alpha) * fairness`` Fairband ranks by, with ``alpha="auto"``
the alpha of the means of the fits it can see, as :func:`~fairops.fairband.select_best` computes it over a
run. :func:`objectives_taken` asks a sampler which it takes when the FairbandSampler is built.

>>> import optuna
>>> objectives_taken(optuna.samplers.TPESampler()), objectives_taken(optuna.samplers.CmaEsSampler())
(2, 1)
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Container, Sequence
from typing import Any

import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler
from optuna.storages import BaseStorage
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from ..errors import InputError
from . import _optuna_internals as internals, _ranking as ranking
from ._claims import claim_of

_logger = logging.getLogger("fairops.fairband.sampler")


def in_schedule(trial: FrozenTrial) -> bool:
    """Whether ``trial`` claimed a slot of the schedule (held, or given up while waiting), so it is in the view."""
    claim = claim_of(trial)
    return claim is not None and claim.slot is not None


def objectives_taken(sampler: BaseSampler) -> int:
    """How many objectives ``sampler`` samples a study of: 2, or 1 for a sampler that refuses two (CMA-ES).

    Asked once, with an empty search space, on a throwaway in-memory study of each kind; a sampler that
    refuses both is refused with its own reason.

    Parameters
    ----------
    sampler : optuna.samplers.BaseSampler
        The base sampler.

    Returns
    -------
    int
        2 or 1.
    """
    refusal = _refusal(sampler, 2)
    if refusal is None:
        return 2
    if _refusal(sampler, 1) is None:
        return 1
    raise InputError(f"base_sampler {type(sampler).__name__} cannot sample a Fairband study: {refusal}")


def _refusal(sampler: BaseSampler, n_objectives: int) -> str | None:
    probe = optuna.create_study(directions=["maximize"] * n_objectives, sampler=optuna.samplers.RandomSampler(0))
    probe.ask()
    (trial,) = probe.get_trials(deepcopy=False)
    try:
        sampler.sample_relative(probe, trial, {})
    except Exception as error:  # the sampler's own reason, whatever its type
        return str(error) or type(error).__name__
    return None


def _pairs(trials: list[FrozenTrial]) -> list[tuple[float | None, float | None]]:
    """The (accuracy, fairness) of the finished fits among ``trials``."""
    return [(t.values[0], t.values[1]) for t in trials
            if t.state == TrialState.COMPLETE and t.values is not None and len(t.values) == 2]


class ScheduleStorage(BaseStorage):
    """A read-through view of ``study``'s storage holding only the fits of the schedule, renumbered from 0.

    Parameters
    ----------
    study : optuna.Study
        The real study.
    alpha : float, str or None, default=None
        None: the trials' two values as they are. A float or ``"auto"``: one value, the weighted score.
    """

    def __init__(self, study: optuna.Study, alpha: float | str | None = None) -> None:
        self._study = study
        self._storage = internals.storage_of(study)
        self._study_id = internals.study_id_of(study)
        self._alpha = alpha

    # -- the trials of the schedule --------------------------------------------------------------
    def fits(self) -> list[FrozenTrial]:
        """The real study's trials that claimed a slot, in trial order (their own numbers, not copies)."""
        return [t for t in self._study.get_trials(deepcopy=False) if in_schedule(t)]

    def number_of(self, trial: FrozenTrial) -> int:
        """``trial``'s number in the view: how many fits of the schedule come before it.

        Parameters
        ----------
        trial : optuna.trial.FrozenTrial
            A trial of the real study that claimed a slot.

        Returns
        -------
        int
            Its number among the fits.
        """
        return sum(1 for t in self.fits() if t.number < trial.number)

    def _renumbered(self, trials: list[FrozenTrial]) -> list[FrozenTrial]:
        shown = []
        for number, trial in enumerate(trials):
            copied = copy.copy(trial)
            copied.number = number
            shown.append(copied)
        if self._alpha is not None:
            alpha = ranking.resolve_alpha(self._alpha, _pairs(shown))
            for trial in shown:
                if trial.values is not None and len(trial.values) == 2:
                    trial.values = [ranking.weighted_score(trial.values[0], trial.values[1], alpha)]
        return shown

    def get_all_trials(self, study_id: int, deepcopy: bool = True,
                       states: Container[TrialState] | None = None) -> list[FrozenTrial]:
        self._check_study(study_id)
        trials = self._renumbered(self.fits())
        if states is not None:
            trials = [t for t in trials if t.state in states]
        return copy.deepcopy(trials) if deepcopy else trials

    def get_trial(self, trial_id: int) -> FrozenTrial:
        for trial in self.get_all_trials(self._study_id, deepcopy=False):
            if internals.trial_id_of(self._study, trial) == trial_id:
                return copy.deepcopy(trial)
        raise KeyError(f"trial {trial_id} is not one of the schedule's fits")

    # -- the study ---------------------------------------------------------------------------------
    def _check_study(self, study_id: int) -> None:
        if study_id != self._study_id:
            raise KeyError(f"this view holds study {self._study_id} only, not {study_id}")

    def get_study_id_from_name(self, study_name: str) -> int:
        if self._storage.get_study_id_from_name(study_name) != self._study_id:
            raise KeyError(f"this view holds study {self._study.study_name!r} only, not {study_name!r}")
        return self._study_id

    def get_study_name_from_id(self, study_id: int) -> str:
        self._check_study(study_id)
        return self._study.study_name

    def get_study_directions(self, study_id: int) -> list[StudyDirection]:
        self._check_study(study_id)
        if self._alpha is not None:
            return [StudyDirection.MAXIMIZE]
        return self._storage.get_study_directions(study_id)

    def get_study_user_attrs(self, study_id: int) -> dict[str, Any]:
        self._check_study(study_id)
        return self._storage.get_study_user_attrs(study_id)

    def get_study_system_attrs(self, study_id: int) -> dict[str, Any]:
        self._check_study(study_id)
        return self._storage.get_study_system_attrs(study_id)

    def set_study_user_attr(self, study_id: int, key: str, value: Any) -> None:
        self._check_study(study_id)
        self._storage.set_study_user_attr(study_id, key, value)

    def set_study_system_attr(self, study_id: int, key: str, value: Any) -> None:
        self._check_study(study_id)
        self._storage.set_study_system_attr(study_id, key, value)

    def get_all_studies(self) -> list:
        return [s for s in self._storage.get_all_studies() if s.study_name == self._study.study_name]

    # -- writes to a trial go to the real storage ----------------------------------------------------
    def set_trial_param(self, trial_id: int, param_name: str, param_value_internal: float,
                        distribution: BaseDistribution) -> None:
        self._storage.set_trial_param(trial_id, param_name, param_value_internal, distribution)

    def set_trial_user_attr(self, trial_id: int, key: str, value: Any) -> None:
        self._storage.set_trial_user_attr(trial_id, key, value)

    def set_trial_system_attr(self, trial_id: int, key: str, value: Any) -> None:
        self._storage.set_trial_system_attr(trial_id, key, value)

    def set_trial_intermediate_value(self, trial_id: int, step: int, intermediate_value: float) -> None:
        self._storage.set_trial_intermediate_value(trial_id, step, intermediate_value)

    # -- what the schedule alone does ------------------------------------------------------------------
    def create_new_study(self, directions: Sequence[StudyDirection], study_name: str | None = None) -> int:
        raise RuntimeError("a Fairband base sampler cannot create studies")

    def delete_study(self, study_id: int) -> None:
        raise RuntimeError("a Fairband base sampler cannot delete the study")

    def create_new_trial(self, study_id: int, template_trial: FrozenTrial | None = None) -> int:
        raise RuntimeError("a Fairband base sampler cannot create trials: the schedule decides every fit")

    def set_trial_state_values(self, trial_id: int, state: TrialState,
                               values: Sequence[float] | None = None) -> bool:
        raise RuntimeError("a Fairband base sampler cannot finish trials: each fit's worker does")


class _ScheduleStudy(optuna.Study):
    """The study a base sampler is handed; its ``stop()`` is the schedule's to decide, so it only logs."""

    def stop(self) -> None:
        _logger.debug("the base sampler asked to stop the study; the Fairband schedule goes on")


class BaseSamplerView:
    """What the hooks of a base sampler are handed for one trial: the view study and the trial renumbered in it.

    Make one per trial for the hooks up to its sampling (Optuna's own ``Study`` reads its trials once per trial
    there) and a fresh one for ``after_trial``.

    Parameters
    ----------
    study : optuna.Study
        The real study.
    trial : optuna.trial.FrozenTrial
        The trial the hooks are about; it must have claimed a slot.
    sampler : optuna.samplers.BaseSampler
        The base sampler (the view study's sampler).
    alpha : float, str or None
        As :class:`ScheduleStorage` takes it.
    number : int or None, default=None
        The trial's number in the view when known (it never changes).
    """

    def __init__(self, study: optuna.Study, trial: FrozenTrial, sampler: BaseSampler,
                 alpha: float | str | None, number: int | None = None) -> None:
        self._storage = ScheduleStorage(study, alpha)
        self._alpha = alpha
        self.study: optuna.Study = _ScheduleStudy(study.study_name, self._storage, sampler=sampler,
                                                  pruner=optuna.pruners.NopPruner())
        self.number = self._storage.number_of(trial) if number is None else number

    def trial(self, trial: FrozenTrial) -> FrozenTrial:
        """``trial`` (Optuna's own copy, which the hook received) with its number in the view.

        Parameters
        ----------
        trial : optuna.trial.FrozenTrial
            The trial as Optuna handed it to FairbandSampler.

        Returns
        -------
        optuna.trial.FrozenTrial
            A shallow copy numbered as in the view.
        """
        shown = copy.copy(trial)
        shown.number = self.number
        return shown

    def values(self, values: Sequence[float] | None) -> Sequence[float] | None:
        """A finished trial's values as the view shows them: the weighted score for a one-objective sampler.

        Parameters
        ----------
        values : sequence of float or None
            The trial's (accuracy, fairness), if any.

        Returns
        -------
        sequence of float or None
            The same, or ``[o]``.
        """
        if self._alpha is None or values is None or len(values) != 2:
            return values
        alpha = ranking.resolve_alpha(self._alpha, [*_pairs(self._storage.fits()), (values[0], values[1])])
        return [ranking.weighted_score(values[0], values[1], alpha)]
