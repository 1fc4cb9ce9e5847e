"""The Fairband paper's experiments around the algorithm: the objective, the model families and their
search spaces, the baseline tuners (RS, RS-bal, HB, FB-bal, FB-auto), the comparison over seeds, a toy
objective and a plain reference implementation of the schedule.

:mod:`fairops.fairband` is the algorithm (an Optuna sampler and pruner) and imports nothing from here;
this package builds on it.

>>> from fairops.experiments import TUNERS, trials_per_iteration
>>> TUNERS, trials_per_iteration("HB")
(('RS', 'RS-bal', 'HB', 'FB-bal', 'FB-auto'), 206)
"""

from .baselines import TUNERS, TunerResult, make_study, pick_alpha, run_tuner, trials_per_iteration
from .comparison import compare_tuners, markdown_table, summary
from .objective import FairnessObjective
from .refit_choice import RefitChoice, refit_choice
from .search_space import FAMILIES, PAPER_FAMILIES, PROFILES, Family, make_model, register_family

__all__ = [
    "TUNERS", "TunerResult", "make_study", "pick_alpha", "run_tuner", "trials_per_iteration",
    "compare_tuners", "markdown_table", "summary",
    "FairnessObjective", "RefitChoice", "refit_choice",
    "FAMILIES", "PAPER_FAMILIES", "PROFILES", "Family", "make_model", "register_family",
]
