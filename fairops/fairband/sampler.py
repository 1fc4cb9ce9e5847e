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
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from . import _optuna_internals as internals, ranking, schedule
from .claims import CLAIM_ATTR, HELD, OUTCOME_ATTR, REFUSED, RELEASED, Claim, SlotBoard, claim_of, this_worker
from .constraints import check_min_fairness, record_constraint
from .pruning_calls import name_the_way
from .settings import (
    CONFIGURATION_ATTR_PREFIX,
    SETTINGS_ATTR,
    FairbandSettings,
    configuration_hash,
    first_difference,
    validated_configuration,
)

ATTR_KEYS = ("iteration", "bracket", "rung", "budget", "configuration_id", "alpha")
# A running trial that has written nothing yet is judged dead after this many heartbeat intervals
# (a live one writes its claim milliseconds after it is created).
SILENT_TRIAL_BEATS = 5

_logger = logging.getLogger(__name__)


class FairbandScheduleError(RuntimeError):
    """A trial does not fit the Fairband schedule (created outside it, or wrong study setup)."""


class FairbandConfigurationError(FairbandScheduleError, ValueError):
    """A worker's configuration differs from the one the study was started with."""


class FairbandWaitTimeout(RuntimeError):
    """A trial waited longer than ``wait_timeout`` for other trials (the previous rung, or earlier claims)."""


@dataclass
class _Assignment:
    status: str
    slot_index: int | None = None
    slot: schedule.Slot | None = None
    configuration: int | None = None
    params: dict[str, Any] = field(default_factory=dict)
    distributions: dict[str, BaseDistribution] = field(default_factory=dict)
    alpha: float | None = None
    own_sampler: BaseSampler | None = None
    reason: str | None = None
    asked: bool = False  # whether the objective asked for the fit's budget (budget(), or RungProgress's slot)


def _checked_starts(starts, s_max) -> tuple[dict, ...]:
    if starts is None:
        return ()
    starts = tuple(starts)
    if not all(isinstance(start, dict) and all(isinstance(k, str) for k in start) for start in starts):
        raise TypeError("start_configurations must be a list of dicts of parameter values")
    if isinstance(s_max, int) and len(starts) > s_max + 1:
        raise ValueError(f"start_configurations holds {len(starts)} configurations; bracket 0 has room for "
                         f"s_max + 1 = {s_max + 1}")
    validated_configuration({"starts": list(starts)})  # JSON values only
    return starts


