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

The schedule side of :class:`~fairops.fairband.FairbandSampler`: its settings, what a live trial was given,
and how a trial claims its slot and gets its configuration (the schedule is described above).

:class:`SlotSamplerBase` is FairbandSampler's base class; FairbandSampler keeps the constructor, which sets the
state read here, and Optuna's hooks, which call :meth:`SlotSamplerBase._prepare` and the slot queries.

The study as a Fairband base sampler sees it: the fits of the schedule, numbered as a study of their own.

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

What the sampler gave each live trial of this process: its slot, configuration and parameters, or why none.

>>> import optuna
>>> study = optuna.create_study(directions=["maximize"] * 2)
>>> trial = study.ask()
>>> table = Assignments()
>>> table.put(study, trial, Assignment("refused", reason="no slot left"))
>>> table.held(study, trial)
Traceback (most recent call last):
...
optuna.exceptions.TrialPruned: no slot left

Start configurations: parameter values the first configurations of bracket 0 take instead of random draws.

>>> from fairops.fairband import slot_of
>>> starts = checked_starts([{"x": 0.5}], s_max=4)
>>> start_of(starts, slot_of(138)), start_of(starts, slot_of(139))  # the first two slots of bracket 0
({'x': 0.5}, {})

``budget(trial)``: the share of the training rows a trial's fit gets.

It asks the study's Fairband sampler when the trial is live (found through its settings, as the pruner
finds them), else reads the trial's ``budget`` attribute.
"""

from __future__ import annotations

import copy
import logging
import threading
import warnings
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import numpy as np
import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.storages import BaseStorage
from optuna.study import StudyDirection
from optuna.trial import BaseTrial, FrozenTrial, TrialState

from ..errors import InputError
from . import _optuna_internals as internals, _pruner as pruning_calls, _ranking as ranking, _schedule as schedule
from ._claims import HELD, REFUSED, RELEASED, SlotBoard, SlotClaims, claim_of, positive_seconds, refusal, study_key
from ._errors import FairbandScheduleError
from ._selection import check_min_fairness, record_constraint
from ._settings import FairbandSettings, check_study, settings_of, validated_configuration


def budget(trial: optuna.Trial | FrozenTrial) -> float:
    """Share of the training set this trial's fit gets (1/81 ... 1 with the paper's settings).

    Works on a live :class:`optuna.trial.Trial` (after the sampler prepared it) and on a
    :class:`~optuna.trial.FrozenTrial` (from its ``budget`` user attribute). A live trial the schedule
    refused raises ``optuna.TrialPruned`` (see :class:`~fairops.fairband.FairbandSampler`).

    Parameters
    ----------
    trial : optuna.Trial or optuna.trial.FrozenTrial
        The trial.

    Returns
    -------
    float
        The share of the training rows in (0, 1].

    Examples
    --------
    >>> import optuna
    >>> from fairops.fairband import FairbandSampler
    >>> study = optuna.create_study(directions=["maximize"] * 2, sampler=FairbandSampler(seed=0))
    >>> trial = study.ask()
    >>> round(budget(trial), 4)
    0.0123
    """
    study = getattr(trial, "study", None)
    if study is not None and settings_of(study) is not None and isinstance(trial, optuna.Trial):
        return cast(FairbandSampler, study.sampler).budget_of(trial)
    attrs = trial.user_attrs
    if "budget" not in attrs and isinstance(trial, optuna.Trial):
        # another sampler wrote it through the storage after the live trial cached its attributes
        attrs = internals.storage_of(trial.study).get_trial(internals.trial_id_of(trial.study, trial)).user_attrs
    if "budget" in attrs:
        return float(attrs["budget"])
    raise InputError(f"trial {trial.number} has no Fairband budget; use FairbandSampler as the study's sampler")


def checked_starts(starts: Iterable[dict[str, Any]] | None, s_max: int) -> tuple[dict[str, Any], ...]:
    """``start_configurations`` as a tuple of dicts, refused unless they fit bracket 0 and hold JSON values."""
    if starts is None:
        return ()
    starts = tuple(starts)
    if not all(isinstance(start, dict) and all(isinstance(k, str) for k in start) for start in starts):
        raise TypeError("start_configurations must be a list of dicts of parameter values")
    if isinstance(s_max, int) and len(starts) > s_max + 1:
        raise InputError(f"start_configurations holds {len(starts)} configurations; bracket 0 has room for "
                         f"s_max + 1 = {s_max + 1}")
    validated_configuration({"starts": list(starts)})  # JSON values only
    return starts


def start_value(value: object, name: str, distribution: BaseDistribution) -> object:
    """``value`` of parameter ``name`` once checked to lie in ``distribution``."""
    if isinstance(distribution, CategoricalDistribution):
        inside = value in distribution.choices
    else:
        # Optuna's numeric distributions both have low and high, but no common base declares them
        inside = (isinstance(value, (int, float))
                  and distribution.low <= value <= distribution.high)  # type: ignore[attr-defined]
    if not inside:
        raise InputError(f"start configuration value {name}={value!r} is outside its distribution {distribution}")
    return value


def start_of(starts: tuple[dict[str, Any], ...], slot: schedule.Slot) -> dict[str, Any]:
    """The start configuration's values for a rung-0 slot of bracket 0 in the first iteration, else {}."""
    if slot.iteration == 0 and slot.bracket == 0 and slot.position < len(starts):
        return dict(starts[slot.position])
    return {}


