"""A single SCAFF tree (no bagging; all features considered at every node by default)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ._base import SCAFFBase

if TYPE_CHECKING:
    from collections.abc import Mapping

    import numpy as np

    from .._typing import Features, MaxFeatures, NDArray, RandomState


class SCAFFTreeClassifier(SCAFFBase):
    """Fair decision tree: splits trade node-local AUC on the label against AUC on the groups.

    Gain of a split: ``SG = (1 - theta) * (AUC_Y - 0.5) - theta * (AUC_S - 0.5)``; a node
    is split only when the best SG is positive. See ``docs/scaff.md`` for the criterion.

    Parameters
    ----------
    theta : float in [0, 1], default=0.5
        0 = plain AUC tree, 1 = ignores the label (no split can then gain).
    max_depth : int or None, default=4
        Maximum depth; None grows until no split gains.
    max_features : "sqrt", "log2", int, float or None, default=None
        Features drawn at random per node (None = all, visited in column order, so ties between
        equally good splits go to the first column whatever ``random_state``).
    min_samples_split : int >= 2 or float in (0, 1], default=2
        A node with fewer samples (a float: that share of the rows) is a leaf.
    min_samples_leaf : int >= 1 or float in (0, 1), default=1
        Each child keeps at least this many samples; a node needs twice as many to be split.
    max_bins : int in [2, 256], default=256
        Quantile bins per feature (a feature with at most ``max_bins`` distinct values gets
        every threshold between them, as an exact tree would).
    class_weight : dict, "balanced" or None, default=None
        Weights per class, multiplied with ``sample_weight`` (as scikit-learn's trees do).
    sensitive_aggregation : "max" or "mean", default="max"
        How one-vs-rest AUCs of the sensitive groups are combined into AUC_S: the max over all,
        or the mean per attribute and then across attributes. A group absent from a node, or
        making up all of it, counts as AUC 1 there (the worst case, as the authors' code scores it).
    intersectional : bool, default=False
        Treat each combination of the sensitive columns' values as one group.
    random_state : int, RandomState or None, default=None
        Seeds the features drawn per node.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two classes.
    n_features_in_ : int
        Number of features seen in ``fit`` (and ``feature_names_in_`` for a DataFrame).
    sensitive_columns_ : list of str
        Names of the sensitive columns (or intersectional groups) the tree was grown with.
    n_sensitive_groups_ : int
        Number of sensitive groups over all columns.
    bin_edges_, bin_offsets_ : ndarray
        Each feature's cut points, concatenated, and where each feature's start.
    node_feature_, node_threshold_, node_left_, node_right_, node_value_, node_weight_, node_gain_ : ndarray
        Per node: split feature (-1 at a leaf), threshold, children, P(y = 1), weight and SG gain.
    node_missing_left_ : ndarray of uint8
        Per node: 1 when a missing value (NaN) of its split feature goes left (learnt in fit, see
        ``docs/scaff.md``).
    feature_missing_ : ndarray of uint8
        Per feature: 1 when it had missing values in fit (predict refuses them in the others).
    node_offsets_ : ndarray of int64
        Where each tree's nodes start in the ``node_*_`` arrays (one tree here).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0, 0, 1, 1])
    >>> tree = SCAFFTreeClassifier(theta=0.0).fit(X, y)
    >>> tree.predict(X).tolist(), tree.apply(X).tolist()
    ([0, 0, 1, 1], [1, 1, 2, 2])
    """

    def __init__(
        self,
        theta: float = 0.5,
        max_depth: int | None = 4,
        max_features: MaxFeatures = None,
        min_samples_split: int | float = 2,
        min_samples_leaf: int | float = 1,
        max_bins: int = 256,
        class_weight: Mapping[int, float] | Literal["balanced"] | None = None,
        sensitive_aggregation: Literal["max", "mean"] = "max",
        intersectional: bool = False,
        random_state: RandomState = None,
    ) -> None:
        self.theta = theta
        self.max_depth = max_depth
        self.max_features = max_features
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.max_bins = max_bins
        self.class_weight = class_weight
        self.sensitive_aggregation = sensitive_aggregation
        self.intersectional = intersectional
        self.random_state = random_state

    def _forest_spec(self) -> tuple[int, bool, MaxFeatures, int | None]:
        return 1, False, self.max_features, None

    def apply(self, X: Features) -> NDArray[np.intp]:
        """Id of the leaf each row of ``X`` reaches (an index into the ``node_*_`` arrays).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to route.

        Returns
        -------
        ndarray of shape (n_samples,)
            Leaf ids.
        """
        return self._leaf_ids(X)[:, 0]
