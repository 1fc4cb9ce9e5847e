"""What a bias-reduction fit records on its trial beside its figures."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

#: What a bias-reduction fit adds to its trial: predictors carrying weight and, for exponentiated gradient,
#: the duality gap of its result (how far from the game's saddle point it stopped).
REDUCTION_ATTRS = ("n_predictors", "duality_gap")


def reduction_record(model: BaseEstimator) -> dict[str, float]:
    """``{"n_predictors": ..., "duality_gap": ...}`` of a fitted pipeline whose last step is a reduction
    (exponentiated gradient has both, grid search only the first); empty for any other model.

    >>> import numpy as np
    >>> from fairops.reductions import ExponentiatedGradient
    >>> X = np.random.default_rng(0).normal(size=(300, 2)); s = (X[:, 1] > 0).astype(int); y = (X[:, 0] > 0).astype(int)
    >>> sorted(reduction_record(ExponentiatedGradient(max_iter=5).fit(X, y, sensitive_features=s)))
    ['duality_gap', 'n_predictors']
    """
    from fairops.reductions import ExponentiatedGradient, GridSearch

    last = model.steps[-1][1] if hasattr(model, "steps") else model
    if not isinstance(last, (ExponentiatedGradient, GridSearch)):
        return {}
    record: dict[str, float] = {"n_predictors": int(last.n_predictors_)}
    if isinstance(last, ExponentiatedGradient):
        record["duality_gap"] = float(last.best_gap_)
    return record
