"""Bias reduction over any classifier: the exponentiated gradient and grid search reductions.

Agarwal et al. (2018), "A Reductions Approach to Fair Classification": :class:`ExponentiatedGradient` plays
the game between a cost-sensitive base fit (through sample weights) and the Lagrange multipliers to a small
duality gap; :class:`GridSearch` fits one predictor per grid point of multipliers and keeps the best. Both
are scikit-learn classifiers over any base estimator whose ``fit`` takes ``sample_weight``: the groups are
needed to fit, never to predict; ``predict_proba`` and ``predict`` are deterministic (ties broken by a hash
of the row); the constraints cover the ratios ``"tpr"``, ``"fpr"``, ``"ppr"`` over several attributes
(:mod:`fairops.reductions._constraints`). fairlearn 0.15 is the tests' oracle; what differs from it and why:
``docs/fairband/reductions.md``.

>>> import numpy as np
>>> rng = np.random.default_rng(1)
>>> sex = rng.choice(["F", "M"], 3000); X = np.column_stack([rng.normal(size=3000) + (sex == "M"), sex == "M"])
>>> y = (X[:, 0] + rng.normal(size=3000) > 0.5).astype(int)
>>> model = ExponentiatedGradient(constraint="tpr", random_state=0).fit(X, y, sensitive_features={"sex": sex})
>>> from fairops.metrics import fairness_ratio
>>> bool(fairness_ratio(y, model.predict(X), {"sex": sex}, rate="tpr") > 0.9)
True
"""

from ._exponentiated_gradient import ExponentiatedGradient
from ._grid_search import GridSearch

__all__ = ["ExponentiatedGradient", "GridSearch"]
