"""SCAFF forest: bagged SCAFF trees with features drawn per node, grown in threads."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .._param_checks import Interval, Options, Satisfies, is_int
from ._base import CLASS_WEIGHT_DICT, SCAFFBase
from ._tree_classifier import SCAFFTreeClassifier

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .._typing import Features, MaxFeatures, NDArray, RandomState

# Fitted attributes a tree of the forest shares with the forest itself.
_SHARED = ("classes_", "bin_edges_", "bin_offsets_", "n_features_in_", "feature_names_in_", "sensitive_columns_",
           "n_sensitive_groups_", "_categories", "feature_missing_")
_PER_NODE = ("node_feature_", "node_threshold_", "node_threshold_bin_", "node_left_", "node_right_", "node_value_",
             "node_weight_", "node_gain_", "node_missing_left_")


class SCAFFClassifier(SCAFFBase):
    """Fair random forest (the SCAFF paper's bagging setting).

    Each tree is grown on a bootstrap sample with ``max_features`` features drawn per
    node, using the SCAFF gain ``SG = (1 - theta) * (AUC_Y - 0.5) - theta * (AUC_S - 0.5)``.
    ``predict_proba`` averages the leaves' P(y = 1). Per-tree seeds are drawn from
    ``random_state`` before any tree is grown, so the model is the same for every ``n_jobs``.
    Trees grow in a thread pool of ``n_jobs`` threads (the compiled kernel releases the GIL).

    ``estimators_`` lists the trees as fitted :class:`SCAFFTreeClassifier` objects and
    ``apply`` gives each row's leaf in every tree.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    theta : float in [0, 1], default=0.5
        0 = plain AUC trees, 1 = ignores the label.
    max_depth : int or None, default=4
        Maximum depth of each tree; None grows until no split gains.
    max_features : "sqrt", "log2", int, float or None, default="sqrt"
        Features drawn at random per node (None = all).
    min_samples_split : int >= 2 or float in (0, 1], default=2
        A node with fewer samples (a float: that share of the rows) is a leaf.
    min_samples_leaf : int >= 1 or float in (0, 1), default=1
        Each child keeps at least this many samples.
    bootstrap : bool, default=True
        Grow each tree on a bootstrap sample.
    max_bins : int in [2, 256], default=256
        Quantile bins per feature.
    class_weight : dict, "balanced", "balanced_subsample" or None, default=None
        Weights per class, multiplied with ``sample_weight``; ``"balanced_subsample"`` takes class weights
        from each tree's bootstrap sample.
    sensitive_aggregation : "max" or "mean", default="max"
        How the groups' one-vs-rest AUCs make AUC_S (see :class:`SCAFFTreeClassifier`).
    intersectional : bool, default=False
        Treat each combination of the sensitive columns' values as one group.
    n_jobs : int or None, default=None
        Threads growing trees (None = 1, -1 = all cores).
    random_state : int, RandomState or None, default=None
        Seeds the bootstrap samples and the features drawn.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two classes.
    n_features_in_ : int
        Number of features seen in ``fit`` (and ``feature_names_in_`` for a DataFrame).
    sensitive_columns_ : list of str
        Names of the sensitive columns (or intersectional groups).
    node_offsets_ : ndarray of int64
        Where each tree's nodes start in the ``node_*_`` arrays (as in :class:`SCAFFTreeClassifier`).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); s = rng.integers(0, 2, 200)
    >>> y = (X[:, 0] + 0.5 * s > 0).astype(int)
    >>> clf = SCAFFClassifier(n_estimators=10, theta=0.5, random_state=0).fit(X, y, sensitive_features=s)
    >>> clf.predict_proba(X).shape, clf.apply(X).shape, len(clf.estimators_)
    ((200, 2), (200, 10), 10)
    """

    _param_constraints = {
        **SCAFFBase._param_constraints,
        "n_estimators": [Interval("int", 1, None)],
        "bootstrap": [bool],
        "n_jobs": [None, Satisfies(lambda value: is_int(value) and value != 0, "a non-zero integer (-1 = all cores)")],
        "class_weight": [None, CLASS_WEIGHT_DICT, Options("balanced", "balanced_subsample")],
    }

    def __init__(
        self,
        n_estimators: int = 100,
        theta: float = 0.5,
        max_depth: int | None = 4,
        max_features: MaxFeatures = "sqrt",
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        bootstrap: bool = True,
        max_bins: int = 256,
        class_weight: Mapping[int, float] | Literal["balanced", "balanced_subsample"] | None = None,
        sensitive_aggregation: Literal["max", "mean"] = "max",
        intersectional: bool = False,
        n_jobs: int | None = None,
        random_state: RandomState = None,
    ) -> None:
        self.n_estimators = n_estimators
        self.theta = theta
        self.max_depth = max_depth
        self.max_features = max_features
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.bootstrap = bootstrap
        self.max_bins = max_bins
        self.class_weight = class_weight
        self.sensitive_aggregation = sensitive_aggregation
        self.intersectional = intersectional
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _forest_spec(self) -> tuple[int, bool, MaxFeatures, int | None]:
        return self.n_estimators, self.bootstrap, self.max_features, self.n_jobs

    def apply(self, X: Features) -> NDArray[np.intp]:
        """``(n_samples, n_trees)``: the leaf each row reaches in each tree (ids count per tree).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to route.

        Returns
        -------
        ndarray of shape (n_samples, n_trees)
            Leaf ids.
        """
        return self._leaf_ids(X)

    @property
    def estimators_(self) -> list[SCAFFTreeClassifier]:
        """The trees as fitted :class:`SCAFFTreeClassifier` objects (views on this forest's arrays).

        Each predicts on its own; their mean ``predict_proba`` is the forest's.
        """
        check_is_fitted(self, "node_offsets_")
        params = {name: value for name, value in self.get_params(deep=False).items()
                  if name in SCAFFTreeClassifier._get_param_names()}
        params["class_weight"] = None if self.class_weight == "balanced_subsample" else self.class_weight
        trees = []
        for start, stop in zip(self.node_offsets_[:-1], self.node_offsets_[1:]):
            tree = SCAFFTreeClassifier(**params)
            for name in _SHARED:
                if hasattr(self, name):
                    setattr(tree, name, getattr(self, name))
            for name in _PER_NODE:
                setattr(tree, name, getattr(self, name)[start:stop])
            tree.node_offsets_ = np.array([0, stop - start], dtype=np.int64)
            trees.append(tree)
        return trees
