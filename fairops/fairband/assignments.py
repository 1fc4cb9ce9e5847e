"""What the sampler gave each live trial of this process: its slot, configuration and parameters, or why none.

>>> import optuna
>>> study = optuna.create_study(directions=["maximize"] * 2)
>>> trial = study.ask()
>>> table = Assignments()
>>> table.put(study, trial, Assignment("refused", reason="no slot left"))
>>> table.held(study, trial)
Traceback (most recent call last):
...
optuna.exceptions.TrialPruned: no slot left
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass, field
from typing import Any

import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler

from . import _schedule as schedule
from ._claims import HELD, RELEASED
from ._errors import FairbandScheduleError


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
    base_view: Any = None  # the base sampler's view of the study up to the trial's sampling (never pickled)
    base_number: int | None = None  # the trial's number in that view, which never changes

    def __getstate__(self) -> dict:
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

    def __getstate__(self) -> dict:
        with self._lock:
            return {"_table": dict(self._table)}

    def __setstate__(self, state: dict) -> None:
        self._reset()
        self._table.update(state["_table"])

    @staticmethod
    def _key(study, trial) -> tuple[str, int]:
        return study.study_name, trial.number

    def get(self, study, trial) -> Assignment | None:
        with self._lock:
            return self._table.get(self._key(study, trial))

    def put(self, study, trial, assignment: Assignment) -> None:
        with self._lock:
            self._table[self._key(study, trial)] = assignment

    def pop(self, study, trial) -> Assignment | None:
        with self._lock:
            return self._table.pop(self._key(study, trial), None)

    def held(self, study, trial) -> Assignment:
        """The trial's assignment when it holds a slot; ``optuna.TrialPruned`` with the reason when it does not."""
        assignment = self.get(study, trial)
        if assignment is None:
            raise FairbandScheduleError(
                f"trial {trial.number} was not prepared by FairbandSampler.before_trial; create trials "
                "with study.optimize or study.ask")
        if assignment.status != HELD:
            raise optuna.TrialPruned(assignment.reason)
        return assignment

    def release(self, trial, reason: str) -> None:
        """Give up the slot a live trial holds, for ``reason``: however it ends, that is not the slot's result."""
        with self._lock:
            assignment = self._table.get(self._key(trial.study, trial))
            if assignment is not None and assignment.status == HELD:
                assignment.status, assignment.reason = RELEASED, reason

    def warn_budget_unasked(self, study, trial, how: str) -> None:
        """Warn, once per study and process, that a fit ran without asking its budget (``how``): the schedule's
        budgets then change nothing (every fit sees all rows) while its promotions still rank them."""
        with self._lock:
            if study.study_name in self._budget_warned:
                return
            self._budget_warned.add(study.study_name)
        warnings.warn(f"trial {trial.number} finished without asking {how}, so its fit did not use the share of "
                      "the training rows the schedule gave it; an objective that trains on all rows makes every "
                      "rung's budget the same (warned once per study)", UserWarning, stacklevel=2)
