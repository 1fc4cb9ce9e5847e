"""FairbandPruner: the pruner half of the pair.

Asynchronous mode (``FairbandSampler(mode="async")`` or any other sampler): fairness-aware ASHA. One trial
is one configuration trained up the rungs of its bracket (budgets ``eta**(i - s)``). After each rung the
objective reports (accuracy, fairness) through :class:`RungProgress` (multi-objective studies cannot
call ``trial.report``); the trial goes on to the next rung only if its score ``o`` is in the top
``floor(m / eta)`` of the ``m`` trials of its bracket that have reached that rung so far, with the same
alpha rule as the synchronous mode (dynamic alpha over those ``m`` trials for ``"auto"``). Decisions
depend on arrival order, which is the price of never waiting.

Synchronous mode (sampler ``FairbandSampler()``): the sampler already runs the exact schedule, so the
pruner never stops a fit (``prune`` is always False) and cannot change the schedule's counts; it only
checks that its settings agree with the sampler's. Stopping a fit early from partial progress would
change that fit's values and hence the paper's promotions, so it is not done.

``trial.report`` and ``trial.should_prune`` in a Fairband study: what to call instead.

Optuna's :meth:`optuna.trial.Trial.should_prune` and :meth:`~optuna.trial.Trial.report` raise
``NotImplementedError`` in any study with more than one objective, before the study's pruner is asked, so
no pruner can answer them, and a Fairband study has two objectives (accuracy, fairness). Nor is anything
lost: in synchronous mode (``FairbandSampler()``) each trial is one fit on ``budget(trial)`` of the training
rows and the sampler promotes configurations between rungs, so a fit is never stopped half-way and the
objective only returns ``(accuracy, fairness)``; in asynchronous mode :class:`~fairops.fairband.RungProgress`
reports each rung and ends its loop when :class:`~fairops.fairband.FairbandPruner` stops the trial.

So that a pruning loop copied from Optuna's examples fails with that advice rather than Optuna's bare
message, :func:`install` (called by every :class:`~fairops.fairband.FairbandSampler`) makes both methods of any
trial of a Fairband study of two objectives raise an error naming the way, whether or not the objective has
asked its budget yet (a ``NotImplementedError``, as Optuna's, so code catching that still does).

>>> "RungProgress" in advice("async") and "budget(trial)" in advice("sync")
True
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, Literal

import optuna
from optuna.pruners import BasePruner
from optuna.trial import FrozenTrial

from .._param_checks import check_alpha
from ..errors import InputError
from . import _optuna_internals as internals, _ranking as ranking, _schedule as schedule
from ._settings import FairbandSettings, agreeing, settings_of


def _attr(rung: int, what: str) -> str:
    return f"rung{rung}_{what}"


class FairbandPruner(BasePruner):
    """Fairness-aware Hyperband pruner (see the module docstring for the two modes).

    The objective does not call ``trial.report`` / ``trial.should_prune``: Optuna refuses both in a study with
    two objectives before asking any pruner. In asynchronous mode it reports through :class:`RungProgress`
    (``progress.report(accuracy, fairness)``; the loop over ``progress`` ends when this pruner stops the
    trial); in synchronous mode it needs nothing, as each trial is one fit. A trial handed to ``RungProgress``
    or ``budget`` raises a ``NotImplementedError`` that says so from both calls.

    Parameters
    ----------
    eta : int or None, default=None
        Hyperband's reduction factor (None: the study's FairbandSampler setting, else the paper's 3).
    s_max : int or None, default=None
        The largest bracket (None: the sampler's, else 4).
    alpha : float, "auto" or None, default=None
        Weight of accuracy in the score ``o``, or ``"auto"`` (dynamic per rung); None: the sampler's, else
        ``"auto"``.

    Examples
    --------
    >>> import optuna
    >>> from fairops.fairband import FairbandPruner, FairbandSampler, RungProgress
    >>> optuna.logging.set_verbosity(optuna.logging.WARNING)
    >>> study = optuna.create_study(directions=["maximize"] * 2, pruner=FairbandPruner(),
    ...                             sampler=FairbandSampler(mode="async", seed=0))
    >>> def objective(trial):
    ...     x = trial.suggest_float("x", 0, 1)
    ...     progress = RungProgress(trial)
    ...     for fraction in progress:
    ...         progress.report(x * fraction, 1 - x)
    ...     return progress.values
    >>> study.optimize(objective, n_trials=50)
    >>> max(t.user_attrs["rung"] for t in study.trials) >= 1
    True
    """

    def __init__(self, eta: int | None = None, s_max: int | None = None,
                 alpha: float | Literal["auto"] | None = None) -> None:
        if eta is not None or s_max is not None:
            schedule.iteration_size(eta or schedule.ETA, schedule.S_MAX if s_max is None else s_max)
        self._eta = eta
        self._s_max = s_max
        self._alpha = None if alpha is None else check_alpha(alpha)

    def fairband_settings_for(self, study: optuna.Study) -> FairbandSettings:
        """The settings in force for ``study``.

        Parameters
        ----------
        study : optuna.Study
            The study pruned.

        Returns
        -------
        FairbandSettings
            Its Fairband sampler's (which must agree with this pruner's own), else this pruner's in
            asynchronous mode (defaults: the paper's 3, 4, "auto").
        """
        settings = settings_of(study)
        if settings is not None:
            return agreeing(settings, eta=self._eta, s_max=self._s_max, alpha=self._alpha)
        return FairbandSettings(schedule.ETA if self._eta is None else self._eta,
                                schedule.S_MAX if self._s_max is None else self._s_max,
                                "auto" if self._alpha is None else self._alpha, "async")

    def settings(self, study: optuna.Study) -> tuple[int, int, float | str, str]:
        """(eta, s_max, alpha, mode) in force for ``study``.

        Parameters
        ----------
        study : optuna.Study
            The study pruned.

        Returns
        -------
        tuple
            ``(eta, s_max, alpha, mode)`` of :meth:`fairband_settings_for`.
        """
        settings = self.fairband_settings_for(study)
        return settings.eta, settings.s_max, settings.alpha, settings.mode

    def prune(self, study: optuna.Study, trial: FrozenTrial) -> bool:
        """True when the trial should stop after its last reported rung (async mode only).

        Parameters
        ----------
        study : optuna.Study
            The study.
        trial : optuna.trial.FrozenTrial
            The trial, with the rung attributes :class:`RungProgress` wrote.

        Returns
        -------
        bool
            Whether to stop it.
        """
        return self.stops(study, trial.number, trial.user_attrs)

    def stops(self, study: optuna.Study, number: int, attrs: dict[str, Any]) -> bool:
        """True when trial ``number``, whose user attributes are ``attrs``, stops after its last reported rung.

        Parameters
        ----------
        study : optuna.Study
            The study.
        number : int
            The trial's number.
        attrs : dict
            Its user attributes; they may be fresher than the stored ones (a live trial's own, as
            :class:`RungProgress` passes).

        Returns
        -------
        bool
            Whether the trial stops: always False in synchronous mode.
        """
        eta, s_max, alpha, mode = self.settings(study)
        if mode == "sync":
            return False
        rung = attrs.get("rung")
        bracket = attrs.get("bracket")
        if rung is None or bracket is None:
            return False
        if rung >= bracket:  # top rung of the bracket: nothing left to train
            return True
        entries = []
        for t in study.get_trials(deepcopy=False):
            seen = t.user_attrs if t.number != number else attrs
            # Both values, not just the first: another worker's report writes them one after the other.
            if seen.get("bracket") == bracket and _attr(rung, "accuracy") in seen and _attr(rung, "fairness") in seen:
                entries.append((t.number, seen[_attr(rung, "accuracy")], seen[_attr(rung, "fairness")]))
        if number not in {e[0] for e in entries}:
            entries.append((number, attrs[_attr(rung, "accuracy")], attrs[_attr(rung, "fairness")]))
        keep = len(entries) // eta
        return number not in ranking.top_k(entries, keep, alpha)


def _rung_pruner(pruner: BasePruner) -> FairbandPruner:
    """The pruner RungProgress asks: the study's Fairband pruner, a new one for a study created without its
    own, else a ValueError naming the study's pruner."""
    if isinstance(pruner, FairbandPruner):
        return pruner
    if isinstance(pruner, optuna.pruners.NopPruner) or internals.is_optuna_default_pruner(pruner):
        return FairbandPruner()
    raise InputError(f"the study's pruner is {type(pruner).__name__}, which RungProgress would not ask (a "
                     "multi-objective trial cannot report to it): create the study with pruner=FairbandPruner(...) "
                     "or without a pruner")


class RungProgress:
    """Iterate over a trial's rung budgets in asynchronous mode and report each rung's values.

    ``for fraction in progress`` yields the budgets of the trial's bracket from its first rung up; after
    each :meth:`report` the pruner decides whether the next rung runs. :attr:`values` is the last
    reported (accuracy, fairness), the natural return value of the objective.

    The study's :class:`FairbandPruner` decides; a study created without a pruner (Optuna's default, or
    ``NopPruner``) gets one with the paper's settings. Any other pruner is refused: a multi-objective trial
    cannot report to it, so it would never be asked.

    Parameters
    ----------
    trial : optuna.Trial
        The live trial of a study in asynchronous mode.

    Attributes
    ----------
    values : tuple of float or None
        The last reported ``(accuracy, fairness)``.
    """

    def __init__(self, trial: optuna.Trial) -> None:
        self._trial = trial
        study = trial.study
        self._pruner = _rung_pruner(study.pruner)
        self._eta, self._s_max, _, mode = self._pruner.settings(study)
        if mode != "async":
            raise InputError("RungProgress is for asynchronous mode; with FairbandSampler() (sync) use "
                             "budget(trial) and one fit per trial")
        slot_of_trial = getattr(study.sampler, "slot_of_trial", None)
        slot = slot_of_trial(trial) if callable(slot_of_trial) else None
        if slot is not None:
            self._bracket = slot.bracket
        elif "bracket" in trial.user_attrs:
            self._bracket = int(trial.user_attrs["bracket"])
        else:
            self._bracket = schedule.async_slot_of(trial.number, self._eta, self._s_max).bracket
            trial.set_user_attr("bracket", self._bracket)
        self._rung = -1
        self._stopped = False
        self.values: tuple[float, float] | None = None

    @property
    def rung(self) -> int:
        """The rung being trained (-1 before the loop starts)."""
        return self._rung

    def __iter__(self) -> Iterator[float]:
        for i in range(self._bracket + 1):
            if self._stopped:
                return
            self._rung = i
            yield schedule.rung_budget(self._bracket, i, self._eta, self._s_max)
            if self.values is None or self._reported != i:
                raise RuntimeError(f"report(accuracy, fairness) was not called for rung {i}")

    def report(self, accuracy: float, fairness: float) -> bool:
        """Record this rung's values; returns True if the trial goes on to the next rung.

        Parameters
        ----------
        accuracy, fairness : float
            The rung's objective values (a non-finite one is stored as None).

        Returns
        -------
        bool
            Whether the next rung runs.
        """
        if self._rung < 0:
            raise RuntimeError("report() must be called inside the loop over RungProgress")
        accuracy, fairness = float(accuracy), float(fairness)
        trial, i = self._trial, self._rung
        trial.set_user_attr(_attr(i, "accuracy"), accuracy if math.isfinite(accuracy) else None)
        trial.set_user_attr(_attr(i, "fairness"), fairness if math.isfinite(fairness) else None)
        trial.set_user_attr("rung", i)
        trial.set_user_attr("budget", schedule.rung_budget(self._bracket, i, self._eta, self._s_max))
        self.values = (accuracy, fairness)
        self._reported = i
        # The live trial's own attributes (the sampler wrote the bracket through the storage).
        attrs = {**trial.user_attrs, "bracket": self._bracket}
        self._stopped = self._pruner.stops(trial.study, trial.number, attrs)
        return not self._stopped


_WHY = ("Optuna's trial.report and trial.should_prune do not support studies with two objectives such as "
        "Fairband's (accuracy, fairness). ")
_SYNC = ("Nothing is needed in synchronous mode: each trial is one fit on budget(trial) of the training rows and "
         "FairbandSampler promotes configurations between rungs, so fit, then return (accuracy, fairness). To stop "
         "configurations between rungs of one trial instead, use FairbandSampler(mode='async') with RungProgress.")
_ASYNC = ("In asynchronous mode report each rung through RungProgress: progress = RungProgress(trial); for fraction "
          "in progress: fit on that share, then progress.report(accuracy, fairness); the loop ends when "
          "FairbandPruner stops the trial, and the objective returns progress.values.")


def advice(mode: str) -> str:
    """The error text for a trial of a ``"sync"`` or ``"async"`` Fairband study."""
    return _WHY + (_ASYNC if mode == "async" else _SYNC)


def _advice_for(trial: optuna.Trial) -> str | None:
    """The advice for a live trial of a Fairband study of two objectives; None for any other trial."""
    study = trial.study
    settings = settings_of(study)
    if settings is None or len(study.directions) < 2:
        return None
    return advice(settings.mode)


def install() -> None:
    """Give ``trial.report`` / ``trial.should_prune`` of Fairband studies the advice (once per process)."""
    internals.refuse_pruning_calls(_advice_for)
