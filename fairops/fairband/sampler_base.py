"""The schedule side of :class:`~fairops.fairband.FairbandSampler`: its settings, what a live trial was given,
and how a trial claims its slot and gets its configuration (:mod:`fairops.fairband._sampler` describes the schedule).

:class:`SlotSamplerBase` is FairbandSampler's base class; FairbandSampler keeps the constructor, which sets the
state read here, and Optuna's hooks, which call :meth:`SlotSamplerBase._prepare` and the slot queries.
"""

from __future__ import annotations

import logging

import numpy as np
import optuna
from optuna.samplers import BaseSampler, RandomSampler
from optuna.trial import FrozenTrial

from . import _optuna_internals as internals, _schedule as schedule
from ._claims import HELD, REFUSED, RELEASED, SlotBoard, SlotClaims, claim_of, refusal, study_key
from ._errors import FairbandScheduleError
from ._settings import FairbandSettings, check_study
from .assignments import Assignment, Assignments
from .base_sampler_view import BaseSamplerView
from .starts import start_of

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


class SlotSamplerBase(BaseSampler):
    """The settings, slot queries and slot claiming of :class:`~fairops.fairband.FairbandSampler`, its base class."""

    # set by FairbandSampler.__init__
    _settings: FairbandSettings
    _claims: SlotClaims
    _assignments: Assignments
    _base_sampler: BaseSampler | None
    _base_alpha: float | str | None  # None: the base sampler sees both objectives; else the score's alpha
    _seed: int
    _starts: tuple[dict, ...]
    _min_fairness: float | None
    _iterations: int | None
    _checked_studies: set[tuple]

    # -- public read-only settings -------------------------------------------------------------
    @property
    def fairband_settings(self) -> FairbandSettings:
        """(eta, s_max, alpha, mode): the record the pruner reads too."""
        return self._settings

    @property
    def alpha(self) -> float | str:
        """The alpha setting: a float in [0, 1] or ``"auto"``."""
        return self._settings.alpha

    @property
    def mode(self) -> str:
        """``"sync"`` or ``"async"``."""
        return self._settings.mode

    @property
    def eta(self) -> int:
        """Hyperband's reduction factor."""
        return self._settings.eta

    @property
    def s_max(self) -> int:
        """The largest bracket."""
        return self._settings.s_max

    @property
    def iterations(self) -> int | None:
        """The most iterations scheduled (None: no limit)."""
        return self._iterations

    @property
    def min_fairness(self) -> float | None:
        """The fairness floor, or None."""
        return self._min_fairness

    @property
    def configuration(self) -> dict:
        """Everything that defines a study run by this sampler (a copy)."""
        return dict(self._claims.configuration)

    def n_slots(self, iterations: int | None = None) -> int | None:
        """Slots in ``iterations`` iterations (default: this sampler's ``iterations``; None if unlimited).

        Parameters
        ----------
        iterations : int or None, default=None
            Number of iterations; None for this sampler's.

        Returns
        -------
        int or None
            Number of slots, None without a limit.
        """
        iterations = self._iterations if iterations is None else iterations
        return None if iterations is None else self._settings.n_slots(iterations)

    def slot(self, index: int) -> schedule.Slot:
        """Slot number ``index`` of the schedule under this sampler's eta, s_max and mode.

        Parameters
        ----------
        index : int
            The slot's number, from 0.

        Returns
        -------
        Slot
            Where it sits in the schedule.
        """
        return self._settings.slot(index)

    def check_configuration(self, study: optuna.Study) -> None:
        """Raise :class:`FairbandConfigurationError` if ``study`` was started with another configuration.

        Call it before starting to work on a study to refuse a mismatched worker before it creates a
        trial; the sampler checks it again, race-free, when each trial claims its slot.

        Parameters
        ----------
        study : optuna.Study
            The study to work on.
        """
        self._claims.check_configuration(study)

    def board(self, study: optuna.Study) -> SlotBoard:
        """The current state of every slot of ``study`` (fresh read).

        Parameters
        ----------
        study : optuna.Study
            The study.

        Returns
        -------
        SlotBoard
            Which trial holds or finished each slot.
        """
        return self._claims.board(study)

    def abandon(self, trial) -> None:
        """Declare the fit of a live trial aborted (e.g. by Ctrl-C).

        However the trial ends, that is not its slot's result, so the slot is free again and a later trial
        redoes it.

        Parameters
        ----------
        trial : optuna.Trial
            The live trial.
        """
        self._assignments.release(trial, f"trial {trial.number}'s fit was aborted")

    # -- what a live trial was given -----------------------------------------------------------
    def slot_of_trial(self, trial) -> schedule.Slot | None:
        """The schedule slot a trial fits: from this process's assignment, else from its claim.

        Parameters
        ----------
        trial : optuna.Trial or optuna.trial.FrozenTrial
            The trial.

        Returns
        -------
        Slot or None
            The slot, None if it holds none.
        """
        study = getattr(trial, "study", None)
        if study is not None:
            assignment = self._assignments.get(study, trial)
            if assignment is not None:
                assignment.asked = True  # RungProgress reads its budgets from the slot
                return assignment.slot
        claim = claim_of(trial) if isinstance(trial, FrozenTrial) else None
        return None if claim is None or claim.slot is None else self.slot(claim.slot)

    def budget_of(self, trial) -> float:
        """Budget of a live trial prepared by this sampler; raises ``optuna.TrialPruned`` if it has no slot.

        Parameters
        ----------
        trial : optuna.Trial
            The live trial.

        Returns
        -------
        float
            Its share of the training rows.
        """
        assignment = self._assignments.get(trial.study, trial)
        if assignment is None:
            raise FairbandScheduleError(f"trial {trial.number} was not prepared by FairbandSampler.before_trial")
        if assignment.status != HELD:
            raise optuna.TrialPruned(assignment.reason)
        assignment.asked = True
        assert assignment.slot is not None  # a held assignment has its slot
        return assignment.slot.budget

    # -- claiming a slot and giving it a configuration ----------------------------------------
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
            view = self._base_view(study, trial, assignment)
            self._base_sampler.before_trial(view.study, view.trial(trial))

    # -- internals -----------------------------------------------------------------------------
    def _base_view(self, study, trial: FrozenTrial, assignment: Assignment) -> BaseSamplerView:
        """The base sampler's view of ``study`` for ``trial``'s hooks up to its sampling (made once per trial)."""
        if assignment.base_view is None:
            assert self._base_sampler is not None
            assignment.base_view = BaseSamplerView(study, trial, self._base_sampler, self._base_alpha,
                                                   assignment.base_number)
            assignment.base_number = assignment.base_view.number
        return assignment.base_view

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
