"""The paper's comparison tuners, all driven by the same (accuracy, fairness) objective.

=========  =====================================  ==================  ============
tuner      sampler                                fits per iteration  final pick
=========  =====================================  ==================  ============
RS         random, every fit at full budget       24 (same budget)    alpha = 1
RS-bal     same run as RS                         24                  alpha = 0.5
HB         FairbandSampler(alpha=1)               206                 alpha = 1
FB-bal     FairbandSampler(alpha=0.5)             206                 alpha = 0.5
FB-auto    FairbandSampler(alpha="auto")          206                 alpha = auto
=========  =====================================  ==================  ============

RS gets ``ceil(total budget of one Fairband iteration)`` = 24 full-budget fits, as in the paper's logs.

>>> import optuna
>>> from fairops.tuning._toy import make_toy_objective
>>> optuna.logging.set_verbosity(optuna.logging.WARNING)
>>> result = run_tuner("RS-bal", make_toy_objective(), seed=0)
>>> len(result.study.trials), result.selection.alpha
(24, 0.5)
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import optuna
from optuna.samplers import RandomSampler

from fairops.fairband import FairbandSampler, _schedule as schedule
from fairops.fairband._optuna_internals import write_trial_attrs
from fairops.fairband._selection import Selection, check_min_fairness, record_constraint, select_best

from ..errors import InputError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from optuna.storages import BaseStorage

TUNERS = ("RS", "RS-bal", "HB", "FB-bal", "FB-auto")
_ALPHA: dict[str, float | Literal["auto"]] = {"RS": 1.0, "RS-bal": 0.5, "HB": 1.0, "FB-bal": 0.5, "FB-auto": "auto"}


class FullBudgetRandomSampler(RandomSampler):
    """Random search where every trial is a full-budget fit (``budget(trial) == 1``).

    ``min_fairness``: a fairness floor written as Optuna's constraints, as ``FairbandSampler`` does.
    """

    def __init__(self, seed: int | None = None, *, min_fairness: float | None = None) -> None:
        super().__init__(seed=seed)
        self.min_fairness = check_min_fairness(min_fairness)

    def before_trial(self, study, trial):
        # A sampler sees a FrozenTrial, which has no public setter: written through the one module that
        # reaches Optuna's storage (checked against the Optuna versions it knows).
        write_trial_attrs(study, trial, user={"budget": 1.0, "configuration_id": trial.number})
        super().before_trial(study, trial)

    def after_trial(self, study, trial, state, values):
        record_constraint(study, trial, state, values, self.min_fairness)
        super().after_trial(study, trial, state, values)


@dataclass
class TunerResult:
    """What :func:`run_tuner` returns: the tuner, its study and its final pick.

    Parameters
    ----------
    tuner : str
        One of ``TUNERS``.
    study : optuna.Study
        The study it ran.
    selection : Selection
        Its final pick.
    """

    tuner: str
    study: optuna.Study
    selection: Selection


def _check(tuner: str) -> None:
    if tuner not in TUNERS:
        raise InputError(f"tuner must be one of {TUNERS}, got {tuner!r}")


def trials_per_iteration(tuner: str, eta: int = 3, s_max: int = 4) -> int:
    """Fits the tuner gets for the budget of one Fairband iteration.

    Parameters
    ----------
    tuner : str
        One of ``TUNERS``.
    eta : int, default=3
        Hyperband's reduction factor.
    s_max : int, default=4
        The largest bracket.

    Returns
    -------
    int
        Trials per iteration.

    Examples
    --------
    >>> trials_per_iteration("HB"), trials_per_iteration("RS")
    (206, 24)
    """
    _check(tuner)
    if tuner.startswith("RS"):
        return math.ceil(schedule.total_budget(s_max, eta) - 1e-9)
    return schedule.iteration_size(eta, s_max)


def make_study(tuner: str, *, seed: int = 0, storage: str | BaseStorage | None = None, study_name: str | None = None,
               **sampler_options: Any) -> optuna.Study:
    """A two-objective (accuracy, fairness) study with the tuner's sampler.

    Parameters
    ----------
    tuner : str
        One of ``TUNERS``: random search at full budget, or a :class:`~fairops.fairband.FairbandSampler`
        with the tuner's alpha.
    seed : int, default=0
        The sampler's seed.
    storage : str, optuna.storages.BaseStorage or None, default=None
        Optuna's storage (None: in memory).
    study_name : str or None, default=None
        The study's name.
    **sampler_options
        Further arguments of :class:`~fairops.fairband.FairbandSampler`.

    Returns
    -------
    optuna.Study
        The study, its metrics named accuracy and fairness.
    """
    _check(tuner)
    sampler: optuna.samplers.BaseSampler
    if tuner.startswith("RS"):
        sampler = FullBudgetRandomSampler(seed=seed)
    else:
        sampler = FairbandSampler(alpha=_ALPHA[tuner], seed=seed, **sampler_options)
    study = optuna.create_study(directions=["maximize", "maximize"], sampler=sampler, storage=storage,
                                study_name=study_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        study.set_metric_names(["accuracy", "fairness"])
    return study


def run_tuner(tuner: str, objective: Callable[[optuna.Trial], Sequence[float]], *, seed: int = 0,
              iterations: int = 1, study: optuna.Study | None = None, **optimize_options: Any) -> TunerResult:
    """Run one tuner for ``iterations`` Fairband iterations' worth of budget and apply its pick.

    Parameters
    ----------
    tuner : str
        One of ``TUNERS``.
    objective : callable
        The (accuracy, fairness) objective.
    seed : int, default=0
        The sampler's seed, for a new study.
    iterations : int, default=1
        Fairband iterations' worth of trials.
    study : optuna.Study or None, default=None
        A study of :func:`make_study` (None: a new one).
    **optimize_options
        Further arguments of ``study.optimize`` (``n_jobs``, ``callbacks``, ...).

    Returns
    -------
    TunerResult
        The tuner, its study and its pick.
    """
    _check(tuner)
    if not isinstance(iterations, int) or iterations < 1:
        raise InputError(f"iterations must be a positive integer, got {iterations!r}")
    if study is None:
        study = make_study(tuner, seed=seed)
    shape = {}
    if isinstance(study.sampler, FairbandSampler):
        shape = {"eta": study.sampler.eta, "s_max": study.sampler.s_max}
    study.optimize(objective, n_trials=iterations * trials_per_iteration(tuner, **shape), **optimize_options)
    return TunerResult(tuner, study, select_best(study, alpha=_ALPHA[tuner]))


def start_configurations(selection: str, families=None, profile: str = "fast") -> list[dict] | None:
    """The configurations a Fairband run starts its full-budget bracket with: with the robust rule the
    library defaults of the tuned families (:func:`~fairops.tuning._search_space.library_defaults`), so the
    pick is chosen knowing how the defaults do; with the paper's rule none (every configuration is drawn).

    >>> start_configurations("paper") is None, [s["model"] for s in start_configurations("robust")]
    (True, ['lightgbm', 'logistic_regression'])
    """
    from ._search_space import library_defaults

    return library_defaults(families, profile) if selection == "robust" else None


def pick_alpha(tuner: str) -> float | Literal["auto"]:
    """The alpha the tuner's final pick uses.

    Parameters
    ----------
    tuner : str
        One of ``TUNERS``.

    Returns
    -------
    float or str
        1.0, 0.5 or ``"auto"``.

    Examples
    --------
    >>> pick_alpha("FB-bal")
    0.5
    """
    _check(tuner)
    return _ALPHA[tuner]
