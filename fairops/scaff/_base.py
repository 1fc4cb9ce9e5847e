"""Fitting, prediction and saved state shared by the SCAFF tree and forest."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Self

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from .._param_checks import RANDOM_STATE, Interval, Options, Satisfies, checked_params, is_real
from ..errors import InputError
from . import _native, _state
from ._binning import apply_bins, bin_counts, fit_bin_edges, missing_features
from ._inputs import (
    AGGREGATIONS,
    categorical_columns,
    check_sample_weight,
    encode_categoricals,
    encode_groups,
    resolve_max_features,
    resolve_min_samples,
)

if TYPE_CHECKING:
    from .._typing import ArrayLike, Features, FloatArray, NDArray, Sensitive


def _class_weights(value) -> bool:
    return isinstance(value, dict) and all(is_real(w) and np.isfinite(w) and w >= 0 for w in value.values())


#: ``class_weight`` as a dict: a finite weight >= 0 per class.
CLASS_WEIGHT_DICT = Satisfies(_class_weights, "a dict {class: finite weight >= 0}")


def resolve_n_jobs(n_jobs) -> int:
    if n_jobs is None:
        return 1
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return max(1, int(n_jobs))


def _base_weights(estimator, y, sample_weight, bootstrap: bool):
    """Per-row weight before bootstrapping: ``sample_weight`` x class weights (None = all 1)."""
    class_weight = estimator.class_weight
    if class_weight == "balanced_subsample" and not bootstrap:
        class_weight = "balanced"  # one "subsample" = all rows
    if class_weight is None or class_weight == "balanced_subsample":
        return sample_weight
    try:
        expanded = compute_sample_weight(class_weight, y)
    except ValueError as error:
        raise InputError(f"class_weight {class_weight!r} does not fit y: {error}") from None
    return expanded if sample_weight is None else sample_weight * expanded


def _check_weighted_groups(groups, weight, names) -> None:
    """Refuse sensitive values carried only by rows of weight 0: no node could ever compare them."""
    if weight is None or groups.shape[1] == 0:
        return
    for c, name in enumerate(names):
        present = np.unique(groups[:, c])
        weighted = np.unique(groups[weight > 0, c])
        if len(weighted) < len(present):
            raise InputError(
                f"sensitive_features column {name!r} has values that occur only in rows with weight 0; "
                "drop those rows or give them a positive sample_weight"
            )


class SCAFFBase(ClassifierMixin, BaseEstimator):
    """Common machinery; subclasses fix how many trees, bootstrap and features per node."""

    #: What each parameter of a single tree may be (the forest adds its own); checked once per fit and on loading.
    _param_constraints = {
        "theta": [Interval("real", 0, 1)],
        "max_depth": [None, Interval("int", 1, None)],
        "max_features": [None, Options("sqrt", "log2"), Interval("int", 1, None), Interval("float", 0, 1, "right")],
        "min_samples_split": [Interval("int", 2, None), Interval("float", 0, 1, "right")],
        "min_samples_leaf": [Interval("int", 1, None), Interval("float", 0, 1, "neither")],
        "max_bins": [Interval("int", 2, 256)],
        "class_weight": [None, CLASS_WEIGHT_DICT, Options("balanced")],
        "sensitive_aggregation": [Options(*AGGREGATIONS)],
        "intersectional": [bool],
        "random_state": RANDOM_STATE,
    }

    def _forest_spec(self) -> tuple[int, bool, object, object]:
        raise NotImplementedError  # (n_estimators, bootstrap, max_features, n_jobs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.allow_nan = True
        tags.input_tags.categorical = True
        return tags

    # ----------------------------------------------------------------- fit
    def fit(self, X: Features, y: ArrayLike, sensitive_features: Sensitive | None = None,
            sample_weight: ArrayLike | None = None) -> Self:
        """Grow the tree(s).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Features; ``category`` columns are encoded as codes. Missing values (NaN) get a bin of their own
            and each split learns which side they go to.
        y : array-like of shape (n_samples,)
            Two classes.
        sensitive_features : DataFrame, Series, dict, array-like or None, default=None
            One or more columns (1-D/2-D array), binary or multi-valued, one row per sample. ``None`` =
            no sensitive attribute (the AUC_S term is 0.5, so the trees are plain AUC trees; a warning is
            issued if theta > 0).
        sample_weight : array-like of shape (n_samples,) or None, default=None
            Weights >= 0 per row, multiplied with ``class_weight`` and, in a forest, with each tree's
            bootstrap counts; rows of weight 0 take no part in growth.

        Returns
        -------
        self
            The fitted estimator.
        """
        checked_params(self)
        n_estimators, bootstrap, max_features, n_jobs = self._forest_spec()
        X, y01, weight = self._fit_rows(X, y, sample_weight, bootstrap)
        groups, column_start, names = encode_groups(
            sensitive_features, len(y01), intersectional=self.intersectional, theta=float(self.theta)
        )
        _check_weighted_groups(groups, weight, names)
        self.sensitive_columns_ = names
        self.n_sensitive_groups_ = int(column_start[-1])

        # Cut points come from the rows that take part: a weight-0 row must not move a threshold.
        # A missing value's bin is a feature's last; a feature missing anywhere has one (a weight-0 row's
        # missing value must land in it too, though it takes no part in growth).
        has_missing = missing_features(X)
        self.feature_missing_ = has_missing.copy()
        kept = X if weight is None else X[weight > 0]
        self.bin_edges_, self.bin_offsets_ = fit_bin_edges(kept, int(self.max_bins), has_missing)
        data = _native.GrowthData.build(
            apply_bins(X, self.bin_edges_, self.bin_offsets_, has_missing),
            bin_counts(self.bin_offsets_, has_missing),
            has_missing,
            y01,
            groups,
            column_start,
        )
        grow = self._tree_grower(data, y01, weight, bootstrap, resolve_max_features(max_features, X.shape[1]))
        # Seeds are drawn up front: tree i gets seeds[i] whatever the thread layout.
        seeds = check_random_state(self.random_state).randint(0, 2**31 - 1, size=n_estimators)
        workers = min(resolve_n_jobs(n_jobs), n_estimators)
        if workers == 1:
            trees = [grow(seed) for seed in seeds]
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                trees = list(pool.map(grow, seeds))
        self._store_trees(trees)
        return self

    def _fit_rows(self, X, y, sample_weight, bootstrap: bool):
        """(X in float64 with category codes, y as 0/1, per-row weight or None), checked; sets ``classes_``."""
        categories = categorical_columns(X)
        X = encode_categoricals(X, categories)
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2, ensure_all_finite="allow-nan")
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if y_type != "binary":
            raise InputError(
                f"Only binary classification is supported. The type of the target is {y_type}; "
                "y must hold exactly 2 classes."
            )
        self.classes_, y01 = np.unique(y, return_inverse=True)
        if len(self.classes_) != 2:
            raise InputError(f"y must hold exactly 2 classes, got {len(self.classes_)} class(es)")
        weight = _base_weights(self, y, check_sample_weight(sample_weight, X.shape[0]), bootstrap)
        if weight is not None:
            if len(np.unique(y01[weight > 0])) < 2:
                raise InputError(
                    "sample_weight and class_weight leave only one class with positive weight; "
                    "SCAFF needs rows of both classes"
                )
        self._categories = {int(k): list(v) for k, v in categories.items()}
        return X, y01, weight

    def _tree_grower(self, data, y01, weight, bootstrap: bool, draw: int):
        """``grow(seed)``: one tree's arrays, grown on its bootstrap draw (if any) of the weighted rows."""
        n_samples = len(y01)
        min_split, min_leaf = resolve_min_samples(self, n_samples)
        subsample_balanced = bootstrap and self.class_weight == "balanced_subsample"

        def grow(seed):
            if bootstrap:
                drawn = np.random.default_rng(int(seed)).integers(0, n_samples, n_samples)
                tree_weight = np.bincount(drawn, minlength=n_samples).astype(np.float64)
                if weight is not None:
                    tree_weight *= weight
                if subsample_balanced:
                    tree_weight *= compute_sample_weight("balanced", y01, indices=drawn)
            else:
                tree_weight = np.ones(n_samples) if weight is None else weight
            return _native.grow_tree(
                data,
                tree_weight,
                max_depth=self.max_depth,
                max_features=draw,
                min_samples_split=min_split,
                min_samples_leaf=min_leaf,
                theta=float(self.theta),
                aggregate=self.sensitive_aggregation,
                seed=int(seed) * 2654435761 + 1,
            )

        return grow

    def _store_trees(self, trees) -> None:
        feature, bins, left, right, value, weight, gain, missing_left = (np.concatenate(part) for part in zip(*trees))
        sizes = [len(tree[0]) for tree in trees]
        self.node_offsets_ = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.node_feature_ = feature
        self.node_threshold_bin_ = bins
        internal = feature >= 0
        # The bin after a feature's last cut point: every value goes left, only the missing ones right.
        top = internal & (bins == np.diff(self.bin_offsets_)[np.maximum(feature, 0)])
        cut = internal & ~top
        threshold = np.zeros(len(feature), dtype=np.float64)
        threshold[cut] = self.bin_edges_[self.bin_offsets_[feature[cut]] + bins[cut]]
        threshold[top] = np.inf
        self.node_threshold_ = threshold
        self.node_missing_left_ = missing_left.astype(np.uint8)
        self.node_left_ = left
        self.node_right_ = right
        self.node_value_ = value
        self.node_weight_ = weight
        self.node_gain_ = gain

    # ------------------------------------------------------------- predict
    def _checked_X(self, X):
        check_is_fitted(self, "node_offsets_")
        X = encode_categoricals(X, self._categories)
        X = validate_data(self, X, dtype=np.float64, reset=False, ensure_all_finite="allow-nan")
        # a missing value where fit saw none: no split learnt where it goes
        unseen = np.isnan(X) & (self.feature_missing_ == 0)
        if unseen.any():
            row, column = (int(i[0]) for i in np.nonzero(unseen))
            names = getattr(self, "feature_names_in_", None)
            name = f"{names[column]!r}" if names is not None else f"{column}"
            raise InputError(f"X column {name} has a missing value in row {row}; it had none in fit, so no split "
                             "learnt where missing values go")
        return X

    def predict_proba(self, X: Features) -> FloatArray:
        """``(n, 2)`` probabilities; column 1 is the mean over trees of the leaf's P(y = 1).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Probabilities of ``classes_[0]`` and ``classes_[1]``.
        """
        X = self._checked_X(X)
        positive = _native.predict_mean_leaf_value(
            X,
            self.node_feature_,
            self.node_threshold_,
            self.node_left_,
            self.node_right_,
            self.node_missing_left_,
            self.node_value_,
            self.node_offsets_,
        )
        return np.column_stack([1.0 - positive, positive])

    def predict(self, X: Features) -> NDArray[Any]:
        """The class with probability above 0.5 (ties go to ``classes_[0]``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to classify.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted classes.
        """
        positive = self.predict_proba(X)[:, 1] > 0.5
        return self.classes_[positive.astype(np.intp)]

    def _leaf_ids(self, X) -> np.ndarray:
        """``(n_samples, n_trees)``: id of the leaf each row reaches in each tree (ids count per tree)."""
        X = self._checked_X(X)
        return _native.leaf_ids(
            X, self.node_feature_, self.node_threshold_, self.node_left_, self.node_right_, self.node_missing_left_,
            self.node_offsets_,
        )

    @property
    def n_trees_(self) -> int:
        """Number of fitted trees."""
        check_is_fitted(self, "node_offsets_")
        return len(self.node_offsets_) - 1

    @property
    def feature_importances_(self) -> np.ndarray:
        """Per feature: sum of node weight share x SG gain over its splits, mean over trees, sum 1."""
        check_is_fitted(self, "node_offsets_")
        importances = np.zeros(self.n_features_in_)
        for t in range(self.n_trees_):
            start, stop = self.node_offsets_[t], self.node_offsets_[t + 1]
            feature = self.node_feature_[start:stop]
            weight = self.node_weight_[start:stop]
            internal = feature >= 0
            share = weight[internal] / weight[0]
            importances += np.bincount(
                feature[internal], weights=share * self.node_gain_[start:stop][internal],
                minlength=self.n_features_in_,
            )
        total = importances.sum()
        return importances / total if total > 0 else importances

    # --------------------------------------------------------------- state
    def _get_state(self) -> tuple[dict, dict]:
        """Fitted model as ``(meta, arrays)``: ``{"params": ..., "meta": ...}`` (JSON-able) and NumPy arrays,
        the state protocol every fairops estimator follows (see :mod:`fairops.scaff._state`)."""
        check_is_fitted(self, "node_offsets_")
        return _state.get_state(self)

    @classmethod
    def _from_state(cls, meta: dict, arrays: dict):
        """Rebuild a fitted estimator from :meth:`_get_state`'s output (checked: see :mod:`fairops.scaff._state`)."""
        return _state.from_state(cls, meta, arrays)

    def __setstate__(self, state):
        # Unpickling and skops rebuild the estimator through here: a fitted one is checked before
        # the compiled predict code can see its arrays.
        super().__setstate__(state)
        if "node_offsets_" in self.__dict__:
            _state.check_fitted(self)
