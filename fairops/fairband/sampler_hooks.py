"""The Optuna hooks of :class:`~fairops.fairband.FairbandSampler`: claiming a slot, proposing its configuration
and recording how the trial ended (:mod:`fairops.fairband.sampler` describes the schedule they follow).

:class:`SamplerHooks` is FairbandSampler's base class; FairbandSampler's constructor sets the state they read.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np
import optuna
from optuna.samplers import BaseSampler, RandomSampler
from optuna.trial import FrozenTrial, TrialState

from . import _optuna_internals as internals, schedule
from .assignments import Assignment, Assignments
from .claims import HELD, REFUSED, RELEASED, SlotClaims, claim_of, refusal, study_key
from .constraints import record_constraint
from .settings import FairbandSettings, check_study
from .starts import start_of, start_value

_logger = logging.getLogger("fairops.fairband.sampler")  # the sampler's log, where this was always written


def configuration_seed(seed: int, configuration: int) -> int:
    """Seed of one configuration's draws: a function of (seed, configuration id) only.

    Parameters
    ----------
    seed : int
        The sampler's seed.
    configuration : int
        The configuration id.

    Returns
    -------
    int
        A seed for the configuration's own random sampler.

    Examples
    --------
    >>> configuration_seed(0, 5) == configuration_seed(0, 5) != configuration_seed(1, 5)
    True
    """
    return int(np.random.SeedSequence([int(seed), int(configuration)]).generate_state(1)[0])


class SamplerHooks(BaseSampler):
    """Optuna's sampler hooks on the Fairband schedule, the base of :class:`~fairops.fairband.FairbandSampler`."""

    # set by FairbandSampler.__init__
    _settings: FairbandSettings
    _claims: SlotClaims
    _assignments: Assignments
    _base_sampler: BaseSampler | None
    _seed: int
    _starts: tuple[dict, ...]
    _min_fairness: float | None
    _iterations: int | None
    _checked_studies: set[tuple]

    if TYPE_CHECKING:  # FairbandSampler's
        @property
        def alpha(self) -> float | str: ...

        @property
        def mode(self) -> str: ...

        def n_slots(self, iterations: int | None = None) -> int | None: ...

        def slot(self, index: int) -> schedule.Slot: ...

    # -- Optuna hooks --------------------------------------------------------------------------
    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        """Claim the trial's slot and give it a configuration: a new one at rung 0, else the promoted one.

        A later-rung slot waits until the previous rung of its bracket has finished. A trial the
        schedule cannot use is refused (ended as PRUNED at its first ``suggest_*`` or ``budget``). On
        a failure here the trial is failed and holds nothing.

        Parameters
        ----------
        study : optuna.Study
            The study.
        trial : optuna.trial.FrozenTrial
            The trial starting.
        """
        try:
            self._prepare(study, trial)
        except BaseException:
            # Our own failure (or Ctrl-C) before the fit: leave nothing held and nobody waiting on it.
            internals.fail_running_trial(study, trial.number)
            self._assignments.pop(study, trial)
            raise

    def _prepare(self, study: optuna.Study, trial: FrozenTrial) -> None:
        # Optuna's heartbeat thread starts only after ask() returns: beat from the start, so a worker
        # killed here leaves a trial that fail_stale_trials can fail.
        internals.beat(study, trial)
        self._check_study(study)
        reason = refusal(trial)
        if reason is not None:
            self._refuse(study, trial, reason)
            return
        index = self._claim(study, trial)
        if index is None:
            return
        slot = self.slot(index)
        attrs = {"bracket": slot.bracket, "rung": slot.rung, "budget": slot.budget}
        if self.mode == "sync":
            attrs = {"iteration": slot.iteration, **attrs}
        claim: dict | None = self._claims.claim(trial, index)
        if slot.rung == 0:
            assignment = Assignment(HELD, index, slot, slot.configuration, start_of(self._starts, slot))
            self._finish_assignment(study, trial, assignment, attrs, claim)
            return
        ranked = self._claims.ranking(study, slot)  # the board is as fresh as the claim
        if ranked is None:  # publish the claim (later trials wait for it), then wait for the rung
            self._claims.publish(study, trial, claim)
            claim = None
            ranked, free = self._claims.wait_for_rung(study, trial, slot)
            if ranked is None:  # give the slot up: a slot it waits for must be redone first
                self._refuse(study, trial, (
                    f"trial {trial.number} gives up slot {index} (bracket {slot.bracket}, rung {slot.rung}): "
                    f"slot {free} it waits for is free again (its worker died), and a new trial redoes it first"),
                    status=RELEASED, slot_index=index)
                return
        alpha, promoted = ranked
        source = promoted[slot.position]
        assignment = Assignment(HELD, index, slot, int(source.user_attrs["configuration_id"]),
                                dict(source.params), dict(source.distributions), alpha)
        self._finish_assignment(study, trial, assignment, attrs, claim)

    def _finish_assignment(self, study, trial, assignment: Assignment, attrs: dict, claim: dict | None = None):
        assert assignment.slot is not None and assignment.configuration is not None  # held: it has both
        if self._base_sampler is None or assignment.slot.rung > 0:
            assignment.own_sampler = RandomSampler(seed=configuration_seed(self._seed, assignment.configuration))
        attrs = {**attrs, "configuration_id": assignment.configuration}
        if assignment.alpha is not None:
            attrs["alpha"] = assignment.alpha
        elif not isinstance(self.alpha, str):
            attrs["alpha"] = self.alpha
        self._assignments.put(study, trial, assignment)
        self._claims.publish(study, trial, claim, user=attrs)
        if self._base_sampler is not None:
            self._base_sampler.before_trial(self._view(study, assignment.slot), trial)

    def infer_relative_search_space(self, study, trial):
        """The promoted configuration's distributions at a later rung; the base sampler's at rung 0.

        Parameters
        ----------
        study : optuna.Study
            The study.
        trial : optuna.trial.FrozenTrial
            The trial.

        Returns
        -------
        dict
            Parameter name -> distribution; empty when the values come from :meth:`sample_independent`.
        """
        assignment = self._assignments.get(study, trial)
        if assignment is None or assignment.status != HELD or (assignment.slot.rung == 0 and assignment.params):
            return {}  # a start configuration's values come from sample_independent
        if assignment.slot.rung > 0:
            return dict(assignment.distributions)
        if self._base_sampler is not None:
            return self._base_sampler.infer_relative_search_space(self._view(study, assignment.slot), trial)
        return {}

    def sample_relative(self, study, trial, search_space):
        """The promoted configuration's values at a later rung; the base sampler's draws at rung 0.

        Parameters
        ----------
        study : optuna.Study
            The study.
        trial : optuna.trial.FrozenTrial
            The trial.
        search_space : dict
            What :meth:`infer_relative_search_space` returned.

        Returns
        -------
        dict
            Parameter name -> value.
        """
        assignment = self._assignments.get(study, trial)
        if assignment is None or assignment.status != HELD or not search_space:
            return {}
        if assignment.slot.rung > 0:
            return {name: assignment.params[name] for name in search_space if name in assignment.params}
        if self._base_sampler is not None:
            return self._base_sampler.sample_relative(self._view(study, assignment.slot), trial, search_space)
        return {}

    def sample_independent(self, study, trial, param_name, param_distribution):
        """A start configuration's value, else a draw from ``(seed, configuration)`` or the base sampler.

        Parameters
        ----------
        study : optuna.Study
            The study.
        trial : optuna.trial.FrozenTrial
            The trial; one the schedule refused raises ``optuna.TrialPruned``.
        param_name : str
            The parameter.
        param_distribution : optuna.distributions.BaseDistribution
            Its distribution.

        Returns
        -------
        object
            The parameter's value.
        """
        assignment = self._assignments.held(study, trial)
        if assignment.slot.rung == 0 and param_name in assignment.params:
            return start_value(assignment.params[param_name], param_name, param_distribution)
        if assignment.own_sampler is not None:
            return assignment.own_sampler.sample_independent(study, trial, param_name, param_distribution)
        return self._base_sampler.sample_independent(
            self._view(study, assignment.slot), trial, param_name, param_distribution)

    def after_trial(self, study, trial, state, values) -> None:
        """Record a finished trial: the fairness floor's constraint, and a slot its own worker ended.

        Parameters
        ----------
        study : optuna.Study
            The study.
        trial : optuna.trial.FrozenTrial
            The trial.
        state : optuna.trial.TrialState
            How it ended.
        values : sequence of float or None
            Its (accuracy, fairness), if any.
        """
        assignment = self._assignments.pop(study, trial)
        slot = None if assignment is None else assignment.slot
        base_sees_it = self._base_sampler is not None and slot is not None
        # first, so the floor joins (not overwrites) what its constraints_func writes
        if self._base_sampler is not None and slot is not None:
            self._base_sampler.after_trial(self._view(study, slot), trial, state, values)
        record_constraint(study, trial, state, values, self._min_fairness, after_others=base_sees_it)
        if assignment is None:
            return
        if assignment.status == HELD and state == TrialState.COMPLETE and not assignment.asked:
            self._assignments.warn_budget_unasked(study, trial, "budget(trial)" if self.mode == "sync"
                                                  else "RungProgress(trial)")
        if assignment.status == HELD and state != TrialState.COMPLETE:
            self._claims.record_outcome(study, trial, state)

    # -- internals -----------------------------------------------------------------------------
    def _bracket_of(self, trial: FrozenTrial) -> int | None:
        if "bracket" in trial.user_attrs:
            return trial.user_attrs["bracket"]
        claim = claim_of(trial)
        return None if claim is None or claim.slot is None else self.slot(claim.slot).bracket

    def _view(self, study, slot: schedule.Slot):
        bracket = slot.bracket
        return internals.BracketView(study, lambda t: self._bracket_of(t) == bracket)

    def _check_study(self, study: optuna.Study) -> None:
        key = study_key(study)
        if key not in self._checked_studies:
            check_study(study)
            self._checked_studies.add(key)

    def _refuse(self, study, trial, reason: str, status: str = REFUSED, slot_index: int | None = None,
                level: int = logging.WARNING) -> None:
        _logger.log(level, "%s", reason)
        self._assignments.put(study, trial, Assignment(status, reason=reason))
        self._claims.publish(study, trial, self._claims.claim(trial, slot_index, status, reason))

    # -- claiming a slot -------------------------------------------------------------------------
    def _claim(self, study: optuna.Study, trial: FrozenTrial) -> int | None:
        """The slot the trial takes (see :meth:`SlotClaims.take`), or None when the iterations are all taken."""
        index = self._claims.take(study, trial)
        limit = self.n_slots()
        if limit is not None and index >= limit:
            # the expected end of an optimize without n_trials, not news
            self._refuse(study, trial, f"trial {trial.number}: every slot of the {self._iterations} "
                                       "iteration(s) is taken; nothing left to fit", level=logging.INFO)
            try:
                study.stop()
            except RuntimeError:  # not inside study.optimize (ask/tell)
                pass
            return None
        return index
