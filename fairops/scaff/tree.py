"""A single SCAFF tree (no bagging; all features considered at every node by default)."""

from __future__ import annotations

from ._base import SCAFFBase


class SCAFFTreeClassifier(SCAFFBase):
    """Fair decision tree: splits trade node-local AUC on the label against AUC on the groups.

    Gain of a split: ``SG = (1 - theta) * (AUC_Y - 0.5) - theta * (AUC_S - 0.5)``; a node
    is split only when the best SG is positive. See ``docs/scaff.md`` for the criterion.

    Parameters
    ----------
    theta : float in [0, 1]
        0 = plain AUC tree, 1 = ignores the label (no split can then gain).
    max_depth : int or None
        Maximum depth; None grows until no split gains.
    max_features : "sqrt", "log2", int, float or None
        Features drawn at random per node (None = all).
    max_bins : int in [2, 256]
        Quantile bins per feature.
    sensitive_aggregation : "max" or "mean"
        How one-vs-rest AUCs of all sensitive groups are combined into AUC_S.
    intersectional : bool
        Treat each combination of the sensitive columns' values as one group.
    random_state : int, RandomState or None

    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> tree = SCAFFTreeClassifier(theta=0.0).fit(X, y)
    >>> tree.predict(X).tolist()
    [0, 0, 1, 1]
    """

    def __init__(
        self,
        theta=0.5,
        max_depth=4,
        max_features=None,
        max_bins=256,
        sensitive_aggregation="max",
        intersectional=False,
        random_state=0,
    ):
        self.theta = theta
        self.max_depth = max_depth
        self.max_features = max_features
        self.max_bins = max_bins
        self.sensitive_aggregation = sensitive_aggregation
        self.intersectional = intersectional
        self.random_state = random_state

    def _forest_spec(self):
        return 1, False, self.max_features, None