def _start_value(value, name: str, distribution: BaseDistribution):
    if isinstance(distribution, CategoricalDistribution):
        inside = value in distribution.choices
    else:
        # Optuna's numeric distributions both have low and high, but no common base declares them
        inside = (isinstance(value, (int, float))
                  and distribution.low <= value <= distribution.high)  # type: ignore[attr-defined]
    if not inside:
        raise ValueError(f"start configuration value {name}={value!r} is outside its distribution {distribution}")
    return value


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
        self._starts = _checked_starts(start_configurations, s_max)
        self._min_fairness = check_min_fairness(min_fairness)
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise TypeError(f"seed must be an integer or None, got {type(seed).__name__}")
        self._seed = int(seed)
        if base_sampler is not None and not isinstance(base_sampler, BaseSampler):
            raise TypeError(f"base_sampler must be an optuna sampler, got {type(base_sampler).__name__}")
        self._base_sampler = base_sampler
        if not (isinstance(wait_timeout, (int, float)) and wait_timeout > 0):
            raise ValueError(f"wait_timeout must be a positive number of seconds, got {wait_timeout!r}")
        self._wait_timeout = float(wait_timeout)
        if not (isinstance(poll_interval, (int, float)) and poll_interval > 0):
            raise ValueError(f"poll_interval must be a positive number of seconds, got {poll_interval!r}")
        self._poll_interval = float(poll_interval)
        schedule.check_iterations(iterations, allow_none=True)
        self._iterations = iterations
        self._configuration = {**validated_configuration(configuration), **self._settings.as_record(),
                               "seed": self._seed}
        if self._min_fairness is not None:  # absent when unset, so studies started before the option still match
            self._configuration["min_fairness"] = self._min_fairness
        if self._starts:  # absent when unset, as min_fairness
            self._configuration["start_configurations"] = [dict(start) for start in self._starts]
        self._configuration_hash = configuration_hash(self._configuration)
        self._assignments: dict[tuple[str, int], _Assignment] = {}
        self._start_process_state()

    def _start_process_state(self) -> None:
        """The lock and the caches of storage reads, which belong to one process and one storage object."""
        self._lock = threading.Lock()
        self._claimed = threading.Condition(self._lock)  # notified whenever a trial of this process claims
        # keyed by id(storage): an id means nothing once the storage is copied, so these start empty again
        self._boards: dict[tuple, SlotBoard] = {}
        self._rankings: dict[tuple, tuple[float, list[FrozenTrial]]] = {}
        self._checked_studies: set[tuple] = set()
        self._recorded_studies: set[tuple] = set()
        self._budget_warned: set[str] = set()

    def __getstate__(self) -> dict:
        """What ``pickle``, ``copy.deepcopy`` and ``joblib.dump(study)`` keep: the settings and the live trials'
        assignments. The lock and the caches of storage reads are started again on load.

        >>> import copy
        >>> copy.deepcopy(FairbandSampler(seed=0)).configuration == FairbandSampler(seed=0).configuration
        True
        """
        state = self.__dict__.copy()
        for name in ("_lock", "_claimed", "_boards", "_rankings", "_checked_studies", "_recorded_studies",
                     "_budget_warned"):
            del state[name]
        with self._lock:
            state["_assignments"] = dict(self._assignments)
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
        return dict(self._configuration)

    def n_slots(self, iterations: int | None = None) -> int | None:
        """Slots in ``iterations`` iterations (default: this sampler's ``iterations``; None if unlimited)."""
        iterations = self._iterations if iterations is None else iterations
        if iterations is None:
            return None
        if self.mode == "async":
            return iterations * schedule.configurations_per_iteration(self.eta, self.s_max)
        return iterations * schedule.iteration_size(self.eta, self.s_max)

    def slot(self, index: int) -> schedule.Slot:
        """Slot number ``index`` of the schedule under this sampler's eta, s_max and mode."""
        if self.mode == "async":
            return schedule.async_slot_of(index, self.eta, self.s_max)
        return schedule.slot_of(index, self.eta, self.s_max)

    def reseed_rng(self) -> None:
        # Configurations derive from (seed, configuration id); reseeding would break that promise.
        if self._base_sampler is not None:
            self._base_sampler.reseed_rng()

    def check_configuration(self, study: optuna.Study) -> None:
        """Raise :class:`FairbandConfigurationError` if ``study`` was started with another configuration.

        Call it before starting to work on a study to refuse a mismatched worker before it creates a
        trial; the sampler checks it again, race-free, when each trial claims its slot.
        """
        board = SlotBoard(study.get_trials(deepcopy=False))
        self._compare_configuration(study, board)

    def board(self, study: optuna.Study) -> SlotBoard:
        """The current state of every slot of ``study`` (fresh read)."""
        with self._lock:
            return self._board(study).update(study.get_trials(deepcopy=False))

    # -- Optuna hooks --------------------------------------------------------------------------
    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        try:
            self._prepare(study, trial)
        except BaseException:
            # Our own failure (or Ctrl-C) before the fit: leave nothing held and nobody waiting on it.
            internals.fail_running_trial(study, trial.number)
            with self._lock:
                self._assignments.pop(self._key(study, trial), None)
            raise

    def _prepare(self, study: optuna.Study, trial: FrozenTrial) -> None:
        # Optuna's heartbeat thread starts only after ask() returns: beat from the start, so a worker
        # killed here leaves a trial that fail_stale_trials can fail.
        internals.beat(study, trial)
        self._check_study(study)
        refusal = self._refusal(trial)
        if refusal is not None:
            self._refuse(study, trial, refusal)
            return
        index = self._claim(study, trial)
        if index is None:
            return
        slot = self.slot(index)
        attrs = {"bracket": slot.bracket, "rung": slot.rung, "budget": slot.budget}
        if self.mode == "sync":
            attrs = {"iteration": slot.iteration, **attrs}
        claim: dict | None = Claim(trial.number, index, HELD, self._configuration_hash, worker=this_worker()).record()
        if slot.rung == 0:
            assignment = _Assignment(HELD, index, slot, slot.configuration, self._start_of(slot))
            self._finish_assignment(study, trial, assignment, attrs, claim)
            return
        ranked = self._ranking_if_ready(study, slot)  # the board is as fresh as the claim
        if ranked is None:  # publish the claim (later trials wait for it), then wait for the rung
            internals.write_trial_attrs(study, trial, system={CLAIM_ATTR: claim})
            self._notify_claimed()
            claim = None
            ranked = self._wait_for_rung(study, trial, index, slot)
            if ranked is None:  # gave the slot up: a slot it waits for must be redone first
                return
        alpha, promoted = ranked
        source = promoted[slot.position]
        assignment = _Assignment(HELD, index, slot, int(source.user_attrs["configuration_id"]),
                                 dict(source.params), dict(source.distributions), alpha)
        self._finish_assignment(study, trial, assignment, attrs, claim)

    def _finish_assignment(self, study, trial, assignment: _Assignment, attrs: dict, claim: dict | None = None):
        assert assignment.slot is not None and assignment.configuration is not None  # held: it has both
        if self._base_sampler is None or assignment.slot.rung > 0:
            assignment.own_sampler = RandomSampler(seed=configuration_seed(self._seed, assignment.configuration))
        attrs = {**attrs, "configuration_id": assignment.configuration}
        if assignment.alpha is not None:
            attrs["alpha"] = assignment.alpha
        elif not isinstance(self.alpha, str):
            attrs["alpha"] = self.alpha
        with self._lock:
            self._assignments[self._key(study, trial)] = assignment
        internals.write_trial_attrs(study, trial, user=attrs, system=None if claim is None else {CLAIM_ATTR: claim})
        if claim is not None:
            self._notify_claimed()
        if self._base_sampler is not None:
            self._base_sampler.before_trial(self._view(study, assignment.slot), trial)

    def _start_of(self, slot: schedule.Slot) -> dict[str, Any]:
        """The start configuration's values for a rung-0 slot of bracket 0 in the first iteration, else {}."""
        if slot.iteration == 0 and slot.bracket == 0 and slot.position < len(self._starts):
            return dict(self._starts[slot.position])
        return {}

    def infer_relative_search_space(self, study, trial):
        assignment = self._assignment(study, trial)
        if assignment is None or assignment.status != HELD or (assignment.slot.rung == 0 and assignment.params):
            return {}  # a start configuration's values come from sample_independent
        if assignment.slot.rung > 0:
            return dict(assignment.distributions)
        if self._base_sampler is not None:
            return self._base_sampler.infer_relative_search_space(self._view(study, assignment.slot), trial)
        return {}

    def sample_relative(self, study, trial, search_space):
        assignment = self._assignment(study, trial)
        if assignment is None or assignment.status != HELD or not search_space:
            return {}
        if assignment.slot.rung > 0:
            return {name: assignment.params[name] for name in search_space if name in assignment.params}
        if self._base_sampler is not None:
            return self._base_sampler.sample_relative(self._view(study, assignment.slot), trial, search_space)
        return {}

    def sample_independent(self, study, trial, param_name, param_distribution):
        assignment = self._held(study, trial)
        if assignment.slot.rung == 0 and param_name in assignment.params:
            return _start_value(assignment.params[param_name], param_name, param_distribution)
        if assignment.own_sampler is not None:
            return assignment.own_sampler.sample_independent(study, trial, param_name, param_distribution)
        return self._base_sampler.sample_independent(
            self._view(study, assignment.slot), trial, param_name, param_distribution)

    def after_trial(self, study, trial, state, values) -> None:
        with self._lock:
            assignment = self._assignments.pop(self._key(study, trial), None)
        slot = None if assignment is None else assignment.slot
        base_sees_it = self._base_sampler is not None and slot is not None
        # first, so the floor joins (not overwrites) what its constraints_func writes
        if self._base_sampler is not None and slot is not None:
            self._base_sampler.after_trial(self._view(study, slot), trial, state, values)
        record_constraint(study, trial, state, values, self._min_fairness, after_others=base_sees_it)
        if assignment is None:
            return
        if assignment.status == HELD and state == TrialState.COMPLETE and not assignment.asked:
            self._warn_budget_unasked(study, trial)
        if assignment.status == HELD and state != TrialState.COMPLETE:
            # The fit's own result (its objective failed or pruned it), not a dead worker: the slot is done.
            try:
                internals.write_trial_attrs(study, trial, system={OUTCOME_ATTR: state.name})
            except optuna.exceptions.UpdateFinishedTrialError:
                pass  # another worker failed it as stale meanwhile; its slot will be redone

    def _warn_budget_unasked(self, study, trial) -> None:
        """Warn, once per study and process, that a fit ran without asking its budget: the schedule's budgets
        then change nothing (every fit sees all rows) while its promotions still rank them."""
        with self._lock:
            if study.study_name in self._budget_warned:
                return
            self._budget_warned.add(study.study_name)
        how = "budget(trial)" if self.mode == "sync" else "RungProgress(trial)"
        warnings.warn(f"trial {trial.number} finished without asking {how}, so its fit did not use the share of "
                      "the training rows the schedule gave it; an objective that trains on all rows makes every "
                      "rung's budget the same (warned once per study)", UserWarning, stacklevel=2)

    def abandon(self, trial) -> None:
        """Declare the fit of a live trial aborted (e.g. by Ctrl-C): however the trial ends, that is not
        its slot's result, so the slot is free again and a later trial redoes it."""
        with self._lock:
            assignment = self._assignments.get(self._key(trial.study, trial))
            if assignment is not None and assignment.status == HELD:
                assignment.status, assignment.reason = RELEASED, f"trial {trial.number}'s fit was aborted"

    # -- what a live trial was given -----------------------------------------------------------
    def slot_of_trial(self, trial) -> schedule.Slot | None:
        """The schedule slot a trial fits: from this process's assignment, else from its claim."""
        study = getattr(trial, "study", None)
        if study is not None:
            assignment = self._assignment(study, trial)
            if assignment is not None:
                assignment.asked = True  # RungProgress reads its budgets from the slot
                return assignment.slot
        claim = claim_of(trial) if isinstance(trial, FrozenTrial) else None
        return None if claim is None or claim.slot is None else self.slot(claim.slot)

    def budget_of(self, trial) -> float:
        """Budget of a live trial prepared by this sampler; raises ``optuna.TrialPruned`` if it has no slot."""
        assignment = self._assignment(trial.study, trial)
        if assignment is None:
            raise FairbandScheduleError(f"trial {trial.number} was not prepared by FairbandSampler.before_trial")
        if assignment.status != HELD:
            raise optuna.TrialPruned(assignment.reason)
        assignment.asked = True
        name_the_way(trial, self.mode)
        assert assignment.slot is not None  # a held assignment has its slot
        return assignment.slot.budget

    # -- internals -----------------------------------------------------------------------------
    @staticmethod
    def _key(study, trial) -> tuple[str, int]:
        return study.study_name, trial.number

    def _assignment(self, study, trial) -> _Assignment | None:
        with self._lock:
            return self._assignments.get(self._key(study, trial))

    def _held(self, study, trial) -> _Assignment:
        assignment = self._assignment(study, trial)
        if assignment is None:
            raise FairbandScheduleError(
                f"trial {trial.number} was not prepared by FairbandSampler.before_trial; create trials "
                "with study.optimize or study.ask")
        if assignment.status != HELD:
            raise optuna.TrialPruned(assignment.reason)
        return assignment

    def _board(self, study) -> SlotBoard:
        key = (id(internals.storage_of(study)), study.study_name)
        if key not in self._boards:
            self._boards[key] = SlotBoard()
        return self._boards[key]

    def _notify_claimed(self) -> None:
        with self._claimed:
            self._claimed.notify_all()

    def _bracket_of(self, trial: FrozenTrial) -> int | None:
        if "bracket" in trial.user_attrs:
            return trial.user_attrs["bracket"]
        claim = claim_of(trial)
        return None if claim is None or claim.slot is None else self.slot(claim.slot).bracket

    def _view(self, study, slot: schedule.Slot):
        bracket = slot.bracket
        return internals.BracketView(study, lambda t: self._bracket_of(t) == bracket)

    def _check_study(self, study: optuna.Study) -> None:
        key = (id(internals.storage_of(study)), study.study_name)
        if key in self._checked_studies:
            return
        directions = study.directions
        if len(directions) != 2 or any(d != StudyDirection.MAXIMIZE for d in directions):
            raise FairbandScheduleError(
                "FairbandSampler needs a study with directions=['maximize', 'maximize'] returning "
                f"(accuracy, fairness); got {[d.name.lower() for d in directions]}")
        check_pruner = getattr(study.pruner, "fairband_settings_for", None)
        if callable(check_pruner):
            try:
                check_pruner(study)
            except ValueError as err:
                raise FairbandScheduleError(str(err)) from None
        self._checked_studies.add(key)

    @staticmethod
    def _refusal(trial: FrozenTrial) -> str | None:
        system_attrs = trial.system_attrs
        if "fixed_params" in system_attrs:
            how = "study.enqueue_trial"
        elif "failed_trial" in system_attrs:
            how = "a retry callback"
        else:
            return None
        return (f"trial {trial.number} was created by {how}; the Fairband schedule assigns every configuration "
                "and budget itself (a failed slot is redone by the sampler), so the trial is refused")

    def _refuse(self, study, trial, reason: str, status: str = REFUSED, slot_index: int | None = None,
                level: int = logging.WARNING) -> None:
        _logger.log(level, "%s", reason)
        with self._lock:
            self._assignments[self._key(study, trial)] = _Assignment(status, reason=reason)
        internals.write_trial_attrs(study, trial, system={CLAIM_ATTR: Claim(
            trial.number, slot_index, status, None if status == REFUSED else self._configuration_hash,
            reason, this_worker()).record()})
        self._notify_claimed()

    # -- claiming a slot -------------------------------------------------------------------------
    def _claim(self, study: optuna.Study, trial: FrozenTrial) -> int | None:
        """Wait until every lower-numbered running trial has claimed, then take the lowest free slot."""
        number = trial.number
        waiter = _Waiter(self, study, trial, what="earlier trials to claim their slots")
        while True:
            trials = study.get_trials(deepcopy=False)
            with self._lock:
                board = self._board(study).update(trials)
                earlier = [n for n in board.unclaimed if n < number]
                index = None if earlier else board.lowest_free()
            if index is not None:
                break
            waiter.wait_for_claims(earlier)
        self._compare_configuration(study, board)
        self._record_study(study)
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

    def _compare_configuration(self, study, board: SlotBoard) -> None:
        first = board.first_configuration
        if first is None or first[1] == self._configuration_hash:
            return
        stored = internals.study_records(study).get(CONFIGURATION_ATTR_PREFIX + first[1])
        difference = (first_difference(stored, self._configuration) if isinstance(stored, dict)
                      else f"configuration {first[1]} in the study, {self._configuration_hash} here")
        raise FairbandConfigurationError(
            f"study {study.study_name!r} was started with another configuration ({difference}); "
            "use the study's settings or another study name")

    def _record_study(self, study) -> None:
        key = (id(internals.storage_of(study)), study.study_name)
        if key in self._recorded_studies:
            return
        records = internals.study_records(study)
        name = CONFIGURATION_ATTR_PREFIX + self._configuration_hash
        if name not in records:
            internals.write_study_record(study, name, self._configuration)
        if SETTINGS_ATTR not in records:
            internals.write_study_record(study, SETTINGS_ATTR, self._settings.as_record())
        self._recorded_studies.add(key)

    # -- the rung barrier ----------------------------------------------------------------------
    def _previous_slots(self, slot: schedule.Slot) -> range:
        return schedule.trial_numbers_of_rung(slot.iteration, slot.bracket, slot.rung - 1, self.eta, self.s_max)

    def _ranking_if_ready(self, study, slot: schedule.Slot):
        """(alpha, promoted fits) when the previous rung is finished (per the last read), else None."""
        key = (id(internals.storage_of(study)), study.study_name, slot.iteration, slot.bracket, slot.rung - 1)
        with self._lock:
            cached = self._rankings.get(key)
            if cached is not None:
                return cached
            board = self._board(study)
            slots = self._previous_slots(slot)
            if not all(s in board.done for s in slots):
                return None
            previous = [board.done[s] for s in slots]
        entries = []
        for t in previous:
            values = t.values if t.state == TrialState.COMPLETE and t.values is not None else (None, None)
            entries.append((int(t.user_attrs["configuration_id"]), values[0], values[1]))
        by_configuration = {configuration: t for (configuration, _, _), t in zip(entries, previous)}
        alpha = ranking.resolve_alpha(self.alpha, [(a, f) for _, a, f in entries])
        k = schedule.rung_sizes(slot.bracket, self.eta, self.s_max)[slot.rung]
        result = (alpha, [by_configuration[c] for c in ranking.top_k(entries, k, alpha)])
        with self._lock:
            self._rankings[key] = result
        return result

    def _wait_for_rung(self, study, trial, index: int, slot: schedule.Slot):
        """(alpha, promoted fits) once the previous rung is finished, or None after giving the slot up."""
        slots = self._previous_slots(slot)
        waiter = _Waiter(self, study, trial, what=f"the previous rung (slots {slots.start}-{slots.stop - 1})")
        while True:
            trials = study.get_trials(deepcopy=False)
            with self._lock:
                board = self._board(study).update(trials)
            ready = self._ranking_if_ready(study, slot)
            if ready is not None:
                return ready
            free = [s for s in slots if board.is_free(s)]
            if free:
                self._refuse(study, trial, (
                    f"trial {trial.number} gives up slot {index} (bracket {slot.bracket}, rung {slot.rung}): "
                    f"slot {free[0]} it waits for is free again (its worker died), and a new trial redoes it first"),
                    status=RELEASED, slot_index=index)
                return None
            waiter.wait_for_fits([board.running[s].number for s in slots if s in board.running])


