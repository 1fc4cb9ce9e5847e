"""FairbandSampler: the paper's synchronous Fairband schedule inside an Optuna study.

One trial is one (configuration, budget) fit. Each trial claims one *slot* of the schedule
(:mod:`fairops.fairband._claims`): claims are made in trial-number order and take the lowest slot nobody
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

import numpy as np
import optuna
from optuna.samplers import BaseSampler
from optuna.trial import FrozenTrial, TrialState

from . import _optuna_internals as internals, _pruner as pruning_calls, _schedule as schedule
from ._claims import HELD, SlotClaims, positive_seconds
from ._errors import FairbandConfigurationError, FairbandScheduleError, FairbandWaitTimeout
from ._selection import check_min_fairness, record_constraint
from ._settings import FairbandSettings, validated_configuration
from .assignments import Assignments
from .base_sampler_view import BaseSamplerView, objectives_taken
from .budgets import budget
from .sampler_base import SlotSamplerBase, configuration_seed
from .starts import checked_starts, start_value

__all__ = ["FairbandConfigurationError", "FairbandSampler", "FairbandScheduleError", "FairbandWaitTimeout", "budget",
           "configuration_seed"]

ATTR_KEYS = ("iteration", "bracket", "rung", "budget", "configuration_id", "alpha")


class FairbandSampler(SlotSamplerBase):
    """Synchronous Fairband (Cruz et al., 2020/2021) as an Optuna sampler.

    Parameters
    ----------
    eta, s_max : int, default=3, 4
        Hyperband's reduction factor and largest bracket (paper: 3 and 4 -> 206 fits).
    alpha : float or "auto", default="auto"
        ``"auto"`` (FB-auto, dynamic per rung), or a float in [0, 1]; 1 is Hyperband, 0.5 FB-bal.
    seed : int or None, default=None
        Seeds the rung-0 configurations; configuration ``c`` is drawn from ``(seed, c)`` only.
    base_sampler : optuna.samplers.BaseSampler or None, default=None
        Optional Optuna sampler for rung-0 configurations (e.g. TPE for a BOHB-like variant). It is handed a
        study of the schedule's fits numbered without gaps (:mod:`fairops.fairband.base_sampler_view`); one
        that refuses two objectives (CMA-ES) sees the weighted score ``o``, one that takes neither study is
        refused here with its reason. Default: random sampling as in the paper.
    wait_timeout : float, default=3600.0
        Seconds a trial waits for other trials before raising :class:`FairbandWaitTimeout`.
        Storages without heartbeats cannot tell a slow fit from a dead one; with an RDB storage with
        ``heartbeat_interval``, dead workers' trials are failed while waiting and their slots redone.
    poll_interval : float, default=0.2
        Longest pause in seconds between two storage reads while waiting.
    mode : {"sync", "async"}, default="sync"
        ``"sync"``: one trial = one (configuration, budget) fit, the paper's exact schedule.
        ``"async"``: one trial = one configuration trained up the rungs of its bracket under
        :class:`~fairops.fairband.FairbandPruner` (ASHA-style); the sampler only draws configurations.
    configuration : dict or None, default=None
        JSON values describing everything else that defines the study (data and
        its hash, task, model families, ...). The study keeps the configuration of its first worker
        (with eta, s_max, alpha, mode and seed); a worker whose configuration differs is refused with
        :class:`FairbandConfigurationError` naming the first difference.
    iterations : int or None, default=None
        Schedule at most this many iterations; later trials are refused and the optimize
        loop stops (``None``: no limit, stop with ``n_trials`` or a callback).
    min_fairness : float or None, default=None
        A fairness floor in [0, 1]. Every finished fit gets Optuna's ``constraints`` attribute
        ``(min_fairness - fairness,)``, as a ``constraints_func`` would give it, so ``study.best_trials``,
        ``plot_pareto_front``, optuna-dashboard and :func:`~fairops.fairband.select_best` treat fits below
        the floor as infeasible. Rung promotion still ranks by ``o``, as in the paper. Part of the
        study's configuration: every worker must use the same floor. Constraints of one's own count beside
        it, set either way: ``trial.set_constraint(name, value)`` in the objective (Optuna 5's API), or a
        base sampler's ``constraints_func``, whose values come first in the list, the floor after them.
    start_configurations : list of dict or None, default=None
        Parameter values (one dict per configuration, e.g. a library's defaults) that
        the first configurations of bracket 0 of the first iteration take instead of random draws: bracket
        0 fits every configuration on the full budget, so the run always compares its draws with these.
        A parameter a dict leaves out is drawn as usual. At most ``s_max + 1`` of them (the size of bracket
        0); part of the study's configuration. Default: none, every configuration drawn, as in the paper.

    Notes
    -----
    The study must have two maximized objectives, (accuracy, fairness).

    Pruning inside the objective: nothing to call. Each trial is one fit on ``budget(trial)`` of the training
    rows, and the schedule stops configurations between rungs, never a fit half-way. Optuna's
    ``trial.report`` / ``trial.should_prune`` do not support two objectives (Optuna raises before any pruner is
    asked); in a Fairband study they raise a ``NotImplementedError`` saying so and naming
    :class:`~fairops.fairband.RungProgress` (``mode="async"``), the way to stop a trial between its rungs.

    Examples
    --------
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
        pruning_calls.install()  # trial.report / should_prune then name the way, in every mode
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
        self._base_alpha = None
        if base_sampler is not None and objectives_taken(base_sampler) == 1:
            self._base_alpha = self._settings.alpha  # it optimises the weighted score Fairband ranks by
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

    # -- Optuna hooks --------------------------------------------------------------------------
    def reseed_rng(self) -> None:
        """Reseed the base sampler only.

        Configurations derive from (seed, configuration id); reseeding would break that promise.
        """
        if self._base_sampler is not None:
            self._base_sampler.reseed_rng()

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
            view = self._base_view(study, trial, assignment)
            return self._base_sampler.infer_relative_search_space(view.study, view.trial(trial))
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
        if assignment is None or assignment.status != HELD:
            return {}
        if assignment.slot.rung > 0:
            return {name: assignment.params[name] for name in search_space if name in assignment.params}
        if self._base_sampler is not None:  # asked even with nothing to draw, as Optuna asks it (NSGA-II counts)
            view = self._base_view(study, trial, assignment)
            return self._base_sampler.sample_relative(view.study, view.trial(trial), search_space)
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
        assert self._base_sampler is not None  # else every held trial has its own sampler
        view = self._base_view(study, trial, assignment)
        return self._base_sampler.sample_independent(view.study, view.trial(trial), param_name, param_distribution)

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
        base_sees_it = self._base_sampler is not None and assignment is not None and assignment.slot is not None
        # first, so the floor joins (not overwrites) what its constraints_func writes
        if base_sees_it:
            assert self._base_sampler is not None and assignment is not None
            # a fresh view: the trials as they are now, as Optuna's tell reads them afresh
            view = BaseSamplerView(study, trial, self._base_sampler, self._base_alpha, assignment.base_number)
            self._base_sampler.after_trial(view.study, view.trial(trial), state, view.values(values))
        if assignment is not None and assignment.status == HELD:
            if state == TrialState.COMPLETE and not assignment.asked:
                self._assignments.warn_budget_unasked(study, trial, "budget(trial)" if self.mode == "sync"
                                                      else "RungProgress(trial)")
            if state != TrialState.COMPLETE:
                self._claims.record_outcome(study, trial, state)
        # last: a constraint named twice raises once everything else is recorded
        record_constraint(study, trial, state, values, self._min_fairness, after_others=base_sees_it)
