"""FairbandSampler: the paper's synchronous Fairband schedule inside an Optuna study.

One trial is one (configuration, budget) fit. Each trial claims one *slot* of the schedule
(:mod:`fairops.fairband.claims`): claims are made in trial-number order and take the lowest slot nobody
holds, so without failures trial ``k`` fits slot ``k``, and a slot whose worker died is taken again by
the next trial. Rung-0 slots draw a new configuration; a later-rung slot waits in ``before_trial``
until the previous rung of its bracket has finished, ranks it with the weighted score and proposes the
promoted configuration's parameters through ``sample_relative``. The schedule therefore does not
depend on how trials are spread over threads or processes, nor on workers that died on the way.

Trials the schedule cannot use (enqueued or retried trials, trials beyond ``iterations``, a waiting
trial that gives its slot up so a dead worker's slot can be redone first) are ended as PRUNED with the
reason logged: ``optuna.TrialPruned`` is raised from the trial's first ``suggest_*`` or
:func:`budget` call, which Optuna handles without stopping the worker whatever its ``catch``.
"""

from __future__ import annotations

import logging

import numpy as np
import optuna
from optuna.samplers import BaseSampler, RandomSampler
from optuna.trial import FrozenTrial, TrialState

from . import _optuna_internals as internals, schedule
from .assignments import Assignment, Assignments
from .budgets import budget
from .claims import HELD, REFUSED, RELEASED, SlotBoard, SlotClaims, claim_of, refusal, study_key
from .constraints import check_min_fairness, record_constraint
from .errors import FairbandConfigurationError, FairbandScheduleError, FairbandWaitTimeout
from .pruning_calls import name_the_way
from .settings import FairbandSettings, check_study, validated_configuration
from .starts import checked_starts, start_of, start_value
from .waiting import positive_seconds

__all__ = ["FairbandConfigurationError", "FairbandSampler", "FairbandScheduleError", "FairbandWaitTimeout", "budget",
           "configuration_seed"]

ATTR_KEYS = ("iteration", "bracket", "rung", "budget", "configuration_id", "alpha")

_logger = logging.getLogger(__name__)


def configuration_seed(seed: int, configuration: int) -> int:
    """Seed of one configuration's draws: a function of (seed, configuration id) only.

    >>> configuration_seed(0, 5) == configuration_seed(0, 5) != configuration_seed(1, 5)
    True
    """
    return int(np.random.SeedSequence([int(seed), int(configuration)]).generate_state(1)[0])