class _Waiter:
    """Pauses between storage reads while a trial waits; keeps its heartbeat and fails dead trials."""

    def __init__(self, sampler: FairbandSampler, study, trial, what: str) -> None:
        self.sampler, self.study, self.trial, self.what = sampler, study, trial, what
        self.start = self.last_beat = self.last_check = time.monotonic()
        self.pause = 0.0005
        self.interval = internals.heartbeat_interval(study)
        self.silent_since: tuple[int, float] | None = None

    def _tick(self, waiting_for: list[int]) -> None:
        now = time.monotonic()
        waited = now - self.start
        if waited > self.sampler._wait_timeout:
            raise FairbandWaitTimeout(
                f"trial {self.trial.number} waited {waited:.0f} s > wait_timeout="
                f"{self.sampler._wait_timeout:g} s for {self.what} (trials {waiting_for[:10]}); a worker "
                "probably died. Use an RDB storage with heartbeat_interval so dead workers' trials are "
                "failed and redone, or raise wait_timeout for long fits")
        if self.interval is not None:
            if now - self.last_beat >= self.interval:
                internals.beat(self.study, self.trial)
                self.last_beat = now
            if now - self.last_check >= min(self.interval, 1.0):
                internals.fail_stale_trials(self.study)
                self.last_check = now

    def wait_for_claims(self, earlier: list[int]) -> None:
        self._tick(earlier)
        lowest = earlier[0]
        now = time.monotonic()
        if self.silent_since is None or self.silent_since[0] != lowest:
            self.silent_since = (lowest, now)
        elif self.interval is not None and now - self.silent_since[1] > SILENT_TRIAL_BEATS * self.interval:
            # It has not claimed though nothing before it is pending: its worker died before its first write.
            if internals.fail_running_trial(self.study, lowest):
                _logger.warning("trial %d never claimed a slot within %.0f s; failed as dead", lowest,
                                now - self.silent_since[1])
            self.silent_since = None
        self._sleep(0.05)

    def wait_for_fits(self, running: list[int]) -> None:
        self._tick(running)
        self._sleep(self.sampler._poll_interval)

    def _sleep(self, longest: float) -> None:
        with self.sampler._claimed:
            self.sampler._claimed.wait(timeout=self.pause)
        self.pause = min(self.pause * 2, longest)


