"""The SCAFF forest as a Fairband model family, so fair training competes with fair tuning.

Fairband's families are plain ``fit(X, y)`` estimators; :class:`~fairops.models.SCAFFOnColumns`
reads the sensitive attributes for SCAFF's criterion from named columns of ``X`` (the bundled data
sets keep them among the features). It lives in :mod:`fairops.models` because a registered model
contains it, and a served model must not depend on this job module.
"""

from __future__ import annotations

from ..experiments.search_space import FAMILIES, PAPER_FAMILIES, register_family  # noqa: F401 (doctests)
from ..models import SCAFFOnColumns

SCAFF_FAMILY = "scaff_forest"


def register_scaff_family(sensitive_columns) -> str:
    """(Re)register ``"scaff_forest"`` for the given sensitive columns; returns the family name.

    >>> register_scaff_family(["sex"]) in FAMILIES
    True
    """
    columns = tuple(sensitive_columns)

    def suggest(trial, profile, seed):
        return SCAFFOnColumns(
            sensitive_columns=columns,
            theta=trial.suggest_float("scaff_theta", 0.0, 1.0),
            n_estimators=trial.suggest_int("scaff_n_estimators", 10, 50 if profile == "fast" else 500, log=True),
            max_depth=trial.suggest_int("scaff_max_depth", 2, 6 if profile == "fast" else 10),
            max_features=trial.suggest_categorical("scaff_max_features", ["sqrt", "log2"]),
            random_state=seed,
        )

    register_family(SCAFF_FAMILY, suggest, needs_encoding=False)
    return SCAFF_FAMILY


def tuning_families(sensitive_columns, *, blind: bool = False) -> list[str]:
    """The paper's five families plus the SCAFF forest over ``sensitive_columns`` (not with ``blind``:
    SCAFF reads the sensitive columns from its inputs).

    >>> tuning_families(["sex"])[-1], tuning_families(["sex"], blind=True)[-1]
    ('scaff_forest', 'mlp')
    """
    if blind:
        return list(PAPER_FAMILIES)
    return [*PAPER_FAMILIES, register_scaff_family(sensitive_columns)]


def check_blind_families(families, blind: bool) -> None:
    """Refuse the SCAFF forest in a group-blind run, naming the conflict.

    >>> check_blind_families(["scaff_forest"], True)
    Traceback (most recent call last):
    ...
    ValueError: --families scaff_forest does not apply with --blind: SCAFF reads the sensitive columns from its inputs
    """
    if blind and SCAFF_FAMILY in families:
        raise ValueError(f"--families {SCAFF_FAMILY} does not apply with --blind: SCAFF reads the sensitive "
                         "columns from its inputs")
