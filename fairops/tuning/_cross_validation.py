"""A configuration's figures from cross-validation over the training and validation rows.

The validation rows alone leave few events behind a fairness ratio (COMPAS at a 10% FPR: 67 false
positives over two groups), so a choice between a few candidates on them is still a coin toss between
noisy ratios. :func:`cross_validated` scores every training and validation row out of fold (``folds``
folds stratified by label x group, each scored by the configuration fit on the other rows) and evaluates
the task on the pooled scores: about five times the rows stand behind each rate, and the intervals say
so.
"""

from __future__ import annotations

import warnings

import numpy as np

from fairops.datasets import strata

from ..errors import InputError
from ..metrics._intervals import LEVEL


def cross_validated(objective, frozen_trial, folds: int = 5) -> dict:
    """The task's metrics (with intervals) of ``frozen_trial``'s out-of-fold scores on train + validation.

    The threshold meets the task's target on the pooled out-of-fold scores, at the objective's decision
    rule (one threshold, or one per group with ``decision="per-group"``: the figures a choice compares are
    those the run's models are judged by). Raises
    :class:`~fairops.tuning._objective.ConstantScoresError` when every row gets the same score.

    >>> import optuna
    >>> from fairops.datasets import load_german
    >>> from fairops.tuning import FairnessObjective, make_model
    >>> objective = FairnessObjective(load_german(), families=["logistic_regression"], seed=0)
    >>> study = optuna.create_study(directions=["maximize"] * 2)
    >>> study.enqueue_trial({"lr_C": 1.0, "lr_penalty": "l2", "lr_tol": 1e-4, "lr_max_iter": 200})
    >>> study.optimize(lambda t: (make_model(t, families=["logistic_regression"]), (0.5, 0.5))[1], n_trials=1)
    >>> figures = cross_validated(objective, study.trials[0])
    >>> figures["fairness_low"] <= figures["fairness"] <= figures["fairness_high"]
    True
    """
    from sklearn.model_selection import StratifiedKFold

    from ._objective import ConstantScoresError
    from ._search_space import fit_model

    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise InputError(f"folds must be an integer >= 2, got {folds!r}")
    parts = [objective.rows("train"), objective.rows("validation")]
    X = _concat([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    sensitive = _concat([p[2] for p in parts])
    cells = strata(y, sensitive[list(objective.task.sensitive)])
    scores = np.empty(len(y))
    splitter = StratifiedKFold(folds, shuffle=True, random_state=objective.split_seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a cell smaller than the number of folds
        splits = list(splitter.split(np.zeros(len(y)), cells))
    for fit_rows, held_out in splits:
        model = fit_model(objective.unfitted(frozen_trial), X.iloc[fit_rows], y[fit_rows],
                          objective.task.select_sensitive(sensitive.iloc[fit_rows]))
        scores[held_out] = model.predict_proba(X.iloc[held_out])[:, 1]
    if np.ptp(scores) == 0:
        raise ConstantScoresError(f"the configuration scores all {len(scores)} rows {scores[0]:.6g}")
    metrics, _ = objective.task.measure(y, scores, sensitive, seed=objective.seed, decision=objective.decision,
                                        level=getattr(objective, "level", LEVEL))
    return metrics


def _concat(frames):
    import pandas as pd

    return pd.concat(frames)
