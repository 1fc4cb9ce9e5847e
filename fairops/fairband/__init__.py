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


def _shown_as_public(value) -> None:
    """Name this face as the module of ``value`` (and of the methods its class defines), as its users import it.

    Tracebacks, ``repr``, pickles and the doctests then read ``fairops.fairband.X`` whatever private module
    holds the code, so the modules behind the face can move without changing what users see or store. The
    price: ``inspect.getsource`` of a public class looks for it in this file and does not find it.
    """
    defined_in = value.__module__
    value.__module__ = __name__
    for member in vars(value).values() if isinstance(value, type) else ():
        function = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
        if getattr(function, "__module__", None) == defined_in:
            function.__module__ = __name__


for _name in __all__:
    _shown_as_public(globals()[_name])