class FairbandSampler(BaseSampler):
    """Synchronous Fairband (Cruz et al., 2020/2021) as an Optuna sampler.

    Parameters
    ----------
    eta, s_max : Hyperband's reduction factor and largest bracket (paper: 3 and 4 -> 206 fits).
    alpha : ``"auto"`` (FB-auto, dynamic per rung), or a float in [0, 1]; 1 is Hyperband, 0.5 FB-bal.
    seed : seeds the rung-0 configurations; configuration ``c`` is drawn from ``(seed, c)`` only.
    base_sampler : optional Optuna sampler for rung-0 configurations (e.g. TPE for a BOHB-like variant);
        it sees only the trials of its own bracket. Default: random sampling as in the paper.
    mode : ``"sync"`` (default): one trial = one (configuration, budget) fit, the paper's exact schedule.
        ``"async"``: one trial = one configuration trained up the rungs of its bracket under
        :class:`~fairops.fairband.FairbandPruner` (ASHA-style); the sampler only draws configurations.
    wait_timeout : seconds a trial waits for other trials before raising :class:`FairbandWaitTimeout`.
        Storages without heartbeats cannot tell a slow fit from a dead one; with an RDB storage with
        ``heartbeat_interval``, dead workers' trials are failed while waiting and their slots redone.
    poll_interval : longest pause between two storage reads while waiting.
    configuration : a dict of JSON values describing everything else that defines the study (data and
        its hash, task, model families, ...). The study keeps the configuration of its first worker
        (with eta, s_max, alpha, mode and seed); a worker whose configuration differs is refused with
        :class:`FairbandConfigurationError` naming the first difference.
    iterations : schedule at most this many iterations; later trials are refused and the optimize
        loop stops (``None``: no limit, stop with ``n_trials`` or a callback).
    min_fairness : a fairness floor in [0, 1]. Every finished fit gets Optuna's ``constraints`` attribute
        ``(min_fairness - fairness,)``, as a ``constraints_func`` would give it, so ``study.best_trials``,
        ``plot_pareto_front``, optuna-dashboard and :func:`~fairops.fairband.select_best` treat fits below
        the floor as infeasible. Rung promotion still ranks by ``o``, as in the paper. Part of the
        study's configuration: every worker must use the same floor. Constraints of one's own count beside
        it, set either way: ``trial.set_constraint(name, value)`` in the objective (Optuna 5's API), or a
        base sampler's ``constraints_func``, whose values come first in the list, the floor after them.
    start_configurations : parameter values (one dict per configuration, e.g. a library's defaults) that
        the first configurations of bracket 0 of the first iteration take instead of random draws: bracket
        0 fits every configuration on the full budget, so the run always compares its draws with these.
        A parameter a dict leaves out is drawn as usual. At most ``s_max + 1`` of them (the size of bracket
        0); part of the study's configuration. Default: none, every configuration drawn, as in the paper.

    The study must have two maximized objectives, (accuracy, fairness).

    Pruning inside the objective: nothing to call. Each trial is one fit on ``budget(trial)`` of the training
    rows, and the schedule stops configurations between rungs, never a fit half-way. Optuna's
    ``trial.report`` / ``trial.should_prune`` do not support two objectives (Optuna raises before any pruner is
    asked); after ``budget(trial)`` they raise a ``NotImplementedError`` saying so and naming
    :class:`~fairops.fairband.RungProgress` (``mode="async"``), the way to stop a trial between its rungs
    (:mod:`fairops.fairband.pruning_calls`).

    >>> import optuna
    >>> from fairops.fairband import FairbandSampler, budget
    >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
    >>> study = optuna.create_study(directions=["maximize"] * 2, sampler=FairbandSampler(seed=0, iterations=1))
    >>> def objective(trial):
    ...     x = trial.suggest_float("x", 0, 1)
    ...     return x * budget(trial), 1 - x
    >>> study.optimize(objective)
    >>> sorted({t.user_attrs["rung"] for t in study.trials if t.state.name == "COMPLETE"})
    [0, 1, 2, 3, 4]
    """

    def __init__(self, eta: int = 3, s_max: int = 4, alpha: float | str = "auto", seed: int | None = None,
                 base_sampler: BaseSampler | None = None, wait_timeout: float = 3600.0,
                 poll_interval: float = 0.2, mode: str = "sync", *, configuration: dict | None = None,
                 iterations: int | None = None, min_fairness: float | None = None,
                 start_configurations=None) -> None:
        self._settings = FairbandSettings(eta, s_max, alpha, mode)
        self._starts = checked_starts(start_configurations, s_max)
        self._min_fairness = check_min_fairness(min_fairness)
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"seed must be an integer or None, got {type(seed).__name__}")
        self._seed = int(seed)
        if base_sampler is not None and not isinstance(base_sampler, BaseSampler):
            raise TypeError(f"base_sampler must be an optuna sampler, got {type(base_sampler).__name__}")
        self._base_sampler = base_sampler
        wait_timeout = positive_seconds(wait_timeout, "wait_timeout")
        poll_interval = positive_seconds(poll_interval, "poll_interval")
        schedule.check_iterations(iterations, allow_none=True)
        self._iterations = iterations
        study_configuration = {**validated_configuration(configuration), **self._settings.as_record(),
                               "seed": self._seed}
        if self._min_fairness is not None:  # absent when unset, so studies started before the option still match
            study_configuration["min_fairness"] = self._min_fairness
        if self._starts:  # absent when unset, as min_fairness
            study_configuration["start_configurations"] = [dict(start) for start in self._starts]
        self._claims = SlotClaims(self._settings, study_configuration, wait_timeout, poll_interval)
        self._assignments = Assignments()
        self._start_process_state()

    def _start_process_state(self) -> None:
        """What this process has checked (the claims and assignments keep their own)."""
        self._checked_studies: set[tuple] = set()

    def __getstate__(self) -> dict:
        """What ``pickle``, ``copy.deepcopy`` and ``joblib.dump(study)`` keep: the settings and the live trials'
        assignments. The locks and the caches of storage reads are started again on load.

        >>> import copy
        >>> copy.deepcopy(FairbandSampler(seed=0)).configuration == FairbandSampler(seed=0).configuration
        True
        """
        state = self.__dict__.copy()
        del state["_checked_studies"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._start_process_state()

    # -- public read-only settings -------------------------------------------------------------
    @property
    def fairband_settings(self) -> FairbandSettings:
        """(eta, s_max, alpha, mode): the record the pruner reads too."""
        return self._settings

    @property
    def alpha(self) -> float | str:
        return self._settings.alpha

    @property
    def mode(self) -> str:
        return self._settings.mode

    @property
    def eta(self) -> int:
        return self._settings.eta

    @property
    def s_max(self) -> int:
        return self._settings.s_max

    @property
    def iterations(self) -> int | None:
        return self._iterations

    @property
    def min_fairness(self) -> float | None:
        return self._min_fairness

    @property
    def configuration(self) -> dict:
        """Everything that defines a study run by this sampler (a copy)."""
        return dict(self._claims.configuration)

    def n_slots(self, iterations: int | None = None) -> int | None:
        """Slots in ``iterations`` iterations (default: this sampler's ``iterations``; None if unlimited)."""
        iterations = self._iterations if iterations is None else iterations
        return None if iterations is None else self._settings.n_slots(iterations)

    def slot(self, index: int) -> schedule.Slot:
        """Slot number ``index`` of the schedule under this sampler's eta, s_max and mode."""
        return self._settings.slot(index)

    def reseed_rng(self) -> None:
        # Configurations derive from (seed, configuration id); reseeding would break that promise.
        if self._base_sampler is not None:
            self._base_sampler.reseed_rng()

    def check_configuration(self, study: optuna.Study) -> None:
        """Raise :class:`FairbandConfigurationError` if ``study`` was started with another configuration.

        Call it before starting to work on a study to refuse a mismatched worker before it creates a
        trial; the sampler checks it again, race-free, when each trial claims its slot.
        """
        self._claims.check_configuration(study)

    def board(self, study: optuna.Study) -> SlotBoard:
        """The current state of every slot of ``study`` (fresh read)."""
        return self._claims.board(study)

    # -- Optuna hooks --------------------------------------------------------------------------
    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
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
        assignment = self._assignments.get(study, trial)
        if assignment is None or assignment.status != HELD or (assignment.slot.rung == 0 and assignment.params):
            return {}  # a start configuration's values come from sample_independent
        if assignment.slot.rung > 0:
            return dict(assignment.distributions)
        if self._base_sampler is not None:
            return self._base_sampler.infer_relative_search_space(self._view(study, assignment.slot), trial)
        return {}

    def sample_relative(self, study, trial, search_space):
        assignment = self._assignments.get(study, trial)
        if assignment is None or assignment.status != HELD or not search_space:
            return {}
        if assignment.slot.rung > 0:
            return {name: assignment.params[name] for name in search_space if name in assignment.params}
        if self._base_sampler is not None:
            return self._base_sampler.sample_relative(self._view(study, assignment.slot), trial, search_space)
        return {}

    def sample_independent(self, study, trial, param_name, param_distribution):
        assignment = self._assignments.held(study, trial)
        if assignment.slot.rung == 0 and param_name in assignment.params:
            return start_value(assignment.params[param_name], param_name, param_distribution)
        if assignment.own_sampler is not None:
            return assignment.own_sampler.sample_independent(study, trial, param_name, param_distribution)
        return self._base_sampler.sample_independent(
            self._view(study, assignment.slot), trial, param_name, param_distribution)

    def after_trial(self, study, trial, state, values) -> None:
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

    def abandon(self, trial) -> None:
        """Declare the fit of a live trial aborted (e.g. by Ctrl-C): however the trial ends, that is not
        its slot's result, so the slot is free again and a later trial redoes it."""
        self._assignments.release(trial, f"trial {trial.number}'s fit was aborted")

    # -- what a live trial was given -----------------------------------------------------------
    def slot_of_trial(self, trial) -> schedule.Slot | None:
        """The schedule slot a trial fits: from this process's assignment, else from its claim."""
        study = getattr(trial, "study", None)
        if study is not None:
            assignment = self._assignments.get(study, trial)
            if assignment is not None:
                assignment.asked = True  # RungProgress reads its budgets from the slot
                return assignment.slot
        claim = claim_of(trial) if isinstance(trial, FrozenTrial) else None
        return None if claim is None or claim.slot is None else self.slot(claim.slot)

    def budget_of(self, trial) -> float:
        """Budget of a live trial prepared by this sampler; raises ``optuna.TrialPruned`` if it has no slot."""
        assignment = self._assignments.get(trial.study, trial)
        if assignment is None:
            raise FairbandScheduleError(f"trial {trial.number} was not prepared by FairbandSampler.before_trial")
        if assignment.status != HELD:
            raise optuna.TrialPruned(assignment.reason)
        assignment.asked = True
        name_the_way(trial, self.mode)
        assert assignment.slot is not None  # a held assignment has its slot
        return assignment.slot.budget

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