@dataclass
class Assignment:
    """One live trial's: its claim's ``status``, and when held its slot, configuration and parameters."""

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
    base_view: BaseSamplerView | None = None  # the base sampler's view up to the trial's sampling (never pickled)
    base_number: int | None = None  # the trial's number in that view, which never changes

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "base_view": None}


class Assignments:
    """The assignments of this process's live trials, by study name and trial number (thread-safe).

    Pickling keeps a copy of them; the lock and what was warned start again on load.
    """

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._lock = threading.Lock()
        self._table: dict[tuple[str, int], Assignment] = {}
        self._budget_warned: set[str] = set()  # study names

    def __getstate__(self) -> dict[str, Any]:
        with self._lock:
            return {"_table": dict(self._table)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._reset()
        self._table.update(state["_table"])

    @staticmethod
    def _key(study: optuna.Study, trial: BaseTrial) -> tuple[str, int]:
        return study.study_name, trial.number

    def get(self, study: optuna.Study, trial: BaseTrial) -> Assignment | None:
        with self._lock:
            return self._table.get(self._key(study, trial))

    def put(self, study: optuna.Study, trial: BaseTrial, assignment: Assignment) -> None:
        with self._lock:
            self._table[self._key(study, trial)] = assignment

    def pop(self, study: optuna.Study, trial: BaseTrial) -> Assignment | None:
        with self._lock:
            return self._table.pop(self._key(study, trial), None)

    def held(self, study: optuna.Study, trial: BaseTrial) -> Assignment:
        """The trial's assignment when it holds a slot; ``optuna.TrialPruned`` with the reason when it does not."""
        assignment = self.get(study, trial)
        if assignment is None:
            raise FairbandScheduleError(
                f"trial {trial.number} was not prepared by FairbandSampler.before_trial; create trials "
                "with study.optimize or study.ask")
        if assignment.status != HELD:
            raise optuna.TrialPruned(assignment.reason)
        return assignment

    def release(self, trial: optuna.Trial, reason: str) -> None:
        """Give up the slot a live trial holds, for ``reason``: however it ends, that is not the slot's result."""
        with self._lock:
            assignment = self._table.get(self._key(trial.study, trial))
            if assignment is not None and assignment.status == HELD:
                assignment.status, assignment.reason = RELEASED, reason

    def warn_budget_unasked(self, study: optuna.Study, trial: BaseTrial, how: str) -> None:
        """Warn, once per study and process, that a fit ran without asking its budget (``how``): the schedule's
        budgets then change nothing (every fit sees all rows) while its promotions still rank them."""
        with self._lock:
            if study.study_name in self._budget_warned:
                return
            self._budget_warned.add(study.study_name)
        warnings.warn(f"trial {trial.number} finished without asking {how}, so its fit did not use the share of "
                      "the training rows the schedule gave it; an objective that trains on all rows makes every "
                      "rung's budget the same (warned once per study)", UserWarning, stacklevel=2)


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

    def get_all_studies(self) -> list[Any]:  # Optuna's FrozenStudy, which it does not export
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
    _starts: tuple[dict[str, Any], ...]
    _min_fairness: float | None
    _iterations: int | None
    _checked_studies: set[tuple[int, str]]  # by study_key

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
    def configuration(self) -> dict[str, Any]:
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

    def abandon(self, trial: optuna.Trial) -> None:
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
    def slot_of_trial(self, trial: optuna.Trial | FrozenTrial) -> schedule.Slot | None:
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

    def budget_of(self, trial: optuna.Trial) -> float:
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
        claim: dict[str, Any] | None = self._claims.claim(trial, index)
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

    def _finish_assignment(self, study: optuna.Study, trial: FrozenTrial, assignment: Assignment,
                           attrs: dict[str, Any], claim: dict[str, Any] | None = None) -> None:
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
    def _base_view(self, study: optuna.Study, trial: FrozenTrial, assignment: Assignment) -> BaseSamplerView:
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

    def _refuse(self, study: optuna.Study, trial: FrozenTrial, reason: str, status: str = REFUSED,
                slot_index: int | None = None, level: int = logging.WARNING) -> None:
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
        study of the schedule's fits numbered without gaps (:mod:`fairops.fairband._sampler`); one
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

    def __init__(self, eta: int = 3, s_max: int = 4, alpha: float | Literal["auto"] = "auto",
                 seed: int | None = None, base_sampler: BaseSampler | None = None, wait_timeout: float = 3600.0,
                 poll_interval: float = 0.2, mode: Literal["sync", "async"] = "sync", *,
                 configuration: dict[str, Any] | None = None, iterations: int | None = None,
                 min_fairness: float | None = None,
                 start_configurations: Sequence[dict[str, Any]] | None = None) -> None:
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
        self._checked_studies: set[tuple[int, str]] = set()

    def __getstate__(self) -> dict[str, Any]:
        """What ``pickle``, ``copy.deepcopy`` and ``joblib.dump(study)`` keep: the settings and the live trials'
        assignments. The locks and the caches of storage reads are started again on load.

        >>> import copy
        >>> copy.deepcopy(FairbandSampler(seed=0)).configuration == FairbandSampler(seed=0).configuration
        True
        """
        state = self.__dict__.copy()
        del state["_checked_studies"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
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

    def infer_relative_search_space(self, study: optuna.Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
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
        if assignment is None or assignment.status != HELD:
            return {}
        assert assignment.slot is not None  # a held assignment has its slot
        if assignment.slot.rung == 0 and assignment.params:
            return {}  # a start configuration's values come from sample_independent
        if assignment.slot.rung > 0:
            return dict(assignment.distributions)
        if self._base_sampler is not None:
            view = self._base_view(study, trial, assignment)
            return self._base_sampler.infer_relative_search_space(view.study, view.trial(trial))
        return {}

    def sample_relative(self, study: optuna.Study, trial: FrozenTrial,
                        search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
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
        assert assignment.slot is not None  # a held assignment has its slot
        if assignment.slot.rung > 0:
            return {name: assignment.params[name] for name in search_space if name in assignment.params}
        if self._base_sampler is not None:  # asked even with nothing to draw, as Optuna asks it (NSGA-II counts)
            view = self._base_view(study, trial, assignment)
            return self._base_sampler.sample_relative(view.study, view.trial(trial), search_space)
        return {}

    def sample_independent(self, study: optuna.Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
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
        assert assignment.slot is not None  # a held assignment has its slot
        if assignment.slot.rung == 0 and param_name in assignment.params:
            return start_value(assignment.params[param_name], param_name, param_distribution)
        if assignment.own_sampler is not None:
            return assignment.own_sampler.sample_independent(study, trial, param_name, param_distribution)
        assert self._base_sampler is not None  # else every held trial has its own sampler
        view = self._base_view(study, trial, assignment)
        return self._base_sampler.sample_independent(view.study, view.trial(trial), param_name, param_distribution)

    def after_trial(self, study: optuna.Study, trial: FrozenTrial, state: TrialState,
                    values: Sequence[float] | None) -> None:
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
