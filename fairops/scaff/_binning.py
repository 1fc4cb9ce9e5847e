"""Quantile binning of features, done once per fit.

Each feature gets sorted cut points ``edges``; a value's bin is the number of edges
strictly below it, so ``bin <= b`` is the same test as ``value <= edges[b]``. A split
learned on bins therefore predicts on raw values with the threshold ``edges[b]``.

A feature with at most ``max_bins`` distinct values gets one cut point between each pair
of neighbours (every distinct split is available); otherwise the cut points are the
``max_bins`` quantiles of its values, so at most ``max_bins`` bins (<= 256: bins fit uint8).

Missing values (NaN) take no part in the cut points. A feature holding some gets one bin more, its
last, for them (its values then get at most ``max_bins - 1`` bins, so the missing bin still fits), as
LightGBM and scikit-learn's HistGradientBoosting bin them.

>>> import numpy as np
>>> edges, offsets = fit_bin_edges(np.array([[1.0], [2.0], [4.0]]), max_bins=256)
>>> edges.tolist(), offsets.tolist()
([1.5, 3.0], [0, 2])
>>> apply_bins(np.array([[1.0], [3.0], [9.0]]), edges, offsets).tolist()
[[0, 1, 2]]
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError


def _feature_edges(column: np.ndarray, max_bins: int, has_missing: bool) -> np.ndarray:
    if has_missing:
        column, max_bins = column[~np.isnan(column)], max_bins - 1
    distinct = np.unique(column)
    if len(distinct) <= 1:
        return np.empty(0, dtype=np.float64)
    if len(distinct) <= max_bins:
        middle = (distinct[:-1] + distinct[1:]) / 2.0
        # Rounding can put a midpoint on the upper value; the lower one then separates them.
        return np.where(middle == distinct[1:], distinct[:-1], middle)
    probabilities = np.linspace(0.0, 1.0, max_bins + 1)[1:-1]
    edges = np.unique(np.quantile(column, probabilities, method="linear"))
    return edges[edges < distinct[-1]]


def fit_bin_edges(X: np.ndarray, max_bins: int, has_missing=None) -> tuple[np.ndarray, np.ndarray]:
    """Cut points of every column, concatenated, and the (n_features + 1) offsets into them; a column flagged
    in ``has_missing`` (default: holding a NaN) keeps a bin for its missing values.

    >>> edges, offsets = fit_bin_edges(np.array([[0.0, 5.0], [1.0, 5.0]]), max_bins=4)
    >>> edges.tolist(), offsets.tolist()  # the constant second column has no cut point
    ([0.5], [0, 1, 1])
    >>> fit_bin_edges(np.array([[0.0], [1.0], [2.0], [np.nan]]), max_bins=3)[0].tolist()  # 2 bins + the missing one
    [1.0]
    """
    if not 2 <= max_bins <= 256:
        raise InputError(f"max_bins must be an integer in [2, 256], got {max_bins!r}")
    if has_missing is None:
        has_missing = missing_features(X)
    per_feature = [_feature_edges(X[:, j], max_bins, bool(has_missing[j])) for j in range(X.shape[1])]
    offsets = np.zeros(X.shape[1] + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(edges) for edges in per_feature])
    edges = np.concatenate(per_feature) if per_feature else np.empty(0)
    return np.ascontiguousarray(edges, dtype=np.float64), offsets


def missing_features(X: np.ndarray) -> np.ndarray:
    """Per column, 1 when it holds a missing value (NaN), as the uint8 flags the kernel takes.

    >>> missing_features(np.array([[0.0, np.nan], [1.0, 2.0]])).tolist()
    [0, 1]
    """
    return np.ascontiguousarray(np.isnan(X).any(axis=0), dtype=np.uint8)


def apply_bins(X: np.ndarray, edges: np.ndarray, offsets: np.ndarray, has_missing=None) -> np.ndarray:
    """Bin codes as a C-contiguous ``(n_features, n_samples)`` uint8 array (features as rows); a missing
    value of a feature flagged in ``has_missing`` gets the bin after its values' bins.

    >>> apply_bins(np.array([[0.2], [0.7]]), np.array([0.5]), np.array([0, 1])).tolist()
    [[0, 1]]
    >>> apply_bins(np.array([[0.2], [np.nan]]), np.array([0.5]), np.array([0, 1]), np.array([1])).tolist()
    [[0, 2]]
    """
    binned = np.empty((X.shape[1], X.shape[0]), dtype=np.uint8)
    for j in range(X.shape[1]):
        feature_edges = edges[offsets[j] : offsets[j + 1]]
        binned[j] = np.searchsorted(feature_edges, X[:, j], side="left")
        if has_missing is not None and has_missing[j]:
            binned[j, np.isnan(X[:, j])] = len(feature_edges) + 1
    return binned


def bin_counts(offsets: np.ndarray, has_missing=None) -> np.ndarray:
    """Number of bins per feature: cut points + 1, and one more for a feature's missing values.

    >>> bin_counts(np.array([0, 1, 1])).tolist(), bin_counts(np.array([0, 1, 1]), np.array([0, 1])).tolist()
    ([2, 1], [2, 2])
    """
    counts = np.diff(offsets) + 1
    if has_missing is not None:
        counts = counts + np.asarray(has_missing, dtype=counts.dtype)
    return np.ascontiguousarray(counts, dtype=np.int32)
