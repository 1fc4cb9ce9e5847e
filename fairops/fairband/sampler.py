"""FairbandSampler: the paper's synchronous Fairband schedule inside an Optuna study.

One trial is one (configuration, budget) fit. The slot of a trial is a pure function of its number
(:func:`fairops.fairband.schedule.slot_of`). Rung-0 slots draw a new configuration; a later-rung slot
waits in ``before_trial`` until the previous rung of its bracket (lower-numbered trials) has finished,
ranks it with the weighted score and proposes the promoted configuration's parameters through
``sample_relative``. The schedule therefore does not depend on how trials are spread over threads or
processes.
"""

from __future__ import annotations

import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.storages._heartbeat import is_heartbeat_enabled
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from . import ranking, schedule
from ._storage_view import BracketView, mark_failed, set_user_attrs, trials_by_number

STUDY_ATTR = "fairband:settings"
ATTR_KEYS = ("iteration", "bracket", "rung", "budget", "configuration_id", "alpha")


class FairbandScheduleError(RuntimeError):
    """A trial does not fit the Fairband schedule (created outside it, or wrong study setup)."""


class FairbandWaitTimeout(RuntimeError):
    """A later-rung trial waited longer than ``wait_timeout`` for the previous rung to finish."""


@dataclass
class _Assignment:
    slot: schedule.Slot
    configuration: int
    params: dict[str, Any] = field(default_factory=dict)
    distributions: dict[str, BaseDistribution] = field(default_factory=dict)
    alpha: float | None = None
    own_sampler: BaseSampler | None = None


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
    wait_timeout : seconds a later-rung trial waits for the previous rung before raising
        :class:`FairbandWaitTimeout` (storages without heartbeat cannot tell a slow fit from a dead one).
        With an RDB storage with heartbeats, stale trials are failed while waiting and rank last.
    poll_interval : longest pause between two storage reads while waiting.

    The study must have two maximized objectives, (accuracy, fairness).

    >>> import optuna
    >>> from fairops.fairband import FairbandSampler, budget
    >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
    >>> study = optuna.create_study(directions=["maximize"] * 2, sampler=FairbandSampler(seed=0))
    >>> def objective(trial):
    ...     x = trial.suggest_float("x", 0, 1)
    ...     return x * budget(trial), 1 - x
    >>> study.optimize(objective, n_trials=206)
    >>> sorted({t.user_attrs["rung"] for t in study.trials})
    [0, 1, 2, 3, 4]
    """

    def __init__(self, eta: int = 3, s_max: int = 4, alpha: float | str = "auto", seed: int | None = None,
                 base_sampler: BaseSampler | None = None, wait_timeout: float = 3600.0,
                 poll_interval: float = 0.2, mode: str = "sync") -> None:
        schedule.iteration_size(eta, s_max)  # validates eta and s_max
        if mode not in ("sync", "async"):
            raise ValueError(f"mode must be 'sync' or 'async', got {mode!r}")
        self._mode = mode
        self._eta = eta
        self._s_max = s_max
        self._alpha = ranking.check_alpha(alpha)
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
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
        self._lock = threading.Lock()
        self._assignments: dict[int, _Assignment] = {}
        self._rankings: dict[tuple, tuple[float, list[FrozenTrial]]] = {}
        self._checked_studies: set[tuple[int, int]] = set()

    # -- public read-only settings -------------------------------------------------------------
    @property
    def alpha(self) -> float | str:
        return self._alpha

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def eta(self) -> int:
        return self._eta

    @property
    def s_max(self) -> int:
        return self._s_max

    def slot(self, number: int) -> schedule.Slot:
        """The schedule slot of a trial number under this sampler's eta, s_max and mode."""
        if self._mode == "async":
            return schedule.async_slot_of(number, self._eta, self._s_max)
        return schedule.slot_of(number, self._eta, self._s_max)

    def reseed_rng(self) -> None:
        # Configurations derive from (seed, configuration id); reseeding would break that promise.
        if self._base_sampler is not None:
            self._base_sampler.reseed_rng()

    # -- Optuna hooks --------------------------------------------------------------------------
    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        # Optuna's heartbeat thread starts only after ask() returns: a worker killed before that
        # would leave a RUNNING trial with no heartbeat, which fail_stale_trials never fails, and
        # the next rung would wait for it forever. Beat from the start, and while waiting.
        self._beat(study, trial)
        self._check_study(study, trial)
        self._refuse_foreign(study, trial)
        slot = self.slot(trial.number)
        if slot.rung == 0:
            assignment = _Assignment(slot, slot.configuration)
        else:
            try:
                alpha, promoted = self._promoted(study, trial, slot)
            except BaseException:
                mark_failed(study, trial._trial_id)
                raise
            source = promoted[slot.position]
            assignment = _Assignment(slot, int(source.user_attrs["configuration_id"]),
                                     dict(source.params), dict(source.distributions), alpha)
        if self._base_sampler is None or slot.rung > 0:
            assignment.own_sampler = RandomSampler(seed=configuration_seed(self._seed, assignment.configuration))
        with self._lock:
            self._assignments[trial._trial_id] = assignment
        attrs = {"iteration": slot.iteration, "bracket": slot.bracket, "rung": slot.rung,
                 "budget": slot.budget, "configuration_id": assignment.configuration}
        if self._mode == "async":
            del attrs["iteration"]
        if assignment.alpha is not None:
            attrs["alpha"] = assignment.alpha
        elif not isinstance(self._alpha, str):
            attrs["alpha"] = self._alpha
        set_user_attrs(study._storage, trial._trial_id, attrs)
        if self._base_sampler is not None:
            self._base_sampler.before_trial(self._view(study, slot), trial)

    def infer_relative_search_space(self, study, trial):
        assignment = self._assignment(trial)
        if assignment is None:
            return {}
        if assignment.slot.rung > 0:
            return dict(assignment.distributions)
        if self._base_sampler is not None:
            return self._base_sampler.infer_relative_search_space(self._view(study, assignment.slot), trial)
        return {}

    def sample_relative(self, study, trial, search_space):
        assignment = self._assignment(trial)
        if assignment is None or not search_space:
            return {}
        if assignment.slot.rung > 0:
            return {name: assignment.params[name] for name in search_space if name in assignment.params}
        if self._base_sampler is not None:
            return self._base_sampler.sample_relative(self._view(study, assignment.slot), trial, search_space)
        return {}

    def sample_independent(self, study, trial, param_name, param_distribution):
        assignment = self._assignment(trial)
        if assignment is None:
            raise FairbandScheduleError(
                f"trial {trial.number} was not prepared by FairbandSampler.before_trial; create trials "
                "with study.optimize or study.ask")
        if assignment.own_sampler is not None:
            return assignment.own_sampler.sample_independent(study, trial, param_name, param_distribution)
        return self._base_sampler.sample_independent(
            self._view(study, assignment.slot), trial, param_name, param_distribution)

    def after_trial(self, study, trial, state, values) -> None:
        with self._lock:
            assignment = self._assignments.pop(trial._trial_id, None)
        if self._base_sampler is not None and assignment is not None:
            self._base_sampler.after_trial(self._view(study, assignment.slot), trial, state, values)

    # -- internals -----------------------------------------------------------------------------
    def _assignment(self, trial: FrozenTrial) -> _Assignment | None:
        with self._lock:
            return self._assignments.get(trial._trial_id)

    def _view(self, study, slot: schedule.Slot):
        bracket = slot.bracket
        return BracketView(study, lambda t: self.slot(t.number).bracket == bracket)

    def _check_study(self, study: optuna.Study, trial: FrozenTrial) -> None:
        key = (id(study._storage), study._study_id)
        if key in self._checked_studies:
            return
        directions = study.directions
        if len(directions) != 2 or any(d != StudyDirection.MAXIMIZE for d in directions):
            mark_failed(study, trial._trial_id)
            raise FairbandScheduleError(
                "FairbandSampler needs a study with directions=['maximize', 'maximize'] returning "
                f"(accuracy, fairness); got {[d.name.lower() for d in directions]}")
        from .pruner import FairbandPruner  # the pruner module imports this one

        pruner = study.pruner
        if isinstance(pruner, FairbandPruner):
            try:
                pruner.settings(study)
            except ValueError as err:
                mark_failed(study, trial._trial_id)
                raise FairbandScheduleError(str(err)) from None
        settings = {"eta": self._eta, "s_max": self._s_max, "alpha": self._alpha, "mode": self._mode}
        stored = study._storage.get_study_system_attrs(study._study_id).get(STUDY_ATTR)
        if stored is None:
            study._storage.set_study_system_attr(study._study_id, STUDY_ATTR, settings)
        elif stored != settings:
            mark_failed(study, trial._trial_id)
            raise FairbandScheduleError(
                f"this study was started with Fairband settings {stored}, this sampler has {settings}")
        self._checked_studies.add(key)

    def _refuse_foreign(self, study: optuna.Study, trial: FrozenTrial) -> None:
        system_attrs = trial.system_attrs
        if "fixed_params" in system_attrs or "failed_trial" in system_attrs:
            how = "study.enqueue_trial" if "fixed_params" in system_attrs else "a retry callback"
            mark_failed(study, trial._trial_id)
            raise FairbandScheduleError(
                f"trial {trial.number} was created by {how}; the Fairband schedule assigns every "
                "configuration and budget by trial number, so enqueued or retried trials are refused "
                "(this trial was marked FAIL and ranks last in its rung)")

    def _promoted(self, study: optuna.Study, trial: FrozenTrial, slot: schedule.Slot):
        key = (id(study._storage), study._study_id, slot.iteration, slot.bracket, slot.rung - 1)
        with self._lock:
            cached = self._rankings.get(key)
        if cached is not None:
            return cached
        previous = self._wait_for_rung(study, trial, slot)
        entries = []
        by_configuration = {}
        for t in previous:
            configuration = t.user_attrs.get("configuration_id")
            if configuration is None:  # refused or crashed before its attrs were written
                configuration = schedule.slot_of(t.number, self._eta, self._s_max).configuration
                if configuration is None:
                    configuration = -1 - t.number
            values = t.values if t.state == TrialState.COMPLETE and t.values is not None else (None, None)
            entries.append((configuration, values[0], values[1]))
            by_configuration[configuration] = t
        alpha = ranking.resolve_alpha(self._alpha, [(a, f) for _, a, f in entries])
        k = schedule.rung_sizes(slot.bracket, self._eta, self._s_max)[slot.rung]
        order = ranking.top_k(entries, k, alpha)
        promoted = [by_configuration[c] for c in order]
        for t in promoted:
            if "configuration_id" not in t.user_attrs:
                mark_failed(study, trial._trial_id)
                raise FairbandScheduleError(
                    f"trial {t.number} has no Fairband attributes and cannot be promoted; "
                    f"rung {slot.rung - 1} of bracket {slot.bracket} has too few usable fits")
        result = (alpha, promoted)
        with self._lock:
            self._rankings[key] = result
        return result

    @staticmethod
    def _beat(study: optuna.Study, trial: FrozenTrial) -> None:
        if is_heartbeat_enabled(study._storage):
            study._storage.record_heartbeat(trial._trial_id)

    def _wait_for_rung(self, study: optuna.Study, trial: FrozenTrial, slot: schedule.Slot) -> list[FrozenTrial]:
        numbers = schedule.trial_numbers_of_rung(slot.iteration, slot.bracket, slot.rung - 1,
                                                 self._eta, self._s_max)
        heartbeat = is_heartbeat_enabled(study._storage)
        beat_every = study._storage.get_heartbeat_interval() if heartbeat else None
        last_beat = time.monotonic()
        start = time.monotonic()
        pause = 0.001
        while True:
            trials = trials_by_number(study)
            ready = [trials.get(n) for n in numbers]
            if all(t is not None and t.state.is_finished() for t in ready):
                return ready
            waited = time.monotonic() - start
            if waited > self._wait_timeout:
                missing = [n for n, t in zip(numbers, ready) if t is None or not t.state.is_finished()]
                raise FairbandWaitTimeout(
                    f"trial {trial.number} (bracket {slot.bracket}, rung {slot.rung}) waited "
                    f"{waited:.0f} s > wait_timeout={self._wait_timeout:g} s for trials {missing[:10]} of "
                    "the previous rung; a worker probably died. Use an RDB storage with heartbeat_interval "
                    "so stale trials are failed, or raise wait_timeout for long fits")
            if heartbeat:
                if time.monotonic() - last_beat >= beat_every:
                    self._beat(study, trial)
                    last_beat = time.monotonic()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                    optuna.storages.fail_stale_trials(study)
            time.sleep(pause)
            pause = min(pause * 2, self._poll_interval)


def budget(trial) -> float:
    """Share of the training set this trial's fit gets (1/81 ... 1 with the paper's settings).

    Works on a live :class:`optuna.trial.Trial` (after the sampler prepared it) and on a
    :class:`~optuna.trial.FrozenTrial` (from its ``budget`` user attribute).

    >>> import optuna
    >>> study = optuna.create_study(directions=["maximize"] * 2, sampler=FairbandSampler(seed=0))
    >>> trial = study.ask()
    >>> round(budget(trial), 4)
    0.0123
    """
    sampler = getattr(getattr(trial, "study", None), "sampler", None)
    if isinstance(sampler, FairbandSampler):
        return sampler.slot(trial.number).budget  # pure function of the number: no storage read
    attrs = trial.user_attrs
    if "budget" not in attrs and hasattr(trial, "_trial_id") and hasattr(trial, "storage"):
        attrs = trial.storage.get_trial(trial._trial_id).user_attrs  # set after the trial was cached
    if "budget" in attrs:
        return float(attrs["budget"])
    raise ValueError(f"trial {trial.number} has no Fairband budget; use FairbandSampler as the study's sampler")
