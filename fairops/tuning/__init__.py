"""What ``fairops tune`` and ``fairops compare`` run on: the fairness objective, models suggested from the
family table, the baseline tuners (RS, RS-bal, HB, FB-bal, FB-auto), the comparison over seeds, the
robust refit choice and its cross-validation, and a toy objective.

:mod:`fairops.fairband` is the algorithm (an Optuna sampler and pruner) and imports nothing from here;
this package builds on it.

>>> from fairops.tuning import TUNERS, trials_per_iteration
>>> TUNERS, trials_per_iteration("HB")
(('RS', 'RS-bal', 'HB', 'FB-bal', 'FB-auto'), 206)
"""

from ._baselines import TUNERS, TunerResult, make_study, pick_alpha, run_tuner, trials_per_iteration
from ._comparison import compare_tuners, markdown_table, summary
from ._objective import FairnessObjective
from ._outcome import record_outcome
from ._quiet import quiet_trials
from ._refit_choice import RefitChoice, refit_choice
from ._search_space import (
    FAMILIES,
    PAPER_FAMILIES,
    PROFILES,
    Family,
    check_families,
    families_for,
    fit_model,
    make_model,
    register_family,
)

__all__ = [
    "TUNERS", "TunerResult", "make_study", "pick_alpha", "run_tuner", "trials_per_iteration",
    "compare_tuners", "markdown_table", "summary",
    "FairnessObjective", "quiet_trials", "record_outcome", "RefitChoice", "refit_choice",
    "FAMILIES", "PAPER_FAMILIES", "PROFILES", "Family", "check_families", "families_for", "fit_model", "make_model",
    "register_family",
]
