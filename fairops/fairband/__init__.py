"""Fairband: fairness-aware Hyperband as an Optuna sampler + pruner pair.

The algorithm only: the paper's objective, model families and baseline tuners are in
:mod:`fairops.tuning`, which builds on this package.

>>> from fairops.fairband import FairbandSampler, budget, select_best
>>> FairbandSampler(alpha=0.5, seed=0).alpha
0.5
"""

from ._errors import FairbandConfigurationError, FairbandScheduleError, FairbandWaitTimeout
from ._pruner import FairbandPruner, RungProgress
from ._sampler import FairbandSampler, budget
from ._schedule import Slot, iteration_size, rung_budget, rung_sizes, slot_of
from ._selection import Selection, SelectionKind, pareto_front, select_best
from ._settings import FairbandSettings

__all__ = [
    "FairbandPruner", "RungProgress", "FairbandSampler", "FairbandScheduleError", "FairbandWaitTimeout", "budget",
    "FairbandConfigurationError", "FairbandSettings",
    "Slot", "iteration_size", "rung_budget", "rung_sizes", "slot_of",
    "Selection", "SelectionKind", "pareto_front", "select_best",
]

