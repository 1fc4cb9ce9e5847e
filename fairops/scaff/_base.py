"""Fitting, prediction and saved state shared by the SCAFF tree and forest."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _native
from ._inputs import (
    categorical_columns,
    check_params,
    encode_categoricals,
    encode_groups,
    resolve_max_features,
)
from .binning import apply_bins, bin_counts, fit_bin_edges

# Fitted attributes that make up the model; all plain arrays.
STATE_ARRAYS = (
    "classes_",
    "bin_edges_",
    "bin_offsets_",
    "node_offsets_",
    "node_feature_",
    "node_threshold_",
    "node_threshold_bin_",
    "node_left_",
    "node_right_",
    "node_value_",
    "node_weight_",
    "node_gain_",
)


def resolve_n_jobs(n_jobs) -> int:
    if n_jobs is None:
        return 1
    if n_jobs < 0:
        return max(1, (os.cpu_count() or 1) + 1 + n_jobs)
    return max(1, int(n_jobs))


class SCAFFBase(ClassifierMixin, BaseEstimator):
    """Common machinery; subclasses fix how many trees, bootstrap and features per node."""

    def _forest_spec(self) -> tuple[int, bool, object, object]:
        raise NotImplementedError  # (n_estimators, bootstrap, max_features, n_jobs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.allow_nan = False
        tags.input_tags.categorical = True
        return tags

    # ----------------------------------------------------------------- fit
    def fit(self, X, y, sensitive_features=None):
        """Grow the tree(s).

        ``sensitive_features``: one or more columns (DataFrame, Series, dict, 1-D/2-D array),
        binary or multi-valued, one row per sample. ``None`` = no sensitive attribute (the
        AUC_S term is 0.5, so the trees are plain AUC trees; a warning is issued if theta > 0).
        """
        n_estimators, bootstrap, max_features, n_jobs = self._forest_spec()
        check_params(
            self, n_estimators=n_estimators, max_features=max_features, bootstrap=bootstrap, n_jobs=n_jobs
        )
        categories = categorical_columns(X)
        X = encode_categoricals(X, categories)
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_min_samples=2)
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if y_type != "binary":
            raise ValueError(
                f"Only binary classification is supported. The type of the target is {y_type}; "
                "y must hold exactly 2 classes."
            )
        self.classes_, y01 = np.unique(y, return_inverse=True)
        if len(self.classes_) != 2:
            raise ValueError(f"y must hold exactly 2 classes, got {len(self.classes_)} class(es)")
        n_samples, n_features = X.shape
        groups, n_groups, names = encode_groups(
            sensitive_features, n_samples, intersectional=self.intersectional, theta=float(self.theta)
        )
        self._categories = {int(k): list(v) for k, v in categories.items()}
        self.sensitive_columns_ = names
        self.n_sensitive_groups_ = int(n_groups)

        self.bin_edges_, self.bin_offsets_ = fit_bin_edges(X, int(self.max_bins))
        data = _native.GrowthData.build(
            apply_bins(X, self.bin_edges_, self.bin_offsets_),
            bin_counts(self.bin_offsets_),
            y01,
            groups,
            n_groups,
        )
        draw = resolve_max_features(max_features, n_features)
        # Seeds are drawn up front: tree i gets seeds[i] whatever the thread layout.
        seeds = check_random_state(self.random_state).randint(0, 2**31 - 1, size=n_estimators)

        def grow(seed):
            if bootstrap:
                rng = np.random.default_rng(int(seed))
                counts = np.bincount(rng.integers(0, n_samples, n_samples), minlength=n_samples)
                samples = np.flatnonzero(counts)
                weight = counts.astype(np.float64)
            else:
                samples = np.arange(n_samples)
                weight = np.ones(n_samples)
            return _native.grow_tree(
                data,
                weight,
                samples,
                max_depth=self.max_depth,
                max_features=draw,
                theta=float(self.theta),
                aggregate=self.sensitive_aggregation,
                seed=int(seed) * 2654435761 + 1,
            )

        workers = min(resolve_n_jobs(n_jobs), n_estimators)
        if workers == 1:
            trees = [grow(seed) for seed in seeds]
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                trees = list(pool.map(grow, seeds))
        self._store_trees(trees)
        return self

    def _store_trees(self, trees) -> None:
        feature, bins, left, right, value, weight, gain = (np.concatenate(part) for part in zip(*trees))
        sizes = [len(tree[0]) for tree in trees]
        self.node_offsets_ = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.node_feature_ = feature
        self.node_threshold_bin_ = bins
        internal = feature >= 0
        threshold = np.zeros(len(feature), dtype=np.float64)
        threshold[internal] = self.bin_edges_[self.bin_offsets_[feature[internal]] + bins[internal]]
        self.node_threshold_ = threshold
        self.node_left_ = left
        self.node_right_ = right
        self.node_value_ = value
        self.node_weight_ = weight
        self.node_gain_ = gain

    # ------------------------------------------------------------- predict
    def _checked_X(self, X):
        check_is_fitted(self, "node_offsets_")
        X = encode_categoricals(X, self._categories)
        return validate_data(self, X, dtype=np.float64, reset=False)

    def predict_proba(self, X):
        """``(n, 2)`` probabilities; column 1 is the mean over trees of the leaf's P(y = 1)."""
        X = self._checked_X(X)
        positive = _native.predict_mean_leaf_value(
            X,
            self.node_feature_,
            self.node_threshold_,
            self.node_left_,
            self.node_right_,
            self.node_value_,
            self.node_offsets_,
        )
        return np.column_stack([1.0 - positive, positive])

    def predict(self, X):
        """The class with probability above 0.5 (ties go to ``classes_[0]``)."""
        positive = self.predict_proba(X)[:, 1] > 0.5
        return self.classes_[positive.astype(np.intp)]

    @property
    def n_trees_(self) -> int:
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
    def _get_state(self) -> dict:
        """Fitted model as ``{"params": ..., "meta": ..., "arrays": ...}``: JSON-able dicts + NumPy arrays."""
        check_is_fitted(self, "node_offsets_")
        meta = {
            "class": type(self).__name__,
            "n_features_in": int(self.n_features_in_),
            "sensitive_columns": list(self.sensitive_columns_),
            "n_sensitive_groups": int(self.n_sensitive_groups_),
            "categories": {str(k): v for k, v in self._categories.items()},
        }
        if hasattr(self, "feature_names_in_"):
            meta["feature_names_in"] = [str(name) for name in self.feature_names_in_]
        arrays = {name: np.asarray(getattr(self, name)) for name in STATE_ARRAYS}
        return {"params": self.get_params(deep=False), "meta": meta, "arrays": arrays}

    @classmethod
    def _from_state(cls, state: dict):
        """Rebuild a fitted estimator from :meth:`_get_state`'s output."""
        meta = state["meta"]
        if meta["class"] != cls.__name__:
            raise ValueError(f"state holds a {meta['class']}, not a {cls.__name__}")
        model = cls(**state["params"])
        for name in STATE_ARRAYS:
            setattr(model, name, np.asarray(state["arrays"][name]))
        model.n_features_in_ = int(meta["n_features_in"])
        if "feature_names_in" in meta:
            model.feature_names_in_ = np.asarray(meta["feature_names_in"], dtype=object)
        model.sensitive_columns_ = list(meta["sensitive_columns"])
        model.n_sensitive_groups_ = int(meta["n_sensitive_groups"])
        model._categories = {int(k): list(v) for k, v in meta["categories"].items()}
        return model
