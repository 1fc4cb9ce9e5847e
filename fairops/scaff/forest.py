"""SCAFF forest: bagged SCAFF trees with features drawn per node, grown in threads."""

from __future__ import annotations

from ._base import SCAFFBase


class SCAFFClassifier(SCAFFBase):
    """Fair random forest (the SCAFF paper's bagging setting).

    Each tree is grown on a bootstrap sample with ``max_features`` features drawn per
    node, using the SCAFF gain ``SG = (1 - theta) * (AUC_Y - 0.5) - theta * (AUC_S - 0.5)``.
    ``predict_proba`` averages the leaves' P(y = 1). Per-tree seeds are drawn from
    ``random_state`` before any tree is grown, so the model is the same for every ``n_jobs``.
    Trees grow in a thread pool of ``n_jobs`` threads (the compiled kernel releases the GIL).

    Parameters are those of :class:`SCAFFTreeClassifier` plus ``n_estimators``,
    ``bootstrap`` and ``n_jobs`` (None = 1, -1 = all cores).

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); s = rng.integers(0, 2, 200)
    >>> y = (X[:, 0] + 0.5 * s > 0).astype(int)
    >>> clf = SCAFFClassifier(n_estimators=10, theta=0.5).fit(X, y, sensitive_features=s)
    >>> clf.predict_proba(X).shape
    (200, 2)
    """

    def __init__(
        self,
        n_estimators=100,
        theta=0.5,
        max_depth=4,
        max_features="sqrt",
        bootstrap=True,
        max_bins=256,
        sensitive_aggregation="max",
        intersectional=False,
        n_jobs=None,
        random_state=0,
    ):
        self.n_estimators = n_estimators
        self.theta = theta
        self.max_depth = max_depth
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.max_bins = max_bins
        self.sensitive_aggregation = sensitive_aggregation
        self.intersectional = intersectional
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _forest_spec(self):
        return self.n_estimators, self.bootstrap, self.max_features, self.n_jobs
