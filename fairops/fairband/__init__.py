"""Fairband: fairness-aware Hyperband as an Optuna sampler + pruner pair.

>>> from fairops.fairband import FairbandSampler, budget, select_best
>>> FairbandSampler(alpha=0.5, seed=0).alpha
0.5
"""

from .baselines import TUNERS, make_study, run_tuner
from .claims import SlotBoard, fits_of_run
from .objective import FairnessObjective
from .pruner import FairbandPruner, RungProgress
from .sampler import (FairbandConfigurationError, FairbandSampler, FairbandScheduleError, FairbandWaitTimeout,
                      budget)
from .settings import FairbandSettings
from .schedule import Slot, iteration_size, rung_budget, rung_sizes, slot_of
from .search_space import FAMILIES, make_model, register_family
from .selection import Selection, pareto_front, select_best

__all__ = [
    "TUNERS", "make_study", "run_tuner", "FairnessObjective",
    "SlotBoard", "fits_of_run",
    "FairbandPruner", "RungProgress", "FairbandSampler", "FairbandScheduleError", "FairbandWaitTimeout", "budget",
    "FairbandConfigurationError", "FairbandSettings",
    "Slot", "iteration_size", "rung_budget", "rung_sizes", "slot_of",
    "FAMILIES", "make_model", "register_family",
    "Selection", "pareto_front", "select_best",
]
