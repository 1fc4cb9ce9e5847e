"""Fairband (fairness-aware Hyperband) for OptunaHub: the sampler and pruner of the installed fairops.

Load it with ``optunahub.load_module("samplers/fairband")`` (or ``optunahub.load_local_module`` from a
clone) and use ``FairbandSampler`` and ``FairbandPruner`` in a ``(maximize, maximize)`` study whose
objective returns ``(accuracy, fairness)``; ``example.py`` runs one iteration.
"""

from fairops.fairband import FairbandPruner, FairbandSampler

__all__ = ["FairbandSampler", "FairbandPruner"]