def budget(trial) -> float:
    """Share of the training set this trial's fit gets (1/81 ... 1 with the paper's settings).

    Works on a live :class:`optuna.trial.Trial` (after the sampler prepared it) and on a
    :class:`~optuna.trial.FrozenTrial` (from its ``budget`` user attribute). A live trial the schedule
    refused raises ``optuna.TrialPruned`` (see the module docstring).

    >>> import optuna
    >>> study = optuna.create_study(directions=["maximize"] * 2, sampler=FairbandSampler(seed=0))
    >>> trial = study.ask()
    >>> round(budget(trial), 4)
    0.0123
    """
    study = getattr(trial, "study", None)
    sampler = getattr(study, "sampler", None)
    if isinstance(sampler, FairbandSampler) and isinstance(trial, optuna.Trial):
        return sampler.budget_of(trial)
    attrs = trial.user_attrs
    if "budget" not in attrs and isinstance(trial, optuna.Trial):
        # another sampler wrote it through the storage after the live trial cached its attributes
        attrs = internals.storage_of(study).get_trial(internals.trial_id_of(study, trial)).user_attrs
    if "budget" in attrs:
        return float(attrs["budget"])
    raise ValueError(f"trial {trial.number} has no Fairband budget; use FairbandSampler as the study's sampler")
